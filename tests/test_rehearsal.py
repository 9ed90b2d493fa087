"""Rehearsal: the simulated class has exactly the chosen share, and the dashboard's 95% CI
covers it in 95% of rehearsals, as docs/instructor-guide.md says.

The coverage is measured by simulating many rehearsal classes the way the service
builds them (``exact_class`` truths, randomized by ldp_core's die) and reading each
with the dashboard's interval (``BinaryCounts.normal_interval``: μ̂ ± 1.96 × the
fixed-class SD). The tolerance is four standard errors of the simulated coverage;
the power check shows that the earlier rehearsal, which drew each simulated
student's truth at random (coverage of the chosen share about 91%), falls outside it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ldp_core
from classroom.estimates import exact_class
from tests.conftest import DIE

CLASSES = 20_000
SHARE = 0.6
TOL_SE = 4.0


def _coverage(n: int, truths: np.ndarray, target: np.ndarray, rng) -> float:
    """Share of classes whose 95% CI (the dashboard's) covers ``target``."""
    design = ldp_core.DieRR(4, 3)
    yes = design.perturb(truths.ravel(), rng=rng).reshape(truths.shape).sum(axis=1)
    mu_hat = 2 * yes / n - 0.5  # μ̂ = (V/n − b)/(a − b) for the die
    lo, hi = ldp_core.BinaryCounts.single(design, 0, n).normal_interval(0.95)
    half = (hi - lo) / 2  # the interval's half-width depends on n only
    return float(np.mean(np.abs(mu_hat - target) <= half))


def _binom_pmf(k: int, p: float) -> np.ndarray:
    return np.array([math.comb(k, j) * p**j * (1 - p) ** (k - j) for j in range(k + 1)])


def _exact_coverage(n: int, yes_truths: int, target: float) -> float:
    """P(CI covers target) for a fixed class: V = Bin(v, 3/4) + Bin(n − v, 1/4), exactly."""
    pmf = np.convolve(_binom_pmf(yes_truths, 0.75), _binom_pmf(n - yes_truths, 0.25))
    lo, hi = ldp_core.BinaryCounts.single(ldp_core.DieRR(4, 3), 0, n).normal_interval(0.95)
    mu_hat = 2 * np.arange(n + 1) / n - 0.5
    return float(pmf[np.abs(mu_hat - target) <= (hi - lo) / 2].sum())


@pytest.mark.parametrize("n", [40, 400])
def test_rehearsal_ci_covers_the_simulated_class_share_95_percent(n):
    rng = np.random.default_rng(20261124 + n)
    truth = exact_class("binary", 2, n, SHARE)
    class_share = truth.mean()
    assert class_share == math.floor(SHARE * n + 0.5) / n
    truths = np.tile(truth, (CLASSES, 1))
    covered = _coverage(n, truths, np.full(CLASSES, class_share), rng)
    exact = _exact_coverage(n, int(truth.sum()), class_share)
    assert 0.94 <= exact <= 0.97  # "about 19 rehearsals out of 20"
    se = math.sqrt(exact * (1 - exact) / CLASSES)
    assert abs(covered - exact) <= TOL_SE * se, (covered, exact)
    # Power: the earlier rehearsal drew each truth at random and compared with SHARE;
    # its coverage (about 91%) is far outside the tolerance.
    drawn = (rng.random((CLASSES, n)) < SHARE).astype(np.uint8)
    old = _coverage(n, drawn, np.full(CLASSES, SHARE), rng)
    assert abs(old - exact) > TOL_SE * se, old


def test_exact_class_rounds_to_whole_students():
    assert exact_class("binary", 2, 40, 0.6).sum() == 24
    assert exact_class("binary", 2, 7, 0.5).sum() == 4
    assert exact_class("binary", 2, 10, 0.0).sum() == 0
    assert exact_class("binary", 2, 10, 1.0).sum() == 10
    counts = np.bincount(exact_class("categorical", 4, 10, (0.1, 0.2, 0.3, 0.4)), minlength=4)
    assert counts.tolist() == [1, 2, 3, 4]


def test_service_rehearsal_stores_a_class_with_exactly_the_chosen_share(service):
    poll = service.polls.create_poll("t")
    q = service.running.open_question(
        service.polls.add_question(poll.id, "Vanilla?", design_params=DIE).id)
    truths = service.results.rehearsal_class(q.id, 40, 0.6, seed=1)
    assert sum(truths) == 24 and len(truths) == 40
    assert service.results.add_simulated_answers(q.id, truths[:15]) == 15
    assert service.results.add_simulated_answers(q.id, truths[15:]) == 25
    assert service.results.estimate(q.id).n_simulated == 40
