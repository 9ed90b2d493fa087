"""The schema: the SQLAlchemy Core tables of a classroom database.

The CHECK constraints on a question's mode and state are generated from the domain's
vocabulary (``MODES``, ``STATES``), so the database refuses exactly what the code does not
know. A question's kind is data the kinds' registry checks (:mod:`classroom.kinds`): its
CHECK asks only for a name, so adding a kind never changes the schema. :data:`SCHEMA_VERSION` is the
version these tables are; :mod:`.migrations` upgrades older databases to it.
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa

from ..domain import MAX_COUNTDOWN_S, MIN_COUNTDOWN_S, MODES, STATES

__all__ = [
    "COUNTDOWN_CHECK",
    "KIND_CHECK",
    "MODE_CHECK",
    "SCHEMA_VERSION",
    "STATE_CHECK",
    "check_in",
    "instructor_sessions",
    "metadata",
    "plans",
    "polls",
    "questions",
    "reports",
    "rounds",
    "schema_version",
    "used_login_links",
]

#: The schema version this code creates and understands.
SCHEMA_VERSION = 7


def check_in(column: str, values: Iterable[str]) -> str:
    """The SQL of a CHECK that ``column`` is one of ``values`` (plain identifiers).

    >>> check_in("mode", ("device", "physical"))
    "mode IN ('device', 'physical')"
    """
    allowed = tuple(values)
    if not column.isidentifier() or not all(v.isidentifier() for v in allowed):
        raise ValueError(f"not plain identifiers: {column!r}, {allowed!r}")
    return f"{column} IN ({', '.join(repr(v) for v in allowed)})"


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

#: The CHECK constraints of ``questions``. A kind is any name (since schema version 6;
#: ``classroom.kinds`` refuses one it does not know), so a new kind needs no migration; a
#: new mode or state changes their checks, which an existing database learns from a
#: migration (``tests/test_store_schema.py`` checks that the latest migration writes them).
KIND_CHECK = "kind <> ''"
MODE_CHECK = check_in("mode", MODES)
STATE_CHECK = check_in("state", STATES)
#: A question's countdown: none, or whole seconds in the domain's range.
COUNTDOWN_CHECK = (f"countdown_s IS NULL OR countdown_s BETWEEN {MIN_COUNTDOWN_S} "
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
              sa.CheckConstraint(COUNTDOWN_CHECK, name="ck_questions_countdown"),
              nullable=True),
    # When the current round's countdown ends (NULL: none running or finished). Set
    # when the question opens; a report whose arrival is not before it is refused, and
    # the question reads as closed from then on (schema version 5).
    sa.Column("closes_at", sa.DateTime(timezone=True), nullable=True),
    # When voting on the current round ended (by Close, Next, another question opening, or
    # its countdown's deadline); NULL while it is open, a draft, or never closed since it
    # opened. A report tapped before it may still arrive within the grace time
    # (classroom.service.reports.GRACE_S) after it (schema version 7).
    sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint(KIND_CHECK, name="ck_questions_kind"),
    # The per-process closer asks for the next deadline every few seconds.
    sa.Index("ix_questions_closes_at", "closes_at"),
    sa.CheckConstraint(MODE_CHECK, name="ck_questions_mode"),
    sa.CheckConstraint(STATE_CHECK, name="ck_questions_state"),
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
