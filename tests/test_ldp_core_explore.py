"""Tests for ldp_core.explore: the derived quantities the self-study pages display."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ldp_core
from ldp_core import (
    BinaryCounts,
    DieRR,
    EpsilonRR,
    ForcedResponse,
    GammaRR,
    TwoCoinRR,
    WarnerRR,
    central_mean_sd,
    chi2_1_quantile,
    empirical_channel,
    error_order,
    error_summary,
    likelihood_profile,
    local_mean_sd,
    posterior_bounds,
    posterior_true_yes,
    share_estimates,
    subsample_counts,
)

DESIGNS = [DieRR(4, 3), TwoCoinRR(), WarnerRR(0.7), WarnerRR(1.0), EpsilonRR(0.5),
           GammaRR(0.1), ForcedResponse(0.6, 0.2)]

NEW_NAMES = {"ErrorSummary", "LikelihoodProfile", "Posterior", "empirical_channel",
             "error_order", "error_summary", "likelihood_profile", "posterior_bounds",
             "posterior_true_yes", "share_estimates", "subsample_counts"}


def test_new_names_are_public():
    assert NEW_NAMES <= set(ldp_core.__all__)
    for name in NEW_NAMES:
        assert getattr(ldp_core, name) is not None


# -- share_estimates -----------------------------------------------------------------------

@pytest.mark.parametrize("design", DESIGNS, ids=repr)
def test_share_estimates_match_binary_counts(design):
    n = 37
    yes = np.arange(n + 1)
    got = share_estimates(design, yes, n)
    want = [BinaryCounts.single(design, int(y), n).unbiased() for y in yes]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_share_estimates_class_exercise_formula():
    n = 40
    v = np.array([0, 13, 40])
    np.testing.assert_allclose(share_estimates(DieRR(4, 3), v, n), 2 * v / n - 0.5)


def test_share_estimates_refuses_no_information_and_bad_counts():
    with pytest.raises(ValueError, match="no information"):
        share_estimates(GammaRR(0.0), [3], 10)
    with pytest.raises(ValueError):
        share_estimates(DieRR(), [11], 10)
    with pytest.raises(ValueError):
        share_estimates(DieRR(), [0], 0)


def test_share_estimates_unbiased_under_exact_sampling():
    design, n, v = DieRR(4, 3), 50, 20
    est = share_estimates(design, design.sample_yes_counts(v, n, size=200_000, rng=7), n)
    sd = BinaryCounts.single(design, 0, n).sd_class_at(v / n)
    se = sd / math.sqrt(est.size)
    assert abs(est.mean() - v / n) < 4 * se
    # the sampling SD is the theoretical one, and a value 30% off is rejected
    assert abs(est.std() / sd - 1) < 0.01
    assert abs(est.std() / (1.3 * sd) - 1) > 0.2


# -- posterior -----------------------------------------------------------------------------

@pytest.mark.parametrize("design", DESIGNS, ids=repr)
def test_posterior_is_bayes_rule_and_within_eps_band(design):
    pi = np.linspace(0.01, 0.99, 99)
    post = posterior_true_yes(design, pi)
    a, b = design.a, design.b
    np.testing.assert_allclose(post.after_yes, pi * a / (pi * a + (1 - pi) * b))
    np.testing.assert_allclose(post.after_no, pi * (1 - a) / (pi * (1 - a) + (1 - pi) * (1 - b)))
    lo, hi = posterior_bounds(pi, design.epsilon)
    for after in (post.after_yes, post.after_no):
        assert np.all(after >= lo - 1e-12) and np.all(after <= hi + 1e-12)
    if math.isinf(design.epsilon):
        assert post.max_odds_factor == math.inf
        return
    assert post.max_odds_factor == pytest.approx(math.exp(design.epsilon))
    for factor in (post.odds_factor_yes, post.odds_factor_no):
        assert abs(math.log(factor)) <= design.epsilon + 1e-12


def test_posterior_bound_is_tight_for_eps_rr():
    eps = 1.3
    post = posterior_true_yes(EpsilonRR(eps), 0.3)
    lo, hi = posterior_bounds(0.3, eps)
    assert post.after_yes == pytest.approx(hi)
    assert post.after_no == pytest.approx(lo)
    assert post.odds_factor_yes == pytest.approx(math.exp(eps))
    # a band 30% narrower in log-odds would be violated
    lo2, hi2 = posterior_bounds(0.3, 0.7 * eps)
    assert post.after_yes > hi2 and post.after_no < lo2


def test_posterior_no_information_and_edge_priors():
    post = posterior_true_yes(GammaRR(0.0), [0.0, 0.2, 1.0])
    np.testing.assert_allclose(post.after_yes, [0.0, 0.2, 1.0])
    np.testing.assert_allclose(post.after_no, [0.0, 0.2, 1.0])
    assert post.max_odds_factor == 1.0
    # Warner p = 1 tells the truth: odds factor infinite, posterior 0 or 1
    post = posterior_true_yes(WarnerRR(1.0), 0.4)
    assert post.after_yes == 1.0 and post.after_no == 0.0
    assert post.odds_factor_yes == math.inf and post.max_odds_factor == math.inf
    assert posterior_bounds(0.4, math.inf) == (0.0, 1.0)
    assert posterior_bounds(1.0, math.inf) == (1.0, 1.0)
    assert posterior_bounds(0.4, 0.0) == pytest.approx((0.4, 0.4))
    with pytest.raises(ValueError):
        posterior_true_yes(DieRR(), 1.5)
    with pytest.raises(ValueError):
        posterior_bounds(0.5, -1.0)


# -- empirical channel -----------------------------------------------------------------------

def test_empirical_channel_converges_to_design_channel():
    design = DieRR(4, 3)
    truth = np.r_[np.ones(100_000, np.uint8), np.zeros(100_000, np.uint8)]
    counts, freqs = empirical_channel(truth, design.perturb(truth, rng=3))
    assert counts.sum() == truth.size
    np.testing.assert_allclose(freqs, design.channel, atol=0.006)
    wrong = np.array([[1 - 0.25 * 1.3, 0.25 * 1.3], [0.25, 0.75]])  # b 30% off
    assert not np.allclose(freqs, wrong, atol=0.006)


def test_empirical_channel_empty_row_is_nan():
    counts, freqs = empirical_channel([1, 1], [1, 0])
    assert counts.tolist() == [[0, 0], [1, 1]]
    assert np.isnan(freqs[0]).all() and freqs[1].tolist() == [0.5, 0.5]
    with pytest.raises(ValueError):
        empirical_channel([1, 0], [1])


# -- error summary and orders ------------------------------------------------------------------

def test_error_summary_identities():
    rng = np.random.default_rng(0)
    est = rng.normal(0.3, 0.1, size=(50, 14))
    truth = rng.random(14)
    s = error_summary(est, truth, axis=-1)
    assert s.rmse.shape == (50,)
    np.testing.assert_allclose(s.rmse**2, s.bias**2 + s.sd**2)
    np.testing.assert_allclose(s.max_abs, np.abs(est - truth).max(axis=-1))
    whole = error_summary(est[:, 0], truth[0])
    assert isinstance(whole.rmse, float)
    assert whole.mean == pytest.approx(est[:, 0].mean())
    with pytest.raises(ValueError):
        error_summary([], 0.0)
    with pytest.raises(ValueError):
        error_summary([np.inf], 0.0)


def test_error_order_against_exact_sds():
    n = np.array([10, 1000, 100_000])
    eps = 0.5
    assert np.allclose(error_order(n, eps, "local") * np.sqrt(n) * eps, 1)
    # the exact local SD is within 5% of 1/(eps sqrt n) at eps = 0.5 ...
    ratio = [local_mean_sd(int(m), eps) / error_order(int(m), eps, "local") for m in n]
    assert np.allclose(ratio, ratio[0]) and abs(ratio[0] - 1) < 0.05
    # ... and the central Laplace SD is sqrt(2) / (eps n)
    ratio = [central_mean_sd(int(m), eps) / error_order(int(m), eps, "central") for m in n]
    assert np.allclose(ratio, math.sqrt(2))
    with pytest.raises(ValueError):
        error_order(0, eps, "local")
    with pytest.raises(ValueError):
        error_order(10, eps, "shuffle")


# -- likelihood profile ------------------------------------------------------------------------

@pytest.mark.parametrize("design,yes,n", [(DieRR(4, 3), 25, 40), (DieRR(4, 3), 2, 40),
                                          (WarnerRR(1.0), 0, 10), (WarnerRR(1.0), 10, 10),
                                          (ForcedResponse(0.5, 0.0), 3, 8)])
def test_likelihood_profile_agrees_with_binary_counts(design, yes, n):
    counts = BinaryCounts.single(design, yes, n)
    grid = np.linspace(0, 1, 501)
    prof = likelihood_profile(counts, grid)
    assert not np.isnan(prof.log_likelihood).any()
    assert not np.isnan(prof.relative_likelihood).any()
    assert not np.isnan(prof.lr_statistic).any()
    assert prof.mle == counts.mle()
    assert prof.relative_likelihood.max() <= 1.0
    assert prof.lr_statistic.min() >= 0.0
    inside = grid[prof.lr_statistic <= chi2_1_quantile(0.95)]
    lo, hi = counts.lr_interval(0.95)
    assert inside.min() >= lo - 1e-9 and inside.max() <= hi + 1e-9
    assert inside.min() - lo < 0.003 and hi - inside.max() < 0.003
    assert prof.cutoff == pytest.approx(prof.max_log_likelihood - chi2_1_quantile(0.95) / 2)
    stat, _ = counts.lr_test(0.5)
    assert likelihood_profile(counts, [0.5]).lr_statistic[0] == pytest.approx(stat)


def test_likelihood_profile_impossible_points_are_inf_not_nan():
    prof = likelihood_profile(BinaryCounts.single(WarnerRR(1.0), 0, 10), [0.0, 1.0])
    assert prof.log_likelihood[1] == -math.inf
    assert prof.relative_likelihood.tolist() == [1.0, 0.0]
    assert prof.lr_statistic[1] == math.inf


def test_likelihood_profile_refuses_empty():
    with pytest.raises(ValueError, match="n = 0"):
        likelihood_profile(BinaryCounts.single(DieRR(), 0, 0), [0.5])
    with pytest.raises(ValueError):
        likelihood_profile(BinaryCounts.single(DieRR(), 1, 2), [1.5])


# -- subsample ---------------------------------------------------------------------------------

def test_subsample_counts():
    pop = np.array([3770, 4066, 9, 149])
    got = subsample_counts(pop, 2000, rng=1)
    assert got.sum() == 2000 and np.all(got <= pop) and np.all(got >= 0)
    assert subsample_counts(pop, int(pop.sum()), rng=2).tolist() == pop.tolist()
    assert subsample_counts(pop, 0, rng=2).tolist() == [0, 0, 0, 0]
    mean = np.mean([subsample_counts(pop, 2000, rng=s) for s in range(400)], axis=0)
    np.testing.assert_allclose(mean, 2000 * pop / pop.sum(), rtol=0.05, atol=1)
    with pytest.raises(ValueError):
        subsample_counts(pop, int(pop.sum()) + 1)
