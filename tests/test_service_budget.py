"""The privacy budget of a poll (Polls.budget, set_budget and the checks on opening
and on each report), on every store backend.

Sequential composition (CS208 lecture notes): a student who answers rounds at ε₁, ε₂, …
has spent ε₁ + ε₂ + …. The budget caps that sum per student.
"""

from __future__ import annotations

import math
import secrets

import pytest

from classroom import BadInput, OverBudget, PollService
from classroom.domain import CLASS_EXERCISE
from tests.support.db import count_reports

LN3 = math.log(3)


def eps_rr(eps: float) -> dict:
    return {"design": "epsilon", "epsilon": eps}


def submit(service, poll, q, *, device, answer=1, sid=None):
    return service.reports.submit_report(
        poll.join_code, q.id, answer=answer, design_params=q.design_params,
        submission_id=sid or f"sub-{secrets.token_hex(8)}", device_id=device)


@pytest.fixture
def poll_of_three(service):
    """A poll with three exercise questions (ε = ln 3 each) and a budget of 2 ln 3."""
    poll = service.polls.create_poll("budget")
    qs = [service.polls.add_question(poll.id, f"Question {i}?", design_params=dict(CLASS_EXERCISE))
          for i in range(3)]
    poll = service.polls.set_budget(poll.id, 2 * LN3)
    return poll, qs


def test_no_budget_by_default_and_nothing_committed(service):
    poll = service.polls.create_poll("t")
    status = service.polls.budget(poll.id)
    assert poll.epsilon_budget is None and status.budget is None and status.committed == 0
    assert status.left is None and status.allows(1e9)


def test_answered_and_open_rounds_count_and_drafts_do_not(service, poll_of_three):
    poll, (q1, q2, q3) = poll_of_three
    assert service.polls.budget(poll.id).committed == 0  # three drafts: nobody could answer
    q1 = service.running.open_question(q1.id)
    status = service.polls.budget(poll.id)
    assert status.committed == pytest.approx(LN3)
    assert status.rounds == ((q1.id, 1, status.committed),)
    assert status.left == pytest.approx(LN3)
    submit(service, poll, q1, device="a")
    service.running.close_question(q1.id)
    assert service.polls.budget(poll.id).committed == pytest.approx(LN3)  # answered: still counts


def test_opening_past_the_budget_is_refused_with_reasons_and_changes_nothing(
        service, poll_of_three):
    poll, (q1, q2, q3) = poll_of_three
    for q in (q1, q2):
        q = service.running.open_question(q.id)
        submit(service, poll, q, device="a")
    with pytest.raises(OverBudget) as err:
        service.running.open_question(q3.id)
    text = str(err.value)
    assert "ε = 3.30" in text and "budget of ε = 2.20" in text and "already cost ε = 2.20" in text
    assert service.polls.question(q3.id).state == "draft"
    assert service.polls.question(q2.id).state == "open"  # the open question was not closed
    with pytest.raises(OverBudget):
        service.running.new_round(q1.id, open_now=True)
    assert service.polls.question(q1.id).round_number == 1  # no round was added


def test_a_question_opened_but_never_answered_frees_its_share(service, poll_of_three):
    poll, (q1, q2, q3) = poll_of_three
    service.running.open_question(q1.id)  # nobody answers
    q2 = service.running.open_question(q2.id)  # closes q1: its round cost nobody anything
    submit(service, poll, q2, device="a")
    assert service.running.open_question(q3.id).state == "open"
    assert service.polls.budget(poll.id).committed == pytest.approx(2 * LN3)


def test_reopening_an_answered_round_is_not_counted_twice(service, poll_of_three):
    poll, (q1, q2, q3) = poll_of_three
    q1 = service.running.open_question(q1.id)
    submit(service, poll, q1, device="a")
    q2 = service.running.open_question(q2.id)
    submit(service, poll, q2, device="a")
    assert service.running.open_question(q1.id).state == "open"  # the same round: already paid


def test_a_cheaper_round_fits_where_the_same_one_does_not(service, poll_of_three):
    poll, (q1, q2, q3) = poll_of_three
    for q in (q1, q2):
        q = service.running.open_question(q.id)
        submit(service, poll, q, device="a")
    service.polls.set_budget(poll.id, 2 * LN3 + 0.5)
    with pytest.raises(OverBudget):
        service.running.open_question(q3.id)
    service.polls.set_design(q3.id, eps_rr(0.5))
    assert service.running.open_question(q3.id).state == "open"
    with pytest.raises(OverBudget):  # raising ε while open is checked too
        service.polls.set_design(q3.id, eps_rr(0.6))
    assert service.polls.question(q3.id).epsilon == pytest.approx(0.5)


