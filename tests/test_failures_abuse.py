"""Abuse over Streamlit's real websocket protocol: guessing join codes, bad vote frames,
and question text that tries to be markup.

* guessing: after a few wrong codes a session must wait, even for the right one;
* vote frames: oversized, malformed or foreign payloads for the vote component,
  and frames that are not Streamlit messages at all, write nothing; the server
  stays up and a proper vote still works;
* question text and option labels with HTML and Markdown reach the phone as
  text: escaped in Markdown, never ``allow_html``, and the component sets them
  with ``textContent``.
"""

from __future__ import annotations

import asyncio
import json
import tomllib

import pytest

from bench.cluster import APP_ROOT, running_server
from tests.support.protocol import ProtocolError, Student, Tab, vote_event

pytestmark = pytest.mark.server

DIE = {"design": "die", "faces": 4, "truthful": 3}
RECEIPT = "Answer received"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from classroom.service import PollService
    from classroom.store import Store

    data = tmp_path_factory.mktemp("abuse")
    url = f"sqlite:///{data / 'classroom.db'}"
    store = Store(url)
    env = {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_DATABASE_URL": url,
           "LDP_CLASSROOM_INSTRUCTOR_KEY": "k"}
    with running_server(env, log_path=data / "server.log") as srv:
        yield srv, PollService(store)
    store.close()


def _poll(svc, text="Vanilla (1) or chocolate (0)?", options=("Chocolate", "Vanilla")):
    poll = svc.create_poll("abuse")
    q = svc.open_question(svc.add_question(poll.id, text, options=options,
                                           design_params=DIE).id)
    return poll, q


# -- join codes --------------------------------------------------------------------------------
async def _guess(tab: Tab, code: str):
    """Type ``code`` into the home page's join form and press Join."""
    page = await tab.run()
    box = next(t for t in page.text_inputs() if t.label == "Join code")
    return await tab.type_text(box, code, page.button("Join"))


def _errors(run) -> str:
    assert not run.exceptions(), run.exceptions()
    return " ".join(run.alerts("ERROR"))


# Five wrong codes are free; then each wrong code doubles the wait (1 s, 2 s, 4 s ...).
# The schedule waits out the first two pauses, so the last checks have a 4 s window.
WRONG = ("ZZZZZZ", "YYYYYY", "XXXXXX", "WWWWWW", "VVVVVV", "UUUUUU", "TTTTTT")
PAUSES = {5: 1.2, 6: 2.2}  # before guess i (0-based)


def test_guessing_join_codes_is_slowed_per_session(server):
    srv, svc = server
    poll, _ = _poll(svc)

    async def scenario():
        async with Tab(srv.url) as tab:
            await tab.open()
            texts = []
            for i, code in enumerate(WRONG):
                await asyncio.sleep(PAUSES.get(i, 0))
                texts.append(_errors(await _guess(tab, code)))
            blocked = _errors(await _guess(tab, "SSSSSS"))
            # Even the right code waits: no lookup is made during the pause.
            right = await _guess(tab, poll.join_code)
            async with Tab(srv.url) as fresh:  # another session is not slowed by this one
                await fresh.open()
                other = await _guess(fresh, poll.join_code)
            return texts, blocked, right, other

    texts, blocked, right, other = asyncio.run(scenario())
    assert all("no poll has join code" in t for t in texts), texts
    assert "Too many codes" in blocked and "no poll has join code" not in blocked
    assert "Too many codes" in _errors(right)
    assert right.component() is None
    assert "Too many codes" not in _errors(other)


def test_guessing_by_address_is_slowed_too(server):
    """Rerunning /?poll=WRONG in one session counts as guessing as well."""
    srv, _ = server

    async def scenario():
        async with Student(srv.url, "QQQQQQ") as s:
            await s.open()
            texts = []
            for i in range(len(WRONG)):
                await asyncio.sleep(PAUSES.get(i, 0))
                texts.append(_errors(await s.run()))
            texts.append(_errors(await s.run()))
            return texts

    texts = asyncio.run(scenario())
    assert all("no poll has join code QQQQQQ" in t for t in texts[:-1]), texts
    assert "Too many codes" in texts[-1], texts


# -- vote frames -------------------------------------------------------------------------------
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


BAD_EVENTS = {
    "not json": "{vote: 1",
    "not a list": json.dumps({"event": "vote", "value": {"answer": 1}}),
    "unknown event": json.dumps([{"event": "drop_table", "value": {"answer": 1}}]),
    "missing keys": json.dumps([{"event": "vote", "value": {"answer": 1}}]),
    "extra keys": None,  # filled in below, needs the design
    "answer out of range": None,
    "answer not a number": None,
    "foreign design": vote_event(1, {"design": "die", "faces": 2, "truthful": 2},
                                 "sub-foreign-0001"),
    "params not an object": vote_event(1, "die", "sub-notobj-0001"),
    "bad submission id": vote_event(1, DIE, "<script>alert(1)</script>"),
    "overlong submission id": vote_event(1, DIE, "sub-" + "x" * 200),
    "oversized payload": json.dumps([{"event": "vote", "value": {
        "answer": 1, "params": {**DIE, "padding": "p" * 200_000},
        "submission_id": "sub-big-00001"}}]),
}


