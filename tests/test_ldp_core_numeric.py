"""ldp_core.numeric: exact ε of each mechanism, unbiasedness, exact variances (Monte Carlo
with tolerances from the standard error, and a power check), the Piecewise density, the
crossover of Wang et al. (2019), the Hybrid Mechanism (its ε*, its flat variance, 4.289 at
ε = 1, its mixed channel), the range map and the mean estimate."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp_core import (
    DEVICE_CELLS,
    HYBRID_EPSILON_STAR,
    NUMERIC_NAMES,
    DuchiMechanism,
    HybridMechanism,
    LaplaceMechanism,
    NumericEstimate,
    NumericRange,
    PiecewiseMechanism,
    central_numeric_sd,
    exact_interval,
    numeric_crossover,
    numeric_design_from_params,
    numeric_mechanism,
    recommend_numeric,
    t_quantile,
)
from tests.support.numeric_classes import CLASSES, class_values, coverage, spread_coverage

EPSILONS = [0.1, 0.5, math.log(3), 2.0, 5.0, 10.0]
XS = [-1.0, -0.4, 0.0, 0.7, 1.0]
N = 200_000


@pytest.mark.parametrize("name", NUMERIC_NAMES)
@pytest.mark.parametrize("eps", EPSILONS)
def test_the_channel_gives_exactly_the_epsilon_asked_for(name, eps):
    assert numeric_mechanism(name, eps).epsilon == pytest.approx(eps, rel=1e-9, abs=1e-12)


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


def mean_fits(y: np.ndarray, mean: float, var: float) -> bool:
    """The sample mean of ``y`` within 4 SE of ``mean`` (``var``: one draw's variance)."""
    return abs(float(y.mean()) - mean) <= 4 * math.sqrt(var / y.size)


def variance_fits(y: np.ndarray, var: float) -> bool:
    """The sample variance of ``y`` within 4 of its own SEs of ``var`` (the SE from the
    fourth central moment)."""
    m4 = float(np.mean((y - y.mean()) ** 4))
    se_var = math.sqrt(max(m4 - float(y.var()) ** 2, 0.0) / y.size)
    return abs(float(y.var(ddof=1)) - var) <= 4 * se_var


def overdispersed(y: np.ndarray, x: float, factor: float = 1.1) -> np.ndarray:
    """A deliberately wrong sampler: the same reports spread ``factor`` times the variance
    around the same mean."""
    return x + (y - x) * math.sqrt(factor)


@pytest.mark.parametrize("name", NUMERIC_NAMES)
@pytest.mark.parametrize("x", XS)
def test_reports_are_unbiased_with_the_exact_variance(name, x):
    """Mean within 4 SE of x; the sample variance within 4 of its own SE of the exact one.
    Power: the same tests reject the mechanism run at x shifted by 8 SE, and its reports
    spread to a variance 10% too large."""
    mech = numeric_mechanism(name, 1.0)
    rng = np.random.default_rng([11, int(10 * x) + 20])
    y = mech.perturb(np.full(N, x), rng=rng)
    var = float(mech.variance(x))
    assert mean_fits(y, x, var) and variance_fits(y, var)
    shift = 8 * math.sqrt(var / N) * (-1 if x > 0 else 1)  # stays in [-1, 1]
    assert not mean_fits(mech.perturb(np.full(N, x + shift), rng=rng), x, var)
    assert not variance_fits(overdispersed(y, x), var)


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
    """Beyond the point a student at the top passes with probability 1e-9 (41.06 at ε = 1:
    252 h on [0, 12]): the old clamp at 40 scales (81, 492 h) is refused."""
    lm = LaplaceMechanism(1.0)
    assert lm.plausible(41.0) and lm.plausible(-41.0) and not lm.plausible(41.1)
    assert not lm.plausible(81.0) and not lm.plausible(1e6) and not lm.plausible(math.nan)
    pm = PiecewiseMechanism(1.0)
    assert pm.plausible(pm.big_c) and not pm.plausible(pm.big_c * 1.01)


def test_the_crossover_is_where_the_worst_variances_meet():
    eps = numeric_crossover()
    assert eps == pytest.approx(1.29, abs=0.01)  # Wang et al. (2019)
    duchi, pm = DuchiMechanism(eps).worst_variance(), PiecewiseMechanism(eps).worst_variance()
    assert duchi == pytest.approx(pm, rel=1e-9)
    # Between the two, the Hybrid Mechanism beats both (see the Hybrid tests below).
    assert recommend_numeric(eps * 0.99) == recommend_numeric(eps * 1.01) == "hybrid"


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


COVERAGE_SIZES = [10, 30]
#: Re-runs per simulated cell: the coverage's SE is about 0.0015.
COVERAGE_REPS = 20_000


@pytest.mark.parametrize("kind", CLASSES)
@pytest.mark.parametrize("name", NUMERIC_NAMES)
def test_the_interval_covers_the_class_mean_for_every_class(name, kind):
    """At least 94% at n = 10 and 30 across the form's ε, exactly (Duchi et al.: every
    count of +c) or over 20,000 re-runs. docs/numeric-checks.md has the full table."""
    rng = np.random.default_rng([NUMERIC_NAMES.index(name), CLASSES.index(kind)])
    for eps in (0.5, 1.1, 2.0, 5.0):
        design = numeric_design_from_params({"design": name, "epsilon": eps, "lo": 0,
                                             "hi": 12})
        for n in COVERAGE_SIZES:
            covered, _ = coverage(design, class_values(kind, n), reps=COVERAGE_REPS, rng=rng)
            assert covered >= 0.94, (eps, n, covered)


@pytest.mark.parametrize(("name", "eps", "kind", "below"), [
    ("piecewise", 2.0, "near the top", 0.90),  # 86.3% (20,000 re-runs)
    ("duchi", 1.1, "mid-range", 0.90),  # 89.2%, exactly
])
def test_power_the_interval_from_the_reports_spread_did_not_cover(name, eps, kind, below):
    """The interval before (mean ± 1.96 times the reports' own SD), measured the same way,
    fails the 94% the test above asks for."""
    design = numeric_design_from_params({"design": name, "epsilon": eps, "lo": 0, "hi": 12})
    rng = np.random.default_rng(3)
    assert spread_coverage(design, class_values(kind, 10), reps=COVERAGE_REPS,
                           rng=rng) < below


def test_the_interval_is_the_mean_plus_or_minus_t_times_the_worst_sd():
    design = numeric_design_from_params({"design": "laplace", "epsilon": 1.0, "lo": 0,
                                         "hi": 12})
    est = NumericEstimate.from_groups([(design, np.linspace(-3, 3, 10))])
    half = t_quantile(0.95, 9) * est.sd_worst
    assert est.interval() == pytest.approx((est.mean - half, est.mean + half))
    assert not est.exact and t_quantile(0.95, 9) == pytest.approx(2.262157, abs=1e-6)


def test_duchi_s_interval_is_the_exact_interval_of_its_bit():
    design = numeric_design_from_params({"design": "duchi", "epsilon": math.log(3), "lo": 0,
                                         "hi": 12})
    c = design.mechanism.c_epsilon
    est = NumericEstimate.from_groups([(design, np.where(np.arange(30) < 20, c, -c))])
    low, high = exact_interval(0.75, 0.25, 30, 20)
    assert est.exact and est.interval() == pytest.approx((12 * low, 12 * high))
    # the same bits under two ranges: no common bit, the t interval
    other = numeric_design_from_params({**design.params(), "hi": 10})
    mixed = NumericEstimate.from_groups([(design, np.array([c])), (other, np.array([-c]))])
    assert not mixed.exact


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


# -- what a phone samples ---------------------------------------------------------------------


def _cell_probabilities(mech, x: float, p_window: float | None = None) -> np.ndarray:
    """Exact probability of each device cell given x: the CDF at the cell edges, with the
    clamped tails in the end cells (the Piecewise Mechanism at ``p_window`` if given)."""
    low, high = mech.device_grid()
    edges = np.linspace(low, high, DEVICE_CELLS + 1)
    if isinstance(mech, PiecewiseMechanism):
        left, right = mech.window(x)
        inside, outside = mech.densities(p_window)
        c = mech.big_c
        # CDF of a piecewise-constant density: outside on [-C, l), inside on [l, r], ...
        e = np.clip(edges, -c, c)
        cdf = outside * (np.minimum(e, left) + c) + inside * np.clip(e - left, 0, right - left) \
            + outside * np.clip(e - right, 0, None)
        return np.diff(np.concatenate(([0.0], cdf[1:-1], [1.0])))
    # Laplace: each cell's mass from the tail on its side of x (no cancellation far out),
    # with the clamped tails in the end cells.
    s = mech.scale
    a, b = edges[:-1].copy(), edges[1:].copy()
    a[0], b[-1] = -np.inf, np.inf
    above = 0.5 * (np.exp(-(a - x) / s) - np.exp(-(b - x) / s))
    below = 0.5 * (np.exp((b - x) / s) - np.exp((a - x) / s))
    middle = 1 - 0.5 * np.exp(-(x - a) / s) - 0.5 * np.exp(-(b - x) / s)
    return np.where(a >= x, above, np.where(b <= x, below, middle))


@pytest.mark.parametrize("name", ["piecewise", "laplace"])
@pytest.mark.parametrize("eps", [0.1, math.log(3), 2.0, 10.0])
def test_the_device_cells_keep_epsilon(name, eps):
    mech = numeric_mechanism(name, eps)
    probs = np.array([_cell_probabilities(mech, x) for x in (-1.0, -0.3, 0.5, 1.0)])
    assert np.allclose(probs.sum(axis=1), 1.0, atol=1e-12)
    assert probs.min() > 0
    ratio = (probs.max(axis=0) / probs.min(axis=0)).max()
    assert math.log(ratio) <= eps * (1 + 1e-9)
    assert math.log(ratio) >= eps * 0.999  # tight: the window cells reach it


def _hybrid_device_outputs(hm: HybridMechanism, x: float) -> np.ndarray:
    """What a phone running the Hybrid Mechanism sends, as exact probabilities: the
    Piecewise part's cells (its window probability as the phone realises it) weighted by
    the phone's coin, then Duchi's two values from the integer weights of its RR step."""
    alpha = hm.device_p_piecewise()
    keep, flip, _, _ = hm.duchi.device_weights()
    p_bit = (1 + x) / 2  # x = ±1 gives the bit exactly; the rounding is pre-processing
    plus = (p_bit * keep + (1 - p_bit) * flip) / (keep + flip)
    atoms = (1 - alpha) * np.array([1 - plus, plus])
    if alpha == 0:
        return atoms
    pm = hm.piecewise
    cells = alpha * _cell_probabilities(pm, x, pm.device_p_window())
    return np.concatenate((cells, atoms))


@pytest.mark.parametrize("eps", [0.3, HYBRID_EPSILON_STAR, 0.7, math.log(3), 2.0, 10.0])
def test_the_hybrid_device_outputs_keep_epsilon_per_cell(eps):
    """Every report a phone can send, cell by cell and atom by atom, against every other
    input: the ratio stays within e^ε, and is reached. Merging Duchi's values into the cells
    they fall in (a server that rounds them) cannot raise it."""
    hm = HybridMechanism(eps)
    xs = (-1.0, -0.3, 0.5, 1.0)
    probs = np.array([_hybrid_device_outputs(hm, x) for x in xs])
    assert np.allclose(probs.sum(axis=1), 1.0, atol=1e-12) and probs.min() > 0
    loss = math.log((probs.max(axis=0) / probs.min(axis=0)).max())
    assert loss <= eps + 1e-9 and loss >= eps * 0.999
    assert hm.device_epsilon() <= eps + 1e-12
    if hm.p_piecewise > 0:
        low, high = hm.device_grid()
        width = (high - low) / DEVICE_CELLS
        merged = probs[:, :DEVICE_CELLS].copy()
        for j, value in enumerate((-hm.duchi.c_epsilon, hm.duchi.c_epsilon)):
            merged[:, int((value - low) // width)] += probs[:, DEVICE_CELLS + j]
        assert math.log((merged.max(axis=0) / merged.min(axis=0)).max()) <= eps + 1e-9
    else:
        assert hm.device_grid() is None and probs.shape == (4, 2)


@pytest.mark.parametrize("name", NUMERIC_NAMES)
@pytest.mark.parametrize("eps", [0.1, math.log(3), 2.0, 19.9])
def test_the_device_epsilon_never_exceeds_the_shown_one(name, eps):
    mech = numeric_mechanism(name, eps)
    assert mech.device_epsilon() <= mech.epsilon + 1e-12
    assert mech.device_epsilon() == pytest.approx(mech.epsilon, rel=0.01)


def test_device_probabilities_are_on_the_phone_grid_and_round_toward_privacy():
    pm = PiecewiseMechanism(1.3)
    p = pm.device_p_window()
    assert p <= pm.p_window and p * 2**53 == int(p * 2**53)
    keep, flip, yes, no = DuchiMechanism(1.3).device_weights()
    assert (yes, no) == (0, 0) and keep > flip > 0
    assert math.log(keep / flip) <= 1.3 + 1e-12


@pytest.mark.parametrize("name", ["piecewise", "laplace"])
def test_snapped_reports_stay_unbiased_and_on_the_grid(name):
    mech = numeric_mechanism(name, 1.0)
    rng = np.random.default_rng(11)
    x = 0.6
    raw = mech.perturb(np.full(N, x), rng=rng)
    snapped = mech.snap(raw)
    low, high = mech.device_grid()
    width = (high - low) / DEVICE_CELLS
    k = (snapped - low) / width - 0.5
    assert np.allclose(k, np.round(k), atol=1e-6) and snapped.min() > low and snapped.max() < high
    assert np.abs(snapped - raw).max() <= width / 2 + 1e-12
    var = float(mech.variance(x))
    assert mean_fits(snapped, x, var)
    # Power: the same test rejects the snapped reports of x shifted by 8 SE.
    shifted = mech.snap(mech.perturb(np.full(N, x - 8 * math.sqrt(var / N)), rng=rng))
    assert not mean_fits(shifted, x, var)
    assert DuchiMechanism(1.0).snap(2.0) == 2.0  # two reports: nothing to snap


def test_duchi_exact_aggregate_matches_the_per_respondent_sampler():
    """Classes of 30 students at -0.5 and 70 at 0.8: the number of +c reports, drawn for
    20,000 classes at once, has the Poisson-binomial mean and variance."""
    d = DuchiMechanism(1.0)
    x, counts = np.array([-0.5, 0.8]), np.array([30, 70])
    k = d.sample_plus_counts(x, counts, size=20_000, rng=5)
    p = d.p_plus(x)
    mean, var = float((counts * p).sum()), float((counts * p * (1 - p)).sum())
    assert mean_fits(k, mean, var)
    # Power: the same test rejects classes whose values sit higher by what moves the mean
    # by 8 SE (each student's p_plus rises by delta / (2 c_eps)).
    delta = 8 * math.sqrt(var / k.size) * 2 * d.c_epsilon / counts.sum()
    assert not mean_fits(d.sample_plus_counts(x + delta, counts, size=20_000, rng=7), mean, var)
    assert k.var() == pytest.approx(var, rel=4 * math.sqrt(2 / k.size))
    per = d.perturb(np.repeat(x, counts), rng=6)
    est = d.c_epsilon * (2 * k - 100) / 100  # the class estimate from the aggregate
    assert abs(est.mean() - (30 * -0.5 + 70 * 0.8) / 100) <= 4 * est.std() / math.sqrt(k.size)
    assert set(np.unique(per)) <= {-d.c_epsilon, d.c_epsilon}
    with pytest.raises(ValueError, match="same length"):
        d.sample_plus_counts([0.1, 0.2], [3])
    with pytest.raises(ValueError, match="counts must be >= 0"):
        d.sample_plus_counts([0.1], [-3])


# -- the Hybrid Mechanism (Wang et al., ICDE 2019) ---------------------------------------------


def _wang_epsilon_star() -> float:
    """Wang et al.'s closed form of ε*, the root of the cubic behind their Lemma."""
    r = math.sqrt(241)
    return math.log((-5 + 2 * np.cbrt(6353 - 405 * r) + 2 * np.cbrt(6353 + 405 * r)) / 27)


def _wang_hybrid_variance(eps: float) -> float:
    """Wang et al.'s closed form of the Hybrid Mechanism's variance above ε* (any x)."""
    z = math.exp(eps / 2)
    return (z + 3) / (3 * z * (z - 1)) + (math.exp(eps) + 1) ** 2 / (z * (math.exp(eps) - 1) ** 2)


def test_epsilon_star_is_wang_et_al_s():
    assert HYBRID_EPSILON_STAR == pytest.approx(0.609352, abs=5e-7)
    assert HYBRID_EPSILON_STAR == pytest.approx(_wang_epsilon_star(), abs=1e-12)
    at = HYBRID_EPSILON_STAR
    assert PiecewiseMechanism(at).variance(0.0) == pytest.approx(
        DuchiMechanism(at).variance(0.0), rel=1e-12)


def test_the_worst_variance_at_epsilon_1_is_4_289_and_flat_in_x():
    hm = HybridMechanism(1.0)
    assert round(hm.worst_variance(), 3) == 4.289
    xs = np.linspace(-1, 1, 41)
    assert np.allclose(hm.variance(xs), 4.288992493, rtol=1e-9)


@pytest.mark.parametrize("eps", [0.61, 0.8, math.log(3), 2.0, 5.0, 10.0, 19.0])
def test_above_epsilon_star_the_variance_is_wang_et_al_s_closed_form(eps):
    hm = HybridMechanism(eps)
    assert hm.p_piecewise == pytest.approx(1 - math.exp(-eps / 2), rel=1e-14)
    assert hm.worst_variance() == pytest.approx(_wang_hybrid_variance(eps), rel=1e-9)
    assert hm.worst_variance() < min(DuchiMechanism(eps).worst_variance(),
                                     PiecewiseMechanism(eps).worst_variance())


@pytest.mark.parametrize("eps", [0.01, 0.3, HYBRID_EPSILON_STAR])
def test_at_or_below_epsilon_star_it_is_duchi_et_al_s_mechanism(eps):
    hm, duchi = HybridMechanism(eps), DuchiMechanism(eps)
    assert hm.p_piecewise == 0.0 and hm.output_bounds == duchi.output_bounds
    assert hm.worst_variance() == duchi.worst_variance()
    y = hm.perturb(np.linspace(-1, 1, 501), rng=3)
    assert set(np.unique(y)) <= {-duchi.c_epsilon, duchi.c_epsilon}
    assert hm.plausible(duchi.c_epsilon) and not hm.plausible(0.5)


@pytest.mark.parametrize("eps", [0.3, 0.7, math.log(3), 3.0, 12.0])
def test_the_mixed_channel_is_exactly_epsilon_and_tight_on_both_parts(eps):
    """From the channel itself: the atoms' masses at x = ±1 and the density inside the
    window against outside it each give exactly e^ε; the mass adds up to one."""
    hm = HybridMechanism(eps)
    assert hm.epsilon == pytest.approx(eps, rel=1e-9)
    (m_lo, p_lo), (m_hi, p_hi) = hm.atoms(-1.0), hm.atoms(1.0)
    assert math.log(p_hi / p_lo) == pytest.approx(eps, rel=1e-9)
    assert math.log(m_lo / m_hi) == pytest.approx(eps, rel=1e-9)
    c = hm.piecewise.big_c
    for x in (-1.0, 0.2, 1.0):
        left, right = hm.piecewise.window(x)
        # The density is constant inside the window and outside it: integrate each piece.
        mass = (hm.pdf((left + right) / 2, x) * (right - left)
                + hm.pdf(right + (c - right) / 2 if x < 1 else -c, x) * (2 * c - (right - left)))
        assert mass + sum(hm.atoms(x)) == pytest.approx(1.0, rel=1e-12)
    if hm.p_piecewise > 0:
        left, right = hm.piecewise.window(0.0)
        inside, outside = hm.pdf((left + right) / 2, 0.0), hm.pdf(hm.piecewise.big_c - 1e-9, 0.0)
        assert math.log(inside / outside) == pytest.approx(eps, rel=1e-9)


@pytest.mark.parametrize("eps", [0.5, 0.7, 3.0])
@pytest.mark.parametrize("x", [-1.0, 0.0, 0.6])
def test_hybrid_reports_are_unbiased_with_the_exact_variance_and_mixture(eps, x):
    """Mean within 4 SE of x and the sample variance within 4 of its SEs of the exact one,
    at ε below and above ε*; the share of Duchi values is 1 - alpha within 4 SE. Power: the
    same tests reject reports spread to a variance 10% too large, and a mixture whose coin
    picks the Piecewise part with probability 1 - e^-ε instead of alpha."""
    hm = HybridMechanism(eps)
    rng = np.random.default_rng([23, int(10 * eps), int(10 * x) + 20])
    y = hm.perturb(np.full(N, x), rng=rng)
    var = float(hm.variance(x))
    assert mean_fits(y, x, var) and variance_fits(y, var)
    assert not variance_fits(overdispersed(y, x), var)
    alpha = hm.p_piecewise

    def share_fits(reports: np.ndarray) -> bool:
        share = float(np.mean(np.abs(reports) == hm.duchi.c_epsilon))
        return abs(share - (1 - alpha)) <= 4 * math.sqrt(max(alpha * (1 - alpha), 0.25 / N) / N)

    assert share_fits(y)
    if alpha > 0:  # the wrong coin differs from alpha here by far more than 4 SE
        coin = rng.random(N) < 1 - math.exp(-eps)
        wrong = np.where(coin, hm.piecewise.perturb(np.full(N, x), rng=rng),
                         hm.duchi.perturb(np.full(N, x), rng=rng))
        assert not share_fits(wrong)


@pytest.mark.parametrize("eps", np.concatenate((np.linspace(0.02, 0.6, 30),
                                                np.geomspace(0.6094, 20, 60))))
def test_the_hybrid_is_recommended_exactly_above_epsilon_star(eps):
    eps = float(eps)
    assert recommend_numeric(eps) == ("hybrid" if eps > HYBRID_EPSILON_STAR else "duchi")


@pytest.mark.parametrize("name", NUMERIC_NAMES)
def test_the_interval_covers_at_the_largest_epsilon_a_question_accepts(name):
    """At the top of the classroom's ε range (``EPSILON_RANGE``, checked at every entry),
    at the class sizes where ε = 10 under-covered (Hybrid 86.6% at n = 20, Piecewise 90.3%
    at n = 50): at least 95% less 4 SE of 20,000 re-runs, for every class."""
    from classroom.domain import EPSILON_RANGE

    eps = EPSILON_RANGE[1]
    se = math.sqrt(0.95 * 0.05 / COVERAGE_REPS)
    rng = np.random.default_rng([NUMERIC_NAMES.index(name), 5])
    design = numeric_design_from_params({"design": name, "epsilon": eps, "lo": 0, "hi": 12})
    for kind in CLASSES:
        for n in (20, 50):
            covered, _ = coverage(design, class_values(kind, n), reps=COVERAGE_REPS, rng=rng)
            assert covered >= 0.95 - 4 * se, (kind, n, covered)


def test_power_beyond_the_range_the_interval_under_covers():
    """Why ε stops at 5: at ε = 10 the Hybrid Mechanism's interval misses its 95%."""
    design = numeric_design_from_params({"design": "hybrid", "epsilon": 10.0, "lo": 0,
                                         "hi": 12})
    rng = np.random.default_rng(10)
    worst = min(coverage(design, class_values(kind, 20), reps=COVERAGE_REPS, rng=rng)[0]
                for kind in CLASSES)
    assert worst < 0.92, worst
