"""What the store returns besides domain objects: a round's secret, a stored report, the
inputs of one estimate, a round's use of the budget; and the conversion of rows into
domain objects."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from ..domain import Poll, Question, Round, as_utc
from ..plans import SavedPlan
from .schema import questions

__all__ = [
    "QUESTION_COLS",
    "EstimateInputs",
    "ReportRow",
    "RoundSecret",
    "RoundUse",
    "poll_of",
    "question_of",
    "round_of",
    "saved_plan_of",
]


@dataclass(frozen=True)
class RoundSecret:
    """A round's id with its salt: for computing dedup tokens, never for display."""

    round_id: int
    number: int
    salt: bytes = b""
    question_id: int | None = None

    def __repr__(self) -> str:  # keep the salt out of logs and tracebacks
        return (f"RoundSecret(round_id={self.round_id}, number={self.number}, salt=<hidden>, "
                f"question_id={self.question_id})")


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
    """What a round of a poll may have cost its students (see ``Polls.budget``)."""

    question_id: int
    number: int
    design_json: str
    current: bool
    question_state: str
    reports: int
    #: The designs of the round's real reports (a round's design can change while open).
    report_designs: tuple[str, ...] = ()


QUESTION_COLS = (
    questions.c.id, questions.c.poll_id, questions.c.position, questions.c.text,
    questions.c.kind, questions.c.options, questions.c.design_params, questions.c.mode,
    questions.c.state, questions.c.revealed, questions.c.created_at, questions.c.updated_at,
    questions.c.round_count, questions.c.countdown_s, questions.c.closes_at,
)


def poll_of(row: Any) -> Poll:
    return Poll(id=row.id, join_code=row.join_code, title=row.title,
                created_at=as_utc(row.created_at), rehearsal=bool(row.rehearsal),
                epsilon_budget=row.epsilon_budget)


def question_of(row: Any, now: datetime) -> Question:
    """The question of a row as it stands at ``now`` (:meth:`Question.at`: closed once
    its deadline has passed, whether or not the close was written down yet)."""
    return Question(
        id=row.id, poll_id=row.poll_id, position=row.position, text=row.text,
        kind=row.kind, options=tuple(json.loads(row.options)), design_json=row.design_params,
        mode=row.mode, state=row.state, revealed=bool(row.revealed),
        created_at=as_utc(row.created_at), updated_at=as_utc(row.updated_at),
        round_number=row.round_count, countdown_s=row.countdown_s,
        closes_at=None if row.closes_at is None else as_utc(row.closes_at)).at(now)


def round_of(row: Any, kind: str) -> Round:
    return Round(id=row.id, question_id=row.question_id, number=row.number,
                 design_json=row.design_params, opened_at=as_utc(row.opened_at), kind=kind)


def saved_plan_of(row: Any) -> SavedPlan:
    return SavedPlan(id=row.id, title=row.title, document=row.document,
                     created_at=as_utc(row.created_at), updated_at=as_utc(row.updated_at))
