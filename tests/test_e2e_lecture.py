"""A whole lecture in Chromium, from the shipped plan, paced from the keyboard alone.

The instructor logs in and starts "The local model (CS208)" with one click; 30 phones
(390×844, each its own browser context, so its own device cookie) join by link. From
then on the projector is driven by keys only, as a presentation clicker drives it:

* Q1 (the class exercise): PageDown opens it; 25 phones answer; 5 more tap while the
  instructor presses N (Next): their reports reach the server before Next but their
  answers come back after it. Each of those phones must end on Q2, with its report
  stored exactly once.
* Q2 (two coins) runs on its countdown (the plan's 60 s, set to 12 s here so the test
  waits less): the server closes it at zero with no key pressed; PageDown reveals it,
  PageDown again moves on.
* Q3 to Q6 (Warner's spinner, Sales, the occupation by unary encoding, hours of sleep):
  PageDown closes, reveals and moves on; on the last question PageDown does nothing.

After each question the database is checked: 30 reports, 30 distinct submissions, the
estimate's n, the state. No "ignored input" banner appears and no refused widget state is
logged, from login to the end.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from tests.support.browser import (
    GUARD_BANNER,
    GUARD_LOG_LINE,
    chromium,
    log_in,
    require_browser,
    settle,
)
from tests.support.db import count_reports, submission_ids
from tests.support.server import classroom_server, server_log, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.server]

KEY = "lecture-e2e-instructor-key"
PHONES = 30
IN_FLIGHT = 5
PHONE = {"width": 390, "height": 844}
WAIT_MS = 90_000
WAIT_S = 120.0


@pytest.fixture
def classroom(tmp_path):
    require_browser()
    with classroom_server(tmp_path, KEY, timeout=120) as running:
        yield running


class Lecture:
    def __init__(self, base, svc, projector, phones):
        self.base, self.svc, self.projector, self.phones = base, svc, projector, phones

    def clean(self, step: str) -> None:
        assert self.projector.get_by_text(GUARD_BANNER).count() == 0, f"banner after {step}"
        log = server_log(self.base)
        assert GUARD_LOG_LINE not in log, f"a widget state was refused by {step}"
        assert "Traceback" not in log, f"a traceback in the server log by {step}"

    def key(self, key: str, step: str) -> None:
        settle(self.projector, WAIT_MS)
        self.projector.keyboard.press(key)
        self.clean(step)

    def state(self, q) -> tuple[str, bool]:
        now = self.svc.polls.question(q.id)
        return now.state, now.revealed

    def wait_state(self, q, want: tuple[str, bool], step: str) -> None:
        self.until(lambda: self.state(q) == want, step)

    def shown(self, phone, q) -> None:
        """Wait until ``phone`` shows ``q`` ready to answer."""
        area = phone.locator("#question-area")
        area.get_by_text(q.text[:40]).first.wait_for(timeout=WAIT_MS)
        answer = ("#send-value" if q.kind == "numeric" else "button[data-answer]")
        phone.locator(answer).first.wait_for(timeout=WAIT_MS)

    def answer(self, i: int, q) -> None:
        phone = self.phones[i]
        self.shown(phone, q)
        if q.kind == "numeric":
            phone.locator("#value").fill(str(4 + i % 7))
            phone.locator("#send-value").click()
        elif q.kind == "categorical":
            phone.locator(f"button[data-answer='{i % len(q.options)}']").click()
        else:
            phone.locator(f"button[data-answer='{1 if i % 3 else 0}']").click()

    def until(self, check, what: str) -> None:
        """Poll ``check()`` while Playwright runs (a held request's handler runs only
        while the test is inside a Playwright call)."""
        deadline = time.monotonic() + WAIT_S
        while not check():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            self.projector.wait_for_timeout(200)

    def stored(self, q, n: int) -> None:
        self.until(lambda: count_reports(self.svc.store, q.id) >= n,
                   f"{n} reports of Q{q.position}")

    def check(self, q, state: tuple[str, bool]) -> None:
        """The database after a question: every phone's report once, nothing more."""
        assert count_reports(self.svc.store, q.id) == PHONES
        assert len(submission_ids(self.svc.store, q.id)) == PHONES
        assert self.svc.results.estimate(q.id).n == PHONES
        assert self.state(q) == state


