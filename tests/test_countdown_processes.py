"""A countdown closes the round on the server, with no dashboard open, and two server
processes on one database agree on the close.

Two real app processes (``streamlit run app.py``) share a SQLite file or a PostgreSQL
schema; no browser and no instructor session is connected. A question opens with a
10-second countdown. Phones (plain HTTP clients) on both processes answer in time and
long-poll. At the deadline:

* both processes wake their waiting phones with the question closed (``timed_out``),
  within a second or two, although each keeps its shared state for a second and
  nobody asked;
* a report tapped before it and arriving within the grace time after it is stored by
  either process; one that arrives after the grace time gets "Voting closed" from either
  process and writes nothing;
* the stored state says closed, at the deadline, written once (each process runs the
  closer; the close is idempotent).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from datetime import timedelta

import pytest
import sqlalchemy as sa

from classroom.domain import CLASS_EXERCISE, as_utc
from classroom.service import GRACE_S
from tests.support.db import count_reports
from tests.support.failures import db_schema_url, postgres_url
from tests.support.phone_client import PhoneStudent, new_session
from tests.support.server import running_server, server_log

pytestmark = [pytest.mark.server]

KEY = "k-countdown-key-0123456789"
COUNTDOWN_S = 10
PHONES_PER_PROCESS = 4


@contextlib.contextmanager
def _database(backend: str, tmp_path):
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'classroom.db'}"
        return
    with db_schema_url(postgres_url()) as url:
        yield url


@pytest.mark.parametrize("backend", ["sqlite",
                                     pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_two_processes_close_the_countdown_together_with_no_dashboard(backend, tmp_path):
    from classroom.service import PollService
    from classroom.store import Store, questions

    with _database(backend, tmp_path) as url:
        store = Store(url)
        svc = PollService.on(store)
        poll = svc.polls.create_poll("countdown")
        q = svc.polls.add_question(poll.id, "Vanilla (1) or chocolate (0)?",
                                   options=("Chocolate", "Vanilla"),
                                   design_params=dict(CLASS_EXERCISE),
                                   countdown_s=COUNTDOWN_S)
        envs = []
        for name in ("a", "b"):
            data = tmp_path / name
            data.mkdir()
            envs.append({"LDP_CLASSROOM_DATABASE_URL": url, "LDP_CLASSROOM_DATA_DIR": str(data),
                         "LDP_CLASSROOM_INSTRUCTOR_KEY": KEY})
        try:
            with running_server(envs[0]) as one, running_server(envs[1]) as two:
                q = svc.running.open_question(q.id)  # the countdown starts once both are up
                outcome = asyncio.run(_class(poll.join_code, (one, two), q.closes_at))
                logs = server_log(one) + server_log(two)
                # Written down by the processes' closers, at the deadline, with no reader.
                deadline = time.monotonic() + 15
                while time.monotonic() < deadline:
                    with store.transaction(write=False) as conn:
                        row = conn.execute(sa.select(questions.c.state, questions.c.closes_at,
                                                     questions.c.updated_at)
                                           .where(questions.c.id == q.id)).one()
                    if row.state == "closed":
                        break
                    time.sleep(0.2)
            assert row.state == "closed", "no process wrote the countdown's close down"
            assert as_utc(row.closes_at) == q.closes_at == as_utc(row.updated_at)
            assert count_reports(store, q.id) == outcome["in_time"] == 2 * PHONES_PER_PROCESS + 2
            for wake in outcome["woke"]:
                assert -0.05 <= wake <= 3.0, outcome["woke"]  # seconds after the deadline
            assert "Traceback" not in logs
        finally:
            store.close()


async def _class(code: str, bases: tuple[str, str], closes_at) -> dict:
    rng = random.Random(5)
    async with new_session(timeout=30) as http:
        phones = {base: [PhoneStudent(base, code, session=http, timeout=30,
                                      rng=random.Random(rng.random()))
                         for _ in range(PHONES_PER_PROCESS + 1)] for base in bases}
        for group in phones.values():
            for resp in await asyncio.gather(*(p.join() for p in group)):
                assert resp.status == 200, resp.body[:300]
                shown = resp.json["question"]
                assert shown["state"] == "open"
                assert shown["closes_at"] == int(closes_at.timestamp() * 1000)
                assert 0 < shown["closes_at"] - resp.json["now"] <= COUNTDOWN_S * 1000
        in_time = 0
        for group in phones.values():  # all but one phone per process answer in time
            for p in group[:-1]:
                resp = await p.vote(rng.randrange(2))
                assert resp.status == 200, resp.body[:300]
                in_time += 1
        # The last phone of each process waits for the next state, as a phone does.
        waiting = [group[-1] for group in phones.values()]

        async def wake(p: PhoneStudent) -> float:
            while True:
                resp = await p.poll(wait=25)
                if resp.status == 200:
                    shown = resp.json["question"]
                    assert (shown["state"], shown["timed_out"]) == ("closed", True), shown
                    return time.time() - closes_at.timestamp()

        woke = await asyncio.gather(*(wake(p) for p in waiting))
        for p in waiting:  # tapped at the deadline, on its way: either process stores it
            resp = await p.vote(1)
            assert resp.status == 200, resp.body[:300]
            in_time += 1
        # After the grace time, either process refuses a report.
        await asyncio.sleep(max(0.0, closes_at.timestamp() + GRACE_S + 0.2 - time.time()))
        for base in bases:
            late = PhoneStudent(base, code, session=http, timeout=30)
            assert (await late.join()).json["question"]["state"] == "closed"
            resp = await late.vote(1)
            assert resp.status == 409 and resp.json["error"] == "closed", resp.body[:300]
            assert resp.json["message"].startswith("Voting closed")
        return {"in_time": in_time, "woke": woke}


def test_the_deadline_is_what_the_phones_count_to():
    """The fields the phone counts with: the deadline and the server's time, in ms."""
    from datetime import UTC, datetime

    from phone.present import epoch_ms

    when = datetime(2026, 3, 2, 10, 0, 0, 250000, tzinfo=UTC)
    assert epoch_ms(when) == 1772445600250
    assert epoch_ms(when + timedelta(seconds=60)) - epoch_ms(when) == 60000
