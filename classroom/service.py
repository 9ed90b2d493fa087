"""PollService: the API the pages call.

Validation and the server-side rules live here; SQL lives in
:mod:`classroom.store`; the mathematics in :mod:`ldp_core`. A ``PollService``
holds nothing but its store, so one instance can serve every session.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import hmac
import io
import json
import logging
import math
import re
import secrets
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, TypeVar

import numpy as np

import ldp_core
from ldp_core import BinaryCounts, BinaryDesign, FrequencyOracle

from .domain import (
    JOIN_CODE_ALPHABET,
    JOIN_CODE_LENGTH,
    KINDS,
    MAX_QUESTION_CHARS,
    MAX_TITLE_CHARS,
    MODES,
    AddressLimit,
    BadInput,
    BadReport,
    CategoricalEstimate,
    DashboardSnapshot,
    Design,
    Poll,
    Question,
    QuestionClosed,
    QuestionEstimate,
    Receipt,
    Round,
    StoreUnavailable,
    TrajectoryPoint,
    UnknownPoll,
    UnknownQuestion,
    answer_label,
    canonical_design,
    clean_options,
    clean_text,
    design_epsilon,
    encode_answer,
    finite_or_inf,
    kind_of_params,
    normalize_join_code,
    utcnow,
)
from .store import ReportRow, RoundSecret, Store

__all__ = [
    "CSV_COLUMNS",
    "MAX_SIMULATED",
    "BURST_LOG_AT",
    "PollService",
    "address_tag",
    "dedup_token",
    "exact_class",
    "estimate_from_groups",
    "new_join_code",
    "replay_from_csv",
    "trajectory",
]

#: Columns of an exported question, in order. No tokens, no submission ids.
CSV_COLUMNS = ("round", "answer", "answer_label", "design_params", "created_at")
MAX_SIMULATED = 100_000
MAX_CSV_ROWS = 1_000_000
SALT_BYTES = 32
_LOG = logging.getLogger(__name__)
T = TypeVar("T")
_SUBMISSION_ID = re.compile(r"[A-Za-z0-9_.:\-]{8,100}")
_MAX_DEVICE_ID = 256


def new_join_code() -> str:
    """Six characters from the unambiguous alphabet, from the OS CSPRNG."""
    return "".join(secrets.choice(JOIN_CODE_ALPHABET) for _ in range(JOIN_CODE_LENGTH))


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


def _any_design(text: str) -> Design:
    params = json.loads(text)
    return canonical_design(kind_of_params(params), params)[0]


def _make_receipt(question: Question, round_number: int, answer: str, design_json: str,
                  design: Design, created_at: datetime, *, already: bool,
                  simulated: bool) -> Receipt:
    """The one way a receipt is built: the randomized answer and its label, the round, the
    design's ε, and whether this device had already answered."""
    return Receipt(
        question_id=question.id, question_text=question.text, round_number=round_number,
        answer=answer,
        answer_label=answer_label(question.kind, _design_name(design_json), question.options,
                                  answer),
        created_at=created_at, epsilon=design_epsilon(design), already_answered=already,
        simulated=simulated)


def _binary_design(text: str) -> BinaryDesign:
    design = _any_design(text)
    if not isinstance(design, BinaryDesign):
        raise BadInput(f"a yes/no round holds a report of another kind: {text[:80]}")
    return design


