// The on-device randomizer: the operating system's CSPRNG (crypto.getRandomValues), exact
// integer rejection sampling from the design's sampling weights, the die, coins or spinner
// animation, and generalized randomized response / unary encoding for categorical questions.
// Only the randomized report leaves the page: never the true answer, never the draw.
// The page randomizes through randomize(scheme, value), which looks the scheme's type up in
// RANDOMIZERS at the end of this file: a new scheme is its sampler and one entry there.
function u32() { const a = new Uint32Array(1); crypto.getRandomValues(a); return a[0]; }
// Uniform integer in 0..n-1 by rejection sampling (exact for n <= 2^32).
function below(n) {
  if (n <= 1) return 0;
  const limit = Math.floor(4294967296 / n) * n;
  for (;;) { const x = u32(); if (x < limit) return x % n; }
}
// Uniform double in [0, 1) with 53 random bits.
function unit() { return (u32() * 2097152 + (u32() >>> 11)) / 9007199254740992; }
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const reduced = () => window.matchMedia && window.matchMedia('(prefers-reduced-motion: reduce)').matches;

async function animateBinary(scheme, stage, draw) {
  const [t, l, y] = scheme.weights;
  const steps = reduced() ? 1 : 8;
  if (scheme.animation === 'die') {
    const die = document.createElement('div'); die.className = 'die rolling'; stage.appendChild(die);
    for (let i = 0; i < steps; i++) { die.textContent = String(1 + below(scheme.faces)); await sleep(90); }
    die.classList.remove('rolling'); die.textContent = String(draw + 1);
    return draw < t ? `You rolled ${draw + 1}: report the truth.` : `You rolled ${draw + 1}: report the opposite.`;
  }
  if (scheme.animation === 'coins') {
    const c1 = document.createElement('div'); c1.className = 'coin rolling'; stage.appendChild(c1);
    for (let i = 0; i < steps; i++) { c1.textContent = below(2) ? 'H' : 'T'; await sleep(90); }
    c1.classList.remove('rolling');
    if (draw < t) { c1.textContent = 'H'; return 'First coin: heads, so report the truth.'; }
    c1.textContent = 'T';
    const c2 = document.createElement('div'); c2.className = 'coin rolling'; stage.appendChild(c2);
    for (let i = 0; i < steps; i++) { c2.textContent = below(2) ? 'H' : 'T'; await sleep(90); }
    c2.classList.remove('rolling');
    const yes = draw < t + l + y;
    c2.textContent = yes ? 'H' : 'T';
    return `First coin: tails. Second coin: ${yes ? 'heads, so report "yes"' : 'tails, so report "no"'}.`;
  }
  // spinner: the truthful share of the dial, then the rest
  const total = scheme.weights.reduce((s, w) => s + w, 0);
  const sp = document.createElement('div'); sp.className = 'spin';
  sp.style.setProperty('--a', `${(360 * t) / total}deg`);
  const arrow = document.createElement('div'); arrow.className = 'arrow'; sp.appendChild(arrow);
  stage.appendChild(sp);
  const target = 360 * ((draw + unit()) / total);
  const turns = reduced() ? 0 : 720;
  arrow.style.transition = reduced() ? 'none' : 'transform 1.1s cubic-bezier(.2,.7,.2,1)';
  await sleep(30); arrow.style.transform = `rotate(${turns + target}deg)`; await sleep(reduced() ? 50 : 1150);
  if (draw < t) return 'The spinner landed in the "answer truthfully" part.';
  if (draw < t + l) return 'The spinner landed in the "answer the opposite" part.';
  return draw < t + l + y ? 'The spinner says: report "yes".' : 'The spinner says: report "no".';
}

function randomizeBinary(scheme, truth) {
  const [t, l, y, n] = scheme.weights;
  const draw = below(t + l + y + n);
  let report;
  if (draw < t) report = truth;
  else if (draw < t + l) report = 1 - truth;
  else if (draw < t + l + y) report = 1;
  else report = 0;
  return { draw, report };
}

function randomizeCategorical(scheme, truth) {
  if (scheme.type === 'grr') {
    if (unit() < scheme.p) return truth;
    const other = below(scheme.d - 1);
    return other >= truth ? other + 1 : other;
  }
  // unary encoding: each bit independently, p for the true bit, q for the others
  let bits = '';
  for (let j = 0; j < scheme.d; j++) bits += (unit() < (j === truth ? scheme.p : scheme.q)) ? '1' : '0';
  return bits;
}

