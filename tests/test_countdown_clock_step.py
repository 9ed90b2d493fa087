"""What a step of the server's clock does to a running countdown.

A deadline is an absolute time on the server's clock (``closes_at``), stored with the
question, and every reader applies one rule to it (``state_at``: closed once the clock
reaches it). The phone counts down from the server's time sent with each state and its
own monotonic clock (``performance.now``), never its date (tests/js/flow.test.js). So:

* a step **forward** past the deadline closes the question at once, as timed out: later
  reports get "voting closed" (after the grace time), the phones see it closed;
* a step forward within the countdown shortens it by the step;
* a step **backward** lengthens it by the step: voting stays open until the server's
  clock reaches the deadline again, and the phones count down from the server's time.
  NTP slews small errors instead of stepping; a large backward step on a class server
  is an operator's act (the deployment notes say so).

The store's clock is injected; the service and the phone routes read it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from classroom.domain import CLASS_EXERCISE, QuestionClosed
from classroom.service import GRACE_S, PollService
from classroom.store import Store
from phone.routes import PhoneApi, make_routes
from tests.support.db import Clock
from tests.support.web import local_middleware

DIE = dict(CLASS_EXERCISE)
ORIGIN = "http://testserver"
COUNTDOWN_S = 60


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def svc(tmp_path, clock):
    store = Store(f"sqlite:///{tmp_path / 'c.db'}", clock=clock)
    yield PollService.on(store)
    store.close()


@pytest.fixture
def phone(svc):
    app = Starlette(routes=make_routes(PhoneApi(lambda: svc, ttl=0.0)),
                    middleware=local_middleware())
    with TestClient(app, follow_redirects=False) as c:
        c.get("/join", headers={"accept": "text/html"})
        yield c


def _timed(svc):
    poll = svc.polls.create_poll("t")
    q = svc.polls.add_question(poll.id, "Vanilla (1) or chocolate (0)?",
                               options=("Chocolate", "Vanilla"), design_params=DIE,
                               countdown_s=COUNTDOWN_S)
    return poll, svc.running.open_question(q.id)


def _left_s(phone, code) -> float:
    """The seconds a phone shows left: the deadline less the server's time sent with it."""
    body = phone.get(f"/api/poll/{code}").json()
    q = body["question"]
    return (q["closes_at"] - body["now"]) / 1000 if q["closes_at"] is not None else 0.0


def _vote(svc, poll, q, i):
    return svc.reports.submit_report(poll.join_code, q.id, answer=1, design_params=DIE,
                                     submission_id=f"step-{i:04d}", device_id=f"dev-{i:04d}")


def test_a_step_forward_within_the_countdown_shortens_it(svc, phone, clock):
    poll, q = _timed(svc)
    assert _left_s(phone, poll.join_code) == pytest.approx(COUNTDOWN_S)
    clock.advance(20)
    assert _left_s(phone, poll.join_code) == pytest.approx(COUNTDOWN_S - 20)
    assert svc.polls.question(q.id).is_open
    _vote(svc, poll, q, 1)


def test_a_step_forward_past_the_deadline_closes_it_at_once(svc, phone, clock):
    poll, q = _timed(svc)
    _vote(svc, poll, q, 1)
    clock.advance(3600)  # the clock jumps an hour ahead
    now = svc.polls.question(q.id)
    assert not now.is_open and now.timed_out
    shown = phone.get(f"/api/poll/{poll.join_code}").json()["question"]
    assert shown["state"] == "closed" and shown["timed_out"] and shown["closes_at"] is None
    with pytest.raises(QuestionClosed):
        _vote(svc, poll, q, 2)  # far beyond the grace time after the (stepped) deadline
    assert svc.running.close_expired() == 1  # the stored state says it too
    assert svc.results.estimate(q.id).n == 1


def test_a_step_backward_lengthens_it_by_the_step(svc, phone, clock):
    poll, q = _timed(svc)
    clock.advance(30)
    clock.advance(-600)  # the clock is set back ten minutes
    assert _left_s(phone, poll.join_code) == pytest.approx(COUNTDOWN_S - 30 + 600)
    assert svc.polls.question(q.id).is_open
    assert svc.running.next_deadline() == q.closes_at  # the deadline itself never moved
    _vote(svc, poll, q, 1)
    clock.advance(600 + COUNTDOWN_S - 30 - 1)
    assert svc.polls.question(q.id).is_open
    clock.advance(1)  # the server's clock reaches the deadline again
    assert not svc.polls.question(q.id).is_open
    clock.advance(GRACE_S + 1)
    with pytest.raises(QuestionClosed):
        _vote(svc, poll, q, 2)
