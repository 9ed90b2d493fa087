"""ldp_core.numeric: exact ε of each mechanism, unbiasedness, exact variances (Monte Carlo
with tolerances from the standard error, and a power check), the Piecewise density, the
crossover of Wang et al. (2019), the range map and the mean estimate."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp_core import (
    NUMERIC_NAMES,
    DuchiMechanism,
    LaplaceMechanism,
    NumericEstimate,
    NumericRange,
    PiecewiseMechanism,
    central_numeric_sd,
    numeric_crossover,
    numeric_design_from_params,
    numeric_mechanism,
    recommend_numeric,
)

EPSILONS = [0.1, 0.5, math.log(3), 2.0, 5.0, 10.0]
XS = [-1.0, -0.4, 0.0, 0.7, 1.0]
N = 200_000


@pytest.mark.parametrize("name", NUMERIC_NAMES)
@pytest.mark.parametrize("eps", EPSILONS)
def test_the_channel_gives_exactly_the_epsilon_asked_for(name, eps):
    assert numeric_mechanism(name, eps).privacy_loss == pytest.approx(eps, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("eps", EPSILONS)
def test_duchi_is_tight_on_its_two_outputs(eps):
    d = DuchiMechanism(eps)
    ratio = d.p_plus(1.0) / d.p_plus(-1.0)
    assert math.log(ratio) == pytest.approx(eps, rel=1e-9)
    assert d.p_plus(-1.0) > 0 and d.p_plus(1.0) < 1


@pytest.mark.parametrize("eps", EPSILONS)
def test_piecewise_density_integrates_to_one_and_its_ratio_is_e_eps(eps):
    pm = PiecewiseMechanism(eps)
    c = pm.big_c
    for x in XS:
        grid = np.linspace(-c, c, 400_001)
        mass = np.trapezoid(pm.pdf(grid, x), grid)
        assert mass == pytest.approx(1.0, abs=2e-4)
        left, right = pm.window(x)
        assert right - left == pytest.approx(c - 1) and -c - 1e-12 <= left and right <= c + 1e-12
    inside, outside = pm.densities()
    assert inside / outside == pytest.approx(math.exp(eps), rel=1e-12)


@pytest.mark.parametrize("name", NUMERIC_NAMES)
@pytest.mark.parametrize("x", XS)
def test_reports_are_unbiased_with_the_exact_variance(name, x):
    """Mean within 4 SE of x; the sample variance within 4 of its own SE of the exact one.
    Power: the same test rejects a variance 10% too large."""
    mech = numeric_mechanism(name, 1.0)
    y = mech.perturb(np.full(N, x), rng=np.random.default_rng([11, int(10 * x) + 20]))
    var = float(mech.variance(x))
    assert abs(y.mean() - x) <= 4 * math.sqrt(var / N)
    m4 = float(np.mean((y - y.mean()) ** 4))
    se_var = math.sqrt((m4 - var ** 2) / N)
    assert abs(y.var(ddof=1) - var) <= 4 * se_var
    assert abs(y.var(ddof=1) - 1.1 * var) > 4 * se_var  # power


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_piecewise_reports_fall_in_the_window_as_often_as_the_density_says(eps):
    pm = PiecewiseMechanism(eps)
    y = pm.perturb(np.full(N, 0.3), rng=7)
    left, right = pm.window(0.3)
    share = np.mean((y >= left) & (y <= right))
    se = math.sqrt(pm.p_window * (1 - pm.p_window) / N)
    assert abs(share - pm.p_window) <= 4 * se
    assert np.all(np.abs(y) <= pm.big_c)
    # outside the window the reports are uniform: as many left of it, per unit length, as right
    outer_left = np.mean(y < left) / (left + pm.big_c)
    outer_right = np.mean(y > right) / (pm.big_c - right)
    assert outer_left == pytest.approx(outer_right, rel=0.05)


def test_duchi_reports_are_exactly_plus_or_minus_c():
    d = DuchiMechanism(1.0)
    y = d.perturb(np.linspace(-1, 1, 1001), rng=1)
    assert set(np.unique(y)) <= {-d.c_epsilon, d.c_epsilon}
    assert d.plausible(d.c_epsilon) and not d.plausible(1.0)


def test_laplace_refuses_reports_no_phone_would_send():
    lm = LaplaceMechanism(1.0)
    assert lm.plausible(50.0) and not lm.plausible(1e6) and not lm.plausible(math.nan)
    pm = PiecewiseMechanism(1.0)
    assert pm.plausible(pm.big_c) and not pm.plausible(pm.big_c * 1.01)


def test_the_crossover_is_where_the_worst_variances_meet():
    eps = numeric_crossover()
    assert eps == pytest.approx(1.29, abs=0.01)  # Wang et al. (2019)
    duchi, pm = DuchiMechanism(eps).worst_variance(), PiecewiseMechanism(eps).worst_variance()
    assert duchi == pytest.approx(pm, rel=1e-9)
    assert recommend_numeric(eps * 0.99) == "duchi" and recommend_numeric(eps * 1.01) == "piecewise"


@pytest.mark.parametrize("eps", np.linspace(0.05, 12, 60))
def test_the_recommendation_has_the_lowest_worst_variance_and_laplace_never_wins(eps):
    best = recommend_numeric(float(eps))
    worst = {n: numeric_mechanism(n, float(eps)).worst_variance() for n in NUMERIC_NAMES}
    assert worst[best] == min(worst.values()) and best != "laplace"


@pytest.mark.parametrize("bad", [0, -1, 1e-4, 25, math.nan, "1"])
def test_bad_epsilon_is_refused_with_its_name(bad):
    with pytest.raises(ValueError, match="epsilon"):
        numeric_mechanism("duchi", bad)


def test_bad_inputs_are_refused_clearly():
    with pytest.raises(ValueError, match="mechanism must be one of"):
        numeric_mechanism("gaussian", 1.0)
    with pytest.raises(ValueError, match=r"lie in \[-1, 1\]"):
        DuchiMechanism(1.0).perturb([1.5])
    with pytest.raises(ValueError, match="lo < hi"):
        NumericRange(5, 5)
    with pytest.raises(ValueError, match=r"lie in \[0, 10\]"):
        NumericRange(0, 10).to_unit(11)
    with pytest.raises(ValueError, match="unknown numeric design parameters"):
        numeric_design_from_params({"design": "duchi", "epsilon": 1, "lo": 0, "hi": 1, "x": 2})


def test_range_maps_round_trip():
    r = NumericRange(-3, 9)
    v = np.array([-3, 0, 3, 9])
    assert np.allclose(r.from_unit(r.to_unit(v)), v)
    assert r.to_unit(-3) == -1 and r.to_unit(9) == 1 and r.from_unit(2.0) == 15.0


@pytest.mark.parametrize("name", NUMERIC_NAMES)
def test_the_estimate_of_a_class_mean_covers_the_truth(name):
    design = numeric_design_from_params({"design": name, "epsilon": 1.0, "lo": 0, "hi": 12})
    rng = np.random.default_rng(5)
    hits = 0
    for _ in range(200):
        values = rng.uniform(4, 10, 400)
        est = NumericEstimate.from_groups([(design, design.perturb_values(values, rng=rng))])
        low, high = est.interval()
        hits += low <= values.mean() <= high
        assert est.sd_worst >= est.sd * 0.8
    # 95% coverage over 200 classes: binomial SE 1.5%, so within 4 SE of 95%.
    assert abs(hits / 200 - 0.95) <= 4 * math.sqrt(0.95 * 0.05 / 200)


def test_estimate_with_no_or_one_report_has_no_nan():
    design = numeric_design_from_params({"design": "duchi", "epsilon": 1.0, "lo": 0, "hi": 10})
    empty = NumericEstimate.from_groups([(design, np.zeros(0))])
    assert (empty.n, empty.mean, empty.sd, empty.interval(), empty.clipped_mean) == \
        (0, None, None, None, None)
    one = NumericEstimate.from_groups([(design, np.array([design.mechanism.c_epsilon]))])
    assert one.n == 1 and one.sd is None and one.mean > 10 and one.clipped_mean == 10
    assert one.interval() is not None  # from the worst-case SD


def test_mixed_designs_in_one_round_are_each_mapped_with_their_own():
    a = numeric_design_from_params({"design": "laplace", "epsilon": 1.0, "lo": 0, "hi": 10})
    b = numeric_design_from_params({"design": "laplace", "epsilon": 2.0, "lo": 0, "hi": 10})
    est = NumericEstimate.from_groups([(a, np.array([0.0, 0.0])), (b, np.array([1.0]))])
    assert est.n == 3 and est.mean == pytest.approx((5 + 5 + 10) / 3)
    expected = math.sqrt(2 * a.worst_sd() ** 2 + b.worst_sd() ** 2) / 3
    assert est.sd_worst == pytest.approx(expected)


def test_central_sd_uses_the_range_as_sensitivity():
    r = NumericRange(0, 12)
    assert central_numeric_sd(100, 1.0, r) == pytest.approx(math.sqrt(2) * 12 / 100)
    local = numeric_design_from_params({"design": "duchi", "epsilon": 1.0, "lo": 0, "hi": 12})
    # local ~ 1/(ε√n) against central ~ 1/(εn): at n = 100 the local SD is over 7x larger
    assert local.worst_sd() / math.sqrt(100) > 7 * central_numeric_sd(100, 1.0, r)
