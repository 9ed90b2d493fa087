"""Lesson plans in the classroom database, on SQLite and PostgreSQL: save, list, import
(a bad file writes nothing), delete, and starting a class from a plan in one
transaction. The CS208 plan starts a class whose questions carry the course's designs
exactly, and its budget lets a student answer each question once, and no more."""

from __future__ import annotations

import math
import secrets
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
import tomli_w

from classroom import BadInput, Conflict, OverBudget
from classroom.domain import UnknownPlan
from classroom.plans import (
    CS208_PLAN,
    LessonPlan,
    PlanError,
    PlanQuestion,
    dumps,
    loads,
    shipped_plan,
)

LN3 = math.log(3)
TWO_COINS = PlanQuestion.build(text="Is your occupation Sales?", kind="binary",
                               options=("No", "Yes"), design_params={"design": "two_coin"})


def rows(store, table: str) -> list[dict]:
    with store.engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(sa.text(f"SELECT * FROM {table}"))]


def nothing_written(store) -> bool:
    return all(not rows(store, t) for t in ("plans", "polls", "questions", "rounds"))


def bad_files() -> dict[str, bytes]:
    good = dumps(shipped_plan(CS208_PLAN))
    return {
        "unknown design": good.replace('design = "warner"', 'design = "wheel"').encode(),
        "epsilon out of range": good.replace("epsilon = 1.0986122886681098",
                                             "epsilon = 99.0").encode(),
        "unaffordable budget": good.replace("budget = 7.7", "budget = 3.0").encode(),
        "malformed": good.replace("[[questions]]", "[[questions]", 1).encode(),
        "too large": good.encode() + b"#" * (128 * 1024),
        "not utf-8": b"\xff" + good.encode(),
    }


# -- saving ---------------------------------------------------------------------------------


def test_a_saved_plan_reads_back_equal_and_lists_newest_first(service):
    first = service.plans.save_plan(shipped_plan(CS208_PLAN))
    assert first.plan() == shipped_plan(CS208_PLAN)
    assert first.document == dumps(shipped_plan(CS208_PLAN))
    assert first.title == "The local model (CS208)"
    second = service.plans.save_plan(LessonPlan(title="Short", questions=(TWO_COINS,)))
    assert [p.id for p in service.plans.list_plans()] == [second.id, first.id]
    assert service.plans.saved_plan(first.id) == first


def test_saving_over_a_plan_replaces_it(service):
    saved = service.plans.save_plan(LessonPlan(title="Draft", questions=(TWO_COINS,)))
    edited = LessonPlan(title="Final", questions=(TWO_COINS, TWO_COINS), budget=3.0)
    again = service.plans.save_plan(edited, saved.id)
    assert again.id == saved.id and again.title == "Final" and again.plan() == edited
    assert again.updated_at >= saved.updated_at and again.created_at == saved.created_at
    assert len(service.plans.list_plans()) == 1
    with pytest.raises(UnknownPlan, match="no saved lesson plan with id 999999"):
        service.plans.save_plan(edited, 999999)
    with pytest.raises(UnknownPlan):
        service.plans.saved_plan(999999)
    assert service.plans.delete_plan(saved.id) is True
    assert service.plans.delete_plan(saved.id) is False
    assert service.plans.list_plans() == []


def test_a_plan_with_problems_is_not_saved(service, store):
    over = LessonPlan(title="Too much", questions=(TWO_COINS, TWO_COINS), budget=1.5)
    with pytest.raises(PlanError, match="budget: ε = 1.5 does not cover the plan"):
        service.plans.save_plan(over)
    with pytest.raises(PlanError, match="a plan needs at least one question"):
        service.plans.save_plan(LessonPlan(title="Empty"))
    assert nothing_written(store)


def test_import_saves_a_good_file(service):
    saved = service.plans.import_plan(dumps(shipped_plan(CS208_PLAN)).encode())
    assert saved.plan() == shipped_plan(CS208_PLAN)
    assert [p.id for p in service.plans.list_plans()] == [saved.id]


@pytest.mark.parametrize("case", list(bad_files()))
def test_a_bad_file_is_refused_and_nothing_is_written(service, store, case):
    with pytest.raises(PlanError) as err:
        service.plans.import_plan(bad_files()[case])
    message = str(err.value)
    expected = {
        "unknown design": "questions[3].design: unknown binary design 'wheel'",
        "epsilon out of range": "questions[6].design.epsilon: must be in [0.01, 5]",
        "unaffordable budget": "budget: ε = 3 does not cover the plan",
        "malformed": "the file is not valid TOML",
        "too large": "a lesson plan may be at most 128 KB",
        "not utf-8": "the file is not UTF-8 text",
    }[case]
    assert expected in message
    assert nothing_written(store)


# -- starting a class -------------------------------------------------------------------------


