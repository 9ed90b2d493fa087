// Projection mode's keyboard, "?" overlay, blank screen and countdown (ui/dashboard/pacing.py
// mounts it as an st.components.v2 component; it runs in the dashboard's own page and asks
// nothing of any other host). A key becomes a command sent to Python as a trigger value;
// Python decides what the command does for the question as it stands (pacing.next_step)
// and runs the same callback as the button. Blanking and the overlay stay in the page.
//
// At the desk the same component listens for F5 alone, which enters projection mode (as it
// starts a slideshow). A presentation clicker's start/stop button sends F5 then Esc: in
// projection mode F5 keeps it (no reload) and an Esc within `pair_ms` of an F5 is ignored.
//
// The pure parts (countdownText, pacingCommand, typingIn, clickerPair) are tested under node
// (tests/js/pacing.test.js); the whole in Chromium (tests/test_e2e_pacing.py).

// A countdown's time left: minutes and seconds, rounded up (the last second reads 0:01,
// never 0:00 while voting is still open). The phone's rule (phone/assets/flow.js).
function countdownText(ms) {
  const secs = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(secs / 60)}:${String(secs % 60).padStart(2, '0')}`;
}

// The command a key asks for, or null. A presentation clicker sends PageDown/PageUp (or the
// arrow keys) and "b" or "." for a blank screen. Keys held with Ctrl, Alt or Meta belong to
// the browser.
function pacingCommand(event) {
  if (!event || event.ctrlKey || event.metaKey || event.altKey) return null;
  switch (event.key) {
    case 'PageDown': case 'ArrowRight': return 'forward';
    case 'PageUp': case 'ArrowLeft': return 'back';
    case 'o': case 'O': return 'voting';
    case 'r': case 'R': return 'reveal';
    case 'n': case 'N': return 'next';
    case 'b': case 'B': case '.': return 'blank';
    case '?': return 'help';
    case 'Escape': return 'leave';
    case 'F5': return 'present';
    default: return null;
  }
}

// True when an Esc at `now` belongs to the F5 a clicker's start/stop button sent with it at
// `presentAt` (both in ms): projection mode stays.
function clickerPair(now, presentAt, pairMs) {
  return now - presentAt >= 0 && now - presentAt < pairMs;
}

const PACING_TEXT_INPUTS = new Set(['', 'text', 'search', 'email', 'number', 'password', 'tel',
  'url', 'date', 'datetime-local', 'month', 'time', 'week']);
const PACING_TEXT_ROLES = new Set(['textbox', 'searchbox', 'combobox', 'listbox', 'slider',
  'spinbutton', 'option', 'menu', 'menuitem']);

// True when keys typed at `el` belong to it: a text field, a text area, a select, anything
// editable, or a control that reads arrow keys (a slider, a list). A checkbox or a button
// with the focus (after a mouse click, say) does not stop the clicker.
function typingIn(el) {
  for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
    const tag = (node.tagName || '').toUpperCase();
    if (node.isContentEditable) return true;
    if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
    if (tag === 'INPUT') {
      const type = String(node.type || node.getAttribute && node.getAttribute('type') || '').toLowerCase();
      if (PACING_TEXT_INPUTS.has(type)) return true;
    }
    const role = node.getAttribute ? node.getAttribute('role') : null;
    if (role && PACING_TEXT_ROLES.has(role)) return true;
    if (node.getAttribute && node.getAttribute('contenteditable') === 'true') return true;
  }
  return false;
}

const PACING_CSS = `
.ldp-pacing-clock { position: fixed; top: .55rem; right: 1.5rem; z-index: 999990;
  font: 800 clamp(2.2rem, 3.6vw, 3.8rem)/1 ui-monospace, SFMono-Regular, Menlo, Consolas,
  monospace; font-variant-numeric: tabular-nums; color: #ffffff; background: #000000;
  padding: .12em .35em; border-radius: .18em; letter-spacing: .02em; }
