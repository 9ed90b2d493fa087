"""The class exercise end to end: a real server, the projected dashboard, 20 phones.

The instructor logs in with the login URL, starts the class exercise with one
click and switches to projection mode. Twenty browser contexts (twenty
devices) open the join link shown on the dashboard and tap their true answer;
the randomizer runs in each page. Then:

* the projector shows n = 20, and only the count while results are hidden;
* after "Reveal results" it shows the μ̂ the service computes from the
  reports in the database, and a student's phone starts showing the class
  result;
* after "Close voting" a phone that still shows the vote buttons and taps
  later than the grace time gets "Voting closed", and nothing is stored.

Screenshots of the projected dashboard are saved under ``test-artifacts/``
(git-ignored) for a human to check that the layout reads from the back of a
lecture hall.
"""

from __future__ import annotations

import re
import time

import pytest

from classroom.domain import CLASS_EXERCISE
from tests.support.browser import (
    PHONE,
    chromium,
    login_link,
    metric,
    require_browser,
    settle,
    wait_metric,
)
from tests.support.db import past_grace
from tests.support.server import APP_ROOT, classroom_server

pytestmark = [pytest.mark.browser, pytest.mark.server]

KEY = "e2e-dashboard-key"
TRUTHS = [1] * 14 + [0] * 6  # 14 prefer vanilla, 6 chocolate
ARTIFACTS = APP_ROOT / "test-artifacts"
PROJECTOR = {"width": 1920, "height": 1080}


def _fmt3(x: float) -> str:
    return f"{x:.3f}".replace("-", "−")


@pytest.fixture
def classroom(tmp_path):
    require_browser()
    with classroom_server(tmp_path, KEY) as running:
        yield running


def test_class_exercise_projected_with_twenty_phones(classroom, chromium):
    base, svc = classroom
    instructor = chromium.new_context(viewport=PROJECTOR)
    proj = instructor.new_page()
    proj.goto(login_link(base))  # the link printed at start: the first request this server gets
    proj.get_by_role("button", name="Start the class exercise").click(timeout=30_000)
    code = proj.locator(".ldp-join-code").inner_text(timeout=30_000).strip()
    assert re.fullmatch(r"[2-9A-HJKMNP-Z]{6}", code)
    poll = svc.polls.poll_by_code(code)
    q = svc.polls.current_question(poll.id)
    assert q.is_open and q.design_params == dict(CLASS_EXERCISE)
    # The join link as the dashboard shows it (its copy button copies exactly this).
    link = proj.locator("[data-testid='stCode']").first.inner_text().strip()
    assert link == f"{base}/join/{code}"

    proj.get_by_role("button", name="Projection mode").click()
    proj.wait_for_url(re.compile(r"projector=1"))
    settle(proj)
    assert proj.locator("[data-testid='stSidebar']").count() == 0 or \
        not proj.locator("[data-testid='stSidebar']").is_visible()
    wait_metric(proj, "Reports received", "0")

    # Twenty phones join by the link and vote.
    phones = []
    for truth in TRUTHS:
        ctx = chromium.new_context(viewport=PHONE, reduced_motion="reduce")
        page = ctx.new_page()
        page.goto(link)
        page.locator(f"button[data-answer='{truth}']").click(timeout=60_000)
        page.locator("#receipt").wait_for(timeout=60_000)
        phones.append((ctx, page))
    est = svc.results.estimate(q.id)
    assert est.n == 20

    # Hidden: the projector shows only the count.
    wait_metric(proj, "Reports received", "20")
    assert proj.locator("[data-testid='stMetric']").count() == 1
    assert proj.get_by_text("Results hidden").first.is_visible()
    proj.screenshot(path=str(ARTIFACTS / "dashboard-projector-hidden.png"))
    phone = phones[0][1]
    assert phone.get_by_text("Class results").count() == 0

    # Reveal: the projector shows the service's estimate of the stored reports.
    proj.get_by_role("button", name="Reveal results").click()
    mu = est.result.estimate.mu_hat
    wait_metric(proj, "Estimate μ̂", _fmt3(mu))
    assert metric(proj, "SD, fixed class") == _fmt3(est.result.estimate.sd_worst)
    assert metric(proj, "SD, fixed class") == _fmt3((3 / (4 * 20)) ** 0.5)
    assert metric(proj, "Reported “Vanilla”") == f"{est.counts[1]} of 20"
    assert metric(proj, "Privacy loss ε") == "1.10"
    assert proj.locator("[data-testid='stException']").count() == 0
    settle(proj)
    proj.screenshot(path=str(ARTIFACTS / "dashboard-projector.png"))
    proj.set_viewport_size({"width": PROJECTOR["width"], "height": 2000})  # the whole page
    settle(proj)
    proj.screenshot(path=str(ARTIFACTS / "dashboard-projector-full.png"))
    proj.set_viewport_size(PROJECTOR)
    proj.set_viewport_size({"width": 1280, "height": 720})  # a common projector resolution
    settle(proj)
    proj.screenshot(path=str(ARTIFACTS / "dashboard-projector-1280.png"))
    proj.set_viewport_size(PROJECTOR)

    # ...and a student's phone now shows the class result (it long-polls for changes).
    phone.get_by_text("Class results").wait_for(timeout=30_000)
    assert phone.get_by_text(f"{mu:.0%}", exact=False).first.is_visible()
    phone.screenshot(path=str(ARTIFACTS / "student-after-reveal.png"))

    # A 21st phone opens the question while it is open... (its long-polls are held, so it
    # cannot learn of the close below by itself: the tap must meet the server's refusal)
    late_ctx = chromium.new_context(viewport=PHONE, reduced_motion="reduce")
    late = late_ctx.new_page()
    held = []
    late.route(re.compile(r".*/api/poll/[^/?]+\?.*wait=.*"), lambda route: held.append(route))
    late.goto(link)
    late.locator("button[data-answer='1']").wait_for(timeout=60_000)
    # ...the instructor closes voting...
    proj.get_by_role("button", name="Close voting").click()
    deadline = time.monotonic() + 30
    while svc.polls.question(q.id).state != "closed" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert svc.polls.question(q.id).state == "closed"
    proj.get_by_text("Voting closed").first.wait_for(timeout=30_000)
    # ...and a tap later than the grace time is refused and stores nothing.
    past_grace(svc.store, q.id)
    late.locator("button[data-answer='1']").click()
    late.get_by_text("Voting closed").first.wait_for(timeout=30_000)
    assert svc.results.estimate(q.id).n == 20
    wait_metric(proj, "Reports received", "20")

    for ctx, _ in phones:
        ctx.close()
    late_ctx.close()
    instructor.close()
