"""Migrations: each schema version's upgrade to the next, applied in place at start.

``MIGRATIONS[v](conn)`` upgrades a version-``v`` database to ``v + 1``;
:func:`ensure_schema` runs the steps a database needs inside the start-up
transaction, so an existing classroom database is upgraded, never recreated. The
constraints each step writes are spelled out here as they were at that version (the
history of the databases out there), not taken from the current vocabulary.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from types import MappingProxyType

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ..domain import ConfigError, StoreUnavailable
from .schema import (
    SCHEMA_VERSION,
    check_in,
    instructor_sessions,
    metadata,
    plans,
    questions,
    reports,
    rounds,
    schema_version,
    used_login_links,
)

__all__ = ["COUNTDOWN_CHECK_AT_4", "KIND_CHECK_AT", "MIGRATIONS", "ensure_schema", "with_kind"]

_PG_SCHEMA_LOCK_KEY = 0x1D9C1A55  # advisory lock serialising schema set-up

#: The CHECK on a question's kind as each schema version wrote it.
KIND_CHECK_AT: Mapping[int, str] = MappingProxyType({
    2: check_in("kind", ("binary", "categorical")),
    3: check_in("kind", ("binary", "categorical", "numeric")),
    4: check_in("kind", ("binary", "categorical", "numeric")),  # unchanged
    5: check_in("kind", ("binary", "categorical", "numeric")),  # unchanged
    6: "kind <> ''",  # any name: a new kind needs no migration
    7: "kind <> ''",  # unchanged
})
_V2_KIND_CHECK, _V3_KIND_CHECK = KIND_CHECK_AT[2], KIND_CHECK_AT[3]


def _migrate_1_to_2(conn: Connection) -> None:
    """Version 2: per-round address tags on reports, instructor sessions, used links."""
    conn.execute(sa.text("ALTER TABLE reports ADD COLUMN address_tag VARCHAR(64)"))
    next(i for i in reports.indexes if i.name == "ix_reports_round_address").create(conn)
    metadata.create_all(conn, tables=[instructor_sessions, used_login_links])


def _migrate_2_to_3(conn: Connection) -> None:
    """Version 3: a privacy budget per poll, and numeric questions."""
    conn.execute(sa.text("ALTER TABLE polls ADD COLUMN epsilon_budget FLOAT"))
    _set_kind_check(conn, _V2_KIND_CHECK, _V3_KIND_CHECK, 3)


#: The CHECK on a question's countdown as schema version 4 wrote it.
COUNTDOWN_CHECK_AT_4 = "countdown_s IS NULL OR countdown_s BETWEEN 10 AND 3600"


def _migrate_3_to_4(conn: Connection) -> None:
    """Version 4: lesson plans, and a countdown per question (a column-level check, the
    same in a fresh table)."""
    conn.execute(sa.text(f"ALTER TABLE questions ADD COLUMN countdown_s INTEGER CONSTRAINT "
                         f"ck_questions_countdown CHECK ({COUNTDOWN_CHECK_AT_4})"))
    metadata.create_all(conn, tables=[plans])


def _migrate_4_to_5(conn: Connection) -> None:
    """Version 5: the deadline of a round opened with a countdown."""
    kind = "TIMESTAMP WITH TIME ZONE" if conn.dialect.name == "postgresql" else "DATETIME"
    conn.execute(sa.text(f"ALTER TABLE questions ADD COLUMN closes_at {kind}"))
    conn.execute(sa.text("CREATE INDEX ix_questions_closes_at ON questions (closes_at)"))


def _set_kind_check(conn: Connection, old: str, new: str, version: int) -> None:
    """Replace the CHECK on ``questions.kind``: PostgreSQL alters the constraint; SQLite,
    which cannot, has its documented way to change one without rebuilding the table (which
    would cascade to the rounds and reports): edit the table's definition in sqlite_schema
    and bump the schema version ("ALTER TABLE", section "Making other kinds of table schema
    changes")."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("ALTER TABLE questions DROP CONSTRAINT ck_questions_kind"))
        conn.execute(sa.text(f"ALTER TABLE questions ADD CONSTRAINT ck_questions_kind "
                             f"CHECK ({new})"))
        return
    sql: str = conn.execute(sa.text("SELECT sql FROM sqlite_master WHERE type = 'table' "
                                    "AND name = 'questions'")).scalar_one()
    if sql.count(old) != 1:
        raise ConfigError("the questions table has an unexpected definition; it cannot be "
                          f"upgraded to schema version {version}")
    schema: int = conn.execute(sa.text("PRAGMA schema_version")).scalar_one()
    conn.execute(sa.text("PRAGMA writable_schema = ON"))
    conn.execute(sa.text("UPDATE sqlite_master SET sql = :sql WHERE type = 'table' "
                         "AND name = 'questions'"), {"sql": sql.replace(old, new)})
    conn.execute(sa.text(f"PRAGMA schema_version = {int(schema) + 1}"))
    conn.execute(sa.text("PRAGMA writable_schema = OFF"))


