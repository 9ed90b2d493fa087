"""Bad input is refused with a ValueError naming the parameter; property tests of
validation, conversions, parameter round trips and device sampling weights."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import ldp_core
from ldp_core import (
    GRR,
    OLH,
    BinaryCounts,
    DieRR,
    EpsilonRR,
    ForcedResponse,
    GammaRR,
    TwoCoinRR,
    UnaryEncoding,
    WarnerRR,
)

NAN, INF = float("nan"), float("inf")
ok_counts = BinaryCounts.single(DieRR(4, 3), 30, 40)

# (callable, the parameter name the message must contain)
BAD_INPUT = [
    # epsilon <= 0, NaN, inf, above the cap, not a number
    (lambda: EpsilonRR(0), "epsilon"),
    (lambda: EpsilonRR(-1.0), "epsilon"),
    (lambda: EpsilonRR(NAN), "epsilon"),
    (lambda: EpsilonRR(INF), "epsilon"),
    (lambda: EpsilonRR(21.0), "epsilon"),
    (lambda: EpsilonRR(1e-7), "epsilon"),  # p - q would be lost in rounding
    (lambda: GRR(2, 1e-98), "epsilon"),
    (lambda: EpsilonRR("1"), "epsilon"),
    (lambda: EpsilonRR(True), "epsilon"),
    (lambda: GRR(3, 0.0), "epsilon"),
    (lambda: GRR(3, NAN), "epsilon"),
    (lambda: GRR(3, -INF), "epsilon"),
    (lambda: GRR(3, 51.0), "epsilon"),
    (lambda: OLH(3, 0.0), "epsilon"),
    (lambda: UnaryEncoding.symmetric(3, -1.0), "epsilon"),
    (lambda: UnaryEncoding.optimized(3, INF), "epsilon"),
    (lambda: ldp_core.epsilon_to_gamma(-0.1), "epsilon"),
    (lambda: ldp_core.epsilon_to_gamma(NAN), "epsilon"),
    (lambda: ldp_core.epsilon_to_gamma(40.0), "epsilon"),
    (lambda: ldp_core.pm1_mean_estimate([1, -1], 0.0), "epsilon"),
    (lambda: ldp_core.pm1_mean_estimate([], -1.0), "epsilon"),
    (lambda: ldp_core.recommend_oracle(5, 0.0), "epsilon"),
    (lambda: ldp_core.max_error_scale(10, 5, 0.0), "epsilon"),
    (lambda: ldp_core.laplace_mechanism(1.0, 1.0, 0.0), "epsilon"),
    (lambda: ldp_core.central_mean_sd(10, NAN), "epsilon"),
    (lambda: ldp_core.local_mean_sd(10, -1.0), "epsilon"),
    # gamma outside [0, 1/2)
    (lambda: GammaRR(-0.01), "gamma"),
    (lambda: GammaRR(0.5), "gamma"),
    (lambda: GammaRR(NAN), "gamma"),
    (lambda: GammaRR(0.49999999999999994), "gamma"),  # the float channel would never lie
    (lambda: ldp_core.gamma_to_epsilon(0.5), "gamma"),
    (lambda: ldp_core.gamma_to_epsilon(-INF), "gamma"),
    # p <= q, p and q out of range
    (lambda: UnaryEncoding(3, 0.25, 0.75), "p"),
    (lambda: UnaryEncoding(3, 0.5, 0.5), "p"),
    (lambda: UnaryEncoding(3, 1.0, 0.25), "p"),
    (lambda: UnaryEncoding(3, NAN, 0.25), "p"),
    (lambda: UnaryEncoding(3, 0.75, 0.0), "q"),
    (lambda: UnaryEncoding(3, 0.75, -0.1), "q"),
    (lambda: ldp_core.grr_em([3, 2, 1], 0.25, 0.5), "p"),
    (lambda: ldp_core.grr_em([3, 2, 1], 0.5, 0.3), "q"),
    # a == b: no information
    (lambda: WarnerRR(0.5), "p"),
    (lambda: WarnerRR(1.5), "p"),
    (lambda: BinaryCounts.single(GammaRR(0.0), 1, 2), "design"),
    (lambda: BinaryCounts.single("die", 1, 2), "design"),
    (lambda: DieRR(4, 2), "truthful"),
    # the die: t in 1..k-1
    (lambda: DieRR(4, 0), "truthful"),
    (lambda: DieRR(4, 4), "truthful"),
    (lambda: DieRR(6, -1), "truthful"),
    (lambda: DieRR(4, 2.5), "truthful"),
    (lambda: DieRR(1, 1), "faces"),
    (lambda: DieRR(4.5, 3), "faces"),
    (lambda: ForcedResponse(0.0, 0.5), "p_truth"),
    (lambda: ForcedResponse(0.6, 0.5), "p_truth"),
    (lambda: ForcedResponse(0.5, -0.1), "p_yes"),
    (lambda: ForcedResponse(0.5, NAN), "p_yes"),
    # counts negative or above n
    (lambda: BinaryCounts.single(DieRR(), -1, 10), "yes"),
    (lambda: BinaryCounts.single(DieRR(), 11, 10), "yes"),
    (lambda: BinaryCounts.single(DieRR(), 1.5, 10), "yes"),
    (lambda: BinaryCounts.single(DieRR(), 0, -1), "n"),
    (lambda: BinaryCounts(()), "group"),
    (lambda: BinaryCounts.from_reports(DieRR(), [0, 1, 2]), "reports"),
    (lambda: DieRR().perturb([0, 1, 2]), "truth"),
    (lambda: DieRR().perturb(["yes"]), "truth"),
    (lambda: DieRR().sample_yes_counts(5, 4), "n_true_yes"),
    (lambda: DieRR().sample_yes_counts(0, -4), "n"),
    (lambda: GRR(3, 1.0).estimate_counts([-1, 2, 3], 4), "support_counts"),
    (lambda: GRR(3, 1.0).estimate_counts([5, 2, 3], 4), "support_counts"),
    (lambda: GRR(3, 1.0).estimate_counts([1, 2], 4), "support_counts"),
    (lambda: GRR(3, 1.0).estimate_counts([1.5, 2, 3], 4), "support_counts"),
    (lambda: GRR(3, 1.0).estimate_counts([1e300, 2, 3], 4), "support_counts"),
    (lambda: GRR(3, 1.0).perturb([1e300]), "values"),
    (lambda: GRR(3, 1.0).estimate_counts([1, 2, 3], -4), "n"),
    (lambda: GRR(3, 1.0).sample_support_counts([1, -2, 3]), "true_counts"),
    (lambda: UnaryEncoding.optimized(3, 1.0).sample_support_counts([1, 2]), "true_counts"),
    (lambda: GRR(3, 1.0).count_variance(-1), "n"),
    (lambda: GRR(3, 1.0).count_variance(10, [0.5, 1.5, 0.0]), "true_shares"),
    (lambda: GRR(3, 1.0).count_variance(10, [NAN, 0.5, 0.0]), "true_shares"),
    (lambda: ldp_core.grr_em([1, -2, 3], 0.5, 0.25), "reported_counts"),
    (lambda: ldp_core.max_error_scale(-1, 5, 1.0), "n"),
    (lambda: ldp_core.central_mean_sd(0, 1.0), "n"),
    (lambda: ldp_core.local_n_for_central_accuracy(0, 1.0), "n_central"),
    # d < 2
    (lambda: GRR(1, 1.0), "d"),
    (lambda: UnaryEncoding(1, 0.75, 0.25), "d"),
    (lambda: UnaryEncoding.optimized(0, 1.0), "d"),
    (lambda: OLH(1, 1.0), "d"),
    (lambda: GRR(2.5, 1.0), "d"),
    (lambda: ldp_core.recommend_oracle(1, 1.0), "d"),
    (lambda: OLH(5, 1.0, g=1), "g"),
    # unknown categories
    (lambda: GRR(3, 1.0).perturb([0, 3]), "values"),
    (lambda: GRR(3, 1.0).perturb([0.5]), "values"),
    (lambda: UnaryEncoding.optimized(3, 1.0).perturb([-1]), "values"),
    (lambda: OLH(3, 1.0).perturb([7]), "values"),
    (lambda: GRR(3, 1.0).simulate_support_counts([0, 1, 9]), "values"),
    (lambda: GRR(3, 1.0).support_counts([0, 4]), "reports"),
    (lambda: UnaryEncoding.optimized(3, 1.0).support_counts(np.zeros((4, 2))), "reports"),
    (lambda: GRR(3, 1.0).simulate_support_counts([0], chunk=0), "chunk"),
    # estimators and tests
    (lambda: ok_counts.sd_at(1.5), "mu"),
    (lambda: ok_counts.sd_class_at(NAN), "mu"),
    (lambda: ok_counts.lr_statistic(-0.1), "mu0"),
    (lambda: ok_counts.lr_test(2.0), "mu0"),
    (lambda: ok_counts.normal_interval(1.0), "level"),
    (lambda: ok_counts.normal_interval(sd="best"), "sd"),
    (lambda: ok_counts.lr_interval(0.0), "level"),
    (lambda: ok_counts.summary(level=NAN), "level"),
    (lambda: ldp_core.z_quantile(1.5), "level"),
    (lambda: ldp_core.chi2_1_quantile(-0.5), "level"),
    (lambda: ldp_core.pm1_mean_estimate([1, 0], 1.0), "reports_pm1"),
    # parameters dicts
    (lambda: ldp_core.binary_design_from_params({"design": "coin"}), "design"),
    (lambda: ldp_core.binary_design_from_params({"faces": 4}), "design"),
    (lambda: ldp_core.binary_design_from_params({"design": "die", "sides": 4}), "design"),
    (lambda: ldp_core.categorical_oracle_from_params({"design": "rappor"}), "design"),
    (lambda: ldp_core.categorical_oracle_from_params({"design": "grr", "k": 3}), "grr"),
    # central model, composition, values in [0, 1]
    (lambda: ldp_core.laplace_mechanism(1.0, 0.0, 1.0), "sensitivity"),
    (lambda: ldp_core.laplace_mechanism(NAN, 1.0, 1.0), "value"),
    (lambda: ldp_core.laplace_mechanism("ten", 1.0, 1.0), "value"),
    (lambda: ldp_core.sequential_composition([1.0, -1.0]), "epsilons"),
    (lambda: ldp_core.sequential_composition([1.0, INF]), "epsilons"),
    (lambda: ldp_core.sequential_composition(["a"]), "epsilons"),
    (lambda: ldp_core.randomized_round([0.5, 1.5]), "values"),
    (lambda: ldp_core.randomized_round([NAN]), "values"),
    (lambda: ldp_core.randomized_round(["x"]), "values"),
    # post-processing
    (lambda: ldp_core.norm_sub([1.0, NAN], 1.0), "estimate"),
    (lambda: ldp_core.norm_sub(3.0, 1.0), "estimate"),
    (lambda: ldp_core.norm_sub([1.0, 2.0], -1.0), "total"),
    (lambda: ldp_core.norm_sub([1.0, 2.0], INF), "total"),
    (lambda: ldp_core.clip_counts([1.0, INF]), "estimate"),
    (lambda: ldp_core.grr_em([3, 2, 1], 0.5, 0.25, method="ibu"), "method"),
    (lambda: ldp_core.grr_em([3, 2, 1], 0.5, 0.25, max_iter=0), "max_iter"),
]


@pytest.mark.parametrize(("call", "param"), BAD_INPUT,
                         ids=[f"{i}-{p}" for i, (_, p) in enumerate(BAD_INPUT)])
def test_bad_input_raises_value_error_naming_the_parameter(call, param: str) -> None:
    with pytest.raises(ValueError, match=param):
        call()


def test_messages_state_the_allowed_range() -> None:
    with pytest.raises(ValueError, match=r"gamma must be in \[0, 0.5\)"):
        GammaRR(0.7)
    with pytest.raises(ValueError, match=r"truthful must be an integer in 1..3"):
        DieRR(4, 4)
    with pytest.raises(ValueError, match=r"epsilon must be > 0"):
        EpsilonRR(-1)
    with pytest.raises(ValueError, match=r"unknown category 5; allowed 0..2"):
        GRR(3, 1.0).perturb([5])


def test_gamma_zero_is_constructible_but_carries_no_information() -> None:
    g = GammaRR(0.0)
    assert g.a == g.b == 0.5 and g.epsilon == 0.0 and not g.informative
    assert np.all(np.isin(g.perturb([0, 1, 1, 0], rng=0), [0, 1]))


def test_n_zero_never_raises_for_samplers() -> None:
    assert DieRR().sample_yes_counts(0, 0) == 0
    assert DieRR().sample_yes_counts(0, 0, size=3).tolist() == [0, 0, 0]
    assert DieRR().perturb([]).size == 0
    assert ldp_core.pm1_mean_estimate([], 1.0) is None


# -- hypothesis: validation never crashes with anything but ValueError -------------------------

ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True)
ANYTHING = st.one_of(ANY_FLOAT, st.integers(-10**6, 10**6), st.none(), st.booleans(),
                     st.text(max_size=3))


def _only_value_errors(call) -> object:
    try:
        return call()
    except ValueError:
        return None


@settings(max_examples=150, deadline=None, derandomize=True)
@given(x=ANYTHING, y=ANYTHING)
def test_binary_constructors_accept_or_refuse_cleanly(x, y) -> None:
    for build in (lambda: EpsilonRR(x), lambda: GammaRR(x), lambda: WarnerRR(x),
                  lambda: ForcedResponse(x, y), lambda: DieRR(x, y)):
        design = _only_value_errors(build)
        if design is not None:
            assert 0.0 <= design.a <= 1.0 and 0.0 <= design.b <= 1.0
            assert not math.isnan(design.epsilon) and design.epsilon >= 0
            assert ldp_core.binary_design_from_params(design.params()) == design


@settings(max_examples=150, deadline=None, derandomize=True)
@given(d=st.one_of(st.integers(-3, 40), ANY_FLOAT), x=ANYTHING, y=ANYTHING)
def test_oracle_constructors_accept_or_refuse_cleanly(d, x, y) -> None:
    for build in (lambda: GRR(d, x), lambda: OLH(d, x), lambda: UnaryEncoding(d, x, y),
                  lambda: UnaryEncoding.symmetric(d, x), lambda: UnaryEncoding.optimized(d, x)):
        oracle = _only_value_errors(build)
        if oracle is not None:
            assert 0.0 < oracle.q < oracle.p <= 1.0
            assert oracle.epsilon > 0 and math.isfinite(oracle.epsilon)
            assert ldp_core.categorical_oracle_from_params(oracle.params()) == oracle


@settings(max_examples=150, deadline=None, derandomize=True)
@given(x=ANYTHING, n=st.one_of(st.integers(-5, 50), ANY_FLOAT),
       yes=st.one_of(st.integers(-5, 50), ANY_FLOAT))
@example(x=0.0, n=1.8769414780634633e+22, yes=0)  # a count no float holds exactly
def test_estimators_accept_or_refuse_cleanly(x, n, yes) -> None:
    counts = _only_value_errors(lambda: BinaryCounts.single(DieRR(4, 3), yes, n))
    if counts is not None:
        s = counts.summary()
        for v in (s.mu_hat, s.sd_worst, s.sd_plugin, s.mle, s.lr_low, s.lr_high):
            assert v is None or math.isfinite(v)
    for call in (lambda: ok_counts.sd_at(x), lambda: ok_counts.lr_test(x),
                 lambda: ok_counts.normal_interval(x), lambda: ldp_core.z_quantile(x),
                 lambda: ldp_core.gamma_to_epsilon(x), lambda: ldp_core.epsilon_to_gamma(x),
                 lambda: ldp_core.laplace_mechanism(x, 1.0, 1.0, rng=0),
                 lambda: ldp_core.laplace_mechanism(0.0, x, x, rng=0),
                 lambda: ldp_core.pm1_mean_estimate([1, -1], x),
                 lambda: ldp_core.sequential_composition([x]),
                 lambda: ldp_core.randomized_round([x], rng=0),
                 lambda: ldp_core.norm_sub([x, 1.0], 1.0),
                 lambda: ldp_core.norm_sub([1.0, 2.0], x),
                 lambda: ldp_core.clip_counts([x]),
                 lambda: GRR(3, 1.0).count_variance(10, [x, 0.5, 0.0]),
                 lambda: GRR(3, 1.0).estimate_counts([x, 1, 1], 5)):
        out = _only_value_errors(call)
        if isinstance(out, float):
            assert not math.isnan(out)


# -- hypothesis: conversions and round trips ---------------------------------------------------


@settings(max_examples=200, deadline=None, derandomize=True)
@given(gamma=st.floats(0.0, 0.5, exclude_max=True))
def test_gamma_epsilon_gamma_round_trip(gamma: float) -> None:
    eps = ldp_core.gamma_to_epsilon(gamma)
    assert eps >= 0
    if eps < 38:  # beyond, tanh rounds to 1 and epsilon_to_gamma refuses
        assert ldp_core.epsilon_to_gamma(eps) == pytest.approx(gamma, abs=2e-16, rel=1e-14)
    if gamma <= GammaRR.MAX_GAMMA:
        assert GammaRR(gamma).epsilon == pytest.approx(eps, abs=1e-12 + 4 * 2**-53 / (0.5 - gamma))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(eps=st.floats(0.0, 30.0))
def test_epsilon_gamma_epsilon_round_trip(eps: float) -> None:
    """1/2 - gamma = 1 / (1 + e^eps) is held to one rounding of 1/2, which moves
    epsilon by about 2^-53 (1 + e^eps)."""
    gamma = ldp_core.epsilon_to_gamma(eps)
    assert 0.0 <= gamma < 0.5
    tol = 1e-13 * max(1.0, eps) + 4 * 2**-53 * (1 + math.exp(eps))
    assert ldp_core.gamma_to_epsilon(gamma) == pytest.approx(eps, abs=tol)
    if EpsilonRR.MIN_EPSILON <= eps <= EpsilonRR.MAX_EPSILON:
        assert EpsilonRR(eps).epsilon == pytest.approx(eps, abs=tol)
        assert EpsilonRR(eps).a - 0.5 == pytest.approx(gamma, abs=4 * 2**-53)


def _die(faces: int, truthful: int) -> DieRR | None:
    return None if 2 * truthful == faces else DieRR(faces, truthful)


BINARY = st.one_of(
    st.builds(EpsilonRR, st.floats(EpsilonRR.MIN_EPSILON, EpsilonRR.MAX_EPSILON)),
    st.builds(GammaRR, st.floats(0.0, GammaRR.MAX_GAMMA)),
    st.integers(2, 60).flatmap(lambda k: st.integers(1, k - 1).map(lambda t: _die(k, t)))
    .filter(lambda d: d is not None),
    st.just(TwoCoinRR()),
    st.builds(WarnerRR, st.floats(0.0, 1.0).filter(lambda p: p != 0.5)),
    st.floats(1e-9, 1.0).flatmap(
        lambda t: st.builds(ForcedResponse, st.just(t), st.floats(0.0, 1.0 - t))),
)

ORACLE = st.one_of(
    st.builds(GRR, st.integers(2, 200), st.floats(1e-3, 50.0)),
    st.builds(OLH, st.integers(2, 200), st.floats(1e-3, 20.0)),
    st.builds(OLH, st.integers(2, 200), st.floats(1e-3, 20.0), st.integers(2, 1000)),
    st.builds(UnaryEncoding.symmetric, st.integers(2, 200), st.floats(1e-3, 50.0)),
    st.builds(UnaryEncoding.optimized, st.integers(2, 200), st.floats(1e-3, 50.0)),
    st.tuples(st.floats(1e-6, 1.0, exclude_max=True), st.floats(1e-6, 1.0, exclude_max=True))
    .filter(lambda pq: pq[0] > pq[1])
    .map(lambda pq: UnaryEncoding(5, pq[0], pq[1])),
)


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.filter_too_much])
@given(design=BINARY)
def test_binary_params_round_trip(design) -> None:
    params = design.params()
    again = ldp_core.binary_design_from_params(json.loads(json.dumps(params)))
    assert again == design
    assert (again.a, again.b, again.epsilon) == (design.a, design.b, design.epsilon)
    assert repr(again) == repr(design)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(oracle=ORACLE)
def test_oracle_params_round_trip(oracle) -> None:
    params = oracle.params()
    again = ldp_core.categorical_oracle_from_params(json.loads(json.dumps(params)))
    assert again == oracle
    assert (again.p, again.q, again.epsilon, again.d) == (oracle.p, oracle.q, oracle.epsilon,
                                                          oracle.d)


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.filter_too_much])
@given(design=BINARY)
def test_sampling_weights_sum_and_approximate_the_branches(design) -> None:
    w = design.sampling_weights()
    assert len(w) == 4 and all(isinstance(x, int) and x >= 0 for x in w)
    total = sum(w)
    assert 0 < total <= 2**32
    branches = design.branches()
    for weight, name in zip(w, ("truth", "lie", "yes", "no"), strict=True):
        # Nearest multiple of 2**-32, then a unit or two toward privacy (device_epsilon).
        assert abs(weight / total - float(branches[name])) <= 3 * 2**-32
    assert design.device_epsilon() <= design.epsilon


@settings(max_examples=200, deadline=None, derandomize=True)
@given(k=st.integers(2, 1000), data=st.data())
def test_sampling_weights_are_exact_for_the_die(k: int, data) -> None:
    t = data.draw(st.integers(1, k - 1).filter(lambda t: 2 * t != k))
    w = DieRR(k, t).sampling_weights()
    assert Fraction(w[0], sum(w)) == Fraction(t, k) and w[2:] == (0, 0)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(t=st.integers(1, 1000), f=st.integers(0, 1000))
def test_sampling_weights_are_exact_for_decimal_parameters(t: int, f: int) -> None:
    """Parameters typed as decimals (sliders in steps of 0.001) are sampled exactly."""
    if t + f > 1000:
        t, f = 1000 - f if f < 1000 else 1, min(f, 999)
    fr = ForcedResponse(t / 1000, f / 1000)
    w = fr.sampling_weights()
    total = sum(w)
    assert Fraction(w[0], total) == Fraction(t, 1000)
    assert Fraction(w[2], total) == Fraction(f, 1000)
    assert Fraction(w[3], total) == 1 - Fraction(t + f, 1000)
    g = GammaRR(min(t, 499) / 1000)
    assert Fraction(g.sampling_weights()[0], sum(g.sampling_weights())) == (
        Fraction(1, 2) + Fraction(min(t, 499), 1000))
    p = t / 1000
    if p != 0.5:
        wr = WarnerRR(p).sampling_weights()
        assert Fraction(wr[0], sum(wr)) == Fraction(t, 1000)
