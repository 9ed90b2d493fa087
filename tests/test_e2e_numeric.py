"""A numeric question end to end: a real server, the instructor's dashboard, eight phones.

The instructor logs in with the login URL, creates an empty poll, adds "How many
hours did you sleep last night?" through the form (the recommended mechanism, the
Hybrid Mechanism at ε = 1.1, is preselected) with voting open. Eight browser contexts
(eight devices) open the join link, type their true number and send; each page
randomizes it. Then the
dashboard counts 8 reports while the results are hidden, and after "Reveal
results" shows the mean the service computes from the reports in the database,
and a phone shows the class average. Every step waits for the state it asserts.
"""

from __future__ import annotations

import pytest

from tests.support.browser import PHONE, chromium, login_link, require_browser, wait_metric
from tests.support.server import classroom_server, wait_until
from ui.fmt import fmt_value

pytestmark = [pytest.mark.browser, pytest.mark.server]

KEY = "e2e-numeric-instructor-key"
TRUTHS = [6.5, 7.0, 7.5, 8.0, 5.0, 9.0, 6.0, 7.25]
WAIT_MS = 60_000


@pytest.fixture
def classroom(tmp_path):
    require_browser()
    with classroom_server(tmp_path, KEY) as running:
        yield running


def test_add_a_numeric_question_vote_from_phones_and_see_the_mean(classroom, chromium):
    base, svc = classroom
    desk = chromium.new_context(viewport={"width": 1440, "height": 1000}).new_page()
    desk.goto(login_link(base))
    desk.get_by_text("Or create an empty poll and add your own questions").click(
        timeout=WAIT_MS)
    desk.get_by_role("button", name="Create poll").click()
    poll = wait_until(lambda: (svc.polls.list_polls() or [None])[0], "the new poll")
    desk.get_by_text("A number (mean of a range)").click(timeout=WAIT_MS)
    desk.get_by_label("Unit (optional)").wait_for(timeout=WAIT_MS)
    desk.get_by_text("Open voting right away").click()
    desk.get_by_role("button", name="Add question", exact=True).click()
    q = wait_until(lambda: svc.polls.current_question(poll.id), "the new question")
    q = wait_until(lambda: svc.polls.question(q.id) if svc.polls.question(q.id).is_open else None,
                   "voting to open")
    assert (q.kind, q.unit) == ("numeric", "hours")
    assert q.design_params == {"design": "hybrid", "epsilon": 1.1, "lo": 0.0, "hi": 12.0}

    for value in TRUTHS:
        ctx = chromium.new_context(viewport=PHONE, reduced_motion="reduce")
        phone = ctx.new_page()
        phone.goto(f"{base}/join/{poll.join_code}")
        phone.locator("#value").fill(str(value), timeout=WAIT_MS)
        phone.locator("#send-value").click()
        phone.locator("#receipt").wait_for(timeout=WAIT_MS)
        ctx.close()

    wait_metric(desk, "Reports received", "8")
    assert svc.results.estimate(q.id).n == 8
    watcher = chromium.new_context(viewport=PHONE).new_page()
    watcher.goto(f"{base}/join/{poll.join_code}")
    watcher.locator("#value").wait_for(timeout=WAIT_MS)
    desk.get_by_role("button", name="Reveal results").first.click()
    mean = svc.results.estimate(q.id).result.estimate.mean
    # The dashboard writes every number of the question with 2 decimals on [0, 12].
    wait_metric(desk, "Estimated mean", fmt_value(mean, "hours", 2))
    watcher.get_by_text("Estimated class average").wait_for(timeout=WAIT_MS)
    # The phones write it as the projector does.
    assert fmt_value(mean, "hours", 2) in watcher.locator("#main").inner_text()
    # Eight reports of the Hybrid Mechanism: each is Duchi et al.'s bit, one of two values
    # far outside [0, 12], or a Piecewise report on its grid within 6 ± 6 C hours.
    hm = q.design.mechanism
    c, big_c = hm.duchi.c_epsilon, hm.piecewise.big_c
    for v, _ in svc.results.estimate(q.id).result.reports:
        y = (v - 6) / 6
        assert round(abs(y), 9) == round(c, 9) or (
            abs(y) < big_c and hm.piecewise.snap(y) == pytest.approx(y, abs=1e-9)), v
