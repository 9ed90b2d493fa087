"""Do the reports fit the design at all? A check against ballot stuffing.

Under a binary design with channel (a, b), a class with true share mu in [0, 1]
reports "yes" with probability lambda = b + (a - b) mu, which lies in [b, a]
whatever the class believes. Reports far outside that band are not noise: they
come from repeated votes of one device, from students who did not follow the
randomizer, or from a forged client. Under unary encoding, the number of 1-bits
in a report has the same distribution for every true answer (one bit with p,
d - 1 bits with q: a Poisson-binomial); all-ones reports are far outside it.

Under a numeric mechanism every report is unbiased for its student's value in
[lo, hi], and its distribution grows with that value, so no honest class sends larger
reports than the one whose every student is at the top of the range.
:func:`numeric_plausibility` compares the reports' mean, their most extreme report and
how many of them lie near the top with what that class would send (the bottom for "too
low"); for Duchi et al.'s one bit, the count of +c alone.

Every check runs at :data:`ALPHA` = 1e-4, and its p-value is computed against the honest
class most likely to raise it, exactly (binomial tails, the Laplace sum's law, the
largest of n reports) or with a bound measured to hold (the normal tail of a bounded
mechanism's mean beyond two SDs): an honest class raises the alarm at most 1e-4 of the
time, whatever its answers and its size, from one report on (computed and measured in
tests/test_ldp_core_plausibility.py, tables in docs/numeric-checks.md). Unary encoding's
check, once a G-test whose chi-squared approximation fired on up to 6.25e-4 of honest
classes of 12 to 17, is made of exact binomial tests too (:func:`ue_plausibility`). The
rate is kept very low on purpose: an instructor runs a few questions a lecture and dozens
a term, and a false alarm would accuse honest students; stuffing worth flagging is far
beyond it (one device voting "Yes" 50 times under the die gives p ≈ 1e-6).

What no check can see: reports a forged client randomizes as a phone would for some true
answer in the range (stealthy stuffing) are an honest class's reports, and fit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from .binary import ForcedResponse
from .categorical import GRR, UnaryEncoding
from .estimate import BinaryCounts
from .intervals import _binom_logpmf, _log_gamma
from .numeric import (
    DEVICE_CELLS,
    REPORT_TAIL,
    LaplaceMechanism,
    NumericDesign,
    NumericMechanism,
)

__all__ = ["ALPHA", "Plausibility", "binary_plausibility", "chi2_sf", "grr_plausibility",
           "numeric_plausibility", "ue_plausibility"]

#: Significance of the plausibility alarm (see the module docstring for why so small).
ALPHA = 1e-4


@dataclass(frozen=True)
class Plausibility:
    """The outcome of a plausibility check.

    ``fits`` is False when the reports do not fit the design for any true share
    (p-value below ``alpha``). ``direction`` says which way they stray:
    ``"too_many_yes"`` (more "yes" than even an all-yes class would report),
    ``"too_few_yes"``, ``"too_many_ones"``, ``"too_few_ones"``; for numbers
    ``"above_range"`` / ``"below_range"`` (the mean beyond the range of answers),
    ``"too_many_high"`` / ``"too_many_low"`` (more reports near an end than a class at
    that end sends) and ``"extreme_high"`` / ``"extreme_low"`` (one report further out
    than an honest phone sends); None when they fit. ``statistic`` is the deciding test's
    own number (see each check).
    """

    fits: bool
    p_value: float
    statistic: float
    alpha: float
    direction: str | None


def chi2_sf(x: float, df: int) -> float:
    """``P(chi2_df > x)`` in closed form for integer ``df`` (no SciPy needed).

    >>> round(chi2_sf(3.841458820694124, 1), 6), round(chi2_sf(5.991464547107979, 2), 6)
    (0.05, 0.05)
    """
    if df < 1:
        raise ValueError(f"df must be at least 1, got {df}")
    if x <= 0:
        return 1.0
    if not math.isfinite(x):
        return 0.0
    half = x / 2
    if df % 2 == 0:  # e^(-x/2) sum_{i < df/2} (x/2)^i / i!
        term = total = math.exp(-half)
        for i in range(1, df // 2):
            term *= half / i
            total += term
        return min(1.0, total)
    total = math.erfc(math.sqrt(half))  # df = 1
    term = math.sqrt(2 * x / math.pi) * math.exp(-half)
    for i in range(1, (df + 1) // 2):
        total += term
        term *= x / (2 * i + 1)
    return min(1.0, max(0.0, total))


@lru_cache(maxsize=512)
def _binom_tail_table(n: int, q: float) -> np.ndarray:
    """``P(Bin(n, q) >= k)`` for k = 0..n + 1, the binomial's probabilities
    (:func:`ldp_core.intervals._binom_logpmf`) summed from the top in log space."""
    log_pmf = _binom_logpmf(np.arange(n + 1), n, q)
    with np.errstate(divide="ignore"):  # q = 0 or 1: some counts are impossible
        log_tail = np.logaddexp.accumulate(log_pmf[::-1])[::-1]
    table = np.concatenate((np.minimum(1.0, np.exp(log_tail)), [0.0]))
    table[0] = 1.0
    table.flags.writeable = False
    return table


def binom_sf(k: Any, n: int, q: float) -> Any:
    """``P(Bin(n, q) >= k)`` (k an integer or an array of them), summed term by term in
    log space (no SciPy needed): exact up to rounding even far in the tail.

    >>> [round(float(binom_sf(k, n, q)), 12) for k, n, q in ((3, 3, 0.5), (0, 5, 0.1), (6, 5, 0.9))]
    [0.125, 1.0, 0.0]
    >>> round(float(binom_sf(50, 50, 0.75)) / 0.75 ** 50, 12)
    1.0
    """
    kk = np.clip(np.asarray(k, dtype=np.int64), 0, n + 1)
    if kk.size > 8:  # many classes of one size (a simulation): one table for all
        return _binom_tail_table(int(n), float(q))[kk][()]
    return np.array([_binom_sf_one(int(v), int(n), float(q)) for v in kk.ravel()]
                    ).reshape(kk.shape)[()]


def _binom_sf_one(k: int, n: int, q: float) -> float:
    """``P(Bin(n, q) >= k)`` from the terms within 40 SDs of k on the side away from the
    mean (the rest is below e^-800 of them): a dashboard's one count costs O(SD), not O(n)."""
    if k <= 0 or q >= 1.0:
        return 1.0
    if k > n or q <= 0.0:
        return 0.0
    width = int(40 * math.sqrt(n * q * (1 - q)) + 40)
    if k >= n * q:
        logs = _binom_logpmf(np.arange(k, min(n, k + width) + 1), n, q)
        top = float(logs.max())
        return min(1.0, math.exp(top) * float(np.exp(logs - top).sum()))
    below = np.exp(_binom_logpmf(np.arange(max(0, k - width), k), n, q)).sum()
    return float(max(0.0, 1.0 - below))


