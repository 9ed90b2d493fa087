"""Abuse against the real server: guessing join codes, bad reports, frames that are not
Streamlit messages, and question text that tries to be markup.

* guessing: after a few unknown codes a phone is told to slow down (``429
  slow_down`` with ``Retry-After``), even for the right code, until the pause is over;
* reports: malformed, oversized, deep, foreign-origin, cookie-less or wrongly typed
  POSTs get a clear JSON error and write nothing; the server stays up and a proper
  report from the same phone still counts, once;
* Streamlit's websocket (the dashboard and the self-study pages still use it): frames
  that are not Streamlit messages, or beyond its size limit, close the stream; the
  server stays up; widget states of the wrong type for their control are ignored
  with a message to that session and one warning line in the log, never a traceback;
* question text and option labels with HTML and Markdown reach the phone as data:
  exact in the JSON, never part of the page document (the page sets them as text).

Phones are plain HTTP clients of the phone path (``tests/support/phone_client.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import tomllib

import pytest

from bench.cluster import APP_ROOT, running_server
from classroom.domain import CLASS_EXERCISE
from tests.support.browser import GUARD_BANNER, GUARD_LOG_LINE
from tests.support.db import count_reports, past_grace
from tests.support.phone_client import PhoneResponse, PhoneStudent, new_session
from tests.support.protocol import ProtocolError, Tab

pytestmark = pytest.mark.server

DIE = dict(CLASS_EXERCISE)


@contextlib.contextmanager
def _server(data):
    from classroom.service import PollService
    from classroom.store import Store

    url = f"sqlite:///{data / 'classroom.db'}"
    store = Store(url)
    env = {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_DATABASE_URL": url,
           "LDP_CLASSROOM_INSTRUCTOR_KEY": "failure-test-instructor-key"}
    try:
        with running_server(env, log_path=data / "server.log") as srv:
            yield srv, PollService.on(store)
    finally:
        store.close()


@pytest.fixture
def guessing_server(tmp_path):
    """A server of its own: the slow-down counts misses per client address, and every test
    here comes from 127.0.0.1."""
    with _server(tmp_path) as srv:
        yield srv


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from classroom.service import PollService
    from classroom.store import Store

    data = tmp_path_factory.mktemp("abuse")
    url = f"sqlite:///{data / 'classroom.db'}"
    store = Store(url)
    env = {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_DATABASE_URL": url,
           "LDP_CLASSROOM_INSTRUCTOR_KEY": "failure-test-instructor-key"}
    with running_server(env, log_path=data / "server.log") as srv:
        yield srv, PollService.on(store)
    store.close()


def _poll(svc, text="Vanilla (1) or chocolate (0)?", options=("Chocolate", "Vanilla")):
    poll = svc.polls.create_poll("abuse")
    q = svc.running.open_question(svc.polls.add_question(poll.id, text, options=options,
                                                         design_params=DIE).id)
    return poll, q


def _error(resp: PhoneResponse, status: int | tuple[int, ...], code: str | None = None) -> str:
    """A clear JSON error: the status, ``{"error": code, "message": "<a sentence>"}``."""
    statuses = (status,) if isinstance(status, int) else status
    assert resp.status in statuses, (resp.status, resp.body[:300])
    assert resp.headers.get("Content-Type", "").startswith("application/json"), resp.headers
    assert isinstance(resp.json, dict), resp.body[:300]
    if code is not None:
        assert resp.json.get("error") == code, resp.json
    message = resp.json.get("message")
    assert isinstance(message, str) and message.strip(), resp.json
    assert "Traceback" not in message and "receipt" not in resp.json
    return message


# -- join codes --------------------------------------------------------------------------------
WRONG = [f"{c * 6}" for c in "ZYXWVUTSRQPNMLKJHGFE"]


def test_guessing_join_codes_is_slowed_down(guessing_server):
    srv, svc = guessing_server
    poll, _ = _poll(svc)

    async def scenario():
        async with PhoneStudent(srv.url, "ZZZZZZ", timeout=30) as p:
            await p.load_page("/join")
            misses, slowed = [], None
            for code in WRONG:
                p.code = code
                resp = await p.poll()
                if resp.status == 429:
                    slowed = resp
                    break
                misses.append(resp)
            p.code = poll.join_code
            right_during_pause = await p.poll()
            malformed = await PhoneStudent(srv.url, "!!!!", session=p.session).poll()
            return misses, slowed, right_during_pause, malformed

    misses, slowed, right, malformed = asyncio.run(scenario())
    assert len(misses) >= 3, "slowed down before three wrong codes"
    for resp in misses:
        _error(resp, 404, "unknown_poll")
    assert slowed is not None, f"{len(WRONG)} wrong codes were never slowed down"
    _error(slowed, 429, "slow_down")
    assert int(slowed.headers["Retry-After"]) >= 1
    # Even the right code waits: no lookup is made during the pause.
    _error(right, 429, "slow_down")
    _error(malformed, (400, 404, 429))


# -- reports -----------------------------------------------------------------------------------
def _nest(depth: int) -> dict:
    node: dict = {"x": 1}
    for _ in range(depth):
        node = {"x": node}
    return node


def _bad_reports(q_id: int) -> dict[str, tuple[dict, tuple[int, ...]]]:
    """name -> (keyword arguments of PhoneStudent.send, the statuses allowed)."""
    ok = {"question_id": q_id, "answer": 1, "params": DIE, "submission_id": "sub-ok-000001"}
    return {
        "not json": ({"body": "{answer: 1"}, (400,)),
        "not an object": ({"body": [ok]}, (400,)),
        "missing keys": ({"body": {"question_id": q_id, "answer": 1}}, (400,)),
        "extra key (a true answer)": ({"body": {**ok, "truth": 1}}, (400, 422)),
        "answer out of range": ({"body": {**ok, "answer": 7}}, (400, 422)),
        "answer not a number": ({"body": {**ok, "answer": "yes"}}, (400, 422)),
        "foreign design": ({"body": {**ok, "params": {"design": "die", "faces": 2,
                                                       "truthful": 2}}}, (422,)),
        "params not an object": ({"body": {**ok, "params": "die"}}, (400, 422)),
        "bad submission id": ({"body": {**ok, "submission_id": "<script>alert(1)</script>"}},
                              (400, 422)),
        "overlong submission id": ({"body": {**ok, "submission_id": "sub-" + "x" * 200}},
                                   (400, 422)),
        "unknown question": ({"body": {**ok, "question_id": q_id + 999}}, (404,)),
        "JSON too deep": ({"body": {**ok, "params": _nest(200)}}, (400, 413)),
        "oversized body": ({"body": {**ok, "params": {**DIE, "padding": "p" * 200_000}}},
                           (413,)),
        "wrong content type": ({"body": ok, "content_type": "text/plain"}, (415,)),
        "form post": ({"body": "answer=1", "content_type": "application/x-www-form-urlencoded"},
                      (415,)),
        "no Origin": ({"body": ok, "origin": ""}, (403,)),
        "another site's Origin": ({"body": ok, "origin": "https://evil.example"}, (403,)),
    }


def test_bad_reports_get_a_clear_error_and_write_nothing(server):
    srv, svc = server
    poll, q = _poll(svc)
    bad = _bad_reports(q.id)

    async def scenario():
        async with new_session(timeout=30) as http:
            p = PhoneStudent(srv.url, poll.join_code, session=http, timeout=30)
            assert (await p.join()).status == 200
            outcomes = {}
            for name, (kwargs, allowed) in bad.items():
                outcomes[name] = (await p.send(**kwargs), allowed)
            # A phone without the device cookie is told so.
            cookieless = PhoneStudent(srv.url, poll.join_code, session=http)
            await cookieless.poll()
            no_cookie = await cookieless.send({"question_id": q.id, "answer": 1,
                                               "params": DIE, "submission_id": "sub-nc-000001"})
            # ... and a proper report from the first phone still counts, once.
            final = await p.vote(1)
            again = await p.resend()
            return outcomes, no_cookie, final, again

    outcomes, no_cookie, final, again = asyncio.run(scenario())
    for name, (resp, allowed) in outcomes.items():
        try:
            _error(resp, allowed)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None
    _error(no_cookie, 400, "no_cookie")
    assert outcomes["foreign design"][0].json["error"] == "rejected"
    assert outcomes["no Origin"][0].json["error"] == "forbidden_origin"
    assert outcomes["oversized body"][0].json["error"] == "too_large"
    assert outcomes["wrong content type"][0].json["error"] == "unsupported_media_type"
    assert final.status == 200 and final.json["receipt"]["already_answered"] is False
    assert again.status == 200 and again.json["receipt"]["already_answered"] is True
    assert count_reports(svc.store, q.id) == 1


def test_a_closed_question_takes_no_report(server):
    srv, svc = server
    poll, q = _poll(svc)

    async def scenario():
        async with PhoneStudent(srv.url, poll.join_code, timeout=30) as p:
            await p.join()
            svc.running.close_question(q.id)
            past_grace(svc.store, q.id)  # closed longer ago than the grace time
            return await p.vote(1)

    _error(asyncio.run(scenario()), 409, "closed")
    assert count_reports(svc.store, q.id) == 0


# -- Streamlit's websocket -----------------------------------------------------------------------
def _max_frame_bytes() -> int:
    """The largest frame the server reads: server.maxWidgetStateSize and (uvicorn's
    websocket limit) server.maxMessageSize, in MB, from .streamlit/config.toml, else
    Streamlit's defaults (25 and 200)."""
    try:
        cfg = tomllib.loads((APP_ROOT / ".streamlit" / "config.toml").read_text())
    except OSError:
        cfg = {}
    server = cfg.get("server", {})
    return int(min(server.get("maxWidgetStateSize", 25),
                   server.get("maxMessageSize", 200)) * 1_000_000)


