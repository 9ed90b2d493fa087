"""Do the reports fit the design at all? A check against ballot stuffing.

Under a binary design with channel (a, b), a class with true share mu in [0, 1]
reports "yes" with probability lambda = b + (a - b) mu, which lies in [b, a]
whatever the class believes. Reports far outside that band are not noise: they
come from repeated votes of one device, from students who did not follow the
randomizer, or from a forged client. Under unary encoding, the number of 1-bits
in a report has the same distribution for every true answer (one bit with p,
d - 1 bits with q: a Poisson-binomial); all-ones reports are far outside it.

Under a numeric mechanism every report is unbiased for its student's value in
[lo, hi], so the mean of an honest class's reports lies in [lo, hi] up to noise;
a mean far beyond the range is stuffing (:func:`numeric_plausibility`: the binary
check for Duchi et al.'s mechanism, which is randomized response on a bit, and a
one-sided normal test on the worst-case SD for the others).

The first two checks are likelihood-ratio (G) tests; all run at :data:`ALPHA` = 1e-4. The alarm
rate is kept very low on purpose: an instructor runs a few questions a lecture
and dozens a term, and a false alarm would accuse honest students; stuffing
worth flagging is far beyond it (one device voting "Yes" 50 times under the die
gives p < 1e-7). The chi-squared approximation of the G statistic is a little
liberal for small classes; at 1e-4 the measured alarm rate on honest classes
stays well under 0.1% (tests/test_ldp_core_plausibility.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .binary import EpsilonRR, ForcedResponse
from .categorical import GRR, UnaryEncoding
from .estimate import BinaryCounts
from .numeric import DuchiMechanism, NumericDesign, NumericEstimate

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
    ``"too_few_yes"``, ``"too_many_ones"``, ``"too_few_ones"``, ``"above_range"`` or
    ``"below_range"`` (a numeric mean beyond the range of answers); None when they fit.
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


def binary_plausibility(counts: BinaryCounts, alpha: float = ALPHA) -> Plausibility:
    """Do these reports fit their designs for some true share in [0, 1]?

    The statistic compares each design group's own reported share (the
    unrestricted fit) with the best single share mu in [0, 1] (the MLE):
    ``G = 2 (l_groups - l(mu_mle))``. With one design G is zero while the
    reported share lies in [b, a]. Its p-value uses chi-squared with one degree
    of freedom per design group, which is conservative at the boundary of [0, 1]
    (there the exact null is a mixture of chi-squared(0) and chi-squared(1)).
    """
    mle = counts.mle()
    if mle is None:
        return Plausibility(True, 1.0, 0.0, alpha, None)
    saturated = 0.0
    for _, _, n, y in counts._groups_abny():
        share = y / n
        if 0 < y < n:
            saturated += y * math.log(share) + (n - y) * math.log1p(-share)
    stat = max(0.0, 2 * (saturated - counts._loglik_scalar(mle)))
    p = chi2_sf(stat, len(counts._groups_abny()))
    fits = p >= alpha
    direction = None if fits else ("too_many_yes" if mle >= 0.5 else "too_few_yes")
    return Plausibility(fits, p, stat, alpha, direction)


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

    ``ones_histogram[k]`` is the number of reports with k ones (k = 0..d). A
    G-test on cells pooled from the tails inward until each expects at least 5
    reports; chi-squared with (cells - 1) degrees of freedom.
    """
    h = np.asarray(ones_histogram, dtype=float)
    if h.shape != (oracle.d + 1,) or np.any(h < 0):
        raise ValueError(f"ones_histogram needs {oracle.d + 1} non-negative counts")
    n = float(h.sum())
    if n == 0:
        return Plausibility(True, 1.0, 0.0, alpha, None)
    expected = ones_distribution(oracle) * n
    obs, exp = _pool(h, expected)
    if len(obs) < 2:
        return Plausibility(True, 1.0, 0.0, alpha, None)
    mask = obs > 0
    stat = float(2 * np.sum(obs[mask] * np.log(obs[mask] / exp[mask])))
    p = chi2_sf(max(0.0, stat), len(obs) - 1)
    fits = p >= alpha
    mean_seen = float(np.arange(oracle.d + 1) @ h) / n
    mean_expected = oracle.p + (oracle.d - 1) * oracle.q
    direction = None if fits else (
        "too_many_ones" if mean_seen > mean_expected else "too_few_ones")
    return Plausibility(fits, p, stat, alpha, direction)


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


def numeric_plausibility(groups: Sequence[tuple[NumericDesign, object]],
                         alpha: float = ALPHA) -> Plausibility:
    """Do these numeric reports fit some class with values in [lo, hi]?

    ``groups`` are ``(design, reports on the [-1, 1] scale)``, as for
    :meth:`NumericEstimate.from_groups`. Duchi et al.'s mechanism is randomized
    response on a bit whose mean is ``(1 + x) / 2``, so its reports get the exact
    :func:`binary_plausibility` of ``EpsilonRR(eps)`` on their ``+c_eps`` counts.
    Otherwise the statistic is the distance of the mean beyond the range in
    worst-case SDs, ``z = (mean - hi) / sd_worst`` (or ``(lo - mean) / sd_worst``), 0
    inside it, with the normal tail ``P(Z > z)`` as p-value; the Piecewise Mechanism's
    variance is largest at the ends of the range and the Laplace mechanism's is flat, so
    the worst case is the class at the edge.

    >>> from ldp_core import numeric_design_from_params
    >>> pm = numeric_design_from_params({"design": "piecewise", "epsilon": 1.0,
    ...                                  "lo": 0, "hi": 12})
    >>> numeric_plausibility([(pm, [pm.mechanism.big_c] * 40)]).direction
    'above_range'
    """
    if groups and all(isinstance(d.mechanism, DuchiMechanism) for d, _ in groups):
        parts = []
        for design, reports in groups:
            arr = np.asarray(reports, dtype=float).ravel()
            if arr.size:
                parts.append((EpsilonRR(design.mechanism.epsilon), int(arr.size),
                               int((arr > 0).sum())))
        if not parts:
            return Plausibility(True, 1.0, 0.0, alpha, None)
        check = binary_plausibility(BinaryCounts(tuple(parts)), alpha)
        direction = None if check.fits else \
            "above_range" if check.direction == "too_many_yes" else "below_range"
        return Plausibility(check.fits, check.p_value, check.statistic, alpha, direction)
    est = NumericEstimate.from_groups(
        [(d, np.asarray(r, dtype=float)) for d, r in groups]) if groups else None
    if est is None or est.mean is None or not est.sd_worst:
        return Plausibility(True, 1.0, 0.0, alpha, None)
    beyond = max(est.mean - est.hi, est.lo - est.mean, 0.0)
    z = beyond / est.sd_worst
    p = 0.5 * math.erfc(z / math.sqrt(2))
    fits = p >= alpha
    direction = None if fits else ("above_range" if est.mean > est.hi else "below_range")
    return Plausibility(fits, p, z, alpha, direction)


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
