"""Projection mode driven from the keyboard alone, in Chromium against a real server.

The instructor logs in, opens projection mode and presses PageDown, as a presentation
clicker sends it: the question opens, closes, its results are revealed, and the next
question opens; every step is checked in the database. "?" shows the list of keys, "b"
blanks the screen until any key, keys typed in a text field stay in the field, a
countdown ticks in the page (no rerun per second) and the panel shows the close when the
server closes the question at zero, and Esc leaves projection mode. No "ignored input"
banner appears and the server logs no refused widget state, from login to the end.
"""

from __future__ import annotations

import re
import time

import pytest

from classroom.domain import CLASS_EXERCISE
from tests.support.browser import (
    GUARD_BANNER,
    GUARD_LOG_LINE,
    SentReruns,
    chromium,
    log_in,
    require_browser,
    settle,
)
from tests.support.server import classroom_server, server_log, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.server]

KEY = "pacing-e2e-instructor-key"
WAIT_MS = 60_000


@pytest.fixture
def classroom(tmp_path):
    require_browser()
    with classroom_server(tmp_path, KEY) as running:
        yield running


def _poll(svc, n=2, countdown_s=None):
    poll = svc.polls.create_poll("CS208")
    qs = [svc.polls.add_question(poll.id, f"Question {i + 1}: vanilla or chocolate?",
                                 options=("Chocolate", "Vanilla"),
                                 design_params=dict(CLASS_EXERCISE),
                                 countdown_s=countdown_s if i == 0 else None) for i in range(n)]
    return poll, qs


def _projector(chromium, base, poll, q, size=(1280, 720)):
    ctx = chromium.new_context(viewport={"width": size[0], "height": size[1]},
                               reduced_motion="reduce")
    page = ctx.new_page()
    reruns = SentReruns(page)
    log_in(page, base, KEY)
    page.goto(f"{base}/dashboard?projector=1&pid={poll.id}&qid={q.id}")
    page.locator(".ldp-question").first.wait_for(timeout=WAIT_MS)
    settle(page)
    page.wait_for_function("() => !!window.__ldpPacing && window.__ldpPacing.attached",
                           timeout=WAIT_MS)
    return ctx, page, reruns


def _no_banner(page, base, step):
    assert page.get_by_text(GUARD_BANNER).count() == 0, f"the guard's banner appeared after {step}"
    assert GUARD_LOG_LINE not in server_log(base), f"a widget state was refused after {step}"


def _press(page, key, base, step):
    """Press ``key`` once the page has settled, as a person does between clicks."""
    settle(page)
    page.keyboard.press(key)


def test_pagedown_alone_drives_a_question_and_moves_on(classroom, chromium):
    base, svc = classroom
    poll, (q1, q2) = _poll(svc)
    ctx, page, _ = _projector(chromium, base, poll, q1)
    steps = [
        ("open", lambda: svc.polls.question(q1.id).state == "open"),
        ("close", lambda: svc.polls.question(q1.id).state == "closed"),
        ("reveal", lambda: svc.polls.question(q1.id).revealed),
        ("next", lambda: svc.polls.question(q2.id).state == "open"),
    ]
    for name, done in steps:
        _press(page, "PageDown", base, name)
        wait_until(done, f"PageDown to {name}")
        _no_banner(page, base, f"PageDown ({name})")
    assert svc.polls.question(q1.id).state == "closed"
    page.get_by_text("Question 2: vanilla or chocolate?").first.wait_for(timeout=WAIT_MS)
    # PageDown on the next question closes it: the clicker keeps going.
    _press(page, "PageDown", base, "close Q2")
    wait_until(lambda: svc.polls.question(q2.id).state == "closed", "PageDown closing Q2")
    # PageUp undoes: reopen.
    _press(page, "PageUp", base, "reopen Q2")
    wait_until(lambda: svc.polls.question(q2.id).state == "open", "PageUp reopening Q2")
    settle(page)
    _no_banner(page, base, "the whole walk")
    assert "Traceback" not in server_log(base)
    ctx.close()


