"""Two server processes behind nginx on PostgreSQL; one is killed (SIGKILL) while the
class votes.

Phones are stateless HTTP clients: nginx spreads their requests round-robin over the
processes, with no sticky sessions. Expected when one process dies:

* the other answers everything: phones that had voted see their receipt again
  (``/api/poll/CODE/me``: device cookie + database), the others vote;
* a report caught by the kill is delivered again, by nginx to the next process or
  by the phone's "Send it again" with the same submission id: stored exactly once;
* every acknowledged report is stored, and no phone has two;
* nginx's access log shows both processes served phones, and no line carries a
  query string (the instructor key of a login link never reaches it).

Runs ``deploy/run-cluster.sh`` itself. Needs ``LDP_TEST_POSTGRES_URL`` and
nginx (``/usr/sbin/nginx``): skipped locally without them, failures under
``CI=true``.
"""

from __future__ import annotations

import asyncio
import random
import re
import signal
import time
import urllib.error
import urllib.request

import aiohttp
import pytest

from bench.cluster import require_nginx, running_cluster
from classroom.domain import CLASS_EXERCISE
from tests.support.db import count_reports, submission_ids
from tests.support.failures import db_schema_url, need, postgres_url
from tests.support.phone_client import PhoneStudent, new_session

pytestmark = [pytest.mark.server, pytest.mark.postgres]

DIE = dict(CLASS_EXERCISE)
STUDENTS = 40
KEY = "k-cluster-key-0123456789"


def test_killing_one_of_two_processes_loses_and_doubles_nothing(tmp_path):
    base = postgres_url()
    need(require_nginx(), "nginx")
    from classroom.service import PollService
    from classroom.store import Store

    with db_schema_url(base) as url:
        store = Store(url)
        svc = PollService.on(store)
        poll = svc.polls.create_poll("failover")
        q = svc.polls.add_question(poll.id, "Vanilla (1) or chocolate (0)?",
                                   options=("Chocolate", "Vanilla"), design_params=DIE)
        q = svc.running.open_question(q.id)
        env = {"LDP_CLASSROOM_DATABASE_URL": url, "LDP_CLASSROOM_DATA_DIR": str(tmp_path),
               "LDP_CLASSROOM_INSTRUCTOR_KEY": KEY}
        run_dir = tmp_path / "cluster"
        try:
            with running_cluster(2, env, run_dir=run_dir) as cluster:
                with pytest.raises(urllib.error.HTTPError):  # a login with a wrong key
                    urllib.request.urlopen(urllib.request.Request(
                        f"{cluster.url}/auth/login", data=f"key=wrong-{KEY}".encode(),
                        headers={"Origin": cluster.url}))
                ports = [s.url.rsplit(":", 1)[1] for s in cluster.servers]
                acked, devices, stats = asyncio.run(_scenario(cluster, poll.join_code))
                assert cluster.servers[0].alive() is False
                assert cluster.servers[1].alive()
                log = _access_log(run_dir / "access.log", min_lines=STUDENTS * 2)
            assert stats["receipt_again"] == STUDENTS // 2, stats
            assert count_reports(svc.store, q.id) == len(devices) == STUDENTS
            for device in devices:
                assert svc.reports.receipt_for(q.id, device) is not None
            stored = submission_ids(svc.store, q.id)
            assert acked <= stored
            # Round-robin: both processes served phone requests before the kill.
            for port in ports:
                assert f"127.0.0.1:{port}" in log, f"process on {port} served no request"
            assert "/auth/login" in log
            assert "?" not in log and KEY not in log and "wait=" not in log
            # The kill made nginx log the requests it could not pass on; its error log's
            # fixed format names each one's client, which run-cluster.sh blanks out.
            errors = (run_dir / "nginx-error.log").read_text()
            assert "upstream" in errors and "client: -" in errors
            assert not re.search(r"client: [0-9a-f:.]*[0-9]", errors), errors[-2000:]
        finally:
            store.close()


def _access_log(path, min_lines: int, timeout: float = 10.0) -> str:
    """nginx's access log once it holds ``min_lines`` lines (it is flushed every second)."""
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = path.read_text() if path.exists() else ""
        if text.count("\n") >= min_lines:
            break
        time.sleep(0.2)
    return text


async def _deliver(p: PhoneStudent, first) -> dict:
    """The phone's "Send it again" until a receipt (a request cut by the kill raises or
    gets a 502/503)."""
    resp = None
    for _ in range(20):
        try:
            resp = await (first() if resp is None and first else p.resend())
        except (TimeoutError, aiohttp.ClientError):
            resp = None
            first = None
            await asyncio.sleep(0.2)
            continue
        first = None
        if resp.status == 200:
            return resp.json["receipt"]
        assert resp.status in (502, 503), (resp.status, resp.body[:300])
        assert b"Traceback" not in resp.body
        await asyncio.sleep(0.2)
    raise AssertionError(f"no receipt after 20 attempts: {resp and resp.status}")


async def _scenario(cluster, code: str):
    rng = random.Random(11)
    async with new_session(timeout=30) as http:
        phones = [PhoneStudent(cluster.url, code, session=http, timeout=30,
                               rng=random.Random(i)) for i in range(STUDENTS)]
        for resp in await asyncio.gather(*(p.join() for p in phones)):
            assert resp.status == 200 and resp.json["question"]["state"] == "open"
        acked: set[str] = set()
        first, second = phones[: STUDENTS // 2], phones[STUDENTS // 2:]
        for p in first:  # half the class has voted ...
            resp = await p.vote(rng.randrange(2))
            assert resp.status == 200, resp.body[:300]
            acked.add(p.submission_id)

        async def vote(p: PhoneStudent, delay: float) -> None:
            await asyncio.sleep(delay)
            truth = rng.randrange(2)
            await _deliver(p, lambda: p.vote(truth))
            acked.add(p.submission_id)

        # ... the other half is voting when process 0 is killed.
        voting = [asyncio.create_task(vote(p, rng.uniform(0, 1.5))) for p in second]
        await asyncio.sleep(0.5)
        cluster.servers[0].kill(signal.SIGKILL)
        await asyncio.gather(*voting)

        stats = {"receipt_again": 0}
        for p in first:  # the survivor shows each earlier voter its receipt again
            resp = await p.me()
            assert resp.status == 200, resp.body[:300]
            if resp.json.get("receipt"):
                assert resp.json["receipt"]["question_id"] == p.question["id"]
                stats["receipt_again"] += 1
        for p in second:  # a second delivery of a stored report is a double tap
            again = await p.resend()
            assert again.status == 200 and again.json["receipt"]["already_answered"] is True
        return acked, [p.device_id for p in phones], stats
