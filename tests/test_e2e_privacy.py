"""The true answer never leaves the phone: checked on the wire, in real Chromium.

Two runs of 200 votes with a fixed truth (every student truly prefers "Vanilla",
then every one "Chocolate"), each vote from a fresh device (cookies cleared, so
the server sets a new device id). Every request the page makes is recorded:
no URL or body carries the true answer's label or anything beyond the
randomized report (answer, echoed design, submission id, question id), and
the reported share of "Vanilla" in the database is within 4 standard errors of
the design's 3/4 (resp. 1/4). Had the page sent the truth, the share would be
1 (resp. 0): far outside, which is the test's power.

A numeric question gets the same treatment: every student types the top of the
range; no request carries the typed number, the reports spread as the Piecewise
Mechanism's exact variance says (the truth would not spread at all), and their
mean is within 4 standard errors of the truth. The phone's samplers themselves
(Duchi et al.'s, the Piecewise, Laplace and Hybrid mechanisms) are checked in the page,
on many draws: unbiased, on their grid, within bounds.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading

import pytest

from classroom.domain import CLASS_EXERCISE
from tests.support.browser import ARGS, CHROMIUM, PHONE, require_browser
from tests.support.server import classroom_server

pytestmark = [pytest.mark.browser, pytest.mark.server]

EXERCISE = dict(CLASS_EXERCISE)
VOTES_PER_SIDE = 200
WORKERS = 4


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    require_browser()
    with classroom_server(tmp_path_factory.mktemp("privacy"), "privacy-e2e-instructor-key") as \
            running:
        yield running


async def _vote_many(base: str, code: str, answer: int | float, count: int,
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
                if isinstance(answer, float):  # a numeric question: type the value, send
                    await page.locator("#value").fill(repr(answer), timeout=60_000)
                    await page.locator("#send-value").click(timeout=60_000)
                else:
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
    poll = svc.polls.create_poll(f"privacy {label}")
    q = svc.running.open_question(svc.polls.add_question(poll.id, "Vanilla (1) or chocolate (0)?",
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

    est = svc.results.estimate(q.id)
    assert est.n == VOTES_PER_SIDE
    share = est.counts[1] / est.n
    se = math.sqrt(expected * (1 - expected) / est.n)
    assert abs(share - expected) <= 4 * se, (share, expected, se)
    assert abs(float(truth) - expected) > 4 * se  # power: the truth itself would fail
    sent = sum(r["answer"] for r in reports) / len(reports)
    assert sent == pytest.approx(share)


NUMERIC_VOTES = 120
SLEEP = {"design": "piecewise", "epsilon": 1.0, "lo": 0.0, "hi": 12.0}


def test_a_typed_number_never_leaves_the_phone(classroom):
    import ldp_core

    base, svc = classroom
    poll = svc.polls.create_poll("privacy numeric")
    q = svc.running.open_question(svc.polls.add_question(poll.id, "How many hours did you sleep?",
                                                         kind="numeric", options=("hours",),
                                                         design_params=SLEEP).id)
    truth = 11.75  # x = 23/24 on the [-1, 1] scale
    requests: list[tuple[str, str, str | None]] = []
    _in_own_thread(_vote_many(base, poll.join_code, truth, NUMERIC_VOTES, requests))
    pm = ldp_core.PiecewiseMechanism(1.0)
    reports = []
    for method, url, body in requests:
        assert "11.75" not in url
        if method == "POST":
            report = json.loads(body)
            assert set(report) == {"question_id", "answer", "params", "submission_id"}
            assert "11.75" not in body and report["params"] == SLEEP
            assert pm.snap(report["answer"]) == pytest.approx(report["answer"], abs=1e-9)
            reports.append(report["answer"])
        else:
            assert body is None
    assert len(reports) == NUMERIC_VOTES
    x = (2 * truth - 12) / 12
    sd = math.sqrt(pm.variance(x))
    se = sd / math.sqrt(NUMERIC_VOTES)
    sent = sum(reports) / len(reports)
    assert abs(sent - x) <= 4 * se, (sent, x, se)
    spread = math.sqrt(sum((r - sent) ** 2 for r in reports) / (len(reports) - 1))
    assert spread > sd / 2  # power: the truth itself, sent as is, would not spread
    est = svc.results.estimate(q.id).result.estimate
    assert est.n == NUMERIC_VOTES and est.mean == pytest.approx(6 + 6 * sent)


DRAWS = 40_000


def _duchi_share_fits(mech, draws: list[float]) -> bool:
    """The Hybrid Mechanism's share of Duchi values (exactly ±c_ε) within 4 SE of 1 - alpha."""
    alpha = mech.p_piecewise
    share = sum(abs(y) == mech.duchi.c_epsilon for y in draws) / len(draws)
    return abs(share - (1 - alpha)) <= 4 * math.sqrt(alpha * (1 - alpha) / len(draws))


