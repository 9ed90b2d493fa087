"""Auditing a yes/no randomizer from its reports: an empirical lower bound on its ε.

A randomizer promises ε-LDP: for every output set S and both inputs,
``P(S | 1) <= e^ε P(S | 0)`` and ``P(S | 0) <= e^ε P(S | 1)``. An audit gives the
randomizer known inputs and counts what comes out: ``k1`` "yes" reports among ``n1``
runs on input 1 and ``k0`` among ``n0`` runs on input 0. Each probability is bounded
by the Clopper-Pearson (1934) interval of its count, one-sided at ``tail`` (2.5% by
default), and

    ε_LB = max over the output sets {1} and {0}, in both directions, of
           ln(CP_low(P(S | one input)) / CP_high(P(S | the other input))),

floored at 0 (Arcolezi & Gambs, "Revealing the True Cost of Locally Differentially
Private Protocols: An Auditing Perspective", PoPETs 2024(4), their LDP-Auditor). An
honest randomizer's ε_LB exceeds its true ε only when one of the Clopper-Pearson
bounds misses, at most ``2 tail`` of the time for a design with a > b (the direction
that reaches ε needs ``CP_low(a)`` above a or ``CP_high(b)`` below b), so ε_LB above
the promised ε is evidence that the randomizer leaks more than it promises. The
bound is one-sided: a randomizer that passes is not proven private, only not caught.

ε_LB is a function of the two counts, whose distribution is binomial, so its
distribution is computed exactly (:func:`audit_distribution`: every pair of counts
within 8 standard deviations of the means, all but 1e-14 of the probability) as well as simulated
(:func:`simulate_audit`). For ε-randomized response at ln 3 with N runs per input
its median is 0.68, 0.81 and 0.92 at N = 100, 200 and 500: the bound approaches the
true ε only as fast as the intervals shrink, like 1/√N, which is why an audit needs
many trials. A phone build that claims ln 3 but keeps the truth w.p. 0.9 (true ε =
ln 9) is caught (ε_LB > ln 3) 99.9% of the time at N = 100.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _checks
from ._checks import RNGLike
from .intervals import _binom_logpmf, exact_interval

__all__ = [
    "AuditDistribution",
    "audit_distribution",
    "audit_epsilon",
    "audit_runs_needed",
    "simulate_audit",
]

#: One-sided level of each Clopper-Pearson bound, as in the PoPETs 2024(4) audits.
AUDIT_TAIL = 0.025
#: Largest number of runs per input :func:`audit_distribution` computes exactly.
MAX_EXACT_RUNS = 100_000
#: :func:`audit_distribution` keeps the counts within this many SD (+ as many counts) of
#: each mean: the pairs left out carry about 1e-14 of the probability.
_SPREAD = 8.0


def _tail(tail: object) -> float:
    return _checks.in_range("tail", tail, 0.0, 0.5, lo_open=True, hi_open=True)


def _bounds(n: object, k: object, tail: float) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson bounds of ``P(report 1)`` from k of n, each one-sided at ``tail``."""
    low, high = exact_interval(1.0, 0.0, n, k, level=1 - 2 * tail)
    return np.asarray(low, dtype=float), np.asarray(high, dtype=float)


def _lower_bound(low1: np.ndarray, high1: np.ndarray, low0: np.ndarray,
                 high0: np.ndarray) -> np.ndarray:
    """ε_LB from the bounds of ``P(1 | 1)`` and ``P(1 | 0)`` (broadcast together)."""
    with np.errstate(divide="ignore"):
        ones = np.log(low1) - np.log(high0), np.log(low0) - np.log(high1)
        zeros = np.log1p(-high0) - np.log1p(-low1), np.log1p(-high1) - np.log1p(-low0)
        return np.maximum.reduce([*ones, *zeros, np.zeros(np.broadcast(low1, low0).shape)])


def audit_epsilon(k1: object, n1: object, k0: object, n0: object, *,
                  tail: float = AUDIT_TAIL) -> Any:
    """The empirical lower bound ε_LB from ``k1`` "yes" reports of ``n1`` runs on input 1
    and ``k0`` of ``n0`` on input 0 (integers or arrays, broadcast together): a float
    for scalars, else an array.

    The class exercise's die at N = 100 runs per input, with the counts it gives most
    often, and an all-truthful phone:

    >>> round(audit_epsilon(75, 100, 25, 100), 4)
    0.6342
    >>> round(audit_epsilon(100, 100, 0, 100), 4)
    3.2813
    >>> audit_epsilon(50, 100, 50, 100)
    0.0
    """
    t = _tail(tail)
    low1, high1 = _bounds(n1, k1, t)
    low0, high0 = _bounds(n0, k0, t)
    out = _lower_bound(low1, high1, low0, high0)
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class AuditDistribution:
    """The exact distribution of ε_LB, for a randomizer with channel ``(a, b)`` audited
    with ``n1`` and ``n0`` runs: the ``values`` ε_LB takes, one per pair of counts, in
    increasing order (equal values repeat), and their ``probabilities`` (summing to 1 up
    to the 1e-14 left out)."""

    a: float
    b: float
    n1: int
    n0: int
    values: np.ndarray
    probabilities: np.ndarray

    def quantile(self, q: float) -> float:
        """The smallest value whose cumulative probability reaches ``q``."""
        qq = _checks.in_range("q", q, 0.0, 1.0)
        cum = np.cumsum(self.probabilities)
        at = int(np.searchsorted(cum, qq * cum[-1], side="left"))
        return float(self.values[min(at, self.values.size - 1)])

    def median(self) -> float:
        return self.quantile(0.5)

    def mean(self) -> float:
        return float(self.values @ self.probabilities / self.probabilities.sum())

    def exceeds(self, epsilon: float) -> float:
        """``P(ε_LB > epsilon)``: the false-alarm rate when ``epsilon`` is the randomizer's
        true ε, the chance of catching it when its true ε is larger."""
        eps = _checks.finite("epsilon", epsilon)
        return float(min(self.probabilities[self.values > eps].sum(), 1.0))


