"""Statistical helpers for the ldp_core tests, and tests of the helpers themselves.

Only the standard library and numpy: the test suite must not depend on scipy
(scipy, when installed, is used below to cross-check these helpers only).

Every statistical test in the ldp_core suite uses the same false-alarm rate
``ALPHA`` (about one spurious failure in a million runs per test) and derives
its tolerance from a standard error, never from a hand-picked number.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

#: Probability that a correct sampler fails one statistical test.
ALPHA = 1e-6

#: Two-sided normal critical value at ALPHA (4.8916...).
Z_CRIT = NormalDist().inv_cdf(1 - ALPHA / 2)


def z_crit(alpha: float = ALPHA) -> float:
    """Two-sided standard normal critical value at ``alpha``."""
    return NormalDist().inv_cdf(1 - alpha / 2)


def chi2_sf(x: float, k: int) -> float:
    """P(chi-squared with k degrees of freedom > x), in closed form for integer k.

    Even k: ``e^{-x/2} sum_{i < k/2} (x/2)^i / i!``.
    Odd k: ``erfc(sqrt(x/2)) + e^{-x/2} sum_{i=1}^{(k-1)/2} (x/2)^{i-1/2} / Gamma(i + 1/2)``.
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    if x <= 0:
        return 1.0
    h = x / 2
    if k % 2 == 0:
        term, total = 1.0, 1.0
        for i in range(1, k // 2):
            term *= h / i
            total += term
        return math.exp(-h) * total
    total = math.erfc(math.sqrt(h))
    term = math.sqrt(h) / math.gamma(1.5)  # i = 1: h^{1/2} / Gamma(3/2)
    for i in range(1, (k - 1) // 2 + 1):
        total += math.exp(-h) * term
        term *= h / (i + 0.5)
    return total


def chi2_crit(k: int, alpha: float = ALPHA) -> float:
    """The (1 - alpha) quantile of chi-squared with k degrees of freedom (bisection)."""
    lo, hi = 0.0, 10.0 * k + 200.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if chi2_sf(mid, k) > alpha:
            lo = mid
        else:
            hi = mid
    return hi


def binomial_z(count: float, n: float, p: float) -> float:
    """z-score of a Binomial(n, p) count."""
    return (count - n * p) / math.sqrt(n * p * (1 - p))


def chi2_gof(observed: np.ndarray, probs: np.ndarray) -> tuple[float, int]:
    """Pearson goodness of fit of counts to cell probabilities: (statistic, df)."""
    obs = np.asarray(observed, dtype=float).ravel()
    pr = np.asarray(probs, dtype=float).ravel()
    assert abs(pr.sum() - 1) < 1e-9
    exp = obs.sum() * pr
    assert exp.min() >= 5, "too few expected counts for the chi-square approximation"
    return float(np.sum((obs - exp) ** 2 / exp)), obs.size - 1


def chi2_homogeneity(sample_a: np.ndarray, sample_b: np.ndarray, min_expected: float = 5.0
                     ) -> tuple[float, int]:
    """Two-sample chi-square test that two integer samples share one distribution.

    Values are binned by integer; sparse tails are merged until each pooled
    bin's expected count per sample is at least ``min_expected``.
    """
    a = np.asarray(sample_a).ravel().astype(np.int64)
    b = np.asarray(sample_b).ravel().astype(np.int64)
    lo = min(a.min(), b.min())
    ca = np.bincount(a - lo)
    cb = np.bincount(b - lo, minlength=ca.size)
    ca = np.pad(ca, (0, cb.size - ca.size))
    # merge adjacent values into bins with enough pooled mass
    bins_a, bins_b, acc_a, acc_b = [], [], 0, 0
    frac_a = a.size / (a.size + b.size)
    frac_b = 1 - frac_a
    for xa, xb in zip(ca, cb, strict=True):
        acc_a += xa
        acc_b += xb
        pooled = acc_a + acc_b
        if pooled * min(frac_a, frac_b) >= min_expected:
            bins_a.append(acc_a)
            bins_b.append(acc_b)
            acc_a = acc_b = 0
    if acc_a + acc_b:
        bins_a[-1] += acc_a
        bins_b[-1] += acc_b
    oa, ob = np.array(bins_a, float), np.array(bins_b, float)
    pooled = oa + ob
    ea, eb = pooled * frac_a, pooled * frac_b
    stat = float(np.sum((oa - ea) ** 2 / ea) + np.sum((ob - eb) ** 2 / eb))
    return stat, oa.size - 1


def bernoulli_sum_cumulants(probs: np.ndarray, counts: np.ndarray | None = None
                            ) -> tuple[float, float, float]:
    """Mean, variance and 4th cumulant of a sum of independent Bernoullis.

    ``probs[i]`` appears ``counts[i]`` times. Bernoulli(p) has
    ``k2 = p(1-p)`` and ``k4 = p(1-p)(1 - 6p(1-p))``; cumulants add.
    """
    p = np.asarray(probs, dtype=float)
    c = np.ones_like(p) if counts is None else np.asarray(counts, dtype=float)
    v = p * (1 - p)
    return float(np.sum(c * p)), float(np.sum(c * v)), float(np.sum(c * v * (1 - 6 * v)))


def sample_variance_se(variance: float, kappa4: float, t: int) -> float:
    """Standard error of the sample variance of t i.i.d. draws: ``sqrt((k4 + 2 s^4) / t)``.

    (Exact to O(1/t^2): Var(s^2) = k4 / t + 2 s^4 / (t - 1).)
    """
    return math.sqrt(kappa4 / t + 2 * variance**2 / (t - 1))


def variance_z(sample: np.ndarray, variance: float, kappa4: float) -> float:
    """z-score of a sample's variance against the claimed variance and 4th cumulant."""
    x = np.asarray(sample, dtype=float)
    return (float(x.var(ddof=1)) - variance) / sample_variance_se(variance, kappa4, x.size)


def mean_z(sample: np.ndarray, mean: float, variance: float) -> float:
    """z-score of a sample mean against the claimed mean and variance."""
    x = np.asarray(sample, dtype=float)
    return (float(x.mean()) - mean) / math.sqrt(variance / x.size)


# -- tests of the helpers ----------------------------------------------------------------


def test_critical_values_match_known_quantiles() -> None:
    assert Z_CRIT == pytest.approx(4.891638, abs=1e-6)
    assert chi2_crit(1) == pytest.approx(Z_CRIT**2, rel=1e-9)
    assert chi2_crit(2) == pytest.approx(-2 * math.log(ALPHA), rel=1e-9)
    assert chi2_crit(1, 0.05) == pytest.approx(3.841459, abs=1e-6)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 7, 10, 13])
