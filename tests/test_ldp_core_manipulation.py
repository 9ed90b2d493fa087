"""ldp_core.manipulation: what fake users do to an estimate, against simulation.

* Check values: a fake report moves the count by 1.5 under the class exercise's die, 3.0
  under OUE at ε = ln 3, (e^ε + d − 2)/(e^ε − 1) under GRR.
* The shift β((1 − b)/(a − b) − π), and β(1 − π) for stealthy fakes, against the mean of
  simulated classes (fixed seeds, 4 standard errors); power: each formula is rejected
  when the other attack's formula is used.
* The band check's exact alarm probability against brute force over every count and
  against simulated verdicts; the blind zone (no alarm inside it, however large the
  class; certain alarm beyond it in a large class) and the stealthy fakes, never seen.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp_core import (
    ALPHA,
    GRR,
    BinaryCounts,
    DieRR,
    EpsilonRR,
    UnaryEncoding,
    WarnerRR,
    binary_plausibility,
    blind_zone,
    fake_report_gain,
    fakes_until_alarm,
    grr_plausibility,
    oracle,
    simulate_stuffing,
    stuffing_alarm_probability,
    stuffing_shift,
    target_channel,
)
from ldp_core.manipulation import _channel_design

LN3 = math.log(3)


def test_the_check_values_of_one_fake_report():
    assert fake_report_gain(DieRR(4, 3)) == 1.5
    assert fake_report_gain(oracle("oue", 4, LN3)) == pytest.approx(3.0, rel=1e-12)
    assert fake_report_gain(oracle("oue", 14, LN3)) == pytest.approx(3.0, rel=1e-12)
    for d in range(2, 21):
        assert fake_report_gain(GRR(d, LN3)) == pytest.approx((3 + d - 2) / 2, rel=1e-12)
    assert fake_report_gain(GRR(20, LN3)) == pytest.approx(10.5)
    # Stronger privacy, heavier fakes: ε-RR's gain e^ε/(e^ε − 1) falls with ε.
    gains = [fake_report_gain(EpsilonRR(e)) for e in (0.25, 0.5, 1.0, 2.0)]
    assert gains == sorted(gains, reverse=True)


def test_the_target_channel_is_oriented_toward_the_target():
    assert target_channel(DieRR(4, 3), 0) == (0.75, 0.25)
    a, b = target_channel(WarnerRR(0.3))  # a < b for report 1: report 0 supports "yes"
    assert (a, b) == pytest.approx((0.7, 0.3))
    u = oracle("oue", 5, 1.0)
    assert target_channel(u, 4) == (u.p, u.q)
    with pytest.raises(ValueError, match="target must be 0 or 1"):
        target_channel(DieRR(4, 3), 2)
    with pytest.raises(ValueError, match="target must be"):
        target_channel(u, 5)


def test_bad_shares_and_designs_are_refused():
    with pytest.raises(ValueError, match="honest_share"):
        stuffing_shift(DieRR(4, 3), 1.5, 0.1)
    with pytest.raises(ValueError, match="fake_fraction"):
        stuffing_shift(DieRR(4, 3), 0.5, -0.1)
    with pytest.raises(ValueError, match="yes/no design or a frequency oracle"):
        fake_report_gain("die")
    with pytest.raises(ValueError, match="yes/no design, GRR or unary encoding"):
        simulate_stuffing(oracle("olh", 4, 1.0), 10, 1, 0.5)


# -- the shift, against simulation ---------------------------------------------------------

DESIGNS = [
    pytest.param(DieRR(4, 3), 1, id="die"),
    pytest.param(WarnerRR(0.3), 1, id="warner-0.3"),
    pytest.param(DieRR(4, 3), 0, id="die-target-0"),
    pytest.param(GRR(10, LN3), 2, id="grr-10"),
    pytest.param(UnaryEncoding.optimized(4, LN3), 0, id="oue-4"),
]
N_HONEST, N_FAKES, PI = 160, 40, 0.25  # beta = 0.2; 40 of the 160 hold the target
CLASSES = 1500


def _simulate(design, target, stealthy, seed):
    rng = np.random.default_rng(seed)
    return np.array([simulate_stuffing(design, N_HONEST, N_FAKES, PI, stealthy=stealthy,
                                       target=target, rng=rng).manipulated
                     for _ in range(CLASSES)])


@pytest.mark.parametrize("stealthy", [False, True], ids=["stuffing", "stealthy"])
@pytest.mark.parametrize(("design", "target"), DESIGNS)
def test_the_shift_matches_simulation(design, target, stealthy):
    beta = N_FAKES / (N_HONEST + N_FAKES)
    est = _simulate(design, target, stealthy, [7, target, int(stealthy)])
    se = est.std(ddof=1) / math.sqrt(CLASSES)
    expected = PI + stuffing_shift(design, PI, beta, stealthy=stealthy, target=target)
    assert abs(est.mean() - expected) <= 4 * se, (est.mean(), expected, se)
    # Power: the other attack's formula is far off.
    other = PI + stuffing_shift(design, PI, beta, stealthy=not stealthy, target=target)
    assert abs(est.mean() - other) > 4 * se


def test_the_honest_estimate_is_unbiased_and_unchanged_by_the_fakes():
    rng = np.random.default_rng(3)
    runs = [simulate_stuffing(DieRR(4, 3), N_HONEST, N_FAKES, PI, rng=rng)
            for _ in range(CLASSES)]
    honest = np.array([r.honest for r in runs])
    assert abs(honest.mean() - PI) <= 4 * honest.std(ddof=1) / math.sqrt(CLASSES)
    assert all(r.manipulated > r.honest - 1e-12 for r in runs)  # fakes only push up


# -- the check: exact alarm probability, the blind zone, stealthy fakes ----------------------


@pytest.mark.parametrize("stealthy", [False, True])
@pytest.mark.parametrize(("design", "target"), [(DieRR(4, 3), 1), (GRR(6, 1.0), 3),
                                                (WarnerRR(0.3), 1)])
def test_the_alarm_probability_is_the_sum_over_alarming_counts(design, target, stealthy):
    """Brute force: every possible count of supporting reports, checked one by one."""
    n_h, n_f, pi = 30, 25, 0.4
    a, b = target_channel(design, target)
    channel = _channel_design(a, b)
    from ldp_core.manipulation import _count_pmf

    pmf = _count_pmf(design, n_h, n_f, pi, stealthy, target)
    total = n_h + n_f
    assert pmf.shape == (total + 1,) and pmf.sum() == pytest.approx(1.0)
    level = ALPHA / design.d if isinstance(design, GRR) else ALPHA  # GRR: one of d checks
    brute = sum(p for count, p in enumerate(pmf) if binary_plausibility(
        BinaryCounts.single(channel, count, total)).p_value < level)
    got = stuffing_alarm_probability(design, n_h, n_f, pi, stealthy=stealthy, target=target)
    assert got == pytest.approx(brute, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("design", [DieRR(4, 3), WarnerRR(0.3), GRR(6, 1.0)], ids=repr)
def test_the_alarm_probability_matches_simulated_verdicts(design):
    """Past the blind zone, with fakes enough for even odds, the dashboard's check fires
    about as often as the exact value says (within 4 SE) for a yes/no design; for GRR at
    least as often (the exact value is the target's part of its check). Power: the exact
    value for 15% fewer or more fakes is rejected."""
    n_h, pi, runs = 100, 0.3, 3000
    n_fakes = fakes_until_alarm(design, n_h, pi)
    rng = np.random.default_rng(11)
    alarms = sum(not simulate_stuffing(design, n_h, n_fakes, pi, rng=rng).check.fits
                 for _ in range(runs))
    rate = alarms / runs
    exact = stuffing_alarm_probability(design, n_h, n_fakes, pi)
    assert 0.3 < exact < 0.7
    se = math.sqrt(exact * (1 - exact) / runs)
    if isinstance(design, GRR):
        assert rate >= exact - 4 * se, (rate, exact)
        return
    assert abs(rate - exact) <= 4 * se, (rate, exact)
    for other in (int(n_fakes * 0.85), int(n_fakes * 1.15)):
        assert abs(rate - stuffing_alarm_probability(design, n_h, other, pi)) > 4 * se


@pytest.mark.parametrize("design", [DieRR(4, 3), GRR(10, LN3), oracle("oue", 4, LN3)])
@pytest.mark.parametrize("pi", [0.0, 0.3, 0.7])
def test_the_blind_zone_hides_stuffing_at_any_class_size_and_no_further(design, pi):
    """At the edge of the blind zone the expected estimate is exactly 1. Inside it (fakes
    enough for an expected estimate of 0.75 or π, whichever is larger) the band check
    almost never fires, even with 5,000 honest students; beyond it (an expected estimate
    of 1.25) it always does with 5,000."""
    edge = blind_zone(design, pi)
    assert pi + stuffing_shift(design, pi, edge) == pytest.approx(1.0)
    gain, n = fake_report_gain(design), 5000
    for estimate, inside in ((max(0.75, pi), True), (1.25, False)):
        beta = (estimate - pi) / (gain - pi)
        assert (beta <= edge) == inside
        fakes = round(beta * n / (1 - beta))
        prob = stuffing_alarm_probability(design, n, fakes, pi)
        assert prob <= 10 * ALPHA if inside else prob >= 0.999, (beta, prob)


@pytest.mark.parametrize("probability", [0.05, 0.5, 0.99])
@pytest.mark.parametrize(("design", "pi"), [(DieRR(4, 3), 0.3), (GRR(10, LN3), 0.0),
                                            (oracle("oue", 4, LN3), 0.8)])
def test_fakes_until_alarm_is_the_first_count_that_reaches_the_probability(design, pi,
                                                                           probability):
    k = fakes_until_alarm(design, 200, pi, probability=probability)
    assert stuffing_alarm_probability(design, 200, k, pi) >= probability
    assert stuffing_alarm_probability(design, 200, k - 1, pi) < probability
    # Beyond the blind zone only: no fewer fakes than it hides.
    edge = blind_zone(design, pi)
    assert k >= edge / (1 - edge) * 200 - 1
    assert fakes_until_alarm(design, 200, pi, probability=0.5, limit=10) is None


def test_the_blind_zone_of_the_class_exercise():
    # π = 0.3: (1 − 0.3) / (1.5 − 0.3) = 7/12 of the reports may be fakes, unseen.
    assert blind_zone(DieRR(4, 3), 0.3) == pytest.approx(7 / 12)
    assert blind_zone(GRR(20, LN3), 0.0) == pytest.approx(1 / 10.5)
    assert blind_zone(DieRR(4, 3), 0.3, stealthy=True) == 1.0


@pytest.mark.parametrize("design", [DieRR(4, 3), GRR(10, LN3)])
def test_stealthy_fakes_are_never_seen(design):
    for fakes in (10, 100, 1000, 5000):
        assert stuffing_alarm_probability(design, 200, fakes, 0.3, stealthy=True) <= 10 * ALPHA


def test_unary_encoding_is_checked_on_its_ones_per_report():
    """OUE: the dashboard's check counts the 1-bits per report. One-hot fakes have exactly
    one, which honest reports (1.25 ones on average at ε = ln 3, d = 4) rarely match so
    closely: honest classes pass, heavily stuffed ones do not, stealthy ones always pass."""
    u = oracle("oue", 4, LN3)
    rng = np.random.default_rng(5)

    def rate(fakes, stealthy=False, runs=300):
        return sum(not simulate_stuffing(u, 400, fakes, 0.3, stealthy=stealthy,
                                         target=0, rng=rng).check.fits
                   for _ in range(runs)) / runs

    assert rate(0) <= 0.01
    assert rate(400) >= 0.95
    assert rate(400, stealthy=True) <= 0.01


# -- GRR's own check: each option's count against its band ------------------------------------


@pytest.mark.parametrize(("d", "eps", "n"), [(3, 1.0, 30), (4, 1.0, 100), (8, LN3, 400),
                                            (12, 2.0, 1000)])
def test_honest_grr_classes_almost_never_raise_the_alarm(d, eps, n):
    """Exactly: an option held by a share pi is named by Bin(n, q + (p - q) pi) reports,
    whatever the other options do (for a class with exactly that share), so summing its
    alarming counts gives its alarm probability; the chance that any of the d options
    alarms is at most the sum of theirs, at most d times the largest over pi. That stays
    under alpha for every class."""
    o = GRR(d, eps)
    channel = _channel_design(o.p, o.q)
    # grr_plausibility alarms when some option's p-value, times d, is below alpha (its
    # Bonferroni is checked in the next test): these are one option's alarming counts.
    alarming = np.array([binary_plausibility(BinaryCounts.single(channel, c, n)).p_value
                         * d < ALPHA for c in range(n + 1)])
    from ldp_core.manipulation import _count_pmf

    worst = max(float(_count_pmf(o, n, 0, pi, False, 0)[alarming].sum())
                for pi in np.linspace(0, 1, 11))
    assert d * worst <= ALPHA, d * worst


def test_grr_stuffing_is_flagged_with_its_direction():
    o = GRR(4, 1.0)
    honest = o.sample_support_counts([25, 25, 25, 25], rng=3)
    assert grr_plausibility(o, honest).fits
    stuffed = honest + np.array([0, 0, 200, 0])
    check = grr_plausibility(o, stuffed)
    assert not check.fits and check.direction == "option_too_often"
    # Bonferroni: the p-value is d times the worst option's.
    channel = _channel_design(o.p, o.q)
    worst = min(binary_plausibility(BinaryCounts.single(channel, int(c), int(stuffed.sum())))
                .p_value for c in stuffed)
    assert check.p_value == pytest.approx(min(1.0, 4 * worst))
    with pytest.raises(ValueError, match="4 non-negative counts"):
        grr_plausibility(o, [1, 2, 3])
    assert grr_plausibility(o, [0, 0, 0, 0]).fits
