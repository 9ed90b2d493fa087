// The phone's samplers (phone/assets/randomizer.js) against their exact distributions.
//
// One table row per design and true answer (tests/support/js_cases.py, from ldp_core and
// the device scheme the server hands the phone). Each row draws DRAWS reports with the
// page's own code and counts them per outcome (per bin of the report, for a continuous
// one). Every count must lie within Z standard errors of DRAWS × its exact probability,
// sqrt(DRAWS p (1 - p)), and so must the mean and variance of a continuous report. The
// power check: the same test on a deliberately wrong scheme (ε 30% off, or a neighbouring
// design) must fail. Fixed seeds: the same draws on every run.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { load, samplerRows, seededCrypto } = require('./support.js');

const DRAWS = 200000;
// Five standard errors: one honest row fails with probability below 1e-5 over its dozen
// counts, and a wrong sampler of these rows lies tens of standard errors away.
const Z = 5;

// One report, drawn as the page draws it: randomize(), the table of samplers by scheme type.
function draw(sandbox, row, scheme) {
  const { report } = sandbox.randomize(scheme, row.truth);
  return row.sampler === 'numeric' ? report : String(report);
}

// Which of the row's outcomes a report is: a named outcome; or an atom (a value sent as
// is), else the bin of the continuous part it falls in.
function classifier(row) {
  if (row.outcomes) {
    const index = new Map(row.outcomes.map((o, i) => [o, i]));
    return (out) => index.get(out);
  }
  const atoms = row.atoms, edges = row.edges || [];
  return (out) => {
    const a = atoms.indexOf(out);
    if (a >= 0) return a;
    if (!row.edges) return undefined;
    let k = 0;
    while (k < edges.length && out >= edges[k]) k++;
    return atoms.length + k;
  };
}

// The largest deviation of the row's statistics, in standard errors, for DRAWS reports
// sampled from `scheme`, and what each statistic measured.
function deviation(row, scheme, seed) {
  const sandbox = load(['randomizer.js'], { crypto: seededCrypto(seed) });
  const counts = new Array(row.probs.length).fill(0);
  const which = classifier(row);
  const moments = row.mean !== undefined;
  const reports = moments ? new Float64Array(DRAWS) : null;
  let sum = 0, sum2 = 0;
  for (let i = 0; i < DRAWS; i++) {
    const out = draw(sandbox, row, scheme);
    const k = which(out);
    assert.notEqual(k, undefined, `${row.label}: a report outside the design, ${out}`);
    counts[k]++;
    if (moments) { reports[i] = out; sum += out; sum2 += out * out; }
  }
  const z = row.probs.map((p, k) => (counts[k] - DRAWS * p) / Math.sqrt(DRAWS * p * (1 - p)));
  const stats = { counts: counts.join(' '), worst: Math.max(...z.map(Math.abs)) };
  if (moments) {
    const mean = sum / DRAWS, variance = (sum2 - DRAWS * mean * mean) / (DRAWS - 1);
    let m4 = 0;
    for (const y of reports) m4 += (y - mean) ** 4;
    m4 /= DRAWS;
    const zMean = (mean - row.mean) / Math.sqrt(row.variance / DRAWS);
    const zVar = (variance - row.variance) / Math.sqrt(Math.max(m4 - variance ** 2, 1e-300) / DRAWS);
    stats.worst = Math.max(stats.worst, Math.abs(zMean), Math.abs(zVar));
  }
  return stats;
}

const rows = samplerRows();

test('the table covers every kind of sampler', () => {
  const kinds = new Set(rows.map((r) => r.sampler));
  // tests/test_phone_js.py checks the table has rows for every registered kind
  assert.ok(kinds.size >= 3 && [...kinds].every((k) => typeof k === 'string'), [...kinds].join());
  for (const row of rows) {
    const total = row.probs.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(total - 1) < 1e-9, `${row.label}: probabilities sum to ${total}`);
  }
});

rows.forEach((row, i) => {
  test(`${row.label}: the draws follow the exact distribution`, () => {
    const got = deviation(row, row.scheme, 1000 + i);
    assert.ok(got.worst <= Z, `${row.label}: ${got.worst.toFixed(2)} standard errors off (${got.counts})`);
  });
  test(`${row.label}: a wrong sampler fails the same test`, () => {
    const got = deviation(row, row.wrong, 5000 + i);
    assert.ok(got.worst > Z, `${row.label}: a wrong scheme passed, ${got.worst.toFixed(2)} SE (${got.counts})`);
  });
});

test('randomize() has a sampler for every scheme in the table, and refuses an unknown one', () => {
  const sandbox = load(['randomizer.js'], { crypto: seededCrypto(11) });
  for (const row of rows) {
    for (const scheme of [row.scheme, row.wrong]) {
      const out = sandbox.randomize(scheme, row.truth);
      assert.notEqual(out.report, undefined, `${row.label}: no report for a ${scheme.type} scheme`);
      // Only the schemes the page animates give the animation its draw.
      assert.equal(out.draw !== undefined, scheme.type === 'binary', `${row.label}: draw`);
    }
  }
  assert.throws(() => sandbox.randomize({ type: 'no-such-scheme' }, 0), /no randomizer for a scheme of type no-such-scheme/);
  assert.throws(() => sandbox.randomize({ type: 'toString' }, 0), /no randomizer/);
});

test('randomize() draws exactly what the scheme\'s own sampler draws', () => {
  const named = { binary: (s) => s.randomizeBinary, grr: (s) => s.randomizeCategorical,
    ue: (s) => s.randomizeCategorical, numeric: (s) => s.randomizeNumeric,
    set: (s) => s.randomizeSet };
  rows.forEach((row, i) => {
    const viaTable = load(['randomizer.js'], { crypto: seededCrypto(300 + i) });
    const direct = load(['randomizer.js'], { crypto: seededCrypto(300 + i) });
    for (let k = 0; k < 50; k++) {
      const got = viaTable.randomize(row.scheme, row.truth);
      const want = named[row.scheme.type](direct)(row.scheme, row.truth);
      assert.deepEqual(got.report, row.scheme.type === 'binary' ? want.report : want, row.label);
    }
  });
});

test('the samplers draw from crypto.getRandomValues, never Math.random', () => {
  const crypto = seededCrypto(7);
  const math = Object.create(Math);
  math.random = () => { throw new Error('Math.random is not a CSPRNG'); };
  const sandbox = load(['randomizer.js'], { crypto, Math: math });
  for (const row of rows) draw(sandbox, row, row.scheme);
  assert.ok(crypto.calls >= rows.length);
});

test('a uniform integer below n is exact: rejection sampling, no modulo bias', () => {
  // 3 does not divide 2^32: taking x % 3 of every word would favour 0. A generator that
  // returns the top word 0xffffffff first must see it rejected.
  const words = [0xffffffff, 5];
  const sandbox = load(['randomizer.js'], {
    crypto: { getRandomValues(a) { a[0] = words.shift(); return a; } } });
  assert.equal(sandbox.below(3), 2);  // 0xffffffff was rejected; 5 % 3 = 2
  assert.equal(words.length, 0);
});
