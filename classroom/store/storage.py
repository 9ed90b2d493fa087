"""The store: every read and write of a classroom, in short transactions on one engine.

It knows nothing of randomized response; it persists rows and answers grouped
queries, returning frozen domain objects or the plain rows of :mod:`.rows`.
:meth:`Store.transaction` is the single place where driver errors become domain
errors. Opening a store creates the schema of an empty database or upgrades an
older one (:mod:`.migrations`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError, IntegrityError, SQLAlchemyError

from .. import config
from ..domain import (
    MAX_ROW_ID,
    BadInput,
    ClassroomError,
    Conflict,
    DiskFull,
    Poll,
    Question,
    Round,
    StoreUnavailable,
    as_utc,
    utcnow,
)
from ..kinds import kind
from ..plans import SavedPlan
from . import changes, units
from .engine import SQLITE_BUSY_TIMEOUT_S, disk_full, driver_reason, make_engine
from .migrations import MIGRATIONS, ensure_schema
from .rows import (
    QUESTION_COLS,
    EstimateInputs,
    ReportRow,
    RoundSecret,
    RoundUse,
    poll_of,
    question_of,
    round_of,
    saved_plan_of,
)
from .schema import (
    SCHEMA_VERSION,
    instructor_sessions,
    plans,
    polls,
    questions,
    reports,
    rounds,
    schema_version,
    used_login_links,
)
from .units import PollUnit, ReportUnit

__all__ = ["DISK_FULL", "UNAVAILABLE_READ", "UNAVAILABLE_WRITE", "Store"]

_LOG = logging.getLogger("classroom.store")

UNAVAILABLE_WRITE = "database unavailable, not saved — try again"
UNAVAILABLE_READ = "database unavailable — try again"
DISK_FULL = ("the database's disk is full, so nothing was saved — free some space on the "
             "server, then try again")


#: What a number too large for its column reads as (an id past MAX_ROW_ID, most often):
#: bad input, not a database that cannot be reached.
OUT_OF_RANGE = (f"a number is out of range (ids run from 1 to {MAX_ROW_ID}); nothing was "
                "saved")


def _out_of_range(exc: BaseException) -> bool:
    """PostgreSQL's numeric_value_out_of_range (SQLSTATE 22003): "integer out of range"."""
    orig = getattr(exc, "orig", None)
    return getattr(orig, "sqlstate", None) == "22003" or getattr(orig, "pgcode", None) == "22003"


