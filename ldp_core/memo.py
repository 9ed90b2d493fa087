"""Memoization: the same question asked again, at one privacy cost while the answer holds.

RAPPOR (Erlingsson, Pihur & Korolova, CCS 2014) randomizes in two steps: a permanent
randomized response with parameter f, made once per true value and kept on the
device (the memo), and an instantaneous one with p and q on every report
(:class:`ldp_core.MemoRR` for a yes/no answer). Its Bloom filter sets h bits per
value, so two values differ in up to 2h bits, and

* ``ε∞ = 2h ln((1 − f/2) / (f/2))``: what all reports of one value reveal together;
* ``ε₁ = h ln(q* (1 − p*) / (p* (1 − q*)))``: what one report reveals, with
  ``q* = P(S = 1 | b = 1)`` and ``p* = P(S = 1 | b = 0)`` of one bit through both steps
  (:func:`rappor_epsilons`; RAPPOR's example h = 2, f = 0.5, p = 0.5, q = 0.75 gives
  4.394 and 1.0743). A yes/no answer is one bit: ε∞ = ln((1 − f/2)/(f/2)) and ε₁ the
  larger of the bit's two log-ratios (``MemoRR.epsilon_series``, ``MemoRR.epsilon``).

A changed answer gets a memo of its own, so it costs ε∞ again; the memo hides the
answer, not whether it changed: many reports from two memos show that they differ.

Numbers (Ding, Kulkarni & Yekhanin, "Collecting Telemetry Data Privately", NeurIPS
2017). Their 1-bit mean, a bit that is 1 w.p. ``1/(e^ε + 1) + (x/m)(e^ε − 1)/(e^ε + 1)``
for x in [0, m], is Duchi et al.'s mechanism (``ldp_core.DuchiMechanism`` on the same
range). To memoize it they round x once more, by α-point rounding
(:func:`alpha_round`): the range is cut into s equal steps, and a value between two
levels rounds up when its position in the step exceeds α, a number the device draws
once; over α the rounding is unbiased. The device keeps one memo bit per level, made
from the level (public, so the memo says nothing until it is used), and reports that
bit through the instantaneous step. A value that stays between the same two levels
reuses at most their two memos. Here the memo of level l is the permanent step on the
share l/s, so a series of numbers is the yes/no memo on the value's position in its
range: one report's channel is :class:`MemoRR`'s, with the true share replaced by
that position, and the yes/no estimator reads the class's mean position back
(:func:`simulate_numeric_series`). A level is a public number, which is what lets a
memo be made before it is needed; a changed level costs ε∞ again, like a changed
answer.
"""

from __future__ import annotations

import math

import numpy as np

from . import _checks
from ._checks import RNGLike
from .binary import MemoRR

__all__ = ["alpha_round", "rappor_epsilons", "simulate_numeric_series", "simulate_series"]

#: Most levels a numeric series is rounded to.
MAX_LEVELS = 1000


def rappor_epsilons(f: float, p: float, q: float, h: int = 1) -> tuple[float, float]:
    """``(ε∞, ε₁)`` of RAPPOR with h hash functions (Erlingsson et al. 2014, Section 3):
    ``2h ln((1 − f/2)/(f/2))`` and ``h ln(q*(1 − p*) / (p*(1 − q*)))``.

    >>> [round(e, 4) for e in rappor_epsilons(0.5, 0.5, 0.75, h=2)]
    [4.3944, 1.0743]
    """
    k = _checks.integer("h", h, 1, 1024)
    bit = MemoRR(f, p, q)
    one = math.log(bit.a / bit.b) + math.log((1 - bit.b) / (1 - bit.a))
    return 2 * k * bit.epsilon_series, k * one


