"""The entities the store returns: polls, questions, rounds, receipts, a poll's budget; and
the time they carry (UTC)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from classroom.kinds import kind

from .answers import answer_label
from .design import Designed, design_params_of

__all__ = ["BudgetStatus", "Poll", "Question", "Receipt", "Round", "as_utc", "current_of",
           "state_at", "utcnow"]


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """Database times come back naive from SQLite; they are UTC."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else \
        value.astimezone(UTC)


def state_at(state: str, closes_at: datetime | None, now: datetime) -> str:
    """A question's state at ``now`` from its stored state and deadline: an open question
    whose deadline is not after ``now`` is closed. The one rule every reader and the
    report's own transaction apply, so that every process agrees on a countdown's close.

    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> state_at("open", t, t), state_at("open", t, t.replace(year=2025)), state_at("open", None, t)
    ('closed', 'open', 'open')
    """
    if state == "open" and closes_at is not None and as_utc(closes_at) <= now:
        return "closed"
    return state


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
    ``updated_at`` is the time of the last change of state or reveal.

    ``closes_at`` is the deadline of a round opened with a countdown: while the question
    is open, voting ends there by itself; once it has passed, the question is closed
    (:meth:`at`), with the deadline kept as the time it closed. None without a running
    or finished countdown (a question closed by hand before its deadline has none).
    """

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
    #: When the countdown of the current round ends (or ended), or None.
    closes_at: datetime | None = None

    @property
    def design_params(self) -> dict[str, Any]:
        """The current design's ldp_core parameters, without its kind (a fresh dict each
        call)."""
        return design_params_of(self.design_json)

    @property
    def is_open(self) -> bool:
        return self.state == "open"

    @property
    def timed_out(self) -> bool:
        """Closed by its countdown (not by hand)."""
        return self.state == "closed" and self.closes_at is not None

    def at(self, now: datetime) -> Question:
        """The question as it stands at ``now``: an open question whose deadline has
        passed is closed, at its deadline. Every reader applies this to what it reads,
        so every process agrees on the close from the stored deadline alone, before
        anything writes the close down."""
        if self.closes_at is not None and state_at(self.state, self.closes_at, now) != self.state:
            return replace(self, state="closed", updated_at=self.closes_at)
        return self

    def seconds_left(self, now: datetime) -> float | None:
        """Seconds of voting left on the countdown at ``now`` (0 once it has ended), or
        None when no countdown runs."""
        if self.state != "open" or self.closes_at is None:
            return None
        return max(0.0, (self.closes_at - now).total_seconds())

    def label(self, stored_answer: str) -> str:
        """The label of a stored answer string under the current design."""
        return answer_label(self.kind, self.design, self.options, stored_answer)

    @property
    def unit(self) -> str:
        """A numeric question's unit ("" for other kinds, or none)."""
        return kind(self.kind).unit(self.options)


def current_of(questions: Sequence[Question]) -> Question | None:
    """What a student sees of a poll whose ``questions`` these are: the open question, else
    the one the class last left: the most recently closed, or sent back to draft for a new
    round (never an older question the class has moved past); None before any question
    was opened. The phones show it and every instructor window follows it."""
    opened = [q for q in questions if q.state == "open"]
    if opened:
        return max(opened, key=lambda q: (q.updated_at, q.position, q.id))
    left = [q for q in questions if q.state == "closed" or (q.state == "draft"
                                                            and q.round_number > 1)]
    return max(left, key=lambda q: (q.updated_at, q.position, q.id)) if left else None


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
        return design_params_of(self.design_json)


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
    #: The ε this device has spent in the poll, this report included (sequential
    #: composition), when the receipt was made for the device; None otherwise.
    spent_epsilon: float | None = None
