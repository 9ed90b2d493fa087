// Projection mode's keys (ui/dashboard/pacing.js): the key map a presentation clicker
// meets, the rule that keys typed in a field are the field's, and the countdown's text,
// which must read exactly as the phone's (phone/assets/flow.js). tests/test_e2e_pacing.py
// runs the whole script in Chromium.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { load } = require('./support.js');

const ROOT = path.resolve(__dirname, '..', '..');

function loadPacing() {
  const source = fs.readFileSync(path.join(ROOT, 'ui', 'dashboard', 'pacing.js'), 'utf8');
  const defined = [...source.matchAll(/^function (\w+)/gm)].map((m) => m[1]);
  return new Function(`'use strict';\n${source}\nreturn { ${defined.join(', ')} };`)();
}

const pacing = loadPacing();
const phone = load(['flow.js']);

const key = (k, extra) => Object.assign({ key: k, ctrlKey: false, metaKey: false, altKey: false,
  shiftKey: false }, extra || {});

// A minimal element: a tag, attributes, a parent.
function el(tag, attrs, parent) {
  const a = Object.assign({}, attrs || {});
  return { nodeType: 1, tagName: tag, type: a.type, isContentEditable: a.contenteditable === 'true',
    parentElement: parent || null, getAttribute: (name) => (name in a ? a[name] : null) };
}

test('the countdown reads as on the phone, to the millisecond', () => {
  const cases = [];
  for (let ms = -2000; ms <= 125000; ms += 37) cases.push(ms);
  cases.push(0, 1, 999, 1000, 1001, 59999, 60000, 60001, 3600000);
  for (const ms of cases) assert.equal(pacing.countdownText(ms), phone.countdownText(ms), `ms=${ms}`);
  assert.equal(pacing.countdownText(1), '0:01');
  assert.equal(pacing.countdownText(0), '0:00');
  assert.equal(pacing.countdownText(61000), '1:01');
});

test('a clicker drives the lecture: PageDown/Right forward, PageUp/Left back', () => {
  assert.equal(pacing.pacingCommand(key('PageDown')), 'forward');
  assert.equal(pacing.pacingCommand(key('ArrowRight')), 'forward');
  assert.equal(pacing.pacingCommand(key('PageUp')), 'back');
  assert.equal(pacing.pacingCommand(key('ArrowLeft')), 'back');
  assert.equal(pacing.pacingCommand(key('b')), 'blank');
  assert.equal(pacing.pacingCommand(key('.')), 'blank');
  assert.equal(pacing.pacingCommand(key('B', { shiftKey: true })), 'blank');
});

test('single keys', () => {
  const want = { o: 'voting', O: 'voting', r: 'reveal', R: 'reveal', n: 'next', N: 'next',
    '?': 'help', Escape: 'leave', F5: 'present' };
  for (const [k, command] of Object.entries(want)) assert.equal(pacing.pacingCommand(key(k)), command, k);
  assert.equal(pacing.pacingCommand(key('?', { shiftKey: true })), 'help');
});

test('other keys and browser shortcuts do nothing', () => {
  for (const k of ['a', 'x', 'Enter', ' ', 'Tab', 'ArrowUp', 'ArrowDown', 'F6', 'Shift', 'Home']) {
    assert.equal(pacing.pacingCommand(key(k)), null, k);
  }
  assert.equal(pacing.pacingCommand(key('r', { ctrlKey: true })), null);  // reload
  assert.equal(pacing.pacingCommand(key('F5', { ctrlKey: true })), null);  // reload, no cache
  assert.equal(pacing.pacingCommand(key('n', { metaKey: true })), null);  // new window
  assert.equal(pacing.pacingCommand(key('ArrowLeft', { altKey: true })), null);  // back
  assert.equal(pacing.pacingCommand(null), null);
});

test('keys typed in a field belong to the field', () => {
  for (const type of [undefined, 'text', 'number', 'search', 'password', 'email']) {
    assert.equal(pacing.typingIn(el('INPUT', { type })), true, String(type));
  }
  assert.equal(pacing.typingIn(el('TEXTAREA')), true);
  assert.equal(pacing.typingIn(el('SELECT')), true);
  assert.equal(pacing.typingIn(el('DIV', { contenteditable: 'true' })), true);
  const editor = el('DIV', { contenteditable: 'true' });
  assert.equal(pacing.typingIn(el('SPAN', {}, el('P', {}, editor))), true, 'inside an editor');
  assert.equal(pacing.typingIn(el('DIV', { role: 'slider' })), true);
  assert.equal(pacing.typingIn(el('INPUT', { role: 'combobox', type: 'text' })), true);
});

test('a focused checkbox or button does not stop the clicker', () => {
  assert.equal(pacing.typingIn(el('INPUT', { type: 'checkbox' })), false);
  assert.equal(pacing.typingIn(el('BUTTON')), false);
  assert.equal(pacing.typingIn(el('BODY')), false);
  assert.equal(pacing.typingIn(null), false);
});

test("a clicker's start/stop pair: an Esc within the pair's time of an F5 is the clicker's", () => {
  const pairMs = 2000;
  assert.equal(pacing.clickerPair(10000, 9000, pairMs), true);
  assert.equal(pacing.clickerPair(10000, 10000, pairMs), true);
  assert.equal(pacing.clickerPair(10999, 9000, pairMs), true);
  assert.equal(pacing.clickerPair(11000, 9000, pairMs), false, 'two seconds later: a real Esc');
  assert.equal(pacing.clickerPair(10000, -Infinity, pairMs), false, 'no F5 yet');
  assert.equal(pacing.clickerPair(10000, 12000, pairMs), false, 'an F5 after the Esc');
});
