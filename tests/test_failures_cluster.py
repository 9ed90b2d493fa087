"""Two server processes behind nginx on PostgreSQL; one is killed (SIGKILL) while the
class votes.

Expected: the students whose websocket was on the killed process reconnect
through nginx to the other one (the consistent hash on the device cookie
skips the dead upstream); those who had voted see their receipt again (device
cookie + database); the others can still vote; every acknowledged report is
stored exactly once, and no student has two.

Runs ``deploy/run-cluster.sh`` itself. Needs ``LDP_TEST_POSTGRES_URL`` and
nginx (``/usr/sbin/nginx``): skipped locally without them, failures under
``CI=true``.
"""

from __future__ import annotations

import asyncio
import random
import signal

import pytest

from bench.cluster import require_nginx, running_cluster
from tests.support.failures import db_schema_url, need, postgres_url
from tests.support.protocol import ProtocolError, RunResult, Student

pytestmark = [pytest.mark.server, pytest.mark.postgres]

DIE = {"design": "die", "faces": 4, "truthful": 3}
RECEIPT = "Answer received"
ALREADY = "Your answer was received"
STUDENTS = 40


def _clean(run: RunResult) -> None:
    assert not run.exceptions(), run.exceptions()


def test_killing_one_of_two_processes_loses_and_doubles_nothing(tmp_path):
    base = postgres_url()
    need(require_nginx(), "nginx")
    from classroom.service import PollService
    from classroom.store import Store

    with db_schema_url(base) as url:
        store = Store(url)
        svc = PollService(store)
        poll = svc.create_poll("failover")
        q = svc.open_question(svc.add_question(poll.id, "Vanilla (1) or chocolate (0)?",
                                               options=("Chocolate", "Vanilla"),
                                               design_params=DIE).id)
        env = {"LDP_CLASSROOM_DATABASE_URL": url, "LDP_CLASSROOM_DATA_DIR": str(tmp_path),
               "LDP_CLASSROOM_INSTRUCTOR_KEY": "k"}
        try:
            with running_cluster(2, env, run_dir=tmp_path / "cluster") as cluster:
                outcome = asyncio.run(_scenario(cluster, poll.join_code))
                assert cluster.servers[0].alive() is False
                assert cluster.servers[1].alive()
            acked, devices, stats = outcome
            # Both processes served students, so the kill cut some connections.
            assert stats["cut"] >= 1 and stats["survived"] >= 1, stats
            assert stats["receipt_again"] >= 1, stats
            assert svc.store.count_reports(q.id) == len(devices)
            for device in devices:
                assert svc.receipt_for(q.id, device) is not None
            stored = svc.store.submission_ids(q.id)
            for sid in acked:
                assert sid in stored
        finally:
            store.close()


async def _scenario(cluster, code: str):
    rng = random.Random(11)
    students = [Student(cluster.url, code, timeout=30) for _ in range(STUDENTS)]
    for page in await asyncio.gather(*(s.join() for s in students)):
        _clean(page)
        assert page.component() is not None
    acked: set[str] = set()
    first, second = students[: STUDENTS // 2], students[STUDENTS // 2:]
    for s in first:  # half the class has voted ...
        run = await s.tap(rng.randrange(2))
        _clean(run)
        assert run.has_text(RECEIPT)
        acked.add(s.submission_id)

    async def vote(s: Student, delay: float) -> None:
        await asyncio.sleep(delay)
        try:
            run = await s.tap(rng.randrange(2))
        except ProtocolError:
            return  # its process died under it; it reconnects below
        _clean(run)
        if run.has_text(RECEIPT):
            acked.add(s.submission_id)

    # ... the other half is voting when process 0 is killed.
    voting = [asyncio.create_task(vote(s, rng.uniform(0, 1.5))) for s in second]
    await asyncio.sleep(0.5)
    cluster.servers[0].kill(signal.SIGKILL)
    await asyncio.gather(*voting)
    await asyncio.sleep(0.5)

    stats = {"cut": 0, "survived": 0, "receipt_again": 0, "voted_after": 0}
    for s in students:
        try:  # a live stream answers; a cut one raises
            run = await s.run()
            stats["survived"] += 1
        except ProtocolError:
            stats["cut"] += 1
            await s.reconnect()  # same cookie, new websocket, through nginx
            run = await s.run()
            if run.has_text(ALREADY):
                stats["receipt_again"] += 1
        _clean(run)
        s.remember(run)
        if not run.has_text(ALREADY):  # not stored yet: this student can still vote
            assert run.component() is not None, run.texts()
            tap = await s.tap(rng.randrange(2))
            _clean(tap)
            assert tap.has_text(RECEIPT), tap.texts()
            acked.add(s.submission_id)
            stats["voted_after"] += 1
    devices = [s.device_id for s in students]
    for s in students:
        await s.close()
    return acked, devices, stats
