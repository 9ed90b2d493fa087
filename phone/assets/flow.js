// The phone's state machine, without the page: what this tab knows (the poll's state from
// the server, this device's receipt, the report in flight, the outcome of the last send),
// the events that change it (a new state, a tap, a send ending), and the one screen that
// follows from it. The page (page.js) draws screens and forwards taps; tests drive the same
// machine in node with a fake server (tests/js/flow.test.js).
//
// The rule that keeps a phone on the current question: while a report is being randomized
// or sent, a new state is kept but not drawn (the answer buttons must not change under the
// student's finger), and when the send ends, whichever way, the screen is drawn again from
// the CURRENT state, never from the question the report was for.
//
// screen() is a pure function of the model and can be drawn at any time (a countdown's
// tick, say); each screen carries a key that changes only when what it shows changes.

// An ε as a privacy sentence shows it, rounded toward privacy by the rule of
// classroom/privacy_numbers.py (tests/test_privacy_numbers.py checks both write the same):
// an ε spent or promised rounds up, an ε left rounds down, after float noise beyond 12
// significant digits is dropped (so ln 3 reads 1.10 and 3.0000000000000004 reads 3.00).
function epsilonText(x, down) {
  if (x === null || x === undefined || Number.isNaN(x)) return 'unknown for now';
  if (!Number.isFinite(x)) return '∞';
  const scaled = Number((x * 100).toPrecision(12));
  return (Math.max(0, down ? Math.floor(scaled) : Math.ceil(scaled)) / 100).toFixed(2);
}

