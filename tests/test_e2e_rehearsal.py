"""Rehearsal mode end to end: a real server, the dashboard in Chromium, no students.

The instructor logs in with the login URL, starts the class exercise with the
dashboard's one-click button, reveals the results and, in "Rehearse with
simulated students", adds 40 simulated students whose true share of Vanilla is
60%. They arrive through the live panel's 2 s refresh; the test waits until
the dashboard shows n = 40 and checks that the μ̂ on screen is the estimate
``Results.estimate`` recomputes from the same SQLite file, formatted as the
page formats it. "Clear rehearsal" then brings n back to 0, in the database
and on screen.
"""

from __future__ import annotations

import re
import time

import pytest

from classroom.domain import CLASS_EXERCISE
from tests.support.browser import chromium, log_in, metric, require_browser, settle, wait_metric
from tests.support.server import classroom_server, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.server]

KEY = "e2e-rehearsal-key"
DESK = {"width": 1440, "height": 1000}
N = 40
SHARE = "0.60"
WAIT_MS = 60_000  # generous: other heavy tests may share the machine


@pytest.fixture
def classroom(tmp_path):
    """A server on a fresh SQLite classroom, and a PollService on the same file."""
    require_browser()
    with classroom_server(tmp_path, KEY, timeout=90) as running:
        yield running


def _open_expander(page, title: str, inside) -> None:
    """Open an expander and wait until ``inside`` shows. A rerun that lands just after the
    click can draw the expander closed again, so click again until it stays open."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    deadline = time.monotonic() + WAIT_MS / 1000
    while not inside.is_visible():
        assert time.monotonic() < deadline, f"the expander {title!r} did not open"
        page.get_by_text(title).click(timeout=WAIT_MS)
        try:
            inside.wait_for(state="visible", timeout=3_000)
        except PlaywrightTimeout:  # still closed: click again
            pass


def test_rehearse_forty_students_then_clear(classroom, chromium):
    from ui.fmt import fmt_fixed

    base, svc = classroom
    ctx = chromium.new_context(viewport=DESK, reduced_motion="reduce")
    page = ctx.new_page()
    log_in(page, base, KEY)
    page.get_by_role("button", name="Start the class exercise").click(timeout=WAIT_MS)
    code = page.locator(".ldp-join-code").inner_text(timeout=WAIT_MS).strip()
    assert re.fullmatch(r"[2-9A-HJKMNP-Z]{6}", code)
    poll = svc.polls.poll_by_code(code)
    q = svc.polls.current_question(poll.id)
    assert q.options == ("Chocolate", "Vanilla")
    assert q.design_params == dict(CLASS_EXERCISE)
    # The one-click exercise opens voting itself.
    wait_until(lambda: svc.polls.question(q.id).is_open, "voting to open")
    page.get_by_role("button", name="Reveal results").click(timeout=WAIT_MS)
    q = wait_until(lambda: (lambda x: x if x.revealed else None)(svc.polls.question(q.id)),
                    "the results to be revealed")
    assert q.is_open and q.revealed
    wait_metric(page, "Reports received", "0")

    # The rehearsal controls: 40 simulated students, true share of Vanilla 0.60.
    how_many = page.get_by_label("Simulated students")
    _open_expander(page, "Rehearse with simulated students", how_many)
    how_many.fill(str(N))
    how_many.press("Tab")
    settle(page)
    slider = page.locator("[data-testid='stSlider']").filter(
        has=page.get_by_text(re.compile(r"True share of .*Vanilla")))
    assert slider.count() == 1, "no slider labelled with the question's options[1]"
    assert slider.locator("[data-testid='stSliderThumbValue']").inner_text().strip() == SHARE
    page.get_by_role("button", name="Add simulated students").click()

    # They arrive over a few seconds; the live panel refreshes every 2 s.
    wait_metric(page, "Reports received", str(N))
    est = svc.results.estimate(q.id)
    assert est.n == N and est.n_simulated == N
    shown = wait_metric(page, "Estimate μ̂", fmt_fixed(est.result.estimate.mu_hat, 3))
    assert shown == fmt_fixed(svc.results.estimate(q.id).result.estimate.mu_hat, 3)
    assert metric(page, "SD, fixed class") == fmt_fixed((3 / (4 * N)) ** 0.5, 3) == "0.137"
    # The simulated class has exactly 60% of 40 = 24 true Vanilla fans, and says so.
    page.get_by_text("Simulated class: 24 of 40 truly “Vanilla” (60%)").wait_for(
        timeout=WAIT_MS)
    assert page.locator("[data-testid='stException']").count() == 0
    # Exports leave simulated students out unless asked for.
    assert svc.results.export_csv(q.id).strip().count("\n") == 0
    assert svc.results.export_csv(q.id, include_simulated=True).strip().count("\n") == N

    page.get_by_role("button", name="Clear rehearsal").click()
    wait_metric(page, "Reports received", "0")
    assert svc.results.estimate(q.id).n == 0
    assert page.locator("[data-testid='stException']").count() == 0
    ctx.close()