def _design_name(text: str) -> str:
    return str(json.loads(text).get("design", ""))


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
        for _ in range(20):
            poll = self._store.insert_poll(new_join_code(), clean, bool(rehearsal), utcnow())
            if poll is not None:
                return poll
        raise StoreUnavailable("could not find a free join code — try again")

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

    # -- questions ------------------------------------------------------------------------
    @staticmethod
    def _design(kind: str, params: object, options: tuple[str, ...]) -> tuple[Design, str]:
        try:
            design, text = canonical_design(kind, params)
        except ValueError as exc:
            raise BadInput(f"design parameters: {exc}") from exc
        if isinstance(design, BinaryDesign) and not design.informative:
            raise BadInput("this design's report carries no information about the answer "
                           "(a == b); no estimate would be possible — choose another design")
        if isinstance(design, FrequencyOracle) and design.d != len(options):
            raise BadInput(f"the design is for d = {design.d} options but the question has "
                           f"{len(options)}")
        return design, text

    def add_question(self, poll_id: int, text: str, *, options: Sequence[str] = ("No", "Yes"),
                     design_params: dict[str, Any], kind: str = "binary",
                     mode: str = "device") -> Question:
        """Add a draft question with round 1.

        Binary: ``options[0]`` is answer 0, ``options[1]`` answer 1 (the share
        estimated), e.g. ``("Chocolate", "Vanilla")``.
        """
        pid = _id("poll id", poll_id)
        if kind not in KINDS:
            raise BadInput(f"kind must be one of {', '.join(KINDS)}, got {str(kind)[:24]!r}")
        if mode not in MODES:
            raise BadInput(f"mode must be one of {', '.join(MODES)}, got {str(mode)[:24]!r}")
        body = clean_text("question text", text, 1, MAX_QUESTION_CHARS, multiline=True)
        labels = clean_options(tuple(options) if isinstance(options, list) else options, kind)
        _, design_json = self._design(kind, design_params, labels)
        q = self._store.insert_question(
            poll_id=pid, text=body, kind=kind, options_json=json.dumps(list(labels)),
            design_json=design_json, mode=mode, salt=secrets.token_bytes(SALT_BYTES),
            now=utcnow())
        return _poll_found(q, pid)

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
        """What a student sees: the open question, else the most recently closed one."""
        qs = self.questions(poll_id)
        for state in ("open", "closed"):
            cands = [q for q in qs if q.state == state]
            if cands:
                return max(cands, key=lambda q: (q.updated_at, q.position, q.id))
        return None

    def delete_question(self, question_id: int) -> bool:
        return self._store.delete_question(_id("question id", question_id))

    def _set_state(self, question_id: int, state: str, close_others: bool = False) -> Question:
        qid = _id("question id", question_id)
        q = self._store.set_state(qid, state, utcnow(), close_others=close_others)
        return _question_found(q, qid)

    def open_question(self, question_id: int) -> Question:
        """Open for answers; any other open question of the poll is closed."""
        return self._set_state(question_id, "open", close_others=True)

    def close_question(self, question_id: int) -> Question:
        return self._set_state(question_id, "closed")

    def set_revealed(self, question_id: int, revealed: bool) -> Question:
        qid = _id("question id", question_id)
        q = self._store.set_revealed(qid, bool(revealed), utcnow())
        return _question_found(q, qid)

    def set_design(self, question_id: int, design_params: dict[str, Any]) -> Question:
        """Change the current round's design; stored reports keep their own parameters."""
        q = self.question(question_id)
        _, design_json = self._design(q.kind, design_params, q.options)
        out = self._store.set_design(q.id, design_json, utcnow())
        return _question_found(out, q.id)

    def new_round(self, question_id: int, design_params: dict[str, Any] | None = None, *,
                  open_now: bool = False) -> Round:
        """Ask again: round n + 1 with a fresh salt (``design_params`` None keeps the design).

        The question returns to draft (open with ``open_now=True``) and its
        results are hidden; earlier rounds stay in the history.
        """
        q = self.question(question_id)
        design_json = None
        if design_params is not None:
            _, design_json = self._design(q.kind, design_params, q.options)
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
                             _any_design(row.design_json), row.created_at,
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
        return finite_or_inf([design_epsilon(_any_design(r.design_json)) for r in rows])

    # -- rehearsal ------------------------------------------------------------------------
    def rehearsal_class(self, question_id: int, n: int, true_share: float | Sequence[float],
                        *, seed: int | None = None) -> tuple[int, ...]:
        """The true answers of a simulated class of ``n`` with exactly the chosen shares.

        Binary: ``round(true_share * n)`` students answer ``options[1]``; categorical:
        each option gets its share of ``n`` by largest remainders. The order is
        shuffled. A class with exactly the chosen share is what the rehearsal's 95% CI
        is about: the fixed-class SD describes the die's randomness for *this* class.
        The truths exist only in memory.
        """
        question = self.question(question_id)
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_SIMULATED:
            raise BadInput(f"the number of simulated students must be 1..{MAX_SIMULATED}, "
                           f"got {n!r}")
        rng = np.random.default_rng(seed)
        return tuple(int(v) for v in rng.permutation(
            exact_class(question.kind, len(question.options), n, true_share)))

    def add_simulated_reports(self, question_id: int, n: int, true_share: float | Sequence[float],
                              *, seed: int | None = None) -> int:
        """Fake students for rehearsal: a class with exactly the chosen shares
        (:meth:`rehearsal_class`), randomized with ldp_core, validated like real reports,
        stored with ``simulated=True``. The question must be open. Returns the number of
        reports written.
        """
        truths = self.rehearsal_class(question_id, n, true_share, seed=seed)
        return self.add_simulated_answers(question_id, truths, seed=seed)

    def add_simulated_answers(self, question_id: int, truths: Sequence[int], *,
                              seed: int | None = None) -> int:
        """Randomize the given true answers on the server with ldp_core and store them as
        simulated reports (the same checks as real reports). The truths are not stored."""
        qid = _id("question id", question_id)
        values = np.asarray(truths)
        if values.ndim != 1 or not 1 <= values.size <= MAX_SIMULATED \
                or not np.issubdtype(values.dtype, np.integer):
            raise BadInput(f"simulated answers must be 1..{MAX_SIMULATED} option numbers")
        found = self._store.current_round_secret(qid)
        found = _question_found(found, qid)
        question, rnd = found
        if not question.is_open:
            raise QuestionClosed("voting is closed for this question; open it before adding "
                                 "simulated students")
        if values.min() < 0 or values.max() >= len(question.options):
            raise BadInput("simulated answers must be option numbers "
                           f"0..{len(question.options) - 1}")
        design = question.design
        rng = np.random.default_rng(seed)
        if question.kind == "binary":
            answers: Iterable[object] = design.perturb(values.astype(bool), rng).tolist()
        else:
            perturbed = design.perturb(values, rng)
            if getattr(design, "kind", "") == "ue":
                answers = ["".join("1" if b else "0" for b in row) for row in perturbed]
            else:
                answers = perturbed.tolist()
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

    def estimate_trajectory(self, question_id: int, round_number: int | None = None, *,
                            points: int = 60, include_simulated: bool = True,
                            level: float = 0.95) -> tuple[TrajectoryPoint, ...]:
        """μ̂ and its normal interval after the first k reports, for up to ``points`` values
        of k spread over the round (always including the last report): the estimate
        converging as the class votes. Binary questions only; empty when n = 0.
        """
        qid = _id("question id", question_id)
        q = self.question(qid)
        if q.kind != "binary":
            raise BadInput("the arrival trajectory is drawn for yes/no questions only")
        number = q.round_number if round_number is None else _id("round", round_number)
        answers = self._store.answers_in_order(qid, number, include_simulated=include_simulated)
        return trajectory(answers, points=_id("points", points), level=level)

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
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for number, answer, design_json, created in self._store.export_rows(
                q.id, include_simulated=include_simulated):
            writer.writerow([csv_safe(cell) for cell in (
                number, answer,
                answer_label(q.kind, _design_name(design_json), q.options, answer),
                design_json, created.isoformat())])
        return out.getvalue()

    def import_csv(self, text: str, *, round_number: int | None = None,
                   level: float = 0.95) -> QuestionEstimate:
        """Replay an exported CSV for self-study (nothing is stored)."""
        return replay_from_csv(text, round_number=round_number, level=level)


