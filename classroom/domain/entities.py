"""The entities the store returns: polls, questions, rounds, receipts, a poll's budget; and
the time they carry (UTC)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .answers import answer_label
from .design import Designed

__all__ = ["BudgetStatus", "Poll", "Question", "Receipt", "Round", "as_utc", "utcnow"]


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """Database times come back naive from SQLite; they are UTC."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else \
        value.astimezone(UTC)


@dataclass(frozen=True)
class Poll:
    id: int
    join_code: str
    title: str
    created_at: datetime
    rehearsal: bool = False
    #: The most ε one student may spend in this poll (sequential composition), or None.
    epsilon_budget: float | None = None


@dataclass(frozen=True)
class Question(Designed):
    """A question of a poll. ``design_json`` is the current round's design (canonical JSON);
    ``updated_at`` is the time of the last change of state or reveal."""

    id: int
    poll_id: int
    position: int
    text: str
    kind: str
    options: tuple[str, ...]
    design_json: str
    mode: str
    state: str
    revealed: bool
    created_at: datetime
    updated_at: datetime
    round_number: int
    #: Seconds of voting before a round closes by itself, or None (no countdown).
    countdown_s: int | None = None

    @property
    def design_params(self) -> dict[str, Any]:
        """The current design's parameters (a fresh dict each call)."""
        return json.loads(self.design_json)

    @property
    def is_open(self) -> bool:
        return self.state == "open"

    def label(self, stored_answer: str) -> str:
        """The label of a stored answer string under the current design."""
        return answer_label(self.design, self.options, stored_answer)

    @property
    def unit(self) -> str:
        """A numeric question's unit ("" for other kinds, or none)."""
        return self.options[0] if self.kind == "numeric" and self.options else ""


@dataclass(frozen=True)
class Round(Designed):
    """One asking of a question. Its secret salt lives only in the store."""

    id: int
    question_id: int
    number: int
    design_json: str
    opened_at: datetime
    kind: str = "binary"

    @property
    def design_params(self) -> dict[str, Any]:
        return json.loads(self.design_json)


@dataclass(frozen=True)
class BudgetStatus:
    """A poll's privacy budget against what its questions can cost one student.

    ``committed`` is the ε a student spends who answers every round that has been
    answered or is open now (sequential composition): the most any device can have
    spent, counted without looking at which device sent what.
    """

    budget: float | None
    committed: float
    #: ``(question id, round number, ε)`` of each round counted in ``committed``.
    rounds: tuple[tuple[int, int, float], ...]

    @property
    def left(self) -> float | None:
        return None if self.budget is None else max(0.0, self.budget - self.committed)

    def allows(self, more: float) -> bool:
        """Whether ``more`` on top of ``committed`` stays within the budget (a relative
        1e-9 of slack absorbs the rounding of sums such as 3 × ln 3 against 3 ln 3)."""
        return self.budget is None or self.committed + more <= self.budget * (1 + 1e-9)




@dataclass(frozen=True)
class Receipt:
    """What a student sees after voting: their RANDOMIZED answer, never a true one."""

    question_id: int
    question_text: str
    round_number: int
    answer: str
    answer_label: str
    created_at: datetime
    epsilon: float
    already_answered: bool
    simulated: bool = False
