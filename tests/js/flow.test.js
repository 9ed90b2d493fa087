// The phone's state machine (phone/assets/flow.js) against a fake class server: send,
// resend, a Next while a report is in flight (every way a send can end), closed, over
// budget, a second tab, a round waiting to open. The page draws exactly the screens
// checked here; tests/test_e2e_phone.py runs the same flows in Chromium.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { load, seededCrypto } = require('./support.js');

const CODE = 'K7QM2P';
const LN3 = Math.log(3);

function deferred() {
  let resolve;
  const promise = new Promise((done) => { resolve = done; });
  return { promise, resolve };
}

async function until(check, what) {
  for (let i = 0; i < 1000; i++) {
    if (check()) return;
    await new Promise((done) => setImmediate(done));
  }
  assert.fail(`never happened: ${what}`);
}

function question(id, extra) {
  return Object.assign({
    id, round: 1, text: `Question ${id}?`, kind: 'binary', state: 'open', revealed: false,
    mode: 'device', options: [{ value: 1, label: 'Vanilla' }, { value: 0, label: 'Chocolate' }],
    params: { design: 'die', faces: 4, truthful: 3 },
    scheme: { type: 'binary', weights: [3, 1, 0, 0], animation: 'die', faces: 4 },
    epsilon: LN3, privacy_note: 'Your privacy: …', results: null,
  }, extra || {});
}

function state(q, poll) {
  return { version: `v-${q ? `${q.id}-${q.round}-${q.state}` : 'none'}`, question: q,
    poll: Object.assign({ code: CODE, title: 'CS208', budget: null }, poll || {}) };
}

function receipt(q, extra) {
  return Object.assign({
    question_id: q.id, round: q.round, answer_label: 'Vanilla', received_at: '2026-11-25T10:01:02Z',
    already_answered: false, epsilon: LN3, spent_epsilon: LN3, privacy_note: 'Your privacy: …',
  }, extra || {});
}

// A phone against a fake server. `server.reply` answers each report (a promise the test
// may hold); `server.me` answers /me; the long-poll is fed by `server.polls`; `clock.t` is
// the tab's own clock (performance.now), which the test moves.
function phone(first, options) {
  const opts = options || {};
  const clock = opts.clock || { t: 0 };
  const server = {
    state: first, me: () => ({ status: 200, body: { question_id: null, receipt: null, spent_epsilon: 0 } }),
    reply: null, polls: [], calls: [], embedsMe: opts.embedsMe !== false,
  };
  const shown = [], posts = [];
  const store = opts.store || { value: null };
  let sids = 0, locks = 0;
  const waits = [];
  const api = async (path, init) => {
    server.calls.push(path);
    if (path.endsWith('/me')) return server.me();
    if (path.endsWith('/report')) {
      const body = JSON.parse(init.body);
      posts.push(body);
      return server.reply(body);
    }
    if (path.includes('?wait=')) {
      server.lastEtag = init.headers['If-None-Match'];
      return server.polls.length ? server.polls.shift() : new Promise(() => {});
    }
    const body = Object.assign({}, server.state);
    if (path.endsWith('?me=1') && server.embedsMe) {  // the state with this device's /me
      const r = await server.me();
      body.me = r.status === 200 ? r.body : r.body;
    }
    return { status: 200, body, etag: `"${server.state.version}"` };
  };
  const sandbox = load(undefined, { crypto: seededCrypto(42) });
  const flow = sandbox.createFlow({
    api, show: (s) => shown.push(s), say() {}, warn() {}, lock: () => { locks++; },
    pending: { get: () => store.value && JSON.parse(store.value), set: (v) => { store.value = v ? JSON.stringify(v) : null; } },
    animate: opts.animate || (async (scheme, draw) => `You rolled ${draw + 1}: ${draw < 3 ? 'report the truth' : 'report the opposite'}.`),
    sid: () => `submission-${++sids}`, wait: async (ms) => { waits.push(ms); }, go: (url) => { server.went = url; },
    now: () => clock.t,
  });
  const screen = () => shown[shown.length - 1];
  const ready = async () => {
    flow.start(`/join/${CODE}`, new URLSearchParams(''));
    await until(() => shown.length, 'the first screen');
  };
  return { flow, server, shown, posts, screen, ready, store, clock, waits, locks: () => locks };
}

