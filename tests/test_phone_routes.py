"""The phone path's HTTP routes: the page, the poll state, the report, every bad input.

Each test builds the routes and the app's middleware around a PollService on a
fresh SQLite file, and talks to them with Starlette's TestClient.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

import web
from classroom.domain import Conflict, DiskFull, StoreUnavailable
from classroom.service import GRACE_S, Polls, PollService, Reports
from phone import page
from phone.routes import (
    JOIN_MISSES_PER_ADDRESS,
    JOIN_MISSES_PER_MINUTE,
    MAX_BODY_BYTES,
    MAX_WAIT_S,
    PhoneApi,
    make_routes,
)
from tests.conftest import DIE
from tests.support.db import count_reports, past_grace
from tests.support.web import local_edge, local_middleware

ORIGIN = "http://testserver"


class Database:
    """Whether the test pretends the database is away."""

    down = False


class CountingPolls(Polls):
    """Polls that count look-ups by code and fail while the database is "away"."""

    def __init__(self, store, database: Database) -> None:
        super().__init__(store)
        self.lookups = 0
        self._database = database

    def poll_by_code(self, code):
        self.lookups += 1
        if self._database.down:
            raise StoreUnavailable("database unavailable")
        return super().poll_by_code(code)


class FlakyReports(Reports):
    """Reports that fail while the database is "away"."""

    def __init__(self, store, database: Database) -> None:
        super().__init__(store)
        self._database = database

    def submit_report(self, *args, **kwargs):
        if self._database.down:
            raise StoreUnavailable("database unavailable, not saved — try again")
        return super().submit_report(*args, **kwargs)


@pytest.fixture
def database():
    return Database()


@pytest.fixture
def svc(tmp_path, database):
    """The service, its poll look-ups counted, its database "away" while ``database.down``."""
    from classroom.store import Store

    store = Store(f"sqlite:///{tmp_path / 'c.db'}")
    yield dataclasses.replace(PollService.on(store), polls=CountingPolls(store, database),
                              reports=FlakyReports(store, database))
    store.close()


@pytest.fixture
def edge():
    return local_edge()


@pytest.fixture
def client(svc, edge):
    app = Starlette(routes=make_routes(PhoneApi(lambda: svc, ttl=0.05)),
                    middleware=local_middleware(edge))
    with TestClient(app, follow_redirects=False) as c:
        c.get("/join", headers={"accept": "text/html"})  # the device cookie, as a phone gets it
        yield c


def _open(svc, text="Vanilla (1) or chocolate (0)?", **kw):
    poll = svc.polls.create_poll("CS208")
    q = svc.polls.add_question(poll.id, text, options=kw.pop("options", ("Chocolate", "Vanilla")),
                               design_params=kw.pop("design_params", DIE), **kw)
    return poll, svc.running.open_question(q.id)


def _vote(client, code, q, answer=1, sid="sid-0001", **kw):
    body = {"question_id": q.id, "answer": answer, "params": q.design_params,
            "submission_id": sid}
    return client.post(f"/api/poll/{code}/report", json=body,
                       headers={"origin": ORIGIN, **kw.pop("headers", {})}, **kw)


def _rows(svc, q) -> int:
    return count_reports(svc.store, q.id)


# -- the page ----------------------------------------------------------------------------
def test_page_is_one_cacheable_document_with_strict_headers(client):
    r = client.get("/join/K7QM2P", headers={"accept-encoding": "gzip"})
    assert r.status_code == 200 and r.content == page.PAGE_HTML
    assert r.headers["content-type"].startswith("text/html")
    assert r.headers["content-security-policy"] == page.CSP
    assert r.headers["referrer-policy"] == "same-origin"
    assert r.headers["x-content-type-options"] == "nosniff"
    again = client.get("/join", headers={"if-none-match": r.headers["etag"]})
    assert again.status_code == 304 and again.content == b""


def test_page_is_gzipped(client):
    r = client.get("/join", headers={"accept-encoding": "gzip"})
    assert r.headers.get("content-encoding") == "gzip"
    assert "accept-encoding" in r.headers.get("vary", "").lower()


def test_first_page_load_sets_the_device_cookie(svc):
    app = Starlette(routes=make_routes(PhoneApi(lambda: svc)), middleware=local_middleware())
    with TestClient(app) as c:
        r = c.get("/join/ABCDEF", headers={"accept": "text/html"})
    cookie = r.headers["set-cookie"]
    assert cookie.startswith(f"{web.DEVICE_COOKIE}=") and "HttpOnly" in cookie


def test_old_links_and_the_code_box_redirect_to_the_phone_page(client):
    r = client.get("/?poll=k7qm2p")
    assert r.status_code == 303 and r.headers["location"] == "/join/k7qm2p"
    r = client.get("/join?code=k7q-m2p ")
    assert r.status_code == 303 and r.headers["location"] == "/join/K7QM2P"
    r = client.get("/join?code=%21%21")  # not a code: the page itself explains
    assert r.status_code == 200


def test_favicon_is_served_by_the_app(client):
    r = client.get("/favicon.svg")
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")
    assert r.content == page.FAVICON_SVG


# -- the poll state ------------------------------------------------------------------------
def test_state_shows_the_question_in_the_order_it_names_the_answers(client, svc):
    poll, q = _open(svc)
    r = client.get(f"/api/poll/{poll.join_code.lower()}")
    assert r.status_code == 200
    state = r.json()
    assert r.headers["etag"] == f'"{state["version"]}"'
    shown = state["question"]
    assert [o["label"] for o in shown["options"]] == ["Vanilla", "Chocolate"]
    assert [o["value"] for o in shown["options"]] == [1, 0]
    assert shown["id"] == q.id and shown["state"] == "open"
    assert shown["scheme"] == {"type": "binary", "weights": [3, 1, 0, 0], "animation": "die",
                               "faces": 4}
    assert shown["params"] == DIE and shown["results"] is None


def test_unchanged_poll_costs_a_304_without_a_database_read(client, svc):
    poll, _ = _open(svc)
    etag = client.get(f"/api/poll/{poll.join_code}").headers["etag"]
    before = svc.polls.lookups
    for _ in range(5):
        r = client.get(f"/api/poll/{poll.join_code}", headers={"if-none-match": etag})
        assert r.status_code == 304
    # The cache refreshes at most once per ttl whatever the number of requests.
    assert svc.polls.lookups - before <= 2


def test_long_poll_answers_when_the_instructor_opens_the_next_question(client, svc):
    poll, q = _open(svc)
    etag = client.get(f"/api/poll/{poll.join_code}").headers["etag"]
    nxt = svc.polls.add_question(poll.id, "Tea or coffee?", options=("Tea", "Coffee"),
                                 design_params=DIE)
    threading.Timer(0.01, svc.running.open_question, args=(nxt.id,)).start()
    r = client.get(f"/api/poll/{poll.join_code}?wait=20", headers={"if-none-match": etag})
    assert r.status_code == 200 and r.json()["question"]["id"] == nxt.id


def test_long_poll_times_out_with_304(client, svc):
    poll, _ = _open(svc)
    etag = client.get(f"/api/poll/{poll.join_code}").headers["etag"]
    r = client.get(f"/api/poll/{poll.join_code}?wait=0.3", headers={"if-none-match": etag})
    assert r.status_code == 304


def test_a_long_poll_fits_inside_every_timeout_on_its_way():
    """The page's wait (flow.js), the simulated phones' (the load harness), the server's cap
    and the read timeout of the nginx template in front: a held request must end at the
    server, with a 304, before any proxy gives up on it."""
    import re
    from pathlib import Path

    from tests.support import phone_client

    root = Path(__file__).resolve().parent.parent
    flow = (root / "phone/assets/flow.js").read_text()
    page_wait = int(re.search(r"^const LONG_POLL_S = (\d+);", flow, re.M).group(1))
    assert "?wait=${LONG_POLL_S}" in flow
    template = (root / "deploy/nginx-site.conf.template").read_text()
    api = template[template.index("location /api/"):]
    proxy_s = int(re.search(r"proxy_read_timeout (\d+)s;", api[:api.index("}")]).group(1))
    assert phone_client.LONG_POLL_S == page_wait
    assert page_wait < MAX_WAIT_S <= proxy_s - 5, (page_wait, MAX_WAIT_S, proxy_s)


def test_the_server_holds_a_long_poll_no_longer_than_its_cap(svc):
    poll, _ = _open(svc)
    api = PhoneApi(lambda: svc)
    held: list[float] = []

    async def spy(code, version, wait):
        held.append(wait)
        return None

    api.states.wait_for_change = spy  # type: ignore[method-assign]
    app = Starlette(routes=make_routes(api), middleware=local_middleware())
    with TestClient(app) as c:
        c.get("/join", headers={"accept": "text/html"})
        etag = c.get(f"/api/poll/{poll.join_code}").headers["etag"]
        for asked in ("3600", "55", "12.5", "-4", "soon"):
            r = c.get(f"/api/poll/{poll.join_code}?wait={asked}",
                      headers={"if-none-match": etag})
            assert r.status_code == 304
    assert held == [MAX_WAIT_S, 55.0, 12.5]  # no wait asked (or a wrong one): answered at once


def test_revealed_results_carry_the_estimate_and_its_interval(client, svc):
    poll, q = _open(svc)
    svc.results.add_simulated_reports(q.id, 40, 0.6, seed=1)
    svc.running.set_revealed(q.id, True)
    res = client.get(f"/api/poll/{poll.join_code}").json()["question"]["results"]
    est = svc.results.estimate(q.id).result.estimate
    assert res["n"] == 40
    assert res["binary"]["share"] == pytest.approx(est.mu_hat)
    # the headline interval: exact, at least 95% coverage at any n (not the normal one)
    assert res["binary"]["ci_low"] == pytest.approx(est.exact_low)
    assert res["binary"]["ci_high"] == pytest.approx(est.exact_high)
    assert (est.exact_low, est.exact_high) != pytest.approx((est.ci_low, est.ci_high))


def test_revealed_categorical_results_carry_each_options_exact_interval(client, svc):
    poll = svc.polls.create_poll("flavours")
    q = svc.polls.add_question(poll.id, "Favourite?", kind="categorical", options=("A", "B", "C"),
                               design_params={"design": "grr", "d": 3, "epsilon": 1.0})
    svc.running.open_question(q.id)
    svc.results.add_simulated_reports(q.id, 30, [0.6, 0.3, 0.1], seed=2)
    svc.running.set_revealed(q.id, True)
    res = client.get(f"/api/poll/{poll.join_code}").json()["question"]["results"]
    est = svc.results.estimate(q.id).result
    assert [r["label"] for r in res["categorical"]] == ["A", "B", "C"]
    assert [r["ci_low"] for r in res["categorical"]] == pytest.approx(est.ci_low)
    assert [r["ci_high"] for r in res["categorical"]] == pytest.approx(est.ci_high)
    assert all(0 <= r["ci_low"] <= r["ci_high"] <= 1 for r in res["categorical"])


# -- join errors: one clear sentence each ----------------------------------------------------
def test_unknown_code_is_one_clear_sentence(client):
    r = client.get("/api/poll/ZZZZZZ")
    assert r.status_code == 404
    assert r.json() == {"error": "unknown_poll", "message": "No class uses the code ZZZZZZ: "
                        "check the code on the projector, or scan the QR code."}


def test_malformed_code_is_one_clear_sentence(client):
    r = client.get("/api/poll/AB")
    assert r.status_code == 400
    assert r.json() == {"error": "bad_code",
                        "message": "Join code 'AB' has 2 characters; join codes have 6."}


def test_repeated_misses_are_slowed_down(client, svc):
    poll, _ = _open(svc)
    for _ in range(JOIN_MISSES_PER_MINUTE):
        assert client.get("/api/poll/ZZZZZZ").status_code == 404
    r = client.get(f"/api/poll/{poll.join_code}")  # even a right code waits now
    assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
    assert r.json()["error"] == "slow_down"
    assert r.json()["message"].startswith("Too many codes that did not match: wait ")
    # Another phone behind the same address (a lecture hall's NAT) is not locked out.
    client.cookies.clear()
    client.get("/join", headers={"accept": "text/html"})
    assert client.get(f"/api/poll/{poll.join_code}").status_code == 200


def _wrong_codes(right: str):
    """Join codes in the right form that are not ``right``, each once."""
    import itertools

    from classroom.domain import JOIN_CODE_ALPHABET

    for letters in itertools.product(JOIN_CODE_ALPHABET, repeat=6):
        code = "".join(letters)
        if code != right:
            yield code


HTML = {"accept": "text/html"}


def test_nat_classmates_get_in_after_a_guesser_sent_hundreds_of_wrong_codes(svc):
    """A lecture hall behind one NAT: one student sends more wrong codes than the address
    limit, loading the page for a fresh cookie whenever his own is slowed down. Before, the
    whole address then got 429 for a minute, right code and long-polls included. Now the
    phones already in the poll, the ones that loaded the page and did not guess, and the
    ones arriving now all get in; the guesser gets one try per fresh cookie, and none on a
    cookie that has guessed, even with the right code."""
    poll, q = _open(svc)
    code = poll.join_code
    app = Starlette(routes=make_routes(PhoneApi(lambda: svc, ttl=0.05)),
                    middleware=local_middleware())
    nat = ("203.0.113.77", 5000)

    def phone() -> TestClient:
        c = TestClient(app, client=nat)
        c.get("/join", headers=HTML)
        return c

    seated = phone()  # in the poll before the attack, long-polling
    etag = seated.get(f"/api/poll/{code}").headers["etag"]
    waiting = phone()  # loaded the page, has not typed the code yet
    guesser, wrong, statuses = TestClient(app, client=nat), _wrong_codes(code), []
    for i in range(JOIN_MISSES_PER_ADDRESS + 100):
        if i % JOIN_MISSES_PER_MINUTE == 0:  # his own cookie is slowed down: a fresh one
            guesser.cookies.clear()
            guesser.get("/join", headers=HTML)
        statuses.append(guesser.get(f"/api/poll/{next(wrong)}").status_code)
    assert statuses[:JOIN_MISSES_PER_ADDRESS] == [404] * JOIN_MISSES_PER_ADDRESS
    # Under attack: one try per fresh cookie (10 cookies for these 100 codes), then 429.
    assert statuses[JOIN_MISSES_PER_ADDRESS:].count(404) == 10
    assert set(statuses[JOIN_MISSES_PER_ADDRESS:]) == {404, 429}
    assert guesser.get(f"/api/poll/{code}").status_code == 429  # his cookie guessed: waits
    # The classmates: the long-poll, the look at the poll, the vote.
    assert seated.get(f"/api/poll/{code}?wait=0.1",
                      headers={"if-none-match": etag}).status_code == 304
    assert seated.get(f"/api/poll/{code}").status_code == 200
    for classmate in (seated, waiting, phone()):  # ... and one arriving now
        assert classmate.get(f"/api/poll/{code}").status_code == 200
        assert classmate.get(f"/api/poll/{code}/me").status_code == 200
    assert _vote(waiting, code, q, sid="sid-nat-0001").status_code == 200
    assert _rows(svc, q) == 1


def test_made_up_cookies_guess_as_one_phone_per_address(svc):
    """A guesser who makes up a cookie per request (no page load) gets no device: his
    requests count as one cookie-less phone of his address, ten wrong codes a minute in
    all; phones with their cookies at that address are not slowed down."""
    poll, _ = _open(svc)
    app = Starlette(routes=make_routes(PhoneApi(lambda: svc, ttl=0.05)),
                    middleware=local_middleware())
    nat = ("203.0.113.78", 5000)
    guesser, wrong, statuses = TestClient(app, client=nat), _wrong_codes(poll.join_code), []
    for i in range(40):
        guesser.cookies.set(web.DEVICE_COOKIE, f"made-up-device-{i:04d}-0123456789")
        statuses.append(guesser.get(f"/api/poll/{next(wrong)}").status_code)
    assert statuses == [404] * JOIN_MISSES_PER_MINUTE + [429] * (40 - JOIN_MISSES_PER_MINUTE)
    classmate = TestClient(app, client=nat)
    classmate.get("/join", headers=HTML)
    assert classmate.get(f"/api/poll/{poll.join_code}").status_code == 200


# -- submitting ------------------------------------------------------------------------------
def test_a_vote_is_stored_once_and_a_double_tap_gets_the_first_receipt(client, svc):
    poll, q = _open(svc)
    first = _vote(client, poll.join_code, q, answer=1)
    assert first.status_code == 200, first.text
    receipt = first.json()["receipt"]
    assert receipt["already_answered"] is False and receipt["answer_label"] == "Vanilla"
    assert receipt["epsilon"] == pytest.approx(q.epsilon)
    assert receipt["spent_epsilon"] == pytest.approx(q.epsilon)
    assert receipt["received_at"].endswith("Z") and "Your privacy" in receipt["privacy_note"]
    again = _vote(client, poll.join_code, q, answer=0, sid="sid-0002")  # a second tab
    assert again.status_code == 200 and again.json()["receipt"]["already_answered"] is True
    assert again.json()["receipt"]["answer_label"] == "Vanilla"
    assert _rows(svc, q) == 1
    me = client.get(f"/api/poll/{poll.join_code}/me").json()
    assert me["receipt"]["answer_label"] == "Vanilla" and me["question_id"] == q.id


def test_the_state_asked_with_me_carries_what_me_answers(client, svc):
    poll, q = _open(svc)
    code = poll.join_code
    plain = client.get(f"/api/poll/{code}")
    assert "me" not in plain.json()  # the join form's look at a code carries none
    fresh = client.get(f"/api/poll/{code}?me=1").json()
    assert fresh["me"] == {"question_id": q.id, "receipt": None, "spent_epsilon": 0.0}
    assert {k: v for k, v in fresh.items() if k not in ("me", "now")} == \
        {k: v for k, v in plain.json().items() if k != "now"}
    assert _vote(client, code, q).status_code == 200
    again = client.get(f"/api/poll/{code}?me=1").json()  # the page loaded again
    assert again["me"] == client.get(f"/api/poll/{code}/me").json()
    assert again["me"]["receipt"]["answer_label"] == "Vanilla"
    assert again["me"]["spent_epsilon"] == pytest.approx(q.epsilon)
    # A long-poll that ends on a new question carries this device's part for it.
    etag = client.get(f"/api/poll/{code}").headers["etag"]
    q2 = svc.polls.add_question(poll.id, "Tea (1) or coffee (0)?", options=("Coffee", "Tea"),
                                design_params=DIE)
    svc.running.close_question(q.id)
    svc.running.open_question(q2.id)
    moved = client.get(f"/api/poll/{code}?wait=5&me=1", headers={"if-none-match": etag})
    assert moved.status_code == 200
    assert moved.json()["me"] == {"question_id": q2.id, "receipt": None,
                                  "spent_epsilon": pytest.approx(q.epsilon)}


def test_a_long_poll_sent_before_the_first_answer_leaves_me_to_the_page(client, svc):
    """Its cookies are those of when it was sent: without the answered marker then, it
    cannot tell "never answered" from "answered while held", so it carries no ``me`` and
    the page asks /me with the cookies it has by then."""
    poll, q = _open(svc)
    code = poll.join_code
    etag = client.get(f"/api/poll/{code}").headers["etag"]
    q2 = svc.polls.add_question(poll.id, "Tea (1) or coffee (0)?", options=("Coffee", "Tea"),
                                design_params=DIE)
    threading.Timer(0.05, svc.running.next_question, args=(q.id,)).start()  # one transaction
    moved = client.get(f"/api/poll/{code}?wait=5&me=1", headers={"if-none-match": etag})
    assert moved.status_code == 200 and moved.json()["question"]["id"] == q2.id
    assert "me" not in moved.json()
    assert client.get(f"/api/poll/{code}?me=1").json()["me"]["question_id"] == q2.id


@pytest.mark.parametrize("headers", [{}, {"origin": "http://evil.example"},
                                     {"origin": "null"}, {"origin": "https://testserver"}])
def test_a_post_from_another_origin_is_refused(client, svc, headers):
    poll, q = _open(svc)
    body = {"question_id": q.id, "answer": 1, "params": q.design_params, "submission_id": "s-1"}
    r = client.post(f"/api/poll/{poll.join_code}/report", json=body, headers=headers)
    assert r.status_code == 403 and r.json()["error"] == "forbidden_origin"
    assert _rows(svc, q) == 0


def test_wrong_content_type_is_refused(client, svc):
    poll, q = _open(svc)
    body = json.dumps({"question_id": q.id, "answer": 1, "params": q.design_params,
                       "submission_id": "s-1"})
    r = client.post(f"/api/poll/{poll.join_code}/report", content=body,
                    headers={"origin": ORIGIN, "content-type": "text/plain"})
    assert r.status_code == 415 and r.json()["error"] == "unsupported_media_type"
    assert _rows(svc, q) == 0


def test_oversized_body_is_refused_by_header_and_by_stream(client, svc):
    poll, q = _open(svc)
    url = f"/api/poll/{poll.join_code}/report"
    big = b'{"x": "' + b"a" * (MAX_BODY_BYTES + 10) + b'"}'
    r = client.post(url, content=big, headers={"origin": ORIGIN,
                                               "content-type": "application/json"})
    assert r.status_code == 413 and r.json()["error"] == "too_large"

    def chunks():  # no Content-Length: only the stream tells
        for _ in range(MAX_BODY_BYTES // 100 + 5):
            yield b" " * 100

    r = client.post(url, content=chunks(), headers={"origin": ORIGIN,
                                                    "content-type": "application/json"})
    assert r.status_code == 413
    assert _rows(svc, q) == 0


@pytest.mark.parametrize("body", [
    b"not json", b"[" * 2000 + b"]" * 2000, b'{"question_id": 1}', b"[]",
    b'{"question_id": "1", "answer": 1, "params": {}, "submission_id": "s"}',
    b'{"question_id": 1, "answer": 1, "params": [], "submission_id": "s"}',
    b'{"question_id": 1, "answer": [[[[[[[[1]]]]]]]], "params": {}, "submission_id": "s"}',
    b'{"question_id": true, "answer": 1, "params": {}, "submission_id": "s"}',
], ids=["not-json", "2000-deep", "missing-fields", "a-list", "id-as-text", "params-list",
        "deep-answer", "id-bool"])
def test_malformed_reports_get_a_clear_error_and_write_nothing(client, svc, body):
    poll, q = _open(svc)
    r = client.post(f"/api/poll/{poll.join_code}/report", content=body,
                    headers={"origin": ORIGIN, "content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"] == "bad_request"
    assert r.json()["message"].startswith("That vote could not be read")
    assert _rows(svc, q) == 0


def test_a_report_that_does_not_fit_the_round_is_rejected(client, svc):
    poll, q = _open(svc)
    r = _vote(client, poll.join_code, q, answer=7)
    assert r.status_code == 422 and r.json()["error"] == "rejected"
    r = client.post(f"/api/poll/{poll.join_code}/report", headers={"origin": ORIGIN}, json={
        "question_id": q.id, "answer": 1, "submission_id": "s-9",
        "params": {"design": "die", "faces": 6, "truthful": 5}})
    assert r.status_code == 422
    assert _rows(svc, q) == 0


def test_no_cookie_no_vote(svc):
    poll, q = _open(svc)
    app = Starlette(routes=make_routes(PhoneApi(lambda: svc)), middleware=local_middleware())
    with TestClient(app) as c:
        r = _vote(c, poll.join_code, q)
        assert r.status_code == 400 and r.json()["error"] == "no_cookie"
        assert "did not keep the class cookie" in r.json()["message"]
        assert c.get(f"/api/poll/{poll.join_code}/me").json()["error"] == "no_cookie"
        state = c.get(f"/api/poll/{poll.join_code}?me=1")  # the state itself still comes
        assert state.status_code == 200 and state.json()["question"]["id"] == q.id
        assert state.json()["me"]["error"] == "no_cookie"
        assert "did not keep the class cookie" in state.json()["me"]["message"]
    assert _rows(svc, q) == 0


def test_a_made_up_cookie_votes_nothing_and_the_phone_is_asked_to_reload(svc):
    """Before, any cookie value was a device: one client stored 315 reports a second, each
    under an invented cookie, without loading a page."""
    poll, q = _open(svc)
    app = Starlette(routes=make_routes(PhoneApi(lambda: svc)), middleware=local_middleware())
    forger = TestClient(app)  # no cookie jar in play: each request says its own cookie
    for i in range(5):
        made_up = {"cookie": f"{web.DEVICE_COOKIE}=made-up-device-{i:04d}-0123456789"}
        r = _vote(forger, poll.join_code, q, sid=f"sid-made-up-{i:04d}", headers=made_up)
        assert (r.status_code, r.json()["error"]) == (400, "no_cookie")
        assert "not made by this class server" in r.json()["message"]
        assert "Reload the page" in r.json()["message"]
        me = forger.get(f"/api/poll/{poll.join_code}/me", headers=made_up)
        assert me.json()["error"] == "no_cookie"
    assert _rows(svc, q) == 0
    # The reload: the made-up value is replaced by a cookie of the app's, and the vote counts.
    reload = forger.get("/join", headers={**HTML, **made_up})
    assert reload.headers["set-cookie"].startswith(f"{web.DEVICE_COOKIE}=")
    assert _vote(forger, poll.join_code, q, sid="sid-after-reload").status_code == 200
    assert _rows(svc, q) == 1


def test_a_phone_beyond_the_networks_new_cookies_is_asked_to_wait(svc):
    poll, q = _open(svc)
    edge = local_edge()
    few = web.DeviceCookies("key-0123456789abcdef", edge.limits, per_minute=2)
    app = Starlette(routes=make_routes(PhoneApi(lambda: svc)),
                    middleware=local_middleware(web.Edge(edge.hosts, edge.limits, few,
                                                         edge.forwarded)))
    phones = [TestClient(app, client=("203.0.113.60", 4000)) for _ in range(3)]
    for phone in phones:
        phone.get("/join", headers=HTML)
    assert [web.DEVICE_COOKIE in p.cookies for p in phones] == [True, True, False]
    r = _vote(phones[2], poll.join_code, q)
    assert (r.status_code, r.json()["error"]) == (400, "no_cookie")
    assert r.json()["message"].startswith("Many phones on this network joined in the last "
                                          "minute")
    assert 1 <= int(r.headers["retry-after"]) <= 60
    assert _vote(phones[0], poll.join_code, q).status_code == 200


def test_voting_closed_writes_nothing(client, svc):
    poll, q = _open(svc)
    svc.running.close_question(q.id)
    past_grace(svc.store, q.id)
    r = _vote(client, poll.join_code, q)
    assert r.status_code == 409 and r.json()["error"] == "closed"
    assert r.json()["message"].startswith("Voting closed")
    assert _rows(svc, q) == 0


def test_unknown_poll_or_question_on_submit(client, svc):
    poll, q = _open(svc)
    other, _ = _open(svc, "Tea or coffee?", options=("Tea", "Coffee"))
    r = _vote(client, "ZZZZZZ", q)
    assert r.status_code == 404 and r.json()["error"] == "unknown_poll"
    r = _vote(client, other.join_code, q)
    assert r.status_code == 404 and r.json()["error"] == "unknown_question"
    assert _rows(svc, q) == 0


def test_database_away_then_the_same_vote_sent_again_is_stored_once(client, svc, database):
    poll, q = _open(svc)
    database.down = True
    r = _vote(client, poll.join_code, q, sid="same-vote-1")
    assert r.status_code == 503 and r.json()["error"] == "unavailable"
    assert r.json()["message"].startswith("Not saved yet")
    assert _rows(svc, q) == 0
    database.down = False
    r = _vote(client, poll.join_code, q, sid="same-vote-1")
    assert r.status_code == 200 and r.json()["receipt"]["already_answered"] is False
    r = _vote(client, poll.join_code, q, sid="same-vote-1")  # a late duplicate of the resend
    assert r.json()["receipt"]["already_answered"] is True
    assert _rows(svc, q) == 1


@pytest.mark.parametrize("error, status, code, says", [
    (Conflict("the data changed while saving (was the poll or question deleted?) — not "
              "saved; reload and try again"), 409, "conflict", "question changed"),
    (DiskFull("the database's disk is full, so nothing was saved"), 503, "disk_full",
     "disk is full"),
    (StoreUnavailable("database unavailable, not saved — try again"), 503, "unavailable",
     "cannot reach its database"),
])
def test_each_storage_failure_has_its_own_sentence(client, svc, monkeypatch, error, status,
                                                   code, says):
    """Conflict and DiskFull are kinds of StoreUnavailable, and answer for themselves: a
    collision with a concurrent change is not "cannot reach its database"."""
    poll, q = _open(svc)

    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(svc.reports, "submit_report", fail)
    r = _vote(client, poll.join_code, q)
    assert (r.status_code, r.json()["error"]) == (status, code)
    assert says in r.json()["message"] and "receipt" not in r.json()
    assert ("cannot reach" in r.json()["message"]) == (code == "unavailable")
    assert _rows(svc, q) == 0


def test_state_survives_a_database_outage_from_the_cache(client, svc, database):
    poll, _ = _open(svc)
    first = client.get(f"/api/poll/{poll.join_code}")
    database.down = True
    r = client.get(f"/api/poll/{poll.join_code}")
    assert r.status_code == 200 and r.json()["version"] == first.json()["version"]


def test_unknown_database_and_no_cache_is_503(client, svc, database):
    database.down = True
    r = client.get("/api/poll/ABCDEF")
    assert r.status_code == 503 and r.json()["error"] == "unavailable"


def test_every_api_response_carries_the_security_headers(client, svc):
    poll, q = _open(svc)
    for r in (client.get(f"/api/poll/{poll.join_code}"), client.get("/api/poll/ZZZZZZ"),
              _vote(client, poll.join_code, q), client.get("/favicon.svg")):
        assert r.headers["referrer-policy"] == "same-origin"
        assert r.headers["x-content-type-options"] == "nosniff"


def test_gzip_body_decodes_to_the_page(client):
    """The pre-compressed page decodes to exactly the page (TestClient decodes gzip), and
    a client that takes no gzip gets the page as it is."""
    zipped = client.get("/join", headers={"accept-encoding": "gzip"})
    assert zipped.headers["content-encoding"] == "gzip" and zipped.content == page.PAGE_HTML
    plain = client.get("/join", headers={"accept-encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.content == page.PAGE_HTML


# -- network addresses -------------------------------------------------------------------
def test_votes_are_tagged_with_their_address_and_counted(svc, client):
    poll, q = _open(svc)
    assert _vote(client, poll.join_code, q).status_code == 200
    est = svc.results.estimate(q.id)
    assert est.n == 1 and est.addresses == 1  # TestClient's address, kept only as an HMAC


def test_the_per_address_limit_answers_429_and_saves_nothing(tmp_path):
    from classroom.service import PollService
    from classroom.store import Store

    store = Store(f"sqlite:///{tmp_path / 'limit.db'}")
    limited = PollService.on(store, max_reports_per_address=1)
    app = Starlette(routes=make_routes(PhoneApi(lambda: limited)), middleware=local_middleware())
    try:
        poll, q = _open(limited)
        for i, expected in enumerate([200, 429]):
            with TestClient(app) as phone:  # a new phone (cookie) on the same network
                phone.get("/join", headers={"accept": "text/html"})
                r = _vote(phone, poll.join_code, q, sid=f"sid-limit-{i}")
                assert r.status_code == expected, r.text
        assert r.json()["error"] == "address_limit" and "Tell the instructor" in r.json()["message"]
        assert count_reports(store, q.id) == 1
    finally:
        store.close()


# -- numeric questions and the privacy budget ------------------------------------------------
SLEEP = {"design": "piecewise", "epsilon": 1.0, "lo": 0, "hi": 12}


def _open_numeric(svc, params=SLEEP):
    return _open(svc, "How many hours did you sleep?", kind="numeric", options=("hours",),
                 design_params=params)


def test_a_numeric_question_gives_the_phone_its_range_and_exact_sampler(client, svc):
    import ldp_core

    poll, q = _open_numeric(svc)
    shown = client.get(f"/api/poll/{poll.join_code}").json()["question"]
    assert shown["kind"] == "numeric" and shown["options"] == []
    assert shown["input"] == {"type": "number", "lo": 0.0, "hi": 12.0, "unit": "hours", "step": 0.1,
                                "start": 6.0}
    pm = ldp_core.PiecewiseMechanism(1.0)
    assert shown["scheme"] == {
        "type": "numeric", "mechanism": "piecewise", "lo": 0.0, "hi": 12.0,
        "low": -pm.big_c, "high": pm.big_c, "cells": ldp_core.DEVICE_CELLS, "c": pm.big_c,
        "p_window": pm.device_p_window()}
    assert "noise" in shown["privacy_note"]
    duchi_poll, _ = _open_numeric(svc, {"design": "duchi", "epsilon": 1.0, "lo": 0.1,
                                        "hi": 0.6})
    duchi = client.get(f"/api/poll/{duchi_poll.join_code}").json()
    # The slider starts mid-range on its own step, with no floating-point tail.
    assert duchi["question"]["input"]["step"] == 0.001
    assert duchi["question"]["input"]["start"] == 0.35
    assert duchi["question"]["scheme"]["weights"] == \
        list(ldp_core.DuchiMechanism(1.0).device_weights())


@pytest.mark.parametrize("eps", [1.0, 0.5])
def test_a_hybrid_question_gives_the_phone_both_parts_and_takes_either_report(client, svc,
                                                                               edge, eps):
    """Above ε* the scheme carries the coin, Duchi's weights and value, and the Piecewise
    part's cells; at or below it only Duchi's part. A Duchi value and (above ε*) a
    Piecewise report are both accepted; a value no part can send is not."""
    import ldp_core

    params = {"design": "hybrid", "epsilon": eps, "lo": 0, "hi": 12}
    poll, q = _open_numeric(svc, params)
    scheme = client.get(f"/api/poll/{poll.join_code}").json()["question"]["scheme"]
    hm = ldp_core.HybridMechanism(eps)
    expected = {"type": "numeric", "mechanism": "hybrid", "lo": 0.0, "hi": 12.0,
                "weights": list(hm.duchi.device_weights()), "c_duchi": hm.duchi.c_epsilon,
                "p_piecewise": hm.device_p_piecewise()}
    if eps > ldp_core.HYBRID_EPSILON_STAR:
        pm = hm.piecewise
        expected.update(low=-pm.big_c, high=pm.big_c, cells=ldp_core.DEVICE_CELLS,
                        c=pm.big_c, p_window=pm.device_p_window())
    assert scheme == expected
    r = _vote(client, poll.join_code, q, answer=-hm.duchi.c_epsilon)
    assert r.status_code == 200, r.text
    # In the question's decimals (2 on [0, 12]), as the projector writes the same value.
    label = f"{6 - 6 * hm.duchi.c_epsilon:.2f} hours".replace("-", "\u2212")
    assert r.json()["receipt"]["answer_label"] == label
    r = client.post(f"/api/poll/{poll.join_code}/report", headers={"origin": ORIGIN},
                    json={"question_id": q.id, "answer": 0.5, "params": q.design_params,
                          "submission_id": "second-phone-report"},
                    cookies={web.DEVICE_COOKIE: edge.devices.sign("another-phone-0123456789")})
    assert r.status_code == (200 if hm.p_piecewise > 0 else 422), r.text
    r = client.post(f"/api/poll/{poll.join_code}/report", headers={"origin": ORIGIN},
                    json={"question_id": q.id, "answer": 99.0, "params": q.design_params,
                          "submission_id": "third-phone-report"},
                    cookies={web.DEVICE_COOKIE: edge.devices.sign("a-third-phone-0123456789")})
    assert r.status_code == 422
    assert _rows(svc, q) == (2 if hm.p_piecewise > 0 else 1)


def test_a_numeric_report_gets_a_receipt_in_the_question_units(client, svc, edge):
    poll, q = _open_numeric(svc)
    r = _vote(client, poll.join_code, q, answer=0.5)
    assert r.status_code == 200, r.text
    assert r.json()["receipt"]["answer_label"] == "9.00 hours"
    for bad in (99.0, "9 hours", None):
        r = client.post(f"/api/poll/{poll.join_code}/report", headers={"origin": ORIGIN},
                        json={"question_id": q.id, "answer": bad, "params": q.design_params,
                              "submission_id": f"other-{bad}"},
                        cookies={web.DEVICE_COOKIE: edge.devices.sign("another-phone-0123456789")})
        assert r.status_code == 422 and "not accepted" in r.json()["message"], r.text
    assert _rows(svc, q) == 1


def test_revealed_numeric_results_are_formatted_in_the_units(client, svc):
    poll, q = _open_numeric(svc)
    svc.results.add_simulated_reports(q.id, 60, 7.0, seed=2)
    svc.running.set_revealed(q.id, True)
    res = client.get(f"/api/poll/{poll.join_code}").json()["question"]["results"]
    est = svc.results.estimate(q.id).result.estimate
    assert res["n"] == 60 and res["numeric"]["mean"].endswith(" hours")
    assert float(res["numeric"]["mean"].split()[0].replace("\u2212", "-")) == \
        pytest.approx(est.mean, rel=1e-3)
    assert len(res["numeric"]["ci"]) == 2 and res["numeric"]["outside"] is False


def test_the_budget_travels_with_the_poll_and_a_report_past_it_is_refused(client, svc):
    poll, q = _open(svc)
    svc.polls.set_budget(poll.id, 2.0)
    assert client.get(f"/api/poll/{poll.join_code}").json()["poll"]["budget"] == 2.0
    # A budget lowered under an open round (as a second process could, in a race): the
    # device that would pass it is refused, clearly, and nothing is written.
    svc.store.set_budget(poll.id, 0.5)
    r = _vote(client, poll.join_code, q, answer=1)
    assert r.status_code == 409 and r.json()["error"] == "over_budget"
    assert "budget of ε = 0.50" in r.json()["message"] and "not saved" in r.json()["message"]
    assert _rows(svc, q) == 0


def test_phones_stay_on_a_question_waiting_for_its_next_round(client, svc):
    """A new round not yet open keeps the phones on that question, as a draft of round 2,
    instead of an earlier question of the poll (the page says the round opens soon)."""
    poll, first = _open(svc, "First?")
    second = svc.polls.add_question(poll.id, "Second?", design_params=DIE, open_now=True)
    svc.running.new_round(second.id)
    shown = client.get(f"/api/poll/{poll.join_code}").json()["question"]
    assert (shown["id"], shown["state"], shown["round"]) == (second.id, "draft", 2)
    assert svc.polls.question(first.id).state == "closed"


# -- the countdown -----------------------------------------------------------------------
class RunningClock:
    """The server's clock, running in real time from a fake start; ``jump`` moves it on
    (a test need not wait a countdown out)."""

    def __init__(self) -> None:
        import time
        from datetime import UTC, datetime

        self._monotonic = time.monotonic
        self._start = self._monotonic()
        self._base = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
        self.offset = 0.0

    def __call__(self):
        from datetime import timedelta

        return self._base + timedelta(seconds=self._monotonic() - self._start + self.offset)

    def jump(self, seconds: float) -> None:
        self.offset += seconds


@pytest.fixture
def timed(tmp_path):
    """``(client, service, clock)``: the routes on a store whose clock the test moves; the
    shared state is kept 5 s, so only the deadline can make it change sooner."""
    from classroom.store import Store

    clock = RunningClock()
    store = Store(f"sqlite:///{tmp_path / 'c.db'}", clock=clock)
    svc = PollService.on(store)
    edge = local_edge()
    app = Starlette(routes=make_routes(PhoneApi(lambda: svc, ttl=5.0)),
                    middleware=local_middleware(edge))
    with TestClient(app, follow_redirects=False) as c:
        c.get("/join", headers={"accept": "text/html"})
        c.edge = edge  # type: ignore[attr-defined]  # signs another phone's cookie below
        yield c, svc, clock
    store.close()


def test_the_state_carries_the_deadline_and_the_servers_time(timed):
    from phone.present import epoch_ms

    client, svc, clock = timed
    poll, q = _open(svc, countdown_s=30)
    r = client.get(f"/api/poll/{poll.join_code}")
    state = r.json()
    assert state["question"]["closes_at"] == epoch_ms(q.closes_at)
    assert state["question"]["timed_out"] is False
    assert abs(state["now"] - epoch_ms(clock())) < 2000
    assert state["question"]["closes_at"] - state["now"] == pytest.approx(30_000, abs=2000)
    clock.jump(5)  # the time moves on; the state does not: still a 304
    again = client.get(f"/api/poll/{poll.join_code}", headers={"if-none-match": r.headers["etag"]})
    assert again.status_code == 304


def test_the_long_poll_wakes_the_phones_at_the_countdowns_close(timed):
    """No dashboard, no instructor: the deadline alone closes the question, and the
    waiting phones learn it at the deadline (the state is kept 5 s otherwise)."""
    import time

    client, svc, clock = timed
    poll, q = _open(svc, countdown_s=10)
    etag = client.get(f"/api/poll/{poll.join_code}").headers["etag"]
    clock.jump(9.6)  # 0.4 s of voting left
    started = time.monotonic()
    r = client.get(f"/api/poll/{poll.join_code}?wait=20", headers={"if-none-match": etag})
    waited = time.monotonic() - started
    assert r.status_code == 200, r.status_code
    shown = r.json()["question"]
    assert (shown["state"], shown["timed_out"], shown["closes_at"]) == ("closed", True, None)
    assert 0.3 <= waited < 3.0, waited
    assert r.json()["now"] >= int(q.closes_at.timestamp() * 1000)


def test_a_report_after_the_countdown_gets_voting_closed_and_writes_nothing(timed):
    client, svc, clock = timed
    poll, q = _open(svc, countdown_s=10)
    assert _vote(client, poll.join_code, q, sid="sid-intime-1").status_code == 200
    clock.jump(10 + GRACE_S)
    r = _vote(client, poll.join_code, q, sid="sid-late-0001",
              cookies={web.DEVICE_COOKIE: client.edge.devices.sign("another-phone")})
    assert r.status_code == 409 and r.json()["error"] == "closed"
    assert r.json()["message"] == ("Voting closed: voting on this question ended before your "
                                   "answer arrived, so nothing was saved.")
    assert _rows(svc, q) == 1


def test_a_report_on_its_way_at_the_countdowns_end_is_stored_within_the_grace_time(timed):
    client, svc, clock = timed
    poll, q = _open(svc, countdown_s=10)
    clock.jump(10 + GRACE_S - 1)  # the deadline passed, the phone's report is still on its way
    r = _vote(client, poll.join_code, q, sid="sid-on-its-way")
    assert r.status_code == 200, r.text
    assert r.json()["receipt"]["question_id"] == q.id and _rows(svc, q) == 1


def test_a_report_on_its_way_at_next_gets_its_receipt_and_the_phone_sees_the_next_question(
        client, svc):
    """The instructor pressed Next while the report travelled: it is stored for the
    question it names, once however often it is resent, and the state shows the next one."""
    poll, q = _open(svc)
    second = svc.polls.add_question(poll.id, "Second?", options=("No", "Yes"),
                                    design_params=DIE)
    svc.running.next_question(q.id)
    r = _vote(client, poll.join_code, q, sid="sid-racing-next")
    assert r.status_code == 200, r.text
    receipt = r.json()["receipt"]
    assert receipt["question_id"] == q.id and not receipt["already_answered"]
    again = _vote(client, poll.join_code, q, sid="sid-racing-next")  # the resend
    assert again.status_code == 200 and again.json()["receipt"]["already_answered"]
    assert _rows(svc, q) == 1
    state = client.get(f"/api/poll/{poll.join_code}?me=1").json()
    assert state["question"]["id"] == second.id and state["me"]["receipt"] is None
    assert state["me"]["spent_epsilon"] == pytest.approx(receipt["spent_epsilon"])


# -- numbers no page sends, on every backend -------------------------------------------------
LAPLACE = {"design": "laplace", "epsilon": 1.0, "lo": 0, "hi": 12}


@pytest.mark.parametrize("question_id, answer", [
    ("9223372036854775808", "0.5"),  # 2**63: beyond SQLite's integers
    ("2147483648", "0.5"),  # 2**31: beyond PostgreSQL's INTEGER ids
    ("0", "0.5"), ("-1", "0.5"),
    (None, "1" + "0" * 400),  # 10**400 as an integer literal
    (None, "1e400"),  # a float literal that overflows to infinity
    (None, "9007199254740993"),  # 2**53 + 1: no page's JavaScript holds it exactly
    (None, "-Infinity"), (None, "NaN"),
], ids=["id-2^63", "id-2^31", "id-0", "id-negative", "answer-10^400", "answer-1e400",
        "answer-2^53+1", "answer-infinity", "answer-nan"])
def test_numbers_no_page_sends_are_a_400_with_a_sentence_on_every_backend(
        service, question_id, answer, caplog):
    """Before, an id of 2**63 (SQLite) or an answer of 10**400 raised inside the server (a
    500 and a traceback), and an id of 2**31 on PostgreSQL answered "cannot reach its
    database" and logged a warning about the database."""
    poll, q = _open(service, "Hours of sleep?", kind="numeric", options=("hours",),
                    design_params=LAPLACE)
    app = Starlette(routes=make_routes(PhoneApi(lambda: service)), middleware=local_middleware())
    body = (f'{{"question_id": {question_id or q.id}, "answer": {answer}, '
            f'"params": {json.dumps(LAPLACE)}, "submission_id": "sub-huge-0001"}}')
    with caplog.at_level(logging.WARNING), TestClient(app) as phone:
        phone.get("/join", headers={"accept": "text/html"})
        r = phone.post(f"/api/poll/{poll.join_code}/report", content=body,
                       headers={"origin": ORIGIN, "content-type": "application/json"})
    assert (r.status_code, r.json()["error"]) == (400, "bad_request"), r.text
    assert r.json()["message"].startswith("That vote could not be read")
    assert not caplog.records, [rec.getMessage() for rec in caplog.records]
    assert _rows(service, q) == 0


