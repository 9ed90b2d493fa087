"""ldp_core.trust: the four models' SDs of the estimated share, the check value, and a
fixed-seed simulation that must agree with each formula within its standard error and reject
a formula 30% off (the power check)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp_core import (
    EpsilonRR,
    ModelSDs,
    central_mean_sd,
    federated_share_sd,
    local_mean_sd,
    model_share_sds,
    sd_with_se,
    shuffle_epsilon,
    shuffle_local_epsilon,
    simulate_model_shares,
)

#: How many standard errors a simulated SD may stray from its formula (two-sided 1e-4).
Z_ACCEPT = 3.9
#: A formula this far off (±30%) must be rejected by the same test.
OFF = 0.30
CLASSES = 20_000
MODELS = ModelSDs._fields[:4]


def test_the_course_check_value():
    assert federated_share_sd(30, 1.0, 6) == pytest.approx(math.sqrt(12) / 30)
    assert round(federated_share_sd(30, 1.0, 6), 4) == 0.1155
    assert round(model_share_sds(30, 1.0, 1e-6, 6).federated, 4) == 0.1155


def test_federated_interpolates_central_and_one_noise_per_student():
    assert federated_share_sd(40, 0.5, 1) == central_mean_sd(40, 0.5)
    assert federated_share_sd(40, 0.5, 40) == pytest.approx(math.sqrt(2 / 40) / 0.5)
    sds = [federated_share_sd(40, 0.5, k) for k in range(1, 41)]
    assert all(a < b for a, b in zip(sds, sds[1:], strict=False))


@pytest.mark.parametrize(("n", "eps", "delta"), [(30, 1.0, 1e-6), (300, 0.5, 1e-5),
                                                 (2000, 1.0, 1e-8)])
def test_the_models_in_their_order_and_the_shuffle_one_from_its_inverse(n, eps, delta):
    s = model_share_sds(n, eps, delta, 6)
    assert s.local == local_mean_sd(n, eps)
    assert s.central == central_mean_sd(n, eps)
    assert s.shuffle_local_epsilon == shuffle_local_epsilon(n, eps, delta)
    assert s.shuffle == local_mean_sd(n, s.shuffle_local_epsilon)
    assert shuffle_epsilon(EpsilonRR(s.shuffle_local_epsilon), n, delta) <= eps * (1 + 1e-9)
    assert s.local >= s.shuffle > s.central
    assert s.federated > s.central


def _accepts(sample: np.ndarray, sd: float) -> bool:
    s, se = sd_with_se(sample)
    return abs(s - sd) <= Z_ACCEPT * se


@pytest.mark.parametrize(("n", "eps", "delta", "k", "share"),
                         [(30, 1.0, 1e-6, 6, 0.5), (200, 0.5, 1e-6, 20, 0.3),
                          (1000, 2.0, 1e-7, 1000, 0.9)])
def test_simulation_agrees_with_each_formula_and_rejects_a_wrong_one(n, eps, delta, k, share):
    formulas = model_share_sds(n, eps, delta, k)
    sim = simulate_model_shares(n, eps, delta, k, true_share=share, size=CLASSES,
                                rng=[n, k, 2025])
    truth = math.floor(share * n + 0.5) / n
    for model in MODELS:
        sample, sd = getattr(sim, model), getattr(formulas, model)
        assert _accepts(sample, sd), (model, sd_with_se(sample), sd)
        # unbiased: the mean within its SE of the true share
        assert abs(sample.mean() - truth) <= Z_ACCEPT * sd / math.sqrt(CLASSES), model
        # power: the same test rejects a formula 30% off either way
        assert not _accepts(sample, sd * (1 + OFF)), model
        assert not _accepts(sample, sd * (1 - OFF)), model


def test_simulation_is_reproducible_from_its_seed():
    a = simulate_model_shares(30, 1.0, 1e-6, 6, size=100, rng=5)
    b = simulate_model_shares(30, 1.0, 1e-6, 6, size=100, rng=5)
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(x, y)


def test_sd_with_se_matches_the_spread_of_repeated_sds():
    """The SE that sd_with_se reports is the SD of the SDs over many repetitions (normal and
    Laplace samples alike)."""
    gen = np.random.default_rng(11)
    for draw in (lambda size: gen.normal(0, 1, size), lambda size: gen.laplace(0, 1, size)):
        samples = draw((400, 2_000))
        sds = samples.std(axis=1, ddof=1)
        reported = np.mean([sd_with_se(row)[1] for row in samples])
        assert reported == pytest.approx(sds.std(ddof=1), rel=0.15)


def test_bad_input_is_refused_with_a_message():
    with pytest.raises(ValueError, match="k must be an integer in 1..30"):
        model_share_sds(30, 1.0, 1e-6, 31)
    with pytest.raises(ValueError, match="delta"):
        model_share_sds(30, 1.0, 0.0, 3)
    with pytest.raises(ValueError, match="epsilon"):
        simulate_model_shares(30, 0.0, 1e-6, 3)
    with pytest.raises(ValueError, match="at least two"):
        sd_with_se([1.0])
