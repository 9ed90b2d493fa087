"""Check all that apply end to end: a real server, phones in Chromium, the projector.

The shipped plan "survey-check-all-that-apply" starts a class; its first question (four boxes,
each its own randomized-response bit) opens. Four phones (390×844) check their boxes and
send: the set is randomized on the page, and the server stores four characters of 0/1
per phone. With 60 simulated students more, the instructor reveals the results: the
projector at 1280×720 and 1920×1080 shows the question, n, ε and each option's share with
its interval, all above its control bar; a phone shows each option's share with its 95%
interval. Every step waits for the state it asserts; screenshots go to the artifacts.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from classroom.plans import shipped_plan
from tests.support.browser import chromium, log_in, require_browser
from tests.support.server import classroom_server, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.server]

KEY = "e2e-multiselect-instructor-key"
PHONE = {"width": 390, "height": 844}
SIZES = [(1280, 720), (1920, 1080)]
SETS = [(1, 1, 0, 0), (1, 0, 0, 1), (0, 1, 1, 0), (1, 0, 0, 0)]
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "multiselect"
WAIT_MS = 60_000
WAIT_S = 60.0


@pytest.fixture
def classroom(tmp_path):
    require_browser()
    with classroom_server(tmp_path, KEY) as running:
        yield running


def _poll(page, check, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        page.wait_for_timeout(200)


def _metric(page, label: str) -> str | None:
    from playwright.sync_api import Error as PlaywrightError

    box = page.locator("[data-testid='stMetric']").filter(
        has=page.locator("[data-testid='stMetricLabel']", has_text=label))
    try:
        return box.first.locator("[data-testid='stMetricValue']").inner_text(
            timeout=500).strip() if box.count() else None
    except PlaywrightError:
        return None


def _outside(box, width: int, height: float) -> bool:
    return (box is None or box["x"] < 0 or box["y"] < 0 or box["x"] + box["width"] > width + 1
            or box["y"] + box["height"] > height + 1)


def _answers(svc) -> list[str]:
    with svc.results._store.engine.connect() as conn:  # the raw rows
        return [r[0] for r in conn.execute(sa.text("SELECT answer FROM reports"))]


def test_phones_check_boxes_and_the_projector_shows_each_share(classroom, chromium):
    base, svc = classroom
    poll, questions = svc.plans.start_class(shipped_plan("survey-check-all-that-apply"))
    q = svc.running.open_question(questions[0].id)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    for i, chosen in enumerate(SETS):
        ctx = chromium.new_context(viewport=PHONE, reduced_motion="reduce")
        phone = ctx.new_page()
        phone.goto(f"{base}/join/{poll.join_code}")
        phone.locator("#send-set").wait_for(timeout=WAIT_MS)
        boxes = phone.locator("input[type=checkbox]")
        assert boxes.count() == 4
        for j, on in enumerate(chosen):
            if on:
                phone.locator(f"#box-{j}").check()
        if i == 0:
            phone.screenshot(path=str(ARTIFACTS / "phone-boxes-390x844.png"), full_page=True)
        phone.locator("#send-set").click()
        phone.locator("#receipt").wait_for(timeout=WAIT_MS)
        ctx.close()
    answers = wait_until(lambda: _answers(svc) if len(_answers(svc)) == 4 else None,
                         "four reports")
    # Only the randomized report is stored: one 0/1 per box, no true set.
    assert all(len(a) == 4 and set(a) <= {"0", "1"} for a in answers), answers

    svc.results.add_simulated_reports(q.id, 60, (0.8, 0.5, 0.2, 0.1), seed=4)
    svc.running.set_revealed(q.id, True)
    est = svc.results.estimate(q.id)
    assert est.n == 64

    for width, height in SIZES:
        ctx = chromium.new_context(viewport={"width": width, "height": height},
                                   reduced_motion="reduce")
        page = ctx.new_page()
        log_in(page, base, KEY)
        page.goto(f"{base}/dashboard?projector=1&pid={poll.id}&qid={q.id}")

        def ready(page=page) -> bool:
            return (page.locator("[data-testid='stApp'][data-test-script-state='notRunning']")
                    .count() == 1 and page.locator(".ldp-question").count() == 1
                    and _metric(page, "Reports received") == "64"
                    and bool(_metric(page, "Privacy loss ε"))
                    and page.locator("[data-testid='stVegaLiteChart'] svg, "
                                     "[data-testid='stVegaLiteChart'] canvas").count() >= 1)
        _poll(page, ready, f"the revealed question on the projector at {width}×{height}")
        page.screenshot(path=str(ARTIFACTS / f"projector-{width}x{height}.png"))
        bar = page.locator(".st-key-ldp_projector_controls").bounding_box()
        assert not _outside(bar, width, height), "the control bar is off screen"
        metric = page.locator("[data-testid='stMetric']")
        panels = {"question": page.locator(".ldp-question"),
                  "chart": page.locator("[data-testid='stVegaLiteChart']").first}
        for label in ("Reports received", "Privacy loss ε"):
            panels[label] = metric.filter(has=page.locator("[data-testid='stMetricLabel']",
                                                           has_text=label)).first
        hidden = [name for name, loc in panels.items()
                  if _outside(loc.bounding_box(), width, bar["y"])]
        assert hidden == [], f"at {width}×{height}, not on screen: {hidden}"
        ctx.close()

    watcher = chromium.new_context(viewport=PHONE, reduced_motion="reduce").new_page()
    watcher.goto(f"{base}/join/{poll.join_code}")
    watcher.get_by_text("Class results").wait_for(timeout=WAIT_MS)
    text = watcher.locator("#main").inner_text()
    for label in ("Python", "R", "Julia", "C"):
        assert f"{label}: " in text and "95% interval" in text, text
    watcher.screenshot(path=str(ARTIFACTS / "phone-results-390x844.png"), full_page=True)
    watcher.context.close()
