"""Check all that apply, through the service: the shipped plan, the phone's JSON, reports
randomized as sets, each option's share with its exact 95% interval and the round's ε, the
CSV and the plan file. (tests/test_kinds.py puts the kind through the contract every kind
meets; tests/test_e2e_multiselect.py runs it in Chromium.)"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sqlalchemy as sa

import ldp_core
from classroom import plans
from classroom.domain import BadReport
from phone.present import question_view

PLAN = "survey-check-all-that-apply"
TRUTH = (0.9, 0.5, 0.2, 0.0)


def raw_rows(store, table: str) -> list[dict]:
    with store.engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(sa.text(f"SELECT * FROM {table}"))]


def _started(service):
    poll, questions = service.plans.start_class(plans.shipped_plan(PLAN))
    return poll, questions


def test_the_shipped_plan_asks_one_set_two_ways(service):
    poll, (split, sample) = _started(service)
    assert (split.kind, sample.kind) == ("multiselect", "multiselect")
    assert poll.epsilon_budget == pytest.approx(split.epsilon + sample.epsilon) == 4.4
    shown = question_view(split, None)
    assert shown["input"] == {"type": "checkboxes"}
    assert [o["label"] for o in shown["options"]] == ["Python", "R", "Julia", "C"]
    assert shown["scheme"]["type"] == "set" and shown["scheme"]["mode"] == "split"
    assert question_view(sample, None)["scheme"]["mode"] == "sample"
    assert "whole set" in shown["privacy_note"]
    # The plan file reads back as it was written.
    plan = plans.shipped_plan(PLAN)
    assert plans.loads(plans.dumps(plan)) == plan


@pytest.mark.parametrize("which", [0, 1], ids=["split", "sample"])
def test_each_option_gets_its_share_with_an_exact_interval_and_the_sets_epsilon(service, store,
                                                                                which):
    poll, questions = _started(service)
    q = service.running.open_question(questions[which].id)
    assert service.results.add_simulated_reports(q.id, 600, TRUTH, seed=11) == 600
    est = service.results.estimate(q.id)
    assert est.kind == "multiselect" and est.n == 600
    assert est.epsilon == pytest.approx(2.2)  # the whole set's ε, whatever the mode
    for truth, option in zip(TRUTH, est.result.options, strict=True):
        assert option.exact_low <= truth <= option.exact_high
        assert option.exact_high - option.exact_low < 0.5
    # n Var of each option: ldp_core's formula for the mode (split ε/4 per box, or one box
    # of four at ε), measured against the SD of the fixed class.
    unit = ldp_core.survey_variance_unit(q.design.mode, 2.2, 4, 0.5)
    assert unit == pytest.approx(3.47 if which == 0 else 1.56, abs=0.01)
    assert est.plausibility is not None and est.plausibility.fits
    answers = [r["answer"] for r in raw_rows(store, "reports")]
    assert len(answers) == 600 and all(len(a) == 4 for a in answers)
    if which == 1:  # one box answered, the others not asked
        assert all(sum(c != "-" for c in a) == 1 for a in answers)
    else:
        assert all(set(a) <= {"0", "1"} for a in answers)


def test_a_phone_sends_a_randomized_set_and_nothing_else(service, store):
    poll, questions = _started(service)
    q = service.running.open_question(questions[0].id)
    receipt = service.reports.submit_report(
        poll.join_code, q.id, answer="0110", design_params=q.design_params,
        submission_id="set-0001", device_id="phone-1")
    assert receipt.answer_label == "Python: no; R: yes; Julia: yes; C: no"
    for i, bad in enumerate(([1, 0], "01x0", "0-10", ["Python", "R"], 6)):
        with pytest.raises(BadReport, match="4 characters"):
            service.reports.submit_report(poll.join_code, q.id, answer=bad,
                                          design_params=q.design_params,
                                          submission_id=f"bad-000{i}", device_id="phone-2")
    (row,) = raw_rows(store, "reports")
    assert row["answer"] == "0110"
    sample = service.running.open_question(questions[1].id)
    with pytest.raises(BadReport, match="one option's randomized bit"):
        service.reports.submit_report(poll.join_code, sample.id, answer="0110",
                                      design_params=sample.design_params,
                                      submission_id="set-0002", device_id="phone-1")


def test_the_csv_replays_to_the_same_estimate(service):
    poll, questions = _started(service)
    q = service.running.open_question(questions[1].id)
    service.results.add_simulated_reports(q.id, 80, TRUTH, seed=5)
    text = service.results.export_csv(q.id, include_simulated=True)
    assert text.splitlines()[0] == "round,answer,answer_label,design_params,created_at"
    replay = service.results.import_csv(text)
    live = service.results.estimate(q.id)
    assert replay.kind == "multiselect" and replay.n == live.n == 80
    assert replay.result.options == live.result.options


def test_the_two_ways_trade_places_where_ldp_core_says():
    """Split wins above ε ≈ 4.2 for four boxes at a share of ½ (first order), sample below;
    the histogram lab draws both."""
    above = ldp_core.split_wins_above(4)
    assert above is not None and 4.0 < above < 4.5
    for eps in (above * 0.9, above * 1.1):
        split, sample = (ldp_core.survey_variance_unit(m, eps, 4) for m in ("split", "sample"))
        assert (split < sample) == (eps > above)
    assert ldp_core.survey_variance_unit("sample", 2.0, 4) == pytest.approx(
        4 * (0.25 + math.exp(2.0) / math.expm1(2.0) ** 2))
    assert np.isfinite(ldp_core.survey_variance_unit("split", 0.4, 8))
