"""The phone path at its floor, counted in transactions (SQLAlchemy's ``begin`` events), on
every backend:

* a phone's first load (the page, then the poll's state with this device's receipt,
  ``?me=1``) opens no transaction: the state is shared from memory, and a browser that
  has not answered in the poll (no ``ldp_answered`` cookie) needs no read for its receipt;
* a tap is ONE transaction, with or without a budget or a per-address limit: validation,
  the device's earlier reports (the budget and the receipt's running total), the insert;
  a double tap and every refusal too;
* ``/me`` (or ``?me=1``) of a browser that has answered is one read.
"""

from __future__ import annotations

import math

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

import web
from classroom.domain import CLASS_EXERCISE, QuestionClosed
from classroom.service import PollService
from phone.routes import ANSWERED_COOKIE, PhoneApi, direct, make_routes
from tests.support.db import Transactions, past_grace
from tests.support.web import local_edge

LN3 = math.log(3)
DIE = dict(CLASS_EXERCISE)
ORIGIN = "http://testserver"


def _class(service: PollService, *, budget: float | None = None):
    poll = service.polls.create_poll("floor")
    if budget is not None:
        service.polls.set_budget(poll.id, budget)
    q = service.running.open_question(
        service.polls.add_question(poll.id, "V or C?", design_params=DIE).id)
    return service.polls.poll(poll.id), q


def _app(service: PollService) -> Starlette:
    # A long ttl: the poll's shared state is built once, by the first phone, and then
    # served from memory, as in a lecture hall within one second. The phone's requests
    # take the app's direct path to the phone routes, as app.py wires them.
    api = PhoneApi(lambda: service, ttl=3600)
    return Starlette(routes=make_routes(api),
                     middleware=web.middleware(local_edge(), direct=direct(api)))


def _first_load(client: TestClient, code: str) -> dict:
    """What the page does on load: the page (and its device cookie; its favicon is
    inline), then the poll's state with this device's receipt and spent ε."""
    assert client.get(f"/join/{code}", headers={"accept": "text/html"}).status_code == 200
    state = client.get(f"/api/poll/{code}?me=1")
    assert state.status_code == 200, state.text
    return state.json()["me"]


def _tap(client: TestClient, q, sid: str):
    body = {"question_id": q.id, "answer": 1, "params": q.design_params, "submission_id": sid}
    return client.post(f"/api/poll/{client.code}/report", json=body,  # type: ignore[attr-defined]
                       headers={"origin": ORIGIN})


@pytest.mark.parametrize("setting", ["plain", "budget", "address-limit"])
def test_a_first_load_reads_nothing_and_a_tap_is_one_transaction(store, setting):
    service = PollService.on(store, max_reports_per_address=5 if setting == "address-limit"
                             else None)
    poll, q = _class(service, budget=2 * LN3 if setting == "budget" else None)
    app = _app(service)
    with TestClient(app) as first, TestClient(app) as phone:
        _first_load(first, poll.join_code)  # builds the poll's shared state
        phone.code = poll.join_code  # type: ignore[attr-defined]
        with Transactions(store) as load:
            me = _first_load(phone, poll.join_code)
        assert load.count == 0, load.statements
        assert me == {"question_id": q.id, "receipt": None, "spent_epsilon": 0.0}

        with Transactions(store) as tap:
            resp = _tap(phone, q, "sid-floor-0001")
        assert resp.status_code == 200, resp.text
        assert tap.count == 1, tap.statements
        receipt = resp.json()["receipt"]
        assert receipt["spent_epsilon"] == pytest.approx(LN3)
        assert not receipt["already_answered"]
        assert phone.cookies.get(ANSWERED_COOKIE) == "1"

        with Transactions(store) as again:
            resp = _tap(phone, q, "sid-floor-0002")  # a double tap
        assert again.count == 1 and resp.json()["receipt"]["already_answered"]

        with Transactions(store) as me_read:
            mine = phone.get(f"/api/poll/{poll.join_code}/me").json()
        assert me_read.count == 1
        assert mine["receipt"]["answer_label"] == receipt["answer_label"]
        assert mine["spent_epsilon"] == pytest.approx(LN3)
        with Transactions(store) as reload:  # the page loaded again: the same, in the state
            assert _first_load(phone, poll.join_code) == mine
        assert reload.count == 1

        with Transactions(store) as waiting:
            etag = phone.get(f"/api/poll/{poll.join_code}").headers["etag"]
            assert phone.get(f"/api/poll/{poll.join_code}?wait=0.05",
                             headers={"if-none-match": etag}).status_code == 304
        assert waiting.count == 0


def test_the_answered_marker_is_scoped_to_its_poll_and_holds_nothing(store):
    service = PollService.on(store)
    poll, q = _class(service)
    other, _ = _class(service)
    with TestClient(_app(service)) as phone:
        _first_load(phone, poll.join_code)
        phone.code = poll.join_code  # type: ignore[attr-defined]
        resp = _tap(phone, q, "sid-floor-0003")
        cookie = next(c for c in resp.headers.get_list("set-cookie")
                      if c.startswith(f"{ANSWERED_COOKIE}="))
        attrs = {a.strip().split("=")[0].lower(): a.strip() for a in cookie.split(";")}
        assert cookie.startswith(f"{ANSWERED_COOKIE}=1;")
        assert attrs["path"] == f"Path=/api/poll/{poll.join_code}"
        assert "httponly" in attrs and attrs["samesite"].lower() == "samesite=strict"
        # Another poll's /me is answered from memory: the marker is not sent there.
        assert phone.get(f"/api/poll/{other.join_code}").status_code == 200
        with Transactions(store) as tx:
            me = phone.get(f"/api/poll/{other.join_code}/me").json()
        assert tx.count == 0 and me["receipt"] is None


@pytest.mark.parametrize("budget", [None, LN3], ids=["no-budget", "budget"])
def test_every_outcome_of_submit_report_is_one_transaction(store, budget):
    service = PollService.on(store, max_reports_per_address=1)
    poll, q = _class(service, budget=budget)
    q2 = service.polls.add_question(poll.id, "Next?", design_params=DIE)
    # Forced open beside q, as a second dashboard could once leave it.
    q2 = service.store.set_state(q2.id, "open", q2.updated_at)

    def submit(device: str, sid: str, question=q, **kw):
        return service.reports.submit_report(poll.join_code, question.id, answer=1,
                                             design_params=question.design_params,
                                             submission_id=sid, device_id=device, **kw)

    outcomes = []
    for call in (lambda: submit("a", "sid-floor-1001", address="192.0.2.1"),  # stored
                 lambda: submit("a", "sid-floor-1002"),  # a double tap: its receipt
                 lambda: submit("b", "sid-floor-1001"),  # another's submission id
                 lambda: submit("c", "sid-floor-1003", address="192.0.2.1"),  # address full
                 lambda: submit("a", "sid-floor-1004", question=q2)):  # past any budget
        with Transactions(store) as tx:
            try:
                outcomes.append(call().already_answered)
            except Exception as exc:  # noqa: BLE001 - the refusal is not what is counted
                outcomes.append(type(exc).__name__)
        assert tx.count == 1, (outcomes, tx.statements)
    assert outcomes == [False, True, "BadReport", "AddressLimit",
                        "OverBudget" if budget else False]
    service.running.close_question(q.id)
    past_grace(store, q.id)
    with Transactions(store) as tx, pytest.raises(QuestionClosed):
        submit("d", "sid-floor-1005")
    assert tx.count == 1
