"""Reading the classroom database directly, for checks the app itself never needs: how
many reports are stored, and which submission ids (was any acknowledged vote lost or
stored twice?); and how many transactions a piece of the app runs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from classroom.service import GRACE_S
from classroom.store import Store, questions, reports, rounds

__all__ = ["Clock", "Transactions", "count_reports", "past_grace", "submission_ids"]


class Clock:
    """A settable wall clock for a store (``Store(url, clock=...)``), moved by the test;
    the stores of one test share it as processes share the time."""

    def __init__(self) -> None:
        self.t = datetime(2026, 3, 2, 10, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += timedelta(seconds=seconds)


def past_grace(store: Store, question_id: int) -> None:
    """Move the end of a closed question's voting back beyond the grace time, as if it had
    closed a while ago (a report arriving now is then late)."""
    with store.transaction(write=True) as conn:
        ended = conn.execute(sa.select(questions.c.closed_at)
                             .where(questions.c.id == question_id)).scalar_one()
        assert ended is not None, "the question's voting has not ended"
        conn.execute(questions.update().where(questions.c.id == question_id)
                     .values(closed_at=ended - timedelta(seconds=GRACE_S + 1)))


def count_reports(store: Store, question_id: int | None = None) -> int:
    """Stored reports, of one question or of the whole database."""
    stmt = sa.select(sa.func.count()).select_from(reports)
    if question_id is not None:
        stmt = (sa.select(sa.func.count())
                .select_from(reports.join(rounds, reports.c.round_id == rounds.c.id))
                .where(rounds.c.question_id == question_id))
    with store.transaction(write=False) as conn:
        return int(conn.execute(stmt).scalar_one())


def submission_ids(store: Store, question_id: int) -> set[str]:
    """Every stored submission id of a question."""
    with store.transaction(write=False) as conn:
        return set(conn.execute(
            sa.select(reports.c.submission_id)
            .select_from(reports.join(rounds, reports.c.round_id == rounds.c.id))
            .where(rounds.c.question_id == question_id)).scalars())


class Transactions:
    """Counts the transactions (and SQL statements) a store's engine runs while active:
    SQLAlchemy's ``begin`` and ``before_cursor_execute`` events. A context manager; read
    :attr:`count` and :attr:`statements` inside or after it.

    >>> with Transactions(store) as tx:  # doctest: +SKIP
    ...     service.reports.submit_report(...)
    >>> tx.count  # doctest: +SKIP
    1
    """

    def __init__(self, store: Store) -> None:
        self._engine = store.engine
        self.count = 0
        self.statements: list[str] = []

    def _begin(self, _conn: object) -> None:
        self.count += 1

    def _statement(self, _conn: object, _cursor: object, statement: str, *_args: object
                   ) -> None:
        if not statement.startswith("BEGIN"):
            self.statements.append(statement.split(None, 1)[0].upper())

    def __enter__(self) -> Transactions:
        sa.event.listen(self._engine, "begin", self._begin)
        sa.event.listen(self._engine, "before_cursor_execute", self._statement)
        return self

    def __exit__(self, *exc: object) -> None:
        sa.event.remove(self._engine, "begin", self._begin)
        sa.event.remove(self._engine, "before_cursor_execute", self._statement)
