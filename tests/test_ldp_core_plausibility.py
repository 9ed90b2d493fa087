"""The plausibility check: reports that no class could have produced under the design.

Size: on honest classes (n = 10 … 2,000, true share 0, ½, 1) the alarm rate is at
most 0.1%, computed exactly from the distribution of the reported count (binary)
and measured by simulation (unary encoding). Power: it fires on one device voting
"Yes" 50 times (50 of 50 under the die: probability at most 0.75⁵⁰ ≈ 6·10⁻⁷ for any
class) and on 50 all-ones unary-encoding reports. Numeric questions: honest classes
whose every student sits at the top of the range raise it at most 0.1% of the time
(exactly for Duchi et al.'s mechanism, by simulation for the others), and one device
sending the largest report 150 times beside 100 honest students is caught.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp_core import (
    ALPHA,
    BinaryCounts,
    DieRR,
    DuchiMechanism,
    EpsilonRR,
    UnaryEncoding,
    binary_plausibility,
    chi2_sf,
    numeric_design_from_params,
    numeric_plausibility,
    ue_plausibility,
)
from ldp_core.plausibility import ones_distribution

DIE = DieRR(4, 3)
SIZES = [10, 30, 100, 300, 1000, 2000]


def _binom_pmf(k: int, p: float) -> np.ndarray:
    j = np.arange(k + 1)
    logs = np.array([math.lgamma(k + 1) - math.lgamma(x + 1) - math.lgamma(k - x + 1)
                     for x in j])
    with np.errstate(divide="ignore"):
        return np.exp(logs + j * np.log(p) + (k - j) * np.log1p(-p))


def _exact_alarm_rate(design, n: int, v: int) -> float:
    """P(alarm) for a fixed class with v true "yes": V = Bin(v, a) + Bin(n - v, b)."""
    pmf = np.convolve(_binom_pmf(v, design.a), _binom_pmf(n - v, design.b))
    alarm = np.array([not binary_plausibility(BinaryCounts.single(design, y, n)).fits
                      for y in range(n + 1)])
    return float(pmf[alarm].sum())


def test_fifty_of_fifty_yes_is_flagged_not_called_noise():
    result = binary_plausibility(BinaryCounts.single(DIE, 50, 50))
    assert not result.fits and result.direction == "too_many_yes"
    assert result.p_value < 1e-6
    low = binary_plausibility(BinaryCounts.single(DIE, 0, 50))
    assert not low.fits and low.direction == "too_few_yes"


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_honest_classes_almost_never_raise_the_alarm(n, share):
    rate = _exact_alarm_rate(DIE, n, round(share * n))
    assert rate <= 0.001, rate


def test_honest_epsilon_rr_classes_too():
    for n in (30, 300):
        assert _exact_alarm_rate(EpsilonRR(1.0), n, n) <= 0.001


def test_power_one_device_stuffing_an_all_yes_class():
    """100 honest students who all prefer "Yes" plus one device voting "Yes" 150 times."""
    n, extra = 100, 150
    pmf = _binom_pmf(n, DIE.a)  # the honest part's "yes" count
    alarm = np.array([not binary_plausibility(BinaryCounts.single(DIE, y + extra, n + extra)).fits
                      for y in range(n + 1)])
    assert float(pmf[alarm].sum()) > 0.9


def test_mixed_designs_are_checked_together():
    two = BinaryCounts(((DIE, 40, 30), (EpsilonRR(1.0), 40, 29)))
    assert binary_plausibility(two).fits
    stuffed = BinaryCounts(((DIE, 40, 40), (EpsilonRR(1.0), 40, 40)))
    assert not binary_plausibility(stuffed).fits


OUE = UnaryEncoding.optimized(5, math.log(3))


def test_all_ones_unary_reports_are_flagged():
    hist = np.zeros(6)
    hist[5] = 50
    result = ue_plausibility(OUE, hist)
    assert not result.fits and result.direction == "too_many_ones"


@pytest.mark.parametrize("n", SIZES)
def test_honest_unary_reports_almost_never_raise_the_alarm(n):
    rng = np.random.default_rng(n)
    probs = ones_distribution(OUE)
    hists = rng.multinomial(n, probs, size=10_000)
    rate = np.mean([not ue_plausibility(OUE, h).fits for h in hists])
    assert rate <= 0.001, rate


def test_ones_distribution_matches_the_device():
    rng = np.random.default_rng(3)
    reports = OUE.perturb(rng.integers(0, 5, 200_000), rng=rng)
    seen = np.bincount(reports.sum(axis=1), minlength=6) / 200_000
    se = np.sqrt(ones_distribution(OUE) * (1 - ones_distribution(OUE)) / 200_000)
    assert np.all(np.abs(seen - ones_distribution(OUE)) <= 4 * se + 1e-12)


def test_power_for_partly_stuffed_unary_reports():
    rng = np.random.default_rng(9)
    honest = rng.multinomial(300, ones_distribution(OUE), size=500)
    honest[:, 5] += 30  # one device sends "11111" 30 times
    assert np.mean([not ue_plausibility(OUE, h).fits for h in honest]) > 0.9


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7])
def test_chi2_sf_against_simulation(df):
    rng = np.random.default_rng(df)
    draws = rng.chisquare(df, 400_000)
    for x in (0.5, 2.0, 6.0, 12.0):
        p = chi2_sf(x, df)
        se = math.sqrt(p * (1 - p) / draws.size)
        assert abs(np.mean(draws > x) - p) <= 4 * se + 1e-9
    assert ALPHA == 1e-4


# -- numeric ----------------------------------------------------------------------------------


def _numeric(name: str, eps: float = 1.0):
    return numeric_design_from_params({"design": name, "epsilon": eps, "lo": 0, "hi": 12})


def _check(design, reports):
    return numeric_plausibility([(design, np.asarray(reports, dtype=float))])


@pytest.mark.parametrize("n", [5, 10, 30, 100, 1000])
@pytest.mark.parametrize("eps", [0.5, math.log(3), 3.0])
def test_honest_duchi_classes_at_the_edge_almost_never_raise_the_alarm(n, eps):
    """Every student at hi: K plus reports ~ Bin(n, P(+c | x = 1)), exactly."""
    design = _numeric("duchi", eps)
    mech = design.mechanism
    assert isinstance(mech, DuchiMechanism)
    pmf = _binom_pmf(n, float(mech.p_plus(1.0)))
    alarm = np.array([not _check(design, [mech.c_epsilon] * k + [-mech.c_epsilon] * (n - k)).fits
                      for k in range(n + 1)])
    assert float(pmf[alarm].sum()) <= 0.001


@pytest.mark.parametrize("name", ["piecewise", "hybrid", "laplace"])
@pytest.mark.parametrize("n", [5, 30, 300])
def test_honest_continuous_classes_at_the_edge_almost_never_raise_the_alarm(name, n):
    design = _numeric(name)
    rng = np.random.default_rng(9)
    classes = 20_000
    reports = design.mechanism.perturb(np.ones((classes, n)), rng=rng)
    alarms = sum(not _check(design, row).fits for row in reports)
    assert alarms / classes <= 0.001


@pytest.mark.parametrize("name", ["duchi", "piecewise", "hybrid", "laplace"])
def test_power_one_device_sending_the_largest_report_150_times(name):
    """As for yes/no: 100 honest students at the top of the range, and one device sending
    the largest report 150 times (Duchi et al.'s largest report is only c_ε = 2 at ln 3)."""
    design = _numeric(name, math.log(3))
    mech = design.mechanism
    top = mech.output_bounds[1] if name != "laplace" else 1 + 40 * mech.scale
    rng = np.random.default_rng(4)
    caught = 0
    for _ in range(200):
        honest = mech.perturb(np.ones(100), rng=rng)
        result = _check(design, np.concatenate([honest, [top] * 150]))
        caught += not result.fits and result.direction == "above_range"
    assert caught / 200 > 0.9


def test_an_empty_or_single_numeric_round_fits():
    design = _numeric("piecewise")
    assert _check(design, []).fits and numeric_plausibility([]).fits
    assert _check(design, [design.mechanism.big_c]).fits
    duchi = _numeric("duchi")
    assert _check(duchi, []).fits


def test_fifty_largest_duchi_reports_are_flagged_like_fifty_yes():
    """Duchi et al.'s mechanism is RR_eps on a bit: 50 of 50 "+c" is the binary case."""
    design = _numeric("duchi", math.log(3))
    result = _check(design, [design.mechanism.c_epsilon] * 50)
    assert not result.fits and result.direction == "above_range" and result.p_value < 1e-6
    low = _check(design, [-design.mechanism.c_epsilon] * 50)
    assert not low.fits and low.direction == "below_range"
