"""Polls and their questions: create, find, list and delete them, the poll's privacy
budget, and a question's design."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..domain import (
    MAX_QUESTION_CHARS,
    MAX_TITLE_CHARS,
    BadInput,
    BudgetStatus,
    OverBudget,
    Poll,
    Question,
    UnknownPoll,
    check_kind_and_mode,
    clean_countdown,
    clean_options,
    clean_text,
    current_of,
    design_epsilon,
    normalize_join_code,
    question_design,
)
from ..domain.vocabulary import shown
from ..kinds.binary import series_of
from ..privacy_numbers import epsilon_up
from ..store import Store
from .budget import budget_status, check_budget
from .common import new_salt, poll_found, question_found, row_id, with_join_code

__all__ = ["Polls"]


class Polls:
    """Polls, their questions and the poll's budget; every rule is enforced here, on the
    server."""

    def __init__(self, store: Store) -> None:
        self._store = store

    # -- polls ----------------------------------------------------------------------------
    def create_poll(self, title: str = "", *, rehearsal: bool = False) -> Poll:
        """A new poll with a fresh join code (title 0..100 characters)."""
        clean = clean_text("poll title", title, 0, MAX_TITLE_CHARS)
        return with_join_code(
            lambda code: self._store.insert_poll(code, clean, bool(rehearsal),
                                                 self._store.now()))

    def poll(self, poll_id: int) -> Poll:
        pid = row_id("poll id", poll_id)
        poll = self._store.poll(pid)
        return poll_found(poll, pid)

    def poll_by_code(self, code: str) -> Poll:
        """The poll with this join code; typed codes are normalised first."""
        norm = normalize_join_code(code)
        poll = self._store.poll_by_code(norm)
        if poll is None:
            raise UnknownPoll(f"no poll has join code {norm}; check the code on the projector")
        return poll

    def list_polls(self) -> list[Poll]:
        """Every poll, newest first."""
        return self._store.list_polls()

    def delete_poll(self, poll_id: int) -> bool:
        """Delete a poll with its questions, rounds and reports; False if it was not there."""
        return self._store.delete_poll(row_id("poll id", poll_id))

    # -- the privacy budget ---------------------------------------------------------------
    def budget(self, poll_id: int) -> BudgetStatus:
        """The poll's budget and what one student can have spent in it: the ε of every
        round that has real reports or is open now (see :class:`BudgetStatus`)."""
        poll = self.poll(poll_id)
        return budget_status(poll, self._store.poll_rounds_use(poll.id))

    def set_budget(self, poll_id: int, budget: float | None) -> Poll:
        """Set the poll's privacy budget (total ε per student), or None for none.

        A budget below what the poll's rounds already committed is refused: it could not
        be kept for the students who answered them.
        """
        pid = row_id("poll id", poll_id)
        value = None
        if budget is not None:
            try:
                value = float(budget)
            except OverflowError:  # an integer beyond every float (10**400)
                value = float("inf")
            except (TypeError, ValueError):
                raise BadInput(f"the budget must be a number, got {shown(budget)}") from None
            if not (value > 0 and np.isfinite(value)):
                raise BadInput(f"the budget must be a positive, finite ε, got {shown(budget)}")
        with self._store.poll_unit(poll_id=pid) as unit:
            poll = poll_found(unit.poll, pid)
            if value is not None:
                status = budget_status(poll, unit.rounds_use())
                if status.committed > value * (1 + 1e-9):
                    raise OverBudget(
                        f"this poll's questions already let a student spend ε = "
                        f"{epsilon_up(status.committed)}; a budget of ε = {epsilon_up(value)} "
                        "could not be kept. Set at least that much, or start a new poll")
            return poll_found(unit.set_budget(value), pid)

    # -- questions ------------------------------------------------------------------------
    def add_question(self, poll_id: int, text: str, *, options: Sequence[str] = ("No", "Yes"),
                     design_params: dict[str, Any], kind: str = "binary",
                     mode: str = "device", open_now: bool = False,
                     countdown_s: int | None = None) -> Question:
        """Add a question with round 1: a draft, or open at once with ``open_now`` (any
        other open question of the poll is then closed). ``countdown_s``: seconds of
        voting before a round closes by itself (10 to 3600), or None.

        Binary: ``options[0]`` is answer 0, ``options[1]`` answer 1 (the share
        estimated), e.g. ``("Chocolate", "Vanilla")``. Under a privacy budget, a question
        that could not open now is refused (:class:`OverBudget`) and nothing is added.
        """
        pid = row_id("poll id", poll_id)
        check_kind_and_mode(kind, mode)
        body = clean_text("question text", text, 1, MAX_QUESTION_CHARS, multiline=True)
        labels = clean_options(tuple(options) if isinstance(options, list) else options, kind)
        design, design_json = question_design(kind, design_params, labels)
        if mode == "physical" and series_of(design) is not None:
            raise BadInput("a series' memo is made and kept on the phone: ask this question "
                           "with the phone's randomizer (mode device), not by hand")
        countdown = clean_countdown(countdown_s)
        with self._store.poll_unit(poll_id=pid) as unit:
            poll_found(unit.poll, pid)
            # One check for adding and opening: a new question's round has no reports.
            check_budget(unit, design_epsilon(design), question=None, same_round=False,
                         refused=f"“{body[:60]}” was not added: it would let",
                         design_json=design_json)
            now = self._store.now()
            q = unit.add_question(
                text=body, kind=kind, options_json=json.dumps(list(labels)),
                design_json=design_json, mode=mode, salt=new_salt(),
                now=now, countdown_s=countdown)
            if open_now:
                q = question_found(unit.set_state(q.id, "open", now, close_others=True),
                                   q.id)
            return q

    def question(self, question_id: int) -> Question:
        qid = row_id("question id", question_id)
        q = self._store.question(qid)
        return question_found(q, qid)

    def questions(self, poll_id: int) -> list[Question]:
        """The poll's questions by position."""
        pid = row_id("poll id", poll_id)
        qs = self._store.questions(pid)
        if not qs:
            self.poll(pid)  # UnknownPoll if the poll itself is missing
        return qs

    def current_question(self, poll_id: int) -> Question | None:
        """What a student sees: the open question, else the one the class last left: the
        most recently closed, or sent back to draft for a new round (never an older
        question the class has moved past); None before any question was opened."""
        return current_of(self.questions(poll_id))

    def delete_question(self, question_id: int) -> bool:
        return self._store.delete_question(row_id("question id", question_id))

    def set_design(self, question_id: int, design_params: dict[str, Any]) -> Question:
        """Change the current round's design; stored reports keep their own parameters.

        Under a budget, the new design is checked whenever the current round counts
        against it: while the question is open, and also once it is closed if the round
        has reports (its cost is the largest ε of its designs, so raising it on a closed
        question would otherwise commit more than the budget behind the dashboard's back).
        """
        qid = row_id("question id", question_id)
        with self._store.poll_unit(question_id=qid) as unit:
            q = question_found(unit.question(qid), qid)
            design, design_json = question_design(q.kind, design_params, q.options)
            answered = any(u.question_id == q.id and u.current and u.reports
                           for u in unit.rounds_use()) if unit.poll is not None and \
                unit.poll.epsilon_budget is not None else False
            if q.is_open or answered:
                check_budget(unit, design_epsilon(design), question=q, same_round=True,
                             refused=f"changing the design of “{q.text[:60]}” to this "
                                     "ε would let", stays_closed=not q.is_open,
                             design_json=design_json)
            return question_found(unit.set_design(q.id, design_json), qid)
