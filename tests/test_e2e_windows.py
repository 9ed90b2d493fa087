"""Every instructor window follows the lecture, in Chromium against a real server.

Two projector windows and a desk on one poll: projector A opened on a URL that names
another question (``?pid=…&qid=…&projector=1``, as a bookmark would), projector B on the
poll alone, the desk on the poll. A whole lecture of three questions (yes/no, yes/no,
a number) is driven from each window in turn: A by its keys (PageDown, as a clicker
sends it), B by the buttons of its control bar, the desk by its buttons. After every step
each window must show the lecture's question and the right buttons (open/close, reveal/
hide, next or not), and one window (each in turn) is reloaded and must show them again.

On the second question both projectors press PageDown at the same moment: the lecture
moves on by one question (none is skipped), and a window whose press came second says
that nothing was done. A press in a window that has not followed a change yet is refused
with a sentence (the step applies to what the window showed).

Every wait polls the page (or the database); nothing sleeps. No "ignored input" banner
appears and the server logs no traceback.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest

from classroom.domain import CLASS_EXERCISE
from tests.support.browser import (
    GUARD_BANNER,
    GUARD_LOG_LINE,
    chromium,
    log_in,
    require_browser,
)
from tests.support.server import classroom_server, server_log, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.server]

KEY = "windows-e2e-instructor-key"
WAIT_S = 60.0
TEXTS = ("Vanilla (1) or chocolate (0)?", "Have you ever cheated on an exam?",
         "How many hours did you sleep last night?")


@pytest.fixture
def classroom(tmp_path):
    require_browser()
    with classroom_server(tmp_path, KEY, timeout=120) as running:
        yield running


def _lecture(svc):
    poll = svc.polls.create_poll("CS208, two screens")
    qs = [svc.polls.add_question(poll.id, TEXTS[0], options=("Chocolate", "Vanilla"),
                           design_params=dict(CLASS_EXERCISE)),
          svc.polls.add_question(poll.id, TEXTS[1], options=("No", "Yes"),
                           design_params={"design": "warner", "p": 0.75}),
          svc.polls.add_question(poll.id, TEXTS[2], options=("hours",), kind="numeric",
                           design_params={"design": "duchi", "epsilon": 1.0,
                                          "lo": 0.0, "hi": 12.0})]
    return poll, qs


@dataclass
class Window:
    name: str
    page: object
    projector: bool

    def prefix(self) -> str:
        return "dash_p_" if self.projector else "dash_"

    def shows(self) -> tuple | None:
        """(question text, voting button, reveal button, next enabled) as drawn now, or
        None while the page is running its script."""
        page = self.page
        if page.locator("[data-testid='stApp'][data-test-script-state='notRunning']"
                        ).count() != 1:
            return None
        return page.evaluate("""([projector, prefix]) => {
            const label = (key) => {
                const b = document.querySelector(`.st-key-${prefix}${key} button`);
                return b ? [b.querySelector('p') ? b.querySelector('p').innerText.trim()
                            : b.innerText.trim(), !b.disabled] : null;
            };
            let text = null;
            if (projector) {
                const q = document.querySelector('.ldp-question');
                text = q ? q.innerText.trim() : null;
            } else {
                const s = document.querySelector('.st-key-dash_question_select input');
                const m = s && s.value.match(/Q\\d+: (.*) \\(/);
                text = m ? m[1] : null;
            }
            const voting = label('voting'), reveal = label('reveal'), next = label('next');
            if (!voting || !reveal || !next) return null;
            return [text, voting[0], reveal[0], next[1]];
        }""", [self.projector, self.prefix()])


def _expected(svc, qs) -> tuple:
    """What every window must show: the lecture's question (the open one, else the one
    left last, else the first) and its buttons, from the database."""
    from ui.dashboard.selection import lecture_question

    fresh = svc.polls.questions(qs[0].poll_id)
    q = lecture_question(fresh)
    voting = ("Close voting" if q.state == "open" else
              "Open voting" if q.state == "draft" else "Reopen voting")
    reveal = "Hide results" if q.revealed else "Reveal results"
    return (q.text, voting, reveal, q.position < fresh[-1].position)


def _wait_shows(window: Window, want: tuple, what: str) -> float:
    start = time.monotonic()
    seen = None
    while time.monotonic() - start < WAIT_S:
        seen = window.shows()
        if seen is not None and tuple(seen) == want:
            return time.monotonic() - start
        window.page.wait_for_timeout(100)
    raise AssertionError(f"{window.name} after {what}: shows {seen}, expected {want}")


def _settled(window: Window) -> None:
    window.page.wait_for_selector(
        "[data-testid='stApp'][data-test-connection-state='CONNECTED']"
        "[data-test-script-state='notRunning']", state="attached", timeout=WAIT_S * 1000)


def _open(chromium, base, name, url, projector) -> Window:
    ctx = chromium.new_context(viewport={"width": 1280, "height": 720},
                               reduced_motion="reduce")
    page = ctx.new_page()
    log_in(page, base, KEY)
    page.goto(base + url)
    window = Window(name, page, projector)
    _settled(window)
    if projector:
        page.wait_for_function("() => !!window.__ldpPacing && window.__ldpPacing.attached",
                               timeout=WAIT_S * 1000)
    return window


def _step(window: Window, action: str) -> None:
    """One step from ``window``: a projector with its key (A) or its bar's button (B), the
    desk with its button."""
    _settled(window)
    if window.name == "projector A":
        window.page.keyboard.press("PageDown")
        return
    key = {"open": "voting", "close": "voting", "reveal": "reveal", "next": "next"}[action]
    window.page.locator(f".st-key-{window.prefix()}{key} button").first.click()


def _press_together(first: Window, second: Window) -> None:
    """PageDown in two projectors within a few milliseconds of each other."""
    script = ("() => window.dispatchEvent(new KeyboardEvent('keydown', "
              "{key: 'PageDown', bubbles: true, cancelable: true}))")
    first.page.evaluate(script)
    second.page.evaluate(script)


def test_two_projectors_and_a_desk_follow_a_lecture_driven_from_each(classroom, chromium):
    base, svc = classroom
    poll, qs = _lecture(svc)
    a = _open(chromium, base, "projector A", f"/dashboard?pid={poll.id}&qid={qs[1].id}"
              "&projector=1", True)
    b = _open(chromium, base, "projector B", f"/dashboard?pid={poll.id}&projector=1", True)
    desk = _open(chromium, base, "desk", f"/dashboard?pid={poll.id}", False)
    windows = [b, desk, a]  # the drivers in turn: A, opened on Q2, presses third

    # A URL's qid opens that question once: A shows Q2 while the others show the lecture's
    # question (Q1, the first, before anything was opened).
    _wait_shows(a, (TEXTS[1], "Open voting", "Reveal results", True), "opening on ?qid")
    for w in (b, desk):
        _wait_shows(w, _expected(svc, qs), "opening")

    after = dict(zip([q.id for q in qs], qs[1:], strict=False))
    # Q1 opens; then each question is closed, revealed, and left by Next (which opens the
    # next question), the last one only closed and revealed.
    steps = [(qs[0], "open")] + [(q, action) for q in qs
                                 for action in ("close", "reveal", "next")][:-1]
    waits: list[float] = []
    for i, (q, action) in enumerate(steps):
        driver = windows[i % 3]
        if (q.position, action) == (2, "next"):  # both projectors at once
            _settled(a)
            _settled(b)
            _press_together(a, b)
        else:
            _step(driver, action)
        done = {"open": lambda q=q: svc.polls.question(q.id).state == "open",
                "close": lambda q=q: svc.polls.question(q.id).state == "closed",
                "reveal": lambda q=q: svc.polls.question(q.id).revealed,
                "next": lambda q=q: svc.polls.question(after[q.id].id).state == "open"}[action]
        wait_until(done, f"{action} Q{q.position} from {driver.name}")
        # Nothing is skipped, whoever pressed: the questions after the lecture's are drafts.
        states = [x.state for x in svc.polls.questions(poll.id)]
        lecture = _expected(svc, qs)
        at = TEXTS.index(lecture[0])
        assert states[at + 1:] == ["draft"] * (len(qs) - at - 1), (action, states)
        what = f"{action} on Q{q.position} from {driver.name}"
        for w in windows:
            waits.append(_wait_shows(w, lecture, what))
        reloaded = windows[(i + 1) % 3]
        reloaded.page.reload()
        _settled(reloaded)
        _wait_shows(reloaded, lecture, f"a reload after {what}")
        assert "qid=" not in reloaded.page.url  # following: the URL names no question

    # A projector that presses PageDown on the last question, revealed: nothing to do,
    # said in its control bar.
    _wait_shows(a, (TEXTS[2], "Reopen voting", "Hide results", False), "the end")
    _settled(a)
    a.page.keyboard.press("PageDown")
    a.page.locator(".ldp-notice", has_text="last question").wait_for(timeout=WAIT_S * 1000)

    for w in windows:
        assert w.page.get_by_text(GUARD_BANNER).count() == 0, w.name
    log = server_log(base)
    assert GUARD_LOG_LINE not in log
    assert "Traceback" not in log
    print(f"windows followed a step in {sorted(waits)[len(waits) // 2]:.2f} s (median), "
          f"{max(waits):.2f} s at most, counted from the step's write")
    for w in windows:
        w.page.context.close()


def test_a_window_that_has_not_followed_yet_is_refused(classroom, chromium):
    """The desk shows Q1 open; a second desk (another process could be behind it) closes
    it. Before the first desk redraws, its "Close voting" click means the Q1 it showed:
    nothing happens twice. Its "Reveal results" from the stale view is refused too if the
    question changed again meanwhile."""
    base, svc = classroom
    poll, qs = _lecture(svc)
    svc.running.open_question(qs[0].id)
    desk = _open(chromium, base, "desk", f"/dashboard?pid={poll.id}", False)
    _wait_shows(desk, (TEXTS[0], "Close voting", "Reveal results", True), "opening")
    # Freeze the desk's view: its 1-s check cannot rerun the page while we change the poll.
    desk.page.route_web_socket("**/_stcore/stream", lambda ws: _hold_fragments(ws))
    desk.page.reload()
    _settled(desk)
    _wait_shows(desk, (TEXTS[0], "Close voting", "Reveal results", True), "a reload")
    svc.running.close_question(qs[0].id)
    svc.running.open_question(qs[0].id)
    svc.running.close_question(qs[0].id)  # closed again: the desk's "Close voting" is stale
    desk.page.locator(".st-key-dash_voting button").click()
    desk.page.get_by_text("changed before this press").first.wait_for(timeout=WAIT_S * 1000)
    assert svc.polls.question(qs[0].id).state == "closed"
    _wait_shows(desk, (TEXTS[0], "Reopen voting", "Reveal results", True), "the refusal")
    desk.page.context.close()


def _hold_fragments(ws) -> None:
    """Pass every websocket message, except the browser's fragment reruns (the live panel
    and the 1-s check): the page stays as it was drawn until a click."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    server = ws.connect_to_server()

    def from_page(message) -> None:
        if isinstance(message, bytes):
            msg = BackMsg()
            msg.ParseFromString(message)
            if msg.WhichOneof("type") == "rerun_script" and msg.rerun_script.fragment_id:
                return
        server.send(message)

    ws.on_message(from_page)
