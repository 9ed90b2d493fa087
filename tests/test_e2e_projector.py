"""The projector at a glance: at 1920×1080 and 1280×800 the question, the join code and
QR code, n, μ̂, both SDs, the 95% CI, ε and both live charts lie inside the screen, no
projector text is smaller than 24 px, and no label is clipped. Screenshots of both sizes
go to the test's artifacts for a look."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from classroom.domain import CLASS_EXERCISE
from tests.support.browser import chromium, log_in, require_browser
from tests.support.server import running_server

pytestmark = [pytest.mark.browser, pytest.mark.server]

KEY = "projector-test-instructor-key"
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
METRICS = ["Reports received", "Reported “Vanilla”", "Privacy loss ε", "Estimate μ̂",
           "SD, fixed class", "SD, population", "95% CI"]


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    require_browser()
    from classroom.service import PollService
    from classroom.store import Store

    data = tmp_path_factory.mktemp("projector")
    url = f"sqlite:///{data / 'classroom.db'}"
    store = Store(url)
    svc = PollService(store)
    poll = svc.create_poll("CS208")
    q = svc.open_question(svc.add_question(
        poll.id, "Vanilla (1) or chocolate (0)?", options=("Chocolate", "Vanilla"),
        design_params=dict(CLASS_EXERCISE)).id)
    svc.add_simulated_reports(q.id, 40, 0.6, seed=3)
    svc.set_revealed(q.id, True)
    env = {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_DATABASE_URL": url,
           "LDP_CLASSROOM_INSTRUCTOR_KEY": KEY}
    with running_server(env) as base:
        yield base, poll, q
    store.close()


def _inside(box, width: int, height: int) -> bool:
    return (box is not None and box["x"] >= 0 and box["y"] >= 0
            and box["x"] + box["width"] <= width + 1 and box["y"] + box["height"] <= height + 1)


def _wait_for_charts(page, count: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while page.locator("[data-testid='stVegaLiteChart'] svg, "
                       "[data-testid='stVegaLiteChart'] canvas").count() < count:
        assert time.monotonic() < deadline, "the live charts did not render"
        page.wait_for_timeout(200)


@pytest.mark.parametrize("width, height", [(1920, 1080), (1280, 800)])
def test_projector_fits_one_screen(classroom, chromium, width, height):
    base, poll, q = classroom
    ctx = chromium.new_context(viewport={"width": width, "height": height},
                               reduced_motion="reduce")
    page = ctx.new_page()
    log_in(page, base, KEY)
    page.get_by_text("Reports received").filter(visible=True).first.wait_for(timeout=60_000)
    page.goto(f"{base}/dashboard?projector=1&pid={poll.id}&qid={q.id}")
    page.get_by_text("SD, population").first.wait_for(timeout=60_000)
    _wait_for_charts(page, 2)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"projector-{width}x{height}.png"))

    key_elements = {
        "question": page.locator(".ldp-question"),
        "join code": page.locator(".ldp-join-code"),
        "QR code": page.locator("img[alt^='QR code of']"),
        "reports chart": page.locator("[data-testid='stVegaLiteChart']").nth(0),
        "trajectory chart": page.locator("[data-testid='stVegaLiteChart']").nth(1),
    }
    for label in METRICS:
        key_elements[label] = page.locator("[data-testid='stMetric']").filter(
            has=page.locator("[data-testid='stMetricLabel']", has_text=label)).first
    outside = [name for name, loc in key_elements.items()
               if not _inside(loc.bounding_box(), width, height)]
    assert outside == [], f"below the fold or off screen at {width}×{height}: {outside}"

    small = page.evaluate("""() => {
        const out = [];
        const walker = document.createTreeWalker(
            document.querySelector("[data-testid='stMain']"), NodeFilter.SHOW_TEXT);
        for (let t = walker.nextNode(); t; t = walker.nextNode()) {
            const text = t.textContent.trim();
            const el = t.parentElement;
            if (!text || !el || !el.getClientRects().length) continue;
            if (el.closest("[data-testid='stTooltipIcon'], .katex-mathml")) continue;
            const size = parseFloat(getComputedStyle(el).fontSize);
            if (size < 24) out.push(`${size}px: ${text.slice(0, 40)}`);
        }
        return out;
    }""")
    assert small == [], f"projector text below 24 px: {small[:10]}"

    clipped = page.evaluate("""() => [...document.querySelectorAll(
            "[data-testid='stMetricLabel'] p, [data-testid='stMetricValue'] div, button p")]
        .filter(e => e.getClientRects().length && e.scrollWidth > e.clientWidth + 1)
        .map(e => e.textContent)""")
    assert clipped == [], f"clipped labels: {clipped}"
    ctx.close()


def test_desk_view_controls_are_not_clipped(classroom, chromium):
    base, poll, q = classroom
    ctx = chromium.new_context(viewport={"width": 1280, "height": 800})
    page = ctx.new_page()
    log_in(page, base, KEY)
    page.goto(f"{base}/dashboard?pid={poll.id}&qid={q.id}")
    page.get_by_role("button", name="New round").wait_for(timeout=60_000)
    clipped = page.evaluate("""() => [...document.querySelectorAll("button p")]
        .filter(e => e.getClientRects().length && e.scrollWidth > e.clientWidth + 1)
        .map(e => e.textContent)""")
    assert clipped == []
    code = page.locator(".ldp-join-code").bounding_box()
    qr = page.locator("img[alt^='QR code of']").bounding_box()
    assert _inside(code, 1280, 800) and _inside(qr, 1280, 800)
    ctx.close()
