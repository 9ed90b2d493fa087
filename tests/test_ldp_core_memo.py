"""ldp_core memoization (RAPPOR's two steps; Ding et al.'s α-point rounding): ε∞ and ε₁
with RAPPOR's own check values, the channel and the loss of k reports by brute force over
the memo and every report sequence (exact fractions), and fixed-seed simulations of a
series with a power check."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from ldp_core import (
    DuchiMechanism,
    EpsilonRR,
    MemoRR,
    alpha_round,
    composed_epsilon,
    design_from_params,
    majority_reveal_probability,
    rappor_epsilons,
    simulate_numeric_series,
    simulate_series,
    yes_count_distribution,
)

F, P, Q = Fraction(1, 2), Fraction(1, 2), Fraction(3, 4)  # RAPPOR's example


def test_rappor_check_values():
    """h = 2, f = 0.5, p = 0.5, q = 0.75: ε∞ = 4.394 and ε₁ = 1.0743 (RAPPOR, Section 3)."""
    eps_inf, eps_one = rappor_epsilons(0.5, 0.5, 0.75, h=2)
    assert round(eps_inf, 3) == 4.394
    assert round(eps_one, 4) == 1.0743
    assert eps_inf == pytest.approx(4 * math.log(3), rel=1e-12)


def test_rappor_formulas_from_the_bloom_filter_channel():
    """Two values whose Bloom filters differ in h bits each way: the exact loss of the
    memo and of one report, by brute force over those 2h bits."""
    f, p, q, h = 0.5, 0.5, 0.75, 2
    memo = MemoRR(f, p, q)
    perm = {1: 1 - f / 2, 0: f / 2}
    one = {1: memo.a, 0: memo.b}

    def loss(channel: dict[int, float]) -> float:
        worst = 0.0
        for out in itertools.product((0, 1), repeat=2 * h):
            v = math.prod((channel[1] if s else 1 - channel[1]) if i < h else
                          (channel[0] if s else 1 - channel[0]) for i, s in enumerate(out))
            w = math.prod((channel[0] if s else 1 - channel[0]) if i < h else
                          (channel[1] if s else 1 - channel[1]) for i, s in enumerate(out))
            worst = max(worst, abs(math.log(v / w)))
        return worst

    assert rappor_epsilons(f, p, q, h) == pytest.approx((loss(perm), loss(one)), rel=1e-12)


def _sequence(seq: tuple[int, ...], truth: int) -> Fraction:
    """P(report sequence | truth) through the memo, exactly."""
    memo_one = 1 - F / 2 if truth else F / 2
    total = Fraction(0)
    for memo, weight in ((1, memo_one), (0, 1 - memo_one)):
        r = Q if memo else P
        prob = weight
        for s in seq:
            prob *= r if s else 1 - r
        total += prob
    return total


def test_one_reports_channel_is_the_two_steps():
    memo = MemoRR(float(F), float(P), float(Q))
    assert memo.a == float(_sequence((1,), 1)) and memo.b == float(_sequence((1,), 0))
    assert memo.branches()["truth"] + memo.branches()["yes"] == _sequence((1,), 1)
    assert memo.epsilon == pytest.approx(math.log((1 - 0.5625) / (1 - 0.6875)), rel=1e-12)


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8])
def test_k_memoized_reports_by_brute_force(k):
    memo = MemoRR(float(F), float(P), float(Q))
    worst = max(abs(math.log(_sequence(s, 1) / _sequence(s, 0)))
                for s in itertools.product((0, 1), repeat=k))
    assert composed_epsilon(memo, k) == pytest.approx(worst, rel=1e-12)
    by_j = [sum(_sequence(s, 1) for s in itertools.product((0, 1), repeat=k) if sum(s) == j)
            for j in range(k + 1)]
    assert yes_count_distribution(memo, k, 1) == pytest.approx([float(x) for x in by_j])


def test_the_memo_caps_the_cost_of_a_series():
    """k reports of an unchanged answer: ε₁ at k = 1, growing, never above ε∞, and close
    to it after many; without the memo (RR at the same ε₁) the cost is k ε₁."""
    memo = MemoRR.from_epsilons(math.log(3), 0.5)
    costs = [composed_epsilon(memo, k) for k in (1, 2, 5, 20, 100, 5000)]
    assert costs[0] == pytest.approx(memo.epsilon, rel=1e-9)
    assert costs == sorted(costs)
    assert max(costs) <= memo.epsilon_series
    assert costs[-1] == pytest.approx(memo.epsilon_series, rel=1e-6)
    assert composed_epsilon(EpsilonRR(0.5), 5) == pytest.approx(2.5, rel=1e-9)


def test_a_majority_of_memoized_reports_tells_at_most_the_memo():
    memo = MemoRR.from_epsilons(math.log(3), 0.5)
    assert majority_reveal_probability(memo, 2001) == pytest.approx(0.75, abs=1e-6)
    assert majority_reveal_probability(EpsilonRR(0.5), 2001) > 0.999


def test_from_epsilons_and_params():
    memo = MemoRR.from_epsilons(2.0, 0.7)
    assert memo.epsilon_series == pytest.approx(2.0, rel=1e-12)
    assert memo.epsilon == pytest.approx(0.7, rel=1e-9)
    assert memo.p == pytest.approx(1 - memo.q)
    assert design_from_params(memo.params()) == memo
    assert MemoRR.from_epsilons(1.0, 1.0).q == 1.0
    with pytest.raises(ValueError, match="epsilon must be in"):
        MemoRR.from_epsilons(1.0, 1.5)
    with pytest.raises(ValueError, match="p < q"):
        MemoRR(0.5, 0.75, 0.5)
    with pytest.raises(ValueError, match="f must be in"):
        MemoRR(1.0, 0.25, 0.75)


def test_the_device_samples_each_step_exactly():
    """Decimal parameters give exact integer weights for both steps, so what the phone
    samples has the design's own ε∞ and ε₁."""
    memo = MemoRR(0.5, 0.25, 0.75)
    assert memo.permanent.device_epsilon() == memo.epsilon_series
    assert memo.instant.sampling_weights() == (2, 0, 1, 1)
    assert memo.device_epsilon() == memo.epsilon