def with_kind(design_json: str, kind: str) -> str:
    """A design JSON stored before version 6, with the kind of its question recorded
    (canonical: sorted keys, no spaces, as :func:`classroom.domain.canonical_design`).

    >>> with_kind('{"design":"warner","p":0.75}', "binary")
    '{"design":"warner","kind":"binary","p":0.75}'
    """
    params = json.loads(design_json)
    params.setdefault("kind", kind)
    return json.dumps(params, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _migrate_5_to_6(conn: Connection) -> None:
    """Version 6: a stored design records its kind (questions, rounds and reports, each
    from its question's kind), and the CHECK on a kind asks only for a name."""
    _set_kind_check(conn, KIND_CHECK_AT[5], KIND_CHECK_AT[6], 6)
    q = questions
    for qid, kind, text in conn.execute(sa.select(q.c.id, q.c.kind, q.c.design_params)).all():
        conn.execute(q.update().where(q.c.id == qid)
                     .values(design_params=with_kind(str(text), str(kind))))
    by_round = sa.select(rounds.c.id, q.c.kind, rounds.c.design_params).join(
        q, rounds.c.question_id == q.c.id)
    for rid, kind, text in conn.execute(by_round).all():
        conn.execute(rounds.update().where(rounds.c.id == rid)
                     .values(design_params=with_kind(str(text), str(kind))))
    by_design = (sa.select(reports.c.round_id, q.c.kind, reports.c.design_params).distinct()
                 .join(rounds, reports.c.round_id == rounds.c.id)
                 .join(q, rounds.c.question_id == q.c.id))
    for rid, kind, text in conn.execute(by_design).all():
        conn.execute(reports.update()
                     .where(reports.c.round_id == rid, reports.c.design_params == text)
                     .values(design_params=with_kind(str(text), str(kind))))


def _migrate_6_to_7(conn: Connection) -> None:
    """Version 7: when voting on a question's current round ended (the grace time for
    reports tapped before it is counted from it)."""
    kind = "TIMESTAMP WITH TIME ZONE" if conn.dialect.name == "postgresql" else "DATETIME"
    conn.execute(sa.text(f"ALTER TABLE questions ADD COLUMN closed_at {kind}"))


#: ``MIGRATIONS[v](conn)`` upgrades a version-``v`` database to ``v + 1`` inside
#: the start-up transaction.
MIGRATIONS: Mapping[int, Callable[[Connection], None]] = MappingProxyType(
    {1: _migrate_1_to_2, 2: _migrate_2_to_3, 3: _migrate_3_to_4, 4: _migrate_4_to_5,
     5: _migrate_5_to_6, 6: _migrate_6_to_7})


def ensure_schema(conn: Connection, masked_url: str,
                  migrations: Mapping[int, Callable[[Connection], None]] = MIGRATIONS,
                  target: int = SCHEMA_VERSION) -> None:
    """Create the schema of an empty database, or upgrade an older one to ``target``
    step by step, inside the caller's transaction; refuse a newer one
    (:class:`~classroom.domain.StoreUnavailable`, naming ``masked_url``).

    On PostgreSQL an advisory lock serialises processes starting at once.
    """
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_SCHEMA_LOCK_KEY})
    inspector = sa.inspect(conn)
    version = (conn.execute(sa.select(schema_version.c.version)).scalar()
               if inspector.has_table("schema_version") else None)
    if version is None:
        metadata.create_all(conn)
        conn.execute(schema_version.insert().values(version=target))
        return
    if version > target:
        raise StoreUnavailable(
            f"the classroom database {masked_url} has schema version {version}, newer "
            f"than this app understands ({target}); upgrade the app instead of pointing it "
            "at this database")
    start = version
    while version < target:
        step = migrations.get(version)
        if step is None:
            raise StoreUnavailable(
                f"no migration from schema version {version} to {version + 1} for "
                f"{masked_url}; the database was left unchanged")
        step(conn)
        version += 1
    if version != start:
        conn.execute(schema_version.update().values(version=version))
