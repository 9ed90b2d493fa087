"""The store: SQLAlchemy Core tables, the engine and transactions.

This is the only module of the classroom with SQL in it. It knows nothing of
randomized response; it persists rows and answers grouped queries, returning
frozen domain objects or plain tuples.

* SQLite (default): WAL, ``busy_timeout`` 10 s, ``synchronous=NORMAL`` (a
  committed transaction survives a crash of the process), foreign keys on;
  write transactions begin with ``BEGIN IMMEDIATE`` so that concurrent writers
  wait on the busy timeout instead of failing when a read lock cannot be
  upgraded.
* PostgreSQL through psycopg 3, ``pool_pre_ping``, 5 s connect timeout.

:meth:`Store.transaction` is the single place where driver errors become
domain errors. The schema is created on first start; ``schema_version`` and
:data:`MIGRATIONS` upgrade an existing database in place.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import DBAPIError, IntegrityError, SQLAlchemyError

from . import config
from .domain import (
    MAX_COUNTDOWN_S,
    MIN_COUNTDOWN_S,
    AddressLimit,
    ClassroomError,
    ConfigError,
    Conflict,
    DiskFull,
    Poll,
    Question,
    QuestionClosed,
    Round,
    StoreUnavailable,
    as_utc,
)
from .plans import SavedPlan

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "EstimateInputs",
    "ReportRow",
    "RoundSecret",
    "RoundUse",
    "Store",
    "make_engine",
    "metadata",
    "plans",
]

#: The schema version this code creates and understands.
SCHEMA_VERSION = 4

SQLITE_BUSY_TIMEOUT_S = 10
PG_CONNECT_TIMEOUT_S = 5
#: The connection pool of a process's one engine on PostgreSQL: this many kept open,
#: up to :data:`PG_MAX_OVERFLOW` more under load, so at most 20 connections per process
#: (five app processes fit under PostgreSQL's default ``max_connections = 100``). A
#: report holds one for about a millisecond.
PG_POOL_SIZE = 5
PG_MAX_OVERFLOW = 15
#: SQLite's pool (connections to a file, cheap; writers queue on the busy timeout).
SQLITE_POOL_SIZE = 10
SQLITE_MAX_OVERFLOW = 30
_PG_SCHEMA_LOCK_KEY = 0x1D9C1A55  # advisory lock serialising schema set-up

_LOG = logging.getLogger(__name__)

UNAVAILABLE_WRITE = "database unavailable, not saved — try again"
UNAVAILABLE_READ = "database unavailable — try again"
DISK_FULL = ("the database's disk is full, so nothing was saved — free some space on the "
             "server, then try again")
#: PostgreSQL's SQLSTATE for "disk full".
_PG_DISK_FULL = "53100"


# -- schema -------------------------------------------------------------------------------

metadata = sa.MetaData()

schema_version = sa.Table(
    "schema_version", metadata,
    sa.Column("version", sa.Integer, nullable=False),
)

polls = sa.Table(
    "polls", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("join_code", sa.String(16), nullable=False, unique=True),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("rehearsal", sa.Boolean, nullable=False, default=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    # The poll's privacy budget: the most ε one student may spend in it (NULL: none).
    sa.Column("epsilon_budget", sa.Float, nullable=True),
)

#: The kinds a question may have; schema version 2 allowed only the first two.
_KIND_CHECK = "kind IN ('binary', 'categorical', 'numeric')"
_OLD_KIND_CHECK = "kind IN ('binary', 'categorical')"
_COUNTDOWN_CHECK = (f"countdown_s IS NULL OR countdown_s BETWEEN {MIN_COUNTDOWN_S} "
                    f"AND {MAX_COUNTDOWN_S}")

questions = sa.Table(
    "questions", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("poll_id", sa.Integer, sa.ForeignKey("polls.id", ondelete="CASCADE"),
              nullable=False, index=True),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("options", sa.Text, nullable=False),  # JSON list of labels
    sa.Column("design_params", sa.Text, nullable=False),  # JSON, the current round's design
    sa.Column("mode", sa.String(16), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("revealed", sa.Boolean, nullable=False, default=False),
    sa.Column("round_count", sa.Integer, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    # Seconds of voting before the round closes by itself (NULL: no countdown). A
    # column-level check, so that a fresh table and one upgraded to version 4 agree.
    sa.Column("countdown_s", sa.Integer,
              sa.CheckConstraint(_COUNTDOWN_CHECK, name="ck_questions_countdown"),
              nullable=True),
    sa.CheckConstraint(_KIND_CHECK, name="ck_questions_kind"),
    sa.CheckConstraint("mode IN ('device', 'physical')", name="ck_questions_mode"),
    sa.CheckConstraint("state IN ('draft', 'open', 'closed')", name="ck_questions_state"),
)

rounds = sa.Table(
    "rounds", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("question_id", sa.Integer, sa.ForeignKey("questions.id", ondelete="CASCADE"),
              nullable=False),
    sa.Column("number", sa.Integer, nullable=False),
    sa.Column("design_params", sa.Text, nullable=False),  # JSON
    sa.Column("salt", sa.String(64), nullable=False),  # hex, secret
    sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
    sa.UniqueConstraint("question_id", "number", name="uq_rounds_question_number"),
)

# Byte-wise comparison for the columns the dashboard groups by: PostgreSQL's
# default collation makes grouping/sorting 10,000 JSON strings several times
# slower, and equality of canonical JSON is byte equality anyway. (SQLite's
# default BINARY collation is already byte-wise.)
_GroupText = sa.Text().with_variant(sa.Text(collation="C"), "postgresql")
_GroupString = sa.String(32).with_variant(sa.String(32, collation="C"), "postgresql")

#: One randomized report. There is deliberately no column for a true answer or
#: a device id; tests assert this exact column set.
reports = sa.Table(
    "reports", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("round_id", sa.Integer, sa.ForeignKey("rounds.id", ondelete="CASCADE"),
              nullable=False),
    sa.Column("answer", _GroupString, nullable=False),
    sa.Column("design_params", _GroupText, nullable=False),  # JSON it was produced under
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("submission_id", sa.String(100), nullable=False, unique=True),
    sa.Column("dedup_token", sa.String(64), nullable=False),
    sa.Column("simulated", sa.Boolean, nullable=False, default=False),
    # HMAC of the sender's network address under the round's salt (never the address):
    # counts distinct addresses per round and nothing across rounds. NULL for simulated
    # and imported reports.
    sa.Column("address_tag", sa.String(64), nullable=True),
    sa.UniqueConstraint("round_id", "dedup_token", name="uq_reports_round_token"),
    # Covers the dashboard's grouped query without touching the table.
    sa.Index("ix_reports_round_group", "round_id", "design_params", "answer", "simulated"),
    sa.Index("ix_reports_round_address", "round_id", "address_tag"),
)

#: Logged-in instructor browsers. The cookie holds a random session id; only its
#: HMAC under the instructor key is stored, so a copy of the database logs nobody in.
instructor_sessions = sa.Table(
    "instructor_sessions", metadata,
    sa.Column("id_hash", sa.String(64), primary_key=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
)

#: One-time login links already used (an HMAC of their nonce), until they expire anyway.
used_login_links = sa.Table(
    "used_login_links", metadata,
    sa.Column("nonce_hash", sa.String(64), primary_key=True),
    sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
)

#: Saved lesson plans (classroom.plans), each kept as its TOML file: a plan is read and
#: written whole, never queried by question, and the file is what export and import use.
plans = sa.Table(
    "plans", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("document", sa.Text, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)


def _migrate_1_to_2(conn: Connection) -> None:
    """Version 2: per-round address tags on reports, instructor sessions, used links."""
    conn.execute(sa.text("ALTER TABLE reports ADD COLUMN address_tag VARCHAR(64)"))
    next(i for i in reports.indexes if i.name == "ix_reports_round_address").create(conn)
    metadata.create_all(conn, tables=[instructor_sessions, used_login_links])


def _migrate_2_to_3(conn: Connection) -> None:
    """Version 3: a privacy budget per poll, and numeric questions."""
    conn.execute(sa.text("ALTER TABLE polls ADD COLUMN epsilon_budget FLOAT"))
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("ALTER TABLE questions DROP CONSTRAINT ck_questions_kind"))
        conn.execute(sa.text(f"ALTER TABLE questions ADD CONSTRAINT ck_questions_kind "
                             f"CHECK ({_KIND_CHECK})"))
        return
    # SQLite cannot alter a CHECK constraint. Its documented way to widen one without
    # rebuilding the table (which would cascade to the rounds and reports) is to edit the
    # table's definition in sqlite_schema and bump the schema version ("ALTER TABLE",
    # section "Making other kinds of table schema changes").
    sql: str = conn.execute(sa.text("SELECT sql FROM sqlite_master WHERE type = 'table' "
                                    "AND name = 'questions'")).scalar_one()
    if sql.count(_OLD_KIND_CHECK) != 1:
        raise ConfigError("the questions table has an unexpected definition; it cannot be "
                          "upgraded to schema version 3")
    version: int = conn.execute(sa.text("PRAGMA schema_version")).scalar_one()
    conn.execute(sa.text("PRAGMA writable_schema = ON"))
    conn.execute(sa.text("UPDATE sqlite_master SET sql = :sql WHERE type = 'table' "
                         "AND name = 'questions'"),
                 {"sql": sql.replace(_OLD_KIND_CHECK, _KIND_CHECK)})
    conn.execute(sa.text(f"PRAGMA schema_version = {int(version) + 1}"))
    conn.execute(sa.text("PRAGMA writable_schema = OFF"))


#: ``MIGRATIONS[v](conn)`` upgrades a version-``v`` database to ``v + 1`` inside
#: the start-up transaction.
def _migrate_3_to_4(conn: Connection) -> None:
    """Version 4: lesson plans, and a countdown per question."""
    conn.execute(sa.text(f"ALTER TABLE questions ADD COLUMN countdown_s INTEGER CONSTRAINT "
                         f"ck_questions_countdown CHECK ({_COUNTDOWN_CHECK})"))
    metadata.create_all(conn, tables=[plans])


MIGRATIONS: Mapping[int, Callable[[Connection], None]] = MappingProxyType(
    {1: _migrate_1_to_2, 2: _migrate_2_to_3, 3: _migrate_3_to_4})


# -- engine -------------------------------------------------------------------------------


def _sqlite_pragmas(busy_timeout_s: float) -> Callable[[Any, Any], None]:
    def on_connect(dbapi_conn: Any, _record: Any) -> None:
        _sqlite_on_connect(dbapi_conn, busy_timeout_s)
    return on_connect


def _sqlite_on_connect(dbapi_conn: Any, busy_timeout_s: float) -> None:
    dbapi_conn.isolation_level = None  # we issue BEGIN ourselves (see _sqlite_on_begin)
    cur = dbapi_conn.cursor()
    try:
        cur.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA synchronous = NORMAL")
        cur.execute("PRAGMA foreign_keys = ON")
    finally:
        cur.close()


def _sqlite_on_begin(conn: Connection) -> None:
    write = conn.get_execution_options().get("classroom_write", False)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def _private_sqlite_files(database: str | None) -> None:
    """Create the SQLite file readable by its owner only (0600), before SQLite does.

    SQLite gives its ``-wal`` and ``-shm`` files the database file's permissions,
    so they are private too; files left by an older version are tightened. The
    salts and tokens inside must not be readable by other local users.
    """
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    path = Path(database)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    except OSError:
        return  # a missing or read-only directory: SQLite reports it, with the path
    else:
        os.close(fd)
    for name in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            if name.exists() and name.stat().st_mode & 0o077:
                name.chmod(0o600)
        except OSError:
            pass


def make_engine(url: str, *, busy_timeout_s: float = SQLITE_BUSY_TIMEOUT_S) -> Engine:
    """Create the engine for a configured URL (no connection is made yet).

    ``busy_timeout_s``: how long a SQLite writer waits for the write lock.
    """
    url = config.normalize_url(url)
    backend = make_url(url).get_backend_name()
    if backend == "sqlite":
        _private_sqlite_files(make_url(url).database)
        engine = sa.create_engine(
            url, pool_size=SQLITE_POOL_SIZE, max_overflow=SQLITE_MAX_OVERFLOW, pool_timeout=30,
            connect_args={"timeout": busy_timeout_s, "check_same_thread": False})
        event.listen(engine, "connect", _sqlite_pragmas(busy_timeout_s))
        event.listen(engine, "begin", _sqlite_on_begin)
        return engine
    return sa.create_engine(
        url, pool_pre_ping=True, pool_size=PG_POOL_SIZE, max_overflow=PG_MAX_OVERFLOW,
        pool_timeout=30,
        connect_args={"connect_timeout": PG_CONNECT_TIMEOUT_S})


def _disk_full(exc: BaseException) -> bool:
    """Whether a driver error says the disk is full (SQLite's SQLITE_FULL, PostgreSQL's
    SQLSTATE 53100, or ENOSPC from the file system)."""
    orig = getattr(exc, "orig", None) or exc
    if getattr(orig, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
        return True
    if getattr(orig, "sqlstate", None) == _PG_DISK_FULL:
        return True
    return isinstance(orig, OSError) and orig.errno == errno.ENOSPC


def _reason(exc: BaseException, url: str) -> str:
    """The first line of a driver error, with any password removed."""
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
    try:
        password = make_url(url).password
    except Exception:  # noqa: BLE001 - best effort only
        password = None
    if password:
        text = text.replace(str(password), "***")
    return text[:300]


# -- rows ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RoundSecret:
    """A round's id with its salt: for computing dedup tokens, never for display."""

    round_id: int
    number: int
    salt: bytes = b""

    def __repr__(self) -> str:  # keep the salt out of logs and tracebacks
        return f"RoundSecret(round_id={self.round_id}, number={self.number}, salt=<hidden>)"


