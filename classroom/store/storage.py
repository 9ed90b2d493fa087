"""The store: every read and write of a classroom, in short transactions on one engine.

It knows nothing of randomized response; it persists rows and answers grouped
queries, returning frozen domain objects or the plain rows of :mod:`.rows`.
:meth:`Store.transaction` is the single place where driver errors become domain
errors. Opening a store creates the schema of an empty database or upgrades an
older one (:mod:`.migrations`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
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
    AddressLimit,
    ClassroomError,
    Conflict,
    DiskFull,
    Poll,
    Question,
    QuestionClosed,
    Round,
    StoreUnavailable,
    as_utc,
)
from ..plans import SavedPlan
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

__all__ = ["DISK_FULL", "UNAVAILABLE_READ", "UNAVAILABLE_WRITE", "Store"]

_LOG = logging.getLogger("classroom.store")

UNAVAILABLE_WRITE = "database unavailable, not saved — try again"
UNAVAILABLE_READ = "database unavailable — try again"
DISK_FULL = ("the database's disk is full, so nothing was saved — free some space on the "
             "server, then try again")


def _report_context_stmt() -> sa.Select[Any]:
    qid = sa.bindparam("question_id", type_=sa.Integer)
    return (sa.select(polls.c.id.label("p_id"), polls.c.join_code.label("p_code"),
                      polls.c.title.label("p_title"), polls.c.created_at.label("p_created"),
                      polls.c.rehearsal.label("p_rehearsal"),
                      polls.c.epsilon_budget.label("p_budget"), *QUESTION_COLS,
                      rounds.c.id.label("r_id"), rounds.c.salt.label("r_salt"))
            .select_from(polls.outerjoin(
                questions, sa.and_(questions.c.poll_id == polls.c.id, questions.c.id == qid))
                .outerjoin(rounds, sa.and_(rounds.c.question_id == questions.c.id,
                                           rounds.c.number == questions.c.round_count)))
            .where(polls.c.join_code == sa.bindparam("join_code", type_=sa.String)))


class Store:
    """Persistence for polls, questions, rounds and reports on one engine.

    Create one per process (the app's composition root, :mod:`web.composition`, does). It
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
                         "write" if write else "read", driver_reason(exc, self.url))
            if disk_full(exc):
                raise DiskFull(DISK_FULL) from exc
            raise StoreUnavailable(UNAVAILABLE_WRITE if write else UNAVAILABLE_READ) from exc

    def _ensure_schema(self, migrations: Mapping[int, Callable[[Connection], None]],
                       target: int) -> None:
        with self.engine.connect() as conn:
            if self.backend == "sqlite":
                conn.execution_options(classroom_write=True)
            with conn.begin():
                ensure_schema(conn, self.masked_url, migrations, target)

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
        with self.transaction(write=True) as conn:
            row = conn.execute(polls.update().where(polls.c.id == poll_id)
                               .values(epsilon_budget=budget).returning(*polls.c)).first()
        return poll_of(row) if row else None

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
            .returning(*QUESTION_COLS)).one()
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
        return question_of(row)

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
            added = [question_of(self._add_question(conn, poll_id=poll.id, position=i + 1,
                                                    now=now, **q))
                     for i, q in enumerate(question_rows)]
        return poll, added

    def question(self, question_id: int) -> Question | None:
        with self.transaction(write=False) as conn:
            row = conn.execute(sa.select(*QUESTION_COLS)
                               .where(questions.c.id == question_id)).first()
        return question_of(row) if row else None

    def questions(self, poll_id: int) -> list[Question]:
        with self.transaction(write=False) as conn:
            rows = conn.execute(sa.select(*QUESTION_COLS)
                                .where(questions.c.poll_id == poll_id)
                                .order_by(questions.c.position, questions.c.id)).all()
        return [question_of(r) for r in rows]

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
                               .returning(*QUESTION_COLS)).first()
            if row is not None and close_others:
                conn.execute(questions.update()
                             .where(questions.c.poll_id == row.poll_id,
                                    questions.c.id != question_id,
                                    questions.c.state == "open")
                             .values(state="closed", updated_at=now))
        return question_of(row) if row else None

    def set_revealed(self, question_id: int, revealed: bool, now: datetime) -> Question | None:
        with self.transaction(write=True) as conn:
            row = conn.execute(questions.update().where(questions.c.id == question_id)
                               .values(revealed=revealed, updated_at=now)
                               .returning(*QUESTION_COLS)).first()
        return question_of(row) if row else None

    def set_design(self, question_id: int, design_json: str, now: datetime) -> Question | None:
        """Change the design of the question and of its current round.

        ``updated_at`` is left alone: it records changes of state and reveal.
        """
        with self.transaction(write=True) as conn:
            row = conn.execute(questions.update().where(questions.c.id == question_id)
                               .values(design_params=design_json)
                               .returning(*QUESTION_COLS)).first()
            if row is None:
                return None
            conn.execute(rounds.update()
                         .where(rounds.c.question_id == question_id,
                                rounds.c.number == row.round_count)
                         .values(design_params=design_json))
        return question_of(row)

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
        return round_of(new, row.kind)

    def rounds(self, question_id: int, kind: str) -> list[Round]:
        with self.transaction(write=False) as conn:
            rows = conn.execute(sa.select(rounds).where(rounds.c.question_id == question_id)
                                .order_by(rounds.c.number)).all()
        return [round_of(r, kind) for r in rows]

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
        return poll, question_of(row), RoundSecret(row.r_id, row.round_count,
                                                 bytes.fromhex(row.r_salt))

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
        return question_of(row), RoundSecret(row.r_id, row.round_count, bytes.fromhex(row.r_salt))

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
            question = question_of(qrow)
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