def binary_plausibility(counts: BinaryCounts, alpha: float = ALPHA) -> Plausibility:
    """Do these reports fit their designs for some true share in [0, 1]?

    Under a design with channel (a, b) the count of "yes" reports of a class grows with
    its true share, so the class most likely to report many "yes" is the one where
    everyone truly says yes: its count is exactly ``Bin(n, max(a, b))``. The p-value of
    "too many yes" is that binomial's tail at the count seen, ``P(Bin(n, a) >= yes)``, and
    "too few" mirrors it with ``min(a, b)``; each side gets half of the significance, and a
    round whose design changed while it was open has each design group checked on its
    own, sharing it again (Bonferroni). So an honest class, whatever its share and n,
    raises the alarm with probability at most ``alpha``; exactly computed in the tests.
    ``statistic`` is the deciding group's reported share.
    """
    groups = [g for g in counts._groups_abny() if g[2] > 0]
    if not groups:
        return Plausibility(True, 1.0, 0.0, alpha, None)
    tests = []
    for a, b, n, y in groups:
        hi, lo = max(a, b), min(a, b)
        tests.append((float(binom_sf(y, n, hi)), "too_many_yes", y / n))
        tests.append((float(binom_sf(n - y, n, 1 - lo)), "too_few_yes", y / n))
    p_raw, direction, share = min(tests)
    p = min(1.0, p_raw * len(tests))
    fits = p >= alpha
    return Plausibility(fits, p, share, alpha, None if fits else direction)