@dataclass(frozen=True)
class ReportRow:
    round_id: int
    answer: str
    design_json: str
    created_at: datetime
    simulated: bool
    submission_id_matched: bool = False


class EstimateInputs(NamedTuple):
    """What one estimate needs, read in one transaction (see :meth:`Store.estimate_inputs`)."""

    question: Question
    rounds: list[Round]
    groups: list[tuple[int, str, str, bool, int]]
    addresses: dict[int, int]
    #: ``(design JSON, answer)`` of the current round in arrival order, when asked for
    #: (yes/no questions only), else None.
    answers: list[tuple[str, str]] | None = None


@dataclass(frozen=True)
class RoundUse:
    """What a round of a poll may have cost its students (see ``PollService.budget``)."""

    question_id: int
    number: int
    design_json: str
    current: bool
    question_state: str
    reports: int
    #: The designs of the round's real reports (a round's design can change while open).
    report_designs: tuple[str, ...] = ()


_QUESTION_COLS = (
    questions.c.id, questions.c.poll_id, questions.c.position, questions.c.text,
    questions.c.kind, questions.c.options, questions.c.design_params, questions.c.mode,
    questions.c.state, questions.c.revealed, questions.c.created_at, questions.c.updated_at,
    questions.c.round_count, questions.c.countdown_s,
)


