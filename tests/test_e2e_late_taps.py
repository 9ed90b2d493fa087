"""A tap is a vote, end to end: reports racing the instructor's Next, and the countdown's end.

30 phones on one poll: 10 in headless Chromium (390×844), 3 of them throttled through the
Chrome DevTools Protocol (1.6 Mbit/s each way, 150 ms latency), and 20 plain HTTP phones
(``tests/support/phone_client.py``), 15 of which answered early. The 10 browser phones tap
in the last 500 ms before Next: each page schedules its own tap at a shared wall-clock
time, so the taps are not serialised by the test's calls. One tap's report is held until
Next has been written and then let through (on its way at Next, inside the grace time);
one is held until the grace time is over (``past_grace``) and then let through.

Asserted, each by waiting for the state itself (the database, the pages), never a fixed
sleep: every report that reached the server within the grace time is stored once; every
phone, browser or HTTP, ends on the new question; the phone whose report arrived after the
grace time says so there, the others say when theirs was received, and each browser phone's
budget line counts exactly what it spent. The same race in a rehearsal poll, and against a
countdown's end.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time

import pytest

from classroom.domain import CLASS_EXERCISE
from tests.support.browser import chromium, require_browser
from tests.support.db import count_reports, past_grace, submission_ids
from tests.support.phone_client import PhoneStudent, new_session
from tests.support.server import classroom_server, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.server]

__all__ = ["chromium"]

EXERCISE = dict(CLASS_EXERCISE)
PHONE_390 = {"width": 390, "height": 844}
WAIT_MS = 30_000
#: 1.6 Mbit/s each way and 150 ms latency, in DevTools' units (bytes/s, ms).
THROTTLED = {"offline": False, "latency": 150, "downloadThroughput": 1_600_000 / 8,
             "uploadThroughput": 1_600_000 / 8}
BROWSERS = 10
THROTTLED_AT = (5, 6, 7)  # these browser phones are throttled
HELD_IN_GRACE = 8  # this one's report waits until Next is written, then goes
HELD_PAST_GRACE = 9  # this one's report waits until the grace time is over
HTTP_PHONES = 20
HTTP_EARLY = 15  # of the HTTP phones, these answered long before Next
BUDGET = 3.0
LN3 = math.log(3)


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    require_browser()
    with classroom_server(tmp_path_factory.mktemp("late-taps"), "late-taps-instructor-key") \
            as running:
        yield running


class HttpPhones:
    """The plain HTTP phones, on an event loop of their own (a thread): they join, some
    answer, and all follow the poll's long-poll until they see ``until`` question id."""

    def __init__(self, base: str, code: str) -> None:
        self.base, self.code = base, code
        self.joined = threading.Event()
        self.seen: dict[int, int] = {}  # phone -> the last question id it saw
        self.error: BaseException | None = None
        self.until: int | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self, until: int) -> None:
        self.until = until
        self._thread.start()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the HTTP phones did not all see the next question"
        if self.error is not None:
            raise self.error

    def _run(self) -> None:
        try:
            asyncio.run(self._class())
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            self.error = exc
            self.joined.set()

    async def _class(self) -> None:
        async with new_session(timeout=60) as http:
            phones = [PhoneStudent(self.base, self.code, session=http, timeout=60)
                      for _ in range(HTTP_PHONES)]
            for resp in await asyncio.gather(*(p.join() for p in phones)):
                assert resp.status == 200, resp.body[:300]
            for p in phones[:HTTP_EARLY]:
                resp = await p.vote(1)
                assert resp.status == 200, resp.body[:300]
            self.joined.set()
            await asyncio.gather(*(self._follow(i, p) for i, p in enumerate(phones)))

    async def _follow(self, i: int, p: PhoneStudent) -> None:
        deadline = time.monotonic() + 60
        while p.question is None or p.question["id"] != self.until:
            assert time.monotonic() < deadline, f"HTTP phone {i} never saw the next question"
            await p.poll(wait=20)
        self.seen[i] = p.question["id"]


