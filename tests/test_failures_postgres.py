"""PostgreSQL goes away while phones vote: nobody gets a traceback or a false receipt,
and once it is back every phone's vote is stored exactly once.

The phones are plain HTTP clients of the phone path (``tests/support/phone_client.py``).
During the outage a report gets ``503 unavailable`` with a sentence for the student,
the phone keeps its randomized report, and "Send it again" (the same body, the same
submission id) stores it once PostgreSQL is back. The question stays on the phones:
the poll's state is served from the process's cache.

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
from classroom.domain import CLASS_EXERCISE
from tests.support.db import count_reports, submission_ids
from tests.support.failures import ScratchPostgres, db_schema_url, need, postgres_url
from tests.support.phone_client import PhoneResponse, PhoneStudent, new_session

pytestmark = [pytest.mark.server, pytest.mark.postgres]

DIE = dict(CLASS_EXERCISE)


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
        svc = PollService.on(store)
        poll = svc.polls.create_poll("outage")
        q = svc.polls.add_question(poll.id, "Vanilla (1) or chocolate (0)?",
                                   options=("Chocolate", "Vanilla"), design_params=DIE)
        q = svc.running.open_question(q.id)
        env = {"LDP_CLASSROOM_DATA_DIR": str(tmp_path), "LDP_CLASSROOM_DATABASE_URL": url,
               "LDP_CLASSROOM_INSTRUCTOR_KEY": "failure-test-instructor-key"}
        try:
            with running_server(env, log_path=tmp_path / "server.log") as server:
                yield server, svc, poll, q
        finally:
            if not scratch_pg.ready():  # always leave PostgreSQL running
                scratch_pg.start()
            store.close()


def not_saved(resp: PhoneResponse) -> None:
    """503 ``unavailable`` with one sentence for the student: never a traceback, no receipt."""
    assert resp.status == 503, (resp.status, resp.body[:300])
    assert resp.json and resp.json.get("error") == "unavailable", resp.body[:300]
    assert resp.json.get("message"), resp.body[:300]
    assert "receipt" not in resp.json
    assert b"Traceback" not in resp.body


def receipt(resp: PhoneResponse) -> dict:
    assert resp.status == 200, (resp.status, resp.body[:300])
    return resp.json["receipt"]


def _one_report_each(svc, q, phones) -> None:
    assert count_reports(svc.store, q.id) == len(phones)
    for p in phones:
        assert svc.reports.receipt_for(q.id, p.device_id) is not None


def test_outage_keeps_the_report_and_a_resend_stores_it_once(scratch_pg, classroom):  # noqa: C901 - one scenario read as a story, step by step
    server, svc, poll, q = classroom

    async def scenario():
        async with new_session(timeout=30) as http:
            phones = [PhoneStudent(server.url, poll.join_code, session=http, timeout=30)
                      for _ in range(12)]
            for resp in await asyncio.gather(*(p.join() for p in phones)):
                assert resp.status == 200 and resp.json["question"]["state"] == "open"
            before, during, idle, later = phones[:3], phones[3:7], phones[7:9], phones[9:]
            for p in before:
                receipt(await p.vote(1))

            await asyncio.to_thread(scratch_pg.stop)
            sent = {}
            for p, resp in zip(during, await asyncio.gather(*(p.vote(i % 2) for i, p in
                                                              enumerate(during))), strict=True):
                not_saved(resp)
                sent[p.device_id] = p.submission_id
            for p in idle:  # the question stays on screen: served from the process's cache
                resp = await p.poll()
                assert resp.status == 200, (resp.status, resp.body[:300])
                assert resp.json["question"]["id"] == q.id
            for p in before:  # waiting phones long-poll on: no change, no error
                assert (await p.poll(wait=1)).status == 304
            newcomer = PhoneStudent(server.url, poll.join_code, session=http, timeout=30)
            resp = await newcomer.join()
            assert resp.status == 200 and resp.json["question"]["id"] == q.id
            # Sending again while the database is still away: still not saved.
            first = during[0]
            not_saved(await first.resend())
            assert first.submission_id == sent[first.device_id]

            await asyncio.to_thread(scratch_pg.start)
            for p in during:  # one "Send it again" stores the SAME randomized report
                r = receipt(await p.resend())
                assert r["already_answered"] is False
            for p in during:  # ... and a second one is a double tap: the first receipt
                again = receipt(await p.resend())
                assert again["already_answered"] is True
            for p in idle + later + [newcomer]:
                receipt(await p.vote(0))
            return phones + [newcomer], sent

    everyone, sent = asyncio.run(scenario())
    _one_report_each(svc, q, everyone)
    stored = submission_ids(svc.store, q.id)
    for sid in sent.values():
        assert sid in stored  # the report made during the outage, not a new draw


def test_restart_during_a_burst_loses_and_doubles_nothing(scratch_pg, classroom):
    """20 phones that have the question tap within 3 s; PostgreSQL is stopped when the burst
    starts and started again 1.5 s later (a restart with a known down time). Each phone
    sends its report again every 0.5 s until it has a receipt, and ends with exactly one
    stored report."""
    server, svc, poll, q = classroom
    rng = random.Random(7)

    async def phone(p: PhoneStudent, delay: float, truth: int) -> tuple[int, int]:
        await asyncio.sleep(delay)
        resp = await p.vote(truth)
        unavailable = 0
        for _ in range(60):
            if resp.status == 200:
                return unavailable, 1
            not_saved(resp)
            unavailable += 1
            await asyncio.sleep(0.5)
            resp = await p.resend()
        return unavailable, 0

    async def scenario():
        async with new_session(timeout=30) as http:
            phones = [PhoneStudent(server.url, poll.join_code, session=http, timeout=30)
                      for _ in range(20)]
            for resp in await asyncio.gather(*(p.join() for p in phones)):
                assert resp.status == 200
            await asyncio.to_thread(scratch_pg.stop)
            tasks = [asyncio.create_task(phone(p, rng.uniform(0.0, 3.0), rng.randrange(2)))
                     for p in phones]
            await asyncio.sleep(1.5)
            await asyncio.to_thread(scratch_pg.start)
            return phones, await asyncio.gather(*tasks)

    phones, results = asyncio.run(scenario())
    assert all(done == 1 for _, done in results), results
    assert sum(n for n, _ in results) > 0, "no tap met the outage"
    _one_report_each(svc, q, phones)
    stored = submission_ids(svc.store, q.id)
    assert {p.submission_id for p in phones} <= stored