def _poll(row: Any) -> Poll:
    return Poll(id=row.id, join_code=row.join_code, title=row.title,
                created_at=as_utc(row.created_at), rehearsal=bool(row.rehearsal),
                epsilon_budget=row.epsilon_budget)


def _question(row: Any) -> Question:
    return Question(
        id=row.id, poll_id=row.poll_id, position=row.position, text=row.text,
        kind=row.kind, options=tuple(json.loads(row.options)), design_json=row.design_params,
        mode=row.mode, state=row.state, revealed=bool(row.revealed),
        created_at=as_utc(row.created_at), updated_at=as_utc(row.updated_at),
        round_number=row.round_count, countdown_s=row.countdown_s)


def _saved_plan(row: Any) -> SavedPlan:
    return SavedPlan(id=row.id, title=row.title, document=row.document,
                     created_at=as_utc(row.created_at), updated_at=as_utc(row.updated_at))


def _round(row: Any, kind: str) -> Round:
    return Round(id=row.id, question_id=row.question_id, number=row.number,
                 design_json=row.design_params, opened_at=as_utc(row.opened_at), kind=kind)


def _report_context_stmt() -> sa.Select[Any]:
    qid = sa.bindparam("question_id", type_=sa.Integer)
    return (sa.select(polls.c.id.label("p_id"), polls.c.join_code.label("p_code"),
                      polls.c.title.label("p_title"), polls.c.created_at.label("p_created"),
                      polls.c.rehearsal.label("p_rehearsal"),
                      polls.c.epsilon_budget.label("p_budget"), *_QUESTION_COLS,
                      rounds.c.id.label("r_id"), rounds.c.salt.label("r_salt"))
            .select_from(polls.outerjoin(
                questions, sa.and_(questions.c.poll_id == polls.c.id, questions.c.id == qid))
                .outerjoin(rounds, sa.and_(rounds.c.question_id == questions.c.id,
                                           rounds.c.number == questions.c.round_count)))
            .where(polls.c.join_code == sa.bindparam("join_code", type_=sa.String)))