def ones_distribution(oracle: UnaryEncoding) -> np.ndarray:
    """P(a report has k 1-bits), k = 0..d: one bit with p, d - 1 bits with q, whatever
    the true answer (a Poisson-binomial)."""
    d, p, q = oracle.d, oracle.p, oracle.q
    k = np.arange(d)
    others = np.array([math.comb(d - 1, int(j)) for j in k]) * q**k * (1 - q) ** (d - 1 - k)
    out = np.zeros(d + 1)
    out[:d] += (1 - p) * others
    out[1:] += p * others
    return out


def ue_plausibility(oracle: UnaryEncoding, ones_histogram: object,
                    alpha: float = ALPHA) -> Plausibility:
    """Does the histogram of 1-bits per report fit unary encoding's exact distribution?

    ``ones_histogram[k]`` is the number of reports with k ones (k = 0..d). Every honest
    report's count of ones K has the law :func:`ones_distribution`, whatever its answer, so
    each test below is exact at every n (no large-sample approximation):

    * the **total** of ones, ``Bin(n, p) + Bin(n (d - 1), q)``: too many or too few;
    * the **number of reports with at least k ones** (k above the mean) against
      ``Bin(n, P(K >= k))``, and with at most k (below it) against ``Bin(n, P(K <= k))``:
      a few all-ones (or all-zeros) reports, which the total of a large class hides.

    The significance is split (Bonferroni): half to each side, and on a side half to the
    total and half shared by the counts, so an honest class raises the alarm at most
    ``alpha`` of the time at every n (the bound computed exactly, n = 1..200, in
    tests/test_ldp_core_plausibility.py). ``statistic`` is the deciding test's total or
    count; ``direction`` is ``"too_many_ones"`` or ``"too_few_ones"``.

    >>> oue = UnaryEncoding.optimized(5, math.log(3))
    >>> ue_plausibility(oue, [0, 0, 0, 0, 0, 12]).direction
    'too_many_ones'
    """
    h = np.asarray(ones_histogram, dtype=float)
    if h.shape != (oracle.d + 1,) or np.any(h < 0) or np.any(h != np.round(h)):
        raise ValueError(f"ones_histogram needs {oracle.d + 1} non-negative whole counts")
    counts = h.astype(np.int64)
    n = int(counts.sum())
    if n == 0:
        return Plausibility(True, 1.0, 0.0, alpha, None)
    p, stat, direction = min(_ue_tests(oracle, counts, n), key=lambda t: t[0])
    fits = p >= alpha
    return Plausibility(fits, min(1.0, p), stat, alpha, None if fits else direction)


def _ue_total_sf(oracle: UnaryEncoding, n: int, t: int) -> float:
    """``P(T >= t)`` for the total of ones of n honest reports, ``T = X + Y`` with
    ``X ~ Bin(n, p)`` and ``Y ~ Bin(n (d - 1), q)`` independent: exact, summed over X."""
    if t <= 0:
        return 1.0
    x = np.arange(n + 1)
    px = np.exp(_binom_logpmf(x, n, oracle.p))
    tail_y = _binom_tail_table(n * (oracle.d - 1), float(oracle.q))
    need = np.clip(t - x, 0, n * (oracle.d - 1) + 1)
    return float(min(1.0, px @ tail_y[need]))


