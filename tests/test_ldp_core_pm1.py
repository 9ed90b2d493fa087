"""Seed 000's bound E|A - mean| <= c_eps / (2 sqrt(n)) (Smith's slide, CS208 2022), on the
scale where it holds: the estimated share (A + 1) / 2, not the +/-1 mean A itself."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp_core import EpsilonRR, pm1_mean_abs_error


def _bound(eps: float, n: int) -> float:
    return EpsilonRR(eps).c_epsilon / (2 * math.sqrt(n))


def test_the_audit_figure_on_the_pm1_scale():
    assert pm1_mean_abs_error(0.5, 100, 0) / _bound(0.5, 100) == pytest.approx(1.55, abs=0.005)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, math.log(3), 2.0, 4.0])
@pytest.mark.parametrize("n", [1, 10, 100, 1000])
def test_the_bound_holds_for_the_share_and_not_for_pm1(eps, n):
    errors = [pm1_mean_abs_error(eps, n, k) for k in sorted({0, n // 3, n // 2, n})]
    assert max(errors) / 2 <= _bound(eps, n)  # the share (A + 1)/2: the bound holds
    if eps <= 1.0 and n >= 10:
        assert max(errors) > _bound(eps, n)  # on the +/-1 scale it does not


def test_exact_error_matches_simulation():
    eps, n, k = 0.7, 60, 25
    rng = np.random.default_rng(7)
    d = EpsilonRR(eps)
    truth = np.r_[np.ones(k), np.zeros(n - k)].astype(np.uint8)
    reports = d.perturb(np.tile(truth, 20_000), rng=rng).reshape(20_000, n)
    a_hat = d.c_epsilon * (2 * reports.mean(axis=1) - 1)
    sim = np.abs(a_hat - (2 * k - n) / n)
    exact = pm1_mean_abs_error(eps, n, k)
    assert abs(sim.mean() - exact) <= 4 * sim.std() / math.sqrt(sim.size)
    assert abs(sim.mean() - 1.3 * exact) > 4 * sim.std() / math.sqrt(sim.size)  # power