def _open_phone(chromium, base: str, code: str, throttled: bool):
    ctx = chromium.new_context(viewport=PHONE_390, reduced_motion="reduce")
    page = ctx.new_page()
    if throttled:
        cdp = ctx.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.emulateNetworkConditions", THROTTLED)
    page.goto(f"{base}/join/{code}")
    return ctx, page


def _schedule_tap(page, at_ms: float) -> None:
    """The page taps its first answer button at wall-clock ``at_ms`` (ms since 1970), and
    notes when it did and whether the question was open on its screen then."""
    page.evaluate("""(at) => setTimeout(() => {
        const b = document.querySelector("button[data-answer='1']");
        window.__tap = { at: Date.now(), open: !!b && !b.disabled };
        if (b) b.click();
    }, Math.max(0, at - Date.now()))""", at_ms)


def _holder(keep: list):
    def hold(route) -> None:
        keep.append(route)
    return hold


def _pump(page, check, what: str, timeout: float = 30.0):
    """Wait for ``check()`` while Playwright runs the route handlers (a page's short waits
    let it deliver held requests' events); never a fixed sleep of the test's own."""
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"never happened: {what}"
        page.wait_for_timeout(50)
    return found


def _race_next(classroom, chromium, *, rehearsal: bool) -> None:
    base, svc = classroom
    poll = svc.polls.create_poll("late taps", rehearsal=rehearsal)
    q1, q2 = (svc.polls.add_question(poll.id, text, options=("No", "Yes"), design_params=EXERCISE)
              for text in ("Did you sleep 7 hours?", "Tea or coffee?"))
    svc.polls.set_budget(poll.id, BUDGET)
    svc.running.open_question(q1.id)

    http = HttpPhones(base, poll.join_code)
    http.start(until=q2.id)
    assert http.joined.wait(60), "the HTTP phones did not join"

    phones = [_open_phone(chromium, base, poll.join_code, i in THROTTLED_AT)
              for i in range(BROWSERS)]
    held: dict[int, list] = {HELD_IN_GRACE: [], HELD_PAST_GRACE: []}
    for i, keep in held.items():
        phones[i][1].route("**/api/poll/*/report", _holder(keep))
    states: list = []  # the long-poll answers the phone held in grace receives
    phones[HELD_IN_GRACE][1].on(
        "response", lambda r: states.append(r) if "?wait=" in r.url and r.status == 200 else None)
    for _, page in phones:
        page.locator("button[data-answer='1']").wait_for(timeout=WAIT_MS)
    first = phones[0][1]

    # The taps: 40 ms apart, the throttled ones last; Next 450 ms after the first tap.
    start_ms = time.time() * 1000 + 1500
    for i, (_, page) in enumerate(phones):
        _schedule_tap(page, start_ms + 40 * i)
    next_at = start_ms + 450
    while time.time() * 1000 < next_at:  # the instructor's finger: no test step is timed
        first.wait_for_timeout(max(1, min(50, next_at - time.time() * 1000)))
    svc.running.next_question(q1.id)
    next_done = time.time() * 1000
    taps = [page.evaluate("window.__tap") for _, page in phones]
    assert all(t is not None and t["open"] for t in taps), taps
    assert all(next_done - 600 < t["at"] < next_done for t in taps), (next_done, taps)

    # The report held at Next goes once its phone knows of Q2: inside the grace time, it is
    # stored, and the phone says so on Q2.
    _pump(first, lambda: held[HELD_IN_GRACE] and held[HELD_PAST_GRACE], "the held reports")
    _pump(first, lambda: any(r.json()["question"]["id"] == q2.id for r in states),
          "the phone whose report is held learning of Q2")
    held[HELD_IN_GRACE][0].continue_()
    in_grace = HTTP_EARLY + BROWSERS - 1
    _pump(first, lambda: count_reports(svc.store, q1.id) == in_grace,
          f"{in_grace} reports of Q1 stored")
    # The other one arrives after the grace time: refused, and its phone says so.
    past_grace(svc.store, q1.id)
    held[HELD_PAST_GRACE][0].continue_()

    for i, (_, page) in enumerate(phones):
        page.locator("#question").get_by_text("Tea or coffee?").wait_for(timeout=WAIT_MS)
        page.locator("button[data-answer='1']").wait_for(timeout=WAIT_MS)
        # Drawn with the question: a word on the previous answer when its send ended after
        # Next (a phone whose receipt came before Next showed that receipt on Q1).
        notice = page.locator("#notice")
        said = notice.inner_text() if notice.count() else None
        budget = page.locator("#budget").inner_text()
        if i == HELD_PAST_GRACE:
            assert said == ("Your answer to the previous question arrived after it closed "
                            "and was not counted."), said
            assert "You have spent 0.00;" in budget, budget
        else:
            assert i != HELD_IN_GRACE or said is not None, i
            assert said is None or said.startswith(
                "Your answer to the previous question was received at"), (i, said)
            assert f"You have spent {math.ceil(LN3 * 100) / 100:.2f};" in budget, (i, budget)
    http.join(60)
    assert len(http.seen) == HTTP_PHONES and set(http.seen.values()) == {q2.id}
    assert count_reports(svc.store, q1.id) == in_grace  # each once, none after the grace
    assert len(submission_ids(svc.store, q1.id)) == in_grace
    assert count_reports(svc.store, q2.id) == 0
    assert svc.results.estimate(q1.id).n == in_grace
    for ctx, _ in phones:
        ctx.close()