class Store:
    """Persistence for polls, questions, rounds and reports on one engine.

    Create one per process (the app's composition root, :mod:`web.composition`, does). It
    is thread-safe: every method takes a pooled connection for one
    transaction. ``url=None`` reads :func:`classroom.config.database_url`.
    """

    def __init__(self, url: str | None = None, *,
                 migrations: Mapping[int, Callable[[Connection], None]] = MIGRATIONS,
                 target_version: int = SCHEMA_VERSION,
                 busy_timeout_s: float = SQLITE_BUSY_TIMEOUT_S,
                 clock: Callable[[], datetime] = utcnow) -> None:
        """``clock`` is the time every deadline is set by and read against (tests pass a
        fake one); several processes on one database agree on a countdown's close as far
        as their clocks agree (NTP keeps servers within milliseconds)."""
        self._clock = clock
        raw = config.database_url() if url is None else config.normalize_url(url)
        self.url = raw
        self.masked_url = config.masked_url(raw)
        self.engine = make_engine(raw, busy_timeout_s=busy_timeout_s)
        self.backend = self.engine.dialect.name  # "sqlite" | "postgresql"
        self._insert = sqlite_dialect.insert if self.backend == "sqlite" else pg_dialect.insert
        self._stmt_insert_report = (self._insert(reports)
                                    .on_conflict_do_nothing()
                                    .returning(reports.c.id))
        self._stmt_addresses = (sa.select(reports.c.round_id,
                                          sa.func.count(sa.distinct(reports.c.address_tag)))
                                .where(reports.c.round_id.in_(sa.bindparam("round_ids",
                                                                           expanding=True)),
                                       reports.c.simulated.is_(False))
                                .group_by(reports.c.round_id))
        self._stmt_question = sa.select(*QUESTION_COLS).where(
            questions.c.id == sa.bindparam("question_id"))
        self._stmt_rounds = (sa.select(rounds.c.id, rounds.c.question_id, rounds.c.number,
                                       rounds.c.design_params, rounds.c.opened_at)
                             .where(rounds.c.question_id == sa.bindparam("question_id"))
                             .order_by(rounds.c.number))
        grouped = (sa.select(reports.c.round_id, reports.c.design_params, reports.c.answer,
                             reports.c.simulated, sa.func.count())
                   .where(reports.c.round_id.in_(sa.bindparam("round_ids", expanding=True)))
                   .group_by(reports.c.round_id, reports.c.design_params, reports.c.answer,
                             reports.c.simulated))
        self._stmt_grouped = grouped
        self._stmt_grouped_real = grouped.where(reports.c.simulated.is_(False))
        #: SQLite, after a full disk: when the write-ahead log was last tried to be
        #: checkpointed (None: no checkpoint due).
        self._checkpoint_due: float | None = None
        try:
            self._ensure_schema(migrations, target_version)
        except ClassroomError:
            self.engine.dispose()
            raise
        except (SQLAlchemyError, OSError) as exc:
            self.engine.dispose()
            raise StoreUnavailable(
                f"cannot open the classroom database {self.masked_url}: "
                f"{driver_reason(exc, raw)}. Check {config.DATABASE_URL_ENV} (or "
                f"{config.SECRETS_KEY} in .streamlit/secrets.toml)") from exc

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    def now(self) -> datetime:
        """The current time (UTC) by this store's clock."""
        return self._clock()

    def __repr__(self) -> str:
        return f"Store({self.masked_url!r})"

    # -- transactions ---------------------------------------------------------------------
    @contextmanager
    def transaction(self, *, write: bool) -> Iterator[Connection]:
        """One transaction; every driver error leaves as a domain error.

        ``write=True`` takes SQLite's write lock at BEGIN. Domain errors raised
        inside roll the transaction back and pass through unchanged.
        """
        if write and self._checkpoint_due is not None:
            self._checkpoint_wal()
        try:
            with self.engine.connect() as conn:
                if write and self.backend == "sqlite":
                    conn.execution_options(classroom_write=True)
                with conn.begin():
                    yield conn
        except ClassroomError:
            raise
        except OverflowError as exc:  # SQLite: a Python int beyond 64 bits, never sent
            raise BadInput(OUT_OF_RANGE) from exc
        except IntegrityError as exc:
            raise Conflict("the data changed while saving (was the poll or question "
                           "deleted?) — not saved; reload and try again") from exc
        except (SQLAlchemyError, DBAPIError) as exc:
            if _out_of_range(exc):  # PostgreSQL: a number beyond its column (22003)
                raise BadInput(OUT_OF_RANGE) from exc
            # The page tells the student "not saved, try again"; the operator's log says
            # which database failed and why (disk full, read-only, refused), password masked.
            _LOG.warning("classroom database %s: %s failed: %s", self.masked_url,
                         "write" if write else "read", driver_reason(exc, self.url))
            if disk_full(exc):
                if self.backend == "sqlite":
                    self._checkpoint_due = 0.0
                    self._checkpoint_wal()
                raise DiskFull(DISK_FULL) from exc
            raise StoreUnavailable(UNAVAILABLE_WRITE if write else UNAVAILABLE_READ) from exc

    def _checkpoint_wal(self) -> None:
        """After a full disk on SQLite: copy the write-ahead log into the database and
        truncate it (``PRAGMA wal_checkpoint(TRUNCATE)``), at most once a second until it
        completes. The log only shrinks at a checkpoint, and a full disk stops the
        automatic ones; without this, the space freed after a full disk went to the log
        (on a 3 MB disk, 35 of 200 resends got through after 2.9 MB was freed)."""
        now = time.monotonic()
        if self._checkpoint_due is None or now - self._checkpoint_due < 1.0:
            return
        self._checkpoint_due = now
        try:
            with self.engine.connect() as conn:  # no BEGIN: the driver is in autocommit
                busy, log, done = conn.connection.dbapi_connection.execute(  # type: ignore[union-attr]
                    "PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except Exception as exc:  # noqa: BLE001 - still full, or locked: the next write tries
            _LOG.info("classroom database %s: WAL checkpoint after a full disk failed: %s",
                      self.masked_url, exc)
            return
        if busy == 0:
            self._checkpoint_due = None
            _LOG.warning("classroom database %s: write-ahead log checkpointed after a full "
                         "disk (%d of %d pages)", self.masked_url, done, log)

    def _ensure_schema(self, migrations: Mapping[int, Callable[[Connection], None]],
                       target: int) -> None:
        with self.engine.connect() as conn:
            if self.backend == "sqlite":
                conn.execution_options(classroom_write=True)
            with conn.begin():
                ensure_schema(conn, self.masked_url, migrations, target)
                if self.backend == "postgresql":
                    changes.install(conn)

    def poll_changes(self) -> AsyncIterator[int | None] | None:
        """The ids of polls whose phones' view another transaction changed, as they are
        committed, from any process (:func:`.changes.poll_changes`); None on SQLite, where
        one process serves the database."""
        if self.backend != "postgresql":
            return None
        return changes.poll_changes(self.engine.url)

    def schema_version(self) -> int:
        with self.transaction(write=False) as conn:
            return int(conn.execute(sa.select(schema_version.c.version)).scalar_one())

    def columns(self, table: str) -> set[str]:
        """Column names of a table as the database has them (for schema tests)."""
        with self.transaction(write=False) as conn:
            return {c["name"] for c in sa.inspect(conn).get_columns(table)}

    # -- polls ----------------------------------------------------------------------------
    def insert_poll(self, join_code: str, title: str, rehearsal: bool,
                    created_at: datetime) -> Poll | None:
        """Insert a poll; None when the join code is taken (the caller draws another)."""
        stmt = (self._insert(polls)
                .values(join_code=join_code, title=title, rehearsal=rehearsal,
                        created_at=created_at)
                .on_conflict_do_nothing()
                .returning(*polls.c))
        with self.transaction(write=True) as conn:
            row = conn.execute(stmt).first()
        return poll_of(row) if row else None

    def poll(self, poll_id: int) -> Poll | None:
        with self.transaction(write=False) as conn:
            row = conn.execute(sa.select(polls).where(polls.c.id == poll_id)).first()
        return poll_of(row) if row else None

    def poll_by_code(self, join_code: str) -> Poll | None:
        with self.transaction(write=False) as conn:
            row = conn.execute(sa.select(polls).where(polls.c.join_code == join_code)).first()
        return poll_of(row) if row else None

    def list_polls(self) -> list[Poll]:
        with self.transaction(write=False) as conn:
            rows = conn.execute(sa.select(polls).order_by(polls.c.created_at.desc(),
                                                          polls.c.id.desc())).all()
        return [poll_of(r) for r in rows]

    def set_budget(self, poll_id: int, budget: float | None) -> Poll | None:
        """Set a poll's budget as it is (the service decides inside :meth:`poll_unit`)."""
        with self.transaction(write=True) as conn:
            return units.set_budget(conn, poll_id, budget)

    def poll_rounds_use(self, poll_id: int) -> list[RoundUse]:
        """Every round of the poll's questions and what it may have cost
        (:func:`units.rounds_use`), from one snapshot."""
        with self.transaction(write=False) as conn:
            return units.rounds_use(conn, poll_id, self.now())

    @contextmanager
    def poll_unit(self, *, poll_id: int | None = None,
                  question_id: int | None = None) -> Iterator[PollUnit]:
        """One decision about a poll (given, or the poll of ``question_id``): a write
        transaction that holds the poll's row (:class:`~.units.PollUnit`)."""
        with self.transaction(write=True) as conn:
            yield PollUnit(conn, clock=self._clock, poll_id=poll_id, question_id=question_id)

    @contextmanager
    def report_unit(self) -> Iterator[ReportUnit]:
        """One report, from its context to its insert, in one write transaction
        (:class:`~.units.ReportUnit`)."""
        with self.transaction(write=True) as conn:
            yield ReportUnit(conn, self.backend, self._stmt_insert_report, clock=self._clock)

    def delete_poll(self, poll_id: int) -> bool:
        with self.transaction(write=True) as conn:
            return conn.execute(polls.delete().where(polls.c.id == poll_id)).rowcount > 0

    # -- questions and rounds -------------------------------------------------------------
    def insert_class(self, *, join_code: str, title: str, rehearsal: bool,
                     budget: float | None, question_rows: Iterable[Mapping[str, Any]],
                     now: datetime) -> tuple[Poll, list[Question]] | None:
        """A poll with its budget and its questions as drafts (each with round 1), in ONE
        transaction: all of it or nothing. ``question_rows`` are ``insert_question``'s
        keywords without ``poll_id`` and ``now``. None when the join code is taken."""
        with self.transaction(write=True) as conn:
            row = conn.execute(
                self._insert(polls)
                .values(join_code=join_code, title=title, rehearsal=rehearsal,
                        created_at=now, epsilon_budget=budget)
                .on_conflict_do_nothing()
                .returning(*polls.c)).first()
            if row is None:
                return None
            poll = poll_of(row)
            added = [units.add_question(conn, poll_id=poll.id, position=i + 1, now=now, **q)
                     for i, q in enumerate(question_rows)]
        return poll, added

    def question(self, question_id: int) -> Question | None:
        with self.transaction(write=False) as conn:
            row = conn.execute(sa.select(*QUESTION_COLS)
                               .where(questions.c.id == question_id)).first()
        return question_of(row, self.now()) if row else None

    def questions(self, poll_id: int) -> list[Question]:
        with self.transaction(write=False) as conn:
            rows = conn.execute(sa.select(*QUESTION_COLS)
                                .where(questions.c.poll_id == poll_id)
                                .order_by(questions.c.position, questions.c.id)).all()
        return [question_of(r, self.now()) for r in rows]

    def delete_question(self, question_id: int) -> bool:
        with self.transaction(write=True) as conn:
            return conn.execute(
                questions.delete().where(questions.c.id == question_id)).rowcount > 0

    def set_state(self, question_id: int, state: str, now: datetime, *,
                  close_others: bool = False) -> Question | None:
        """Set a question's state; with ``close_others`` close every other open question
        of its poll in the same transaction."""
        with self.transaction(write=True) as conn:
            return units.set_state(conn, question_id, state, now, close_others=close_others)

    def set_revealed(self, question_id: int, revealed: bool, now: datetime) -> Question | None:
        with self.transaction(write=True) as conn:
            row = conn.execute(questions.update().where(questions.c.id == question_id)
                               .values(revealed=revealed, updated_at=now)
                               .returning(*QUESTION_COLS)).first()
        return question_of(row, self.now()) if row else None

    def close_expired(self) -> int:
        """Write down the close of every open question whose deadline has passed (each
        at its deadline); the number closed. Idempotent: every process may run it."""
        now = self.now()
        with self.transaction(write=True) as conn:
            return units.close_open(conn, sa.and_(questions.c.closes_at.is_not(None),
                                                  questions.c.closes_at <= now), now)

    def next_deadline(self) -> datetime | None:
        """The earliest deadline of an open question not yet written down as closed."""
        with self.transaction(write=False) as conn:
            value = conn.execute(sa.select(sa.func.min(questions.c.closes_at))
                                 .where(questions.c.state == "open",
                                        questions.c.closes_at.is_not(None))).scalar()
        return None if value is None else as_utc(value)

    def set_countdown(self, question_id: int, seconds: int | None) -> Question | None:
        """Set a question's countdown (None: none); it applies from its next opening."""
        with self.transaction(write=True) as conn:
            row = conn.execute(questions.update().where(questions.c.id == question_id)
                               .values(countdown_s=seconds)
                               .returning(*QUESTION_COLS)).first()
        return question_of(row, self.now()) if row else None

    def rounds(self, question_id: int, kind: str) -> list[Round]:
        with self.transaction(write=False) as conn:
            rows = conn.execute(sa.select(rounds).where(rounds.c.question_id == question_id)
                                .order_by(rounds.c.number)).all()
        return [round_of(r, kind) for r in rows]

    # -- reports ---------------------------------------------------------------------------
    def current_round_secret(self, question_id: int) -> tuple[Question, RoundSecret] | None:
        with self.transaction(write=False) as conn:
            row = conn.execute(
                sa.select(*QUESTION_COLS, rounds.c.id.label("r_id"),
                          rounds.c.salt.label("r_salt"))
                .select_from(questions.join(
                    rounds, sa.and_(rounds.c.question_id == questions.c.id,
                                    rounds.c.number == questions.c.round_count)))
                .where(questions.c.id == question_id)).first()
        if row is None:
            return None
        return question_of(row, self.now()), RoundSecret(row.r_id, row.round_count,
                                                         bytes.fromhex(row.r_salt))

    def device_reports(self, poll_id: int, tokens: Callable[[RoundSecret], str], *,
                       question_id: int | None = None
                       ) -> tuple[Question | None, list[RoundSecret], list[ReportRow]] | None:
        """From one snapshot: the question ``question_id`` (if asked for and part of the
        poll), every round of the poll with its salt, and the reports whose token in their
        round is ``tokens(round)``. None when there is no such poll."""
        with self.transaction(write=False) as conn:
            question = None
            if question_id is not None:
                row = conn.execute(self._stmt_question, {"question_id": question_id}).first()
                question = question_of(row, self.now()) \
                    if row is not None and row.poll_id == poll_id \
                    else None
            secrets_ = units.poll_round_secrets(conn, poll_id)
            if not secrets_:
                exists = conn.execute(sa.select(polls.c.id).where(polls.c.id == poll_id)
                                      ).first()
                return (question, [], []) if exists else None
            return question, secrets_, units.reports_by_tokens(
                conn, ((s.round_id, tokens(s)) for s in secrets_))

    def insert_reports(self, rows: Iterable[dict[str, Any]]) -> int:
        """Insert many reports in one transaction (all or nothing)."""
        batch = list(rows)
        if not batch:
            return 0
        with self.transaction(write=True) as conn:
            conn.execute(reports.insert(), batch)
        return len(batch)

    def delete_simulated(self, question_id: int) -> int:
        round_ids = sa.select(rounds.c.id).where(rounds.c.question_id == question_id)
        with self.transaction(write=True) as conn:
            return conn.execute(reports.delete().where(reports.c.simulated.is_(True),
                                                       reports.c.round_id.in_(round_ids))
                                ).rowcount

    # -- reading reports back -------------------------------------------------------------
    def estimate_inputs(self, question_id: int, *, include_simulated: bool = True,
                        with_answers: bool = False) -> EstimateInputs | None:
        """The question, its rounds, its grouped counts and its distinct-address counts,
        from one snapshot.

        Groups are ``(round number, design JSON, answer, simulated, count)``:
        one aggregate over ``reports`` by ``round_id`` (served by the covering
        index ``ix_reports_round_group``), round ids mapped to numbers here.
        ``addresses`` maps a round number to the number of distinct address tags
        among its real reports (rounds without any are absent). ``with_answers``
        also reads a yes/no question's current round in arrival order, in the same
        snapshot.
        """
        with self.transaction(write=False) as conn:
            qrow = conn.execute(self._stmt_question, {"question_id": question_id}).first()
            if qrow is None:
                return None
            question = question_of(qrow, self.now())
            round_rows = conn.execute(self._stmt_rounds, {"question_id": question_id}).all()
            ids = [r.id for r in round_rows]
            stmt = self._stmt_grouped if include_simulated else self._stmt_grouped_real
            rows = conn.execute(stmt, {"round_ids": ids}).all()
            tagged = conn.execute(self._stmt_addresses, {"round_ids": ids}).all()
            answers = None
            if with_answers and kind(question.kind).trajectory:
                current = [r.id for r in round_rows if r.number == question.round_number]
                answers = [(r.design_params, r.answer) for r in conn.execute(
                    self._answers_stmt(current, include_simulated))]
        numbers = {r.id: r.number for r in round_rows}
        return EstimateInputs(
            question, [round_of(r, question.kind) for r in round_rows],
            [(numbers[r[0]], r[1], r[2], bool(r[3]), int(r[4])) for r in rows],
            {numbers[r[0]]: int(r[1]) for r in tagged if r[1]}, answers)

    @staticmethod
    def _answers_stmt(round_ids: list[int], include_simulated: bool) -> sa.Select[Any]:
        stmt = (sa.select(reports.c.design_params, reports.c.answer)
                .where(reports.c.round_id.in_(round_ids)).order_by(reports.c.id))
        return stmt if include_simulated else stmt.where(reports.c.simulated.is_(False))

    def export_rows(self, question_id: int, *, include_simulated: bool
                    ) -> list[tuple[int, str, str, datetime]]:
        """``(round number, answer, design JSON, created_at)`` in arrival order."""
        stmt = (sa.select(rounds.c.number, reports.c.answer, reports.c.design_params,
                          reports.c.created_at)
                .select_from(rounds.join(reports, reports.c.round_id == rounds.c.id))
                .where(rounds.c.question_id == question_id)
                .order_by(rounds.c.number, reports.c.id))
        if not include_simulated:
            stmt = stmt.where(reports.c.simulated.is_(False))
        with self.transaction(write=False) as conn:
            return [(r[0], r[1], r[2], as_utc(r[3])) for r in conn.execute(stmt)]

    # -- instructor sessions and one-time login links -------------------------------------
    def add_session(self, id_hash: str, created_at: datetime, expires_at: datetime) -> None:
        """Store a new instructor session (and forget expired sessions and links)."""
        with self.transaction(write=True) as conn:
            conn.execute(instructor_sessions.delete()
                         .where(instructor_sessions.c.expires_at <= created_at))
            conn.execute(used_login_links.delete()
                         .where(used_login_links.c.expires_at <= created_at))
            conn.execute(instructor_sessions.insert().values(
                id_hash=id_hash, created_at=created_at, expires_at=expires_at))

    def session_expiry(self, id_hash: str) -> datetime | None:
        """When this session expires, or None if there is no such session."""
        with self.transaction(write=False) as conn:
            value = conn.execute(sa.select(instructor_sessions.c.expires_at)
                                 .where(instructor_sessions.c.id_hash == id_hash)).scalar()
        return None if value is None else as_utc(value)

    def delete_session(self, id_hash: str) -> bool:
        with self.transaction(write=True) as conn:
            return bool(conn.execute(instructor_sessions.delete()
                                     .where(instructor_sessions.c.id_hash == id_hash)).rowcount)

    def delete_all_sessions(self) -> int:
        with self.transaction(write=True) as conn:
            return int(conn.execute(instructor_sessions.delete()).rowcount)

    def use_login_link(self, nonce_hash: str, expires_at: datetime) -> bool:
        """Mark a one-time login link as used: True the first time, False ever after."""
        stmt = (self._insert(used_login_links)
                .values(nonce_hash=nonce_hash, expires_at=expires_at)
                .on_conflict_do_nothing()
                .returning(used_login_links.c.nonce_hash))
        with self.transaction(write=True) as conn:
            return conn.execute(stmt).first() is not None

    # -- lesson plans ---------------------------------------------------------------------
    def insert_plan(self, title: str, document: str, now: datetime) -> SavedPlan:
        with self.transaction(write=True) as conn:
            row = conn.execute(plans.insert()
                               .values(title=title, document=document, created_at=now,
                                       updated_at=now)
                               .returning(*plans.c)).one()
        return saved_plan_of(row)

    def update_plan(self, plan_id: int, title: str, document: str,
                    now: datetime) -> SavedPlan | None:
        """Replace a saved plan's file; None when there is no such plan."""
        with self.transaction(write=True) as conn:
            row = conn.execute(plans.update().where(plans.c.id == plan_id)
                               .values(title=title, document=document, updated_at=now)
                               .returning(*plans.c)).first()
        return saved_plan_of(row) if row else None

    def plan(self, plan_id: int) -> SavedPlan | None:
        with self.transaction(write=False) as conn:
            row = conn.execute(sa.select(plans).where(plans.c.id == plan_id)).first()
        return saved_plan_of(row) if row else None

    def list_plans(self) -> list[SavedPlan]:
        """Every saved plan, the most recently changed first."""
        with self.transaction(write=False) as conn:
            rows = conn.execute(sa.select(plans).order_by(plans.c.updated_at.desc(),
                                                          plans.c.id.desc())).all()
        return [saved_plan_of(r) for r in rows]

    def delete_plan(self, plan_id: int) -> bool:
        with self.transaction(write=True) as conn:
            return conn.execute(plans.delete().where(plans.c.id == plan_id)).rowcount > 0
