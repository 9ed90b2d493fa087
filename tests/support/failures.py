"""Shared pieces of the failure tests (``tests/test_failures*.py``).

* :func:`need`: skip locally with the reason, FAIL under ``CI=true`` (CI must
  not pass by skipping what it is meant to test);
* :func:`postgres_url`: ``LDP_TEST_POSTGRES_URL`` if it answers;
* :class:`ScratchPostgres`: a throw-away PostgreSQL cluster of the installed
  Debian packages (``pg_createcluster`` on a free port, trust
  authentication), so a test can stop, start and restart a real server
  without disturbing the shared one everybody else's tests use;
* :func:`db_schema_url`: a fresh schema on a PostgreSQL server.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

PG_ENV = "LDP_TEST_POSTGRES_URL"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def need(problem: str | None, what: str) -> None:
    """Skip (locally) or fail (CI) when ``problem`` is not None."""
    if problem is None:
        return
    if in_ci():
        pytest.fail(f"CI=true requires {what}: {problem}", pytrace=False)
    pytest.skip(f"{what}: {problem}")


def postgres_url() -> str:
    """The configured PostgreSQL URL (psycopg 3 driver), checked to answer."""
    import sqlalchemy as sa

    raw = os.environ.get(PG_ENV, "").strip()
    need(None if raw else f"{PG_ENV} is not set (e.g. "
         "postgresql+psycopg://postgres@127.0.0.1:5432/test)", "PostgreSQL")
    from classroom.config import normalize_url

    url = normalize_url(raw)
    engine = sa.create_engine(url, poolclass=sa.NullPool, connect_args={"connect_timeout": 3})
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.SQLAlchemyError as exc:
        need(f"{PG_ENV} does not answer: {str(getattr(exc, 'orig', exc)).splitlines()[0]}",
             "PostgreSQL")
    finally:
        engine.dispose()
    return url


@contextlib.contextmanager
def db_schema_url(base_url: str) -> Iterator[str]:
    """A fresh schema on ``base_url``'s database (dropped afterwards)."""
    import sqlalchemy as sa
    from sqlalchemy.engine import make_url

    schema = f"ldp_fail_{secrets.token_hex(5)}"
    admin = sa.create_engine(base_url, poolclass=sa.NullPool, connect_args={"connect_timeout": 5})
    try:
        with admin.begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        yield make_url(base_url).update_query_dict(
            {"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False)
    finally:
        with contextlib.suppress(Exception), admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


class ScratchPostgres:
    """A PostgreSQL cluster of its own: ``start()``, ``stop()``, ``restart()``, ``url``.

    Created with Debian's ``pg_createcluster`` (needs root) and dropped by
    :meth:`drop`. Clusters left behind by a killed test run (named
    ``ldpfail_<pid>_…`` after a process that no longer exists) are dropped
    when the next one is made.
    """

    PREFIX = "ldpfail_"

    def __init__(self) -> None:
        self.version = self._version()
        self.name = f"{self.PREFIX}{os.getpid()}_{secrets.token_hex(3)}"
        from bench.cluster import free_port

        self.port = free_port()
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    @staticmethod
    def problem() -> str | None:
        for tool in ("pg_createcluster", "pg_ctlcluster", "pg_dropcluster", "pg_isready"):
            if shutil.which(tool) is None:
                return f"{tool} not found (Debian's postgresql-common)"
        if not Path("/etc/postgresql").is_dir() or not os.listdir("/etc/postgresql"):
            return "no PostgreSQL version under /etc/postgresql"
        if os.geteuid() != 0:
            return "pg_createcluster needs root"
        return None

    @staticmethod
    def _version() -> str:
        return sorted(os.listdir("/etc/postgresql"), key=lambda v: float(v))[-1]

    def _ctl(self, action: str, *options: str) -> None:
        subprocess.run(["pg_ctlcluster", "--skip-systemctl-redirect", *options, self.version,
                        self.name, action], check=True, capture_output=True, timeout=120)

    @classmethod
    def drop_leftovers(cls) -> None:
        version = cls._version()
        base = Path("/etc/postgresql") / version
        for path in base.glob(f"{cls.PREFIX}*"):
            m = re.match(rf"{cls.PREFIX}(\d+)_", path.name)
            if not m:
                continue
            pid = int(m.group(1))
            alive = True
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                alive = False
            if not alive:
                subprocess.run(["pg_dropcluster", "--stop", version, path.name],
                               capture_output=True, timeout=120)

    def create(self) -> ScratchPostgres:
        self.drop_leftovers()
        subprocess.run(["pg_createcluster", self.version, self.name, "-p", str(self.port),
                        "--", "--auth=trust"], check=True, capture_output=True, timeout=180)
        self.start()
        return self

    def ready(self) -> bool:
        return subprocess.run(["pg_isready", "-h", "127.0.0.1", "-p", str(self.port), "-q"],
                              timeout=10).returncode == 0

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.ready():
            if time.monotonic() > deadline:
                raise RuntimeError(f"scratch PostgreSQL on port {self.port} is not ready")
            time.sleep(0.2)

    def start(self) -> None:
        self._ctl("start")
        self.wait_ready()

    def stop(self) -> None:
        self._ctl("stop", "--mode=fast")

    def restart(self) -> None:
        self._ctl("restart", "--mode=fast")
        self.wait_ready()

    def drop(self) -> None:
        subprocess.run(["pg_dropcluster", "--stop", self.version, self.name],
                       capture_output=True, timeout=180)
