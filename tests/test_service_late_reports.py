"""A tap is a vote: a report tapped while its question was open and still on its way when
the instructor pressed Next or Close, or when the countdown ended, is stored once if it
arrives within the grace time (``classroom.service.GRACE_S``), and refused with the
reason after it; on every store backend, in lectures and rehearsals, with the privacy
budget counting it."""

from __future__ import annotations

import math
import secrets
from datetime import UTC, datetime, timedelta

import pytest

from classroom import OverBudget, PollService, QuestionClosed, Store
from classroom.domain import CLASS_EXERCISE
from classroom.service import GRACE_S
from tests.support.db import Clock, count_reports, submission_ids

DIE = dict(CLASS_EXERCISE)
LN3 = math.log(3)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def svc(db_url, clock):
    store = Store(db_url, clock=clock)
    yield PollService.on(store)
    store.close()


def submit(svc: PollService, poll, q, device: str, sid: str | None = None):
    return svc.reports.submit_report(poll.join_code, q.id, answer=1, design_params=DIE,
                                     submission_id=sid or f"sub-{secrets.token_hex(8)}",
                                     device_id=device)


def lecture(svc: PollService, n: int = 2, *, rehearsal: bool = False, countdown=None):
    poll = svc.polls.create_poll("late taps", rehearsal=rehearsal)
    qs = [svc.polls.add_question(poll.id, f"Question {i + 1}?", options=("No", "Yes"),
                                 design_params=DIE, countdown_s=countdown if i == 0 else None)
          for i in range(n)]
    return poll, qs


@pytest.mark.parametrize("rehearsal", [False, True], ids=["lecture", "rehearsal"])
@pytest.mark.parametrize("how", ["next", "close"])
def test_a_report_on_its_way_at_next_or_close_is_stored_within_the_grace_time(svc, clock,
                                                                              rehearsal, how):
    poll, (q1, q2) = lecture(svc, rehearsal=rehearsal)
    svc.running.open_question(q1.id)
    assert not submit(svc, poll, q1, "before").already_answered
    clock.advance(0.2)
    if how == "next":
        svc.running.next_question(q1.id)
    else:
        svc.running.close_question(q1.id)
    assert not svc.polls.question(q1.id).is_open
    clock.advance(GRACE_S - 0.001)
    late = submit(svc, poll, q1, "on-its-way", sid="sub-late-000001")
    assert not late.already_answered and late.question_id == q1.id
    # Resent with the same submission id (its answer was lost on the way back): one row.
    again = submit(svc, poll, q1, "on-its-way", sid="sub-late-000001")
    assert again.already_answered and again.answer == late.answer
    clock.advance(0.001)  # the grace time is over
    with pytest.raises(QuestionClosed, match=r"arrived 5\.0 s after voting"):
        submit(svc, poll, q1, "too-late")
    # The device on its way already answered: its receipt, even now.
    assert submit(svc, poll, q1, "on-its-way").already_answered
    assert count_reports(svc.store, q1.id) == 2
    assert submission_ids(svc.store, q1.id) >= {"sub-late-000001"}
    assert svc.results.estimate(q1.id).n == 2
    if how == "next":
        assert not submit(svc, poll, q2, "too-late").already_answered


def test_the_grace_time_is_counted_from_the_first_close_not_from_a_later_click(svc, clock):
    poll, (q1, _) = lecture(svc)
    svc.running.open_question(q1.id)
    svc.running.close_question(q1.id)
    clock.advance(GRACE_S / 2)
    svc.running.close_question(q1.id)  # a second Close (another window): nothing changes
    svc.running.set_revealed(q1.id, True)  # nor does the reveal
    clock.advance(GRACE_S / 2)
    with pytest.raises(QuestionClosed):
        submit(svc, poll, q1, "late")


def test_reopening_and_new_rounds_forget_the_old_close(svc, clock):
    poll, (q1, _) = lecture(svc)
    svc.running.open_question(q1.id)
    svc.running.close_question(q1.id)
    svc.running.new_round(q1.id)  # a draft round: never takes a report, grace or not
    with pytest.raises(QuestionClosed, match="voting is closed"):
        submit(svc, poll, q1, "draft")
    svc.running.open_question(q1.id)
    clock.advance(60)
    svc.running.close_question(q1.id)  # the grace time starts at this close
    clock.advance(GRACE_S - 1)
    assert not submit(svc, poll, q1, "in-round-2").already_answered


def test_the_countdowns_end_has_the_same_grace_time(svc, clock):
    poll, (q1, _) = lecture(svc, countdown=10)
    q1 = svc.running.open_question(q1.id)
    clock.advance(10 + GRACE_S - 0.01)
    assert svc.polls.question(q1.id).timed_out
    assert not submit(svc, poll, q1, "tapped-at-0:01").already_answered
    assert svc.running.close_expired() == 1
    clock.advance(0.01)
    with pytest.raises(QuestionClosed):
        submit(svc, poll, q1, "tapped-after")
    assert count_reports(svc.store, q1.id) == 1


def test_a_late_report_in_grace_spends_its_epsilon_and_the_budget_still_holds(svc, clock):
    """Budget 2 ln 3, three questions of ln 3: the late report to Q1 counts in what the
    device spent; its Q2 answer fills the budget, and Q3 cannot open (nobody could pay)."""
    poll = svc.polls.create_poll("budget")
    qs = [svc.polls.add_question(poll.id, f"Question {i}?", design_params=DIE) for i in range(3)]
    poll = svc.polls.set_budget(poll.id, 2 * LN3)
    q1, q2, q3 = qs
    svc.running.open_question(q1.id)
    svc.running.next_question(q1.id)  # Q1 closes, Q2 opens
    first = submit(svc, poll, q2, "phone")  # the phone answers Q2 first ...
    assert first.spent_epsilon == pytest.approx(LN3)
    clock.advance(1)
    late = submit(svc, poll, q1, "phone")  # ... and its Q1 report arrives in grace
    assert late.spent_epsilon == pytest.approx(2 * LN3)
    assert svc.reports.spent_epsilon(poll.id, "phone") == pytest.approx(2 * LN3)
    assert svc.polls.budget(poll.id).committed == pytest.approx(2 * LN3)
    with pytest.raises(OverBudget):
        svc.running.next_question(q2.id)
    assert count_reports(svc.store) == 2


def test_no_device_link_is_stored_for_a_late_report(svc, clock):
    """The late report's row is like any other: its round's token, nothing about the
    device's other reports (its tokens differ across questions)."""
    import sqlalchemy as sa

    from classroom.store import reports

    poll, (q1, q2) = lecture(svc)
    svc.running.open_question(q1.id)
    svc.running.next_question(q1.id)
    submit(svc, poll, q2, "phone")
    submit(svc, poll, q1, "phone")
    with svc.store.transaction(write=False) as conn:
        tokens = conn.execute(sa.select(reports.c.dedup_token)).scalars().all()
    assert len(set(tokens)) == 2
