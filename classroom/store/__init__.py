"""The store: the only part of the classroom with SQL in it, split the way Optuna splits
its storage.

* :mod:`.schema`: the tables, their CHECK constraints (mode and state generated from the
  domain's vocabulary; a kind is any name), and :data:`SCHEMA_VERSION`;
* :mod:`.migrations`: :data:`MIGRATIONS` and :func:`ensure_schema`, which upgrade an
  existing database in place;
* :mod:`.engine`: :func:`make_engine` (one per process), its pool, what a driver error
  means;
* :mod:`.rows`: what the store returns besides domain objects;
* :mod:`.storage`: :class:`Store`, every read and write in short transactions, and the
  one place where driver errors become domain errors;
* :mod:`.units`: :class:`PollUnit` and :class:`ReportUnit`, what the service's decisions
  about a poll's budget and one report read and write inside one transaction;
* :mod:`.changes`: on PostgreSQL, every change of a poll, its questions or rounds
  announced to every process at commit (``NOTIFY``), and :func:`poll_changes`, which
  listens.

Every public name is re-exported here: ``from classroom.store import Store, reports``.
"""

from .changes import CHANNEL, poll_changes
from .engine import (
    PG_CONNECT_TIMEOUT_S,
    PG_MAX_OVERFLOW,
    PG_POOL_SIZE,
    SQLITE_BUSY_TIMEOUT_S,
    SQLITE_MAX_OVERFLOW,
    SQLITE_POOL_SIZE,
    make_engine,
)
from .migrations import MIGRATIONS, ensure_schema
from .rows import EstimateInputs, ReportRow, RoundSecret, RoundUse
from .schema import (
    COUNTDOWN_CHECK,
    KIND_CHECK,
    MODE_CHECK,
    SCHEMA_VERSION,
    STATE_CHECK,
    instructor_sessions,
    metadata,
    plans,
    polls,
    questions,
    reports,
    rounds,
    schema_version,
    used_login_links,
)
from .storage import DISK_FULL, UNAVAILABLE_READ, UNAVAILABLE_WRITE, Store
from .units import PollUnit, ReportUnit

__all__ = [
    "CHANNEL",
    "COUNTDOWN_CHECK",
    "DISK_FULL",
    "KIND_CHECK",
    "MIGRATIONS",
    "MODE_CHECK",
    "PG_CONNECT_TIMEOUT_S",
    "PG_MAX_OVERFLOW",
    "PG_POOL_SIZE",
    "SCHEMA_VERSION",
    "SQLITE_BUSY_TIMEOUT_S",
    "SQLITE_MAX_OVERFLOW",
    "SQLITE_POOL_SIZE",
    "STATE_CHECK",
    "UNAVAILABLE_READ",
    "UNAVAILABLE_WRITE",
    "EstimateInputs",
    "PollUnit",
    "ReportRow",
    "ReportUnit",
    "RoundSecret",
    "RoundUse",
    "Store",
    "ensure_schema",
    "instructor_sessions",
    "make_engine",
    "metadata",
    "plans",
    "poll_changes",
    "polls",
    "questions",
    "reports",
    "rounds",
    "schema_version",
    "used_login_links",
]
