// The phone page: draws the screens of the state machine (flow.js) and hands it the
// student's taps; the network, the session storage and the animations are its
// environment. Everything that decides what to show lives in flow.js.
(function () {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const area = $('question-area'), status = $('status'), alertBox = $('alert');
  const PENDING = 'ldp-pending-report';
  let shownKey = null, shownView = null, focused = null, flow = null;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') node.className = v; else if (k === 'text') node.textContent = v;
      else node.setAttribute(k, v);
    }
    for (const c of children) node.append(c);
    return node;
  }
  const pct = (x) => `${Math.round(100 * x)}%`;
  // The numbers of the class results come written by the server (classroom/display.py),
  // with the digits the projector shows: a share to 0.1%, an interval rounded outward.
  const interval = (t) => (t && t.ci ? ` (95% interval ${t.ci[0]} to ${t.ci[1]})` : '');

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
    return { status: response.status, body, etag: response.headers.get('ETag'),
      retryAfter: response.headers.get('Retry-After') };
  }

  // The report not yet saved: in the tab's session storage, so that it survives a reload;
  // where storage is refused (some private modes), in memory only.
  let memory = null;
  const pending = {
    get() {
      try {
        const kept = sessionStorage.getItem(PENDING);
        return kept === null ? memory : JSON.parse(kept);
      } catch (err) { return memory; }
    },
    set(value) {
      memory = value || null;
      try {
        if (value) sessionStorage.setItem(PENDING, JSON.stringify(value));
        else sessionStorage.removeItem(PENDING);
      } catch (err) { /* memory only */ }
    },
  };

  function sid() {
    return crypto.randomUUID ? crypto.randomUUID()
      : Array.from(crypto.getRandomValues(new Uint32Array(4)), (x) => x.toString(16)).join('-');
  }

  // -- drawing a screen ------------------------------------------------------------------
  function show(s) {
    if (s.key === shownKey) return;
    shownKey = s.key;
    shownView = s.view;
    if (s.view === 'join') { showJoin(s); return; }
    $('join').hidden = true;
    $('poll').hidden = false;
    $('poll-name').textContent = `Poll ${s.poll.code}` + (s.poll.title ? ` · ${s.poll.title}` : '');
    area.replaceChildren();
    if (s.notice) area.append(el('p', { class: `note ${s.noticeTone || 'info'}`, id: 'notice', text: s.notice }));
    const q = s.q;
    if (q) area.append(el('h1', { id: 'question', text: q.text }));
    // The countdown's line; its text follows the clock (drawTimer), not the screen.
    if (s.timer) area.append(el('p', { class: 'timer', id: 'countdown', role: 'timer' }));
    if (s.notice) status.textContent = s.notice;
    if (s.view === 'question') showQuestion(s);
    else if (s.view === 'receipt') showReceipt(s);
    else {
      area.append(el('p', { class: `note ${s.tone}`, text: s.text }));
      if (s.resend) {
        const again = el('button', { type: 'button', class: 'primary', text: 'Send it again' });
        again.addEventListener('click', () => flow.resend());
        area.append(again);
      }
      status.textContent = s.text;
    }
    if (q) showResults(q);
    drawTimer();
  }

  // The countdown's time left at the previous tick (ms), null when none was shown.
  let announcedLeft = null;

  function drawTimer() {
    const line = $('countdown');
    const t = line ? flow.timer(shownView) : null;
    if (!line || !t) {
      announcedLeft = null;
      if (line) line.textContent = '';
      return;
    }
    line.textContent = t.text;
    line.classList.toggle('urgent', t.urgent);
    const said = timeLeftAnnouncement(announcedLeft, t.ms,
      shownView === 'receipt' ? 'voting' : 'answer');
    announcedLeft = t.ms;
    if (said) status.textContent = said;
  }

  function showJoin(s) {
    $('poll').hidden = true;
    $('join').hidden = false;
    alertBox.textContent = s.error || '';
    if (s.code) $('code').value = s.code;
    if (s.error) $('code').focus();
  }

  function lock() {
    for (const b of area.querySelectorAll('button, input')) b.disabled = true;
  }

  function showQuestion(s) {
    const q = s.q;
    if (s.budget) {
      area.append(el('p', { class: s.budget.over ? 'note error' : 'hint', id: 'budget', text: s.budget.text }));
      if (s.budget.over) return;
    }
    const draw = INPUTS[q.input && q.input.type];
    if (!draw) {
      area.append(el('p', { class: 'note error', text: 'This page cannot show this question; reload it.' }));
      return;
    }
    draw(q);
  }

  // One drawer per input the server names (QuestionKind.phone_input): the page never asks
  // which kind of question it shows.
  const INPUTS = { choice: showChoice, number: showNumeric, checkboxes: showCheckboxes };

  // One box per option; the set (a 0/1 per option, in the options' order) is randomized on
  // the phone when sent. No box checked is an answer too.
  function showCheckboxes(q) {
    area.append(el('p', { class: 'hint', text: 'Check every TRUE answer, then send. Your phone randomizes your set before sending: only the randomized answer leaves this page.' }));
    const group = el('fieldset', { class: 'boxes', 'aria-labelledby': 'question' });
    const boxes = [];
    for (const opt of q.options) {
      const box = el('input', { type: 'checkbox', id: `box-${opt.value}`, 'data-answer': String(opt.value) });
      boxes.push([opt.value, box]);
      group.append(el('label', { class: 'box', for: `box-${opt.value}` }, box, el('span', { text: opt.label })));
    }
    const send = el('button', { type: 'button', class: 'opt primary', id: 'send-set', text: 'Send my answer' });
    send.addEventListener('click', () => {
      const chosen = new Array(q.options.length).fill(0);
      for (const [value, box] of boxes) chosen[value] = box.checked ? 1 : 0;
      flow.answer(chosen, q);
    });
    area.append(group, el('div', { class: 'opts' }, send));
  }

  function showChoice(q) {
    const group = el('div', { class: 'opts', role: 'group', 'aria-labelledby': 'question' });
    if (q.mode === 'physical') {
      area.append(el('p', { class: 'hint', text: q.physical_instructions }));
      for (const opt of q.options) group.append(option(q, `I report: ${opt.label}`, opt));
    } else {
      area.append(el('p', { class: 'hint', text: 'Tap your TRUE answer. Your phone randomizes it before sending: only the randomized answer leaves this page.' }));
      for (const opt of q.options) {
        const b = option(q, opt.label, opt);
        b.setAttribute('aria-label', `My true answer is ${opt.label}`);
        group.append(b);
      }
    }
    area.append(group);
  }

  function option(q, label, opt) {
    const b = el('button', { type: 'button', class: 'opt', 'data-answer': String(opt.value), text: label });
    b.addEventListener('click', () => flow.answer(opt.value, q));
    return b;
  }

  function showNumeric(q) {
    const n = q.input;
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
      const v = Number(box.value);
      if (box.value.trim() === '' || !Number.isFinite(v) || v < n.lo || v > n.hi) {
        problem.hidden = false;
        problem.textContent = `Enter a number from ${n.lo} to ${n.hi}${unit}.`;
        box.focus();
        return;
      }
      flow.answerNumber(v, q);
    });
    area.append(slider, el('label', { class: 'value', for: 'value' }, box, el('span', { text: unit })), problem,
      el('div', { class: 'opts' }, send));
  }

  function showReceipt(s) {
    const box = el('div', { class: 'note ok', id: 'receipt', tabindex: '-1' },
      el('p', { text: s.head }), el('p', { text: s.sent }));
    area.append(box);
    if (s.explain) {
      area.append(el('details', {}, el('summary', { text: s.why }), el('p', { text: s.explain })));
    }
    area.append(el('p', { text: s.privacy }), el('p', { class: 'hint', text: s.spent }));
    status.textContent = s.head;
    if (s.fresh && s.fresh !== focused) { focused = s.fresh; box.focus(); }  // no answer button keeps the focus
  }

  function showResults(q) {
    const res = q.results;
    if (!q.revealed || !res) return;
    area.append(el('h2', { text: 'Class results' }));
    if (!res.n) { area.append(el('p', { text: 'No answers were received.' })); return; }
    if (res.binary) {
      const b = res.binary;
      if (b.share === null || !b.shown || b.shown.share === null) return;
      area.append(el('p', { text: `Estimated share who truly prefer ${b.label}: ${b.shown.share}${interval(b.shown)}, from ${res.n} randomized answers.` }));
      const bar = el('div', { class: 'bar', 'aria-hidden': 'true' }, el('span'));
      bar.firstChild.style.width = pct(Math.min(1, Math.max(0, b.share)));
      area.append(bar);
      if (b.share < 0 || b.share > 1) {
        area.append(el('p', { class: 'hint', text: 'The unbiased estimate can fall outside 0–100% when few people answer: the randomization’s noise is larger than the signal.' }));
      }
    } else if (res.numeric) {
      const m = res.numeric;
      if (m.mean === null) return;
      area.append(el('p', { text: `Estimated class average: ${m.mean}${interval(m)}, from ${res.n} noisy answers.` }));
      if (m.outside) {
        area.append(el('p', { class: 'hint', text: 'The unbiased estimate can fall outside the range of possible answers when few people answer: the noise is larger than the signal.' }));
      }
    } else if (res.categorical || res.shares) {
      area.append(el('p', { class: 'hint', text: `Each option’s estimated share (unbiased, as on the projector), from ${res.n} randomized answers:` }));
      let below = false;
      for (const c of (res.categorical || res.shares)) {
        if (c.share === null || !c.shown || c.shown.share === null) continue;
        below = below || c.share < 0;
        area.append(el('p', { text: `${c.label}: ${c.shown.share}${interval(c.shown)}` }));
      }
      if (below) {
        area.append(el('p', { class: 'hint', text: 'An unbiased estimate can fall below 0% for a rare option when few people answer: the randomization’s noise is larger than the signal.' }));
      }
    }
  }

  // -- the randomizer's animation, on a stage under the question ---------------------------
  function animate(scheme, draw) {
    const stage = el('div', { class: 'stage', 'aria-hidden': 'true' });
    area.append(stage);
    return animateBinary(scheme, stage, draw);
  }

  flow = createFlow({
    api, pending, show, lock, animate, sid,
    say: (text) => { status.textContent = text; },
    warn: (text) => { alertBox.textContent = text || ''; },
    wait: (ms) => new Promise((done) => setTimeout(done, ms)),
    go: (url) => location.assign(url),
    now: () => performance.now(),
  });
  // The countdown's clock: four ticks a second keep the shown second within a quarter of
  // a second; at zero the screen changes (flow.tick redraws it).
  setInterval(() => { flow.tick(); drawTimer(); }, 250);
  $('join-form').addEventListener('submit', (event) => {
    event.preventDefault();
    flow.join($('code').value);
  });
  flow.start(location.pathname, new URLSearchParams(location.search));
})();
