"""One engine and one connection pool per process, measured on a running server.

The server runs on PostgreSQL under an ``application_name`` of its own, so
``pg_stat_activity`` shows exactly its connections. While the instructor logs in
(the login routes), opens the dashboard (a Streamlit session) and a class of phones
loads, joins and votes at once (the phone routes), a sampler counts the server's
connections every 20 ms:

* at the peak, at most :data:`classroom.store.PG_POOL_SIZE` +
  :data:`~classroom.store.PG_MAX_OVERFLOW` (20): the pool's bound, for the whole process;
* once the burst is over, at most ``PG_POOL_SIZE`` (5) stay open: one pool keeps
  that many. (With a store per part, as before, each part kept its own idle
  connections: the pages', the phones' and the logins'.)

The measured numbers are printed (``-s``) for docs/deployment.md.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from bench.cluster import running_server
from bench.harness import Projector
from classroom.domain import CLASS_EXERCISE
from classroom.store import PG_MAX_OVERFLOW, PG_POOL_SIZE
from tests.support.db import count_reports
from tests.support.failures import db_schema_url, postgres_url
from tests.support.phone_client import PhoneStudent, new_session

pytestmark = [pytest.mark.server, pytest.mark.postgres]

DIE = dict(CLASS_EXERCISE)
KEY = "connections-test-instructor-key"
PHONES = 120


class Sampler:
    """Counts the connections of one application name, every ``every`` seconds."""

    def __init__(self, admin_url: str, application_name: str, every: float = 0.02) -> None:
        self._engine = sa.create_engine(admin_url, poolclass=sa.NullPool)
        self._name = application_name
        self._every = every
        self._stop = threading.Event()
        self.samples: list[int] = []
        self._thread = threading.Thread(target=self._run, daemon=True)

    def count(self) -> int:
        with self._engine.connect() as conn:
            return int(conn.execute(sa.text(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = :name"),
                {"name": self._name}).scalar_one())

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            self.samples.append(self.count())

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)
        self._engine.dispose()


async def _class_votes(base: str, code: str, n: int) -> list[int]:
    async with new_session(limit=n) as session:
        async def one(i: int) -> int:
            phone = PhoneStudent(base, code, session=session)
            await phone.load_page()
            await phone.join()
            return (await phone.vote(i % 2)).status

        return list(await asyncio.gather(*(one(i) for i in range(n))))


async def _dashboard(base: str, poll_id: int, question_id: int) -> int | None:
    projector = Projector(base, poll_id, question_id, key=KEY)
    try:
        await projector.open()
        return Projector.count(await projector.run())
    finally:
        await projector.close()


def test_the_server_holds_one_pool_of_at_most_20_connections(tmp_path, capsys):
    from classroom.service import PollService
    from classroom.store import Store

    base_url = postgres_url()
    name = f"ldp-connections-{secrets.token_hex(4)}"
    with db_schema_url(base_url) as url:
        store = Store(url)  # the test's own, under another application name
        try:
            svc = PollService.on(store)
            poll = svc.polls.create_poll("connections")
            q = svc.polls.add_question(poll.id, "Vanilla (1) or chocolate (0)?",
                                       options=("Chocolate", "Vanilla"), design_params=DIE)
            q = svc.running.open_question(q.id)
            server_url = make_url(url).update_query_dict({"application_name": name})
            env = {"LDP_CLASSROOM_DATA_DIR": str(tmp_path), "LDP_CLASSROOM_INSTRUCTOR_KEY": KEY,
                   "LDP_CLASSROOM_DATABASE_URL":
                       server_url.render_as_string(hide_password=False)}
            with running_server(env, log_path=tmp_path / "server.log") as server, \
                    Sampler(base_url, name) as sampler:
                shown = asyncio.run(_dashboard(server.url, poll.id, q.id))
                statuses = asyncio.run(_class_votes(server.url, poll.join_code, PHONES))
                assert statuses == [200] * PHONES
                assert count_reports(store, q.id) == PHONES
                during = list(sampler.samples)
                # The burst is over: what stays open is the pool's kept connections.
                deadline = time.monotonic() + 30
                while sampler.count() > PG_POOL_SIZE and time.monotonic() < deadline:
                    time.sleep(0.2)
                after = sampler.count()
        finally:
            store.close()
    assert shown == 0  # the dashboard ran as the instructor's, on the same pool
    peak = max(during)
    with capsys.disabled():
        print(f"\n  connections of one server process on PostgreSQL ({PHONES} phones at once, "
              f"a login and the dashboard): peak {peak}, after the burst {after} "
              f"(pool {PG_POOL_SIZE} + overflow {PG_MAX_OVERFLOW}); "
              f"{len(during)} samples")
    assert 1 <= peak <= PG_POOL_SIZE + PG_MAX_OVERFLOW
    assert 1 <= after <= PG_POOL_SIZE
