"""Pacing a class on every store backend: "Next question" and the countdown.

* ``next_question`` closes the question on screen and opens the next by position in ONE
  transaction; after the last question, or when the next would pass the poll's budget,
  it says so and changes nothing.
* A countdown's deadline is stored when a question opens. From the deadline on, every
  reader sees the question closed (``Question.at``), a report that arrives then is
  refused inside its own transaction, and ``close_expired`` writes the close down, at
  the deadline, once, however many processes run it. Two stores on one database play
  two server processes; a fake clock makes the deadline exact.
"""

from __future__ import annotations

import secrets
import threading
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from classroom import BadInput, OverBudget, PollService, QuestionClosed, Store
from classroom.domain import CLASS_EXERCISE, as_utc
from classroom.plans import CS208_PLAN, shipped_plan
from classroom.service import GRACE_S
from classroom.store import questions
from tests.support.db import Clock, count_reports

DIE = dict(CLASS_EXERCISE)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def svc(db_url, clock):
    store = Store(db_url, clock=clock)
    yield PollService.on(store)
    store.close()


@pytest.fixture
def other(db_url, clock):
    """A second process on the same database: its own engine and pool, the same clock."""
    store = Store(db_url, clock=clock)
    yield PollService.on(store)
    store.close()


def stored(svc: PollService, question_id: int) -> tuple[str, datetime | None, datetime]:
    """The question's row as written: state, deadline, updated_at."""
    with svc.store.transaction(write=False) as conn:
        row = conn.execute(sa.select(questions.c.state, questions.c.closes_at,
                                     questions.c.updated_at)
                           .where(questions.c.id == question_id)).one()
    return (row.state, None if row.closes_at is None else as_utc(row.closes_at),
            as_utc(row.updated_at))


def submit(svc: PollService, poll, q, device: str, answer: int = 1):
    return svc.reports.submit_report(poll.join_code, q.id, answer=answer, design_params=DIE,
                                     submission_id=f"sub-{secrets.token_hex(8)}", device_id=device)


def lecture(svc: PollService, n: int = 3, *, countdowns=None):
    poll = svc.polls.create_poll("pacing")
    qs = [svc.polls.add_question(poll.id, f"Question {i + 1}?", options=("No", "Yes"),
                                 design_params=DIE,
                                 countdown_s=(countdowns or {}).get(i))
          for i in range(n)]
    return poll, qs


# -- the countdown ---------------------------------------------------------------------

def test_opening_stores_the_deadline_and_the_question_closes_at_it(svc, clock):
    poll, (q, _, _) = lecture(svc, countdowns={0: 30})
    opened_at = clock.t
    q = svc.running.open_question(q.id)
    assert q.is_open and q.closes_at == opened_at + timedelta(seconds=30)
    assert q.seconds_left(clock.t) == 30
    clock.advance(29.999)
    assert svc.polls.question(q.id).is_open
    assert svc.polls.question(q.id).seconds_left(clock.t) == pytest.approx(0.001)
    clock.advance(0.001)
    now = svc.polls.question(q.id)
    assert now.state == "closed" and now.timed_out and now.seconds_left(clock.t) is None
    assert now.updated_at == q.closes_at  # it closed at its deadline
    assert svc.polls.current_question(poll.id).id == q.id  # the class stays on it, closed
    # Nothing wrote the close yet; every reader already sees it.
    assert stored(svc, q.id)[0] == "open"
    assert svc.running.close_expired() == 1
    assert stored(svc, q.id) == ("closed", q.closes_at, q.closes_at)
    assert svc.running.close_expired() == 0  # once
    assert svc.running.next_deadline() is None


