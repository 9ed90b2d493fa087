"""The dashboard's own traffic never trips the widget-state guard (``ui/widget_guard.py``).

A real server and a real Chromium: the instructor logs in, sits at the desk view for
30 s while the live panel refreshes itself every 2 s (each refresh is a fragment rerun
that carries the state of every control on the page), then clicks through a class:
opens every expander, types a number of simulated students, moves the what-if sliders,
reveals, closes, adds a question, saves a budget and creates a new poll. No "ignored
input" banner may appear, no "ignored ... widget state(s)" line may reach the log, and
every value typed must be the one the page uses.

The browser's own frames are decoded as they leave (``BackMsg``), so the test also
checks that it exercised what used to be refused: fragment reruns carrying an integer
number input's ``int_value`` state.
"""

from __future__ import annotations

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
from tests.support.server import classroom_server, server_log

pytestmark = [pytest.mark.browser, pytest.mark.server]

KEY = "widget-guard-e2e-key"
IDLE_S = 30.0


@pytest.fixture
def classroom(tmp_path):
    require_browser()
    with classroom_server(tmp_path, KEY) as running:
        yield running


def _wait(page, check, what: str, timeout: float = 60.0) -> None:
    """Poll ``check()`` while the page runs (Playwright delivers its events meanwhile)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        page.wait_for_timeout(250)


def _no_banner(page, step: str) -> None:
    assert page.get_by_text(GUARD_BANNER).count() == 0, f"the guard's banner appeared after {step}"


def _click(page, name: str, then: str, *, exact: bool = True) -> None:
    """Click the button ``name`` and wait until the page shows ``then`` and is idle."""
    page.get_by_role("button", name=name, exact=exact).first.click()
    page.get_by_text(then).first.wait_for(timeout=60_000)
    settle(page)
    _no_banner(page, f"clicking {name!r}")


def _open_expander(page, title: str) -> None:
    page.locator("[data-testid='stExpander'] summary").filter(has_text=title).first.click()
    settle(page)
    _no_banner(page, f"opening {title!r}")


def test_desk_view_traffic_is_never_refused(classroom, chromium):
    base, svc = classroom
    poll = svc.polls.create_poll("Guard", rehearsal=True)
    q = svc.running.open_question(svc.polls.add_question(
        poll.id, "Vanilla (1) or chocolate (0)?", options=("Chocolate", "Vanilla"),
        design_params=dict(CLASS_EXERCISE)).id)
    svc.results.add_simulated_reports(q.id, 30, 0.6, seed=1)
    ctx = chromium.new_context(viewport={"width": 1280, "height": 720},
                               reduced_motion="reduce")
    page = ctx.new_page()
    frames = SentReruns(page)
    log_in(page, base, KEY)
    page.goto(f"{base}/dashboard?pid={poll.id}&qid={q.id}")
    page.get_by_role("button", name="Close voting").wait_for(timeout=60_000)
    settle(page)
    start = len(server_log(base))

    # Sitting at the desk: the live panel refreshes itself every 2 s.
    idle_from = time.monotonic()
    while time.monotonic() - idle_from < IDLE_S:
        page.wait_for_timeout(500)
    refreshes = frames.fragment_reruns()
    assert len(refreshes) >= IDLE_S / 2 / 3, f"only {len(refreshes)} live refreshes in {IDLE_S} s"
    kinds = {w.WhichOneof("value") for r in refreshes for w in r.widget_states.widgets}
    assert "int_value" in kinds, f"no integer input's state travelled with the refreshes: {kinds}"
    _no_banner(page, "sitting idle")
    assert GUARD_LOG_LINE not in server_log(base)[start:], "the live refresh's states were refused"

    # Every expander of the desk view, opened.
    for title in ("What if", "Rehearse with simulated students", "Add a question",
                  "Privacy budget", "Delete"):
        _open_expander(page, title)

    # A typed number of simulated students is the number that arrives.
    box = page.get_by_label("Simulated students")
    box.fill("12")
    box.press("Enter")
    settle(page)
    _click(page, "Add simulated students", "12 simulated students are arriving")
    _wait(page, lambda: svc.results.estimate(q.id).n_simulated == 42, "12 more simulated students")

    # The what-if slider, set by γ and then by ε, moved with the keyboard as a person would.
    for choice, label in (("γ (how often", "γ: keep the true answer"),
                          ("ε (the privacy loss)", "ε: privacy loss per student")):
        page.get_by_text(choice).first.click()
        thumb = page.get_by_role("slider", name=label).first
        thumb.focus()
        for _ in range(3):
            thumb.press("ArrowLeft")
        settle(page)
        _no_banner(page, f"moving the slider {label!r}")

    _click(page, "Reveal results", "Estimate μ̂")
    _click(page, "Close voting", "Voting closed")
    _click(page, "Add question", "Question added")

    page.get_by_text("Limit the total ε per student").first.click()
    settle(page)
    _click(page, "Save budget", "Budget set")
    assert svc.polls.poll(poll.id).epsilon_budget is not None

    # Two more live refreshes with every control in its new state.
    seen = len(frames.fragment_reruns())
    _wait(page, lambda: len(frames.fragment_reruns()) >= seen + 2, "two more refreshes")
    _no_banner(page, "the refreshes after the clicks")

    page.get_by_role("button", name="New poll").first.click()
    page.get_by_role("button", name="Create poll").first.click()
    page.get_by_text("created. Add a question below.").first.wait_for(timeout=60_000)
    settle(page)
    _no_banner(page, "creating a poll")
    assert len(svc.polls.list_polls()) == 2

    new_log = server_log(base)[start:]
    assert GUARD_LOG_LINE not in new_log, "the dashboard's own widget states were refused"
    assert "Traceback" not in new_log
    ctx.close()


def test_a_typed_whole_number_on_a_study_page_is_the_number_used(classroom, chromium):
    """The likelihood lab's counts are whole-number inputs: what a learner types is what
    the page computes with, with no banner and no refusal in the log."""
    base, _ = classroom
    ctx = chromium.new_context(viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    start = len(server_log(base))
    page.goto(f"{base}/likelihood")
    settle(page)
    page.get_by_text("Enter counts").first.click()
    settle(page)
    box = page.get_by_label("Reports n")
    box.fill("77")
    box.press("Enter")
    _wait(page, lambda: "77" in page.locator("[data-testid='stMain']").inner_text(),
          "the page to use n = 77")
    settle(page)
    assert box.input_value() == "77"
    _no_banner(page, "typing a count")
    assert GUARD_LOG_LINE not in server_log(base)[start:]
    ctx.close()
