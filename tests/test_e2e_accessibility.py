"""Accessibility in real Chromium: an axe-core audit of the home, phone and dashboard
pages, and the phone page used with the keyboard alone, at 200% zoom, with reduced
motion and without JavaScript.

axe-core comes bundled with the axe-playwright-python package (no download).
Serious and critical findings fail the test.
"""

from __future__ import annotations

import pytest

from classroom.domain import CLASS_EXERCISE
from tests.support.browser import PHONE, chromium, log_in, require_browser, settle
from tests.support.server import running_server

pytestmark = [pytest.mark.browser, pytest.mark.server]

EXERCISE = dict(CLASS_EXERCISE)
KEY = "a11y-instructor-key-0001"
DESKTOP = {"width": 1280, "height": 800}


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    require_browser()
    from classroom.service import PollService
    from classroom.store import Store

    data = tmp_path_factory.mktemp("a11y")
    url = f"sqlite:///{data / 'classroom.db'}"
    svc = PollService.on(Store(url))
    poll = svc.polls.create_poll("Accessibility")
    q = svc.polls.add_question(poll.id, "Vanilla (1) or chocolate (0)?",
                               options=("Chocolate", "Vanilla"), design_params=EXERCISE)
    svc.running.open_question(q.id)
    env = {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_DATABASE_URL": url,
           "LDP_CLASSROOM_INSTRUCTOR_KEY": KEY}
    with running_server(env) as base:
        yield base, poll, svc


def _serious(page) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    result = Axe().run(page)
    return [f"{v['impact']}: {v['id']} ({v['help']}) at {[n['target'] for n in v['nodes'][:3]]}"
            for v in result.response["violations"] if v["impact"] in ("serious", "critical")]


def _open(browser, url: str, viewport: dict, ready: str):
    page = browser.new_page(viewport=viewport)
    page.goto(url)
    page.locator(ready).first.wait_for(timeout=30_000)
    settle(page)
    return page


def test_home_page_has_no_serious_findings(classroom, chromium):
    base, _, _ = classroom
    page = _open(chromium, base + "/", DESKTOP, "text=I'm a student")
    assert _serious(page) == []
    page.close()


def test_student_question_and_receipt_have_no_serious_findings(classroom, chromium):
    base, poll, _ = classroom
    ctx = chromium.new_context(viewport=PHONE)
    page = ctx.new_page()
    page.goto(f"{base}/join/{poll.join_code}")
    page.locator("button[data-answer='1']").wait_for(timeout=30_000)
    assert _serious(page) == []
    page.locator("button[data-answer='1']").click()
    page.locator("#receipt").get_by_text("Answer received").wait_for(timeout=30_000)
    assert _serious(page) == []
    ctx.close()


def test_dashboard_has_no_serious_findings(classroom, chromium):
    base, _, _ = classroom
    ctx = chromium.new_context(viewport=DESKTOP)
    page = ctx.new_page()
    log_in(page, base, KEY)
    page.get_by_text("Reports received").filter(visible=True).first.wait_for(timeout=30_000)
    settle(page)
    assert _serious(page) == []
    ctx.close()


def test_student_can_vote_with_the_keyboard_alone(classroom, chromium):
    base, poll, svc = classroom
    ctx = chromium.new_context(viewport=PHONE, reduced_motion="reduce")
    page = ctx.new_page()
    page.goto(f"{base}/join/{poll.join_code}")
    page.locator("button[data-answer='0']").wait_for(timeout=30_000)
    for _ in range(40):  # Tab until an answer button has the focus
        page.keyboard.press("Tab")
        focused = page.evaluate(
            "() => { let e = document.activeElement;"
            " while (e && e.shadowRoot && e.shadowRoot.activeElement)"
            " e = e.shadowRoot.activeElement;"
            " return e ? e.getAttribute('data-answer') : null; }")
        if focused is not None:
            break
    assert focused is not None, "no answer button is reachable with Tab"
    page.keyboard.press("Enter")
    page.locator("#receipt").get_by_text("Answer received").wait_for(timeout=30_000)
    ctx.close()


def test_student_page_at_200_percent_zoom(classroom, chromium):
    base, poll, _ = classroom
    # 200% zoom on a 360 px phone leaves 180 CSS pixels of width.
    ctx = chromium.new_context(viewport={"width": 180, "height": 320}, device_scale_factor=2)
    page = ctx.new_page()
    page.goto(f"{base}/join/{poll.join_code}")
    button = page.locator("button[data-answer='1']")
    button.wait_for(timeout=30_000)
    box = button.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 180 + 1
    assert box["height"] >= 44  # a comfortable touch target
    assert page.evaluate("document.documentElement.scrollWidth") <= 181
    ctx.close()


def test_receipt_is_announced_and_takes_the_focus(classroom, chromium):
    """Screen readers hear the receipt (a live region), and the focus moves to it, so no
    answer button stays focused or highlighted."""
    base, poll, _ = classroom
    ctx = chromium.new_context(viewport=PHONE, reduced_motion="reduce")
    page = ctx.new_page()
    page.goto(f"{base}/join/{poll.join_code}")
    page.locator("button[data-answer='1']").click(timeout=30_000)
    page.locator("#receipt").wait_for(timeout=30_000)
    live = page.locator("[role=status][aria-live=polite]")
    assert "received" in live.inner_text().lower() or "already answered" in \
        live.inner_text().lower()
    assert page.evaluate("document.activeElement.id") == "receipt"
    assert page.locator("button[data-answer]").count() == 0
    ctx.close()


def test_reduced_motion_skips_the_animation(classroom, chromium):
    base, poll, _ = classroom
    ctx = chromium.new_context(viewport=PHONE, reduced_motion="reduce")
    page = ctx.new_page()
    page.goto(f"{base}/join/{poll.join_code}")
    assert page.evaluate("window.matchMedia('(prefers-reduced-motion: reduce)').matches")
    page.locator("button[data-answer='0']").click(timeout=30_000)
    page.locator("#receipt").wait_for(timeout=30_000)
    animated = page.evaluate("getComputedStyle(document.documentElement).animationName")
    assert animated in ("none", "")
    ctx.close()


def test_without_javascript_the_page_says_why_it_needs_it(classroom, chromium):
    base, poll, _ = classroom
    ctx = chromium.new_context(viewport=PHONE, java_script_enabled=False)
    page = ctx.new_page()
    page.goto(f"{base}/join/{poll.join_code}")
    text = page.locator("body").inner_text()
    assert "needs JavaScript" in text and "randomizes your answer" in text
    ctx.close()