def test_chi2_sf_is_a_survival_function(k: int) -> None:
    # integrate the density numerically: sf(x) = int_x^inf density
    xs = np.linspace(1e-9, 200, 400_001)
    dens = np.exp((k / 2 - 1) * np.log(xs) - xs / 2 - math.lgamma(k / 2) - k / 2 * math.log(2))
    for x0 in (0.5, k, 3 * k + 5):
        mask = xs >= x0
        tail = float(np.trapezoid(dens[mask], xs[mask]))
        assert chi2_sf(x0, k) == pytest.approx(tail, rel=1e-4, abs=1e-8)


def test_chi2_sf_against_scipy_when_available() -> None:
    stats = pytest.importorskip("scipy.stats")
    for k in range(1, 30):
        for x in (0.1, 1.0, k, 2.0 * k, 60.0):
            assert chi2_sf(x, k) == pytest.approx(stats.chi2.sf(x, k), rel=1e-9, abs=1e-300)


def test_homogeneity_test_accepts_same_and_rejects_different() -> None:
    rng = np.random.default_rng(11)
    same = chi2_homogeneity(rng.binomial(100, 0.3, 20_000), rng.binomial(100, 0.3, 20_000))
    assert same[0] < chi2_crit(same[1])
    diff = chi2_homogeneity(rng.binomial(100, 0.3, 20_000), rng.binomial(100, 0.32, 20_000))
    assert diff[0] > chi2_crit(diff[1])


def test_bernoulli_cumulants_match_binomial() -> None:
    n, p = 40, 0.3
    m, v, k4 = bernoulli_sum_cumulants(np.array([p]), np.array([n]))
    assert m == pytest.approx(n * p)
    assert v == pytest.approx(n * p * (1 - p))
    # 4th central moment of a binomial: n p q (1 + 3 (n - 2) p q)
    mu4 = n * p * (1 - p) * (1 + 3 * (n - 2) * p * (1 - p))
    assert k4 == pytest.approx(mu4 - 3 * v**2)