# -- the store ----------------------------------------------------------------------------


class Store:
    """Persistence for polls, questions, rounds and reports on one engine.

    Create one per process (the app's composition root, :mod:`web.root`, does). It
    is thread-safe: every method takes a pooled connection for one
    transaction. ``url=None`` reads :func:`classroom.config.database_url`.
    """

    def __init__(self, url: str | None = None, *,
                 migrations: Mapping[int, Callable[[Connection], None]] = MIGRATIONS,
                 target_version: int = SCHEMA_VERSION,
                 busy_timeout_s: float = SQLITE_BUSY_TIMEOUT_S) -> None:
        raw = config.database_url() if url is None else config.normalize_url(url)
        self.url = raw
        self.masked_url = config.masked_url(raw)
        self.engine = make_engine(raw, busy_timeout_s=busy_timeout_s)
        self.backend = self.engine.dialect.name  # "sqlite" | "postgresql"
        self._insert = sqlite_dialect.insert if self.backend == "sqlite" else pg_dialect.insert
        # The report path's statements, built once (bound per call): building Core
        # statements costs more CPU than running them on SQLite.
        self._stmt_context = _report_context_stmt()
        self._stmt_insert_report = (self._insert(reports)
                                    .on_conflict_do_nothing()
                                    .returning(reports.c.id))
        # Locks the question row for the insert's transaction (FOR SHARE on PostgreSQL;
        # SQLite's BEGIN IMMEDIATE already serialises writers): a close or a new round
        # either committed before, and the report is refused, or waits for it.
        self._stmt_round_open = (sa.select(questions.c.state)
                                 .select_from(rounds.join(questions,
                                                          rounds.c.question_id == questions.c.id))
                                 .where(rounds.c.id == sa.bindparam("round_id"),
                                        rounds.c.number == questions.c.round_count)
                                 .with_for_update(read=True, of=questions))
        self._stmt_address_count = (sa.select(sa.func.count()).select_from(reports)
                                    .where(reports.c.round_id == sa.bindparam("round_id"),
                                           reports.c.address_tag == sa.bindparam("tag")))
        same_device = sa.and_(reports.c.round_id == sa.bindparam("round_id"),
                              reports.c.dedup_token == sa.bindparam("token"))
        self._stmt_duplicate = sa.select(reports.c.id).where(
            sa.or_(same_device, reports.c.submission_id == sa.bindparam("sid")))
        self._stmt_addresses = (sa.select(reports.c.round_id,
                                          sa.func.count(sa.distinct(reports.c.address_tag)))
                                .where(reports.c.round_id.in_(sa.bindparam("round_ids",
                                                                           expanding=True)),
                                       reports.c.simulated.is_(False))
                                .group_by(reports.c.round_id))
        self._stmt_question = sa.select(*_QUESTION_COLS).where(
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
        try:
            self._ensure_schema(migrations, target_version)
        except ClassroomError:
            self.engine.dispose()
            raise
        except (SQLAlchemyError, OSError) as exc:
            self.engine.dispose()
            raise StoreUnavailable(
                f"cannot open the classroom database {self.masked_url}: "
                f"{_reason(exc, raw)}. Check {config.DATABASE_URL_ENV} (or "
                f"{config.SECRETS_KEY} in .streamlit/secrets.toml)") from exc

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    def __repr__(self) -> str:
        return f"Store({self.masked_url!r})"

    # -- transactions ---------------------------------------------------------------------
    @contextmanager
    def transaction(self, *, write: bool) -> Iterator[Connection]:
        """One transaction; every driver error leaves as a domain error.

        ``write=True`` takes SQLite's write lock at BEGIN. Domain errors raised
        inside roll the transaction back and pass through unchanged.
        """
        try:
            with self.engine.connect() as conn:
                if write and self.backend == "sqlite":
                    conn.execution_options(classroom_write=True)
                with conn.begin():
                    yield conn
        except ClassroomError:
            raise
        except IntegrityError as exc:
            raise Conflict("the data changed while saving (was the poll or question "
                           "deleted?) — not saved; reload and try again") from exc
        except (SQLAlchemyError, DBAPIError) as exc:
            # The page tells the student "not saved, try again"; the operator's log says
            # which database failed and why (disk full, read-only, refused), password masked.
            _LOG.warning("classroom database %s: %s failed: %s", self.masked_url,
                         "write" if write else "read", _reason(exc, self.url))
            if _disk_full(exc):
                raise DiskFull(DISK_FULL) from exc
            raise StoreUnavailable(UNAVAILABLE_WRITE if write else UNAVAILABLE_READ) from exc

    def _ensure_schema(self, migrations: Mapping[int, Callable[[Connection], None]],
                       target: int) -> None:
        with self.engine.connect() as conn:
            if self.backend == "sqlite":
                conn.execution_options(classroom_write=True)
            with conn.begin():
                if self.backend == "postgresql":
                    conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"),
                                 {"k": _PG_SCHEMA_LOCK_KEY})
                inspector = sa.inspect(conn)
                if not inspector.has_table("schema_version"):
                    metadata.create_all(conn)
                    conn.execute(schema_version.insert().values(version=target))
                    return
                version = conn.execute(sa.select(schema_version.c.version)).scalar()
                if version is None:
                    metadata.create_all(conn)
                    conn.execute(schema_version.insert().values(version=target))
                    return
                if version > target:
                    raise StoreUnavailable(
                        f"the classroom database {self.masked_url} has schema version "
                        f"{version}, newer than this app understands ({target}); "
                        "upgrade the app instead of pointing it at this database")
                start = version
                while version < target:
                    step = migrations.get(version)
                    if step is None:
                        raise StoreUnavailable(
                            f"no migration from schema version {version} to {version + 1} "
                            f"for {self.masked_url}; the database was left unchanged")
                    step(conn)
                    version += 1
                if version != start:
                    conn.execute(schema_version.update().values(version=version))

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
        return _poll(row) if row else None

    def poll(self, poll_id: int) -> Poll | None:
        with self.transaction(write=False) as conn:
            row = conn.execute(sa.select(polls).where(polls.c.id == poll_id)).first()
        return _poll(row) if row else None

    def poll_by_code(self, join_code: str) -> Poll | None:
        with self.transaction(write=False) as conn:
            row = conn.execute(sa.select(polls).where(polls.c.join_code == join_code)).first()
        return _poll(row) if row else None

    def list_polls(self) -> list[Poll]:
        with self.transaction(write=False) as conn:
            rows = conn.execute(sa.select(polls).order_by(polls.c.created_at.desc(),
                                                          polls.c.id.desc())).all()
        return [_poll(r) for r in rows]

    def set_budget(self, poll_id: int, budget: float | None) -> Poll | None:
        with self.transaction(write=True) as conn:
            row = conn.execute(polls.update().where(polls.c.id == poll_id)
                               .values(epsilon_budget=budget).returning(*polls.c)).first()
        return _poll(row) if row else None

    def poll_rounds_use(self, poll_id: int) -> list[RoundUse]:
        """Every round of the poll's questions: its design, whether it is its question's
        current round, the question's state, its number of real reports and the designs
        those reports were made under."""
        with self.transaction(write=False) as conn:
            rows = conn.execute(
                sa.select(rounds.c.id.label("r_id"), questions.c.id, questions.c.state,
                          questions.c.round_count, rounds.c.number, rounds.c.design_params)
                .select_from(rounds.join(questions, rounds.c.question_id == questions.c.id))
                .where(questions.c.poll_id == poll_id)
                .order_by(questions.c.position, rounds.c.number)).all()
            used = conn.execute(
                sa.select(reports.c.round_id, reports.c.design_params, sa.func.count())
                .where(reports.c.round_id.in_([r.r_id for r in rows]),
                       sa.not_(reports.c.simulated))
                .group_by(reports.c.round_id, reports.c.design_params)).all() if rows else []
        designs: dict[int, list[str]] = {}
        counts: dict[int, int] = {}
        for row in used:
            round_id, design_json, n = int(row[0]), str(row[1]), int(row[2])
            designs.setdefault(round_id, []).append(design_json)
            counts[round_id] = counts.get(round_id, 0) + n
        return [RoundUse(question_id=r.id, number=r.number, design_json=r.design_params,
                         current=r.number == r.round_count, question_state=r.state,
                         reports=counts.get(r.r_id, 0),
                         report_designs=tuple(designs.get(r.r_id, ())))
                for r in rows]

    def delete_poll(self, poll_id: int) -> bool:
        with self.transaction(write=True) as conn:
            return conn.execute(polls.delete().where(polls.c.id == poll_id)).rowcount > 0

    # -- questions and rounds -------------------------------------------------------------
    @staticmethod
    def _add_question(conn: Connection, *, poll_id: int, position: int, text: str, kind: str,
                      options_json: str, design_json: str, mode: str, salt: bytes,
                      now: datetime, countdown_s: int | None = None) -> Any:
        """Insert a draft question and its round 1 on ``conn``; the question's row."""
        row = conn.execute(
            questions.insert().values(
                poll_id=poll_id, position=position, text=text, kind=kind,
                options=options_json, design_params=design_json, mode=mode,
                state="draft", revealed=False, round_count=1, created_at=now,
                updated_at=now, countdown_s=countdown_s)
            .returning(*_QUESTION_COLS)).one()
        conn.execute(rounds.insert().values(
            question_id=row.id, number=1, design_params=design_json, salt=salt.hex(),
            opened_at=now))
        return row

    def insert_question(self, *, poll_id: int, text: str, kind: str, options_json: str,
                        design_json: str, mode: str, salt: bytes, now: datetime,
                        countdown_s: int | None = None) -> Question | None:
        """Insert a draft question and its round 1; None when the poll does not exist."""
        with self.transaction(write=True) as conn:
            # Lock the poll row so concurrent additions get distinct positions (SQLite's
            # BEGIN IMMEDIATE already serialises writers; FOR UPDATE is a no-op there).
            exists = conn.execute(sa.select(polls.c.id).where(polls.c.id == poll_id)
                                  .with_for_update()).first()
            if not exists:
                return None
            position = conn.execute(
                sa.select(sa.func.coalesce(sa.func.max(questions.c.position), 0))
                .where(questions.c.poll_id == poll_id)).scalar_one() + 1
            row = self._add_question(
                conn, poll_id=poll_id, position=position, text=text, kind=kind,
                options_json=options_json, design_json=design_json, mode=mode, salt=salt,
                now=now, countdown_s=countdown_s)
        return _question(row)

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
            poll = _poll(row)
            added = [_question(self._add_question(conn, poll_id=poll.id, position=i + 1,
                                                  now=now, **q))
                     for i, q in enumerate(question_rows)]
        return poll, added

    def question(self, question_id: int) -> Question | None:
        with self.transaction(write=False) as conn:
            row = conn.execute(sa.select(*_QUESTION_COLS)
                               .where(questions.c.id == question_id)).first()
        return _question(row) if row else None

    def questions(self, poll_id: int) -> list[Question]:
        with self.transaction(write=False) as conn:
            rows = conn.execute(sa.select(*_QUESTION_COLS)
                                .where(questions.c.poll_id == poll_id)
                                .order_by(questions.c.position, questions.c.id)).all()
        return [_question(r) for r in rows]

    def delete_question(self, question_id: int) -> bool:
        with self.transaction(write=True) as conn:
            return conn.execute(
                questions.delete().where(questions.c.id == question_id)).rowcount > 0

    def set_state(self, question_id: int, state: str, now: datetime, *,
                  close_others: bool = False) -> Question | None:
        """Set a question's state; with ``close_others`` close every other open question
        of its poll in the same transaction."""
        with self.transaction(write=True) as conn:
            row = conn.execute(questions.update().where(questions.c.id == question_id)
                               .values(state=state, updated_at=now)
                               .returning(*_QUESTION_COLS)).first()
            if row is not None and close_others:
                conn.execute(questions.update()
                             .where(questions.c.poll_id == row.poll_id,
                                    questions.c.id != question_id,
                                    questions.c.state == "open")
                             .values(state="closed", updated_at=now))
        return _question(row) if row else None

    def set_revealed(self, question_id: int, revealed: bool, now: datetime) -> Question | None:
        with self.transaction(write=True) as conn:
            row = conn.execute(questions.update().where(questions.c.id == question_id)
                               .values(revealed=revealed, updated_at=now)
                               .returning(*_QUESTION_COLS)).first()
        return _question(row) if row else None

    def set_design(self, question_id: int, design_json: str, now: datetime) -> Question | None:
        """Change the design of the question and of its current round.

        ``updated_at`` is left alone: it records changes of state and reveal.
        """
        with self.transaction(write=True) as conn:
            row = conn.execute(questions.update().where(questions.c.id == question_id)
                               .values(design_params=design_json)
                               .returning(*_QUESTION_COLS)).first()
            if row is None:
                return None
            conn.execute(rounds.update()
                         .where(rounds.c.question_id == question_id,
                                rounds.c.number == row.round_count)
                         .values(design_params=design_json))
        return _question(row)

    def insert_round(self, question_id: int, design_json: str | None, salt: bytes,
                     now: datetime, state: str) -> Round | None:
        """Start round n + 1 (``design_json`` None keeps the design); None if no question."""
        values = {"round_count": questions.c.round_count + 1, "state": state,
                  "revealed": False, "updated_at": now}
        if design_json is not None:
            values["design_params"] = design_json
        with self.transaction(write=True) as conn:
            row = conn.execute(questions.update().where(questions.c.id == question_id)
                               .values(**values)
                               .returning(questions.c.round_count, questions.c.design_params,
                                          questions.c.kind, questions.c.poll_id)).first()
            if row is None:
                return None
            if state == "open":
                conn.execute(questions.update()
                             .where(questions.c.poll_id == row.poll_id,
                                    questions.c.id != question_id,
                                    questions.c.state == "open")
                             .values(state="closed", updated_at=now))
            new = conn.execute(rounds.insert().values(
                question_id=question_id, number=row.round_count,
                design_params=row.design_params, salt=salt.hex(), opened_at=now)
                .returning(*rounds.c)).one()
        return _round(new, row.kind)

    def rounds(self, question_id: int, kind: str) -> list[Round]:
        with self.transaction(write=False) as conn:
            rows = conn.execute(sa.select(rounds).where(rounds.c.question_id == question_id)
                                .order_by(rounds.c.number)).all()
        return [_round(r, kind) for r in rows]

    # -- the report path ------------------------------------------------------------------
    def report_context(self, join_code: str, question_id: int
                       ) -> tuple[Poll | None, Question | None, RoundSecret | None]:
        """Poll by code, the question if it belongs to it, and its current round's secret."""
        with self.transaction(write=False) as conn:
            row = conn.execute(self._stmt_context,
                               {"join_code": join_code, "question_id": question_id}).first()
        if row is None:
            return None, None, None
        poll = Poll(id=row.p_id, join_code=row.p_code, title=row.p_title,
                    created_at=as_utc(row.p_created), rehearsal=bool(row.p_rehearsal),
                    epsilon_budget=row.p_budget)
        if row.id is None or row.r_id is None:
            return poll, None, None
        return poll, _question(row), RoundSecret(row.r_id, row.round_count,
                                                 bytes.fromhex(row.r_salt))

    def current_round_secret(self, question_id: int) -> tuple[Question, RoundSecret] | None:
        with self.transaction(write=False) as conn:
            row = conn.execute(
                sa.select(*_QUESTION_COLS, rounds.c.id.label("r_id"),
                          rounds.c.salt.label("r_salt"))
                .select_from(questions.join(
                    rounds, sa.and_(rounds.c.question_id == questions.c.id,
                                    rounds.c.number == questions.c.round_count)))
                .where(questions.c.id == question_id)).first()
        if row is None:
            return None
        return _question(row), RoundSecret(row.r_id, row.round_count, bytes.fromhex(row.r_salt))

    def poll_round_secrets(self, poll_id: int) -> list[RoundSecret]:
        """Every round of every question of a poll, with salts."""
        with self.transaction(write=False) as conn:
            rows = conn.execute(
                sa.select(rounds.c.id, rounds.c.number, rounds.c.salt)
                .select_from(rounds.join(questions, rounds.c.question_id == questions.c.id))
                .where(questions.c.poll_id == poll_id)).all()
        return [RoundSecret(r.id, r.number, bytes.fromhex(r.salt)) for r in rows]

    def find_report(self, round_id: int, token: str,
                    submission_id: str | None = None) -> ReportRow | None:
        """The report of this token in this round, else the one with this submission id."""
        cond = sa.and_(reports.c.round_id == round_id, reports.c.dedup_token == token)
        if submission_id is not None:
            cond = sa.or_(cond, reports.c.submission_id == submission_id)
        with self.transaction(write=False) as conn:
            rows = conn.execute(sa.select(reports.c.round_id, reports.c.answer,
                                          reports.c.design_params, reports.c.created_at,
                                          reports.c.simulated, reports.c.dedup_token)
                                .where(cond)).all()
        if not rows:
            return None
        # Prefer the device's own report in this round over a submission-id match.
        r = min(rows, key=lambda r: not (r.round_id == round_id and r.dedup_token == token))
        return ReportRow(r.round_id, r.answer, r.design_params, as_utc(r.created_at),
                         bool(r.simulated),
                         submission_id_matched=not (r.round_id == round_id
                                                    and r.dedup_token == token))

    def insert_report(self, *, round_id: int, answer: str, design_json: str,
                      created_at: datetime, submission_id: str, token: str,
                      simulated: bool, address_tag: str | None = None,
                      max_per_address: int | None = None) -> int | None:
        """Insert one report. Returns None (nothing written) when the token or the
        submission id already exists; otherwise the number of reports of this round
        from the same ``address_tag``, this one included (0 without a tag).

        Refuses with ``QuestionClosed`` unless, inside the same transaction, the
        round is still its question's current round and the question is open, and
        with ``AddressLimit`` when ``max_per_address`` reports of this round already
        came from ``address_tag``.
        """
        values = {"round_id": round_id, "answer": answer, "design_params": design_json,
                  "created_at": created_at, "submission_id": submission_id,
                  "dedup_token": token, "simulated": simulated, "address_tag": address_tag}
        with self.transaction(write=True) as conn:
            state = conn.execute(self._stmt_round_open, {"round_id": round_id}).scalar()
            if state != "open":  # closed, or a new round began, since the caller looked
                raise QuestionClosed("voting is closed for this question")
            before = 0
            if address_tag is not None:
                before = int(conn.execute(self._stmt_address_count,
                                          {"round_id": round_id, "tag": address_tag}
                                          ).scalar_one())
                if max_per_address is not None and before >= max_per_address:
                    if conn.execute(self._stmt_duplicate, {"round_id": round_id, "token": token,
                                                           "sid": submission_id}).first():
                        return None  # a repeat of a stored report: the caller finds it
                    raise AddressLimit(
                        f"{max_per_address} answers to this question already came from "
                        "this network, the most the instructor allows")
            # RETURNING, not rowcount: rowcount of ON CONFLICT DO NOTHING is not
            # reliable on every driver.
            if conn.execute(self._stmt_insert_report, values).first() is None:
                return None
            return before + 1 if address_tag is not None else 0

    def insert_reports(self, rows: Iterable[dict[str, Any]]) -> int:
        """Insert many reports in one transaction (all or nothing)."""
        batch = list(rows)
        if not batch:
            return 0
        with self.transaction(write=True) as conn:
            conn.execute(reports.insert(), batch)
        return len(batch)

    def reports_by_tokens(self, pairs: Iterable[tuple[int, str]]) -> list[ReportRow]:
        """Reports matching any of the (round id, token) pairs."""
        wanted = set(pairs)
        if not wanted:
            return []
        tokens = sorted({t for _, t in wanted})
        round_ids = sorted({r for r, _ in wanted})
        with self.transaction(write=False) as conn:
            # Both IN lists: the (round_id, dedup_token) unique index serves the lookup;
            # dedup_token alone has no index and would scan every report.
            rows = conn.execute(sa.select(reports.c.round_id, reports.c.answer,
                                          reports.c.design_params, reports.c.created_at,
                                          reports.c.simulated, reports.c.dedup_token)
                                .where(reports.c.round_id.in_(round_ids),
                                       reports.c.dedup_token.in_(tokens))).all()
        return [ReportRow(r.round_id, r.answer, r.design_params, as_utc(r.created_at),
                          bool(r.simulated))
                for r in rows if (r.round_id, r.dedup_token) in wanted]

    def delete_simulated(self, question_id: int) -> int:
        round_ids = sa.select(rounds.c.id).where(rounds.c.question_id == question_id)
        with self.transaction(write=True) as conn:
            return conn.execute(reports.delete().where(reports.c.simulated.is_(True),
                                                       reports.c.round_id.in_(round_ids))
                                ).rowcount

    # -- reading reports back -------------------------------------------------------------
    def answers_in_order(self, question_id: int, round_number: int, *,
                         include_simulated: bool = True) -> list[tuple[str, str]]:
        """``(design JSON, answer)`` of one round's reports, in arrival order."""
        stmt = (sa.select(reports.c.design_params, reports.c.answer)
                .select_from(reports.join(rounds, reports.c.round_id == rounds.c.id))
                .where(rounds.c.question_id == question_id, rounds.c.number == round_number)
                .order_by(reports.c.id))
        if not include_simulated:
            stmt = stmt.where(reports.c.simulated.is_(False))
        with self.transaction(write=False) as conn:
            return [(r.design_params, r.answer) for r in conn.execute(stmt)]

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
            question = _question(qrow)
            round_rows = conn.execute(self._stmt_rounds, {"question_id": question_id}).all()
            ids = [r.id for r in round_rows]
            stmt = self._stmt_grouped if include_simulated else self._stmt_grouped_real
            rows = conn.execute(stmt, {"round_ids": ids}).all()
            tagged = conn.execute(self._stmt_addresses, {"round_ids": ids}).all()
            answers = None
            if with_answers and question.kind == "binary":
                current = [r.id for r in round_rows if r.number == question.round_number]
                answers = [(r.design_params, r.answer) for r in conn.execute(
                    self._answers_stmt(current, include_simulated))]
        numbers = {r.id: r.number for r in round_rows}
        return EstimateInputs(
            question, [_round(r, question.kind) for r in round_rows],
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
        return _saved_plan(row)

    def update_plan(self, plan_id: int, title: str, document: str,
                    now: datetime) -> SavedPlan | None:
        """Replace a saved plan's file; None when there is no such plan."""
        with self.transaction(write=True) as conn:
            row = conn.execute(plans.update().where(plans.c.id == plan_id)
                               .values(title=title, document=document, updated_at=now)
                               .returning(*plans.c)).first()
        return _saved_plan(row) if row else None

    def plan(self, plan_id: int) -> SavedPlan | None:
        with self.transaction(write=False) as conn:
            row = conn.execute(sa.select(plans).where(plans.c.id == plan_id)).first()
        return _saved_plan(row) if row else None

    def list_plans(self) -> list[SavedPlan]:
        """Every saved plan, the most recently changed first."""
        with self.transaction(write=False) as conn:
            rows = conn.execute(sa.select(plans).order_by(plans.c.updated_at.desc(),
                                                          plans.c.id.desc())).all()
        return [_saved_plan(r) for r in rows]

    def delete_plan(self, plan_id: int) -> bool:
        with self.transaction(write=True) as conn:
            return conn.execute(plans.delete().where(plans.c.id == plan_id)).rowcount > 0