def _channel(a: object, b: object) -> tuple[float, float]:
    return _checks.in_range("a", a, 0.0, 1.0), _checks.in_range("b", b, 0.0, 1.0)


def _runs(name: str, n: object) -> int:
    return _checks.integer(name, n, 1, MAX_EXACT_RUNS)


def _support(n: int, p: float) -> tuple[np.ndarray, np.ndarray]:
    """The counts of Binomial(n, p) within 8 SD + 8 of its mean (all but about 1e-14 of
    its probability), and their probabilities."""
    half = math.ceil(_SPREAD * math.sqrt(n * p * (1 - p)) + _SPREAD)
    mean = round(n * p)
    ks = np.arange(max(0, mean - half), min(n, mean + half) + 1)
    return ks, np.exp(_binom_logpmf(ks, n, p))


def audit_distribution(a: float, b: float, n1: int, n0: int | None = None, *,
                       tail: float = AUDIT_TAIL) -> AuditDistribution:
    """The exact distribution of ε_LB for a randomizer with ``a = P(1 | 1)`` and
    ``b = P(1 | 0)``, run ``n1`` times on input 1 and ``n0`` (default ``n1``) on input 0.

    ε-randomized response at ln 3 (a = 3/4, b = 1/4), N = 100 runs per input: the
    median ε_LB and how often it passes ln 3 (the false-alarm rate); then a phone that
    claims ln 3 but keeps the truth w.p. 0.9 (a = 0.9, b = 0.1), caught:

    >>> import math
    >>> honest = audit_distribution(0.75, 0.25, 100)
    >>> round(honest.median(), 2), round(honest.exceeds(math.log(3)), 4)
    (0.68, 0.0079)
    >>> round(audit_distribution(0.9, 0.1, 100).exceeds(math.log(3)), 4)
    0.9991
    """
    fa, fb = _channel(a, b)
    m1 = _runs("n1", n1)
    m0 = m1 if n0 is None else _runs("n0", n0)
    t = _tail(tail)
    k1, p1 = _support(m1, fa)
    k0, p0 = _support(m0, fb)
    low1, high1 = _bounds(m1, k1, t)
    low0, high0 = _bounds(m0, k0, t)
    eps = _lower_bound(low1[:, None], high1[:, None], low0[None, :], high0[None, :])
    order = np.argsort(eps, axis=None, kind="stable")
    weights = (p1[:, None] * p0[None, :]).ravel()
    return AuditDistribution(fa, fb, m1, m0, eps.ravel()[order], weights[order])


def simulate_audit(a: float, b: float, n1: int, n0: int | None = None, *,
                   size: int | None = None, tail: float = AUDIT_TAIL,
                   rng: RNGLike = None) -> Any:
    """ε_LB of ``size`` simulated audits (one float when ``size`` is None): each draws
    ``k1 ~ Binomial(n1, a)`` and ``k0 ~ Binomial(n0, b)``, the counts of n1 and n0
    independent runs of the randomizer.

    >>> draws = simulate_audit(0.75, 0.25, 200, size=4000, rng=1)
    >>> round(float(np.median(draws)), 1)
    0.8
    """
    fa, fb = _channel(a, b)
    m1 = _checks.integer("n1", n1, 1)
    m0 = m1 if n0 is None else _checks.integer("n0", n0, 1)
    if size is not None:
        size = _checks.integer("size", size, 1)
    gen = np.random.default_rng(rng)
    return audit_epsilon(gen.binomial(m1, fa, size), m1, gen.binomial(m0, fb, size), m0,
                         tail=tail)


def audit_runs_needed(a: float, b: float, promised: float, *, power: float = 0.99,
                      tail: float = AUDIT_TAIL, limit: int = 20_000) -> int | None:
    """About how many runs per input (both inputs alike) an audit needs to catch a
    randomizer with channel ``(a, b)`` that promised ``promised`` (ε_LB > promised) with
    probability at least ``power``; None when ``limit`` runs are not enough (an honest
    randomizer is never caught that often).

    Found by doubling, then bisection, on the exact catch probability. Counts are whole
    numbers, so that probability wobbles a little from one N to the next: a neighbour of
    the answer may fall just short of ``power``.

    The cheat that keeps the truth w.p. 0.9 and claims ln 3:

    >>> import math
    >>> audit_runs_needed(0.9, 0.1, math.log(3))
    77
    """
    pw = _checks.in_range("power", power, 0.0, 1.0, lo_open=True, hi_open=True)
    cap = _runs("limit", limit)
    promise = _checks.finite("promised", promised)

    def caught(n: int) -> bool:
        return audit_distribution(a, b, n, tail=tail).exceeds(promise) >= pw

    high = 8
    while not caught(high):
        if high >= cap:
            return None
        high = min(2 * high, cap)
    low = high // 2 if high > 8 else 0  # not caught at low (0: never tried)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if caught(mid) else (mid, high)
    return high
