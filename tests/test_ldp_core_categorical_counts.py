"""ldp_core.CategoricalCounts: grouped frequency-oracle reports, each group corrected with
its own oracle, checked against the oracles' own formulas and by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp_core import (
    GRR,
    CategoricalCounts,
    UnaryEncoding,
    exact_interval,
    interval_coverage,
    norm_sub,
    z_quantile,
)


def test_a_single_group_is_the_oracles_own_estimate():
    oracle = GRR(4, 1.0)
    support = (40, 25, 20, 15)
    counts = CategoricalCounts(((oracle, 100, support),))
    assert np.allclose(counts.raw(), oracle.estimate_counts(np.array(support), 100))
    assert np.allclose(counts.norm_sub(), norm_sub(counts.raw(), 100))
    shares = counts.norm_sub() / 100
    assert np.allclose(counts.sd() ** 2, oracle.count_variance(100, shares))


def test_mixed_groups_add_their_corrected_counts_and_variances():
    a, b = UnaryEncoding.optimized(3, 1.0), UnaryEncoding.symmetric(3, 2.0)
    ca, cb = (30, 20, 10), (50, 35, 25)
    counts = CategoricalCounts(((a, 60, ca), (b, 90, cb)))
    assert counts.n == 150 and counts.support_counts().tolist() == [80, 55, 35]
    want = a.estimate_counts(np.array(ca), 60) + b.estimate_counts(np.array(cb), 90)
    assert np.allclose(counts.raw(), want)
    shares = counts.norm_sub() / 150
    var = np.asarray(a.count_variance(60, shares)) + np.asarray(b.count_variance(90, shares))
    assert np.allclose(counts.sd(), np.sqrt(var))
    assert counts.epsilon == pytest.approx(2.0)


def test_the_estimate_is_unbiased_over_simulated_classes():
    """Mean of raw over 4,000 simulated two-design classes within 4 SE of the truth, and a
    power check: the same test rejects counts that skip one group's correction."""
    truth_a, truth_b = np.array([30, 20, 10]), np.array([40, 40, 10])
    a, b = GRR(3, 1.0), GRR(3, 0.5)
    rng = np.random.default_rng(20261124)
    sa = a.sample_support_counts(truth_a, size=4000, rng=rng)
    sb = b.sample_support_counts(truth_b, size=4000, rng=rng)
    raws = np.array([CategoricalCounts(((a, 60, x), (b, 90, y))).raw()
                     for x, y in zip(sa, sb, strict=True)])
    se = raws.std(axis=0, ddof=1) / np.sqrt(len(raws))
    assert np.all(np.abs(raws.mean(axis=0) - (truth_a + truth_b)) < 4 * se)
    uncorrected = a.estimate_counts(sa, 60) + sb  # group b left as reported
    assert np.any(np.abs(uncorrected.mean(axis=0) - (truth_a + truth_b)) > 4 * se)


def test_no_reports_gives_no_estimate_but_keeps_epsilon():
    counts = CategoricalCounts(((GRR(3, 1.5), 0, (0, 0, 0)),))
    assert counts.raw() is None and counts.norm_sub() is None and counts.sd() is None
    assert counts.epsilon == pytest.approx(1.5)


@pytest.mark.parametrize("groups, message", [
    ((), "at least one"),
    (((GRR(3, 1.0), 5, (1, 2)),), "3 entries"),
    (((GRR(3, 1.0), 5, (1, 2, 2)), (GRR(4, 1.0), 5, (1, 2, 1, 1))), "same d"),
    ((("grr", 5, (1, 2, 2)),), "FrequencyOracle"),
    (((GRR(3, 1.0), -1, (0, 0, 0)),), "n"),
])
def test_bad_groups_are_refused_with_a_clear_message(groups, message):
    with pytest.raises(ValueError, match=message):
        CategoricalCounts(groups)


# -- each option's exact interval -------------------------------------------------------------
_ORACLES = (GRR(4, 1.0), GRR(3, 2.0), UnaryEncoding.optimized(4, 1.0),
            UnaryEncoding.symmetric(3, 3.0))


@pytest.mark.parametrize("oracle", _ORACLES, ids=repr)
def test_each_option_gets_the_yes_no_exact_interval_of_its_channel(oracle):
    """Option v's support count is a yes/no question with a = p and b = q (GRR: q is
    (1 - p) / (d - 1); unary encoding: the bit's p and q)."""
    if isinstance(oracle, GRR):
        assert oracle.q == pytest.approx((1 - oracle.p) / (oracle.d - 1))
    support = tuple(range(1, oracle.d + 1))
    lows, highs = CategoricalCounts(((oracle, 12, support),)).exact_intervals()
    want = exact_interval(oracle.p, oracle.q, 12, np.array(support))
    assert np.allclose(lows, want[0]) and np.allclose(highs, want[1])
    assert np.all(lows <= highs) and lows.min() >= 0 and highs.max() <= 1  # never empty
    assert CategoricalCounts(((oracle, 0, (0,) * oracle.d),)).exact_intervals() is None