def test_a_budget_below_what_is_committed_is_refused(service, poll_of_three):
    poll, (q1, _, _) = poll_of_three
    q1 = service.running.open_question(q1.id)
    submit(service, poll, q1, device="a")
    with pytest.raises(OverBudget, match="already let a student spend ε = 1.10"):
        service.polls.set_budget(poll.id, 1.0)
    assert service.polls.poll(poll.id).epsilon_budget == pytest.approx(2 * LN3)
    for bad in (0, -1, math.inf, math.nan, "lots"):
        with pytest.raises(BadInput):
            service.polls.set_budget(poll.id, bad)
    assert service.polls.set_budget(poll.id, None).epsilon_budget is None


def test_each_device_is_held_to_the_budget_when_it_reports(service, store, poll_of_three):
    """Lowering ε mid-round cannot let a device exceed the budget: the report is checked
    against what this device spent (recomputed from its cookie, never stored)."""
    poll, (q1, q2, _) = poll_of_three
    service.polls.set_budget(poll.id, 1.5)
    q1 = service.running.open_question(q1.id)
    submit(service, poll, q1, device="a")
    service.running.close_question(q1.id)
    service.polls.set_design(q2.id, eps_rr(0.3))
    q2 = service.running.open_question(q2.id)
    q2 = service.polls.set_design(q2.id, eps_rr(0.35))
    assert submit(service, poll, q2, device="b").epsilon == pytest.approx(0.35)
    before = count_reports(store)
    # Device "a" spent ln 3 = 1.10; 1.10 + 0.35 fits 1.5, and a second device is unaffected.
    receipt = submit(service, poll, q2, device="a", sid="a-on-q2-0001")
    assert not receipt.already_answered and count_reports(store) == before + 1
    # The same device tapping twice gets its receipt back, not a budget error.
    again = submit(service, poll, q2, device="a", sid="a-on-q2-0001")
    assert again.already_answered


def test_a_report_over_the_budget_is_refused_and_writes_nothing(service, store):
    poll = service.polls.create_poll("t")
    q1 = service.running.open_question(
        service.polls.add_question(poll.id, "A?", design_params=eps_rr(1.0)).id)
    submit(service, poll, q1, device="a")
    q2 = service.running.open_question(
        service.polls.add_question(poll.id, "B?", design_params=eps_rr(1.0)).id)
    submit(service, poll, q2, device="a", sid="a-on-q2-0001")
    q3 = service.polls.add_question(poll.id, "C?", design_params=eps_rr(1.0))
    # The budget is set after the fact: the instructor forbids any more than 2.0 per student.
    service.polls.set_budget(poll.id, 2.0)
    with pytest.raises(OverBudget):
        service.running.open_question(q3.id)
    # A store written by another process (or a race of two dashboards) opened it anyway:
    q3 = service.store.set_state(q3.id, "open", q3.updated_at, close_others=True)
    before = count_reports(store)
    with pytest.raises(OverBudget, match="ε = 3.00, over the poll's budget of ε = 2.00"):
        submit(service, poll, q3, device="a")
    assert count_reports(store) == before
    assert not submit(service, poll, q3, device="fresh-device").already_answered


def _answer_two(service, poll, q1, q2):
    """q1 and q2 answered by one device: 2 ln 3 committed, the whole budget of the poll."""
    for q in (q1, q2):
        q = service.running.open_question(q.id)
        submit(service, poll, q, device="a")


@pytest.mark.parametrize("open_now", [False, True], ids=["draft", "open-now"])
def test_a_question_over_the_budget_is_not_added_and_says_why(service, poll_of_three,
                                                                open_now):
    poll, (q1, q2, _) = poll_of_three
    _answer_two(service, poll, q1, q2)
    before = [(q.id, q.state, q.round_number) for q in service.polls.questions(poll.id)]
    with pytest.raises(OverBudget) as err:
        service.polls.add_question(poll.id, "Tea or coffee?", design_params=dict(CLASS_EXERCISE),
                                   open_now=open_now)
    text = str(err.value)
    assert text.startswith("“Tea or coffee?” was not added")
    assert "ε = 3.30" in text and "budget of ε = 2.20" in text and "raise the budget" in text
    # Nothing was added, and the open question stayed open.
    assert [(q.id, q.state, q.round_number) for q in service.polls.questions(poll.id)] == before
    # A question that fits is added, and opened in the same call.
    service.polls.set_budget(poll.id, 2 * LN3 + 0.5)
    cheap = service.polls.add_question(poll.id, "Cheap?", design_params=eps_rr(0.01),
                                       open_now=open_now)
    assert cheap.state == ("open" if open_now else "draft")
    assert service.polls.question(q2.id).state == ("closed" if open_now else "open")