def test_malformed_and_oversized_vote_payloads_write_nothing(server):
    srv, svc = server
    poll, q = _poll(svc)
    events = dict(BAD_EVENTS)
    events["extra keys"] = json.dumps([{"event": "vote", "value": {
        "answer": 1, "params": DIE, "submission_id": "sub-extra-0001", "truth": 1}}])
    events["answer out of range"] = vote_event(7, DIE, "sub-range-0001")
    events["answer not a number"] = vote_event("yes", DIE, "sub-nan-00001")

    async def scenario():
        async with Student(srv.url, poll.join_code, timeout=30) as s:
            await s.join()
            for name, raw in events.items():
                run = await s.tap(None, raw_events=raw)
                assert not run.has_text(RECEIPT), name
                assert not run.exceptions(), (name, run.exceptions())
                # the page is still usable after each bad frame
                s.remember(await s.run())
            # ... and a proper vote from the same phone still counts, once.
            return await s.tap(1)

    final = asyncio.run(scenario())
    assert final.has_text(RECEIPT), final.texts()
    assert svc.store.count_reports(q.id) == 1


def test_frames_that_are_not_streamlit_messages_close_the_stream_and_write_nothing(server):
    srv, svc = server
    poll, q = _poll(svc)
    limit = _max_frame_bytes()

    async def attempt(make) -> str:
        """Join, send the frame ``make(student)`` builds, report how the stream ended."""
        s = Student(srv.url, poll.join_code, timeout=30)
        try:
            await s.join()
            try:
                await s.send_raw(make(s))
                await s.read_run()
            except ProtocolError as exc:
                return str(exc)
            return "stream still open"
        finally:
            await s.close()

    def oversized(s: Student) -> bytes:
        """A tap whose widget state is beyond the server's frame limit."""
        return s.rerun_message(s.tap_widgets(None, raw_events=vote_event(
            1, {**DIE, "padding": "p" * (limit + 1000)}, "sub-huge-0001"))).SerializeToString()

    async def scenario():
        garbage = await attempt(lambda s: b"\xff\x00not a protobuf" * 10)
        text = await attempt(lambda s: "rerun please")  # a text frame
        huge = await attempt(oversized)
        async with Student(srv.url, poll.join_code) as ok:
            await ok.join()
            final = await ok.tap(0)
        return garbage, text, huge, final

    garbage, text, huge, final = asyncio.run(scenario())
    for outcome in (garbage, text, huge):
        assert "stream closed" in outcome, outcome
    assert "1009" in huge or "too big" in huge.lower(), huge
    assert final.has_text(RECEIPT)
    assert svc.store.count_reports(q.id) == 1


# -- markup in question text --------------------------------------------------------------------
MARKUP = "<img src=x onerror=alert(1)> **Vote** [here](http://evil.example) <b>now</b>"


def test_question_text_with_html_and_markdown_is_shown_as_text(server):
    srv, svc = server
    poll, q = _poll(svc, text=MARKUP, options=("<i>No</i>", "**Yes**"))

    async def scenario():
        async with Student(srv.url, poll.join_code) as s:
            page = await s.join()
            return page, await s.tap(1)

    page, receipt = asyncio.run(scenario())
    comp = page.component()
    data = json.loads(comp.json)
    assert data["question"] == MARKUP  # plain data; the script sets it as text:
    assert "q.textContent = data.question" in comp.js_content
    assert "innerHTML" not in comp.js_content and "insertAdjacentHTML" not in comp.js_content
    assert receipt.has_text(RECEIPT)
    shown = [el for el in receipt.elements if el.WhichOneof("type") == "markdown"
             and "Question:" in el.markdown.body]
    assert shown, receipt.texts()
    body = shown[0].markdown.body
    assert not shown[0].markdown.allow_html
    assert r"\<img src=x onerror=alert\(1\)\>" in body
    assert r"\*\*Vote\*\*" in body and r"\[here\]\(http" in body
    assert r"\*\*Yes\*\*" in body  # the option label as reported
    for el in receipt.elements + page.elements:
        kind = el.WhichOneof("type")
        if kind == "markdown":
            assert not (el.markdown.allow_html and "onerror" in el.markdown.body)
        if kind == "html":
            assert "onerror" not in el.html.body and "evil.example" not in el.html.body
