"""The privacy budget and the per-address limit hold when two app processes decide at the
same instant, on every backend.

Each decision that the budget or the limit rests on (opening a round, storing a report that
counts against the budget, counting a network address's reports) is taken inside one
transaction that no other decision about the same poll can interleave with. Two racing
processes (:mod:`tests.support.racer`, each with its own store and connections, each SQL
statement slowed by a few milliseconds so that any window between a read and a write is
wide) try to break that:

* two questions of ε = ln 3 opened at the same instant under a budget of ln 3, then one
  device answering both at the same instant: at most one question stays open and at
  most one report is stored;
* an open question's ε raised while another question opens, at the same instant, under a
  budget that holds either but not both: at most one of them happens;
* two questions forced open together (as a second dashboard or an older process could
  leave them), one device answering both at the same instant: at most one report;
* a per-address limit of 5 and 150 reports from one address at once, from two
  processes: exactly 5 stored, the rest refused with a sentence saying why.
"""

from __future__ import annotations

import math

import pytest

from classroom.domain import CLASS_EXERCISE
from tests.support.db import count_reports
from tests.support.racer import Racer, race

LN3 = math.log(3)
DIE = dict(CLASS_EXERCISE)
#: Tries per test; a race left open shows up in most of them (see the module docstring).
TRIES = 8
#: Added to every SQL statement of a racer.
DELAY_S = 0.004


@pytest.fixture
def racers(db_url):
    with Racer(db_url, delay_s=DELAY_S) as a, Racer(db_url, delay_s=DELAY_S) as b:
        yield a, b


def _budget_poll(service, title: str):
    poll = service.polls.set_budget(service.polls.create_poll(title).id, LN3)
    q1 = service.polls.add_question(poll.id, "First?", design_params=DIE)
    q2 = service.polls.add_question(poll.id, "Second?", design_params=DIE)
    return poll, q1, q2


def _report(poll, q, device: str, sid: str, address: str | None = None) -> dict:
    return {"op": "report", "code": poll.join_code, "question_id": q.id, "answer": 1,
            "params": q.design_params, "device": device, "sid": sid, "address": address}


def test_two_questions_opened_at_once_under_a_budget_of_one_leave_one_open(service, store,
                                                                         racers):
    broken = []
    for i in range(TRIES):
        poll, q1, q2 = _budget_poll(service, f"open race {i}")
        opened = race(list(racers), [{"op": "open", "question_id": q1.id},
                                     {"op": "open", "question_id": q2.id}])
        still_open = [q for q in service.polls.questions(poll.id) if q.is_open]
        answers = race(list(racers), [_report(poll, q1, "device-x", f"sid-x1-{i:04d}"),
                                      _report(poll, q2, "device-x", f"sid-x2-{i:04d}")])
        stored = count_reports(store, q1.id) + count_reports(store, q2.id)
        if len(still_open) > 1 or stored > 1:
            broken.append((len(still_open), stored, opened, answers))
        for a in answers:  # a refusal says why
            assert a["ok"] or a["error"] in ("QuestionClosed", "OverBudget"), a
    assert not broken, (f"{len(broken)} of {TRIES} tries overspent the budget "
                        f"(open questions, stored reports, ...): {broken[:2]}")


def test_raising_one_questions_epsilon_while_another_opens_keeps_the_budget(service, racers):
    """Budget 1.0: q1 open at RR ε = 0.5 with one report (so its round counts), q2 waiting
    at 0.5. Raising q1 to 0.6 and opening q2 each fit alone; both together would commit
    1.1. One of them must be refused."""
    broken = []
    for i in range(TRIES):
        poll = service.polls.set_budget(service.polls.create_poll(f"raise race {i}").id, 1.0)
        q1 = service.polls.add_question(poll.id, "First?", design_params={
            "design": "epsilon", "epsilon": 0.5})
        q2 = service.polls.add_question(poll.id, "Second?", design_params={
            "design": "epsilon", "epsilon": 0.5})
        q1 = service.running.open_question(q1.id)
        service.reports.submit_report(poll.join_code, q1.id, answer=1,
                                      design_params=q1.design_params,
                                      submission_id=f"sid-raise-{i:04d}", device_id="device-r")
        outcomes = race(list(racers), [
            {"op": "design", "question_id": q1.id,
             "params": {"design": "epsilon", "epsilon": 0.6}},
            {"op": "open", "question_id": q2.id}])
        raised = service.polls.question(q1.id).design_params["epsilon"] == 0.6
        opened = service.polls.question(q2.id).is_open
        if raised and opened:
            broken.append(outcomes)
        assert sum(o["ok"] for o in outcomes) == 1, outcomes
        for o in outcomes:  # the refusal says why
            assert o["ok"] or o["error"] == "OverBudget", o
    assert not broken, (f"{len(broken)} of {TRIES} tries committed ε = 1.1 of a budget of "
                        f"1.0: {broken[:2]}")


def test_one_device_answering_two_questions_forced_open_stores_at_most_one(service, store,
                                                                         racers):
    broken = []
    for i in range(TRIES):
        poll, q1, q2 = _budget_poll(service, f"report race {i}")
        q1 = service.running.open_question(q1.id)
        q2 = service.store.set_state(q2.id, "open", q2.updated_at)  # both open now
        assert q1.is_open and q2.is_open
        answers = race(list(racers), [_report(poll, q1, "device-y", f"sid-y1-{i:04d}"),
                                      _report(poll, q2, "device-y", f"sid-y2-{i:04d}")])
        stored = count_reports(store, q1.id) + count_reports(store, q2.id)
        if stored > 1:
            broken.append(answers)
        refused = [a for a in answers if not a["ok"]]
        assert len(refused) == 2 - stored
        for a in refused:
            assert a["error"] == "OverBudget", a
            assert "over the poll's budget of ε = 1.10" in a["message"], a
    assert not broken, (f"one device spent 2 ln 3 of a budget of ln 3 in {len(broken)} of "
                        f"{TRIES} tries: {broken[:2]}")


def test_the_per_address_limit_holds_against_150_reports_at_once_from_two_processes(
        db_url, service, store):
    poll = service.polls.create_poll("address race")
    q = service.running.open_question(
        service.polls.add_question(poll.id, "Q?", design_params=DIE).id)
    batches = [[_report(poll, q, f"dev-{p}-{i:03d}", f"sid-{p}-{i:04d}", "198.51.100.7")
                for i in range(75)] for p in (0, 1)]
    with Racer(db_url, delay_s=DELAY_S, max_reports_per_address=5) as a, \
            Racer(db_url, delay_s=DELAY_S, max_reports_per_address=5) as b:
        answers = race([a, b], [{"op": "reports", "reports": batch} for batch in batches])
    outcomes = [o for answer in answers for o in answer["value"]]
    assert count_reports(store, q.id) == 5
    assert sum(o["ok"] for o in outcomes) == 5
    refusals = {(o["error"], o["message"]) for o in outcomes if not o["ok"]}
    assert refusals == {("AddressLimit", "5 answers to this question already came from this "
                         "network, the most the instructor allows")}, refusals