test('a tap sends one randomized report, a double tap nothing more, and the receipt says how', async () => {
  const q1 = question(1);
  const p = phone(state(q1));
  await p.ready();
  assert.equal(p.screen().view, 'question');
  const held = deferred();
  p.server.reply = () => held.promise;
  const first = p.flow.answer(1, q1);
  assert.equal(await p.flow.answer(1, q1), false);  // the second tap of a double tap
  await until(() => p.posts.length === 1, 'the report');
  assert.deepEqual(Object.keys(p.posts[0]).sort(), ['answer', 'params', 'question_id', 'submission_id']);
  assert.ok(p.store.value, 'kept until saved');
  held.resolve({ status: 200, body: { receipt: receipt(q1) } });
  await first;
  const s = p.screen();
  assert.equal(s.view, 'receipt');
  assert.match(s.head, /^Answer received at /);
  assert.equal(s.sent, 'Your phone sent: Vanilla (the randomized answer).');
  assert.equal(s.why, 'How did my phone decide?');
  assert.match(s.explain, /^You rolled \d: report the (truth|opposite)\.$/);
  assert.equal(s.fresh, 'submission-1');
  assert.equal(p.store.value, null);
  assert.equal(p.posts.length, 1);
});

// Every way a send can end, and the word the new question carries about it.
const ENDINGS = [
  ['stored', (q) => ({ status: 200, body: { receipt: receipt(q) } }), /^Your answer to the previous question was received at /],
  ['already answered', (q) => ({ status: 200, body: { receipt: receipt(q, { already_answered: true }) } }), /^You had already answered the previous question; nothing new was stored\.$/],
  ['closed', () => ({ status: 409, body: { error: 'closed', message: 'Voting closed: voting on this question ended before your answer arrived, so nothing was saved.' } }), /^Your answer to the previous question arrived after it closed and was not counted\.$/],
  ['over budget', () => ({ status: 409, body: { error: 'over_budget', message: 'Answering would take you past the budget.' } }), /^Your answer to the previous question was not accepted: Answering would take you past the budget\.$/],
  ['network error', () => ({ status: 0, body: { error: 'offline', message: 'No connection to the class server.' } }), /not confirmed \(the connection failed\)/],
  ['database away', () => ({ status: 503, body: { error: 'unavailable', message: 'Not saved yet.' } }), /not confirmed/],
  ['server error', () => ({ status: 500, body: null }), /^Your answer to the previous question was not accepted: Something went wrong/],
];

for (const [how, reply, notice] of ENDINGS) {
  test(`a Next while the report is in flight ends on the new question (${how})`, async () => {
    const q1 = question(1), q2 = question(2, { text: 'Tea or coffee?' });
    const p = phone(state(q1));
    await p.ready();
    const held = deferred();
    p.server.reply = () => held.promise;
    const sending = p.flow.answer(1, q1);
    await until(() => p.posts.length === 1, 'the report');
    const drawn = p.shown.length;
    // The instructor moves on: the long-poll brings the new question while the report waits.
    p.server.state = state(q2);
    p.server.me = () => ({ status: 200, body: { question_id: 2, receipt: null, spent_epsilon: LN3 } });
    await p.flow.refresh(state(q2), false);
    assert.equal(p.shown.length, drawn, 'nothing is redrawn under the finger while sending');
    held.resolve(reply(q1));
    await sending;
    const s = p.screen();
    assert.equal(s.view, 'question', `${how}: ${JSON.stringify(s)}`);
    assert.equal(s.q.id, 2);
    assert.match(s.notice, notice);
    assert.equal(s.noticeTone, ['stored', 'already answered'].includes(how) ? 'info'
      : ['network error', 'database away'].includes(how) ? 'warn' : 'error', how);
    assert.deepEqual(p.server.calls.filter((c) => !c.includes('wait=') && !c.endsWith('/report')),
      [`/api/poll/${CODE}?me=1`, `/api/poll/${CODE}/me`],
      'this device\'s state with the first state, then for the new question');
    // And the new question takes an answer at once.
    p.server.reply = (body) => ({ status: 200, body: { receipt: receipt(q2, { question_id: body.question_id }) } });
    const before = p.posts.length;  // the report and, undelivered, its resends
    assert.ok(p.posts.every((b) => JSON.stringify(b) === JSON.stringify(p.posts[0])), 'resent as it was');
    assert.equal(await p.flow.answer(0, q2), true);
    assert.equal(p.posts.length, before + 1);
    assert.equal(p.posts[before].question_id, 2);
    assert.equal(p.screen().view, 'receipt');
    assert.equal(p.screen().notice, null);
  });
}

