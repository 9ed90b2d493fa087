"""A question change reaches every process at once (PostgreSQL ``LISTEN``/``NOTIFY``).

Before, each process read a poll's state from the database again about once a second, so
a change made by one process (the dashboard's) reached the phones long-polling another
one up to a second and a rebuild later: on two processes behind nginx, p95 1.9 s, at most
2.1 s. Now the store's triggers announce each change of a poll, a question or a round at
commit, and each process's poll states follow the announcements.

Here the poll states read the database only once an hour on their own (``ttl``), so a
change that arrives within the test's wait can only have come by the announcement.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator

import psycopg
import pytest
import sqlalchemy as sa

from classroom.domain import CLASS_EXERCISE
from classroom.service import PollService
from classroom.store import CHANNEL, Store, changes
from phone.state import PollStates
from tests.support.failures import db_schema_url, postgres_url

pytestmark = pytest.mark.postgres

#: Long enough for a loaded machine; the once-an-hour reading cannot come within it.
WAIT_S = 60.0


@pytest.fixture
def schema_url() -> Iterator[Callable[[], str]]:
    """A factory of fresh schemas on the configured PostgreSQL (dropped afterwards)."""
    base = postgres_url()
    with contextlib.ExitStack() as stack:
        yield lambda: stack.enter_context(db_schema_url(base))


@pytest.fixture
def pg_url(schema_url) -> str:
    return schema_url()


def _poll(svc: PollService):
    poll = svc.polls.create_poll("changes")
    q = svc.running.open_question(svc.polls.add_question(poll.id, "First?", options=("No", "Yes"),
                                                         design_params=dict(CLASS_EXERCISE)).id)
    return poll, q


async def _notes(url: str, action, *, settle: float = 0.5) -> list[str]:
    """The announcements of this schema seen while ``action()`` runs (in a thread)."""
    store = Store(url)
    try:
        feed = store.poll_changes()
        assert feed is not None
        seen: list[int | None] = []

        async def listen() -> None:
            async for poll_id in feed:
                seen.append(poll_id)

        task = asyncio.create_task(listen())
        while not seen:  # the first None: listening
            await asyncio.sleep(0.05)
        await asyncio.to_thread(action)
        await asyncio.sleep(settle)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return seen[1:]
    finally:
        store.close()


def test_a_question_change_is_announced_once_at_commit_and_a_report_is_not(pg_url):
    store = Store(pg_url)
    try:
        svc = PollService.on(store)
        poll, q = _poll(svc)

        def report() -> None:
            svc.reports.submit_report(poll.join_code, q.id, answer=1, design_params=q.design_params,
                                      submission_id="changes-report-1", device_id="device-1")

        def next_question() -> None:
            nxt = svc.polls.add_question(poll.id, "Second?", options=("No", "Yes"),
                                         design_params=dict(CLASS_EXERCISE))
            svc.running.open_question(nxt.id)

        assert asyncio.run(_notes(pg_url, report)) == []
        seen = asyncio.run(_notes(pg_url, next_question))
        assert seen and set(seen) == {poll.id}
        revealed = asyncio.run(_notes(pg_url, lambda: svc.running.set_revealed(q.id, True)))
        assert revealed == [poll.id]
    finally:
        store.close()


def test_another_schema_s_changes_are_not_this_one_s(pg_url, schema_url):
    other = Store(schema_url())
    try:
        svc = PollService.on(other)
        seen = asyncio.run(_notes(pg_url, lambda: _poll(svc)))
        assert seen == []
    finally:
        other.close()


def test_installing_again_adds_nothing(pg_url):
    store = Store(pg_url)
    try:
        Store(pg_url).close()  # a second process starting
        with store.transaction(write=True) as conn:
            changes.install(conn)
            n = conn.execute(sa.text(
                "SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                "WHERE t.tgname = :n AND c.relnamespace = current_schema()::regnamespace"),
                {"n": CHANNEL}).scalar_one()
        assert n == len(changes.TABLES)
    finally:
        store.close()


def test_a_change_made_elsewhere_reaches_the_waiting_phones_at_once(pg_url):
    """Two processes: this one's poll states with phones waiting; the change made by
    another store (the other process's dashboard)."""
    here, there = Store(pg_url), Store(pg_url)
    try:
        svc_here, svc_there = PollService.on(here), PollService.on(there)
        poll, _ = _poll(svc_there)

        async def scenario():
            states = PollStates(svc_here, ttl=3600.0, changes=here.poll_changes)
            first = await states.get(poll.join_code)
            waiting = asyncio.create_task(
                states.wait_for_change(poll.join_code, first.version, WAIT_S))
            await asyncio.sleep(1.0)  # listening, and the phone's long-poll held

            def change() -> None:
                nxt = svc_there.polls.add_question(poll.id, "Next?", options=("No", "Yes"),
                                                   design_params=dict(CLASS_EXERCISE))
                svc_there.running.open_question(nxt.id)

            await asyncio.to_thread(change)
            changed = await waiting
            follower = states._follower
            assert follower is not None
            follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await follower
            return first, changed

        first, changed = asyncio.run(scenario())
        assert changed is not None, "the change did not arrive"
        assert changed.version != first.version
        assert changed.question_id != first.question_id
    finally:
        here.close()
        there.close()


def test_a_sqlite_store_has_no_feed(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'c.db'}")
    try:
        assert store.poll_changes() is None
    finally:
        store.close()


def _listeners(store: Store) -> set[int]:
    """The server's connections listening on the channel (other tests' too)."""
    with store.transaction(write=False) as conn:
        return set(conn.execute(sa.text("SELECT pid FROM pg_stat_activity WHERE query = :q"),
                                {"q": f"LISTEN {CHANNEL}"}).scalars())


def test_a_database_that_goes_away_is_listened_to_again(pg_url, caplog):
    """The listening connection is ended (as by a restart of PostgreSQL): after a warning
    the feed says "anything may have changed" (None) and announces changes again."""
    store = Store(pg_url)
    try:
        svc = PollService.on(store)
        poll, _ = _poll(svc)

        async def scenario() -> list[int | None]:
            seen: list[int | None] = []
            feed = store.poll_changes()

            async def listen() -> None:
                async for poll_id in feed:
                    seen.append(poll_id)

            listening = await asyncio.to_thread(_listeners, store)
            task = asyncio.create_task(listen())
            while not seen:
                await asyncio.sleep(0.05)
            ours = await asyncio.to_thread(_listeners, store) - listening
            assert len(ours) == 1
            with psycopg.connect(changes.conninfo(store.engine.url), autocommit=True) as c:
                c.execute("SELECT pg_terminate_backend(%s)", (ours.pop(),))
            while seen.count(None) < 2:
                await asyncio.sleep(0.1)
            current = svc.polls.current_question(poll.id)
            await asyncio.to_thread(svc.running.set_revealed, current.id, True)
            while poll.id not in seen:
                await asyncio.sleep(0.1)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            return seen

        seen = asyncio.run(asyncio.wait_for(scenario(), WAIT_S))
        assert seen.count(None) == 2 and seen[-1] == poll.id
        assert "not listening for its changes" in caplog.text
    finally:
        store.close()
