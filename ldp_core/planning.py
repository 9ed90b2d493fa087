"""Is my class big enough? The smallest share a class of n can reliably find.

A categorical question is worth asking only if the class can tell an option that some
students hold from one that nobody holds. With a frequency oracle the estimated share of
an option nobody holds has the SD ``sqrt(V* / n)``, where ``V* = q (1 - q) / (p - q)^2``
is the oracle's variance factor (Wang, Blocki, Li & Jha, "Locally differentially private
protocols for frequency estimation", USENIX Security 2017: ``(e^eps + d - 2) / (e^eps -
1)^2`` for GRR, ``4 e^eps / (e^eps - 1)^2`` for OUE).

The class declares an option present when its estimated share exceeds
``z_(1 - alpha / d) sqrt(V* / n)``: a one-sided test at level alpha / d for each of the d
options (Bonferroni), so that the chance of declaring any absent option present is at
most alpha. An option held by a share s is then found with probability about
``Phi(s / sqrt(V* / n) - z_(1 - alpha / d))``, which reaches the power ``1 - beta`` at

    ``s_min = (z_(1 - alpha / d) + z_(1 - beta)) sqrt(V* / n)``.

GRR with d = 4 at ε = 1 and n = 30 gives s_min = 0.71: such a class finds only an option
held by about three quarters of it. The approximation ignores that the SD grows a little
with s (by the term ``f (1 - p - q) / (p - q)`` of Wang et al.'s variance), so the power at
s_min is a few points under the nominal one, and in classes of a few dozen the skewed
counts of rare reports make the threshold a little liberal: :func:`false_present_rate`
computes the chance of a false "present" exactly (GRR's 4 options at ε = 1 and n = 30:
8.05%, not 5%), and the tests measure the power by simulation. The normal quantiles come
from the standard library (``statistics.NormalDist``), not SciPy.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from . import _checks
from .categorical import GRR, FrequencyOracle, UnaryEncoding
from .intervals import _binom_logpmf

__all__ = ["false_present_rate", "needed_class_size", "presence_threshold",
           "smallest_detectable_share"]

#: The largest class :func:`false_present_rate` computes exactly (its cost grows as n²).
MAX_EXACT_N = 5000

#: The defaults: a 5% chance of any false "present" over the d options, 80% power.
ALPHA_PLAN, POWER_PLAN = 0.05, 0.8


def _oracle(oracle: object) -> FrequencyOracle:
    if not isinstance(oracle, FrequencyOracle):
        raise ValueError(f"oracle must be a frequency oracle, got {oracle!r}")
    return oracle


def _z_alpha(oracle: FrequencyOracle, alpha: float) -> float:
    a = _checks.in_range("alpha", alpha, 0.0, 1.0, lo_open=True, hi_open=True)
    return NormalDist().inv_cdf(1 - a / oracle.d)


def _z_power(power: float) -> float:
    return NormalDist().inv_cdf(_checks.in_range("power", power, 0.5, 1.0, hi_open=True))


def presence_threshold(oracle: FrequencyOracle, n: int, *, alpha: float = ALPHA_PLAN) -> float:
    """The estimated share above which an option counts as present:
    ``z_(1 - alpha / d) sqrt(V* / n)``.

    >>> from ldp_core import oracle
    >>> round(presence_threshold(oracle("grr", 4, 1.0), 30), 4)
    0.5173
    """
    o = _oracle(oracle)
    n = _checks.integer("n", n, 1)
    return _z_alpha(o, alpha) * math.sqrt(float(o.count_variance(1)) / n)


def smallest_detectable_share(oracle: FrequencyOracle, n: int, *, alpha: float = ALPHA_PLAN,
                              power: float = POWER_PLAN) -> float:
    """``s_min = (z_(1 - alpha / d) + z_power) sqrt(V* / n)``: the smallest share of an
    option that a class of n finds present with probability ``power``.

    >>> from ldp_core import oracle
    >>> round(smallest_detectable_share(oracle("grr", 4, 1.0), 30), 2)
    0.71
    """
    o = _oracle(oracle)
    n = _checks.integer("n", n, 1)
    return (_z_alpha(o, alpha) + _z_power(power)) * math.sqrt(float(o.count_variance(1)) / n)


def needed_class_size(oracle: FrequencyOracle, share: float, *, alpha: float = ALPHA_PLAN,
                      power: float = POWER_PLAN) -> int:
    """The smallest n whose :func:`smallest_detectable_share` is at most ``share``:
    ``ceil((z_(1 - alpha / d) + z_power)^2 V* / share^2)``.

    >>> from ldp_core import GRR
    >>> needed_class_size(GRR(4, 1.0), 0.71), needed_class_size(GRR(4, 1.0), 0.2)
    (31, 380)
    """
    o = _oracle(oracle)
    s = _checks.in_range("share", share, 0.0, 1.0, lo_open=True)
    z = _z_alpha(o, alpha) + _z_power(power)
    n = max(1, math.ceil(z * z * float(o.count_variance(1)) / (s * s)))
    while n > 1 and smallest_detectable_share(o, n - 1, alpha=alpha, power=power) <= s:
        n -= 1  # floating point: never one more than needed
    return n


def false_present_rate(oracle: FrequencyOracle, n: int, *, alpha: float = ALPHA_PLAN) -> float:
    """The exact chance that a class of n declares present (:func:`presence_threshold`) an
    option nobody holds, in the class where that is likeliest: every student holds one
    option, so the d - 1 others are absent (each absent option adds a chance, and the
    joint law of the absent options' counts does not depend on how the rest is held).

    GRR: the absent options' counts are d - 1 cells of a multinomial, each with chance q;
    summed cell by cell (each cell binomial given the reports the earlier ones left).
    Unary encoding: each absent option's count of 1-bits is ``Bin(n, q)``, independently.
    Only these two oracles, and n up to :data:`MAX_EXACT_N`.

    >>> from ldp_core import GRR
    >>> round(false_present_rate(GRR(4, 1.0), 30), 4)
    0.0805
    """
    o = _oracle(oracle)
    n = _checks.integer("n", n, 1, MAX_EXACT_N)
    if not isinstance(o, (GRR, UnaryEncoding)):
        raise ValueError("the exact rate is computed for GRR and unary encoding only")
    p, q = float(o.p), float(o.q)
    # present when the estimated share (c / n - q) / (p - q) exceeds the threshold
    most = math.floor(n * (q + presence_threshold(o, n, alpha=alpha) * (p - q)) + 1e-9)
    if most >= n:
        return 0.0
    absent = o.d - 1
    if isinstance(o, UnaryEncoding):
        below = float(np.exp(_binom_logpmf(np.arange(most + 1), n, q)).sum())
        return float(max(0.0, 1.0 - min(1.0, below) ** absent))
    left = np.zeros(n + 1)  # P(the reports not yet in a cell number m, every cell <= most)
    left[n] = 1.0
    for j in range(absent):
        share = q / (1.0 - j * q)  # the chance of cell j among the reports left
        nxt = np.zeros(n + 1)
        for m in (int(v) for v in np.nonzero(left > 1e-300)[0]):
            x = np.arange(min(most, m) + 1)
            nxt[m - x] += left[m] * np.exp(_binom_logpmf(x, m, share))
        left = nxt
    return float(max(0.0, 1.0 - left.sum()))
