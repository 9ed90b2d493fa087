// Shared by the node tests of the phone's scripts: load them as the page does (plain
// scripts, one scope) with a crypto.getRandomValues that is a seeded generator, so every
// statistical test draws the same numbers on every run.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const ASSETS = path.join(ROOT, 'phone', 'assets');

// xoshiro128** (Blackman & Vigna), seeded through splitmix32: fast, and good enough that
// the 53-bit uniforms built from two of its words are uniform for these tests.
function seeded(seed) {
  let z = seed >>> 0;
  const split = () => {
    z = (z + 0x9e3779b9) >>> 0;
    let t = z;
    t = Math.imul(t ^ (t >>> 16), 0x85ebca6b);
    t = Math.imul(t ^ (t >>> 13), 0xc2b2ae35);
    return (t ^ (t >>> 16)) >>> 0;
  };
  const s = [split(), split(), split(), split()];
  const rotl = (x, k) => (x << k) | (x >>> (32 - k));
  return () => {
    const out = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t; s[3] = rotl(s[3], 11);
    return out;
  };
}

// A crypto object for the sandbox: getRandomValues from the seeded generator.
function seededCrypto(seed) {
  const next = seeded(seed);
  return {
    calls: 0,
    getRandomValues(array) {
      this.calls++;
      for (let i = 0; i < array.length; i++) array[i] = next();
      return array;
    },
    randomUUID() { return [next(), next(), next(), next()].map((x) => x.toString(16)).join('-'); },
  };
}

// The page's scripts (by default the randomizer and the state machine) as the page runs
// them: concatenated in one scope, here a function's, whose parameters stand in for the
// browser's globals (crypto, say). Returns their top-level functions by name. (A vm
// context would do too, but calls across its boundary make the samplers 5-10 times slower.)
function load(names, globals) {
  const source = (names || ['randomizer.js', 'flow.js'])
    .map((name) => fs.readFileSync(path.join(ASSETS, name), 'utf8')).join('\n');
  const defined = [...source.matchAll(/^(?:async )?function (\w+)/gm)].map((m) => m[1]);
  const given = Object.assign({}, globals || {});
  const body = `'use strict';\n${source}\nreturn { ${defined.join(', ')} };`;
  return new Function(...Object.keys(given), body)(...Object.values(given));
}

// The sampler table from ldp_core (tests/support/js_cases.py), through the Python that
// runs the test suite (PYTHON), or python3.
function samplerRows() {
  const python = process.env.PYTHON || 'python3';
  const out = execFileSync(python, ['-m', 'tests.support.js_cases'], { cwd: ROOT, encoding: 'utf8' });
  return JSON.parse(out);
}

module.exports = { load, samplerRows, seeded, seededCrypto };