def test_frames_that_are_not_streamlit_messages_close_the_stream(server):
    """On the home page's websocket (the dashboard and self-study pages use the same one)."""
    srv, svc = server
    poll, q = _poll(svc)
    limit = _max_frame_bytes()

    async def attempt(make) -> str:
        tab = Tab(srv.url, timeout=30)
        try:
            await tab.open()
            await tab.run()
            try:
                await tab.send_raw(make(tab))
                await tab.read_run()
            except ProtocolError as exc:
                return str(exc)
            return "stream still open"
        finally:
            await tab.close()

    def oversized(tab: Tab) -> bytes:
        """A rerun whose widget state is beyond the server's frame limit."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        big = WidgetState(id="$$STREAMLIT_INTERNAL_KEY_x__events",
                          json_trigger_value=json.dumps({"padding": "p" * (limit + 1000)}))
        return tab.rerun_message([big]).SerializeToString()

    async def scenario():
        garbage = await attempt(lambda t: b"\xff\x00not a protobuf" * 10)
        text = await attempt(lambda t: "rerun please")  # a text frame
        huge = await attempt(oversized)
        async with Tab(srv.url, timeout=30) as fine:  # the server is still up
            await fine.open()
            home = await fine.run()
        async with PhoneStudent(srv.url, poll.join_code) as p:
            await p.join()
            vote = await p.vote(0)
        return garbage, text, huge, home, vote

    garbage, text, huge, home, vote = asyncio.run(scenario())
    for outcome in (garbage, text, huge):
        assert "stream closed" in outcome, outcome
    assert "1009" in huge or "too big" in huge.lower(), huge
    assert not home.exceptions()
    assert vote.status == 200
    assert count_reports(svc.store, q.id) == 1


# -- markup in question text --------------------------------------------------------------------
MARKUP = "<img src=x onerror=alert(1)> **Vote** [here](http://evil.example) <b>now</b>"


def test_question_text_with_html_and_markdown_travels_as_data(server):
    srv, svc = server
    poll, q = _poll(svc, text=MARKUP, options=("<i>No</i>", "**Yes**"))

    async def scenario():
        async with PhoneStudent(srv.url, poll.join_code) as p:
            page = await p.load_page()
            state = await p.poll()
            vote = await p.vote(1)
            return page, state, vote

    page, state, vote = asyncio.run(scenario())
    question = state.json["question"]
    assert question["text"] == MARKUP  # exact, as data
    assert {o["label"] for o in question["options"]} == {"<i>No</i>", "**Yes**"}
    # The page document is the same for every poll: the text never becomes markup in it.
    html = page.body.decode()
    assert "onerror=alert" not in html and "evil.example" not in html and "<i>No</i>" not in html
    assert vote.status == 200
    assert vote.json["receipt"]["answer_label"] in ("<i>No</i>", "**Yes**")


# -- crafted widget states ------------------------------------------------------------------------
_DEEP_JSON = "[" * 10_000 + "]" * 10_000


def _crafted_states(widget_id: str) -> list:
    """Values of every type a control can have, most of them wrong for this control."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    def make(**value):
        state = WidgetState(id=widget_id, **{k: v for k, v in value.items()
                                             if not k.endswith("_array")})
        for name, data in value.items():
            if name.endswith("_array"):
                getattr(state, f"{name}_value").data.extend(data)
        return state

    return [make(double_array=[math.nan, math.inf, -1e308, 1e308, 7.0]), make(double_array=[]),
            make(double_value=math.nan), make(int_value=2 ** 62), make(int_value=-5),
            make(string_value="x" * 5000), make(json_value=_DEEP_JSON),
            make(json_value="{not json"), make(bool_value=True), make(trigger_value=True),
            make(string_array=["zz", "\x00"]), make(int_array=[2 ** 62, -1])]