# -- CSV cells ------------------------------------------------------------------------------
#: A spreadsheet reads a cell starting with these as a formula (OWASP, "CSV Injection").
_FORMULA_START = frozenset("=+-@\t\r")


def csv_safe(cell: object) -> object:
    """Neutralise a text cell a spreadsheet would run as a formula (OWASP CSV injection).

    A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
    return, also after leading spaces, is prefixed with a single quote; other
    values pass unchanged. :func:`csv_unsafe` undoes it when the app reads its
    own export back.

    >>> csv_safe("=SUM(A1:A9)"), csv_safe(" +1"), csv_safe("No"), csv_safe(3)
    ("'=SUM(A1:A9)", "' +1", 'No', 3)
    """
    if isinstance(cell, str) and cell and (cell[0] in _FORMULA_START
                                           or cell.lstrip(" ")[:1] in _FORMULA_START):
        return "'" + cell
    return cell


def csv_unsafe(cell: str) -> str:
    """The text :func:`csv_safe` was given.

    >>> csv_unsafe(csv_safe("=1+1")), csv_unsafe("'quoted'")
    ('=1+1', "'quoted'")
    """
    rest = cell[1:]
    if cell.startswith("'") and rest and csv_safe(rest) != rest:
        return rest
    return cell


# -- rehearsal classes ------------------------------------------------------------------------
def exact_class(kind: str, k: int, n: int, true_share: float | Sequence[float]) -> np.ndarray:
    """True answers (unshuffled) of a class of ``n`` with exactly the chosen shares.

    >>> exact_class("binary", 2, 40, 0.6).sum(), exact_class("binary", 2, 5, 0.5).sum()
    (np.int64(24), np.int64(3))
    >>> np.bincount(exact_class("categorical", 3, 10, (1, 1, 1)), minlength=3).tolist()
    [4, 3, 3]
    """
    if kind == "binary":
        try:
            share = float(true_share)  # type: ignore[arg-type]  # a number from a slider; the rest raises, caught below
        except (TypeError, ValueError):
            share = math.nan
        if not 0.0 <= share <= 1.0:
            raise BadInput(f"true_share must be a number in [0, 1], got {true_share!r}")
        yes = math.floor(share * n + 0.5)  # round half up: 0.5 of 5 students is 3
        return np.repeat(np.array([1, 0]), [yes, n - yes])
    shares = np.asarray(true_share, dtype=float).ravel()
    if shares.size != k or not np.all(np.isfinite(shares)) or np.any(shares < 0) \
            or shares.sum() <= 0:
        raise BadInput(f"true_share must be {k} non-negative shares, one per option")
    quota = shares / shares.sum() * n
    counts = np.floor(quota).astype(int)
    rest = n - counts.sum()
    counts[np.argsort(-(quota - counts), kind="stable")[:rest]] += 1  # largest remainders
    return np.repeat(np.arange(k), counts)