def alpha_round(x: object, levels: int, alpha: object) -> np.ndarray:
    """α-point rounding (Ding et al. 2017) of positions ``x`` in [0, 1] to the levels
    0..``levels``: ``floor(x s)``, plus one when the position inside the step exceeds
    ``alpha`` (in [0, 1), drawn once per device). Over a uniform α,
    ``E[level] = x s``.

    >>> alpha_round([0.0, 0.3, 0.3, 1.0], 4, [0.5, 0.1, 0.3, 0.9]).tolist()
    [0, 2, 1, 4]
    """
    s = _checks.integer("levels", levels, 1, MAX_LEVELS)
    pos = np.asarray(x, dtype=float)
    if pos.size and (not np.all(np.isfinite(pos)) or pos.min() < 0 or pos.max() > 1):
        raise ValueError("x must be positions in [0, 1]")
    a = np.asarray(alpha, dtype=float)
    if a.size and (not np.all(np.isfinite(a)) or a.min() < 0 or a.max() >= 1):
        raise ValueError("alpha must lie in [0, 1)")
    scaled = pos * s
    low = np.minimum(np.floor(scaled), s - 1)
    return (low + (scaled - low > a)).astype(np.int64)


def _memo_design(design: object) -> MemoRR:
    if not isinstance(design, MemoRR):
        raise ValueError(f"design must be a MemoRR, got {design!r}")
    return design


def _instant(design: MemoRR, memo: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """One report of each memo bit: 1 w.p. q (memo 1) or p (memo 0)."""
    return (gen.random(memo.shape) < np.where(memo == 1, design.q, design.p)).astype(np.uint8)


def simulate_series(design: MemoRR, truths: object, *, rng: RNGLike = None) -> np.ndarray:
    """The reports of students who answer a yes/no question once per lecture through a
    memo: ``truths[i, t]`` is student i's true answer at lecture t; each student draws
    one memo per answer value (only used ones matter) and reports it through the
    instantaneous step every time. Returns uint8 reports of the same shape.

    >>> reports = simulate_series(MemoRR(0.5, 0.25, 0.75), [[1, 1, 1], [0, 0, 1]], rng=3)
    >>> reports.shape, reports.dtype
    ((2, 3), dtype('uint8'))
    """
    memo_design = _memo_design(design)
    x = np.asarray(truths)
    if x.ndim != 2 or (x.size and not np.all((x == 0) | (x == 1))):
        raise ValueError("truths must be a students × lectures array of 0/1 answers")
    gen = np.random.default_rng(rng)
    perm = memo_design.permanent
    memos = np.stack([perm.perturb(np.full(x.shape[0], v), rng=gen) for v in (0, 1)], axis=1)
    used = np.take_along_axis(memos, x.astype(np.int64), axis=1)
    return _instant(memo_design, used, gen)


def simulate_numeric_series(design: MemoRR, positions: object, levels: int, *,
                            rng: RNGLike = None) -> np.ndarray:
    """The reports of students who give a number once per lecture through α-point
    rounding and a memo per level (Ding et al. 2017): ``positions[i, t]`` in [0, 1] is
    student i's value at lecture t, placed in the question's range. Each student draws
    α once and one memo bit per level, from the permanent step on the share
    ``level / levels``, and reports the memo of its rounded level through the
    instantaneous step. Returns uint8 reports; their mean estimates the mean position
    as a yes/no share under ``design``.

    >>> reports = simulate_numeric_series(MemoRR(0.5, 0.25, 0.75), [[0.2, 0.25]], 4, rng=3)
    >>> reports.shape
    (1, 2)
    """
    memo_design = _memo_design(design)
    x = np.asarray(positions, dtype=float)
    if x.ndim != 2:
        raise ValueError("positions must be a students × lectures array")
    s = _checks.integer("levels", levels, 1, MAX_LEVELS)
    gen = np.random.default_rng(rng)
    alpha = gen.random((x.shape[0], 1))
    level = alpha_round(x, s, alpha)
    perm = memo_design.permanent
    share = np.arange(s + 1) / s
    one = perm.report_probability(share)
    memos = (gen.random((x.shape[0], s + 1)) < np.asarray(one)[None, :]).astype(np.uint8)
    used = np.take_along_axis(memos, level, axis=1)
    return _instant(memo_design, used, gen)
