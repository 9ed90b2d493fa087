"""Running a class: open, close and reveal a question, go on to the next one, its
countdown, and a new round of it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..domain import BadInput, Question, Round, clean_countdown, design_epsilon, question_design
from ..store import Store
from .budget import check_budget, check_opening
from .common import new_salt, question_found, row_id

__all__ = ["Running"]


class Running:
    """What the instructor does during the class, question by question."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def now(self) -> datetime:
        """The time deadlines are set by and read against (the store's clock)."""
        return self._store.now()

    def _set_state(self, question_id: int, state: str) -> Question:
        qid = row_id("question id", question_id)
        q = self._store.set_state(qid, state, self.now())
        return question_found(q, qid)

    def open_question(self, question_id: int) -> Question:
        """Open for answers; any other open question of the poll is closed.

        Refused (:class:`OverBudget`) when the poll's privacy budget cannot pay for it.
        """
        qid = row_id("question id", question_id)
        with self._store.poll_unit(question_id=qid) as unit:
            q = question_found(unit.question(qid), qid)
            check_opening(unit, q, q.epsilon)
            return question_found(unit.set_state(q.id, "open", self.now(), close_others=True),
                                  qid)

    def close_question(self, question_id: int) -> Question:
        return self._set_state(question_id, "closed")

    def next_question(self, question_id: int) -> tuple[Question, Question]:
        """Close ``question_id`` (and any other open question of its poll) and open the
        next question of the poll by position, in ONE transaction that holds the poll's
        row; the phones follow. Returns ``(the question left, the question now open)``.

        Nothing is skipped: when the next question cannot open under the poll's budget,
        :class:`OverBudget` says so and nothing changes (this question stays as it
        was); after the poll's last question, :class:`BadInput` says there is none. A
        next question already open stays open, its countdown running on.
        """
        qid = row_id("question id", question_id)
        with self._store.poll_unit(question_id=qid) as unit:
            q = question_found(unit.question(qid), qid)
            following = unit.question_after(q)
            if following is None:
                raise BadInput(f"Q{q.position} “{q.text[:60]}” is the last question of this "
                               "poll: there is no next question to open")
            check_budget(unit, following.epsilon, question=following, same_round=True,
                         refused=f"the next question, Q{following.position} "
                                 f"“{following.text[:60]}”, was not opened: opening "
                                 "it would let")
            now = self.now()
            if following.is_open:
                unit.close_others(following.id, now)
                opened = following
            else:
                opened = question_found(
                    unit.set_state(following.id, "open", now, close_others=True), following.id)
            return question_found(unit.question(qid), qid), opened

    def set_countdown(self, question_id: int, seconds: int | None) -> Question:
        """Set the question's countdown: seconds of voting from each opening before the
        round closes by itself (10 to 3600), or None for none. A round already open keeps
        the deadline it opened with."""
        qid = row_id("question id", question_id)
        value = clean_countdown(seconds)
        return question_found(self._store.set_countdown(qid, value), qid)

    def close_expired(self) -> int:
        """Write down the close of every question whose countdown has ended; the number
        closed. Readers see the close at the deadline already; this makes the stored state
        say it too. Each process runs it at every deadline (:mod:`web.deadlines`)."""
        return self._store.close_expired()

    def next_deadline(self) -> datetime | None:
        """The earliest countdown deadline of an open question, or None."""
        return self._store.next_deadline()

    def set_revealed(self, question_id: int, revealed: bool) -> Question:
        qid = row_id("question id", question_id)
        q = self._store.set_revealed(qid, bool(revealed), self.now())
        return question_found(q, qid)

    def new_round(self, question_id: int, design_params: dict[str, Any] | None = None, *,
                  open_now: bool = False) -> Round:
        """Ask again: round n + 1 with a fresh salt (``design_params`` None keeps the design).

        The question returns to draft (open with ``open_now=True``) and its
        results are hidden; earlier rounds stay in the history. Under a privacy budget, a
        round that could not open now is refused (:class:`OverBudget`), draft or not:
        nothing changes.
        """
        qid = row_id("question id", question_id)
        with self._store.poll_unit(question_id=qid) as unit:
            q = question_found(unit.question(qid), qid)
            design_json = None
            epsilon = q.epsilon
            if design_params is not None:
                design, design_json = question_design(q.kind, design_params, q.options)
                epsilon = design_epsilon(design)
            check_budget(unit, epsilon, question=q, same_round=False,
                         refused=f"round {q.round_number + 1} of “{q.text[:60]}” was "
                                 "not started: it would let", design_json=design_json)
            r = unit.insert_round(q.id, design_json, new_salt(),
                                  self.now(), "open" if open_now else "draft")
            return question_found(r, qid)

    def rounds(self, question_id: int) -> list[Round]:
        qid = row_id("question id", question_id)
        q = question_found(self._store.question(qid), qid)
        return self._store.rounds(q.id, q.kind)