def test_several_designs_invert_the_exact_test_of_their_signed_total():
    """Two GRR designs in one round: the ends found by brute force on a grid of shares
    (the binomial tails summed term by term, the accepted shares' min and max)."""
    a, b = GRR(3, 1.0), GRR(3, 2.0)
    counts = CategoricalCounts(((a, 8, (5, 2, 1)), (b, 6, (1, 4, 1))))
    lows, highs = counts.exact_intervals()
    grid = np.linspace(0, 1, 4001)

    def pmf(n, lam):
        return np.array([math.comb(n, k) * lam ** k * (1 - lam) ** (n - k) for k in range(n + 1)])

    for v in range(3):
        t = counts.groups[0][2][v] + counts.groups[1][2][v]
        accepted = []
        for mu in grid:
            total = np.convolve(pmf(8, a.q + (a.p - a.q) * mu), pmf(6, b.q + (b.p - b.q) * mu))
            if total[t:].sum() >= 0.025 and total[: t + 1].sum() >= 0.025:
                accepted.append(mu)
        assert lows[v] == pytest.approx(min(accepted), abs=3e-4)
        assert highs[v] == pytest.approx(max(accepted), abs=3e-4)


@pytest.mark.parametrize("oracle", _ORACLES, ids=repr)
def test_each_option_interval_covers_at_every_share_exactly(oracle):
    """Students drawn from a population: the exact coverage (binomial sums, not simulated)
    is at least 95% at every share on a grid, at n = 1, 2, 5, 10, 30."""
    for n in (1, 2, 5, 10, 30):
        cover = interval_coverage(oracle.p, oracle.q, n, np.linspace(0, 1, 201))
        assert cover.min() >= 0.95, (n, float(cover.min()))


@pytest.mark.parametrize(("oracle", "truth", "seed"), [
    (GRR(4, 1.0), (6, 2, 1, 1), 20261125),
    (GRR(4, 2.0), (10, 0, 0, 0), 20261126),
    (UnaryEncoding.optimized(4, 1.0), (6, 2, 1, 1), 20261127),
    (UnaryEncoding.optimized(3, 3.0), (20, 0, 0), 20261128),
], ids=["grr-eps1-n10", "grr-eps2-all-one", "oue-eps1-n10", "oue-eps3-n20"])
def test_fixed_small_classes_are_covered_and_the_old_interval_is_not(oracle, truth, seed):
    """Fixed classes of 10 or 20, only the randomization varies: 20,000 simulated classes
    each (fixed seed). Every option's exact interval covers its true share in at least
    95% - 3 SE of them (SE = sqrt(.95 .05 / 20,000) = 0.0015). Power check: the interval
    the dashboard used to show, raw ± 1.96 SD, fails the same test for some option."""
    runs = 20_000
    n, d = sum(truth), len(truth)
    share = np.array(truth) / n
    support = oracle.sample_support_counts(truth, size=runs, rng=np.random.default_rng(seed))
    # The interval of a count depends on nothing else: one call per count 0..n gives the
    # table, and a few simulated classes are checked against their own call.
    table = [CategoricalCounts(((oracle, n, (k,) * d),)).exact_intervals() for k in range(n + 1)]
    lows = np.array([[table[k][0][0] for k in row] for row in support])
    highs = np.array([[table[k][1][0] for k in row] for row in support])
    for i in range(3):
        lo, hi = CategoricalCounts(((oracle, n, tuple(support[i])),)).exact_intervals()
        assert np.allclose(lo, lows[i]) and np.allclose(hi, highs[i])
    tolerance = 3 * math.sqrt(0.95 * 0.05 / runs)
    cover = ((lows <= share) & (share <= highs)).mean(axis=0)
    assert cover.min() >= 0.95 - tolerance, cover
    z = z_quantile(0.95)
    old = np.zeros(d)
    for row in support[:4000]:
        counts = CategoricalCounts(((oracle, n, tuple(row)),))
        raw, sd = counts.raw() / n, counts.sd() / n
        old += (raw - z * sd <= share) & (share <= raw + z * sd)
    old_tolerance = 3 * math.sqrt(0.95 * 0.05 / 4000)
    assert (old / 4000).min() < 0.95 - old_tolerance, old / 4000