def test_a_report_within_the_grace_time_after_the_deadline_is_stored_a_later_one_not(svc,
                                                                                     clock):
    """The countdown's deadline closes the question; a report tapped before it that is
    still on its way is stored if it arrives within the grace time, never after."""
    poll, (q, _, _) = lecture(svc, countdowns={0: 10})
    q = svc.running.open_question(q.id)
    clock.advance(9.999)
    assert not submit(svc, poll, q, "early").already_answered
    clock.advance(0.001)
    assert svc.polls.question(q.id).timed_out  # closed for every reader
    assert not submit(svc, poll, q, "on-its-way").already_answered
    clock.advance(GRACE_S - 0.001)
    assert not submit(svc, poll, q, "just-in-grace").already_answered
    clock.advance(0.001)
    with pytest.raises(QuestionClosed, match=f"arrived {GRACE_S:.1f} s after voting"):
        submit(svc, poll, q, "late")
    assert count_reports(svc.store, q.id) == 3
    svc.running.close_expired()  # written down: the same end, the same grace
    with pytest.raises(QuestionClosed):
        submit(svc, poll, q, "late-2")
    assert count_reports(svc.store, q.id) == 3
    # The phone that answered in time still gets its receipt back.
    assert submit(svc, poll, q, "early").already_answered


def test_the_report_transaction_itself_checks_the_deadline_against_the_arrival(svc, clock):
    """The deadline is decided inside the report's own transaction, against the time the
    report arrived: one that arrived just before the deadline and waited for the lock is
    still in time; one that arrived at it is not, whatever the question looked like."""
    poll, (q, _, _) = lecture(svc, countdowns={0: 10})
    q = svc.running.open_question(q.id)
    with svc.store.report_unit() as unit:
        _, looked, rnd = unit.context(poll.join_code, q.id)
        assert looked.is_open
        clock.advance(10)  # the transaction ran late
        assert unit.round_open(rnd.round_id, q.closes_at - timedelta(microseconds=1))
        assert not unit.round_open(rnd.round_id, q.closes_at)
        assert not unit.round_open(rnd.round_id)  # by default: now
        grace = timedelta(seconds=GRACE_S)
        assert unit.round_open(rnd.round_id, grace=grace)  # arrived within the grace time
        assert not unit.round_open(rnd.round_id, q.closes_at + grace, grace=grace)