@pytest.mark.parametrize("name", ["duchi", "piecewise", "laplace", "hybrid"])
def test_the_phone_samplers_are_unbiased_and_on_their_grid(classroom, name):
    """The page's own randomizeNumeric, run DRAWS times for two true values: the mean and
    the variance of its reports against the mechanism's exact ones. The Hybrid Mechanism's
    reports are Duchi's two values, exactly, as often as its coin says, or on the
    Piecewise part's grid. Power: the same mean test rejects the page's sampler run at a
    true value off by 10 SE (toward the middle of the range)."""
    from playwright.sync_api import sync_playwright

    import ldp_core
    from phone.present import device_scheme

    base, _ = classroom
    mech = ldp_core.numeric_mechanism(name, 1.0)
    scheme = device_scheme("numeric", {**SLEEP, "design": name})
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page()
        page.goto(f"{base}/join")

        def draw(value: float, sampler: dict = scheme) -> list[float]:
            return page.evaluate(
                "([s, v, n]) => Array.from({length: n}, () => randomizeNumeric(s, v))",
                [sampler, value, DRAWS])

        def as_reports(out: list[float]) -> list[float]:
            return [float(mech.report_of_bit(b)) if name == "duchi" else b for b in out]

        def mean_fits(reports: list[float], x: float, se: float) -> bool:
            return abs(sum(reports) / len(reports) - x) <= 4 * se

        for value in (1.5, 12.0):
            out = draw(value)
            x = (2 * value - 12) / 12
            reports = as_reports(out)
            if name == "duchi":
                assert set(out) <= {0, 1}
            elif name == "hybrid":
                assert _duchi_share_fits(mech, out), mech.p_piecewise
                # Power: the page's sampler with a wrong coin (the Piecewise part at
                # 1 - e^-ε instead of alpha) fails the same test.
                wrong_coin = {**scheme, "p_piecewise": 1 - math.exp(-1.0)}
                assert not _duchi_share_fits(mech, draw(value, wrong_coin))
                rest = [y for y in out if abs(y) != mech.duchi.c_epsilon][:2000]
                assert all(mech.piecewise.snap(y) == pytest.approx(y, abs=1e-9) for y in rest)
                assert all(abs(y) < mech.piecewise.big_c for y in out)
            else:
                low, high = mech.device_grid()
                assert low < min(out) and max(out) < high
                assert all(mech.snap(y) == pytest.approx(y, abs=1e-9) for y in out[:2000])
            se = math.sqrt(mech.variance(x) / DRAWS)
            mean = sum(reports) / DRAWS
            assert mean_fits(reports, x, se), (name, value, mean, x, se)
            # The range [0, 12] is [-1, 1] on the mechanism's scale: 6 units per unit of x.
            off = value + (1 if value < 6 else -1) * 6 * 10 * se
            assert not mean_fits(as_reports(draw(off)), x, se), (name, value, off)
            # The spread too: the sample variance within 4 of its SEs of the exact one.
            var = sum((r - mean) ** 2 for r in reports) / (DRAWS - 1)
            m4 = sum((r - mean) ** 4 for r in reports) / DRAWS
            se_var = math.sqrt(max(m4 - var ** 2, 0.0) / DRAWS)
            assert abs(var - float(mech.variance(x))) <= 4 * se_var + 1e-12, (name, var)
        browser.close()
