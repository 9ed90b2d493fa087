"""ldp_core.repeated: the averaging attack, against brute force over every report sequence
(exact fractions) and a fixed-seed simulation with a power check."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from ldp_core import (
    DieRR,
    EpsilonRR,
    WarnerRR,
    composed_epsilon,
    majority_reveal_probability,
    repeated_posterior,
)

A, B = Fraction(3, 4), Fraction(1, 4)  # the class exercise: P(report 1 | 1), P(report 1 | 0)


def _sequence_probability(seq: tuple[int, ...], p: Fraction) -> Fraction:
    out = Fraction(1)
    for bit in seq:
        out *= p if bit else 1 - p
    return out


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8, 10])
def test_composed_epsilon_is_k_ln3_by_brute_force(k):
    worst = max(abs(math.log(_sequence_probability(s, A) / _sequence_probability(s, B)))
                for s in itertools.product((0, 1), repeat=k))
    assert worst == pytest.approx(k * math.log(3), rel=1e-12)
    assert composed_epsilon(DieRR(4, 3), k) == pytest.approx(worst, rel=1e-12)


@pytest.mark.parametrize("eps", [0.1, 0.5, math.log(3), 2.0])
@pytest.mark.parametrize("k", [1, 4, 25])
def test_composition_is_tight_for_epsilon_rr(eps, k):
    assert composed_epsilon(EpsilonRR(eps), k) == pytest.approx(k * eps, rel=1e-9)


@pytest.mark.parametrize("k", [1, 2, 3, 6, 9])
@pytest.mark.parametrize("prior", [Fraction(1, 2), Fraction(1, 5)])
def test_posterior_and_majority_by_brute_force(k, prior):
    post = repeated_posterior(DieRR(4, 3), k, float(prior))
    by_j_yes: dict[int, Fraction] = {}
    by_j_no: dict[int, Fraction] = {}
    majority = Fraction(0)
    for seq in itertools.product((0, 1), repeat=k):
        j = sum(seq)
        py, pn = _sequence_probability(seq, A), _sequence_probability(seq, B)
        by_j_yes[j] = by_j_yes.get(j, Fraction(0)) + prior * py
        by_j_no[j] = by_j_no.get(j, Fraction(0)) + (1 - prior) * pn
        majority += py * (1 if 2 * j > k else Fraction(1, 2) if 2 * j == k else 0)
    for j in range(k + 1):
        exact = by_j_yes[j] / (by_j_yes[j] + by_j_no[j])
        assert post[j] == pytest.approx(float(exact), rel=1e-12)
    assert majority_reveal_probability(DieRR(4, 3), k) == pytest.approx(float(majority),
                                                                        rel=1e-12)


def test_the_posterior_is_calibrated_in_simulation_with_a_power_check():
    """Simulated students (prior 1/2), k = 5 reports each: among those with j yes reports,
    the share truly yes matches the posterior within 4 SE; the posterior of k = 4 (one
    report forgotten) is rejected by the same test."""
    k, n = 5, 200_000
    rng = np.random.default_rng(20261124)
    truth = rng.random(n) < 0.5
    p = np.where(truth, 0.75, 0.25)
    j = (rng.random((n, k)) < p[:, None]).sum(axis=1)
    post, wrong = repeated_posterior(DieRR(4, 3), k), repeated_posterior(DieRR(4, 3), k - 1)
    rejected = 0
    for value in range(k):
        group = truth[j == value]
        share, se = group.mean(), math.sqrt(post[value] * (1 - post[value]) / group.size)
        assert abs(share - post[value]) < 4 * se
        rejected += abs(share - wrong[value]) > 4 * se
    assert rejected >= 3


def test_majority_reveals_more_as_k_grows():
    values = [majority_reveal_probability(WarnerRR(0.7), k) for k in (1, 3, 9, 27, 81)]
    assert values == sorted(values) and values[0] == pytest.approx(0.7) and values[-1] > 0.99


@pytest.mark.parametrize("call, message", [
    (lambda: composed_epsilon("die", 3), "BinaryDesign"),
    (lambda: composed_epsilon(DieRR(4, 3), 0), "k"),
    (lambda: repeated_posterior(DieRR(4, 3), 3, 1.5), "prior"),
    (lambda: majority_reveal_probability(DieRR(4, 3), 3, truth=2), "truth"),
])
def test_bad_arguments_say_which(call, message):
    with pytest.raises(ValueError, match=message):
        call()