test('a Next while the die is still rolling ends on the new question', async () => {
  const q1 = question(1), q2 = question(2);
  const rolling = deferred();
  const p = phone(state(q1), { animate: () => rolling.promise });
  await p.ready();
  p.server.reply = () => ({ status: 409, body: { error: 'closed', message: 'Voting closed.' } });
  const tap = p.flow.answer(1, q1);
  await p.flow.refresh(state(q2), false);
  rolling.resolve('You rolled 2: report the truth.');
  await tap;
  assert.equal(p.screen().view, 'question');
  assert.equal(p.screen().q.id, 2);
  assert.match(p.screen().notice, /arrived after it closed and was not counted/);
});

test('the report leaves at the tap: the roll plays while it travels, never before it', async () => {
  const q1 = question(1);
  const rolling = deferred(), held = deferred();
  const p = phone(state(q1), { animate: () => rolling.promise });
  await p.ready();
  p.server.reply = () => held.promise;
  const tap = p.flow.answer(1, q1);
  await until(() => p.posts.length === 1, 'the report, sent while the die rolls');
  held.resolve({ status: 200, body: { receipt: receipt(q1) } });
  for (let i = 0; i < 20; i++) await new Promise((done) => setImmediate(done));  // the receipt is in
  assert.notEqual(p.screen().view, 'receipt', 'the roll is not cut short by the receipt');
  rolling.resolve('You rolled 2: report the truth.');
  await tap;
  assert.equal(p.screen().view, 'receipt');
  assert.equal(p.screen().explain, 'You rolled 2: report the truth.');
  assert.equal(p.posts.length, 1);
});

test('undelivered: resent by itself with the same submission id, after a jittered Retry-After', async () => {
  const q1 = question(1);
  const p = phone(state(q1));
  await p.ready();
  const replies = [
    { status: 503, body: null, retryAfter: '4' },
    { status: 0, body: { error: 'offline', message: 'No connection to the class server.' } },
    { status: 200, body: { receipt: receipt(q1) } },
  ];
  p.server.reply = () => replies.shift();
  await p.flow.answer(1, q1);
  assert.equal(p.posts.length, 3);
  assert.ok(p.posts.every((b) => b.submission_id === 'submission-1'), 'one submission id');
  assert.equal(p.waits.length, 2);
  assert.ok(p.waits[0] >= 4000 && p.waits[0] < 6000, `Retry-After 4 s, jittered: ${p.waits[0]}`);
  assert.ok(p.waits[1] >= 2000 && p.waits[1] < 3000, `the second back-off, jittered: ${p.waits[1]}`);
  assert.equal(p.screen().view, 'receipt');
  assert.equal(p.store.value, null);
});

test('still undelivered after the resends: kept, with "Send it again"', async () => {
  const q1 = question(1);
  const p = phone(state(q1));
  await p.ready();
  p.server.reply = () => ({ status: 503, body: { error: 'unavailable', message: 'Not saved yet.' } });
  await p.flow.answer(1, q1);
  assert.equal(p.posts.length, 4);  // the tap and three resends
  assert.equal(new Set(p.posts.map((b) => b.submission_id)).size, 1);
  const s = p.screen();
  assert.deepEqual([s.view, s.resend], ['note', true]);
  assert.ok(p.store.value, 'kept for the next "Send it again"');
});

test('a tap on a screen the state has just replaced sends nothing and shows the current one', async () => {
  const q1 = question(1), q2 = question(2);
  const me = deferred();
  const p = phone(state(q1));
  await p.ready();
  p.server.me = () => me.promise;  // the new question's state for this device is on its way
  const refreshing = p.flow.refresh(state(q2), false);
  assert.equal(await p.flow.answer(1, q1), false);
  assert.equal(p.posts.length, 0);
  assert.equal(p.screen().q.id, 2);
  me.resolve({ status: 200, body: { question_id: 2, receipt: null, spent_epsilon: 0 } });
  await refreshing;
  assert.equal(p.screen().q.id, 2);
});

