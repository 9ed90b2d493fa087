"""ldp_core.CategoricalCounts: grouped frequency-oracle reports, each group corrected with
its own oracle, checked against the oracles' own formulas and by simulation."""

from __future__ import annotations

import numpy as np
import pytest

from ldp_core import GRR, CategoricalCounts, UnaryEncoding, norm_sub


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
