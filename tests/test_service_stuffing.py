"""Rehearsing ballot stuffing through PollService, on every store backend.

``add_stuffed_reports`` stores fake users who always send the report that pushes the
target (``ldp_core.fake_report``): validated like real reports, flagged simulated, left out
of exports, removed by ``clear_simulated``. Each stuffed report moves the target's
estimated count by exactly (1 − b)/(a − b), and enough of them make the plausibility check
fire, for every kind of question.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ldp_core
from classroom import BadInput, QuestionClosed
from classroom.domain import CLASS_EXERCISE

DIE = dict(CLASS_EXERCISE)
GRR4 = {"design": "grr", "d": 4, "epsilon": math.log(3)}
OUE4 = ldp_core.UnaryEncoding.optimized(4, math.log(3)).params()
FLAVOURS = ("Vanilla", "Chocolate", "Strawberry", "Pistachio")


def test_stuffed_yes_no_reports_move_the_count_by_1_5_each_and_raise_the_alarm(
        service, open_question):
    _, q = open_question(design_params=DIE)
    service.results.add_simulated_answers(q.id, [1] * 30 + [0] * 70, seed=1)
    before = service.results.estimate(q.id)
    assert before.plausibility.fits
    assert service.results.add_stuffed_reports(q.id, 20) == 20
    after = service.results.estimate(q.id)
    assert after.n == after.n_simulated == 120
    assert after.counts[1] == before.counts[1] + 20  # every stuffer sent "1"
    # The estimated count n μ̂ = 2V − n/2 grows by exactly 1.5 per stuffer.
    mu_before, mu_after = before.result.estimate.mu_hat, after.result.estimate.mu_hat
    assert 120 * mu_after == pytest.approx(100 * mu_before + 20 * 1.5)
    service.results.add_stuffed_reports(q.id, 300)
    check = service.results.estimate(q.id).plausibility
    assert not check.fits and check.direction == "too_many_yes"


def test_stuffers_can_target_either_answer_and_are_validated(service, open_question):
    _, q = open_question(design_params=DIE)
    service.results.add_stuffed_reports(q.id, 5, target=0)
    assert service.results.estimate(q.id).counts == (5, 0)
    for bad in (0, -1, True, 2.5, 100_001):
        with pytest.raises(BadInput, match="number of stuffers"):
            service.results.add_stuffed_reports(q.id, bad)
    with pytest.raises(BadInput, match="target must be an option number 0..1"):
        service.results.add_stuffed_reports(q.id, 3, target=2)
    service.running.close_question(q.id)
    with pytest.raises(QuestionClosed, match="before adding stuffers"):
        service.results.add_stuffed_reports(q.id, 3)


@pytest.mark.parametrize("params", [GRR4, OUE4], ids=["grr", "oue"])
def test_stuffed_categorical_reports_support_the_target_only(service, open_question, params):
    _, q = open_question(options=FLAVOURS, kind="categorical", design_params=params)
    assert service.results.add_stuffed_reports(q.id, 50, target=2) == 50
    est = service.results.estimate(q.id)
    assert est.counts == (0, 0, 50, 0)  # each stuffed report supports Strawberry alone
    oracle = q.design
    gain = ldp_core.fake_report_gain(oracle, 2)
    assert est.result.raw[2] == pytest.approx(50 * gain - 0 * oracle.q)
    assert gain == pytest.approx(3.0 if params is OUE4 else 2.5)
    if params is OUE4:  # unary encoding's check counts the 1-bits per report
        assert not est.plausibility.fits


@pytest.mark.parametrize("design", ["duchi", "piecewise", "hybrid", "laplace"])
def test_stuffed_numeric_reports_are_the_largest_the_server_accepts(service, open_question,
                                                                    design):
    params = {"design": design, "epsilon": 1.0, "lo": 0.0, "hi": 12.0}
    _, q = open_question(options=("hours",), kind="numeric", design_params=params)
    service.results.add_simulated_answers(q.id, np.linspace(2.0, 10.0, 60), seed=3)
    assert service.results.estimate(q.id).plausibility.fits
    service.results.add_stuffed_reports(q.id, 300)
    est = service.results.estimate(q.id)
    top = ldp_core.fake_report(q.design.mechanism)
    assert dict(est.result.reports)[q.design.value_of(top)] >= 300
    assert not est.plausibility.fits and est.result.estimate.mean > 6


def test_stuffers_are_simulated_left_out_of_exports_and_cleared(service, open_question):
    _, q = open_question(design_params=DIE)
    service.results.add_stuffed_reports(q.id, 7)
    assert service.results.estimate(q.id).n_simulated == 7
    assert service.results.estimate(q.id, include_simulated=False).n == 0
    assert len(service.results.export_csv(q.id).strip().splitlines()) == 1  # the header alone
    assert service.results.clear_simulated(q.id) == 7 and service.results.estimate(q.id).n == 0
