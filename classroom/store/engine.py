"""The engine: one per process, its connection pool, and what a driver error means.

* SQLite (default): WAL, ``busy_timeout`` 10 s, ``synchronous=NORMAL`` (a
  committed transaction survives a crash of the process), foreign keys on;
  write transactions begin with ``BEGIN IMMEDIATE`` so that concurrent writers
  wait on the busy timeout instead of failing when a read lock cannot be
  upgraded; the files are readable by their owner only.
* PostgreSQL through psycopg 3, ``pool_pre_ping``, 5 s connect timeout, a pool
  of :data:`PG_POOL_SIZE` + :data:`PG_MAX_OVERFLOW` connections.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine, make_url

from .. import config

__all__ = [
    "PG_CONNECT_TIMEOUT_S",
    "PG_MAX_OVERFLOW",
    "PG_POOL_SIZE",
    "SQLITE_BUSY_TIMEOUT_S",
    "SQLITE_MAX_OVERFLOW",
    "SQLITE_POOL_SIZE",
    "disk_full",
    "driver_reason",
    "make_engine",
]

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
#: PostgreSQL's SQLSTATE for "disk full".
_PG_DISK_FULL = "53100"


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


def disk_full(exc: BaseException) -> bool:
    """Whether a driver error says the disk is full (SQLite's SQLITE_FULL, PostgreSQL's
    SQLSTATE 53100, or ENOSPC from the file system)."""
    orig = getattr(exc, "orig", None) or exc
    if getattr(orig, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
        return True
    if getattr(orig, "sqlstate", None) == _PG_DISK_FULL:
        return True
    return isinstance(orig, OSError) and orig.errno == errno.ENOSPC


def driver_reason(exc: BaseException, url: str) -> str:
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