# -- estimation from grouped counts (shared by the store path and CSV replay) --------------


def trajectory(answers: Sequence[tuple[str, str]], *, points: int = 60,
               level: float = 0.95) -> tuple[TrajectoryPoint, ...]:
    """μ̂ and its normal interval after the first k of these ``(design JSON, answer)``
    reports (arrival order), for up to ``points`` values of k spread over them, the last
    one included; each report corrected with its own design."""
    total = len(answers)
    if total == 0:
        return ()
    steps = max(1, points)
    marks = sorted({max(1, round(total * i / steps)) for i in range(1, steps + 1)})
    designs: dict[str, BinaryDesign] = {}
    counts: dict[str, list[int]] = {}
    out: list[TrajectoryPoint] = []
    for k, (design_json, answer) in enumerate(answers, start=1):
        if design_json not in designs:
            designs[design_json] = _binary_design(design_json)
            counts[design_json] = [0, 0]
        counts[design_json][0] += 1
        counts[design_json][1] += answer == "1"
        if k == marks[len(out)]:
            bc = BinaryCounts(tuple((designs[j], n, y) for j, (n, y) in counts.items()))
            interval, mu = bc.normal_interval(level), bc.unbiased()
            if interval is not None and mu is not None:  # k >= 1: both exist
                out.append(TrajectoryPoint(k, mu, *interval))
    return tuple(out)


def _binary_round(design_of: Callable[[str], Any], items: list[tuple[str, str, int]],
                  fallback: str | None) -> tuple[BinaryCounts, tuple[int, int]]:
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # design json -> [n, yes]
    for design_json, answer, count in items:
        cell = per[design_json]
        cell[0] += count
        if answer == "1":
            cell[1] += count
    if fallback is not None and fallback not in per:
        per[fallback] = [0, 0]
    groups = tuple((design_of(dj), n, yes) for dj, (n, yes) in per.items())
    counts = BinaryCounts(groups)
    return counts, (counts.n - counts.yes, counts.yes)