def _widget_ids(result) -> list[str]:
    ids = []
    for el in result.elements:
        kind = el.WhichOneof("type")
        widget_id = getattr(getattr(el, kind), "id", "") if kind else ""
        if widget_id:
            ids.append(widget_id)
    return ids


class _PageTab(Tab):
    """A tab on one page of the navigation (by its URL path)."""

    def __init__(self, base_url: str, page: str, **kwargs) -> None:
        super().__init__(base_url, **kwargs)
        self.page = page

    def rerun_message(self, *args, **kwargs):
        msg = super().rerun_message(*args, **kwargs)
        msg.rerun_script.page_name = self.page
        msg.rerun_script.context_info.url = f"{self.base_url}/{self.page}"
        return msg


@pytest.mark.parametrize("page", ["randomized-response", "histograms", "dashboard"])
def test_crafted_widget_states_get_a_message_and_no_traceback(server, page):
    """Every control of the page receives values of every wrong type (and a JSON value
    10,000 deep): the session says it ignored them, the page still works, and the
    server log gets one warning line per message instead of a traceback."""
    from bench.harness import instructor_session

    srv, svc = server
    _poll(svc)
    log = srv.log_path
    before = log.read_text(errors="replace")
    cookies = ({"ldp_instructor": instructor_session(srv.url, "failure-test-instructor-key")}
               if page == "dashboard" else None)

    async def scenario():
        async with _PageTab(srv.url, page, cookies=cookies, timeout=60) as tab:
            await tab.open()
            first = await tab.run()
            ids = _widget_ids(first)
            outcomes = []
            for widget_id in ids:
                for state in _crafted_states(widget_id):
                    outcomes.append(await tab.run([state]))
            after = await tab.run()
            return first, ids, outcomes, after

    first, ids, outcomes, after = asyncio.run(scenario())
    assert len(ids) >= 4, ids  # the page has controls to attack
    assert not first.exceptions()
    for outcome in outcomes:
        assert not outcome.exceptions(), outcome.exceptions()[:1]
    assert any(o.has_text(GUARD_BANNER)
               for o in outcomes)
    assert not after.exceptions()
    if page == "dashboard":
        # A well-typed click among the crafted states is a click: the dashboard acted on
        # it (a poll started, questions removed, the editor open), so its rows changed;
        # the controls every dashboard has are still there.
        always = ("dash_projector_on", "dash_poll_select", "dash_question_select")
        assert all(any(i.endswith(key) for i in _widget_ids(after)) for key in always)
    else:
        assert _widget_ids(after) == ids  # no crafted state changed what the page draws
    new_log = log.read_text(errors="replace")[len(before):]
    assert "Traceback" not in new_log and "Error" not in new_log
    assert GUARD_LOG_LINE in new_log