def test_taps_in_the_last_500_ms_before_next_are_votes(classroom, chromium):
    _race_next(classroom, chromium, rehearsal=False)


def test_the_same_race_in_a_rehearsal(classroom, chromium):
    _race_next(classroom, chromium, rehearsal=True)


def test_taps_in_the_last_500_ms_of_a_countdown_are_votes(classroom, chromium):
    """The countdown's end is a hard deadline the phones count to by the server's time:
    taps before it (two phones throttled, one whose report is held until the deadline has
    passed) are stored; a phone whose zero has come takes no tap and says time is up."""
    base, svc = classroom
    poll = svc.polls.create_poll("countdown taps")
    q = svc.polls.add_question(poll.id, "Did you sleep 7 hours?", options=("No", "Yes"),
                               design_params=EXERCISE, countdown_s=10)
    phones = [_open_phone(chromium, base, poll.join_code, i < 2) for i in range(4)]
    held: list = []
    phones[2][1].route("**/api/poll/*/report", _holder(held))
    q = svc.running.open_question(q.id)
    for _, page in phones:
        page.locator("button[data-answer='1']").wait_for(timeout=WAIT_MS)
    deadline_ms = q.closes_at.timestamp() * 1000
    for i, (_, page) in enumerate(phones[:3]):
        _schedule_tap(page, deadline_ms - 450 + 100 * i)
    _schedule_tap(phones[3][1], deadline_ms + 300)  # after zero: no tap is taken
    first = phones[0][1]
    _pump(first, lambda: all(page.evaluate("window.__tap") for _, page in phones),
          "every phone's tap", timeout=30)
    _pump(first, lambda: held and svc.polls.question(q.id).timed_out, "the deadline")
    held[0].continue_()  # on its way at the deadline: stored within the grace time
    wait_until(lambda: count_reports(svc.store, q.id) == 3, "the three taps stored", 30)
    for _, page in phones[:3]:
        page.locator("#receipt").wait_for(timeout=WAIT_MS)
    late = phones[3][1]
    assert not late.evaluate("window.__tap")["open"]
    late.locator("#question-area").get_by_text("Time is up").wait_for(timeout=WAIT_MS)
    assert count_reports(svc.store, q.id) == 3
    for ctx, _ in phones:
        ctx.close()