def _categorical_round(design_of: Callable[[str], Any], items: list[tuple[str, str, int]],
                       fallback: str | None, k: int) -> CategoricalEstimate:
    per: dict[str, np.ndarray] = {}
    ns: dict[str, int] = defaultdict(int)
    ones: dict[str, np.ndarray] = {}  # unary encoding: reports by their number of 1-bits
    for design_json, answer, count in items:
        design = design_of(design_json)
        support = per.setdefault(design_json, np.zeros(k, dtype=np.int64))
        if getattr(design, "kind", "") == "ue":
            bits = np.frombuffer(answer.encode("ascii"), dtype=np.uint8).astype(np.int64) - 48
            support += count * bits
            ones.setdefault(design_json, np.zeros(k + 1, dtype=np.int64))[int(bits.sum())] += count
        else:
            support[int(answer)] += count
        ns[design_json] += count
    designs = [design_of(dj) for dj in per] + ([design_of(fallback)] if fallback else [])
    eps = max((float(d.epsilon) for d in designs), default=0.0)
    n = sum(ns.values())
    support_total = sum(per.values(), np.zeros(k, dtype=np.int64))
    if n == 0:
        return CategoricalEstimate(n=0, support_counts=tuple(int(c) for c in support_total),
                                   raw=None, clipped=None, norm_sub=None, sd=None, epsilon=eps)
    raw = np.zeros(k)
    for dj, support in per.items():
        raw += design_of(dj).estimate_counts(support, ns[dj])
    ns_counts = ldp_core.norm_sub(raw, n)
    shares = ns_counts / n
    var = np.zeros(k)
    for dj in per:
        var += np.asarray(design_of(dj).count_variance(ns[dj], shares), dtype=float)
    checks = [ldp_core.ue_plausibility(design_of(dj), hist) for dj, hist in ones.items()]
    return CategoricalEstimate(
        n=n, support_counts=tuple(int(c) for c in support_total),
        raw=tuple(float(x) for x in raw),
        clipped=tuple(float(x) for x in ldp_core.clip_counts(raw)),
        norm_sub=tuple(float(x) for x in ns_counts),
        sd=tuple(float(math.sqrt(max(v, 0.0))) for v in var), epsilon=eps,
        plausibility=min(checks, key=lambda c: c.p_value) if checks else None)


def estimate_from_groups(*, question_id: int | None, kind: str, options: tuple[str, ...],
                         groups: Iterable[tuple[int, str, str, bool, int]],
                         round_designs: dict[int, str], round_number: int,
                         level: float = 0.95) -> QuestionEstimate:
    """Build a :class:`QuestionEstimate` from grouped counts.

    ``groups`` holds ``(round number, design JSON, stored answer, simulated,
    count)``; each group is corrected with its own design. ``round_designs``
    gives each round's current design, which defines epsilon even with n = 0.
    """
    cache: dict[str, Design] = {}

    def design_of(text: str) -> Design:
        d = cache.get(text)
        if d is None:
            d = cache[text] = canonical_design(kind, json.loads(text))[0]
        return d

    by_round: dict[int, list[tuple[str, str, int]]] = defaultdict(list)
    simulated: dict[int, int] = defaultdict(int)
    for number, design_json, answer, sim, count in groups:
        by_round[number].append((design_json, answer, count))
        if sim:
            simulated[number] += count
    numbers = tuple(sorted(set(round_designs) | set(by_round)))
    if round_number not in numbers:
        raise BadInput(f"round {round_number} does not exist; rounds: "
                       f"{', '.join(map(str, numbers)) or 'none'}")
    history: list[tuple[int, object]] = []
    chosen: dict[str, object] = {}
    for number in numbers:
        items = by_round.get(number, [])
        fallback = round_designs.get(number)
        if kind == "binary":
            counts, per_option = _binary_round(design_of, items, fallback)
            summary = counts.summary(level)
            history.append((number, summary))
            if number == round_number:
                chosen = {"binary": summary, "binary_counts": counts, "counts": per_option,
                          "n": counts.n, "epsilon": counts.epsilon}
        else:
            cat = _categorical_round(design_of, items, fallback, len(options))
            history.append((number, cat))
            if number == round_number:
                chosen = {"categorical": cat, "counts": cat.support_counts, "n": cat.n,
                          "epsilon": cat.epsilon}
    return QuestionEstimate(
        question_id=question_id, kind=kind, options=tuple(options), round_number=round_number,
        rounds=numbers, n_simulated=simulated.get(round_number, 0), history=tuple(history),
        **chosen)  # type: ignore[arg-type]  # chosen holds this kind's fields; mypy cannot check a dict against keywords


