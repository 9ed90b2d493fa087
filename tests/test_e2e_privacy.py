"""The true answer never leaves the phone: checked on the wire, in real Chromium.

Two runs of 200 votes with a fixed truth (every student truly prefers "Vanilla",
then every one "Chocolate"), each vote from a fresh device (cookies cleared, so
the server sets a new device id). Every request the page makes is recorded:
no URL or body carries the true answer's label or anything beyond the
randomized report (answer, echoed design, submission id, question id), and
the reported share of "Vanilla" in the database is within 4 standard errors of
the design's 3/4 (resp. 1/4). Had the page sent the truth, the share would be
1 (resp. 0): far outside, which is the test's power.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading

import pytest

from classroom.domain import CLASS_EXERCISE
from tests.support.browser import ARGS, CHROMIUM, PHONE, require_browser
from tests.support.server import running_server

pytestmark = [pytest.mark.browser, pytest.mark.server]

EXERCISE = dict(CLASS_EXERCISE)
VOTES_PER_SIDE = 200
WORKERS = 4


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    require_browser()
    from classroom.service import PollService
    from classroom.store import Store

    data = tmp_path_factory.mktemp("privacy")
    url = f"sqlite:///{data / 'classroom.db'}"
    env = {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_DATABASE_URL": url,
           "LDP_CLASSROOM_INSTRUCTOR_KEY": "privacy-e2e-instructor-key"}
    store = Store(url)
    with running_server(env) as base:
        yield base, PollService(store)
    store.close()


async def _vote_many(base: str, code: str, answer: int, count: int,
                     requests: list[tuple[str, str, str | None]]) -> None:
    from playwright.async_api import async_playwright

    todo = list(range(count))
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)

        async def worker() -> None:
            ctx = await browser.new_context(viewport=PHONE, reduced_motion="reduce")
            page = await ctx.new_page()
            page.on("request", lambda r: requests.append((r.method, r.url, r.post_data)))
            while todo:
                todo.pop()
                await ctx.clear_cookies()  # a new device: the server sets a fresh cookie
                await page.goto(f"{base}/join/{code}")
                await page.locator(f"button[data-answer='{answer}']").click(timeout=60_000)
                await page.locator("#receipt").wait_for(timeout=60_000)
            await ctx.close()

        await asyncio.gather(*(worker() for _ in range(WORKERS)))
        await browser.close()


def _in_own_thread(coro) -> None:
    """Run a coroutine on a fresh thread (pytest-playwright-free async Playwright)."""
    errors: list[BaseException] = []

    def target() -> None:
        try:
            asyncio.run(coro)
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            errors.append(exc)

    worker = threading.Thread(target=target)
    worker.start()
    worker.join()
    if errors:
        raise errors[0]


@pytest.mark.parametrize("truth, label, expected", [(1, "Vanilla", 0.75), (0, "Chocolate", 0.25)])
def test_true_answer_never_leaves_the_phone(classroom, truth, label, expected):
    base, svc = classroom
    poll = svc.create_poll(f"privacy {label}")
    q = svc.open_question(svc.add_question(poll.id, "Vanilla (1) or chocolate (0)?",
                                           options=("Chocolate", "Vanilla"),
                                           design_params=EXERCISE).id)
    requests: list[tuple[str, str, str | None]] = []
    _in_own_thread(_vote_many(base, poll.join_code, truth, VOTES_PER_SIDE, requests))

    assert requests, "no request was recorded"
    reports = []
    for method, url, body in requests:
        assert label.lower() not in url.lower()
        assert "truth" not in url.lower()
        if method == "POST":
            assert url.endswith(f"/api/poll/{poll.join_code}/report")
            report = json.loads(body)
            assert set(report) == {"question_id", "answer", "params", "submission_id"}
            assert report["params"] == EXERCISE and report["answer"] in (0, 1)
            assert label.lower() not in body.lower()
            reports.append(report)
        else:
            assert body is None
    assert len(reports) == VOTES_PER_SIDE

    est = svc.estimate(q.id)
    assert est.n == VOTES_PER_SIDE
    share = est.counts[1] / est.n
    se = math.sqrt(expected * (1 - expected) / est.n)
    assert abs(share - expected) <= 4 * se, (share, expected, se)
    assert abs(float(truth) - expected) > 4 * se  # power: the truth itself would fail
    sent = sum(r["answer"] for r in reports) / len(reports)
    assert sent == pytest.approx(share)
