"""PollService: the use cases the views and the phone API call.

Validation and the server-side rules live here; SQL lives in
:mod:`classroom.store`; estimates from counts in :mod:`classroom.estimates`; CSV
export and replay in :mod:`classroom.csvio`; the mathematics in :mod:`ldp_core`. A ``PollService``
holds nothing but its store, so one instance can serve every session.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import logging
import re
import secrets
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, TypeVar

import numpy as np

from . import kinds
from .csvio import replay_from_csv, write_csv
from .domain import (
    JOIN_CODE_ALPHABET,
    JOIN_CODE_LENGTH,
    MAX_QUESTION_CHARS,
    MAX_ROW_ID,
    MAX_TITLE_CHARS,
    AddressLimit,
    BadInput,
    BadReport,
    BudgetStatus,
    DashboardSnapshot,
    Design,
    OverBudget,
    Poll,
    Question,
    QuestionClosed,
    QuestionEstimate,
    Receipt,
    Round,
    StoreUnavailable,
    UnknownPlan,
    UnknownPoll,
    UnknownQuestion,
    answer_label,
    canonical_design,
    check_kind_and_mode,
    clean_countdown,
    clean_options,
    clean_text,
    current_of,
    design_epsilon,
    encode_answer,
    finite_or_inf,
    normalize_join_code,
    question_design,
)
from .domain.vocabulary import shown
from .estimates import (
    estimate_from_groups,
    parse_design,
    trajectory,
)
from .plans import LessonPlan, SavedPlan, dumps, loads
from .privacy_numbers import epsilon_up
from .store import PollUnit, ReportRow, ReportUnit, RoundSecret, RoundUse, Store

__all__ = [
    "BURST_LOG_AT",
    "MAX_SIMULATED",
    "PollService",
    "address_tag",
    "dedup_token",
    "new_join_code",
]

MAX_SIMULATED = 100_000
SALT_BYTES = 32
_LOG = logging.getLogger(__name__)
T = TypeVar("T")
_SUBMISSION_ID = re.compile(r"[A-Za-z0-9_.:\-]{8,100}")
_MAX_DEVICE_ID = 256


def new_join_code() -> str:
    """Six characters from the unambiguous alphabet, from the OS CSPRNG."""
    return "".join(secrets.choice(JOIN_CODE_ALPHABET) for _ in range(JOIN_CODE_LENGTH))


def _with_join_code(insert: Callable[[str], T | None]) -> T:
    """``insert(code)`` with fresh join codes until one is free (it returns None when the
    code is taken)."""
    for _ in range(20):
        created = insert(new_join_code())
        if created is not None:
            return created
    raise StoreUnavailable("could not find a free join code — try again")


def dedup_token(salt: bytes, device_id: str) -> str:
    """``HMAC-SHA256(key=round salt, msg=device id)`` as hex."""
    return hmac.new(salt, device_id.encode("utf-8"), hashlib.sha256).hexdigest()


def address_tag(salt: bytes, address: str) -> str:
    """``HMAC-SHA256(key=round salt, msg="address " + address)`` as hex: counts the
    distinct network addresses of one round; unrelated in any other round."""
    return hmac.new(salt, b"address " + address.encode("utf-8"), hashlib.sha256).hexdigest()


#: One network address reaching one of these report counts in a round is logged: far
#: more than one phone, which a lecture hall behind one NAT also does.
BURST_LOG_AT = frozenset({25, 50, 100, 200, 400, 800, 1600, 3200})


def _id(name: str, value: object) -> int:
    """A row id: a whole number up to MAX_ROW_ID (a larger one names nothing, and the
    database would refuse to compare it); zero or below names nothing either."""
    if isinstance(value, bool):
        raise BadInput(f"{name} must be a whole number, got {value!r}")
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) < 19:
        value = int(value.strip())
    if isinstance(value, int):
        if value > MAX_ROW_ID:
            raise BadInput(f"{name} {shown(value)} is out of range: ids run from 1 to "
                           f"{MAX_ROW_ID}")
        return value
    raise BadInput(f"{name} must be a whole number, got {str(value)[:24]!r}")


def _device_id(value: object) -> str:
    if not isinstance(value, str) or not value or len(value) > _MAX_DEVICE_ID:
        raise BadReport("this device has no valid id (the cookie is missing or damaged); "
                        "reload the page and try again")
    return value


def _submission_id(value: object) -> str:
    if not isinstance(value, str) or not _SUBMISSION_ID.fullmatch(value):
        raise BadReport("submission_id must be 8 to 100 characters of letters, digits, "
                        f"'_', '-', '.', ':' (a UUID fits), got {str(value)[:24]!r}")
    return value


def _question_found(value: T | None, question_id: int) -> T:
    """``value``, or ``UnknownQuestion`` when the store found nothing."""
    if value is None:
        raise UnknownQuestion(f"no question with id {question_id}")
    return value


def _poll_found(value: T | None, poll_id: int) -> T:
    """``value``, or ``UnknownPoll`` when the store found nothing."""
    if value is None:
        raise UnknownPoll(f"no poll with id {poll_id}")
    return value




def _make_receipt(question: Question, round_number: int, answer: str, design: Design,
                  created_at: datetime, *, already: bool, simulated: bool,
                  spent: float | None = None) -> Receipt:
    """The one way a receipt is built: the randomized answer and its label, the round, the
    design's ε, whether this device had already answered, and what it has spent."""
    return Receipt(
        question_id=question.id, question_text=question.text, round_number=round_number,
        answer=answer,
        answer_label=answer_label(design, question.options, answer),
        created_at=created_at, epsilon=design_epsilon(design), already_answered=already,
        simulated=simulated, spent_epsilon=spent)


