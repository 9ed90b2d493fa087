"""Memoized questions of a series (RAPPOR's two steps through the binary kind): the
design and its ε∞ and ε₁, the dashboard's estimate of one lecture's share, the privacy
budget over five lectures of one series, and a lesson plan's ``series``."""

from __future__ import annotations

import math
import secrets

import numpy as np
import pytest
import tomli_w

import ldp_core
from classroom import BadInput, OverBudget, kinds, plans
from classroom.domain import canonical_design, design_from_json, question_design
from classroom.kinds.binary import SeriesMemo
from ldp_core.memo import rappor_epsilons, simulate_series

MEMO = {"design": "memo", "f": 0.5, "p": 0.25, "q": 0.75, "series": "weekly-sleep"}
LN3 = math.log(3)


def test_the_design_goes_through_the_binary_kind_and_keeps_its_series():
    design, text = canonical_design("binary", MEMO)
    assert isinstance(design, SeriesMemo) and design.series == "weekly-sleep"
    assert design_from_json(text) == design
    assert text == ('{"design":"memo","f":0.5,"kind":"binary","p":0.25,"q":0.75,'
                    '"series":"weekly-sleep"}')
    assert kinds.kind("binary").phone_scheme(design, MEMO) == {
        "type": "memo", "series": "weekly-sleep", "f": 0.5, "p": 0.25, "q": 0.75}
    for bad in ("", "Weekly", "a b", "-x", "x" * 41, 3):
        with pytest.raises(ValueError, match="series"):
            canonical_design("binary", {**MEMO, "series": bad})
    with pytest.raises(ValueError, match="series"):
        canonical_design("binary", {k: v for k, v in MEMO.items() if k != "series"})


def test_epsilon_check_values():
    """RAPPOR's own example, h = 2, f = 0.5, p = 0.5, q = 0.75: ε∞ = 4.394, ε₁ = 1.0743;
    a yes/no answer is one bit (h = 1 counts its two values): ε∞ = ln 3 at f = 0.5."""
    eps_inf, eps_one = rappor_epsilons(0.5, 0.5, 0.75, h=2)
    assert round(eps_inf, 3) == 4.394 and round(eps_one, 4) == 1.0743
    design, _ = canonical_design("binary", {**MEMO, "p": 0.5})
    assert design.epsilon_series == pytest.approx(LN3, rel=1e-12)
    assert design.epsilon == pytest.approx(math.log(0.4375 / 0.3125), rel=1e-12)
    sym, _ = canonical_design("binary", MEMO)
    assert sym.epsilon == pytest.approx(math.log(0.625 / 0.375), rel=1e-12)  # ln(5/3)


def test_limits_cover_the_whole_series():
    with pytest.raises(BadInput, match="ε∞"):  # f = 0.001: ε∞ = 8.3, beyond 5
        question_design("binary", {**MEMO, "f": 0.001}, ("No", "Yes"))


def test_the_dashboards_estimate_is_unbiased_and_its_exact_interval_covers():
    """Classes of 120 with 35% yes, through the memo, estimated as the dashboard does (the
    kind's estimate_round): the mean of 600 estimates lies within 4 standard errors of
    the truth (SE = the estimator's SD / √600), and the exact 95% interval covers the
    truth at least 95% of the time less 3 of its standard errors. Lecture 3 of the same
    students (same memos) is unbiased too."""
    design, text = canonical_design("binary", MEMO)
    kind = kinds.kind("binary")
    n, share, classes = 120, 0.35, 600
    truths = np.repeat([1, 0], [round(n * share), n - round(n * share)])
    rng = np.random.default_rng(20261202)
    for lecture in (0, 2):
        estimates, covered = [], 0
        for _ in range(classes):
            reports = simulate_series(design, np.tile(truths[:, None], (1, 3)), rng=rng)
            yes = int(reports[:, lecture].sum())
            items = [(text, "1", yes), (text, "0", n - yes)]
            est = kind.estimate_round(lambda _t: design, items, None, ("No", "Yes"), 0.95)
            b = est.result.estimate
            estimates.append(b.mu_hat)
            covered += b.exact_low <= share <= b.exact_high
        sd = math.sqrt(float(design.report_probability(share))
                       * (1 - float(design.report_probability(share)))) / (
            (design.a - design.b) * math.sqrt(n))
        assert abs(np.mean(estimates) - share) < 4 * sd / math.sqrt(classes)
        assert np.std(estimates) == pytest.approx(sd, rel=0.15)
        assert covered / classes >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / classes)


def _submit(service, poll, q, device):
    return service.reports.submit_report(
        poll.join_code, q.id, answer=1, design_params=q.design_params,
        submission_id=f"sub-{secrets.token_hex(8)}", device_id=device)