test('not saved: the same report is sent again, after a reload too, and stored once', async () => {
  const q1 = question(1);
  const p = phone(state(q1));
  await p.ready();
  p.server.reply = () => ({ status: 503, body: { error: 'unavailable', message: 'Not saved yet: the class server cannot reach its database right now.' } });
  await p.flow.answer(1, q1);
  let s = p.screen();
  assert.deepEqual([s.view, s.tone, s.resend], ['note', 'warn', true]);
  assert.match(s.text, /^Not saved yet/);
  // A reload: a new page on the same tab's storage shows the report still waiting.
  const again = phone(state(q1), { store: p.store });
  await again.ready();
  s = again.screen();
  assert.equal(s.resend, true);
  assert.match(s.text, /^Your last answer was not saved yet\. Your phone already randomized it/);
  const held = deferred();
  again.server.reply = () => held.promise;
  const resending = again.flow.resend();
  assert.equal(await again.flow.resend(), false);  // a double tap on "Send it again"
  held.resolve({ status: 200, body: { receipt: receipt(q1) } });
  await resending;
  assert.equal(again.posts.length, 1);
  assert.deepEqual(again.posts[0], p.posts[0]);  // the same report, the same submission id
  assert.equal(again.screen().view, 'receipt');
  assert.equal(again.store.value, null);
});

test('closed before the report arrived: the server\'s sentence, and no way to answer', async () => {
  const q1 = question(1);
  const p = phone(state(q1));
  await p.ready();
  const closed = 'Voting closed: voting on this question ended before your answer arrived, so nothing was saved.';
  p.server.reply = () => ({ status: 409, body: { error: 'closed', message: closed } });
  await p.flow.answer(0, q1);
  assert.deepEqual([p.screen().view, p.screen().tone, p.screen().text], ['note', 'error', closed]);
  await p.flow.refresh(state(question(1, { state: 'closed' })), false);
  assert.equal(p.screen().text, closed);
  assert.equal(await p.flow.answer(0, question(1, { state: 'closed' })), false);
  assert.equal(p.posts.length, 1);
});

test('a closed question on a phone that never answered reads as news, not as a failure', async () => {
  const p = phone(state(question(1, { state: 'closed' })));
  await p.ready();
  const s = p.screen();
  assert.deepEqual([s.view, s.tone], ['note', 'info']);
  assert.equal(s.text, 'Voting on this question has closed. This page shows the next question by itself when the instructor opens it.');
  assert.doesNotMatch(s.text, /saved|not|fail/i);
});

test('a round waiting to open says so', async () => {
  const p = phone(state(question(1, { state: 'draft', round: 2 })));
  await p.ready();
  assert.equal(p.screen().text, 'Round 2 of this question opens soon. This page updates by itself when voting opens.');
});