def test_a_whole_lecture_from_the_shipped_plan_by_keyboard(classroom, chromium):  # noqa: C901 - one scenario read as a story, step by step
    base, svc = classroom
    desk_ctx = chromium.new_context(viewport={"width": 1280, "height": 720},
                                    reduced_motion="reduce")
    projector = desk_ctx.new_page()
    log_in(projector, base, KEY)
    settle(projector, WAIT_MS)
    projector.get_by_role("button", name="Start the lecture").click(timeout=WAIT_MS)
    poll = wait_until(lambda: next(iter(svc.polls.list_polls()), None), "the lecture's poll")
    questions = svc.polls.questions(poll.id)
    assert [q.kind for q in questions] == ["binary"] * 4 + ["categorical", "numeric"]
    assert questions[1].countdown_s == 60
    svc.running.set_countdown(questions[1].id, 12)  # the plan's 60 s, shortened for the test
    projector.get_by_text(re.compile(r"Poll [2-9A-HJKMNP-Z]{6} is ready")).wait_for(
        timeout=WAIT_MS)
    settle(projector, WAIT_MS)

    phones = []
    for _ in range(PHONES):
        phone = chromium.new_context(viewport=PHONE, reduced_motion="reduce").new_page()
        phone.goto(f"{base}/join/{poll.join_code}")
        phones.append(phone)

    # Projection mode; from here on, keys only.
    projector.goto(f"{base}/dashboard?projector=1&pid={poll.id}&qid={questions[0].id}")
    projector.locator(".ldp-question").first.wait_for(timeout=WAIT_MS)
    settle(projector, WAIT_MS)
    projector.wait_for_function("() => !!window.__ldpPacing && window.__ldpPacing.attached",
                                timeout=WAIT_MS)
    lecture = Lecture(base, svc, projector, phones)
    lecture.clean("opening projection mode")
    q1, q2, q3, q4, q5, q6 = questions

    # -- Q1: open, 25 answers, 5 in flight across a Next -------------------------------
    lecture.key("PageDown", "PageDown on Q1")
    lecture.wait_state(q1, ("open", False), "PageDown opening Q1")
    for i in range(PHONES - IN_FLIGHT):
        lecture.answer(i, q1)
    lecture.stored(q1, PHONES - IN_FLIGHT)

    held: list = []
    sent_ids: list[str] = []

    def hold(route):
        """Let the report reach the server; keep its answer from the phone for now."""
        sent_ids.append(json.loads(route.request.post_data or "{}").get("submission_id"))
        held.append((route, route.fetch()))

    late = phones[PHONES - IN_FLIGHT:]
    for phone in late:
        phone.route(f"**/api/poll/{poll.join_code}/report", hold)
    for i in range(PHONES - IN_FLIGHT, PHONES):
        lecture.answer(i, q1)
    lecture.stored(q1, PHONES)
    # Every late phone has sent; none has its answer yet.
    lecture.until(lambda: len(held) == IN_FLIGHT, "the late reports held")
    assert all(sent_ids)

    lecture.key("n", "N (Next) with reports in flight")
    lecture.wait_state(q2, ("open", False), "N opening Q2")
    assert lecture.state(q1)[0] == "closed"
    for route, response in held:
        route.fulfill(response=response)
    for phone in late:
        phone.unroute(f"**/api/poll/{poll.join_code}/report")
        lecture.shown(phone, q2)  # the new question, not the old one
    lecture.check(q1, ("closed", False))
    stored_ids = submission_ids(svc.store, q1.id)
    assert set(sent_ids) <= stored_ids  # each in-flight report stored, once (30 distinct)

    # -- Q2: answers, then the countdown closes it --------------------------------------
    for i in range(PHONES):
        lecture.answer(i, q2)
    lecture.stored(q2, PHONES)
    clock = projector.locator(".ldp-pacing-clock")
    assert re.fullmatch(r"0:(0\d|1[0-2])", clock.inner_text(timeout=WAIT_MS).strip())
    lecture.wait_state(q2, ("closed", False), "the countdown closing Q2")
    assert svc.polls.question(q2.id).timed_out
    projector.get_by_role("button", name="Reopen voting").wait_for(timeout=WAIT_MS)
    lecture.clean("the countdown's close")
    lecture.check(q2, ("closed", False))
    lecture.key("PageDown", "PageDown revealing Q2")
    lecture.wait_state(q2, ("closed", True), "PageDown revealing Q2")
    phones[0].get_by_text("Class results").first.wait_for(timeout=WAIT_MS)
    lecture.key("PageDown", "PageDown to Q3")
    lecture.wait_state(q3, ("open", False), "PageDown opening Q3")

    # -- Q3 to Q6: answers, then PageDown closes, reveals and moves on ------------------
    for q, after in ((q3, q4), (q4, q5), (q5, q6), (q6, None)):
        for i in range(PHONES):
            lecture.answer(i, q)
        lecture.stored(q, PHONES)
        lecture.key("PageDown", f"PageDown closing Q{q.position}")
        lecture.wait_state(q, ("closed", False), f"PageDown closing Q{q.position}")
        lecture.check(q, ("closed", False))
        lecture.key("PageDown", f"PageDown revealing Q{q.position}")
        lecture.wait_state(q, ("closed", True), f"PageDown revealing Q{q.position}")
        if after is not None:
            lecture.key("PageDown", f"PageDown to Q{after.position}")
            lecture.wait_state(after, ("open", False), f"PageDown opening Q{after.position}")
            lecture.check(q, ("closed", True))

    # The last question: PageDown has nothing left to do, and says so.
    lecture.key("PageDown", "PageDown after the last question")
    projector.get_by_text("This was the last question of the poll.").first.wait_for(
        timeout=WAIT_MS)
    lecture.check(q6, ("closed", True))
    assert [q.state for q in svc.polls.questions(poll.id)] == ["closed"] * 6
    # Every student answered all six once: the plan's budget covers it.
    assert svc.polls.budget(poll.id).committed == pytest.approx(sum(q.epsilon for q in questions))
    lecture.clean("the end of the lecture")
    for phone in phones:
        phone.context.close()
    desk_ctx.close()
