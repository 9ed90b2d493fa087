"""The on-device randomizer: a Streamlit v2 component with inline HTML, CSS and JS.

The student taps their true answer. The browser draws from the operating
system's CSPRNG (``crypto.getRandomValues``), animates the die, coins or
spinner, and sends back only

    ``{"answer": <randomized report>, "params": <design params, echoed>,
       "submission_id": <random id>}``.

The true answer and the draw itself (which would reveal whether the student
told the truth) never leave the page.

Exactness: binary designs are sampled from integer weights
``(truth, lie, yes, no)`` (``ldp_core.BinaryDesign.sampling_weights``) by
rejection sampling on 32-bit integers, so a die 1-4 is exactly uniform.
Categorical designs compare 53-bit uniforms with ``p`` and ``q``, and pick a
"different" category by rejection sampling on integers.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

import ldp_core

__all__ = ["device_scheme", "vote_component"]

_CSS = """
:host { display: block; }
.wrap { font-family: var(--st-font, "Source Sans", sans-serif); color: var(--st-text-color, #111); }
.q { font-size: 1.35rem; font-weight: 700; margin: 0 0 .75rem; line-height: 1.3; }
.opts { display: grid; gap: .75rem; }
button.opt {
  min-height: 64px; font-size: 1.25rem; font-weight: 700; border-radius: 14px;
  border: 2px solid #1f3a8a; background: #fff; color: #1f3a8a; cursor: pointer; padding: .6rem 1rem;
  font-family: inherit;
}
button.opt:hover, button.opt:focus-visible { background: #1f3a8a; color: #fff; outline: 3px solid #f59e0b; }
button.opt:disabled { opacity: .55; cursor: default; }
.hint { font-size: .95rem; color: #374151; margin: .5rem 0 .75rem; }
.stage { min-height: 120px; display: flex; align-items: center; justify-content: center; gap: 1rem;
  font-size: 3.2rem; margin-top: .75rem; }
.die { width: 84px; height: 84px; border-radius: 16px; border: 3px solid #111; display: flex;
  align-items: center; justify-content: center; font-size: 2.6rem; font-weight: 800; background: #fff; color: #111; }
.coin { width: 72px; height: 72px; border-radius: 50%; border: 3px solid #92400e; background: #fbbf24;
  display: flex; align-items: center; justify-content: center; font-size: 1.1rem; font-weight: 800; color: #451a03; }
.spin { width: 110px; height: 110px; border-radius: 50%; border: 3px solid #111; position: relative;
  background: conic-gradient(#bfdbfe 0 var(--a), #fecaca var(--a) 360deg); }
.spin .arrow { position: absolute; left: 50%; top: 8px; width: 4px; height: 47px; background: #111;
  transform-origin: 50% 100%; margin-left: -2px; }
.rolling { animation: wobble .18s linear infinite; }
@keyframes wobble { 0% { transform: rotate(-12deg); } 50% { transform: rotate(12deg); } 100% { transform: rotate(-12deg); } }
.out { font-size: 1.1rem; margin-top: .5rem; min-height: 1.5em; }
@media (prefers-reduced-motion: reduce) { .rolling { animation: none; } }
"""

_HTML = """
<div class="wrap">
  <p class="q" id="q"></p>
  <p class="hint" id="hint"></p>
  <div class="opts" id="opts" role="group" aria-label="Your true answer"></div>
  <div class="stage" id="stage" aria-hidden="true"></div>
  <p class="out" id="out" role="status" aria-live="polite"></p>
</div>
"""

_JS = r"""
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

export default function ({ data, parentElement, setTriggerValue }) {
  const root = parentElement;
  const q = root.querySelector('#q'), hint = root.querySelector('#hint');
  const opts = root.querySelector('#opts'), stage = root.querySelector('#stage'), out = root.querySelector('#out');
  q.textContent = data.question;
  hint.textContent = data.hint;
  opts.replaceChildren(); stage.replaceChildren(); out.textContent = '';
  let busy = false;
  for (const opt of data.options) {
    const b = document.createElement('button');
    b.className = 'opt'; b.type = 'button';
    b.textContent = opt.label;
    b.setAttribute('data-answer', String(opt.value));
    b.setAttribute('aria-label', `My true answer is ${opt.label}`);
    b.addEventListener('click', async () => {
      if (busy) return;  // one tap, one report
      busy = true;
      for (const other of opts.querySelectorAll('button')) other.disabled = true;
      const scheme = data.scheme;
      let answer, story;
      if (scheme.type === 'binary') {
        const r = randomizeBinary(scheme, opt.value);
        answer = r.report;
        story = await animateBinary(scheme, stage, r.draw);
      } else {
        answer = randomizeCategorical(scheme, opt.value);
        story = 'Your phone randomized your answer.';
      }
      const label = scheme.type === 'ue' ? 'a scrambled list of bits' : data.labels[String(answer)];
      out.textContent = `${story} Sending: ${label}.`;
      const sid = (crypto.randomUUID ? crypto.randomUUID() : Array.from(crypto.getRandomValues(new Uint32Array(4)), (x) => x.toString(16)).join('-'));
      setTriggerValue('vote', { answer, params: data.params, submission_id: sid });
    });
    opts.appendChild(b);
  }
}
"""

_COMPONENT = st.components.v2.component("ldp_vote", html=_HTML, css=_CSS, js=_JS)


def device_scheme(design_params: dict) -> dict[str, Any]:
    """What the browser needs to randomize exactly, derived from the design in ldp_core."""
    kind = design_params.get("design")
    if kind in ("grr", "ue"):
        oracle = ldp_core.categorical_oracle_from_params(design_params)
        if kind == "grr":
            return {"type": "grr", "d": oracle.d, "p": oracle.p}
        return {"type": "ue", "d": oracle.d, "p": oracle.p, "q": oracle.q}
    design = ldp_core.binary_design_from_params(design_params)
    animation = {"die": "die", "two_coin": "coins"}.get(design.kind, "spinner")
    scheme: dict[str, Any] = {"type": "binary", "weights": list(design.sampling_weights()),
                              "animation": animation}
    if animation == "die":
        scheme["faces"] = design.faces  # type: ignore[attr-defined]
    return scheme


def vote_component(*, key: str, question: str, options: list[tuple[int, str]],
                   design_params: dict, hint: str) -> dict | None:
    """Mount the randomizer; return the vote payload on the rerun after a tap, else None.

    ``options`` are ``(value, label)`` pairs: for binary questions value 1 is
    "yes" and 0 is "no"; for categorical ones the category index.
    """
    result = _COMPONENT(
        key=key,
        data={
            "question": question,
            "hint": hint,
            "options": [{"value": v, "label": lab} for v, lab in options],
            "labels": {str(v): lab for v, lab in options},
            "scheme": device_scheme(design_params),
            "params": design_params,
        },
        on_vote_change=lambda: None,
    )
    return getattr(result, "vote", None)