def _spent(rows: Iterable[ReportRow]) -> list[float]:
    """The ε of each report (sequential composition adds them up: :func:`finite_or_inf`)."""
    return [design_epsilon(parse_design(r.design_json)) for r in rows]






def _params_diff(got: dict[str, Any], expected: dict[str, Any]) -> str:
    parts = []
    for key in sorted(set(got) | set(expected), key=lambda k: (k != "design", k)):
        if got.get(key, "<missing>") != expected.get(key, "<missing>"):
            parts.append(f"{key} is {got.get(key, '<missing>')!r}, this round uses "
                         f"{expected.get(key, '<missing>')!r}")
    return "; ".join(parts)


class PollService:
    """Polls, questions, rounds and reports; every rule is enforced here, on the server."""

    def __init__(self, store: Store, *, max_reports_per_address: int | None = None) -> None:
        """``max_reports_per_address``: the optional limit of reports per network address
        and round (None: no limit; see :func:`classroom.config.max_reports_per_address`)."""
        self._store = store
        self._max_per_address = max_reports_per_address

    @property
    def store(self) -> Store:
        return self._store

    # -- polls ----------------------------------------------------------------------------
    def create_poll(self, title: str = "", *, rehearsal: bool = False) -> Poll:
        """A new poll with a fresh join code (title 0..100 characters)."""
        clean = clean_text("poll title", title, 0, MAX_TITLE_CHARS)
        return _with_join_code(
            lambda code: self._store.insert_poll(code, clean, bool(rehearsal), self.now()))

    def poll(self, poll_id: int) -> Poll:
        pid = _id("poll id", poll_id)
        poll = self._store.poll(pid)
        return _poll_found(poll, pid)

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
        return self._store.delete_poll(_id("poll id", poll_id))

    # -- the privacy budget ---------------------------------------------------------------
    def budget(self, poll_id: int) -> BudgetStatus:
        """The poll's budget and what one student can have spent in it: the ε of every
        round that has real reports or is open now (see :class:`BudgetStatus`)."""
        poll = self.poll(poll_id)
        return self._budget_status(poll, self._store.poll_rounds_use(poll.id))

    @staticmethod
    def _round_cost(use: RoundUse) -> float:
        """The most ε a device can have spent in this round: its design's, or that of any
        report made under an earlier design of the same round."""
        texts = {use.design_json, *use.report_designs}
        return max(design_epsilon(parse_design(t)) for t in texts)

    def _budget_status(self, poll: Poll, uses: list[RoundUse], *,
                       leave_out: tuple[int, int] | None = None,
                       open_counts: bool = True) -> BudgetStatus:
        counted = tuple(
            (u.question_id, u.number, self._round_cost(u)) for u in uses
            if (u.question_id, u.number) != leave_out
            and (u.reports > 0 or (open_counts and u.current and u.question_state == "open")))
        return BudgetStatus(budget=poll.epsilon_budget,
                            committed=finite_or_inf([c for _, _, c in counted]),
                            rounds=counted)

    def set_budget(self, poll_id: int, budget: float | None) -> Poll:
        """Set the poll's privacy budget (total ε per student), or None for none.

        A budget below what the poll's rounds already committed is refused: it could not
        be kept for the students who answered them.
        """
        pid = _id("poll id", poll_id)
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
            poll = _poll_found(unit.poll, pid)
            if value is not None:
                status = self._budget_status(poll, unit.rounds_use())
                if status.committed > value * (1 + 1e-9):
                    raise OverBudget(
                        f"this poll's questions already let a student spend ε = "
                        f"{epsilon_up(status.committed)}; a budget of ε = {epsilon_up(value)} "
                        "could not be kept. Set at least that much, or start a new poll")
            return _poll_found(unit.set_budget(value), pid)

    def _check_opening(self, unit: PollUnit, question: Question, epsilon: float) -> None:
        """Refuse (OverBudget) to open the current round of ``question`` at ``epsilon`` when
        a student who answered every answered round and this one would pass the poll's
        budget."""
        self._check_budget(unit, epsilon, question=question, same_round=True,
                           refused=f"opening “{question.text[:60]}” would let")

    def _check_budget(self, unit: PollUnit, epsilon: float, *, question: Question | None,
                      same_round: bool, refused: str, stays_closed: bool = False) -> None:
        """Refuse (OverBudget) a round at ``epsilon`` (of ``question``, or of a question not
        yet added) that could not open under the poll's budget now. Answered rounds only
        add up, so one that cannot open now never can, unless the budget is raised.
        ``refused`` starts the message: what was asked and that it "would let".
        ``stays_closed``: the round does not open (a closed question's design changed), so
        a question open elsewhere stays open and counts too.

        Decided inside ``unit``, the transaction that holds the poll's row: no other
        opening, budget change or budgeted report of the poll can slip in between.
        """
        poll = unit.poll
        if poll is None or poll.epsilon_budget is None:
            return
        uses = unit.rounds_use()
        # Open rounds elsewhere close when this one opens; those with reports still count.
        leave_out = ((question.id, question.round_number) if question is not None and same_round
                     else None)
        status = self._budget_status(poll, uses, leave_out=leave_out,
                                     open_counts=stays_closed)
        if question is not None and same_round:
            current = next((u for u in uses if u.question_id == question.id and u.current),
                           None)
            if current is not None and current.reports:
                epsilon = max(epsilon, self._round_cost(current))
        if not status.allows(epsilon):
            raise OverBudget(
                f"{refused} a student spend ε = {epsilon_up(status.committed + epsilon)} in "
                f"this poll, over its budget of ε = {epsilon_up(poll.epsilon_budget)} (the "
                f"questions answered so far already cost ε = {epsilon_up(status.committed)}). "
                "Give it a "
                "smaller ε, or raise the budget")

    # -- lesson plans ---------------------------------------------------------------------
    def list_plans(self) -> list[SavedPlan]:
        """The saved lesson plans, the most recently changed first."""
        return self._store.list_plans()

    def saved_plan(self, plan_id: int) -> SavedPlan:
        pid = _id("plan id", plan_id)
        saved = self._store.plan(pid)
        if saved is None:
            raise UnknownPlan(f"no saved lesson plan with id {pid}")
        return saved

    def save_plan(self, plan: LessonPlan, plan_id: int | None = None) -> SavedPlan:
        """Save a plan: a new one, or over the saved plan ``plan_id``. The plan is
        validated whole first (:class:`~classroom.plans.PlanError` lists every problem)
        and kept as its TOML file; nothing is written on a refusal."""
        checked = plan.checked()
        document = dumps(checked)
        if plan_id is None:
            return self._store.insert_plan(checked.title, document, self.now())
        pid = _id("plan id", plan_id)
        saved = self._store.update_plan(pid, checked.title, document, self.now())
        if saved is None:
            raise UnknownPlan(f"no saved lesson plan with id {pid}; save it as a new plan")
        return saved

    def import_plan(self, data: bytes | str) -> SavedPlan:
        """Read a plan file and save it as a new plan. The whole file is validated before
        anything is written (:func:`classroom.plans.loads`)."""
        return self.save_plan(loads(data))

    def delete_plan(self, plan_id: int) -> bool:
        """Delete a saved plan (classes started from it stay); False if it was not there."""
        return self._store.delete_plan(_id("plan id", plan_id))

    def start_class(self, plan: LessonPlan, *,
                    rehearsal: bool = False) -> tuple[Poll, list[Question]]:
        """One click before class: a poll titled after the plan, with the plan's budget and
        every question as a draft in the plan's order, ready to open one by one.

        The plan is validated whole first, by the same checks as :meth:`add_question` and
        :meth:`set_budget` (its budget covers every question once), and everything is
        written in one transaction: a refusal creates nothing.
        """
        checked = plan.checked()
        rows = [{"text": q.text, "kind": q.kind, "options_json": json.dumps(list(q.options)),
                 "design_json": q.design_json, "mode": q.mode, "countdown_s": q.countdown_s,
                 "salt": secrets.token_bytes(SALT_BYTES)} for q in checked.questions]
        return _with_join_code(lambda code: self._store.insert_class(
            join_code=code, title=checked.title, rehearsal=bool(rehearsal),
            budget=checked.budget, question_rows=rows, now=self.now()))

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
        pid = _id("poll id", poll_id)
        check_kind_and_mode(kind, mode)
        body = clean_text("question text", text, 1, MAX_QUESTION_CHARS, multiline=True)
        labels = clean_options(tuple(options) if isinstance(options, list) else options, kind)
        design, design_json = question_design(kind, design_params, labels)
        countdown = clean_countdown(countdown_s)
        with self._store.poll_unit(poll_id=pid) as unit:
            _poll_found(unit.poll, pid)
            # One check for adding and opening: a new question's round has no reports.
            self._check_budget(unit, design_epsilon(design), question=None, same_round=False,
                               refused=f"“{body[:60]}” was not added: it would let")
            now = self.now()
            q = unit.add_question(
                text=body, kind=kind, options_json=json.dumps(list(labels)),
                design_json=design_json, mode=mode, salt=secrets.token_bytes(SALT_BYTES),
                now=now, countdown_s=countdown)
            if open_now:
                q = _question_found(unit.set_state(q.id, "open", now, close_others=True),
                                    q.id)
            return q

    def question(self, question_id: int) -> Question:
        qid = _id("question id", question_id)
        q = self._store.question(qid)
        return _question_found(q, qid)

    def questions(self, poll_id: int) -> list[Question]:
        """The poll's questions by position."""
        pid = _id("poll id", poll_id)
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
        return self._store.delete_question(_id("question id", question_id))

    def _set_state(self, question_id: int, state: str) -> Question:
        qid = _id("question id", question_id)
        q = self._store.set_state(qid, state, self.now())
        return _question_found(q, qid)

    def open_question(self, question_id: int) -> Question:
        """Open for answers; any other open question of the poll is closed.

        Refused (:class:`OverBudget`) when the poll's privacy budget cannot pay for it.
        """
        qid = _id("question id", question_id)
        with self._store.poll_unit(question_id=qid) as unit:
            q = _question_found(unit.question(qid), qid)
            self._check_opening(unit, q, q.epsilon)
            return _question_found(unit.set_state(q.id, "open", self.now(), close_others=True),
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
        qid = _id("question id", question_id)
        with self._store.poll_unit(question_id=qid) as unit:
            q = _question_found(unit.question(qid), qid)
            following = unit.question_after(q)
            if following is None:
                raise BadInput(f"Q{q.position} “{q.text[:60]}” is the last question of this "
                               "poll: there is no next question to open")
            self._check_budget(unit, following.epsilon, question=following, same_round=True,
                               refused=f"the next question, Q{following.position} "
                                       f"“{following.text[:60]}”, was not opened: opening "
                                       "it would let")
            now = self.now()
            if following.is_open:
                unit.close_others(following.id, now)
                opened = following
            else:
                opened = _question_found(
                    unit.set_state(following.id, "open", now, close_others=True), following.id)
            return _question_found(unit.question(qid), qid), opened

    def set_countdown(self, question_id: int, seconds: int | None) -> Question:
        """Set the question's countdown: seconds of voting from each opening before the
        round closes by itself (10 to 3600), or None for none. A round already open keeps
        the deadline it opened with."""
        qid = _id("question id", question_id)
        value = clean_countdown(seconds)
        return _question_found(self._store.set_countdown(qid, value), qid)

    def close_expired(self) -> int:
        """Write down the close of every question whose countdown has ended; the number
        closed. Readers see the close at the deadline already; this makes the stored state
        say it too. Each process runs it at every deadline (:mod:`web.deadlines`)."""
        return self._store.close_expired()

    def next_deadline(self) -> datetime | None:
        """The earliest countdown deadline of an open question, or None."""
        return self._store.next_deadline()

    def now(self) -> datetime:
        """The time deadlines are set by and read against (the store's clock)."""
        return self._store.now()

    def set_revealed(self, question_id: int, revealed: bool) -> Question:
        qid = _id("question id", question_id)
        q = self._store.set_revealed(qid, bool(revealed), self.now())
        return _question_found(q, qid)

    def set_design(self, question_id: int, design_params: dict[str, Any]) -> Question:
        """Change the current round's design; stored reports keep their own parameters.

        Under a budget, the new design is checked whenever the current round counts
        against it: while the question is open, and also once it is closed if the round
        has reports (its cost is the largest ε of its designs, so raising it on a closed
        question would otherwise commit more than the budget behind the dashboard's back).
        """
        qid = _id("question id", question_id)
        with self._store.poll_unit(question_id=qid) as unit:
            q = _question_found(unit.question(qid), qid)
            design, design_json = question_design(q.kind, design_params, q.options)
            answered = any(u.question_id == q.id and u.current and u.reports
                           for u in unit.rounds_use()) if unit.poll is not None and \
                unit.poll.epsilon_budget is not None else False
            if q.is_open or answered:
                self._check_budget(unit, design_epsilon(design), question=q, same_round=True,
                                   refused=f"changing the design of “{q.text[:60]}” to this "
                                           "ε would let", stays_closed=not q.is_open)
            return _question_found(unit.set_design(q.id, design_json), qid)

    def new_round(self, question_id: int, design_params: dict[str, Any] | None = None, *,
                  open_now: bool = False) -> Round:
        """Ask again: round n + 1 with a fresh salt (``design_params`` None keeps the design).

        The question returns to draft (open with ``open_now=True``) and its
        results are hidden; earlier rounds stay in the history. Under a privacy budget, a
        round that could not open now is refused (:class:`OverBudget`), draft or not:
        nothing changes.
        """
        qid = _id("question id", question_id)
        with self._store.poll_unit(question_id=qid) as unit:
            q = _question_found(unit.question(qid), qid)
            design_json = None
            epsilon = q.epsilon
            if design_params is not None:
                design, design_json = question_design(q.kind, design_params, q.options)
                epsilon = design_epsilon(design)
            self._check_budget(unit, epsilon, question=q, same_round=False,
                               refused=f"round {q.round_number + 1} of “{q.text[:60]}” was "
                                       "not started: it would let")
            r = unit.insert_round(q.id, design_json, secrets.token_bytes(SALT_BYTES),
                                  self.now(), "open" if open_now else "draft")
            return _question_found(r, qid)

    def rounds(self, question_id: int) -> list[Round]:
        q = self.question(question_id)
        return self._store.rounds(q.id, q.kind)

    # -- reports --------------------------------------------------------------------------
    @staticmethod
    def _check_report(question: Question, answer: object, design_params: object
                      ) -> tuple[str, str, Design]:
        """The one validation path for every report: design, then answer.

        Returns ``(stored answer, canonical design JSON, design)``.
        """
        try:
            design, text = canonical_design(question.kind, design_params)
        except ValueError as exc:
            raise BadReport(f"the report's design parameters are not valid: {exc}") from exc
        if text != question.design_json:
            diff = _params_diff(json.loads(text), question.design_params)
            raise BadReport(f"the report's design parameters differ from this round's design "
                            f"({diff}); reload the question and answer again")
        stored = encode_answer(question.kind, design, question.options, answer)
        return stored, text, design

    @staticmethod
    def _receipt(question: Question, row: ReportRow, number: int, *, already: bool,
                 spent: float | None) -> Receipt:
        return _make_receipt(question, number, row.answer, parse_design(row.design_json),
                             row.created_at, already=already, simulated=row.simulated,
                             spent=spent)

    def _holds_poll(self, poll: Poll) -> bool:
        """Whether a report to ``poll`` is decided with the poll's row held: when it counts
        against a budget or against the per-address limit."""
        return poll.epsilon_budget is not None or self._max_per_address is not None

    def submit_report(self, code: str, question_id: int, *, answer: object,
                      design_params: dict[str, Any], submission_id: str, device_id: str,
                      simulated: bool = False, address: str | None = None) -> Receipt:
        """Store one randomized report, or explain why not (nothing is written then).

        A device that already answered this round (double tap, refresh, second
        tab) gets its FIRST receipt back with ``already_answered=True``.
        ``address`` (the sender's network address) is kept only as
        :func:`address_tag` under the round's salt; with a per-address limit set,
        one more report from a full address raises :class:`AddressLimit`. The receipt
        carries the ε this device has now spent in the poll (``spent_epsilon``).

        ONE write transaction (:meth:`Store.report_unit`) reads the poll, the question
        and its round, this device's reports in the poll and its address's count, and
        inserts; a report that counts against the budget or the per-address limit holds
        the poll's row for it, so two processes cannot both pass the same check.
        """
        norm = normalize_join_code(code)
        qid = _id("question id", question_id)
        sid = _submission_id(submission_id)
        device = _device_id(device_id)
        arrived = self.now()  # a countdown's deadline is against this, however long the wait
        with self._store.report_unit() as unit:
            receipt, from_address = self._submit(unit, norm, qid, answer, design_params, sid,
                                                  device, bool(simulated), address, arrived)
        if from_address in BURST_LOG_AT:
            _LOG.warning("question %d round %d: %d reports so far came from one network "
                         "address (a class behind one NAT, or one device voting with many "
                         "cookies: see the dashboard's plausibility check)", receipt.question_id,
                         receipt.round_number, from_address)
        return receipt

    def _submit(self, unit: ReportUnit, code: str, qid: int, answer: object,
                design_params: object, sid: str, device: str, simulated: bool,
                address: str | None, arrived: datetime) -> tuple[Receipt, int]:
        """:meth:`submit_report` inside its transaction: the receipt, and how many reports
        of the round came from this one's address (0 when none was given or none stored).
        ``arrived``: when the report reached the server (its time, and what a countdown's
        deadline is checked against)."""
        poll, question, rnd = unit.context(code, qid, hold_poll=self._holds_poll)
        if poll is None:
            raise UnknownPoll(f"no poll has join code {code}; check the code on the projector")
        if question is None or rnd is None:
            raise UnknownQuestion(f"question {qid} is not part of poll {code}")
        tokens = {s.round_id: dedup_token(s.salt, device) for s in unit.poll_rounds(poll.id)}
        mine = unit.reports_by_tokens(tokens.items())
        spent = _spent(mine)
        own = next((r for r in mine if r.round_id == rnd.round_id), None)
        if own is not None:  # a double tap, a refresh, a second tab: the first receipt
            return self._receipt(question, own, rnd.number, already=True,
                                 spent=finite_or_inf(spent)), 0
        if not unit.round_open(rnd.round_id, arrived):  # closed, a new round, time is up
            raise QuestionClosed("voting is closed for this question")
        stored, design_json, design = self._check_report(question, answer, design_params)
        total = finite_or_inf([*spent, design_epsilon(design)])
        if poll.epsilon_budget is not None and total > poll.epsilon_budget * (1 + 1e-9):
            raise OverBudget(
                f"this answer would bring the privacy this phone has spent in the "
                f"poll to ε = {epsilon_up(total)}, over the poll's budget of ε = "
                f"{epsilon_up(poll.epsilon_budget)}, so it was not saved")
        tag = address_tag(rnd.salt, address) if address else None
        before = unit.address_count(rnd.round_id, tag) if tag is not None else 0
        if self._max_per_address is not None and before >= self._max_per_address:
            _LOG.warning("question %d round %d: refused a report, its network address "
                         "already sent %d (the per-address limit)", question.id, rnd.number,
                         self._max_per_address)
            raise AddressLimit(f"{self._max_per_address} answers to this question already "
                               "came from this network, the most the instructor allows")
        now = arrived
        token = tokens.get(rnd.round_id) or dedup_token(rnd.salt, device)
        if unit.insert(round_id=rnd.round_id, answer=stored, design_json=design_json,
                       created_at=now, submission_id=sid, token=token, simulated=simulated,
                       address_tag=tag):
            return _make_receipt(question, rnd.number, stored, design, now, already=False,
                                 simulated=simulated, spent=total), \
                before + 1 if tag is not None else 0
        # The token or the submission id is stored already: a second tab of this device
        # that committed first (its receipt), or another answer's submission id.
        row = unit.find_report(rnd.round_id, token, sid)
        if row is None:  # the conflicting row vanished in between (deleted)
            raise StoreUnavailable("database unavailable, not saved — try again")
        if row.submission_id_matched:  # never show another device's receipt
            raise BadReport("this submission id was already used for another answer; the "
                            "page must generate a new one per answer")
        return self._receipt(question, row, rnd.number, already=True,
                             spent=finite_or_inf([*spent, *_spent([row])])), 0

    def device_status(self, poll_id: int, question_id: int | None, device_id: str
                      ) -> tuple[Receipt | None, float]:
        """This device's receipt for the current round of ``question_id`` (None: not
        answered, or no question) and the ε it has spent in the poll, from ONE read.

        Nothing stored links a device's reports: each round's token is recomputed from
        the device id presented now.
        """
        pid = _id("poll id", poll_id)
        qid = None if question_id is None else _id("question id", question_id)
        if not isinstance(device_id, str) or not device_id:
            self.poll(pid)
            return None, 0.0
        found = self._store.device_reports(pid, lambda s: dedup_token(s.salt, device_id),
                                           question_id=qid)
        found = _poll_found(found, pid)
        question, secrets_, rows = found
        spent = finite_or_inf(_spent(rows))
        if question is None:
            return None, spent
        current = {s.round_id for s in secrets_
                   if s.question_id == question.id and s.number == question.round_number}
        row = next((r for r in rows if r.round_id in current), None)
        receipt = None if row is None else self._receipt(question, row, question.round_number,
                                                         already=True, spent=spent)
        return receipt, spent

    def receipt_for(self, question_id: int, device_id: str) -> Receipt | None:
        """This device's receipt in the question's current round, or None."""
        q = self.question(question_id)
        return self.device_status(q.poll_id, q.id, device_id)[0]

    def spent_epsilon(self, poll_id: int, device_id: str) -> float:
        """Sequential composition of the ε of every report this device made in this poll
        (see :meth:`device_status`)."""
        return self.device_status(poll_id, None, device_id)[1]

    # -- rehearsal ------------------------------------------------------------------------
    def rehearsal_class(self, question_id: int, n: int, true_share: float | Sequence[float],
                        *, seed: int | None = None) -> tuple[float, ...]:
        """The true answers of a simulated class of ``n`` with exactly the chosen shares.

        Binary: ``round(true_share * n)`` students answer ``options[1]``; categorical:
        each option gets its share of ``n`` by largest remainders; numeric:
        ``true_share`` is the class's true mean, and the values are spread evenly and
        symmetrically around it within the range (:func:`numeric_class`). The order is
        shuffled. A class with exactly the chosen share is what the rehearsal's 95% CI
        is about: the fixed-class SD describes the randomness for *this* class.
        The truths exist only in memory.
        """
        question = self.question(question_id)
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_SIMULATED:
            raise BadInput(f"the number of simulated students must be 1..{MAX_SIMULATED}, "
                           f"got {n!r}")
        rng = np.random.default_rng(seed)
        truths = kinds.kind(question.kind).true_class(question.design, question.options, n,
                                                      true_share)
        return tuple(v.item() for v in rng.permutation(truths))

    def add_simulated_reports(self, question_id: int, n: int, true_share: float | Sequence[float],
                              *, seed: int | None = None) -> int:
        """Fake students for rehearsal: a class with exactly the chosen shares
        (:meth:`rehearsal_class`), randomized with ldp_core, validated like real reports,
        stored with ``simulated=True``. The question must be open. Returns the number of
        reports written.
        """
        truths = self.rehearsal_class(question_id, n, true_share, seed=seed)
        return self.add_simulated_answers(question_id, truths, seed=seed)

    def add_simulated_answers(self, question_id: int, truths: Sequence[float], *,
                              seed: int | None = None) -> int:
        """Randomize the given true answers on the server with ldp_core and store them as
        simulated reports (the same checks as real reports). The truths are not stored.

        ``truths`` are option numbers, or for a numeric question values in its range.
        """
        question, rnd = self._open_round(question_id, "simulated students")
        strategy = kinds.kind(question.kind)
        values = np.asarray(truths)
        what = "values in the question's range" if strategy.continuous else "option numbers"
        if values.ndim != 1 or not 1 <= values.size <= MAX_SIMULATED or not (
                np.issubdtype(values.dtype, np.integer)
                or (strategy.continuous and np.issubdtype(values.dtype, np.floating))):
            raise BadInput(f"simulated answers must be 1..{MAX_SIMULATED} {what}")
        answers = strategy.simulate(question.design, question.options, values,
                                    np.random.default_rng(seed))
        return self._insert_simulated(question, rnd, answers)

    def add_stuffed_reports(self, question_id: int, n: int, *, target: int | None = None
                            ) -> int:
        """Rehearsal of ballot stuffing: ``n`` fake users who skip the randomizer and always
        send the report that pushes ``target`` up (``ldp_core.fake_report``): the answer
        that supports ``options[target]`` of a yes/no question (default 1) or a
        categorical one (default 0), the largest report a numeric question's server
        accepts. Stored as simulated reports, with the same checks as real ones.
        """
        question, rnd = self._open_round(question_id, "stuffers")
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_SIMULATED:
            raise BadInput(f"the number of stuffers must be 1..{MAX_SIMULATED}, got {n!r}")
        answers = kinds.kind(question.kind).stuffed(question.design, question.options, n,
                                                    target)
        return self._insert_simulated(question, rnd, answers)

    def _open_round(self, question_id: int, who: str) -> tuple[Question, RoundSecret]:
        """The question and its current round (with the salt), refusing a closed one."""
        qid = _id("question id", question_id)
        question, rnd = _question_found(self._store.current_round_secret(qid), qid)
        if not question.is_open:
            raise QuestionClosed(f"voting is closed for this question; open it before adding "
                                 f"{who}")
        return question, rnd

    def _insert_simulated(self, question: Question, rnd: RoundSecret,
                          answers: Iterable[object]) -> int:
        """Check each answer as a real report and store them all as simulated."""
        params = question.design_params
        now = self.now()
        batch = []
        for answer in answers:
            stored, design_json, _ = self._check_report(question, answer, params)
            batch.append({
                "round_id": rnd.round_id, "answer": stored, "design_params": design_json,
                "created_at": now, "submission_id": "sim-" + secrets.token_hex(16),
                "dedup_token": dedup_token(rnd.salt, "sim-" + secrets.token_hex(16)),
                "simulated": True})
        return self._store.insert_reports(batch)

    def clear_simulated(self, question_id: int) -> int:
        """Delete the question's simulated reports (every round); real ones stay."""
        q = self.question(question_id)
        return self._store.delete_simulated(q.id)

    # -- estimates ------------------------------------------------------------------------
    def estimate(self, question_id: int, round_number: int | None = None, *,
                 include_simulated: bool = True, level: float = 0.95) -> QuestionEstimate:
        """The estimate for one round (default: the current one) with the per-round history."""
        qid = _id("question id", question_id)
        found = self._store.estimate_inputs(qid, include_simulated=include_simulated)
        found = _question_found(found, qid)
        q = found.question
        number = q.round_number if round_number is None else round_number
        est = estimate_from_groups(
            question_id=q.id, kind=q.kind, options=q.options, groups=found.groups,
            round_designs={r.number: r.design_json for r in found.rounds},
            round_number=number, level=level)
        return dataclasses.replace(est, addresses=found.addresses.get(number))

    def dashboard_snapshot(self, question_id: int, *, level: float = 0.95,
                           points: int = 60) -> DashboardSnapshot:
        """What one refresh of the dashboard shows for a question, from ONE read
        transaction: the question, its rounds, the current round's estimate and, for a
        yes/no question, its arrival trajectory."""
        qid = _id("question id", question_id)
        found = self._store.estimate_inputs(qid, with_answers=True)
        found = _question_found(found, qid)
        q = found.question
        est = estimate_from_groups(
            question_id=q.id, kind=q.kind, options=q.options, groups=found.groups,
            round_designs={r.number: r.design_json for r in found.rounds},
            round_number=q.round_number, level=level)
        est = dataclasses.replace(est, addresses=found.addresses.get(q.round_number))
        path = () if found.answers is None else trajectory(
            found.answers, points=_id("points", points), level=level)
        return DashboardSnapshot(question=q, rounds=tuple(found.rounds), estimate=est,
                                 trajectory=path)

    # -- export and replay ----------------------------------------------------------------
    def export_csv(self, question_id: int, *, include_simulated: bool = False) -> str:
        """CSV of a question's reports: round, answer, label, design params, time."""
        q = self.question(question_id)
        designs: dict[str, Design] = {}  # a round's reports share a few design texts

        def label(design_json: str, answer: str) -> str:
            if design_json not in designs:
                designs[design_json] = parse_design(design_json)
            return answer_label(designs[design_json], q.options, answer)

        return write_csv(
            (number, answer, label(design_json, answer), design_json, created.isoformat())
            for number, answer, design_json, created in self._store.export_rows(
                q.id, include_simulated=include_simulated))

    def import_csv(self, text: str, *, round_number: int | None = None,
                   level: float = 0.95) -> QuestionEstimate:
        """Replay an exported CSV for self-study (nothing is stored)."""
        return replay_from_csv(text, round_number=round_number, level=level)