def ue_thresholds(oracle: UnaryEncoding) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The k of the count tests: ``K >= k`` for k above the mean count of ones (1..d), and
    ``K <= k`` for k below it (0..d - 1); at least one each."""
    mean = oracle.p + (oracle.d - 1) * oracle.q
    high = tuple(k for k in range(1, oracle.d + 1) if k > mean) or (oracle.d,)
    low = tuple(k for k in range(oracle.d) if k < mean) or (0,)
    return high, low


def _ue_tests(oracle: UnaryEncoding, counts: np.ndarray, n: int
              ) -> list[tuple[float, float, str]]:
    """``(p-value / its share of alpha, statistic, direction)`` of every test of
    :func:`ue_plausibility`."""
    d = oracle.d
    law = ones_distribution(oracle)
    total = int(np.arange(d + 1) @ counts)
    tests = [(_ue_total_sf(oracle, n, total) / 0.25, float(total), "too_many_ones"),
             ((1.0 - _ue_total_sf(oracle, n, total + 1)) / 0.25, float(total), "too_few_ones")]
    high, low = ue_thresholds(oracle)
    for k in high:
        seen = int(counts[k:].sum())
        share = 0.25 / len(high)
        tests.append((float(binom_sf(seen, n, float(min(1.0, law[k:].sum())))) / share,
                      float(seen), "too_many_ones"))
    for k in low:
        seen = int(counts[:k + 1].sum())
        share = 0.25 / len(low)
        tests.append((float(binom_sf(seen, n, float(min(1.0, law[:k + 1].sum())))) / share,
                      float(seen), "too_few_ones"))
    return tests


def _pool(obs: np.ndarray, exp: np.ndarray, least: float = 5.0
          ) -> tuple[np.ndarray, np.ndarray]:
    """Merge cells from both tails inward until every pooled cell expects >= ``least``."""
    cells_o, cells_e = list(obs), list(exp)
    while len(cells_e) > 1 and cells_e[0] < least:
        e, o = cells_e.pop(0), cells_o.pop(0)
        cells_e[0] += e
        cells_o[0] += o
    while len(cells_e) > 1 and cells_e[-1] < least:
        e, o = cells_e.pop(), cells_o.pop()
        cells_e[-1] += e
        cells_o[-1] += o
    return np.array(cells_o), np.array(cells_e)


#: The tail probabilities (for a class at the top of the range) of the fixed points whose
#: reports the numeric check counts: 1/4, 1/16, ... down to :data:`REPORT_TAIL`.
TAIL_LEVELS = tuple(4.0 ** -j for j in range(1, 16) if 4.0 ** -j >= REPORT_TAIL)
#: How the numeric check shares its significance on each side: the mean, the most extreme
#: report, and the counts beyond the fixed points (shared equally among them).
_SHARES = {"mean": 0.5, "extreme": 0.25, "tail": 0.25}


_ERFC = np.frompyfunc(math.erfc, 1, 1)  # math.erfc on arrays (NumPy has no erfc)


@lru_cache(maxsize=64)
def _laplace_sum_coefficients(n: int) -> np.ndarray:
    """``ln(B_j / j!)`` for j = 0..n-1, where ``P(S_n >= r) = e^-r sum_j B_j r^j / j!`` for a
    sum of n standard Laplace variables and r >= 0 (see :func:`laplace_sum_sf`)."""
    k = np.arange(n, dtype=float)
    log_w = (_log_gamma(2 * n - 1 - k) + (k - 2 * n + 1) * math.log(2) - math.lgamma(n)
             - _log_gamma(n - k))
    log_b = np.logaddexp.accumulate(log_w[::-1])[::-1]  # B_j = W_j + ... + W_(n-1)
    return log_b - _log_gamma(k + 1)


def laplace_sum_sf(u: Any, n: int, scale: float) -> Any:
    """``P(L_1 + ... + L_n >= u)`` for independent ``Laplace(0, scale)`` (u a number or an
    array), exactly. The sum of n standard Laplace variables has the density
    ``e^-|t| / (2^(2n-1) (n-1)!) sum_k (2n-2-k)! (2|t|)^k / (k! (n-1-k)!)``, k = 0..n-1
    (Kotz, Kozubowski & Podgórski 2001, "The Laplace Distribution and Generalizations",
    chapter 2), so its tail beyond r >= 0 is ``e^-r`` times a polynomial in r with positive
    coefficients, summed here in log space (no cancellation at any n).

    >>> u = 3.0
    >>> round(float(laplace_sum_sf(u, 1, 1.0)) / (0.5 * math.exp(-u)), 12)
    1.0
    >>> round(float(laplace_sum_sf(u, 2, 1.0)) / (math.exp(-u) * (2 + u) / 4), 12)
    1.0
    """
    uu = np.asarray(u, dtype=float)
    r = np.abs(uu.ravel()) / scale
    coef = _laplace_sum_coefficients(int(n))
    j = np.arange(coef.size, dtype=float)
    upper = np.empty(r.shape)
    for start in range(0, r.size, 4096):  # a block of rows at a time bounds the memory
        rr = r[start:start + 4096, None]
        with np.errstate(divide="ignore", invalid="ignore"):  # r = 0: only j = 0 counts
            terms = coef + np.where(j > 0, j * np.log(rr), 0.0)
        top = terms.max(axis=1)
        upper[start:start + 4096] = np.exp(top - rr[:, 0]
                                           + np.log(np.exp(terms - top[:, None]).sum(axis=1)))
    upper = np.minimum(upper, 0.5)
    return np.where(uu.ravel() >= 0, upper, 1.0 - upper).reshape(uu.shape)[()]


def _mean_sf(mech: NumericMechanism, n: int, mean: np.ndarray) -> np.ndarray:
    """``P(mean of n reports >= mean)`` for a class whose every student is at the top.

    Exact for the local Laplace mechanism (:func:`laplace_sum_sf`; the phone's clamp only
    lowers large reports, so this bounds it). The normal tail for the others: their report
    at the top is skewed toward the middle (most of it in a window at the top, a long thin
    tail down to the bottom), which makes the mean's upper tail lighter than the normal
    one beyond two SDs, so there the normal tail bounds it (measured for n = 1 to 30, where
    the skew is largest, in the tests; the alarm needs p < 2.5e-5, four SDs out)."""
    if isinstance(mech, LaplaceMechanism):
        return np.asarray(laplace_sum_sf(n * (mean - 1.0), n, mech.scale))
    z = (mean - 1.0) / math.sqrt(float(mech.variance(1.0)) / n)
    return 0.5 * np.asarray(_ERFC(z / math.sqrt(2)), dtype=float)


@lru_cache(maxsize=256)
def _tail_points(mech: NumericMechanism) -> tuple[tuple[float, float], ...]:
    """The points t counted beyond, with the top class's ``P(y >= t)`` for each (taken half
    a cell lower, :func:`_half_cell`): one per :data:`TAIL_LEVELS`, found by bisection; the
    same point twice counts once."""
    lo, hi = mech.device_grid() or mech.output_bounds
    points: dict[float, float] = {}
    for level in TAIL_LEVELS:
        a, b = lo, hi  # survival(a) >= level > survival(b), unless b is reached
        if float(mech.survival(b, 1.0)) >= level:
            a = b
        for _ in range(200):
            mid = (a + b) / 2
            if mid in (a, b):
                break
            if float(mech.survival(mid, 1.0)) >= level:
                a = mid
            else:
                b = mid
        points.setdefault(a, float(mech.survival(a - _half_cell(mech), 1.0)))
    return tuple(sorted(points.items()))


def _half_cell(mech: NumericMechanism) -> float:
    """Half a device cell: a phone's report lies at most this far above the raw one, so a
    probability taken this much lower bounds the snapped report's."""
    grid = mech.device_grid()
    return 0.0 if grid is None else (grid[1] - grid[0]) / DEVICE_CELLS / 2