def test_the_cs208_plan_starts_a_class_with_the_course_designs(service, store):
    plan = shipped_plan(CS208_PLAN)
    poll, questions = service.plans.start_class(plan)
    assert poll.title == "The local model (CS208)" and poll.epsilon_budget == 7.7
    assert service.polls.poll(poll.id).epsilon_budget == 7.7 and not poll.rehearsal
    stored = service.polls.questions(poll.id)
    assert stored == questions
    assert [q.position for q in stored] == [1, 2, 3, 4, 5, 6]
    assert all(q.state == "draft" and q.round_number == 1 and not q.revealed for q in stored)
    assert service.polls.current_question(poll.id) is None  # nothing is open yet
    assert [len(service.running.rounds(q.id)) for q in stored] == [1] * 6
    # Every question exactly as the plan has it, the design's channel included.
    for q, want in zip(stored, plan.questions, strict=True):
        assert (q.text, q.kind, q.options, q.mode, q.countdown_s) == \
            (want.text, want.kind, want.options, want.mode, want.countdown_s)
        assert q.design_json == want.design_json
    die, coins, warner, sales, occupation, sleep = (q.design for q in stored)
    for binary in (die, coins, warner, sales):
        assert (binary.a, binary.b) == (0.75, 0.25)
        assert binary.epsilon == pytest.approx(LN3, abs=1e-12)
    assert (occupation.kind, occupation.d, occupation.p, occupation.q) == ("ue", 14, 0.75, 0.25)
    assert occupation.epsilon == pytest.approx(math.log(9), abs=1e-12)
    assert (sleep.kind, sleep.range.lo, sleep.range.hi) == ("hybrid", 0, 12)
    assert [q.countdown_s for q in stored] == [None, 60, None, None, 90, None]


def test_the_budget_lets_a_student_answer_each_question_once_and_no_more(service):
    poll, questions = service.plans.start_class(shipped_plan(CS208_PLAN))
    device = "one-phone"
    for q in questions:
        q = service.running.open_question(q.id)
        answer = {"binary": 1, "categorical": "0" * 5 + "1" + "0" * 8,
                  "numeric": "0.25"}[q.kind]
        receipt = service.reports.submit_report(
            poll.join_code, q.id, answer=answer, design_params=q.design_params,
            submission_id=f"sub-{secrets.token_hex(8)}", device_id=device)
        assert not receipt.already_answered
        service.running.close_question(q.id)
    assert service.reports.spent_epsilon(poll.id, device) == pytest.approx(7 * LN3)
    assert service.polls.budget(poll.id).committed == pytest.approx(7 * LN3)
    with pytest.raises(OverBudget, match="over its budget of ε = 7.70"):
        service.running.new_round(questions[0].id)


def test_a_rehearsal_class_and_a_plan_without_budget(service):
    poll, questions = service.plans.start_class(
        LessonPlan(title="Rehearse", questions=(TWO_COINS,)), rehearsal=True)
    assert poll.rehearsal and poll.epsilon_budget is None and len(questions) == 1


def test_a_plan_with_problems_starts_nothing(service, store):
    over = LessonPlan(title="Too much", questions=(TWO_COINS,) * 3, budget=2.0)
    with pytest.raises(PlanError, match="does not cover the plan"):
        service.plans.start_class(over)
    assert nothing_written(store)


def test_a_class_is_written_in_one_transaction(service, store):
    """A row the database refuses half-way (a countdown outside its CHECK) leaves no poll."""
    good = {"text": "Q?", "kind": "binary", "options_json": '["No", "Yes"]',
            "design_json": '{"design":"two_coin","kind":"binary"}', "mode": "device",
            "countdown_s": None}
    bad = dict(good, countdown_s=5)
    with pytest.raises(Conflict):
        store.insert_class(join_code="ABCDEF", title="Half", rehearsal=False, budget=None,
                           question_rows=[dict(good, salt=b"1" * 32),
                                          dict(bad, salt=b"2" * 32)],
                           now=datetime.now(UTC))
    assert nothing_written(store)


# -- the countdown on questions ---------------------------------------------------------------


def test_a_question_keeps_its_countdown(service, store):
    poll = service.polls.create_poll("Timed")
    q = service.polls.add_question(poll.id, "Q?", design_params={"design": "two_coin"},
                                   countdown_s=45)
    assert q.countdown_s == 45 and service.polls.question(q.id).countdown_s == 45
    plain = service.polls.add_question(poll.id, "R?", design_params={"design": "two_coin"})
    assert plain.countdown_s is None
    for bad in (9, 3601, 30.5, "60", True):
        with pytest.raises(BadInput, match="the countdown must be a whole number of seconds "
                                           "from 10 to 3600"):
            service.polls.add_question(poll.id, "S?", design_params={"design": "two_coin"},
                                       countdown_s=bad)
    assert len(service.polls.questions(poll.id)) == 2
    with pytest.raises(sa.exc.IntegrityError):  # the database checks it too
        with store.engine.begin() as conn:
            conn.execute(sa.text("UPDATE questions SET countdown_s = 5"))


def test_a_file_imported_then_started_matches_the_file(service):
    text = tomli_w.dumps({"title": "By hand", "budget": 2.5, "questions": [
        {"text": "Tea or coffee?", "kind": "binary", "options": ["Tea", "Coffee"],
         "mode": "physical", "countdown_s": 30, "design": {"design": "warner", "p": 0.8}}]})
    plan = service.plans.import_plan(text).plan()
    assert plan == loads(text)
    poll, (q,) = service.plans.start_class(plan)
    assert (q.mode, q.countdown_s, q.design_params, poll.epsilon_budget) == \
        ("physical", 30, {"design": "warner", "p": 0.8}, 2.5)