def test_simulated_series_keeps_one_memo_per_answer():
    """5 lectures, 40,000 students with an unchanged answer: the number of "yes" reports
    per student follows the memo's mixture (each count within 4 SE), and independent
    reports (Bin(5, a), the same one-report channel) are rejected."""
    memo, k, n = MemoRR.from_epsilons(math.log(3), 0.5), 5, 40_000
    truths = np.ones((n, k), dtype=np.uint8)
    counts = np.bincount(simulate_series(memo, truths, rng=2026).sum(axis=1),
                         minlength=k + 1) / n
    expected = yes_count_distribution(memo, k, 1)
    iid = yes_count_distribution(EpsilonRR(memo.epsilon), k, 1)
    se = np.sqrt(expected * (1 - expected) / n)
    assert np.all(np.abs(counts - expected) <= 4 * se)
    assert np.any(np.abs(counts - iid) > 4 * np.sqrt(iid * (1 - iid) / n))


def test_a_changed_answer_uses_a_second_memo():
    """Students who answer yes twice and then no twice: the last two reports come from
    the "no" memo, independent of the first two."""
    memo, n = MemoRR(0.5, 0.25, 0.75), 50_000
    reports = simulate_series(memo, np.tile([1, 1, 0, 0], (n, 1)), rng=7)
    assert reports[:, :2].mean() == pytest.approx(memo.a, abs=4 * math.sqrt(0.25 / (2 * n)))
    assert reports[:, 2:].mean() == pytest.approx(memo.b, abs=4 * math.sqrt(0.25 / (2 * n)))
    first, later = reports[:, 0].astype(float), reports[:, 2].astype(float)
    assert abs(np.corrcoef(first, later)[0, 1]) < 4 / math.sqrt(n)
    same = np.corrcoef(reports[:, 0], reports[:, 1])[0, 1]
    assert same > 10 / math.sqrt(n)  # two reports of one memo are correlated


def test_alpha_rounding_is_unbiased_over_alpha():
    """Over an even grid of α the mean level is x·s up to the grid's step."""
    alphas = (np.arange(10_000) + 0.5) / 10_000
    for x in (0.0, 0.13, 0.5, 0.77, 1.0):
        levels = alpha_round(np.full(alphas.size, x), 7, alphas)
        assert levels.mean() == pytest.approx(7 * x, abs=1e-3)
        assert set(np.unique(levels)) <= {math.floor(7 * x), math.ceil(7 * x), 7}
    with pytest.raises(ValueError, match="alpha must lie"):
        alpha_round([0.5], 4, [1.0])


def test_numeric_series_reads_back_the_mean_position():
    """Ding et al.'s memoized one-bit mean: a class of 60,000 values (fixed seed); the
    reports' mean is the memo's report probability at the class's mean position (4 SE);
    a mean position 30% off is rejected."""
    memo, n = MemoRR.from_epsilons(math.log(3), 0.6), 60_000
    rng = np.random.default_rng(17)
    x = rng.beta(2, 5, size=(n, 1))
    reports = simulate_numeric_series(memo, x, 8, rng=18)
    se = math.sqrt(0.25 / n)
    assert reports.mean() == pytest.approx(memo.report_probability(x.mean()), abs=4 * se)
    assert abs(reports.mean() - memo.report_probability(1.3 * x.mean())) > 4 * se


def test_a_symmetric_memo_report_is_duchis_bit():
    """One report of a number through the symmetric memo has Duchi et al.'s channel at
    ε₁ on the same range: P(report 1 | position x) = P(+c | 2x − 1)."""
    memo = MemoRR.from_epsilons(2.0, 0.8)
    duchi = DuchiMechanism(0.8)
    for x in (0.0, 0.25, 0.5, 1.0):
        assert memo.report_probability(x) == pytest.approx(float(duchi.p_plus(2 * x - 1)),
                                                           rel=1e-12)


def test_a_constant_number_keeps_one_memo():
    """A student whose value never changes reports one memo every time."""
    memo = MemoRR(0.5, 0.0, 1.0)  # no instantaneous noise: the reports are the memo
    reports = simulate_numeric_series(memo, np.full((2000, 6), 0.4), 5, rng=3)
    assert np.all(reports == reports[:, :1])