// Numeric questions: the value in [lo, hi] is mapped to x in [-1, 1], then randomized.
// Duchi et al.: round x to a random bit (P(1) = (1 + x) / 2), then randomized response on
// the bit with the exact integer weights; the bit is sent. Piecewise Mechanism (Wang et
// al.) and the local Laplace mechanism: a continuous report, snapped to the midpoint of
// one of `cells` equal cells of [low, high], the same grid for every true value. Hybrid
// Mechanism (Wang et al.): a coin, whatever the value, picks the Piecewise Mechanism with
// probability p_piecewise, else Duchi et al.'s, whose bit is sent as its value ±c_duchi.
function snapToCell(s, y) {
  const width = (s.high - s.low) / s.cells;
  const k = Math.min(s.cells - 1, Math.max(0, Math.floor((y - s.low) / width)));
  return s.low + (k + 0.5) * width;
}
// An exponential draw, Exp(1), with its tail as precise as its head: by memorylessness,
// a draw below 2^-8 adds 8 ln 2 and starts again (never log(0)).
function exponential() {
  let acc = 0;
  for (;;) {
    const u = unit();
    if (u >= 1 / 256) return acc - Math.log(u);
    acc += 8 * Math.LN2;
  }
}
function randomizeNumeric(s, value) {
  const x = Math.min(1, Math.max(-1, (2 * value - s.lo - s.hi) / (s.hi - s.lo)));
  const duchiBit = () => randomizeBinary(s, unit() < (1 + x) / 2 ? 1 : 0).report;
  if (s.mechanism === 'duchi') return duchiBit();
  const piecewise = s.mechanism === 'piecewise' || (s.mechanism === 'hybrid' && unit() < s.p_piecewise);
  if (s.mechanism === 'hybrid' && !piecewise) return duchiBit() ? s.c_duchi : -s.c_duchi;
  let y;
  if (piecewise) {
    const c = s.c, left = ((c + 1) / 2) * x - (c - 1) / 2, right = left + c - 1;
    if (unit() < s.p_window) {
      y = left + (c - 1) * unit();
    } else {  // the rest of [-C, C], length C + 1, laid end to end
      const t = (c + 1) * unit();
      y = t < left + c ? -c + t : right + (t - (left + c));
    }
  } else {
    y = x + (below(2) ? 1 : -1) * s.scale * exponential();
  }
  return snapToCell(s, y);
}

// Check all that apply: the set is one 0/1 per option, each option a yes/no question with
// the same randomized response (its exact integer weights). "split": every option's bit is
// randomized and sent; "sample": one option drawn uniformly is randomized and sent, '-' for
// the others; "fake": as "sample", and a fair coin for each other option.
function randomizeSet(s, chosen) {
  const bit = (truth) => String(randomizeBinary(s, truth ? 1 : 0).report);
  if (s.mode === 'split') return chosen.map(bit).join('');
  const asked = below(s.d);
  return chosen.map((truth, j) => {
    if (j === asked) return bit(truth);
    return s.mode === 'sample' ? '-' : String(below(2));
  }).join('');
}

// A question of a series, memoized (RAPPOR, Erlingsson, Pihur & Korolova 2014): the phone
// makes one permanent randomized answer per (series, f, true answer) the first time, the
// true answer w.p. 1 - f, else a fair coin, and keeps it in its own localStorage (in
// memory where storage is refused). Every report is a fresh randomization of that memo:
// 1 w.p. q from a kept 1, w.p. p from a kept 0. Only the report is sent; the memo never
// leaves the phone, and a cleared browser or a new phone starts a new one.
const MEMO_PREFIX = 'ldp-memo:';
const memoInMemory = new Map();
function memoStorage() {
  try {
    if (typeof localStorage !== 'undefined' && localStorage) return localStorage;
  } catch (e) { /* storage refused (some private modes): memory only */ }
  return null;
}
function memoKey(s, truth) { return `${MEMO_PREFIX}${s.series}:${s.f}:${truth}`; }
function keptMemo(s, truth) {
  const key = memoKey(s, truth), store = memoStorage();
  let kept = null;
  try { kept = store ? store.getItem(key) : null; } catch (e) { kept = null; }
  if (kept === null && memoInMemory.has(key)) kept = memoInMemory.get(key);
  if (kept === '0' || kept === '1') return Number(kept);
  const memo = unit() < s.f ? below(2) : (truth ? 1 : 0);
  memoInMemory.set(key, String(memo));
  try { if (store) store.setItem(key, String(memo)); } catch (e) { /* memory only */ }
  return memo;
}
function randomizeMemo(s, truth) {
  const memo = keptMemo(s, truth);
  return unit() < (memo ? s.q : s.p) ? 1 : 0;
}

// Every scheme the server hands the phone (each question kind's phone_scheme in
// classroom/kinds/), by its type: the true answer (an option's index, or a number in the
// question's range) to { report, draw }. The report is what is sent; draw, for a scheme the
// page animates (binary: the die, coins or spinner), is what the animation shows, and is
// never sent. tests/test_phone_js.py checks every kind's schemes have their entry here.
const RANDOMIZERS = {
  binary: (s, truth) => randomizeBinary(s, truth),
  memo: (s, truth) => ({ report: randomizeMemo(s, truth) }),
  grr: (s, truth) => ({ report: randomizeCategorical(s, truth) }),
  ue: (s, truth) => ({ report: randomizeCategorical(s, truth) }),
  numeric: (s, value) => ({ report: randomizeNumeric(s, value) }),
  set: (s, chosen) => ({ report: randomizeSet(s, chosen) }),
};

// The randomized report of `value` under `scheme`, by the scheme's sampler.
function randomize(scheme, value) {
  const sampler = Object.prototype.hasOwnProperty.call(RANDOMIZERS, scheme.type) ? RANDOMIZERS[scheme.type] : null;
  if (!sampler) throw new Error(`no randomizer for a scheme of type ${scheme.type}`);
  return sampler(scheme, value);
}
