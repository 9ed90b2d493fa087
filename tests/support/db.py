"""Reading the classroom database directly, for checks the app itself never needs: how
many reports are stored, and which submission ids (was any acknowledged vote lost or
stored twice?)."""

from __future__ import annotations

import sqlalchemy as sa

from classroom.store import Store, reports, rounds

__all__ = ["count_reports", "submission_ids"]


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
