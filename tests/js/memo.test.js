// The memo of a series question (phone/assets/randomizer.js, RAPPOR's two steps): kept
// in the phone's own storage across reloads, per (series, f, true answer); every report
// a fresh randomization of it, never the memo as is; and over fresh phones, one report's
// channel is ldp_core's MemoRR channel (q* = p + (q - p)(1 - f/2), p* = p + (q - p) f/2).
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { load, seededCrypto } = require('./support.js');

const SCHEME = { type: 'memo', series: 'weekly-sleep', f: 0.5, p: 0.25, q: 0.75 };

// A localStorage that outlives the page (one per phone), as the browser's does.
function fakeStorage() {
  const data = new Map();
  return {
    data,
    getItem: (k) => (data.has(k) ? data.get(k) : null),
    setItem: (k, v) => { data.set(k, String(v)); },
    removeItem: (k) => { data.delete(k); },
  };
}

// A page load: the scripts run afresh, with this phone's storage.
function page(storage, seed) {
  return load(['randomizer.js'], { crypto: seededCrypto(seed), localStorage: storage });
}

test('the memo survives reloads and is kept per series, f and true answer', () => {
  const storage = fakeStorage();
  page(storage, 1).randomize(SCHEME, 1);
  const keys = [...storage.data.keys()];
  assert.deepEqual(keys, ['ldp-memo:weekly-sleep:0.5:1']);
  const memo = storage.data.get(keys[0]);
  assert.ok(memo === '0' || memo === '1');
  for (let seed = 2; seed < 40; seed++) {  // 38 reloads, each with fresh random draws
    page(storage, seed).randomize(SCHEME, 1);
    assert.equal(storage.data.get(keys[0]), memo, 'a reload kept the same memo');
  }
  assert.equal(storage.data.size, 1, 'the same answer in the same series uses one memo');
  page(storage, 41).randomize(SCHEME, 0);
  page(storage, 42).randomize({ ...SCHEME, series: 'weekly-coffee' }, 1);
  assert.equal(storage.data.size, 3, 'a changed answer or another series gets its own memo');
});

test('each report is a fresh randomization of the memo, never the memo as is', () => {
  const N = 20000;
  for (const kept of ['0', '1']) {
    const storage = fakeStorage();
    storage.setItem('ldp-memo:weekly-sleep:0.5:1', kept);
    const phone = page(storage, 7 + Number(kept));
    let ones = 0;
    for (let i = 0; i < N; i++) {
      const r = phone.randomize(SCHEME, 1);
      assert.deepEqual(Object.keys(r), ['report'], 'only the report is handed to the sender');
      ones += r.report;
    }
    const want = kept === '1' ? SCHEME.q : SCHEME.p;
    const se = Math.sqrt(want * (1 - want) / N);
    assert.ok(Math.abs(ones / N - want) < 5 * se, `memo ${kept}: ${ones / N} vs ${want}`);
    assert.equal(storage.getItem('ldp-memo:weekly-sleep:0.5:1'), kept);
  }
});

test('over fresh phones, one report has the MemoRR channel', () => {
  const N = 40000;
  const { f, p, q } = SCHEME;
  const want = { 1: p + (q - p) * (1 - f / 2), 0: p + (q - p) * (f / 2) };  // q*, p*
  for (const truth of [0, 1]) {
    const phone = page(null, 100 + truth);  // no storage: in memory, one phone per series
    let ones = 0;
    for (let i = 0; i < N; i++) {
      ones += phone.randomize({ ...SCHEME, series: `s${i}` }, truth).report;
    }
    const se = Math.sqrt(want[truth] * (1 - want[truth]) / N);
    assert.ok(Math.abs(ones / N - want[truth]) < 5 * se, `truth ${truth}: ${ones / N}`);
    // the power check: a phone that skipped the memo (the truth straight through p, q)
    // would lie many standard errors away
    assert.ok(Math.abs(want[truth] - (truth ? q : p)) > 10 * se);
  }
});

test('where storage is refused, the memo is kept in memory for the page', () => {
  const refusing = {
    getItem() { throw new Error('SecurityError'); },
    setItem() { throw new Error('SecurityError'); },
  };
  const phone = page(refusing, 5);
  const first = new Set();
  for (let i = 0; i < 200; i++) first.add(phone.randomize(SCHEME, 1).report);
  assert.deepEqual([...first].sort(), [0, 1]);
});