def test_two_processes_agree_on_the_close_and_write_it_once(svc, other, clock):
    poll, (q, _, _) = lecture(svc, countdowns={0: 20})
    q = svc.running.open_question(q.id)  # opened through the first process
    clock.advance(19.5)
    assert submit(other, poll, q, "a") and submit(svc, poll, q, "b")
    assert other.polls.question(q.id).is_open and other.running.next_deadline() == q.closes_at
    clock.advance(0.5 + GRACE_S)
    for process in (svc, other):  # both refuse, both read it closed, nothing written yet
        with pytest.raises(QuestionClosed):
            submit(process, poll, q, "late")
        assert process.polls.question(q.id).timed_out
        assert process.polls.current_question(poll.id).state == "closed"
    closed: list[int] = []
    barrier = threading.Barrier(4)

    def close(process: PollService) -> None:
        barrier.wait()
        closed.append(process.running.close_expired())

    threads = [threading.Thread(target=close, args=(p,)) for p in (svc, other, svc, other)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(closed) == [0, 0, 0, 1]
    assert stored(svc, q.id) == ("closed", q.closes_at, q.closes_at)
    assert count_reports(svc.store, q.id) == 2


def test_closing_by_hand_before_the_deadline_forgets_it(svc, clock):
    poll, (q, _, _) = lecture(svc, countdowns={0: 60})
    svc.running.open_question(q.id)
    clock.advance(5)
    closed = svc.running.close_question(q.id)
    assert closed.state == "closed" and closed.closes_at is None and not closed.timed_out
    assert closed.updated_at == clock.t
    clock.advance(100)
    assert svc.running.close_expired() == 0
    assert svc.polls.question(q.id).updated_at == closed.updated_at


def test_closing_by_hand_after_the_deadline_keeps_the_countdowns_close(svc, clock):
    poll, (q, _, _) = lecture(svc, countdowns={0: 10})
    q = svc.running.open_question(q.id)
    clock.advance(15)  # ended, not yet written down
    closed = svc.running.close_question(q.id)
    assert closed.timed_out and closed.updated_at == q.closes_at
    assert stored(svc, q.id) == ("closed", q.closes_at, q.closes_at)


def test_reopening_and_a_new_round_start_the_countdown_again(svc, clock):
    poll, (q, _, _) = lecture(svc, countdowns={0: 10})
    svc.running.open_question(q.id)
    clock.advance(12)
    again = svc.running.open_question(q.id)
    assert again.is_open and again.closes_at == clock.t + timedelta(seconds=10)
    clock.advance(3)
    svc.running.new_round(q.id)  # a draft: no deadline until it opens
    assert svc.polls.question(q.id).state == "draft" and svc.polls.question(q.id).closes_at is None
    clock.advance(3)
    svc.running.new_round(q.id, open_now=True)
    assert svc.polls.question(q.id).closes_at == clock.t + timedelta(seconds=10)


def test_opening_another_question_leaves_a_timed_out_one_as_the_countdown_closed_it(svc, clock):
    poll, (q1, q2, _) = lecture(svc, countdowns={0: 10})
    q1 = svc.running.open_question(q1.id)
    clock.advance(11)
    svc.running.open_question(q2.id)
    assert stored(svc, q1.id) == ("closed", q1.closes_at, q1.closes_at)
    assert svc.polls.current_question(poll.id).id == q2.id


def test_a_question_added_open_with_a_countdown_counts_down(svc, clock):
    poll = svc.polls.create_poll("t")
    q = svc.polls.add_question(poll.id, "Now?", design_params=DIE, countdown_s=45, open_now=True)
    assert q.closes_at == clock.t + timedelta(seconds=45)


def test_the_countdown_is_set_before_opening_and_applies_from_the_next_opening(svc, clock):
    poll, (q, _, _) = lecture(svc)
    assert svc.running.set_countdown(q.id, 20).countdown_s == 20
    for bad in (5, 3601, 12.5, "30", True):
        with pytest.raises(BadInput, match="the countdown must be a whole number of seconds"):
            svc.running.set_countdown(q.id, bad)
    opened = svc.running.open_question(q.id)
    assert opened.closes_at == clock.t + timedelta(seconds=20)
    changed = svc.running.set_countdown(q.id, None)  # while open: the running deadline stays
    assert changed.countdown_s is None and changed.closes_at == opened.closes_at
    svc.running.close_question(q.id)
    assert svc.running.open_question(q.id).closes_at is None


def test_the_shipped_plans_countdown_runs_from_its_opening(svc, clock):
    _, qs = svc.plans.start_class(shipped_plan(CS208_PLAN))
    assert [q.countdown_s for q in qs] == [None, 60, None, None, 90, None]
    opened = svc.running.open_question(qs[1].id)
    assert opened.closes_at == clock.t + timedelta(seconds=60)


def test_a_round_the_countdown_closed_unanswered_costs_no_budget(svc, clock):
    poll, (q1, q2, _) = lecture(svc, countdowns={0: 10})
    svc.polls.set_budget(poll.id, 1.2)  # one ln 3 question
    svc.running.open_question(q1.id)
    assert svc.polls.budget(poll.id).committed > 0  # open: a student could answer
    clock.advance(10)
    assert svc.polls.budget(poll.id).committed == 0  # closed unanswered: nobody spent anything
    assert svc.running.open_question(q2.id).is_open


def test_an_unknown_question_has_no_countdown(svc):
    with pytest.raises(Exception, match="no question with id 999"):
        svc.running.set_countdown(999, 30)


# -- Next question ---------------------------------------------------------------------

def test_next_closes_this_question_and_opens_the_next_by_position(svc, clock):
    poll, (q1, q2, q3) = lecture(svc)
    svc.running.open_question(q1.id)
    submit(svc, poll, q1, "a")
    clock.advance(1)
    left, opened = svc.running.next_question(q1.id)
    assert (left.id, left.state) == (q1.id, "closed") and left.updated_at == clock.t
    assert (opened.id, opened.state) == (q2.id, "open") and opened.closes_at is None
    assert svc.polls.current_question(poll.id).id == q2.id
    assert [q.state for q in svc.polls.questions(poll.id)] == ["closed", "open", "draft"]
    # A report still on its way to the question left is stored within the grace time, and
    # refused after it; the next question takes the new ones.
    assert not submit(svc, poll, q1, "b").already_answered
    clock.advance(GRACE_S)
    with pytest.raises(QuestionClosed):
        submit(svc, poll, q1, "c")
    assert submit(svc, poll, q2, "b") and count_reports(svc.store, q1.id) == 2


def test_next_follows_positions_not_ids(svc):
    poll, (q1, q2, q3) = lecture(svc)
    with svc.store.transaction(write=True) as conn:  # reordered: q3 now comes second
        conn.execute(questions.update().where(questions.c.id == q3.id).values(position=2))
        conn.execute(questions.update().where(questions.c.id == q2.id).values(position=3))
    svc.running.open_question(q1.id)
    assert svc.running.next_question(q1.id)[1].id == q3.id
    assert svc.running.next_question(q3.id)[1].id == q2.id


def test_next_starts_the_next_questions_countdown(svc, clock):
    poll, (q1, q2, _) = lecture(svc, countdowns={1: 60})
    svc.running.open_question(q1.id)
    _, opened = svc.running.next_question(q1.id)
    assert opened.closes_at == clock.t + timedelta(seconds=60)


def test_next_after_the_last_question_says_so_and_changes_nothing(svc):
    poll, (q1, q2) = lecture(svc, 2)
    svc.running.open_question(q2.id)
    with pytest.raises(BadInput, match="Q2 “Question 2\\?” is the last question of this poll"):
        svc.running.next_question(q2.id)
    assert svc.polls.question(q2.id).is_open


def test_next_over_the_budget_says_so_and_opens_nothing(svc):
    poll, (q1, q2, q3) = lecture(svc)
    svc.polls.set_budget(poll.id, 1.2)  # room for one ln 3 question
    svc.running.open_question(q1.id)
    submit(svc, poll, q1, "a")
    with pytest.raises(OverBudget, match="the next question, Q2 “Question 2\\?”, was not "
                                         "opened: opening it would let a student spend"):
        svc.running.next_question(q1.id)
    assert [q.state for q in svc.polls.questions(poll.id)] == ["open", "draft", "draft"]
    assert svc.polls.current_question(poll.id).id == q1.id


def test_next_from_a_question_never_opened_opens_the_next(svc):
    poll, (q1, q2, q3) = lecture(svc)
    svc.running.open_question(q3.id)  # the instructor had jumped ahead
    left, opened = svc.running.next_question(q1.id)
    assert left.state == "draft" and opened.id == q2.id
    assert [q.state for q in svc.polls.questions(poll.id)] == ["draft", "open", "closed"]


def test_next_onto_an_open_question_keeps_its_deadline(svc, clock):
    poll, (q1, q2, _) = lecture(svc, countdowns={1: 60})
    running = svc.running.open_question(q2.id)
    clock.advance(20)
    _, opened = svc.running.next_question(q1.id)
    assert opened.is_open and opened.closes_at == running.closes_at


def test_two_nexts_at_once_move_the_class_one_question(svc, other):
    """The clicker and the desk press Next together: both start from Q1; the poll lock
    serialises them and the second finds Q2 open already."""
    poll, (q1, q2, q3) = lecture(svc)
    svc.running.open_question(q1.id)
    barrier = threading.Barrier(2)
    results: list[object] = []

    def press(process: PollService) -> None:
        barrier.wait()
        results.append(process.running.next_question(q1.id)[1].id)

    threads = [threading.Thread(target=press, args=(p,)) for p in (svc, other)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [q2.id, q2.id]
    assert [q.state for q in svc.polls.questions(poll.id)] == ["closed", "open", "draft"]


def test_next_on_an_unknown_question_is_not_found(svc):
    with pytest.raises(Exception, match="no question with id 4242"):
        svc.running.next_question(4242)
