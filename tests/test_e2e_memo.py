"""A question of a series on the phone, in real headless Chromium: the phone makes its
memo once (crypto.getRandomValues) and keeps it in its own localStorage across reloads
and rounds, sends only a fresh randomization of it, and says what the series costs.
Each step waits for the state it asserts."""

from __future__ import annotations

import json
import math
import time

import pytest

from tests.support.browser import chromium, require_browser
from tests.support.db import count_reports
from tests.support.server import classroom_server

pytestmark = [pytest.mark.browser, pytest.mark.server]

MEMO = {"design": "memo", "f": 0.5, "p": 0.25, "q": 0.75, "series": "weekly-sleep"}
KEY = "ldp-memo:weekly-sleep:0.5:1"
WAIT_MS = 30_000


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    require_browser()
    with classroom_server(tmp_path_factory.mktemp("memo"), "memo-e2e-instructor-key") as running:
        yield running


def _wait_rows(svc, q, want: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while count_reports(svc.store, q.id) != want and time.monotonic() < deadline:
        time.sleep(0.1)
    assert count_reports(svc.store, q.id) == want


def test_the_memo_is_kept_across_reloads_and_rounds_and_never_sent(classroom, chromium):
    base, svc = classroom
    poll = svc.polls.create_poll("A course")
    poll = svc.polls.set_budget(poll.id, math.log(3))
    q = svc.polls.add_question(poll.id, "Did you sleep 7 hours last night?",
                               options=("No", "Yes"), design_params=dict(MEMO))
    q = svc.running.open_question(q.id)
    ctx = chromium.new_context(viewport={"width": 390, "height": 844}, reduced_motion="reduce")
    page = ctx.new_page()
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.post_data or "") if r.method == "POST" else None)
    page.goto(f"{base}/join/{poll.join_code}")
    page.locator("button[data-answer='1']").click(timeout=WAIT_MS)
    page.locator("#receipt").wait_for(timeout=WAIT_MS)
    _wait_rows(svc, q, 1)
    memo = page.evaluate(f"localStorage.getItem('{KEY}')")
    assert memo in ("0", "1")
    assert page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('ldp-memo:'))") \
        == [KEY]
    page.get_by_text("The kept answer never leaves your phone", exact=False).wait_for(
        timeout=WAIT_MS)
    screen = page.locator("body").inner_text()
    assert "weekly-sleep" in screen and "costs again" in screen and "ε∞ = 1.10" in screen

    page.reload()
    page.locator("#receipt").wait_for(timeout=WAIT_MS)
    assert page.evaluate(f"localStorage.getItem('{KEY}')") == memo

    for week in (2, 3):  # the same question asked again: a new round, the same memo
        svc.running.new_round(q.id, open_now=True)
        page.locator("button[data-answer='1']").click(timeout=WAIT_MS)
        page.locator("#receipt").wait_for(timeout=WAIT_MS)
        _wait_rows(svc, q, week)
        assert page.evaluate(f"localStorage.getItem('{KEY}')") == memo
    assert page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('ldp-memo:'))") \
        == [KEY]
    reports = [json.loads(body) for body in sent if '"question_id"' in body]
    assert len(reports) >= 3
    for body in reports:
        assert "ldp-memo" not in json.dumps(body)  # the memo's key and value stay home
        report = body.get("report", body)
        assert set(report) <= {"question_id", "answer", "params", "submission_id", "round",
                               "code"}, report
        assert str(report["answer"]) in ("0", "1")
    # the budget counts the series once: three weeks cost at most ln 3
    assert svc.polls.budget(poll.id).committed <= math.log(3) * (1 + 1e-9)
    ctx.close()
