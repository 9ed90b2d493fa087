"""The student's flow in real headless Chromium against a real server, in a phone viewport.

* join by link, tap the true answer, see the receipt; a refresh shows the same
  receipt; a second vote from the same browser is not counted;
* privacy: every websocket frame the page sends is recorded while 200 fresh
  browsers with the true answer "Vanilla" vote (and 200 with "Chocolate").
  No frame carries the true answer, each vote frame carries exactly the
  randomized answer, the echoed design and a submission id, and the reported
  share of "Vanilla" matches the design's 3/4 (resp. 1/4) within 4 standard
  errors: the randomization really happens on the device.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg

from tests.support.browser import ARGS, CHROMIUM, PHONE, chromium, require_browser  # noqa: F401
from tests.support.server import running_server

pytestmark = [pytest.mark.browser, pytest.mark.server]

EXERCISE = {"design": "die", "faces": 4, "truthful": 3}
VOTES_PER_SIDE = 200


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    """A server on a fresh SQLite classroom, and a PollService on the same file."""
    require_browser()
    from classroom.service import PollService
    from classroom.store import Store

    data = tmp_path_factory.mktemp("classroom")
    url = f"sqlite:///{data / 'classroom.db'}"
    env = {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_DATABASE_URL": url,
           "LDP_CLASSROOM_INSTRUCTOR_KEY": "e2e-key"}
    svc = PollService(Store(url))
    with running_server(env) as base:
        yield base, svc


def _exercise(svc, title: str):
    poll = svc.create_poll(title)
    q = svc.add_question(poll.id, "Vanilla (1) or chocolate (0)?", options=("Chocolate", "Vanilla"),
                         design_params=EXERCISE)
    svc.open_question(q.id)
    return poll, q


def test_phone_join_vote_refresh_and_no_second_vote(classroom, chromium):
    base, svc = classroom
    poll, q = _exercise(svc, "phone flow")
    ctx = chromium.new_context(viewport=PHONE)
    page = ctx.new_page()
    page.goto(f"{base}/?poll={poll.join_code}")
    page.locator("button[data-answer='1']").click(timeout=30_000)
    page.get_by_text("Answer received").wait_for(timeout=30_000)
    assert page.get_by_text("You reported:").is_visible()
    assert svc.estimate(q.id).n == 1
    # The page fits a phone: nothing wider than the viewport.
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"]

    page.reload()
    page.get_by_text("Your answer was received").wait_for(timeout=30_000)
    assert page.locator("button[data-answer='1']").count() == 0

    second = ctx.new_page()  # another tab in the same browser: same device cookie
    second.goto(f"{base}/?poll={poll.join_code}")
    second.get_by_text("Your answer was received").wait_for(timeout=30_000)
    assert svc.estimate(q.id).n == 1
    ctx.close()


async def _vote_many(base: str, code: str, answer: int, n: int, frames: list[bytes],
                     workers: int = 4) -> None:
    """``n`` votes by ``workers`` browsers; each vote is a new device (cookies cleared)."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        todo = list(range(n))

        async def worker() -> None:
            ctx = await browser.new_context(viewport=PHONE, reduced_motion="reduce")
            page = await ctx.new_page()
            page.on("websocket", lambda ws: ws.on(
                "framesent", lambda payload: frames.append(
                    payload if isinstance(payload, bytes) else payload.encode())))
            while todo:
                todo.pop()
                await ctx.clear_cookies()  # a new device: the server sets a fresh cookie
                await page.goto(f"{base}/?poll={code}")
                await page.locator(f"button[data-answer='{answer}']").click(timeout=60_000)
                await page.get_by_text("Answer received").wait_for(timeout=60_000)
            await ctx.close()

        await asyncio.gather(*(worker() for _ in range(workers)))
        await browser.close()


def _in_own_thread(coro) -> None:
    """Run a coroutine to completion on a fresh thread (the sync Playwright API may
    already run an event loop on this one)."""
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


def _vote_payloads(frames: list[bytes]) -> list[dict]:
    payloads = []
    for raw in frames:
        msg = BackMsg()
        msg.ParseFromString(raw)
        if msg.WhichOneof("type") != "rerun_script":
            continue
        for w in msg.rerun_script.widget_states.widgets:
            if w.id.endswith("__events") and w.WhichOneof("value") == "json_trigger_value":
                for event in json.loads(w.json_trigger_value):
                    if event.get("event") == "vote":
                        payloads.append(event["value"])
    return payloads


@pytest.mark.parametrize("truth, label, expected", [(1, "Vanilla", 0.75), (0, "Chocolate", 0.25)])
def test_true_answer_never_leaves_the_phone(classroom, truth, label, expected):
    base, svc = classroom
    poll, q = _exercise(svc, f"privacy {label}")
    frames: list[bytes] = []
    _in_own_thread(_vote_many(base, poll.join_code, truth, VOTES_PER_SIDE, frames))

    assert frames, "no websocket frames were recorded"
    for raw in frames:
        assert label.encode() not in raw, "a frame carries the true answer's label"
    payloads = _vote_payloads(frames)
    assert len(payloads) == VOTES_PER_SIDE
    for vote in payloads:
        assert set(vote) == {"answer", "params", "submission_id"}
        assert vote["params"] == EXERCISE
        assert vote["answer"] in (0, 1)

    est = svc.estimate(q.id)
    assert est.n == VOTES_PER_SIDE
    share = est.counts[1] / est.n
    se = math.sqrt(expected * (1 - expected) / est.n)
    assert abs(share - expected) <= 4 * se, (share, expected, se)
    # Power: had the answer gone out unrandomized, the share would be 1 or 0, far outside.
    assert abs(float(truth) - expected) > 4 * se
    sent = sum(v["answer"] for v in payloads) / len(payloads)
    assert sent == pytest.approx(share)