def replay_from_csv(text: str, *, round_number: int | None = None,
                    level: float = 0.95) -> QuestionEstimate:
    """Parse an exported question CSV back into grouped counts and estimate it.

    Errors are :class:`BadInput` naming the row (1 = header) and the column.
    """
    if not isinstance(text, str):
        raise BadInput("the CSV must be text")
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    header = reader.fieldnames or []
    missing = [c for c in ("round", "answer", "design_params") if c not in header]
    if missing:
        raise BadInput(f"the CSV lacks the column(s) {', '.join(missing)}; expected "
                       f"{','.join(CSV_COLUMNS)}")
    kind: str | None = None
    k: int | None = None
    labels: dict[int, str] = {}
    counts: dict[tuple[int, str, str], int] = defaultdict(int)
    round_designs: dict[int, str] = {}
    canon_cache: dict[str, tuple[Design, str]] = {}
    for i, row in enumerate(reader, start=2):
        if i - 1 > MAX_CSV_ROWS:
            raise BadInput(f"the CSV has more than {MAX_CSV_ROWS} reports")
        if None in row or any(row.get(c) is None for c in ("round", "answer", "design_params")):
            raise BadInput(f"row {i}: wrong number of fields")
        raw_round = (row["round"] or "").strip()
        if not raw_round.isdigit() or int(raw_round) < 1:
            raise BadInput(f"row {i}, column 'round': expected a round number >= 1, "
                           f"got {raw_round[:24]!r}")
        number = int(raw_round)
        raw_params = row["design_params"] or ""
        try:
            cached = canon_cache.get(raw_params)
            if cached is None:
                params = json.loads(raw_params)
                row_kind = kind_of_params(params)
                cached = canon_cache[raw_params] = canonical_design(row_kind, params)
            design, design_json = cached
        except (ValueError, TypeError) as exc:
            raise BadInput(f"row {i}, column 'design_params': {exc}") from exc
        row_kind = "categorical" if isinstance(design, FrequencyOracle) else "binary"
        if kind is None:
            kind = row_kind
        elif row_kind != kind:
            raise BadInput(f"row {i}, column 'design_params': a {row_kind} design in a "
                           f"{kind} question")
        if isinstance(design, BinaryDesign) and not design.informative:
            raise BadInput(f"row {i}, column 'design_params': the design carries no "
                           "information (a == b)")
        row_k = design.d if isinstance(design, FrequencyOracle) else 2
        if k is None:
            k = row_k
        elif row_k != k:
            raise BadInput(f"row {i}, column 'design_params': d = {row_k}, earlier rows "
                           f"have {k} options")
        placeholder = tuple(str(j) for j in range(k))
        try:
            stored = encode_answer(kind, design, placeholder, (row["answer"] or "").strip())
        except BadReport as exc:
            raise BadInput(f"row {i}, column 'answer': {exc}") from exc
        label = csv_unsafe((row.get("answer_label") or "").strip())
        if label and getattr(design, "kind", "") != "ue" and int(stored) not in labels:
            labels[int(stored)] = label[:60]
        counts[(number, design_json, stored)] += 1
        round_designs.setdefault(number, design_json)
    if kind is None or k is None:
        raise BadInput("the CSV has no reports")
    default = ("No", "Yes") if kind == "binary" else tuple(f"option {j + 1}" for j in range(k))
    options = tuple(labels.get(j, default[j]) for j in range(k))
    if len(set(options)) != k:
        options = default
    groups = [(number, dj, ans, False, c) for (number, dj, ans), c in counts.items()]
    return estimate_from_groups(
        question_id=None, kind=kind, options=options, groups=groups,
        round_designs=round_designs,
        round_number=max(round_designs) if round_number is None else round_number,
        level=level)

