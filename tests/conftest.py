"""Shared fixtures: every store contract test runs on each backend.

* ``backend``: ``"sqlite"`` (a file in a temp dir) and ``"postgresql"``.
  PostgreSQL runs when ``LDP_TEST_POSTGRES_URL`` is set, e.g.
  ``postgresql+psycopg://postgres@127.0.0.1:5432/test``; tests work in
  throw-away schemas (``search_path``) dropped afterwards.
  Without the URL the PostgreSQL tests SKIP locally, but with ``CI=true`` a
  missing or unreachable PostgreSQL FAILS them: CI must not pass by skipping.
* ``db_url``: an empty classroom database on that backend (SQLite: a new
  file; PostgreSQL: one schema per session, emptied before each test);
  ``fresh_db()`` makes brand-new databases for tests that need one
  (schema creation, migrations).
* ``store`` / ``service``: a :class:`classroom.Store` on it and a ``PollService``.
* ``open_question``: a factory making a poll with one open question.
* ``redis_url``: a Redis server for the shared rate limits (``LDP_TEST_REDIS_URL``, by
  default ``redis://127.0.0.1:6379``); skipped locally when it does not answer, FAILED
  with ``CI=true``, like PostgreSQL.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from classroom.domain import CLASS_EXERCISE

PG_ENV = "LDP_TEST_POSTGRES_URL"
REDIS_ENV = "LDP_TEST_REDIS_URL"
BACKENDS = ("sqlite", "postgresql")

DIE = dict(CLASS_EXERCISE)


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def _pg_unusable(reason: str) -> None:
    if _in_ci():
        pytest.fail(f"CI=true requires PostgreSQL for the store contract tests: {reason}",
                    pytrace=False)
    pytest.skip(f"PostgreSQL contract tests skipped: {reason}")


@pytest.fixture(scope="session")
def pg_base_url() -> Iterator[str | None]:
    """The configured PostgreSQL URL if it answers, else None with the reason remembered."""
    raw = os.environ.get(PG_ENV, "").strip()
    if not raw:
        yield None
        return
    url = make_url(raw)
    if url.drivername in ("postgres", "postgresql"):
        url = url.set(drivername="postgresql+psycopg")
    engine = sa.create_engine(url, connect_args={"connect_timeout": 3}, poolclass=sa.NullPool)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.SQLAlchemyError as exc:
        yield f"!{url.render_as_string(hide_password=True)} is unreachable: " \
              f"{str(getattr(exc, 'orig', exc)).strip().splitlines()[0]}"
        return
    finally:
        engine.dispose()
    yield url.render_as_string(hide_password=False)


@pytest.fixture(params=[
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgresql", id="postgresql", marks=pytest.mark.postgres),
])
def backend(request, pg_base_url) -> str:
    if request.param == "postgresql":
        if pg_base_url is None:
            _pg_unusable(f"{PG_ENV} is not set (e.g. "
                         "postgresql+psycopg://postgres@127.0.0.1:5432/test)")
        if pg_base_url.startswith("!"):
            _pg_unusable(pg_base_url[1:])
    return request.param


@pytest.fixture
def fresh_db(backend, pg_base_url, tmp_path) -> Iterator[Callable[[], str]]:
    """A factory of URLs of fresh, empty databases on ``backend`` (cleaned up afterwards)."""
    schemas: list[str] = []

    def make() -> str:
        if backend == "sqlite":
            return f"sqlite:///{tmp_path / f'classroom-{secrets.token_hex(4)}.db'}"
        schema = f"ldp_test_{secrets.token_hex(6)}"
        admin = sa.create_engine(pg_base_url, poolclass=sa.NullPool)
        try:
            with admin.begin() as conn:
                conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        finally:
            admin.dispose()
        schemas.append(schema)
        return make_url(pg_base_url).update_query_dict(
            {"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False)

    yield make
    if schemas:
        admin = sa.create_engine(pg_base_url, poolclass=sa.NullPool)
        try:
            with admin.begin() as conn:
                for schema in schemas:
                    conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        finally:
            admin.dispose()


@pytest.fixture(scope="session")
def pg_shared_url(pg_base_url) -> Iterator[str]:
    """One schema for the session's PostgreSQL tests, dropped at the end."""
    schema = f"ldp_test_{secrets.token_hex(6)}"
    admin = sa.create_engine(pg_base_url, poolclass=sa.NullPool)
    try:
        with admin.begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        yield make_url(pg_base_url).update_query_dict(
            {"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False)
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    finally:
        admin.dispose()


@pytest.fixture
def db_url(backend, fresh_db, request) -> str:
    """An empty classroom database: a new SQLite file, or the shared PostgreSQL schema
    emptied (deleting the polls cascades to questions, rounds and reports; the saved
    lesson plans are deleted too)."""
    if backend == "sqlite":
        return fresh_db()
    url = request.getfixturevalue("pg_shared_url")
    engine = sa.create_engine(url, poolclass=sa.NullPool)
    try:
        with engine.begin() as conn:
            for table in ("polls", "plans"):
                if conn.execute(sa.text(f"SELECT to_regclass('{table}')")).scalar() \
                        is not None:
                    conn.execute(sa.text(f"DELETE FROM {table}"))
    finally:
        engine.dispose()
    return url


@pytest.fixture
def store(db_url):
    from classroom import Store

    s = Store(db_url)
    yield s
    s.close()


@pytest.fixture
def service(store):
    from classroom import PollService

    return PollService.on(store)


@pytest.fixture
def open_question(service):
    """``open_question(**add_question kwargs) -> (poll, question)`` with the question open."""

    def make(text: str = "Vanilla or chocolate?", *, options=("Chocolate", "Vanilla"),
             design_params=None, kind: str = "binary", title: str = "CS208"):
        poll = service.polls.create_poll(title)
        q = service.polls.add_question(poll.id, text, options=options,
                                       design_params=(DIE if design_params is None
                                                      else design_params),
                                       kind=kind)
        return poll, service.running.open_question(q.id)

    return make


@pytest.fixture(scope="session")
def redis_url() -> str:
    """A Redis server that answers, for the rate limits every process shares."""
    url = os.environ.get(REDIS_ENV, "").strip() or "redis://127.0.0.1:6379"
    problem = None
    try:
        import redis

        client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        client.ping()
        client.close()
    except ImportError:
        problem = "the redis client is not installed (pip install -r requirements.txt)"
    except Exception as exc:  # noqa: BLE001 - any failure to reach it is the reason shown
        problem = f"Redis at {url} does not answer: {exc}"
    if problem:
        if _in_ci():
            pytest.fail(f"CI=true requires Redis for the shared rate-limit tests: {problem}",
                        pytrace=False)
        pytest.skip(f"shared rate-limit tests skipped: {problem}")
    return url


#: The modules the fast command (README, "Run the tests") leaves out, with the ``slow``
#: marker: long exact simulations, the Streamlit pages under AppTest, many threads or
#: processes racing, the JS suites under node and the bench's smoke runs. Measured with
#: ``--durations=0``: together about three quarters of the unit tests' time.
SLOW_MODULES = frozenset({
    "test_ldp_core_plausibility", "test_ldp_core_manipulation", "test_study_pages",
    "test_study_models", "test_service_races", "test_store_concurrency", "test_bench_smoke",
    "test_phone_js", "test_web_serving", "test_dashboard", "test_dashboard_numeric",
    "test_dashboard_what_if", "test_dashboard_access", "test_dashboard_pacing",
    "test_dashboard_plans", "test_dashboard_shuffle", "test_dashboard_charts",
    "test_dashboard_stuffing", "test_ldp_core_intervals", "test_ldp_core_shuffle",
    "test_ldp_core_categorical_counts", "test_ldp_core_numeric", "test_ldp_core_validation",
})


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.stem in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
