"""Closing a question (or starting a new round) and a report that looked just before.

A report is read, checked and inserted in ONE transaction (``Store.report_unit``): on
SQLite every writer waits for it (``BEGIN IMMEDIATE``), on PostgreSQL its question's row is
share-locked once it has checked the state, so a close either commits before the check,
and the report is refused, or waits for the insert. A report can never land after the
close.
"""

from __future__ import annotations

import threading

import pytest

from classroom.domain import CLASS_EXERCISE, QuestionClosed, utcnow
from classroom.service import PollService, Reports, dedup_token
from classroom.store import Store
from tests.support.db import past_grace

EXERCISE = dict(CLASS_EXERCISE)


@pytest.fixture
def svc(tmp_path):
    return PollService.on(Store(f"sqlite:///{tmp_path / 'c.db'}"))


def _open_question(svc):
    poll = svc.polls.create_poll("race")
    q = svc.polls.add_question(poll.id, "V or C?", options=("Chocolate", "Vanilla"),
                               design_params=EXERCISE)
    svc.running.open_question(q.id)
    return poll, q


def test_a_close_waits_for_a_report_that_already_looked(service):
    svc = service
    poll, q = _open_question(svc)
    closed = threading.Event()
    closer = threading.Thread(target=lambda: (svc.running.close_question(q.id), closed.set()))
    with svc.store.report_unit() as unit:
        _, question, rnd = unit.context(poll.join_code, q.id)
        assert unit.round_open(rnd.round_id)  # looked: open, and it stays so
        closer.start()
        assert not closed.wait(0.3), "the close did not wait for the report's transaction"
        assert unit.insert(round_id=rnd.round_id, answer="1", design_json=question.design_json,
                           created_at=utcnow(), submission_id="sub-race-0001",
                           token=dedup_token(rnd.salt, "dev"), simulated=False,
                           address_tag=None)
    assert closed.wait(30)
    closer.join()
    assert svc.polls.question(q.id).state == "closed" and svc.results.estimate(q.id).n == 1


def test_a_round_superseded_before_the_report_looked_takes_no_report(service):
    svc = service
    poll, q = _open_question(svc)
    _, old = svc.store.current_round_secret(q.id)
    svc.running.new_round(q.id, open_now=True)
    with svc.store.report_unit() as unit:
        assert not unit.round_open(old.round_id)
        _, _, rnd = unit.context(poll.join_code, q.id)
        assert rnd.round_id != old.round_id and unit.round_open(rnd.round_id)
    svc.running.close_question(q.id)
    with svc.store.report_unit() as unit:
        _, _, rnd = unit.context(poll.join_code, q.id)
        assert not unit.round_open(rnd.round_id)
    past_grace(svc.store, q.id)
    with pytest.raises(QuestionClosed):
        svc.reports.submit_report(poll.join_code, q.id, answer=1, design_params=EXERCISE,
                                  submission_id="sub-race-0002", device_id="dev")


def test_answered_device_racing_a_close_gets_its_receipt(svc):
    poll, q = _open_question(svc)
    first = svc.reports.submit_report(poll.join_code, q.id, answer=1, design_params=EXERCISE,
                                      submission_id="sub-race-0003", device_id="dev")
    svc.running.close_question(q.id)
    again = svc.reports.submit_report(poll.join_code, q.id, answer=0, design_params=EXERCISE,
                                      submission_id="sub-race-0004", device_id="dev")
    assert again.already_answered and again.answer == first.answer


def test_concurrent_close_never_leaves_a_report_behind_it(svc):
    """Without a grace time (``grace_s=0``), no report is stored after the close."""
    poll, q = _open_question(svc)
    strict = Reports(svc.store, grace_s=0)
    accepted: list[str] = []
    closed_at = []
    lock = threading.Lock()

    def student(i: int) -> None:
        try:
            r = strict.submit_report(poll.join_code, q.id, answer=i % 2,
                                          design_params=EXERCISE,
                                          submission_id=f"sub-race-{i:06d}", device_id=f"dev-{i}")
        except QuestionClosed:
            return
        with lock:
            accepted.append(r.created_at)

    threads = [threading.Thread(target=student, args=(i,)) for i in range(64)]
    for t in threads[:32]:
        t.start()
    svc.running.close_question(q.id)
    closed_at.append(utcnow())
    for t in threads[32:]:
        t.start()
    for t in threads:
        t.join()
    assert svc.results.estimate(q.id).n == len(accepted)  # every acknowledged report stored
    assert all(t <= closed_at[0] for t in accepted)  # none after the close returned
