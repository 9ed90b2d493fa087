// The phone page: join, show the current question, randomize on the device, send only the
// randomized report, show the receipt, and wait for the next question by long-polling.
(function () {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const area = $('question-area'), status = $('status'), alertBox = $('alert');
  const PENDING = 'ldp-pending-report';
  let code = null, state = null, etag = null, me = null, busy = false, shownKey = null;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') node.className = v; else if (k === 'text') node.textContent = v;
      else node.setAttribute(k, v);
    }
    for (const c of children) node.append(c);
    return node;
  }
  const say = (text) => { status.textContent = text; };
  const warn = (text) => { alertBox.textContent = text || ''; };
  const pct = (x) => `${Math.round(100 * x)}%`;
  const eps = (x) => (x === null || x === undefined) ? 'unknown for now' : x.toFixed(2);

  async function api(path, opts) {
    let response;
    try {
      response = await fetch(path, Object.assign({ credentials: 'same-origin', cache: 'no-store' }, opts || {}));
    } catch (err) {
      return { status: 0, body: { error: 'offline', message: 'No connection to the class server. Check the Wi-Fi; this page tries again.' } };
    }
    let body = null;
    if (response.status !== 304) {
      try { body = await response.json(); } catch (err) { body = null; }
    }
    return { status: response.status, body, etag: response.headers.get('ETag') };
  }
  const message = (r) => (r.body && r.body.message) || 'Something went wrong. Reload the page and try again.';

  // -- joining -------------------------------------------------------------------------------
  function showJoin(error) {
    $('poll').hidden = true;
    $('join').hidden = false;
    warn(error || '');
    if (error) $('code').focus();
  }
  $('join-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const typed = $('code').value;
    const r = await api(`/api/poll/${encodeURIComponent(typed.trim() || '-')}`);
    if (r.status === 200) {
      location.assign(`/join/${encodeURIComponent(r.body.poll.code)}`);
    } else {
      showJoin(message(r));
    }
  });

  // -- the poll ------------------------------------------------------------------------------
  function pending() {
    try { return JSON.parse(sessionStorage.getItem(PENDING) || 'null'); } catch (err) { return null; }
  }
  function setPending(value) {
    try {
      if (value) sessionStorage.setItem(PENDING, JSON.stringify(value));
      else sessionStorage.removeItem(PENDING);
    } catch (err) { /* private mode: the report stays in memory only */ }
  }

  async function loadMe() {
    const r = await api(`/api/poll/${encodeURIComponent(code)}/me`);
    if (r.status === 200) { me = r.body; return true; }
    if (r.body && r.body.error === 'no_cookie') { render(r.body.message); return false; }
    me = null;
    return true;
  }

  function render(blocking) {
    const q = state && state.question;
    $('join').hidden = true;
    $('poll').hidden = false;
    $('poll-name').textContent = `Poll ${state.poll.code}` + (state.poll.title ? ` · ${state.poll.title}` : '');
    area.replaceChildren();
    if (blocking) { area.append(el('p', { class: 'note error', text: blocking })); return; }
    if (!q) {
      area.append(el('p', { class: 'note info', text: 'No question is open yet. This page updates by itself when the instructor opens one.' }));
      return;
    }
    const receipt = me && me.question_id === q.id ? me.receipt : null;
    const waiting = pending();
    if (receipt && receipt.round === q.round) {
      showReceipt(q, receipt, false);
    } else if (q.state !== 'open') {
      area.append(el('h1', { text: q.text }));
      area.append(el('p', { class: 'note info', text: 'Voting closed: answers are no longer accepted, and nothing from this phone was saved.' }));
    } else if (waiting && waiting.code === code && waiting.report.question_id === q.id && waiting.round === q.round) {
      area.append(el('h1', { text: q.text }));
      notSaved(q, waiting, 'Your last answer was not saved yet. Your phone already randomized it; sending it again cannot count twice.');
    } else {
      showQuestion(q);
    }
    showResults(q);
  }

  function showQuestion(q) {
    area.append(el('h1', { id: 'question', text: q.text }));
    const budget = budgetLine(q);
    if (budget) {
      area.append(el('p', { class: budget.over ? 'note error' : 'hint', id: 'budget', text: budget.text }));
      if (budget.over) return;
    }
    if (q.kind === 'numeric') { showNumeric(q); return; }
    const group = el('div', { class: 'opts', role: 'group', 'aria-labelledby': 'question' });
    if (q.mode === 'physical') {
      area.append(el('p', { class: 'hint', text: q.physical_instructions }));
      for (const opt of q.options) {
        group.append(button(`I report: ${opt.label}`, opt, () => sendPhysical(q, opt)));
      }
    } else {
      area.append(el('p', { class: 'hint', text: 'Tap your TRUE answer. Your phone randomizes it before sending: only the randomized answer leaves this page.' }));
      for (const opt of q.options) {
        const b = button(opt.label, opt, () => tap(q, opt));
        b.setAttribute('aria-label', `My true answer is ${opt.label}`);
        group.append(b);
      }
    }
    area.append(group);
  }

  // The poll's privacy budget, before answering: what is spent, what this question costs,
  // what would be left. Null when the poll has no budget.
  function budgetLine(q) {
    const budget = state.poll.budget;
    if (budget === null || budget === undefined) return null;
    const spent = me && me.spent_epsilon !== null && me.spent_epsilon !== undefined ? me.spent_epsilon : null;
    const cost = `this question costs ε = ${eps(q.epsilon)}`;
    if (spent === null) return { over: false, text: `This poll's privacy budget is ε = ${eps(budget)}; ${cost}.` };
    const left = budget - spent - q.epsilon;
    if (left < -1e-9) {
      return { over: true, text: `Answering would take you past this poll's privacy budget (ε = ${eps(budget)}; you have spent ${eps(spent)} and ${cost}), so your phone will not send an answer. Tell the instructor.` };
    }
    return { over: false, text: `Privacy budget of this poll: ε = ${eps(budget)}. You have spent ${eps(spent)}; ${cost}; ${eps(Math.max(0, left))} will be left.` };
  }

  function showNumeric(q) {
    const n = q.numeric;
    const unit = n.unit ? ` ${n.unit}` : '';
    area.append(el('p', { class: 'hint', text: `Enter your TRUE value, from ${n.lo}${unit} to ${n.hi}${unit}. Your phone adds random noise before sending: only the noisy number leaves this page.` }));
    const name = n.unit ? `My true value, in ${n.unit}` : 'My true value';
    const start = String(n.start);
    const common = { min: String(n.lo), max: String(n.hi), step: String(n.step) };
    const slider = el('input', Object.assign({ type: 'range', id: 'value-slider', 'aria-label': name, value: start }, common));
    const box = el('input', Object.assign({ type: 'number', id: 'value', inputmode: 'decimal', 'aria-label': name, value: start }, common));
    slider.addEventListener('input', () => { box.value = slider.value; });
    box.addEventListener('input', () => { if (box.value !== '') slider.value = box.value; });
    const send = el('button', { type: 'button', class: 'opt primary', id: 'send-value', text: 'Send my answer' });
    const problem = el('p', { class: 'note error', id: 'value-error', hidden: '' });
    send.addEventListener('click', () => {
      if (busy) return;
      const v = Number(box.value);
      if (box.value.trim() === '' || !Number.isFinite(v) || v < n.lo || v > n.hi) {
        problem.hidden = false;
        problem.textContent = `Enter a number from ${n.lo} to ${n.hi}${unit}.`;
        box.focus();
        return;
      }
      tapNumeric(q, v);
    });
    area.append(slider, el('label', { class: 'value', for: 'value' }, box, el('span', { text: unit })), problem,
      el('div', { class: 'opts' }, send));
  }

  function button(label, opt, onTap) {
    const b = el('button', { type: 'button', class: 'opt', 'data-answer': String(opt.value), text: label });
    b.addEventListener('click', () => { if (!busy) onTap(); });
    return b;
  }

  function sid() {
    return crypto.randomUUID ? crypto.randomUUID()
      : Array.from(crypto.getRandomValues(new Uint32Array(4)), (x) => x.toString(16)).join('-');
  }

  async function tapNumeric(q, value) {
    busy = true;
    for (const b of area.querySelectorAll('button, input')) b.disabled = true;
    say('Your phone is adding noise to your answer…');
    const answer = randomizeNumeric(q.scheme, value);
    // The typed value is forgotten from here on: only the noisy report is kept.
    const report = { question_id: q.id, answer, params: q.params, submission_id: sid() };
    await send(q, { code, round: q.round, report },
      'Your phone moved your number at random before sending it. One report says little about you; the average of many reports is close to the class average.');
  }

  async function tap(q, opt) {
    busy = true;
    for (const b of area.querySelectorAll('button.opt')) b.disabled = true;
    const stage = el('div', { class: 'stage', 'aria-hidden': 'true' });
    area.append(stage);
    say('Your phone is randomizing your answer…');
    let answer, story;
    if (q.scheme.type === 'binary') {
      const r = randomizeBinary(q.scheme, opt.value);
      answer = r.report;
      story = await animateBinary(q.scheme, stage, r.draw);
    } else {
      answer = randomizeCategorical(q.scheme, opt.value);
      story = 'Your phone randomized your answer.';
    }
    // The tapped answer is forgotten from here on: only the randomized report is kept.
    const report = { question_id: q.id, answer, params: q.params, submission_id: sid() };
    await send(q, { code, round: q.round, report }, story);
  }

  async function sendPhysical(q, opt) {
    busy = true;
    const report = { question_id: q.id, answer: opt.value, params: q.params, submission_id: sid() };
    await send(q, { code, round: q.round, report }, null);
  }

  async function send(q, item, story) {
    busy = true;
    setPending(item);
    say('Sending your randomized answer…');
    const r = await api(`/api/poll/${encodeURIComponent(code)}/report`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(item.report) });
    busy = false;
    area.replaceChildren(el('h1', { text: q.text }));
    if (r.status === 200) {
      setPending(null);
      me = { question_id: q.id, receipt: r.body.receipt, spent_epsilon: r.body.receipt.spent_epsilon };
      showReceipt(q, r.body.receipt, true, story);
      showResults(q);
      return;
    }
    const kind = r.body && r.body.error;
    if (r.status === 503 || r.status === 0 || kind === 'unavailable') {
      notSaved(q, item, message(r));
      return;
    }
    setPending(null);
    area.append(el('p', { class: 'note error', text: message(r) }));
    say(message(r));
  }

  function notSaved(q, item, text) {
    const again = el('button', { type: 'button', class: 'primary', text: 'Send it again' });
    again.addEventListener('click', () => { if (!busy) send(q, item, null); });
    area.append(el('p', { class: 'note warn', text }), again);
    say(text);
  }

  function localTime(iso) {
    const when = new Date(iso);
    return isNaN(when) ? '' : when.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  }

  function showReceipt(q, receipt, fresh, story) {
    if (!area.querySelector('h1')) area.append(el('h1', { text: q.text }));
    const stamp = localTime(receipt.received_at);
    const head = !fresh ? `Your answer was received at ${stamp}.`
      : receipt.already_answered ? `You already answered this question (received at ${stamp}). Nothing new was stored.`
      : `Answer received at ${stamp}.`;
    const box = el('div', { class: 'note ok', id: 'receipt', tabindex: '-1' },
      el('p', { text: head }, ),
      el('p', { text: `Your phone sent: ${receipt.answer_label} (the randomized answer).` }));
    area.append(box);
    if (story) {
      area.append(el('details', {}, el('summary', { text: 'How did my phone decide?' }), el('p', { text: story })));
    }
    area.append(el('p', { text: receipt.privacy_note }));
    const spent = me && me.spent_epsilon !== undefined ? me.spent_epsilon : receipt.spent_epsilon;
    area.append(el('p', { class: 'hint', text: `Privacy you have spent in this poll so far: ε = ${eps(spent)} (the ε of each answer adds up: sequential composition).` }));
    say(head);
    if (fresh) box.focus();  // no answer button keeps the focus (or the highlight)
  }

  function showResults(q) {
    const res = q.results;
    if (!q.revealed || !res) return;
    area.append(el('h2', { text: 'Class results' }));
    if (!res.n) { area.append(el('p', { text: 'No answers were received.' })); return; }
    if (res.binary) {
      const b = res.binary;
      if (b.share === null) return;
      const interval = (b.ci_low !== null && b.ci_high !== null) ? ` (95% interval ${pct(b.ci_low)} to ${pct(b.ci_high)})` : '';
      area.append(el('p', { text: `Estimated share who truly prefer ${b.label}: ${pct(b.share)}${interval}, from ${res.n} randomized answers.` }));
      const bar = el('div', { class: 'bar', 'aria-hidden': 'true' }, el('span'));
      bar.firstChild.style.width = pct(Math.min(1, Math.max(0, b.share)));
      area.append(bar);
      if (b.share < 0 || b.share > 1) {
        area.append(el('p', { class: 'hint', text: 'The unbiased estimate can fall outside 0–100% when few people answer: the randomization’s noise is larger than the signal.' }));
      }
    } else if (res.numeric) {
      const m = res.numeric;
      if (m.mean === null) return;
      const interval = m.ci ? ` (95% interval ${m.ci[0]} to ${m.ci[1]})` : '';
      area.append(el('p', { text: `Estimated class average: ${m.mean}${interval}, from ${res.n} noisy answers.` }));
      if (m.outside) {
        area.append(el('p', { class: 'hint', text: 'The unbiased estimate can fall outside the range of possible answers when few people answer: the noise is larger than the signal.' }));
      }
    } else if (res.categorical) {
      for (const c of res.categorical) {
        if (c.share === null) continue;
        area.append(el('p', { text: `${c.label}: ${pct(c.share)}` }));
      }
    }
  }

  function questionKey(s) {
    const q = s && s.question;
    return q ? `${q.id}/${q.round}/${q.state}/${q.revealed}` : 'none';
  }

  async function refresh(s, force) {
    const key = questionKey(s);
    const changedQuestion = !state || !state.question || !s.question
      || state.question.id !== s.question.id || state.question.round !== s.question.round;
    state = s;
    if (busy) return;
    if (force || key !== shownKey) {
      if (changedQuestion || force) { if (!(await loadMe())) return; }
      shownKey = key;
      render();
    }
  }

  async function watch() {
    let backoff = 1000;
    for (;;) {
      const r = await api(`/api/poll/${encodeURIComponent(code)}?wait=25`, { headers: etag ? { 'If-None-Match': etag } : {} });
      if (r.status === 200) {
        etag = r.etag; backoff = 1000; warn('');
        await refresh(r.body, false);
      } else if (r.status === 304) {
        backoff = 1000; warn('');
      } else {
        if (r.status === 404 || r.status === 400) { showJoin(message(r)); return; }
        if (r.status !== 0 && r.status !== 503) warn(message(r));
        await new Promise((done) => setTimeout(done, backoff));
        backoff = Math.min(30000, backoff * 2);
      }
    }
  }

  async function start() {
    const match = location.pathname.match(/^\/join\/([^/]+)\/?$/);
    if (!match) { showJoin(new URLSearchParams(location.search).get('code') !== null ? 'That is not a join code: join codes have 6 letters and digits.' : ''); return; }
    code = decodeURIComponent(match[1]);
    const r = await api(`/api/poll/${encodeURIComponent(code)}`);
    if (r.status !== 200) {
      $('code').value = code;
      showJoin(message(r));
      return;
    }
    etag = r.etag;
    code = r.body.poll.code;
    await refresh(r.body, true);
    watch();
  }
  start();
})();