.ldp-pacing-clock.ldp-urgent { background: #b91c1c; }
.ldp-pacing-clock[hidden] { display: none; }
body.ldp-pacing-timed .ldp-question { padding-right: clamp(9rem, 13vw, 14rem); }
.ldp-pacing-help { position: fixed; inset: 0; z-index: 999995; display: flex;
  align-items: center; justify-content: center; background: rgba(0, 0, 0, .55); }
.ldp-pacing-help[hidden], .ldp-pacing-blank[hidden] { display: none; }
.ldp-pacing-help section { background: #ffffff; color: #000000; border-radius: .6rem;
  padding: 1.4rem 2rem 1.2rem; max-width: min(56rem, 92vw); max-height: 92vh; overflow: auto;
  box-shadow: 0 .5rem 2rem rgba(0, 0, 0, .4);
  font: 400 clamp(1.05rem, 1.6vw, 1.5rem)/1.35 system-ui, sans-serif; }
.ldp-pacing-help h2 { font: 800 clamp(1.4rem, 2.2vw, 2rem)/1.2 system-ui, sans-serif;
  margin: 0 0 .8rem; color: #000000; }
.ldp-pacing-help table { border-collapse: collapse; }
.ldp-pacing-help th { text-align: left; white-space: nowrap; padding: .25rem 1.4rem .25rem 0;
  vertical-align: top; }
.ldp-pacing-help td { padding: .25rem 0; }
.ldp-pacing-help kbd { font: 700 .9em ui-monospace, SFMono-Regular, Menlo, Consolas,
  monospace; border: 1px solid #6b7280; border-bottom-width: 3px; border-radius: .3rem;
  padding: 0 .35em; background: #f3f4f6; color: #000000; }
.ldp-pacing-help p { margin: .9rem 0 0; color: #374151; font-size: .85em; }
.ldp-pacing-blank { position: fixed; inset: 0; z-index: 999999; background: #000000;
  cursor: none; }
.ldp-pacing-blank p { position: absolute; bottom: .8rem; right: 1.2rem; margin: 0;
  font: 400 .85rem/1.2 system-ui, sans-serif; color: #6b7280; }
`;

function pacingKeyCells(keys) {
  return keys.split(', ').map((k) => `<kbd>${k}</kbd>`).join(' or ');
}

function createPacing(doc) {
  const win = doc.defaultView;
  const p = {
    blank: false, help: false, seq: 0, send: null, attached: false, nodes: null,
    deadline: null, expiredSent: true, timer: null, keys: [], mode: 'projector',
    presentAt: -Infinity, pairMs: 2000,
  };

  function build() {
    const style = doc.createElement('style');
    style.textContent = PACING_CSS;
    const clock = doc.createElement('div');
    clock.className = 'ldp-pacing-clock';
    clock.setAttribute('role', 'timer');
    clock.setAttribute('aria-label', 'Time left to vote');
    clock.title = 'Time left to vote';
    clock.hidden = true;
    const help = doc.createElement('div');
    help.className = 'ldp-pacing-help';
    help.setAttribute('role', 'dialog');
    help.setAttribute('aria-label', 'Keyboard shortcuts');
    help.hidden = true;
    const rows = p.keys.map(([keys, what]) =>
      `<tr><th>${pacingKeyCells(keys)}</th><td>${what}</td></tr>`).join('');
    help.innerHTML = `<section><h2>Keyboard shortcuts</h2><table>${rows}</table>`
      + '<p>A presentation clicker sends PageDown and PageUp. Keys do nothing while you type '
      + 'in a field. Esc or ? closes this list.</p></section>';
    help.addEventListener('click', (e) => { if (e.target === help) { p.help = false; draw(); } });
    const blank = doc.createElement('div');
    blank.className = 'ldp-pacing-blank';
    blank.hidden = true;
    blank.innerHTML = '<p>Screen blanked: press any key</p>';
    blank.addEventListener('click', () => { p.blank = false; draw(); });
    for (const node of [style, clock, help, blank]) doc.body.appendChild(node);
    p.nodes = { style, clock, help, blank };
  }

  function draw() {
    if (!p.nodes) return;
    p.nodes.help.hidden = !p.help;
    p.nodes.blank.hidden = !p.blank;
    const clock = p.nodes.clock;
    const ms = p.deadline === null ? null : p.deadline - win.performance.now();
    if (ms === null) {
      clock.hidden = true;
      doc.body.classList.remove('ldp-pacing-timed');
    } else {
      const text = countdownText(ms);
      if (clock.textContent !== text) clock.textContent = text;
      clock.classList.toggle('ldp-urgent', ms <= 10000);
      clock.hidden = false;
      doc.body.classList.add('ldp-pacing-timed');
      if (ms <= 0 && !p.expiredSent) {  // zero here: ask for a rerun, which shows the close
        p.expiredSent = true;
        send('expired');
      }
    }
  }

  function send(command) {
    if (p.send) p.send('command', { command, seq: ++p.seq });
  }

  function onDeskKey(e) {  // the desk: F5 enters projection mode, every other key is the page's
    if (e.isComposing || typingIn(e.target) || typingIn(doc.activeElement)) return;
    if (pacingCommand(e) !== 'present') return;
    e.preventDefault();
    e.stopPropagation();
    if (!e.repeat) {
      p.presentAt = win.performance.now();
      send('present');
    }
  }

  function onKey(e) {
    if (p.mode === 'desk') { onDeskKey(e); return; }
    if (p.blank) {  // any key brings the screen back, and does nothing else
      e.preventDefault();
      e.stopPropagation();
      p.blank = false;
      draw();
      return;
    }
    if (e.isComposing || typingIn(e.target) || typingIn(doc.activeElement)) return;
    const command = pacingCommand(e);
    if (command === null) return;
    e.preventDefault();
    e.stopPropagation();
    if (command === 'blank') {
      p.blank = true;
      p.help = false;
    } else if (command === 'help') {
      p.help = !p.help;
    } else if (command === 'present') {  // already projecting: stay (and no reload)
      p.presentAt = win.performance.now();
    } else if (p.help && command === 'leave') {
      p.help = false;
    } else if (command === 'leave' && clickerPair(win.performance.now(), p.presentAt, p.pairMs)) {
      // the Esc of a clicker's start/stop pair: projection mode stays
    } else if (!e.repeat) {
      p.help = false;
      send(command);
    }
    draw();
  }

  p.attach = (component) => {
    const data = component.data || {};
    const keys = Array.isArray(data.keys) ? data.keys : [];
    const mode = data.mode === 'desk' ? 'desk' : 'projector';
    if ((JSON.stringify(keys) !== JSON.stringify(p.keys) || mode !== p.mode) && p.nodes) {
      p.detach(true);
    }
    p.send = component.setTriggerValue;
    p.keys = keys;
    p.mode = mode;
    if (typeof data.pair_ms === 'number') p.pairMs = data.pair_ms;
    if (mode === 'desk') {
      p.blank = false;
      p.help = false;
    } else if (!p.nodes) {
      build();
    }
    if (!p.attached) {
      win.addEventListener('keydown', onKey, true);
      p.attached = true;
    }
    p.deadline = typeof data.left_ms === 'number' ? win.performance.now() + data.left_ms : null;
    p.expiredSent = !(typeof data.left_ms === 'number' && data.left_ms > 0);
    if (p.timer === null) p.timer = win.setInterval(draw, 200);
    draw();
  };

  p.detach = (keepFlags) => {
    if (p.attached) win.removeEventListener('keydown', onKey, true);
    p.attached = false;
    if (p.timer !== null) win.clearInterval(p.timer);
    p.timer = null;
    if (p.nodes) for (const node of Object.values(p.nodes)) node.remove();
    p.nodes = null;
    doc.body.classList.remove('ldp-pacing-timed');
    p.send = null;
    if (!keepFlags) p.help = false;
  };
  return p;
}

// The component's entry (pacing.py adds `export default`): one pacing object per page,
// kept across reruns so a blank screen stays blank; the cleanup takes everything away.
// A mount's cleanup undoes only its own attach: when the page moves between the desk and
// projection mode the new mount may attach before the old one's cleanup runs.
function mountPacing(component) {
  const el = component.parentElement;
  const doc = (el && el.ownerDocument) || document;
  const win = doc.defaultView;
  if (!win.__ldpPacing) win.__ldpPacing = createPacing(doc);
  const p = win.__ldpPacing;
  const mount = {};
  p.mount = mount;
  p.attach(component);
  return () => { if (p.mount === mount) p.detach(true); };
}