def test_overlay_blank_screen_fields_and_leaving(classroom, chromium):
    base, svc = classroom
    poll, (q1, _q2) = _poll(svc)
    ctx, page, _ = _projector(chromium, base, poll, q1)
    help_box = page.get_by_role("dialog", name="Keyboard shortcuts")

    # "?" lists the keys; Esc closes the list and stays in projection mode.
    _press(page, "?", base, "?")
    help_box.wait_for(state="visible", timeout=WAIT_MS)
    text = help_box.inner_text()
    for key in ("PageDown", "PageUp", "Esc", "?"):
        assert key in text
    page.keyboard.press("Escape")
    help_box.wait_for(state="hidden", timeout=WAIT_MS)
    assert "projector=1" in page.url

    # A text field, a text area and an editable block keep their keys.
    page.evaluate("""() => {
        const box = document.createElement('div');
        box.id = 'fields';
        box.innerHTML = '<input id="f-input" type="text"><textarea id="f-area"></textarea>'
          + '<div id="f-edit" contenteditable="true"></div>';
        document.querySelector('.ldp-question').after(box);
    }""")
    for field in ("#f-input", "#f-area", "#f-edit"):
        page.locator(field).focus()
        for key in ("PageDown", "n", "o", "r", "b", "?", "ArrowRight"):
            page.keyboard.press(key)
        assert help_box.is_hidden()
        assert page.locator(".ldp-pacing-blank").is_hidden()
    page.keyboard.type("Open? no.")
    assert page.locator("#f-edit").inner_text() == "norb?Open? no."
    assert page.locator("#f-input").input_value() == "norb?"
    page.wait_for_timeout(0)
    settle(page)
    q = svc.polls.question(q1.id)
    assert (q.state, q.revealed) == ("draft", False), "a key typed in a field acted"
    page.evaluate("() => document.getElementById('fields').remove()")

    # A focused checkbox (clicked with the mouse) does not stop the clicker.
    page.get_by_text("Show join panel").click()
    settle(page)
    _press(page, "PageDown", base, "PageDown with the checkbox focused")
    wait_until(lambda: svc.polls.question(q1.id).state == "open",
               "PageDown with a focused checkbox")

    # "b" blanks the screen; the next key brings it back and does nothing else.
    _press(page, "b", base, "b")
    blank = page.locator(".ldp-pacing-blank")
    blank.wait_for(state="visible", timeout=WAIT_MS)
    box = blank.bounding_box()
    assert box and box["width"] >= 1280 and box["height"] >= 720
    assert "press any key" in blank.inner_text()
    page.keyboard.press("PageDown")
    blank.wait_for(state="hidden", timeout=WAIT_MS)
    settle(page)
    assert svc.polls.question(q1.id).state == "open", "the key that ended the blank screen acted"
    _press(page, ".", base, ".")
    blank.wait_for(state="visible", timeout=WAIT_MS)
    page.keyboard.press("x")
    blank.wait_for(state="hidden", timeout=WAIT_MS)

    # Single keys: R reveals, O closes.
    _press(page, "r", base, "r")
    wait_until(lambda: svc.polls.question(q1.id).revealed, "R revealing")
    _press(page, "o", base, "o")
    wait_until(lambda: svc.polls.question(q1.id).state == "closed", "O closing")

    # Esc leaves projection mode.
    _press(page, "Escape", base, "Escape")
    page.wait_for_url(re.compile(r"^(?!.*projector=1).*$"), timeout=WAIT_MS)
    page.get_by_role("button", name="Projection mode", exact=True).wait_for(timeout=WAIT_MS)
    page.get_by_role("button", name="Leave projection mode").wait_for(state="detached",
                                                                      timeout=WAIT_MS)
    settle(page)
    # The keys are gone with projection mode.
    assert page.locator(".ldp-pacing-help").count() == 0
    page.keyboard.press("PageDown")
    page.keyboard.press("n")
    settle(page)
    assert svc.polls.question(q1.id).state == "closed"
    _no_banner(page, base, "leaving projection mode")
    ctx.close()


def test_the_countdown_ticks_in_the_page_and_the_panel_follows_the_close(classroom,
                                                                         chromium):
    base, svc = classroom
    poll, (q1, _q2) = _poll(svc, countdown_s=10)
    ctx, page, reruns = _projector(chromium, base, poll, q1)
    _press(page, "PageDown", base, "open")
    wait_until(lambda: svc.polls.question(q1.id).state == "open", "PageDown opening")
    clock = page.locator(".ldp-pacing-clock")
    clock.wait_for(state="visible", timeout=WAIT_MS)
    settle(page)
    full_before = reruns.full
    seen = set()
    deadline = time.monotonic() + 30
    while svc.polls.question(q1.id).state == "open":
        assert time.monotonic() < deadline, "the server did not close the question"
        text = clock.inner_text() if clock.is_visible() else None
        if text:
            assert re.fullmatch(r"0:(0\d|10)", text), text
            seen.add(text)
        page.wait_for_timeout(100)
    # It counted down second by second in the page, with no rerun of its own meanwhile.
    assert len(seen) >= 5, seen
    assert reruns.full - full_before <= 1, "the countdown reran the page while ticking"
    # The server closed it; the projector's panel shows it without a key or a click.
    page.get_by_role("button", name="Reopen voting").wait_for(timeout=WAIT_MS)
    page.get_by_text("Voting closed").first.wait_for(timeout=WAIT_MS)
    clock.wait_for(state="hidden", timeout=WAIT_MS)
    assert svc.polls.question(q1.id).timed_out
    # The next PageDown reveals.
    _press(page, "PageDown", base, "reveal")
    wait_until(lambda: svc.polls.question(q1.id).revealed, "PageDown revealing after the countdown")
    _no_banner(page, base, "the countdown")
    ctx.close()