test('over the budget: no answer can be sent, and the server\'s refusal is shown', async () => {
  const q2 = question(2);
  const p = phone(state(q2, { budget: 2.0 }));
  p.server.me = () => ({ status: 200, body: { question_id: 2, receipt: null, spent_epsilon: LN3 } });
  await p.ready();
  const s = p.screen();
  assert.equal(s.budget.over, true);
  assert.match(s.budget.text, /^Answering would take you past this poll's privacy budget \(ε = 2\.00; you have spent 1\.10 and this question costs ε = 1\.10\)/);
  assert.equal(await p.flow.answer(1, q2), false);
  assert.equal(p.posts.length, 0);
  // Within the budget (as this phone last heard), the server may still refuse: said as is.
  const fits = phone(state(q2, { budget: 3.0 }));
  fits.server.me = p.server.me;
  await fits.ready();
  assert.match(fits.screen().budget.text, /You have spent 1\.10; this question costs ε = 1\.10; 0\.80 will be left\.$/);
  const refusal = 'Answering would take you past this poll\'s privacy budget.';
  fits.server.reply = () => ({ status: 409, body: { error: 'over_budget', message: refusal } });
  await fits.flow.answer(1, q2);
  assert.deepEqual([fits.screen().view, fits.screen().text], ['note', refusal]);
});

test('a second tab that answers after the first says what was stored, without its own roll', async () => {
  const q1 = question(1);
  const p = phone(state(q1));
  await p.ready();
  // The first tab stored "Vanilla"; this tab's tap rolled its own die, which was not used.
  p.server.reply = () => ({ status: 200, body: { receipt: receipt(q1, { already_answered: true, answer_label: 'Vanilla' }) } });
  await p.flow.answer(0, q1);
  const s = p.screen();
  assert.equal(s.view, 'receipt');
  assert.match(s.head, /^You already answered this question \(received at .*\)\. Nothing new was stored\.$/);
  assert.equal(s.sent, 'Your phone sent: Vanilla (the randomized answer).');
  assert.equal(s.why, 'Why was nothing new stored?');
  assert.doesNotMatch(s.explain, /rolled|die|coin|spinner/i);
  assert.match(s.explain, /^This phone had already answered this question, so the answer you just tapped was not sent/);
  assert.match(s.explain, /the report this phone sent the first time: Vanilla\.$/);
});

test('a receipt loaded on opening the page has no story: the roll is told only where it happened', async () => {
  const q1 = question(1);
  const p = phone(state(q1));
  p.server.me = () => ({ status: 200, body: { question_id: 1, receipt: receipt(q1), spent_epsilon: LN3 } });
  await p.ready();
  const s = p.screen();
  assert.equal(s.view, 'receipt');
  assert.match(s.head, /^Your answer was received at /);
  assert.equal(s.explain, null);
  assert.equal(s.fresh, null);
});

test('an answer from /me that left before the receipt arrived does not hide it', async () => {
  const q1 = question(1), q2 = question(2);
  const p = phone(state(q1));
  await p.ready();
  // A report on question 1 ends after the class moved to question 2: the page asks /me.
  const held = deferred(), late = deferred();
  p.server.reply = () => held.promise;
  const sending = p.flow.answer(1, q1);
  await until(() => p.posts.length === 1, 'the report');
  await p.flow.refresh(Object.assign(state(q2), { me: { question_id: 2, receipt: null, spent_epsilon: 0 } }), false);
  p.server.me = () => late.promise;
  held.resolve({ status: 200, body: { receipt: receipt(q1) } });
  await until(() => p.server.calls.some((c) => c.endsWith('/me')), 'the /me request');
  // The student answers question 2 before that /me comes back.
  p.server.reply = () => ({ status: 200, body: { receipt: receipt(q2, { question_id: 2 }) } });
  assert.equal(await p.flow.answer(0, q2), true);
  assert.equal(p.screen().view, 'receipt');
  late.resolve({ status: 200, body: { question_id: 2, receipt: null, spent_epsilon: 0 } });
  await sending;
  assert.equal(p.screen().view, 'receipt');
  assert.equal(p.screen().q.id, 2);
});

test('the first state carries this device\'s receipt: one request, no /me', async () => {
  const q1 = question(1);
  const p = phone(state(q1));
  p.server.me = () => ({ status: 200, body: { question_id: 1, receipt: receipt(q1), spent_epsilon: LN3 } });
  await p.ready();
  assert.deepEqual(p.server.calls.slice(0, 2), [`/api/poll/${CODE}?me=1`, `/api/poll/${CODE}?wait=50&me=1`]);
  assert.equal(p.screen().view, 'receipt');
  assert.ok(!p.server.calls.some((c) => c.endsWith('/me')));
});

test('a state whose me says the cookie is missing stops the page with that sentence', async () => {
  const q1 = question(1);
  const p = phone(state(q1));
  p.server.me = () => ({ status: 400, body: { error: 'no_cookie', message: 'Allow cookies and reload.' } });
  await p.ready();
  assert.equal(p.screen().view, 'note');
  assert.equal(p.screen().tone, 'error');
  assert.equal(p.screen().text, 'Allow cookies and reload.');
  assert.equal(await p.flow.answer(1, q1), false, 'no tap is taken');
});

test('the long-poll brings the next question; an unknown poll leads back to the code box', async () => {
  const q1 = question(1), q2 = question(2);
  const p = phone(state(q1));
  p.server.polls.push({ status: 304, body: null }, { status: 200, body: state(q2), etag: '"v2"' },
    { status: 404, body: { error: 'unknown_poll', message: 'No class uses the code K7QM2P.' } });
  await p.ready();
  await until(() => p.screen().view === 'join', 'the code box');
  assert.ok(p.shown.some((s) => s.view === 'question' && s.q.id === 2));
  assert.equal(p.server.lastEtag, '"v2"');
  assert.equal(p.screen().error, 'No class uses the code K7QM2P.');
});

test('a browser without the class cookie is told so, and sends nothing', async () => {
  const q1 = question(1);
  const p = phone(state(q1));
  p.server.me = () => ({ status: 400, body: { error: 'no_cookie', message: 'This browser did not keep the class cookie.' } });
  await p.ready();
  assert.deepEqual([p.screen().view, p.screen().text], ['note', 'This browser did not keep the class cookie.']);
  assert.equal(await p.flow.answer(1, q1), false);
  assert.equal(p.posts.length, 0);
});

test('a number is sent only from within its range, with noise added on the phone', async () => {
  const q = question(3, { kind: 'numeric', options: [], params: { design: 'duchi', epsilon: 1, lo: 0, hi: 12 },
    input: { type: 'number', lo: 0, hi: 12, unit: 'hours', step: 0.1, start: 6 },
    scheme: { type: 'numeric', mechanism: 'duchi', lo: 0, hi: 12, weights: [2388390825, 878639882, 0, 0] } });
  const p = phone(state(q));
  await p.ready();
  p.server.reply = (body) => ({ status: 200, body: { receipt: receipt(q, { answer_label: `${body.answer}` }) } });
  for (const bad of [-1, 12.5, NaN]) assert.equal(await p.flow.answerNumber(bad, q), false);
  assert.equal(p.posts.length, 0);
  assert.equal(await p.flow.answerNumber(7.25, q), true);
  assert.equal(p.posts.length, 1);
  assert.ok([0, 1].includes(p.posts[0].answer), 'Duchi et al.: only the randomized bit is sent');
  assert.match(p.screen().explain, /^Your phone moved your number at random/);
});

// -- the countdown ------------------------------------------------------------------------
// The server's clock when it answered, and a deadline a minute later (ms since 1970).
const SERVER_NOW = Date.UTC(2026, 2, 2, 10, 0, 0);

function timed(q, serverNow, closesIn) {
  return Object.assign(state(Object.assign({}, q, { closes_at: SERVER_NOW + closesIn })),
    { now: serverNow });
}

test('the countdown counts from the server\'s time, whatever the phone\'s clock says', async () => {
  // This tab's clock reads 123456.7 ms (its own start), the server's 2026: only the time
  // elapsed on the tab's clock since the state arrived enters the count.
  const p = phone(timed(question(1), SERVER_NOW, 60000), { clock: { t: 123456.7 } });
  await p.ready();
  assert.equal(p.screen().view, 'question');
  assert.equal(p.screen().timer, true);
  assert.deepEqual(p.flow.timer('question'), { ms: 60000, urgent: false, text: 'Time left to answer: 1:00' });
  p.clock.t += 15500;
  assert.equal(p.flow.timer('question').text, 'Time left to answer: 0:45');  // 44.5 s: rounded up
  assert.equal(p.flow.timer('receipt').text, 'Voting closes in 0:45.');
  p.clock.t += 34600;
  assert.deepEqual(p.flow.timer('question'), { ms: 9900, urgent: true, text: 'Time left to answer: 0:10' });
  p.clock.t += 9899;
  assert.equal(p.flow.timer('question').text, 'Time left to answer: 0:01');  // never 0:00 while open
  // A state that arrives later (the same question, the server's clock moved on) counts on
  // from its own time: what the phone measured in between no longer matters.
  await p.flow.refresh(timed(question(1), SERVER_NOW + 30000, 60000), false);
  assert.equal(p.flow.timer('question').text, 'Time left to answer: 0:30');
});

test('a phone whose clock is hours wrong counts the same seconds', async () => {
  for (const phoneClock of [0, 5e6, 1.7e12, -3.6e6]) {
    const p = phone(timed(question(1), SERVER_NOW - 2000, 30000), { clock: { t: phoneClock } });
    await p.ready();
    p.clock.t += 7000;
    assert.equal(p.flow.left(), 25000, `the phone's clock at ${phoneClock}`);
  }
});

test('at zero the phone closes the question itself: time is up, and a tap sends nothing', async () => {
  const q1 = question(1);
  const p = phone(timed(q1, SERVER_NOW, 20000));
  await p.ready();
  const before = p.screen().key;
  p.clock.t += 19999;
  p.flow.tick();
  assert.equal(p.screen().key, before, 'the same screen until zero (the page draws a key once)');
  p.clock.t += 1;
  p.flow.tick();
  const s = p.screen();
  assert.deepEqual([s.view, s.tone, s.timer], ['note', 'info', false]);
  assert.equal(s.text, 'Time is up: voting on this question has closed. This page shows the next question by itself when the instructor opens it.');
  assert.equal(await p.flow.answer(1, q1), false);
  assert.equal(p.posts.length, 0);
  assert.equal(p.flow.timer('question'), null);
  // The server's close, a moment later, reads the same.
  await p.flow.refresh(state(question(1, { state: 'closed', timed_out: true, closes_at: null })), false);
  assert.equal(p.screen().text, s.text);
});

test('no countdown, no countdown line', async () => {
  const p = phone(Object.assign(state(question(1, { closes_at: null })), { now: SERVER_NOW }));
  await p.ready();
  assert.equal(p.screen().timer, false);
  assert.equal(p.flow.timer('question'), null);
  p.clock.t += 1e9;
  p.flow.tick();
  assert.equal(p.screen().view, 'question');
});

test('a report sent in the last second: stored, its receipt; too late, the server\'s refusal', async () => {
  for (const [reply, view, text] of [
    [(q) => ({ status: 200, body: { receipt: receipt(q) } }), 'receipt', null],
    [() => ({ status: 409, body: { error: 'closed', message: 'Voting closed: voting on this question ended before your answer arrived, so nothing was saved.' } }),
      'note', 'Voting closed: voting on this question ended before your answer arrived, so nothing was saved.'],
  ]) {
    const q1 = question(1);
    const p = phone(timed(q1, SERVER_NOW, 20000));
    await p.ready();
    p.clock.t += 19500;
    const held = deferred();
    p.server.reply = () => held.promise;
    const sending = p.flow.answer(1, q1);
    await until(() => p.posts.length === 1, 'the report');
    p.clock.t += 1000;  // zero passes while the report travels
    const drawn = p.shown.length;
    p.flow.tick();
    assert.equal(p.shown.length, drawn, 'nothing is redrawn under a send');
    held.resolve(reply(q1));
    await sending;
    assert.equal(p.screen().view, view);
    if (text) assert.equal(p.screen().text, text);
    else assert.equal(p.screen().timer, false);  // the receipt, without a countdown line
    assert.equal(p.posts.length, 1);
  }
});

test('the countdown line on a receipt while voting goes on', async () => {
  const q1 = question(1);
  const p = phone(timed(q1, SERVER_NOW, 45000));
  p.server.me = () => ({ status: 200, body: { question_id: 1, receipt: receipt(q1), spent_epsilon: LN3 } });
  await p.ready();
  assert.deepEqual([p.screen().view, p.screen().timer], ['receipt', true]);
  assert.equal(p.flow.timer('receipt').text, 'Voting closes in 0:45.');
  p.clock.t += 45000;
  p.flow.tick();
  assert.deepEqual([p.screen().view, p.screen().timer], ['receipt', false]);
});

test('a screen reader hears the time left when the countdown shows, then at 60, 30 and 10 s', () => {
  const { timeLeftAnnouncement } = load(['flow.js'], { crypto: seededCrypto(1) });
  assert.equal(timeLeftAnnouncement(null, 95000, 'answer'), '1 minute 35 seconds left to answer.');
  assert.equal(timeLeftAnnouncement(null, 120000, 'answer'), '2 minutes left to answer.');
  assert.equal(timeLeftAnnouncement(null, 1000, 'voting'), '1 second left until voting closes.');
  // Every tick (a quarter of a second) between the marks says nothing; crossing one speaks.
  const said = [];
  for (let ms = 70000, before = null; ms > 0; before = ms, ms -= 250) {
    const text = timeLeftAnnouncement(before, ms, 'answer');
    if (text) said.push(text);
  }
  assert.deepEqual(said, ['1 minute 10 seconds left to answer.', '1 minute left to answer.',
    '30 seconds left to answer.', '10 seconds left to answer.']);
  // A phone that slept past a mark hears the time as it is.
  assert.equal(timeLeftAnnouncement(45000, 4000, 'answer'), '4 seconds left to answer.');
  assert.equal(timeLeftAnnouncement(5000, 0, 'answer'), null);
});