def test_phone_requests_go_straight_to_the_phone_routes_past_the_inner_layers(svc, edge):
    """``web.middleware(edge, direct=direct(api))``, as app.py builds it: the phone's paths
    skip every layer inside the app's middleware (here one that would mark the response)
    and still get what the edge gives every answer (security headers, the device cookie
    on a page load); other paths reach the inner app; a wrong method or sub-path of the
    phone's gets a plain 405 or 404, not a traceback."""
    from starlette.middleware import Middleware
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from phone.routes import direct

    class Marks:
        def __init__(self, app):
            self.app = app

        async def __call__(self, scope, receive, send):
            async def marked(message):
                if message["type"] == "http.response.start":
                    message["headers"] = [*message["headers"], (b"x-inner", b"1")]
                await send(message)
            await self.app(scope, receive, marked)

    poll, _ = _open(svc)
    api = PhoneApi(lambda: svc)
    app = Starlette(routes=[*make_routes(api),
                            Route("/dashboard", lambda r: PlainTextResponse("inner"))],
                    middleware=[*web.middleware(edge, direct=direct(api)), Middleware(Marks)])
    with TestClient(app, follow_redirects=False) as c:
        page_resp = c.get(f"/join/{poll.join_code}", headers={"accept": "text/html"})
        assert page_resp.status_code == 200 and "x-inner" not in page_resp.headers
        assert page_resp.headers["x-content-type-options"] == "nosniff"
        assert web.DEVICE_COOKIE in page_resp.cookies
        state = c.get(f"/api/poll/{poll.join_code}")
        assert state.status_code == 200 and "x-inner" not in state.headers
        assert state.headers["x-frame-options"] == "DENY"
        assert c.get("/favicon.svg").headers["content-type"] == "image/svg+xml"
        assert c.get("/dashboard").headers["x-inner"] == "1"
        wrong_method = c.post(f"/api/poll/{poll.join_code}")
        assert wrong_method.status_code == 405
        missing = c.get(f"/api/poll/{poll.join_code}/nothing/here")
        assert missing.status_code == 404
        assert missing.headers["referrer-policy"] == "same-origin"