def _upper_tests(mech: NumericMechanism, y: np.ndarray
                 ) -> list[tuple[np.ndarray, float, str, np.ndarray]]:
    """``(p-values, share of the side's significance, test, statistics)`` of "too high"
    against the class at the top, for each row of ``y`` (a class per row); the lower side
    is the same on ``-y`` (every mechanism is symmetric)."""
    n = y.shape[1]
    if mech.device_grid() is None:  # two reports, ±c: the count of +c is all there is
        top = float(mech.output_bounds[1])
        plus = (y > 0).sum(axis=1)
        return [(binom_sf(plus, n, float(mech.survival(top, 1.0))), 1.0, "mean",
                 y.mean(axis=1))]
    half = _half_cell(mech)
    mean, largest = y.mean(axis=1), y.max(axis=1)
    tests = [(_mean_sf(mech, n, mean - half), _SHARES["mean"], "mean", mean)]
    # one report SD lower: a bounded mechanism's largest report, which a phone at the top
    # sends now and then, is no outlier; a Laplace report 20 scales out still is
    q = np.asarray(mech.survival(largest - half - math.sqrt(float(mech.variance(1.0))), 1.0),
                   dtype=float)
    with np.errstate(divide="ignore"):  # q = 1 gives 1
        extreme = -np.expm1(n * np.log1p(-q))
    tests.append((extreme, _SHARES["extreme"], "extreme", largest))
    points = _tail_points(mech)
    for t, q_t in points:
        beyond = (y >= t).sum(axis=1)
        tests.append((binom_sf(beyond, n, q_t), _SHARES["tail"] / len(points), "tail", beyond))
    return tests