def test_five_lectures_of_one_series_cost_the_series_once(service):
    """A poll with a budget of ε∞ = ln 3: five questions of one series (ε₁ = ln 5/3 each,
    5 ε₁ = 2.55 without the memo) all open, are answered, and cost ln 3 in all, for the
    poll and for a device; a question of another series costs again; plain RR at the
    same ε₁ is refused at the third."""
    poll = service.polls.create_poll("a course")
    poll = service.polls.set_budget(poll.id, LN3)
    eps_one = math.log(5 / 3)
    spent_before = []
    for lecture in range(5):
        q = service.polls.add_question(poll.id, f"Slept 7 hours? (week {lecture + 1})",
                                       design_params=dict(MEMO))
        q = service.running.open_question(q.id)
        _, before, cost = service.reports.device_budget(poll.id, q.id, "phone-a")
        spent_before.append((before, cost))
        receipt = _submit(service, poll, q, "phone-a")
        _submit(service, poll, q, "phone-b")
        assert receipt.epsilon == pytest.approx(eps_one)
        service.running.close_question(q.id)
    status = service.polls.budget(poll.id)
    assert status.committed == pytest.approx(LN3)
    assert sum(c for *_, c in status.rounds) == pytest.approx(LN3)
    assert service.reports.spent_epsilon(poll.id, "phone-a") == pytest.approx(LN3)
    assert [round(s, 4) for s, _ in spent_before] == [0, 0.5108, 1.0217, round(LN3, 4),
                                                      round(LN3, 4)]
    assert [round(c, 4) for _, c in spent_before] == [0.5108, 0.5108, 0.077, 0, 0]
    with pytest.raises(OverBudget):  # another series: its own memo, its own cost
        service.polls.add_question(poll.id, "Coffee today?",
                                   design_params={**MEMO, "series": "weekly-coffee"})
    plain = service.polls.create_poll("no memo")
    plain = service.polls.set_budget(plain.id, LN3)
    for lecture in range(3):
        if lecture == 2:
            with pytest.raises(OverBudget):
                service.polls.add_question(plain.id, "Slept 7 hours?", design_params={
                    "design": "epsilon", "epsilon": eps_one})
            break
        q = service.polls.add_question(plain.id, "Slept 7 hours?", design_params={
            "design": "epsilon", "epsilon": eps_one})
        q = service.running.open_question(q.id)
        _submit(service, plain, q, "phone-a")
        service.running.close_question(q.id)


def test_new_rounds_of_a_series_question_cost_nothing_once_paid(service):
    """One question asked again in five rounds: the series' ε∞ once."""
    poll = service.polls.create_poll("rounds")
    poll = service.polls.set_budget(poll.id, LN3)
    q = service.polls.add_question(poll.id, "Slept 7 hours?", design_params=dict(MEMO))
    q = service.running.open_question(q.id)
    for week in range(5):
        if week:
            service.running.new_round(q.id, open_now=True)
            q = service.polls.question(q.id)
        _submit(service, poll, q, "phone-a")
        service.running.close_question(q.id)
    assert q.round_number == 5
    assert service.polls.budget(poll.id).committed == pytest.approx(LN3)
    assert service.reports.spent_epsilon(poll.id, "phone-a") == pytest.approx(LN3)


def test_a_plan_round_trips_its_series_and_counts_it_once():
    question = {"text": "Did you sleep 7 hours last night?", "kind": "binary",
                "options": ["No", "Yes"], "design": dict(MEMO)}
    text = tomli_w.dumps({"version": 1, "title": "Week 1", "budget": LN3,
                          "questions": [question, {**question, "text": "Again?"}]})
    plan = plans.loads(text)
    assert plan.questions[0].design_params["series"] == "weekly-sleep"
    assert plans.loads(plans.dumps(plan)) == plan
    assert 'series = "weekly-sleep"' in plans.dumps(plan)
    assert plan.total_epsilon == pytest.approx(min(2 * math.log(5 / 3), LN3))
    with pytest.raises(plans.PlanError) as err:
        plans.loads(text.replace('"weekly-sleep"', '"Weekly sleep"', 1))
    assert any("series" in p for p in err.value.problems)


def test_ldp_core_channel_is_the_one_the_estimator_uses():
    design, _ = canonical_design("binary", MEMO)
    plain = ldp_core.MemoRR(0.5, 0.25, 0.75)
    assert (design.a, design.b) == (plain.a, plain.b) == (0.625, 0.375)


def test_the_dashboard_states_the_series_cost():
    from types import SimpleNamespace

    from ui.dashboard.budget import series_note

    design, _ = canonical_design("binary", MEMO)
    other, _ = canonical_design("binary", {"design": "epsilon", "epsilon": 1.0})
    note = series_note([SimpleNamespace(design=design, round_number=5),
                        SimpleNamespace(design=other, round_number=1)])
    assert note is not None and "“weekly-sleep”" in note
    assert "ε∞ = 1.10" in note and "ε₁ = 0.52" in note and "5 × ε₁ = 2.56" in note
    assert "costs again" in note
    assert series_note([SimpleNamespace(design=other, round_number=1)]) is None


def test_a_series_is_asked_on_the_phone_not_by_hand(service):
    poll = service.polls.create_poll("by hand")
    with pytest.raises(BadInput, match="kept on the phone"):
        service.polls.add_question(poll.id, "Slept?", design_params=dict(MEMO), mode="physical")