// A countdown's time left as the projector shows it: minutes and seconds, rounded up (the
// last second reads 0:01, never 0:00 while voting is still open).
function countdownText(ms) {
  const secs = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(secs / 60)}:${String(secs % 60).padStart(2, '0')}`;
}

// A screen reader hears the time left when the countdown first shows, then as it passes
// each of these marks (s): the countdown's line is a timer (role="timer"), which a screen
// reader leaves silent, so the page says these in its status line instead (WCAG 4.1.3).
const ANNOUNCE_LEFT_AT_S = [60, 30, 10];

// What the status line says when the time left goes from `before` to `now` (ms; `before`
// null when the countdown was not shown yet), or null. `closes` names what ends: answering
// (the question on screen) or voting (after the receipt).
function timeLeftAnnouncement(before, now, closes) {
  if (now === null || now === undefined || now <= 0) return null;
  const secs = Math.ceil(now / 1000);
  const end = closes === 'voting' ? 'until voting closes' : 'to answer';
  const mins = Math.floor(secs / 60), rest = secs % 60;
  const words = [mins ? `${mins} minute${mins === 1 ? '' : 's'}` : '',
    rest || !mins ? `${rest} second${rest === 1 ? '' : 's'}` : ''].filter(Boolean).join(' ');
  const was = before === null || before === undefined ? null : Math.ceil(before / 1000);
  const passed = was === null || ANNOUNCE_LEFT_AT_S.some((at) => was > at && secs <= at);
  return passed ? `${words} left ${end}.` : null;
}

// A report that could not be delivered (no connection, the server busy: 0, 502, 503, 504 or
// the database away) is sent again by itself, with the same submission id so that it is
// stored once, at most RESENDS times: after the server's Retry-After when it gives one,
// else after RESEND_MS, 2 × RESEND_MS, …; each wait is drawn in [1, 1.5) times that, so
// that phones told to wait together do not all come back together. A report tapped while
// the question was open is still counted if it reaches the server within the grace time
// after the instructor's Next or Close (classroom/service/reports.py's GRACE_S, 5 s).
const RESENDS = 3;
const RESEND_MS = 1000;

function retryDelay(attempt, retryAfter, draw) {
  const told = Number.parseFloat(retryAfter);
  const base = Number.isFinite(told) && told >= 0 ? told * 1000 : RESEND_MS * 2 ** attempt;
  return base * (1 + 0.5 * draw);
}

// How long a long-poll asks the server to hold it (s); the server holds at most
// phone/routes.py's MAX_WAIT_S, below a proxy's read timeout (deploy/nginx-site.conf.template).
const LONG_POLL_S = 50;

function createFlow(env) {
  // env: api(path, opts) -> Promise<{status, body, etag}>; pending: {get(), set(value)},
  // the report not yet saved, kept across reloads; show(screen); say(text) for screen
  // readers; warn(text) for the alert line; lock() when a tap is taken (disable inputs);
  // animate(scheme, draw) -> Promise<story>, played while the report travels; sid() -> a
  // fresh submission id; wait(ms); jitter() -> a number in [0, 1) (optional: the CSPRNG);
  // go(url) to leave the page; now() -> milliseconds on a clock that only moves forward
  // (performance.now), used only to measure time since the last state arrived.
  const m = {
    code: null, state: null, etag: null, me: null, meSeq: 0, busy: false,
    clock: null,     // the server's time with the last state, and this tab's clock then
    last: null,      // the outcome of this tab's last send: {qid, round, kind, text, receipt}
    story: null,     // how this tab's last report was randomized: {sid, text}
    notice: null,    // a word about a send that ended after the question moved on
    blocked: null,   // a message that stops the page (no cookie)
  };
  const enc = encodeURIComponent;
  const eps = (x) => epsilonText(x, false);
  const message = (r) => (r.body && r.body.message)
    || 'Something went wrong. Reload the page and try again.';
  const same = (a, qid, round) => !!a && a.qid === qid && a.round === round;
  const keyOf = (q) => q ? `${q.id}/${q.round}` : 'none';

  function localTime(iso) {
    const when = new Date(iso);
    return isNaN(when) ? '' : when.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  }

  function question() { return m.state && m.state.question; }

  // A countdown: the time left is the deadline minus the server's time now, which is the
  // server's time sent with the state plus the time elapsed here since. The phone's own
  // date and time never enter, so a phone whose clock is wrong still counts right.
  function left() {
    const q = question();
    if (!q || q.state !== 'open' || q.closes_at === null || q.closes_at === undefined || !m.clock) return null;
    return q.closes_at - (m.clock.server + (env.now() - m.clock.local));
  }

  function expired() {
    const ms = left();
    return ms !== null && ms <= 0;
  }

  // What the countdown line says on a screen of this view (null without a countdown).
  function timer(view) {
    const ms = left();
    if (ms === null || ms <= 0 || (view !== 'question' && view !== 'receipt')) return null;
    const clock = countdownText(ms);
    return { ms, urgent: ms <= 10000,
      text: view === 'question' ? `Time left to answer: ${clock}` : `Voting closes in ${clock}.` };
  }

  function pendingFor(q) {
    const p = env.pending.get();
    return p && p.code === m.code && p.report.question_id === q.id && p.round === q.round ? p : null;
  }

  // The poll's privacy budget, before answering: what is spent, what this question costs,
  // what would be left. Null when the poll has no budget.
  function budgetLine(q) {
    const budget = m.state.poll.budget;
    if (budget === null || budget === undefined) return null;
    const spent = m.me && m.me.spent_epsilon !== null && m.me.spent_epsilon !== undefined ? m.me.spent_epsilon : null;
    // a question of a series costs this phone what it adds to the series (/me says)
    const series = m.me && m.me.question_id === q.id && typeof m.me.cost_epsilon === 'number';
    const price = series ? m.me.cost_epsilon : q.epsilon;
    const cost = series && price < q.epsilon
      ? `this question costs you ε = ${eps(price)} (its series is ${price > 0 ? 'partly' : 'already'} paid)`
      : `this question costs ε = ${eps(price)}`;
    if (spent === null) return { over: false, text: `This poll's privacy budget is ε = ${eps(budget)}; ${cost}.` };
    const left = budget - spent - price;
    if (left < -1e-9) {
      return { over: true, text: `Answering would take you past this poll's privacy budget (ε = ${eps(budget)}; you have spent ${eps(spent)} and ${cost}), so your phone will not send an answer. Tell the instructor.` };
    }
    return { over: false, text: `Privacy budget of this poll: ε = ${eps(budget)}. You have spent ${eps(spent)}; ${cost}; ${epsilonText(left, true)} will be left.` };
  }

  function receiptScreen(q, receipt, here) {
    const stamp = localTime(receipt.received_at);
    const sent = `Your phone sent: ${receipt.answer_label} (the randomized answer).`;
    let head, explain = null, why = 'How did my phone decide?';
    if (here && here.kind === 'already') {
      // Another tab (or this one before a reload) answered first: this tap's randomization
      // was not used, so it is not shown; what counts is what was sent then.
      head = `You already answered this question (received at ${stamp}). Nothing new was stored.`;
      explain = `This phone had already answered this question, so the answer you just tapped was not sent and its randomization was not used. What counts is the report this phone sent the first time: ${receipt.answer_label}.`;
      why = 'Why was nothing new stored?';
    } else if (here && here.kind === 'stored') {
      head = `Answer received at ${stamp}.`;
      explain = m.story && m.story.sid === here.sid ? m.story.text : null;
    } else {
      head = `Your answer was received at ${stamp}.`;
    }
    const spent = m.me && m.me.spent_epsilon !== undefined ? m.me.spent_epsilon : receipt.spent_epsilon;
    return {
      view: 'receipt', q, head, sent, explain, why, privacy: receipt.privacy_note,
      fresh: here ? here.sid : null,  // this tab's own send: the page moves the focus to it once
      spent: `Privacy you have spent in this poll so far: ε = ${eps(spent)} (the ε of each answer adds up: sequential composition).`,
    };
  }

  function noteScreen(q, tone, text, extra) {
    return Object.assign({ view: 'note', q, tone, text }, extra || {});
  }

  // What this tab shows now: one screen, from the model alone.
  function screen() {
    if (!m.state) return null;
    const poll = m.state.poll, q = question();
    let s;
    if (m.blocked) s = noteScreen(q, 'error', m.blocked);
    else if (!q) s = noteScreen(null, 'info', 'No question is open yet. This page updates by itself when the instructor opens one.');
    else {
      const here = same(m.last, q.id, q.round) ? m.last : null;
      const receipt = m.me && m.me.question_id === q.id && m.me.receipt && m.me.receipt.round === q.round ? m.me.receipt : null;
      const waiting = pendingFor(q);
      // At the countdown's zero the phone closes the question itself, as the server does.
      const timeUp = expired() || (q.state === 'closed' && q.timed_out);
      const phase = expired() ? 'closed' : q.state;
      if (receipt) s = receiptScreen(q, receipt, here && (here.kind === 'stored' || here.kind === 'already') ? here : null);
      else if (phase === 'draft') {
        s = noteScreen(q, 'info', `Round ${q.round} of this question opens soon. This page updates by itself when voting opens.`);
      } else if (phase !== 'open') {
        const text = here && here.kind === 'refused' ? here.text
          : waiting ? 'Voting closed before your answer could be saved, so it was not counted.'
          : timeUp ? 'Time is up: voting on this question has closed. This page shows the next question by itself when the instructor opens it.'
          : 'Voting on this question has closed. This page shows the next question by itself when the instructor opens it.';
        s = noteScreen(q, waiting || (here && here.kind === 'refused') ? 'error' : 'info', text);
      } else if (here && here.kind === 'refused') s = noteScreen(q, 'error', here.text);
      else if (waiting) {
        s = noteScreen(q, 'warn', here && here.kind === 'unsaved' ? here.text
          : 'Your last answer was not saved yet. Your phone already randomized it; sending it again cannot count twice.', { resend: true });
      } else s = { view: 'question', q, budget: budgetLine(q) };
      s.timer = timer(s.view) !== null;
    }
    s.poll = poll;
    s.notice = m.notice && m.notice.key === keyOf(q) ? m.notice.text : null;
    s.noticeTone = s.notice ? m.notice.tone : null;
    // Results change with every report while revealed: they are part of the key except
    // under the answer inputs, which must not be redrawn while the student types.
    const shown = Object.assign({}, s, { poll: null, q: null });
    const results = q && s.view !== 'question' ? q.results : null;
    s.key = JSON.stringify([shown, q && [q.id, q.round, q.state, q.revealed], results]);
    return s;
  }

  function show() {
    const s = screen();
    if (s) env.show(s);
  }

  // This device's receipt for the current question and the ε it has spent: `me` as a state
  // asked with ?me=1 carries it (or its error), else from /me.
  function takeMe(me) {
    if (me && me.error === 'no_cookie') m.blocked = me.message;
    else m.me = me && !me.error ? me : null;
  }

  async function loadMe() {
    const seq = ++m.meSeq;
    const r = await env.api(`/api/poll/${enc(m.code)}/me`);
    if (seq !== m.meSeq) return;  // a newer answer (a receipt, say) arrived meanwhile
    takeMe(r.status === 200 ? r.body : r.body && r.body.error === 'no_cookie' ? r.body : null);
  }

  function changed(a, b) {
    const p = a && a.question, q = b && b.question;
    return !p || !q || p.id !== q.id || p.round !== q.round;
  }

  // A new state from the server. While a tap is being handled it is only kept.
  async function refresh(s, force) {
    const moved = !m.state || changed(m.state, s);
    m.state = s;
    m.clock = typeof s.now === 'number' ? { server: s.now, local: env.now() } : null;
    if (m.busy) return;
    if (moved || force) {
      if (s.me !== undefined) {
        m.meSeq++;  // newer than any /me still on its way
        takeMe(s.me);
      } else {
        await loadMe();
        if (m.busy) return;  // a tap came in while this device's receipt was loading
      }
    }
    show();
  }

  // After a send, whichever way it ended: the current question, with this device's receipt
  // for it, and a word about the send if the question moved on meanwhile.
  async function settle(item) {
    const q = question();
    const sentFor = { qid: item.report.question_id, round: item.round };
    if (!q || !same(sentFor, q.id, q.round)) {
      m.notice = { key: keyOf(q), text: earlier(m.last), tone: toneOf(m.last) };
      if (!m.me || !q || m.me.question_id !== q.id) await loadMe();
    }
    show();
  }

  // How the word on the earlier answer looks: news when it was stored, a warning when its
  // fate is unknown, an error when it was not counted.
  function toneOf(last) {
    if (last.kind === 'stored' || last.kind === 'already') return 'info';
    return last.kind === 'unsaved' ? 'warn' : 'error';
  }

  function earlier(last) {
    if (last.kind === 'stored') return `Your answer to the previous question was received at ${localTime(last.receipt.received_at)}.`;
    if (last.kind === 'already') return 'You had already answered the previous question; nothing new was stored.';
    if (last.kind === 'unsaved') return 'Your answer to the previous question was not confirmed (the connection failed), and the class has moved on.';
    if (last.error === 'closed') return 'Your answer to the previous question arrived after it closed and was not counted.';
    return `Your answer to the previous question was not accepted: ${last.text}`;
  }

  const undelivered = (r) => [0, 502, 503, 504].includes(r.status) || (r.body && r.body.error === 'unavailable');

  // The report to the server, sent again while it could not be delivered (RESENDS).
  async function post(item) {
    const body = JSON.stringify(item.report);
    for (let attempt = 0; ; attempt++) {
      const r = await env.api(`/api/poll/${enc(m.code)}/report`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
      if (!undelivered(r) || attempt >= RESENDS) return r;
      env.say('Sending your randomized answer again…');
      await env.wait(retryDelay(attempt, r.retryAfter, env.jitter ? env.jitter() : unit()));
    }
  }

  // Sends the report and, meanwhile, plays `story` (a promise of the randomization's
  // story: the roll's animation); the screen follows when both have ended.
  async function send(item, story) {
    m.busy = true;
    m.notice = null;
    env.pending.set(item);
    env.say('Sending your randomized answer…');
    const [r, told] = await Promise.all([post(item), story || null]);
    if (told) m.story = { sid: item.report.submission_id, text: told };
    const base = { qid: item.report.question_id, round: item.round, sid: item.report.submission_id };
    if (r.status === 200 && r.body && r.body.receipt) {
      const receipt = r.body.receipt;
      env.pending.set(null);
      m.meSeq++;  // this receipt is newer than any /me still on its way
      m.me = { question_id: receipt.question_id, receipt, spent_epsilon: receipt.spent_epsilon };
      m.last = Object.assign(base, { kind: receipt.already_answered ? 'already' : 'stored', receipt });
    } else if (r.status === 0 || r.status === 503 || (r.body && r.body.error === 'unavailable')) {
      m.last = Object.assign(base, { kind: 'unsaved', text: message(r) });  // kept: send it again
    } else {
      env.pending.set(null);
      m.last = Object.assign(base, { kind: 'refused', text: message(r), error: r.body && r.body.error });
    }
    m.busy = false;
    await settle(item);
  }

  function item(q, answer) {
    // The true answer is not part of it: only the randomized report leaves the page.
    return { code: m.code, round: q.round,
      report: { question_id: q.id, answer, params: q.params, submission_id: env.sid() } };
  }

  // Whether a tap on the screen of question `shown` may be taken: not while another is
  // being handled, and only on the current question (a screen a moment old is redrawn).
  function takes(shown) {
    const q = question();
    if (m.busy) return null;
    if (m.blocked || !q || !shown || shown.id !== q.id || shown.round !== q.round || q.state !== 'open'
        || expired() || (budgetLine(q) || {}).over) { show(); return null; }
    return q;
  }

  // A tap on an option of the question `shown`: randomize on the device, then send.
  async function answer(value, shown) {
    const q = takes(shown);
    if (!q) return false;
    m.busy = true;
    env.lock();
    let report, story = null;
    if (q.mode === 'physical') {
      report = value;  // the student randomized by hand and taps what they report
    } else {
      const r = randomize(q.scheme, value);  // randomizer.js, by the scheme's type
      report = r.report;
      if (r.draw === undefined) {
        story = 'Your phone randomized your answer.';
      } else {  // a draw the page animates (the die, coins or spinner) while it is sent
        story = env.animate(q.scheme, r.draw);
      }
    }
    const next = item(q, report);
    m.story = null;
    await send(next, story);
    return true;
  }

  // A typed number in the question's range (the page says so when it is not): noise is
  // added on the device.
  async function answerNumber(value, shown) {
    const q = takes(shown);
    const range = q && q.input;
    if (!range || range.type !== 'number' || !(value >= range.lo && value <= range.hi)) return false;
    m.busy = true;
    env.lock();
    env.say('Your phone is adding noise to your answer…');
    const next = item(q, randomize(q.scheme, value).report);
    m.story = null;
    await send(next, 'Your phone moved your number at random before sending it. One report says little about you; the average of many reports is close to the class average.');
    return true;
  }

  // "Send it again": the same randomized report, the same submission id.
  async function resend() {
    const q = question();
    const waiting = q && pendingFor(q);
    if (m.busy) return false;
    if (!waiting) { show(); return false; }
    env.lock();
    await send(waiting);
    return true;
  }

  async function watch() {
    let backoff = 1000;
    for (;;) {
      const r = await env.api(`/api/poll/${enc(m.code)}?wait=${LONG_POLL_S}&me=1`, { headers: m.etag ? { 'If-None-Match': m.etag } : {} });
      if (r.status === 200) {
        m.etag = r.etag; backoff = 1000; env.warn('');
        await refresh(r.body, false);
      } else if (r.status === 304) {
        backoff = 1000; env.warn('');
      } else {
        if (r.status === 404 || r.status === 400) { env.show({ view: 'join', error: message(r), key: 'join' }); return; }
        // No connection, the server busy, or a proxy that gave up on a held request: the
        // page asks again by itself and says nothing; anything else is worth a line.
        if (![0, 502, 503, 504].includes(r.status)) env.warn(message(r));
        await env.wait(backoff);
        backoff = Math.min(30000, backoff * 2);
      }
    }
  }

  // The page at /join/CODE (or /join): load the poll, show it, then follow it.
  async function start(path, search) {
    const match = path.match(/^\/join\/([^/]+)\/?$/);
    if (!match) {
      const bad = search.get('code') !== null ? 'That is not a join code: join codes have 6 letters and digits.' : '';
      env.show({ view: 'join', error: bad, key: `join/${bad}` });
      return;
    }
    m.code = decodeURIComponent(match[1]);
    const r = await env.api(`/api/poll/${enc(m.code)}?me=1`);
    if (r.status !== 200) {
      env.show({ view: 'join', error: message(r), code: m.code, key: 'join/error' });
      return;
    }
    m.etag = r.etag;
    m.code = r.body.poll.code;
    await refresh(r.body, true);
    await watch();
  }

  // The join form: a typed code leads to its poll's page, or to one clear sentence.
  async function join(typed) {
    const r = await env.api(`/api/poll/${enc(typed.trim() || '-')}`);
    if (r.status === 200) env.go(`/join/${enc(r.body.poll.code)}`);
    else env.show({ view: 'join', error: message(r), key: `join/${message(r)}` });
  }

  // The page's clock tick: redraw if the screen changed (the countdown reached zero), never
  // under a tap being handled.
  function tick() {
    if (!m.busy) show();
  }

  return { model: m, screen, show, refresh, answer, answerNumber, resend, watch, start, join, tick, timer, left };
}
