"""Change signals across processes, on PostgreSQL: every change of a poll, of one of its
questions or of one of its rounds is announced to every process at once.

Each process keeps the poll's state as phones see it in memory (``phone.state``) and reads
it again from the database about once a second. On its own that leaves a question change
up to a second and a rebuild away from the phones of every process, the one whose
dashboard made it included: measured on two processes behind nginx, p95 1.9 s and at
most 2.1 s. PostgreSQL's ``LISTEN``/``NOTIFY`` carries the change instead, with no server
beside the database:

* :func:`install` puts a trigger on ``polls``, ``questions`` and ``rounds`` (not on
  ``reports``: a report changes nothing a phone is shown before results are revealed, and
  a lecture hall sends thousands) that calls ``pg_notify`` on :data:`CHANNEL` with the
  schema and the poll's id. PostgreSQL sends it when the transaction commits, and only
  then; one transaction's repeats of one poll arrive once. Every writer of those tables
  announces its changes this way, whatever code path it takes.
* :func:`poll_changes` listens on a connection of its own (``psycopg``'s async
  ``notifies()``) and yields the ids of the changed polls of its own schema; after a
  connection that broke and came back, ``None``: anything may have changed meanwhile.

SQLite needs none of this: one process serves it. A pooler in transaction mode (PgBouncer)
does not carry ``LISTEN``; the processes then fall back to their reading once a second.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import psycopg
import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection

from .engine import driver_reason

__all__ = ["CHANNEL", "LISTENING", "TABLES", "conninfo", "install", "listener_name",
           "poll_changes"]

#: The channel of the announcements; a payload is ``"<schema> <poll id>"`` (the poll id
#: empty when it is gone).
CHANNEL = "ldp_poll_changed"
#: The tables whose changes are announced.
TABLES = ("polls", "questions", "rounds")
#: Connections a process holds for listening, besides its pool's.
LISTENING = 1
#: The longest wait between tries to listen again while the database does not answer.
MAX_BACKOFF_S = 30.0
_LOG = logging.getLogger("classroom.store")

_FUNCTION = f"""
CREATE OR REPLACE FUNCTION {CHANNEL}() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed record;
  poll bigint;
BEGIN
  IF TG_OP = 'DELETE' THEN changed := OLD; ELSE changed := NEW; END IF;
  IF TG_TABLE_NAME = 'polls' THEN
    poll := changed.id;
  ELSIF TG_TABLE_NAME = 'questions' THEN
    poll := changed.poll_id;
  ELSE
    SELECT q.poll_id INTO poll FROM questions q WHERE q.id = changed.question_id;
  END IF;
  PERFORM pg_notify('{CHANNEL}', current_schema() || ' ' || coalesce(poll::text, ''));
  RETURN NULL;
END
$$
"""


def install(conn: Connection) -> None:
    """Put the announcing trigger on :data:`TABLES` of the current schema (PostgreSQL),
    inside the caller's transaction. A table that has it already is left alone (no lock
    taken on it: the processes already serving are not held up by one starting)."""
    conn.execute(sa.text(_FUNCTION))
    have: set[str] = set(conn.execute(sa.text(
        "SELECT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
        "WHERE t.tgname = :name AND c.relnamespace = current_schema()::regnamespace"),
        {"name": CHANNEL}).scalars())
    for table in TABLES:
        if table not in have:
            conn.execute(sa.text(f"CREATE TRIGGER {CHANNEL} AFTER INSERT OR UPDATE OR DELETE "
                                 f"ON {table} FOR EACH ROW EXECUTE FUNCTION {CHANNEL}()"))


def conninfo(url: URL) -> str:
    """The libpq URI of a SQLAlchemy PostgreSQL URL (its options, the schema's
    ``search_path`` among them, kept).

    >>> conninfo(sa.make_url("postgresql+psycopg://u:p@h:5/db?options=-csearch_path%3Ds"))
    'postgresql://u:p@h:5/db?options=-csearch_path%3Ds'
    """
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


def listener_name(url: URL) -> str:
    """The listening connection's ``application_name``: the pool's (or the app's), marked,
    so that ``pg_stat_activity`` tells it from the pool's connections.

    >>> listener_name(sa.make_url("postgresql+psycopg://h/db?application_name=class-1"))
    'class-1 (changes)'
    """
    name = url.query.get("application_name") or "ldp-classroom"
    return f"{name if isinstance(name, str) else name[0]} (changes)"[-63:]


async def poll_changes(url: URL, *, connect_timeout_s: float = 5.0
                       ) -> AsyncIterator[int | None]:
    """Forever: the id of each poll of this schema whose phones' view changed, as
    PostgreSQL announces it; ``None`` when listening (again) begins, as anything may have
    changed while nobody listened. A database that does not answer is tried again, less
    and less often."""
    backoff = 1.0
    named = url.update_query_dict({"application_name": listener_name(url)})
    while True:
        try:
            conn = await psycopg.AsyncConnection.connect(
                conninfo(named), autocommit=True, connect_timeout=int(connect_timeout_s))
        except (psycopg.Error, OSError) as exc:
            backoff = await _pause(backoff, exc, url)
            continue
        try:
            async with conn:
                schema = await _listen(conn)
                backoff = 1.0
                yield None
                async for note in conn.notifies():
                    mine, _, poll = note.payload.partition(" ")
                    if mine == schema:
                        yield int(poll) if poll.isdigit() else None
        except (psycopg.Error, OSError) as exc:
            backoff = await _pause(backoff, exc, url)


async def _listen(conn: psycopg.AsyncConnection[tuple[object, ...]]) -> str:
    """``LISTEN`` on :data:`CHANNEL`; the connection's schema."""
    cur = await conn.execute("SELECT current_schema()")
    row = await cur.fetchone()
    await conn.execute(f"LISTEN {CHANNEL}")
    return str(row[0]) if row else ""


async def _pause(backoff: float, exc: BaseException, url: URL) -> float:
    if backoff == 1.0:
        _LOG.warning("classroom database: not listening for its changes (%s); each "
                     "process reads the polls again every second meanwhile; trying again",
                     driver_reason(exc, url.render_as_string(hide_password=False)))
    await asyncio.sleep(backoff)
    return min(MAX_BACKOFF_S, 2 * backoff)