def _numeric_p_values(mech: NumericMechanism, y: np.ndarray, groups: int = 1
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each row of ``y`` (one class's reports under ``mech``): the p-value of the whole
    check (its tests' smallest, divided by the test's share of the significance), the
    direction of that test and its statistic. ``groups`` mechanisms share the significance.
    """
    adjusted, names, stats = [], [], []
    for side in (1, -1):
        for p, share, test, stat in _upper_tests(mech, side * y):
            adjusted.append(np.asarray(p, dtype=float) / (share / 2 / groups))
            names.append(_DIRECTIONS[test, side])
            stats.append(side * np.asarray(stat, dtype=float) if test != "tail"
                         else np.asarray(stat, dtype=float))
    table = np.vstack(adjusted)
    best = table.argmin(axis=0)
    cols = np.arange(y.shape[0])
    return (np.minimum(1.0, table[best, cols]), np.array(names)[best],
            np.vstack(stats)[best, cols])


_DIRECTIONS = {("mean", 1): "above_range", ("mean", -1): "below_range",
               ("tail", 1): "too_many_high", ("tail", -1): "too_many_low",
               ("extreme", 1): "extreme_high", ("extreme", -1): "extreme_low"}


def numeric_plausibility(groups: Sequence[tuple[NumericDesign, object]],
                         alpha: float = ALPHA) -> Plausibility:
    """Do these numeric reports fit some class with values in [lo, hi]?

    ``groups`` are ``(design, reports on the [-1, 1] scale)``, as for
    :meth:`NumericEstimate.from_groups`. Every mechanism's reports grow (stochastically)
    with the student's value (:meth:`NumericMechanism.survival`), so any statistic that
    grows with the reports is largest, in distribution, for the class whose every student
    sits at the top of the range. Each test is therefore computed against that class (the
    bottom one for "too low"), and holds its significance for every honest class at every n:

    * the **mean** of the reports (exact for the Laplace mechanism, the normal tail for the
      others, see :func:`_mean_sf`): a mean beyond the range;
    * the **most extreme report**, against the largest of n reports of the top class:
      ``1 - (1 - P(y >= largest - sd))^n``, one report SD (of the top class) lower so that
      the end of a bounded mechanism's range, which phones at the top reach now and then,
      is no outlier: one forged report far out;
    * the **number of reports beyond fixed points** where the top class's reports fall with
      probability 1/4, 1/16, ... down to 1e-9 (:data:`TAIL_LEVELS`), each against its exact
      binomial: too many reports near the top, which the mean of a mid-range class hides;
    * for Duchi et al.'s two reports, the count of ``+c_eps`` (which fixes the mean) against
      its exact binomial alone: it says everything the reports can say.

    The significance is split (Bonferroni): half to each side, and on a side half to the
    mean, a quarter to the extreme report and a quarter shared by the fixed points; a round
    whose design changed while open has each mechanism's reports checked on its own, sharing
    it again. ``direction`` names the test that fired and its side: ``"above_range"`` /
    ``"below_range"`` (the mean), ``"too_many_high"`` / ``"too_many_low"`` (the counts),
    ``"extreme_high"`` / ``"extreme_low"`` (one report); ``statistic`` is that test's
    mean, count or report (unit scale).

    Reports randomized as if from a true answer in the range (stealthy stuffing) fit by
    construction, and no test on the reports can see them.

    >>> from ldp_core import numeric_design_from_params
    >>> pm = numeric_design_from_params({"design": "piecewise", "epsilon": 1.0,
    ...                                  "lo": 0, "hi": 12})
    >>> numeric_plausibility([(pm, [pm.mechanism.big_c] * 40)]).direction
    'too_many_high'
    """
    by_mechanism: dict[NumericMechanism, list[np.ndarray]] = {}
    for design, reports in groups:
        arr = np.asarray(reports, dtype=float).ravel()
        if arr.size:
            by_mechanism.setdefault(design.mechanism, []).append(arr)
    if not by_mechanism:
        return Plausibility(True, 1.0, 0.0, alpha, None)
    results = [_numeric_p_values(mech, np.concatenate(parts)[None, :], len(by_mechanism))
               for mech, parts in by_mechanism.items()]
    p, direction, stat = min(results, key=lambda r: float(r[0][0]))
    fits = bool(p[0] >= alpha)
    return Plausibility(fits, float(p[0]), float(stat[0]), alpha,
                        None if fits else str(direction[0]))


def grr_plausibility(oracle: GRR, support_counts: object, alpha: float = ALPHA) -> Plausibility:
    """Do these GRR reports fit the design for some class?

    Seen from one option, GRR is a yes/no design: a report names the option with
    probability p if the student holds it and q otherwise, i.e. forced response, truthful
    with p - q and forced "yes" with q. So each option's count gets
    :func:`binary_plausibility` against that channel, and the d checks share the
    significance (Bonferroni). ``direction`` is ``"option_too_often"`` or
    ``"option_too_rarely"`` for the option whose count fits least.

    >>> round(grr_plausibility(GRR(4, 1.0), [10, 10, 10, 10]).p_value, 6)
    1.0
    >>> grr_plausibility(GRR(4, 1.0), [0, 0, 40, 0]).direction
    'option_too_often'
    """
    counts = np.asarray(support_counts, dtype=np.int64)
    if counts.shape != (oracle.d,) or np.any(counts < 0):
        raise ValueError(f"support_counts needs {oracle.d} non-negative counts")
    n = int(counts.sum())
    if n == 0:
        return Plausibility(True, 1.0, 0.0, alpha, None)
    channel = ForcedResponse(oracle.p - oracle.q, oracle.q)
    worst = min((binary_plausibility(BinaryCounts.single(channel, int(c), n)) for c in counts),
                key=lambda check: check.p_value)
    p = min(1.0, worst.p_value * oracle.d)
    fits = p >= alpha
    direction = None if fits else (
        "option_too_often" if worst.direction == "too_many_yes" else "option_too_rarely")
    return Plausibility(fits, p, worst.statistic, alpha, direction)