def test_a_question_added_open_is_added_and_opened_in_one_transaction(service,
                                                                       poll_of_three,
                                                                       monkeypatch):
    """Adding and opening are one decision under the poll's lock: when the opening fails
    (here the database, at the last statement), nothing is left behind, and no other
    dashboard could have moved the budget in between."""
    from classroom.domain import StoreUnavailable
    from classroom.store import PollUnit

    poll, _ = poll_of_three
    before = [(q.id, q.state) for q in service.polls.questions(poll.id)]

    def fail(self, *args, **kwargs):
        raise StoreUnavailable("database unavailable, not saved — try again")

    monkeypatch.setattr(PollUnit, "set_state", fail)
    with pytest.raises(StoreUnavailable):
        service.polls.add_question(poll.id, "Race?", design_params=dict(CLASS_EXERCISE),
                                   open_now=True)
    assert [(q.id, q.state) for q in service.polls.questions(poll.id)] == before


@pytest.mark.parametrize("open_now", [False, True], ids=["draft", "open-now"])
def test_a_round_over_the_budget_is_not_started_and_says_why(service, poll_of_three,
                                                               open_now):
    """A new round that could never open under the budget is refused, draft or not: the
    question keeps its round, its state and its results, so phones stay on it."""
    poll, (q1, q2, _) = poll_of_three
    _answer_two(service, poll, q1, q2)
    service.running.set_revealed(q2.id, True)
    with pytest.raises(OverBudget) as err:
        service.running.new_round(q2.id, open_now=open_now)
    text = str(err.value)
    assert text.startswith("round 2 of “Question 1?” was not started")
    assert "ε = 3.30" in text and "budget of ε = 2.20" in text
    q2 = service.polls.question(q2.id)
    assert (q2.round_number, q2.state, q2.revealed) == (1, "open", True)
    assert len(service.running.rounds(q2.id)) == 1
    assert service.polls.current_question(poll.id).id == q2.id
    # With room in the budget, the round starts.
    service.polls.set_budget(poll.id, 3 * LN3)
    assert service.running.new_round(q2.id, open_now=open_now).number == 2


def test_phones_stay_on_a_question_sent_back_to_draft_for_a_new_round(service):
    """Before, the phones fell back to an earlier closed question while the current one
    waited, as a draft, for its next round."""
    poll = service.polls.create_poll("t")
    first = service.polls.add_question(poll.id, "First?", design_params=dict(CLASS_EXERCISE),
                                       open_now=True)
    second = service.polls.add_question(poll.id, "Second?", design_params=dict(CLASS_EXERCISE),
                                        open_now=True)
    assert service.polls.question(first.id).state == "closed"
    service.running.new_round(second.id)  # a draft round 2: voting not open yet
    current = service.polls.current_question(poll.id)
    assert (current.id, current.state, current.round_number) == (second.id, "draft", 2)
    # A question still in its first draft is not shown to phones.
    service.polls.add_question(poll.id, "Third?", design_params=dict(CLASS_EXERCISE))
    assert service.polls.current_question(poll.id).id == second.id


def test_raising_a_closed_answered_questions_epsilon_is_checked_against_the_budget(service):
    """Before, a closed question's design changed without a check: its answered round costs
    the largest ε of its designs, so raising it from 0.5 to 0.6 beside an open question at
    0.5 committed 1.1 of a budget of 1.0 (the dashboard then showed the poll over budget)."""
    poll = service.polls.set_budget(service.polls.create_poll("raise").id, 1.0)
    q1 = service.running.open_question(service.polls.add_question(poll.id, "First?",
                                                                  design_params=eps_rr(0.5)).id)
    service.reports.submit_report(poll.join_code, q1.id, answer=1, design_params=q1.design_params,
                                  submission_id="sid-raise-0001", device_id="device-raise")
    q2 = service.running.open_question(service.polls.add_question(poll.id, "Second?",
                                                                  design_params=eps_rr(0.5)).id)
    assert q2.is_open and not service.polls.question(q1.id).is_open
    with pytest.raises(OverBudget, match="changing the design of “First\\?” to this ε would "
                                         "let a student spend ε = 1.10"):
        service.polls.set_design(q1.id, eps_rr(0.6))
    assert service.polls.question(q1.id).design_params == eps_rr(0.5)
    assert service.polls.set_design(q1.id, eps_rr(0.4)).design_params == eps_rr(0.4)  # lower: fine
    assert service.polls.budget(poll.id).committed == pytest.approx(1.0)
    # a closed question without reports in its round changes freely (it costs nothing yet)
    q3 = service.polls.add_question(poll.id, "Third?", design_params=eps_rr(0.5))
    assert service.polls.set_design(q3.id, eps_rr(3.0)).design_params == eps_rr(3.0)
