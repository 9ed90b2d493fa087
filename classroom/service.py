"""PollService: the use cases the views and the phone API call.

Validation and the server-side rules live here; SQL lives in
:mod:`classroom.store`; estimates from counts in :mod:`classroom.estimates`; CSV
export and replay in :mod:`classroom.csvio`; the mathematics in :mod:`ldp_core`. A ``PollService``
holds nothing but its store, so one instance can serve every session.
"""

from __future__ import annotations

import contextlib
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

from ldp_core import BinaryDesign, FrequencyOracle, NumericDesign, fake_report

from .csvio import replay_from_csv, write_csv
from .domain import (
    JOIN_CODE_ALPHABET,
    JOIN_CODE_LENGTH,
    MAX_QUESTION_CHARS,
    MAX_TITLE_CHARS,
    AddressLimit,
    BadInput,
    BadReport,
    BudgetStatus,
    ClassroomError,
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
    design_epsilon,
    encode_answer,
    finite_or_inf,
    normalize_join_code,
    question_design,
    utcnow,
)
from .estimates import (
    estimate_from_groups,
    exact_class,
    numeric_class,
    parse_design,
    trajectory,
)
from .plans import LessonPlan, SavedPlan, dumps, loads
from .privacy_numbers import epsilon_up
from .store import ReportRow, RoundSecret, RoundUse, Store

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
    if isinstance(value, bool):
        raise BadInput(f"{name} must be a whole number, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) < 19:
        return int(value.strip())
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


def _numeric_answers(design: NumericDesign, reports: np.ndarray) -> list[object]:
    """Reports on the unit scale in their stored form (Duchi et al.'s: the bit)."""
    if design.kind == "duchi":
        return (reports > 0).astype(int).tolist()
    return reports.tolist()


def _categorical_answers(oracle: FrequencyOracle, reports: np.ndarray) -> list[object]:
    """Perturbed categorical reports in their stored form (unary encoding: the bits)."""
    if getattr(oracle, "kind", "") == "ue":
        return ["".join("1" if b else "0" for b in row) for row in reports]
    return reports.tolist()


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




def _make_receipt(question: Question, round_number: int, answer: str, design_json: str,
                  design: Design, created_at: datetime, *, already: bool,
                  simulated: bool) -> Receipt:
    """The one way a receipt is built: the randomized answer and its label, the round, the
    design's ε, and whether this device had already answered."""
    return Receipt(
        question_id=question.id, question_text=question.text, round_number=round_number,
        answer=answer,
        answer_label=answer_label(design, question.options, answer),
        created_at=created_at, epsilon=design_epsilon(design), already_answered=already,
        simulated=simulated)






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
            lambda code: self._store.insert_poll(code, clean, bool(rehearsal), utcnow()))

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
        poll = self.poll(poll_id)
        if budget is not None:
            try:
                value = float(budget)
            except (TypeError, ValueError):
                raise BadInput(f"the budget must be a number, got {str(budget)[:24]!r}") \
                    from None
            if not (value > 0 and np.isfinite(value)):
                raise BadInput(f"the budget must be a positive, finite ε, got {budget!r}")
            status = self.budget(poll.id)
            if status.committed > value * (1 + 1e-9):
                raise OverBudget(
                    f"this poll's questions already let a student spend ε = "
                    f"{epsilon_up(status.committed)}; a budget of ε = {epsilon_up(value)} could "
                    "not be kept. "
                    "Set at least that much, or start a new poll")
            budget = value
        out = self._store.set_budget(poll.id, budget)
        return _poll_found(out, poll.id)

    def _check_opening(self, question: Question, epsilon: float, *,
                       same_round: bool) -> None:
        """Refuse (OverBudget) to open a round of ``question`` at ``epsilon`` when a student
        who answered every answered round and this one would pass the poll's budget."""
        self._check_budget(question.poll_id, epsilon, question=question, same_round=same_round,
                           refused=f"opening “{question.text[:60]}” would let")

    def _check_budget(self, poll_id: int, epsilon: float, *, question: Question | None,
                      same_round: bool, refused: str) -> None:
        """Refuse (OverBudget) a round at ``epsilon`` (of ``question``, or of a question not
        yet added) that could not open under the poll's budget now. Answered rounds only
        add up, so one that cannot open now never can, unless the budget is raised.
        ``refused`` starts the message: what was asked and that it "would let"."""
        poll = self.poll(poll_id)
        if poll.epsilon_budget is None:
            return
        uses = self._store.poll_rounds_use(poll.id)
        # Open rounds elsewhere close when this one opens; those with reports still count.
        leave_out = ((question.id, question.round_number) if question is not None and same_round
                     else None)
        status = self._budget_status(poll, uses, leave_out=leave_out, open_counts=False)
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
            return self._store.insert_plan(checked.title, document, utcnow())
        pid = _id("plan id", plan_id)
        saved = self._store.update_plan(pid, checked.title, document, utcnow())
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
            budget=checked.budget, question_rows=rows, now=utcnow()))

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
        self._check_budget(pid, design_epsilon(design), question=None, same_round=False,
                           refused=f"“{body[:60]}” was not added: it would let")
        q = _poll_found(self._store.insert_question(
            poll_id=pid, text=body, kind=kind, options_json=json.dumps(list(labels)),
            design_json=design_json, mode=mode, salt=secrets.token_bytes(SALT_BYTES),
            now=utcnow(), countdown_s=countdown), pid)
        if not open_now:
            return q
        try:
            return self.open_question(q.id)
        except ClassroomError:
            # Refused after all (the budget moved in between, say): take the question
            # back, so that a refusal leaves nothing behind.
            with contextlib.suppress(ClassroomError):
                self._store.delete_question(q.id)
            raise

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
        qs = self.questions(poll_id)
        opened = [q for q in qs if q.state == "open"]
        if opened:
            return max(opened, key=lambda q: (q.updated_at, q.position, q.id))
        left = [q for q in qs if q.state == "closed" or (q.state == "draft"
                                                         and q.round_number > 1)]
        return max(left, key=lambda q: (q.updated_at, q.position, q.id)) if left else None

    def delete_question(self, question_id: int) -> bool:
        return self._store.delete_question(_id("question id", question_id))

    def _set_state(self, question_id: int, state: str, close_others: bool = False) -> Question:
        qid = _id("question id", question_id)
        q = self._store.set_state(qid, state, utcnow(), close_others=close_others)
        return _question_found(q, qid)

    def open_question(self, question_id: int) -> Question:
        """Open for answers; any other open question of the poll is closed.

        Refused (:class:`OverBudget`) when the poll's privacy budget cannot pay for it.
        """
        q = self.question(question_id)
        self._check_opening(q, q.epsilon, same_round=True)
        return self._set_state(q.id, "open", close_others=True)

    def close_question(self, question_id: int) -> Question:
        return self._set_state(question_id, "closed")

    def set_revealed(self, question_id: int, revealed: bool) -> Question:
        qid = _id("question id", question_id)
        q = self._store.set_revealed(qid, bool(revealed), utcnow())
        return _question_found(q, qid)

    def set_design(self, question_id: int, design_params: dict[str, Any]) -> Question:
        """Change the current round's design; stored reports keep their own parameters."""
        q = self.question(question_id)
        design, design_json = question_design(q.kind, design_params, q.options)
        if q.is_open:
            self._check_opening(q, design_epsilon(design), same_round=True)
        out = self._store.set_design(q.id, design_json, utcnow())
        return _question_found(out, q.id)

    def new_round(self, question_id: int, design_params: dict[str, Any] | None = None, *,
                  open_now: bool = False) -> Round:
        """Ask again: round n + 1 with a fresh salt (``design_params`` None keeps the design).

        The question returns to draft (open with ``open_now=True``) and its
        results are hidden; earlier rounds stay in the history. Under a privacy budget, a
        round that could not open now is refused (:class:`OverBudget`), draft or not:
        nothing changes.
        """
        q = self.question(question_id)
        design_json = None
        epsilon = q.epsilon
        if design_params is not None:
            design, design_json = question_design(q.kind, design_params, q.options)
            epsilon = design_epsilon(design)
        self._check_budget(q.poll_id, epsilon, question=q, same_round=False,
                           refused=f"round {q.round_number + 1} of “{q.text[:60]}” was not "
                                   "started: it would let")
        r = self._store.insert_round(q.id, design_json, secrets.token_bytes(SALT_BYTES),
                                     utcnow(), "open" if open_now else "draft")
        return _question_found(r, q.id)

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

    def _receipt(self, question: Question, row: ReportRow, number: int,
                 already: bool) -> Receipt:
        return _make_receipt(question, number, row.answer, row.design_json,
                             parse_design(row.design_json), row.created_at,
                             already=already, simulated=row.simulated)

    def _existing(self, question: Question, rnd: RoundSecret, token: str,
                  submission_id: str | None) -> Receipt | None:
        row = self._store.find_report(rnd.round_id, token, submission_id)
        if row is None:
            return None
        if row.submission_id_matched:
            # Another device's or another round's report: refuse, and never show its receipt.
            raise BadReport("this submission id was already used for another answer; the "
                            "page must generate a new one per answer")
        return self._receipt(question, row, rnd.number, True)

    def submit_report(self, code: str, question_id: int, *, answer: object,
                      design_params: dict[str, Any], submission_id: str, device_id: str,
                      simulated: bool = False, address: str | None = None) -> Receipt:
        """Store one randomized report, or explain why not (nothing is written then).

        A device that already answered this round (double tap, refresh, second
        tab) gets its FIRST receipt back with ``already_answered=True``.
        ``address`` (the sender's network address) is kept only as
        :func:`address_tag` under the round's salt; with a per-address limit set,
        one more report from a full address raises :class:`AddressLimit`.
        """
        norm = normalize_join_code(code)
        qid = _id("question id", question_id)
        sid = _submission_id(submission_id)
        device = _device_id(device_id)
        poll, question, rnd = self._store.report_context(norm, qid)
        if poll is None:
            raise UnknownPoll(f"no poll has join code {norm}; check the code on the projector")
        if question is None or rnd is None:
            raise UnknownQuestion(f"question {qid} is not part of poll {norm}")
        token = dedup_token(rnd.salt, device)
        if not question.is_open:
            existing = self._existing(question, rnd, token, sid)
            if existing is not None:
                return existing
            raise QuestionClosed("voting is closed for this question")
        try:
            stored, design_json, design = self._check_report(question, answer, design_params)
        except BadReport:
            existing = self._existing(question, rnd, token, sid)
            if existing is not None:
                return existing
            raise
        if poll.epsilon_budget is not None:
            spent = self.spent_epsilon(poll.id, device)
            total = spent + design_epsilon(design)
            if total > poll.epsilon_budget * (1 + 1e-9):
                existing = self._existing(question, rnd, token, sid)
                if existing is not None:
                    return existing
                raise OverBudget(
                    f"this answer would bring the privacy this phone has spent in the "
                    f"poll to ε = {epsilon_up(total)}, over the poll's budget of ε = "
                    f"{epsilon_up(poll.epsilon_budget)}, so it was not saved")
        now = utcnow()
        tag = address_tag(rnd.salt, address) if address else None
        try:
            inserted = self._store.insert_report(
                round_id=rnd.round_id, answer=stored, design_json=design_json, created_at=now,
                submission_id=sid, token=token, simulated=bool(simulated), address_tag=tag,
                max_per_address=self._max_per_address)
        except QuestionClosed:  # closed (or a new round began) since we looked
            existing = self._existing(question, rnd, token, sid)
            if existing is not None:
                return existing
            raise
        except AddressLimit:
            _LOG.warning("question %d round %d: refused a report, its network address "
                         "already sent %d (the per-address limit)", question.id, rnd.number,
                         self._max_per_address)
            raise
        if inserted is not None and inserted in BURST_LOG_AT:
            _LOG.warning("question %d round %d: %d reports so far came from one network "
                         "address (a class behind one NAT, or one device voting with many "
                         "cookies: see the dashboard's plausibility check)", question.id,
                         rnd.number, inserted)
        if inserted is not None:
            return _make_receipt(question, rnd.number, stored, design_json, design, now,
                                 already=False, simulated=bool(simulated))
        existing = self._existing(question, rnd, token, sid)
        if existing is None:  # the conflicting row vanished in between (deleted)
            raise StoreUnavailable("database unavailable, not saved — try again")
        return existing

    def receipt_for(self, question_id: int, device_id: str) -> Receipt | None:
        """This device's receipt in the question's current round, or None."""
        qid = _id("question id", question_id)
        found = self._store.current_round_secret(qid)
        found = _question_found(found, qid)
        question, rnd = found
        if not isinstance(device_id, str) or not device_id:
            return None
        row = self._store.find_report(rnd.round_id, dedup_token(rnd.salt, device_id))
        return None if row is None else self._receipt(question, row, rnd.number, True)

    def spent_epsilon(self, poll_id: int, device_id: str) -> float:
        """Sequential composition of the ε of every report this device made in this poll.

        Nothing stored links a device's reports: each round's token is
        recomputed from the device id presented now.
        """
        pid = _id("poll id", poll_id)
        secrets_ = self._store.poll_round_secrets(pid)
        if not secrets_:
            self.poll(pid)
            return 0.0
        if not isinstance(device_id, str) or not device_id:
            return 0.0
        rows = self._store.reports_by_tokens(
            (s.round_id, dedup_token(s.salt, device_id)) for s in secrets_)
        return finite_or_inf([design_epsilon(parse_design(r.design_json)) for r in rows])

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
        design = question.design
        if isinstance(design, NumericDesign):
            truths = numeric_class(design.range, n, true_share)
        else:
            truths = exact_class(question.kind, len(question.options), n, true_share)
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
        numeric = question.kind == "numeric"
        values = np.asarray(truths)
        what = "values in the question's range" if numeric else "option numbers"
        if values.ndim != 1 or not 1 <= values.size <= MAX_SIMULATED or not (
                np.issubdtype(values.dtype, np.integer)
                or (numeric and np.issubdtype(values.dtype, np.floating))):
            raise BadInput(f"simulated answers must be 1..{MAX_SIMULATED} {what}")
        design = question.design
        rng = np.random.default_rng(seed)
        answers: Iterable[object]
        if isinstance(design, NumericDesign):
            try:
                reports = design.perturb_values(values, rng=rng)
            except ValueError as exc:
                raise BadInput(f"simulated answers: {exc}") from None
            answers = _numeric_answers(design, reports)
        elif values.min() < 0 or values.max() >= len(question.options):
            raise BadInput("simulated answers must be option numbers "
                           f"0..{len(question.options) - 1}")
        elif isinstance(design, BinaryDesign):
            answers = design.perturb(values.astype(bool), rng=rng).tolist()
        else:
            answers = _categorical_answers(design, design.perturb(values, rng=rng))
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
        design = question.design
        if isinstance(design, NumericDesign):
            answers = _numeric_answers(design, np.full(n, fake_report(design.mechanism)))
        else:
            k = len(question.options)
            t = (1 if question.kind == "binary" else 0) if target is None else target
            if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < k:
                raise BadInput(f"the stuffers' target must be an option number 0..{k - 1}, "
                               f"got {t!r}")
            report = fake_report(design, t)
            answers = ([int(report)] * n if isinstance(design, BinaryDesign)
                       else _categorical_answers(design, np.array([report] * n)))
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
        now = utcnow()
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
