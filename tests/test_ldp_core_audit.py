"""ldp_core.audit: the empirical lower bound ε_LB, its exact distribution against a
fixed-seed simulation, the check values, the false-alarm rate and the power to catch a
cheat, each statistical check with a tolerance from its standard error and a power check."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp_core import (
    AUDIT_TAIL,
    DieRR,
    EpsilonRR,
    WarnerRR,
    audit_distribution,
    audit_epsilon,
    audit_runs_needed,
    simulate_audit,
)

LN3 = math.log(3)
SIMULATIONS = 4000
#: The issue's check values: median ε_LB of RR at ln 3, by reports per input.
MEDIANS = {100: 0.68, 200: 0.81, 500: 0.92}
MEDIAN_TOLERANCE = 0.03
CHEAT = WarnerRR(0.9)  # claims ln 3, keeps the truth w.p. 0.9: ε = ln 9


def _binomial_tail_at_least(n: int, k: int, p: float) -> float:
    return sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))


@pytest.mark.parametrize(("n", "k"), [(20, 15), (100, 75), (100, 3), (37, 36)])
def test_each_bound_is_the_one_sided_clopper_pearson_bound(n, k):
    """At the bound the binomial tail is exactly 2.5%: P(Bin(n, low) >= k) = 0.025 and
    P(Bin(n, high) <= k) = 0.025, by exact sums (no shared code)."""
    from ldp_core.audit import _bounds

    low, high = _bounds(n, k, AUDIT_TAIL)
    assert _binomial_tail_at_least(n, k, float(low)) == pytest.approx(AUDIT_TAIL, rel=1e-9)
    assert 1 - _binomial_tail_at_least(n, k + 1, float(high)) == pytest.approx(AUDIT_TAIL,
                                                                                rel=1e-9)


def test_lower_bound_is_the_largest_log_ratio_of_the_bounds():
    from ldp_core.audit import _bounds

    lo1, hi1 = _bounds(100, 80, AUDIT_TAIL)
    lo0, hi0 = _bounds(120, 30, AUDIT_TAIL)
    by_hand = max(math.log(lo1 / hi0), math.log((1 - hi0) / (1 - lo1)),
                  math.log(lo0 / hi1), math.log((1 - hi1) / (1 - lo0)), 0.0)
    assert audit_epsilon(80, 100, 30, 120) == pytest.approx(by_hand, rel=1e-12)


def test_lower_bound_is_symmetric_in_outputs_and_inputs_and_floored_at_zero():
    k1, n1, k0, n0 = 71, 100, 22, 90
    eps = audit_epsilon(k1, n1, k0, n0)
    assert audit_epsilon(n1 - k1, n1, n0 - k0, n0) == pytest.approx(eps, rel=1e-12)
    assert audit_epsilon(k0, n0, k1, n1) == pytest.approx(eps, rel=1e-12)
    assert audit_epsilon(50, 100, 50, 100) == 0.0
    counts = np.arange(0, 101)
    assert np.all(audit_epsilon(counts, 100, 50, 100) >= 0)


def test_lower_bound_grows_with_the_evidence():
    """More runs with the same observed frequencies give a larger bound."""
    bounds = [audit_epsilon(3 * n // 4, n, n // 4, n) for n in (40, 100, 400, 4000)]
    assert bounds == sorted(bounds)
    assert bounds[-1] < LN3  # and stay below the true ε at the true frequencies


@pytest.mark.parametrize("n", sorted(MEDIANS))
def test_check_values_median_by_simulation(n):
    """RR at ln 3, 4,000 simulated audits (fixed seed): the median ε_LB is the issue's
    check value ± 0.03. Power: RR at 0.7 ln 3 (30% off) gives a median outside."""
    rr = EpsilonRR(LN3)
    draws = simulate_audit(rr.a, rr.b, n, size=SIMULATIONS, rng=np.random.default_rng([33, n]))
    assert abs(float(np.median(draws)) - MEDIANS[n]) <= MEDIAN_TOLERANCE
    off = EpsilonRR(0.7 * LN3)
    wrong = simulate_audit(off.a, off.b, n, size=SIMULATIONS, rng=np.random.default_rng([34, n]))
    assert abs(float(np.median(wrong)) - MEDIANS[n]) > MEDIAN_TOLERANCE


@pytest.mark.parametrize("n", sorted(MEDIANS))
def test_check_values_median_exactly(n):
    assert abs(audit_distribution(0.75, 0.25, n).median() - MEDIANS[n]) <= MEDIAN_TOLERANCE


def test_exact_medians_to_three_decimals():
    """What the exact distribution gives (the simulation's median sits on one of its
    atoms, within a few hundredths)."""
    got = [round(audit_distribution(0.75, 0.25, n).median(), 3) for n in sorted(MEDIANS)]
    assert got == [0.682, 0.807, 0.918]


@pytest.mark.parametrize("n", [100, 500])
def test_exact_distribution_matches_simulation(n):
    """The exact P(ε_LB <= t) at several t against 20,000 fixed-seed simulated audits,
    within 4 standard errors; the distribution at 1.3 n (30% more runs) is rejected."""
    size = 20_000
    draws = simulate_audit(0.75, 0.25, n, size=size, rng=np.random.default_rng([35, n]))
    exact, other = audit_distribution(0.75, 0.25, n), audit_distribution(0.75, 0.25, int(1.3 * n))
    rejected = False
    for t in np.quantile(draws, [0.1, 0.3, 0.5, 0.7, 0.9]):
        p = 1 - exact.exceeds(float(t))
        se = math.sqrt(p * (1 - p) / size)
        assert abs(float(np.mean(draws <= t)) - p) <= 4 * se
        q = 1 - other.exceeds(float(t))
        rejected |= abs(float(np.mean(draws <= t)) - q) > 4 * math.sqrt(q * (1 - q) / size)
    assert rejected


def test_exact_distribution_sums_to_one_and_has_the_right_mean():
    dist = audit_distribution(0.75, 0.25, 60, 80)
    assert dist.probabilities.sum() == pytest.approx(1.0, abs=1e-12)
    k1, k0 = np.meshgrid(np.arange(61), np.arange(81), indexing="ij")
    pmf1 = np.array([math.comb(60, k) * 0.75**k * 0.25 ** (60 - k) for k in range(61)])
    pmf0 = np.array([math.comb(80, k) * 0.25**k * 0.75 ** (80 - k) for k in range(81)])
    mean = float((audit_epsilon(k1, 60, k0, 80) * pmf1[:, None] * pmf0[None, :]).sum())
    assert dist.mean() == pytest.approx(mean, rel=1e-9)


def test_honest_phones_raise_a_false_alarm_at_most_five_percent_by_simulation():
    """4,000 simulated honest audits at ln 3 and N = 100 (fixed seed): ε_LB > ln 3 in at
    most 5%, with room for 3 SE. Power: the same count for the p = 0.9 cheat is far
    above 5%."""
    rr = EpsilonRR(LN3)
    draws = simulate_audit(rr.a, rr.b, 100, size=SIMULATIONS, rng=np.random.default_rng(36))
    rate = float(np.mean(draws > LN3))
    assert rate + 3 * math.sqrt(0.05 * 0.95 / SIMULATIONS) <= 0.05
    cheat = simulate_audit(CHEAT.a, CHEAT.b, 100, size=SIMULATIONS,
                           rng=np.random.default_rng(37))
    assert float(np.mean(cheat > LN3)) > 0.5


@pytest.mark.parametrize("design", [EpsilonRR(0.5), EpsilonRR(LN3), DieRR(4, 3),
                                    EpsilonRR(2.0), DieRR(6, 5), WarnerRR(0.6)], ids=repr)
@pytest.mark.parametrize("n", [20, 100, 500, 2000])
def test_false_alarm_rate_is_at_most_two_tails_exactly(design, n):
    """P(ε_LB > the design's own ε) <= 2 × 2.5% for every design and N (exact)."""
    rate = audit_distribution(design.a, design.b, n).exceeds(design.epsilon)
    assert rate <= 2 * AUDIT_TAIL


def test_the_cheat_is_caught_at_least_99_percent_at_n_100():
    exact = audit_distribution(CHEAT.a, CHEAT.b, 100).exceeds(LN3)
    assert exact >= 0.99
    draws = simulate_audit(CHEAT.a, CHEAT.b, 100, size=SIMULATIONS,
                           rng=np.random.default_rng(38))
    caught = float(np.mean(draws > LN3))
    assert caught >= 0.99 - 3 * math.sqrt(0.99 * 0.01 / SIMULATIONS)
    # power: with N = 20 the same test fails, so it can fail
    assert audit_distribution(CHEAT.a, CHEAT.b, 20).exceeds(LN3) < 0.99


def test_runs_needed_to_catch_the_cheat():
    n = audit_runs_needed(CHEAT.a, CHEAT.b, LN3)
    assert n == 77
    assert audit_distribution(CHEAT.a, CHEAT.b, n).exceeds(LN3) >= 0.99
    assert audit_distribution(CHEAT.a, CHEAT.b, n - 10).exceeds(LN3) < 0.99
    assert audit_runs_needed(0.75, 0.25, LN3, limit=2000) is None


def test_unequal_runs_per_input():
    """The classroom's inputs are balanced at random, so n1 and n0 differ a little."""
    dist = audit_distribution(0.75, 0.25, 110, 90)
    assert dist.n1 == 110 and dist.n0 == 90
    draws = simulate_audit(0.75, 0.25, 110, 90, size=4000, rng=np.random.default_rng(39))
    assert abs(float(np.median(draws)) - dist.median()) < 0.03


@pytest.mark.parametrize(("call", "message"), [
    (lambda: audit_epsilon(5, 4, 1, 4), "yes must be <= n"),
    (lambda: audit_epsilon(1, 0, 1, 4), "n must be at least 1"),
    (lambda: audit_epsilon(1, 4, 1, 4, tail=0.5), "tail must be in"),
    (lambda: audit_distribution(1.5, 0.25, 10), "a must be in"),
    (lambda: audit_distribution(0.75, 0.25, 0), "n1 must be an integer"),
    (lambda: audit_distribution(0.75, 0.25, 10).quantile(2), "q must be in"),
    (lambda: simulate_audit(0.75, 0.25, 10, size=0), "size must be an integer"),
])
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()
