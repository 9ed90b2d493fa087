"""Closing a question (or starting a new round) and a submit that looked just before.

The service checks the question's state, then inserts. The store re-checks inside
the insert's own transaction, so a report can never land after the close.
"""

from __future__ import annotations

import threading

import pytest

from classroom.domain import CLASS_EXERCISE, QuestionClosed, utcnow
from classroom.service import PollService, dedup_token
from classroom.store import Store

EXERCISE = dict(CLASS_EXERCISE)


@pytest.fixture
def svc(tmp_path):
    return PollService(Store(f"sqlite:///{tmp_path / 'c.db'}"))


def _open_question(svc):
    poll = svc.create_poll("race")
    q = svc.add_question(poll.id, "V or C?", options=("Chocolate", "Vanilla"),
                         design_params=EXERCISE)
    svc.open_question(q.id)
    return poll, q


def _insert(svc, poll, q, device: str, sid: str) -> bool:
    _, question, rnd = svc.store.report_context(poll.join_code, q.id)
    return svc.store.insert_report(
        round_id=rnd.round_id, answer="1", design_json=question.design_json,
        created_at=utcnow(), submission_id=sid, token=dedup_token(rnd.salt, device),
        simulated=False)


def test_insert_after_close_is_refused_inside_the_transaction(svc):
    poll, q = _open_question(svc)
    _, question, rnd = svc.store.report_context(poll.join_code, q.id)  # looked: open
    svc.close_question(q.id)
    with pytest.raises(QuestionClosed):
        svc.store.insert_report(round_id=rnd.round_id, answer="1",
                                design_json=question.design_json, created_at=utcnow(),
                                submission_id="sub-race-0001", token="t", simulated=False)
    assert svc.estimate(q.id).n == 0


def test_insert_into_a_superseded_round_is_refused(svc):
    poll, q = _open_question(svc)
    _, question, old = svc.store.report_context(poll.join_code, q.id)
    svc.new_round(q.id, open_now=True)
    with pytest.raises(QuestionClosed):
        svc.store.insert_report(round_id=old.round_id, answer="1",
                                design_json=question.design_json, created_at=utcnow(),
                                submission_id="sub-race-0002", token="t", simulated=False)


def test_answered_device_racing_a_close_gets_its_receipt(svc):
    poll, q = _open_question(svc)
    first = svc.submit_report(poll.join_code, q.id, answer=1, design_params=EXERCISE,
                              submission_id="sub-race-0003", device_id="dev")
    svc.close_question(q.id)
    again = svc.submit_report(poll.join_code, q.id, answer=0, design_params=EXERCISE,
                              submission_id="sub-race-0004", device_id="dev")
    assert again.already_answered and again.answer == first.answer


def test_concurrent_close_never_leaves_a_report_behind_it(svc):
    poll, q = _open_question(svc)
    accepted: list[str] = []
    closed_at = []
    lock = threading.Lock()

    def student(i: int) -> None:
        try:
            r = svc.submit_report(poll.join_code, q.id, answer=i % 2, design_params=EXERCISE,
                                  submission_id=f"sub-race-{i:06d}", device_id=f"dev-{i}")
        except QuestionClosed:
            return
        with lock:
            accepted.append(r.created_at)

    threads = [threading.Thread(target=student, args=(i,)) for i in range(64)]
    for t in threads[:32]:
        t.start()
    svc.close_question(q.id)
    closed_at.append(utcnow())
    for t in threads[32:]:
        t.start()
    for t in threads:
        t.join()
    assert svc.estimate(q.id).n == len(accepted)  # every acknowledged report stored
    assert all(t <= closed_at[0] for t in accepted)  # none after the close returned
