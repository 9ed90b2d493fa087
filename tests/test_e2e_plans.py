"""The CS208 lecture from its lesson plan, end to end in headless Chromium.

The instructor logs in, starts "The local model (CS208)" with one click beside the class
exercise, and opens its first question; a phone (390×844) joins by the join link shown
on the dashboard and sees that question under the plan's budget. A second question of the plan
opened from the dashboard reaches the same phone without a reload.
Each step waits for the state it asserts (the page or the database), never a fixed time.
"""

from __future__ import annotations

import re

import pytest

from classroom.plans import CS208_PLAN, shipped_plan
from tests.support.browser import chromium, log_in, require_browser, settle
from tests.support.db import count_reports
from tests.support.server import classroom_server, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.server]

KEY = "e2e-plans-instructor-key"
WAIT_MS = 30_000
PHONE_390 = {"width": 390, "height": 844}


@pytest.fixture
def classroom(tmp_path):
    require_browser()
    with classroom_server(tmp_path, KEY) as running:
        yield running


def test_the_cs208_lecture_starts_from_its_plan_and_reaches_a_phone(classroom, chromium):
    base, svc = classroom
    plan = shipped_plan(CS208_PLAN)
    desk = chromium.new_context(viewport={"width": 1280, "height": 720}).new_page()
    log_in(desk, base, KEY)
    settle(desk)
    desk.get_by_role("button", name="Start the lecture").click(timeout=WAIT_MS)
    desk.get_by_text(re.compile(r"Poll [2-9A-HJKMNP-Z]{6} is ready")).wait_for(timeout=WAIT_MS)
    poll = wait_until(lambda: next(iter(svc.polls.list_polls()), None), "the lecture's poll")
    questions = svc.polls.questions(poll.id)
    assert [q.text for q in questions] == [q.text for q in plan.questions]
    assert [q.design_json for q in questions] == [q.design_json for q in plan.questions]
    assert poll.epsilon_budget == plan.budget and all(q.state == "draft" for q in questions)
    code = desk.locator(".ldp-join-code").inner_text(timeout=WAIT_MS).strip()
    assert code == poll.join_code

    # Q1, the class exercise, opened from the desk.
    settle(desk)
    desk.get_by_role("button", name="Open voting").first.click()
    wait_until(lambda: svc.polls.question(questions[0].id).is_open, "Q1 open")

    phone = chromium.new_context(viewport=PHONE_390, reduced_motion="reduce").new_page()
    phone.goto(f"{base}/join/{code}")
    area = phone.locator("#question-area")
    area.get_by_text("Vanilla (1) or chocolate (0)?").wait_for(timeout=WAIT_MS)
    assert phone.locator("button[data-answer]").all_inner_texts() == ["Vanilla", "Chocolate"]
    assert "Privacy budget of this poll: ε = 7.70" in area.inner_text()  # the plan's
    phone.locator("button[data-answer='1']").click()
    phone.locator("#receipt").wait_for(timeout=WAIT_MS)
    wait_until(lambda: count_reports(svc.store, questions[0].id) == 1, "Q1's report stored")

    # Q2 (two coins) opened from the desk: the phone follows without a reload.
    desk.get_by_role("combobox", name=re.compile("Question")).first.click()
    desk.get_by_role("option", name=re.compile(r"^Q2: ")).click()
    settle(desk)
    desk.get_by_role("button", name="Open voting").first.click()
    wait_until(lambda: svc.polls.question(questions[1].id).is_open, "Q2 open")
    area.get_by_text("Again, now with two coins.").wait_for(timeout=WAIT_MS)
    phone.locator("button[data-answer='0']").click()
    phone.locator("#receipt").wait_for(timeout=WAIT_MS)
    wait_until(lambda: count_reports(svc.store, questions[1].id) == 1, "Q2's report stored")
    assert svc.polls.budget(poll.id).committed == pytest.approx(2 * questions[0].epsilon)
