"""PostgreSQL goes away while students vote: nobody sees a traceback or a false receipt,
and once it is back every student's vote is stored exactly once.

The server runs on a scratch PostgreSQL cluster of its own (``pg_createcluster``
on a free port, dropped afterwards), so stopping and restarting it does not
disturb the shared server other tests use. Skipped locally without
``LDP_TEST_POSTGRES_URL`` (or without root / Debian's cluster tools); under
``CI=true`` those are failures.
"""

from __future__ import annotations

import asyncio
import contextlib
import random

import pytest

from bench.cluster import running_server
from tests.support.failures import ScratchPostgres, db_schema_url, need, postgres_url
from tests.support.protocol import RunResult, Student

pytestmark = [pytest.mark.server, pytest.mark.postgres]

DIE = {"design": "die", "faces": 4, "truthful": 3}
NOT_SAVED = "Not saved yet"
RECEIPT = "Answer received"


@pytest.fixture(scope="module")
def scratch_pg():
    postgres_url()  # PostgreSQL tests are wanted here (skip / fail as for the others)
    need(ScratchPostgres.problem(), "a scratch PostgreSQL cluster (pg_createcluster)")
    pg = ScratchPostgres().create()
    try:
        yield pg
    finally:
        with contextlib.suppress(Exception):
            if not pg.ready():
                pg.start()
        pg.drop()


@pytest.fixture
def classroom(scratch_pg, tmp_path):
    """A server on a fresh schema of the scratch cluster and a PollService beside it."""
    from classroom.service import PollService
    from classroom.store import Store

    with db_schema_url(scratch_pg.url) as url:
        store = Store(url)
        svc = PollService(store)
        poll = svc.create_poll("outage")
        q = svc.open_question(svc.add_question(poll.id, "Vanilla (1) or chocolate (0)?",
                                               options=("Chocolate", "Vanilla"),
                                               design_params=DIE).id)
        env = {"LDP_CLASSROOM_DATA_DIR": str(tmp_path), "LDP_CLASSROOM_DATABASE_URL": url,
               "LDP_CLASSROOM_INSTRUCTOR_KEY": "k"}
        try:
            with running_server(env, log_path=tmp_path / "server.log") as server:
                yield server, svc, poll, q
        finally:
            if not scratch_pg.ready():  # always leave PostgreSQL running
                scratch_pg.start()
            store.close()


def _clean(run: RunResult) -> None:
    """Never a traceback, never an exception box."""
    assert not run.exceptions(), run.exceptions()


def _one_report_each(svc, q, students) -> None:
    assert svc.store.count_reports(q.id) == len(students)
    for s in students:
        assert svc.receipt_for(q.id, s.device_id) is not None


def test_outage_keeps_the_tap_and_a_retry_stores_it_once(scratch_pg, classroom):
    server, svc, poll, q = classroom

    async def scenario():
        students = [Student(server.url, poll.join_code, timeout=30) for _ in range(12)]
        pages = await asyncio.gather(*(s.join() for s in students))
        assert all(p.component() is not None for p in pages)
        before, during, idle, later = students[:3], students[3:7], students[7:9], students[9:]
        for s in before:
            assert (await s.tap(1)).has_text(RECEIPT)

        await asyncio.to_thread(scratch_pg.stop)
        sent = {}
        for s, run in zip(during, await asyncio.gather(*(s.tap(i % 2) for i, s in
                                                         enumerate(during)))):
            _clean(run)
            assert not run.has_text(RECEIPT) and not run.has_text("already answered")
            assert any(NOT_SAVED in a for a in run.alerts("ERROR")), run.texts()
            assert run.button("Send it again") is not None
            sent[s.device_id] = s.submission_id
        for s in idle:  # a rerun without a tap: a message, the question stays on screen
            run = await s.run()
            _clean(run)
            assert any("database unavailable" in a for a in run.alerts("ERROR")), run.texts()
            assert run.component() is not None
        for s in before:  # phones on the receipt page keep polling for the next question
            fid = next(iter(s.auto_reruns))
            _clean(await s.run(fragment_id=fid, auto=True))
        newcomer = Student(server.url, poll.join_code, timeout=30)
        run = await newcomer.join()
        _clean(run)
        assert any("database unavailable" in a for a in run.alerts("ERROR")), run.texts()
        # Sending again while the database is still away: still not saved, still no receipt.
        first = during[0]
        run = await first.click(run_button(await first.run(), "Send it again"))
        _clean(run)
        assert not run.has_text(RECEIPT)
        assert any(NOT_SAVED in a for a in run.alerts("ERROR")), run.texts()

        await asyncio.to_thread(scratch_pg.start)
        for s in during:  # one tap on "Send it again" stores the SAME randomized vote
            page = await s.run()
            _clean(page)
            run = await s.click(run_button(page, "Send it again"))
            _clean(run)
            assert run.has_text(RECEIPT), run.texts()
            assert run.button("Send it again") is None
        for s in idle + later:
            assert (await s.tap(0)).has_text(RECEIPT)
        page = await newcomer.run()
        assert newcomer.remember(page).component() is not None
        assert (await newcomer.tap(1)).has_text(RECEIPT)
        everyone = students + [newcomer]
        for s in everyone:
            await s.close()
        return everyone, sent

    everyone, sent = asyncio.run(scenario())
    _one_report_each(svc, q, everyone)
    stored = svc.store.submission_ids(q.id)
    for sid in sent.values():
        assert sid in stored  # the vote tapped during the outage, not a new draw


def run_button(run: RunResult, label: str):
    button = run.button(label)
    assert button is not None, f"no {label!r} button: {run.texts()}"
    return button


def test_restart_during_a_burst_loses_and_doubles_nothing(scratch_pg, classroom):
    """20 joined students tap within 3 s; PostgreSQL is stopped when the burst starts and
    started again 1.5 s later (a restart with a known down time). Each student retries
    until it has a receipt, and ends with exactly one stored report."""
    server, svc, poll, q = classroom
    rng = random.Random(7)

    async def student(s: Student, delay: float, answer: int) -> tuple[int, int]:
        await asyncio.sleep(delay)
        s.remember(await s.run())  # the page as it is now (the question stays on screen)
        run = await s.tap(answer)
        not_saved = 0
        for _ in range(60):
            _clean(run)
            if any(run.has_text(t) for t in (RECEIPT, "You already answered",
                                              "Your answer was received")):
                return not_saved, 1
            assert any("not saved" in a.lower() or "unavailable" in a.lower()
                       for a in run.alerts()), run.texts()
            not_saved += 1
            await asyncio.sleep(0.5)
            button = run.button("Send it again")
            if button is not None:
                run = await s.click(button)
            elif run.component() is not None:
                s.remember(run)
                run = await s.tap(answer)
            else:
                run = await s.run()
        return not_saved, 0

    async def scenario():
        students = [Student(server.url, poll.join_code, timeout=30) for _ in range(20)]
        for page in await asyncio.gather(*(s.join() for s in students)):
            assert page.component() is not None
        await asyncio.to_thread(scratch_pg.stop)
        tasks = [asyncio.create_task(student(s, rng.uniform(0.0, 3.0), rng.randrange(2)))
                 for s in students]
        await asyncio.sleep(1.5)
        await asyncio.to_thread(scratch_pg.start)
        results = await asyncio.gather(*tasks)
        for s in students:
            await s.close()
        return students, results

    students, results = asyncio.run(scenario())
    assert all(done == 1 for _, done in results), results
    assert sum(n for n, _ in results) > 0, "no tap met the outage"
    _one_report_each(svc, q, students)
