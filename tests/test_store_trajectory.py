"""The estimate as reports arrive: the trajectory of Results.dashboard_snapshot."""

from __future__ import annotations

import math

import pytest

from classroom.domain import CLASS_EXERCISE
from classroom.service import PollService
from classroom.store import Store
from ldp_core import BinaryCounts, DieRR, WarnerRR

DIE = dict(CLASS_EXERCISE)
WARNER = {"design": "warner", "p": 0.8}


@pytest.fixture
def svc(tmp_path):
    return PollService.on(Store(f"sqlite:///{tmp_path / 'c.db'}"))


def _question(svc):
    poll = svc.polls.create_poll("t")
    q = svc.polls.add_question(poll.id, "V?", options=("Chocolate", "Vanilla"), design_params=DIE)
    svc.running.open_question(q.id)
    return poll, q


def _vote(svc, poll, q, i, answer, params=DIE):
    svc.reports.submit_report(poll.join_code, q.id, answer=answer, design_params=params,
                              submission_id=f"sub-traj-{i:05d}", device_id=f"dev-{i}")


def _trajectory(svc, question_id, points=60):
    return svc.results.dashboard_snapshot(question_id, points=points).trajectory


def test_empty_round_has_no_points(svc):
    _, q = _question(svc)
    assert _trajectory(svc, q.id) == ()


def test_points_follow_arrival_order_and_end_at_the_estimate(svc):
    poll, q = _question(svc)
    answers = [1, 1, 0, 1, 0, 0, 1, 1, 1, 0] * 3  # 30 reports
    for i, a in enumerate(answers):
        _vote(svc, poll, q, i, a)
    traj = _trajectory(svc, q.id, points=10)
    assert [p.n for p in traj] == [3, 6, 9, 12, 15, 18, 21, 24, 27, 30]
    for p in traj:  # each point is the estimate of exactly the first n reports
        first = BinaryCounts.single(DieRR(4, 3), sum(answers[:p.n]), p.n)
        assert p.mu_hat == pytest.approx(first.unbiased())
        lo, hi = first.exact_interval()  # the headline interval, as on the dashboard
        assert (p.ci_low, p.ci_high) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi))
        assert 0.0 <= p.ci_low <= p.ci_high <= 1.0
    final = svc.results.estimate(q.id).result.estimate
    assert traj[-1].mu_hat == pytest.approx(final.mu_hat)
    assert traj[-1].ci_high - traj[-1].ci_low < traj[0].ci_high - traj[0].ci_low


def test_design_change_mid_round_uses_each_reports_own_design(svc):
    poll, q = _question(svc)
    for i in range(4):
        _vote(svc, poll, q, i, 1)
    svc.polls.set_design(q.id, WARNER)
    for i in range(4, 10):
        _vote(svc, poll, q, i, i % 2, WARNER)
    last = _trajectory(svc, q.id, points=100)[-1]
    mixed = BinaryCounts(((DieRR(4, 3), 4, 4), (WarnerRR(0.8), 6, 3)))
    assert last.n == 10 and last.mu_hat == pytest.approx(mixed.unbiased())
    assert (last.ci_low, last.ci_high) == pytest.approx(mixed.exact_interval())
    assert math.isfinite(last.ci_low) and math.isfinite(last.ci_high)


def test_categorical_questions_have_no_trajectory(svc):
    poll = svc.polls.create_poll("t")
    q = svc.polls.add_question(poll.id, "Which?", options=("a", "b", "c"), kind="categorical",
                               design_params={"design": "grr", "d": 3, "epsilon": 1.0})
    svc.running.open_question(q.id)
    svc.reports.submit_report(poll.join_code, q.id, answer=2, design_params=q.design_params,
                              submission_id="sub-traj-grr-1", device_id="dev-grr")
    assert _trajectory(svc, q.id) == ()
