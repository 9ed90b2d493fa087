"""Reporting: a phone's randomized report, stored in ONE write transaction, its
receipt, and what a device has spent in a poll.

Every report, real, simulated or replayed, is validated by :func:`check_report`.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import re
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from ..domain import (
    AddressLimit,
    BadReport,
    Design,
    OverBudget,
    Poll,
    Question,
    QuestionClosed,
    Receipt,
    StoreUnavailable,
    UnknownPoll,
    UnknownQuestion,
    answer_label,
    canonical_design,
    design_epsilon,
    design_params_of,
    encode_answer,
    finite_or_inf,
    normalize_join_code,
)
from ..estimates import parse_design
from ..kinds.binary import series_of
from ..privacy_numbers import epsilon_up
from ..store import ReportRow, ReportUnit, Store
from .budget import spent_charges
from .common import poll_found, question_found, row_id

__all__ = ["BURST_LOG_AT", "GRACE_S", "Reports", "address_tag", "check_report", "dedup_token"]

_LOG = logging.getLogger(__name__)
_SUBMISSION_ID = re.compile(r"[A-Za-z0-9_.:\-]{8,100}")
_MAX_DEVICE_ID = 256

#: The grace time (s): a report that reaches the server less than this long after voting on
#: its round ended (the instructor's Close or Next, another question opening, or the
#: countdown's deadline) is stored as if it had arrived before. A phone sends its report at
#: the tap, while the question is open on its screen; the grace time covers the trip of
#: one still on its way when the instructor moves on: on a throttled phone (1.6 Mbit/s,
#: 150 ms latency) a report takes well under 1 s (``bench/bench_late_taps.py``), so 5 s
#: also leaves room for one resend after a dropped connection. The count of a revealed
#: question may grow during it.
GRACE_S = 5.0

#: One network address reaching one of these report counts in a round is logged: far
#: more than one phone, which a lecture hall behind one NAT also does.
BURST_LOG_AT = frozenset({25, 50, 100, 200, 400, 800, 1600, 3200})


def dedup_token(salt: bytes, device_id: str) -> str:
    """``HMAC-SHA256(key=round salt, msg=device id)`` as hex."""
    return hmac.new(salt, device_id.encode("utf-8"), hashlib.sha256).hexdigest()


def address_tag(salt: bytes, address: str) -> str:
    """``HMAC-SHA256(key=round salt, msg="address " + address)`` as hex: counts the
    distinct network addresses of one round; unrelated in any other round."""
    return hmac.new(salt, b"address " + address.encode("utf-8"), hashlib.sha256).hexdigest()


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


def _closed_sentence(ended: datetime | str, arrived: datetime) -> str:
    """Why a report was refused as closed: when it arrived after voting ended, by how much
    (the grace time is :data:`GRACE_S`)."""
    if isinstance(ended, str):
        return "voting is closed for this question"
    late = max(0.0, (arrived - ended).total_seconds())
    return (f"your answer arrived {late:.1f} s after voting on this question closed, later "
            "than an answer on its way may take, so it was not counted")


def _make_receipt(question: Question, round_number: int, answer: str, design: Design,
                  created_at: datetime, *, already: bool, simulated: bool,
                  spent: float | None = None) -> Receipt:
    """The one way a receipt is built: the randomized answer and its label, the round, the
    design's ε, whether this device had already answered, and what it has spent."""
    return Receipt(
        question_id=question.id, question_text=question.text, round_number=round_number,
        answer=answer,
        answer_label=answer_label(question.kind, design, question.options, answer),
        created_at=created_at, epsilon=design_epsilon(design), already_answered=already,
        simulated=simulated, spent_epsilon=spent)


def _receipt(question: Question, row: ReportRow, number: int, *, already: bool,
             spent: float | None) -> Receipt:
    return _make_receipt(question, number, row.answer, parse_design(row.design_json),
                         row.created_at, already=already, simulated=row.simulated,
                         spent=spent)


def _spent(rows: Iterable[ReportRow], *more: str) -> list[float]:
    """What each report (and each design JSON in ``more``, a report not yet saved) adds
    to what the device has spent: its ε (sequential composition adds them up:
    :func:`finite_or_inf`), a series' reports no more than its ε∞ together
    (:func:`~classroom.service.budget.spent_charges`)."""
    return spent_charges([*(r.design_json for r in rows), *more])


def _params_diff(got: dict[str, Any], expected: dict[str, Any]) -> str:
    parts = []
    for key in sorted(set(got) | set(expected), key=lambda k: (k != "design", k)):
        if got.get(key, "<missing>") != expected.get(key, "<missing>"):
            parts.append(f"{key} is {got.get(key, '<missing>')!r}, this round uses "
                         f"{expected.get(key, '<missing>')!r}")
    return "; ".join(parts)


def check_report(question: Question, answer: object, design_params: object
                 ) -> tuple[str, str, Design]:
    """The one validation path for every report: design, then answer.

    Returns ``(stored answer, canonical design JSON, design)``.
    """
    try:
        design, text = canonical_design(question.kind, design_params)
    except ValueError as exc:
        raise BadReport(f"the report's design parameters are not valid: {exc}") from exc
    if text != question.design_json:
        diff = _params_diff(design_params_of(text), question.design_params)
        raise BadReport(f"the report's design parameters differ from this round's design "
                        f"({diff}); reload the question and answer again")
    stored = encode_answer(question.kind, design, question.options, answer)
    return stored, text, design


class Reports:
    """The students' side: one report, its receipt, a device's status in a poll."""

    def __init__(self, store: Store, *, max_reports_per_address: int | None = None,
                 grace_s: float = GRACE_S) -> None:
        """``max_reports_per_address``: the optional limit of reports per network address
        and round (None: no limit; see :func:`classroom.config.max_reports_per_address`);
        ``grace_s``: how long after voting ended a report on its way is still stored
        (:data:`GRACE_S`)."""
        self._store = store
        self._max_per_address = max_reports_per_address
        self._grace = timedelta(seconds=max(0.0, float(grace_s)))

    def _holds_poll(self, poll: Poll) -> bool:
        """Whether a report to ``poll`` is decided with the poll's row held: when it counts
        against a budget or against the per-address limit."""
        return poll.epsilon_budget is not None or self._max_per_address is not None

    def submit_report(self, code: str, question_id: int, *, answer: object,
                      design_params: dict[str, Any], submission_id: str, device_id: str,
                      simulated: bool = False, address: str | None = None) -> Receipt:
        """Store one randomized report, or explain why not (nothing is written then).

        A report that arrives after voting on its round ended is stored if it arrives
        within the grace time (:data:`GRACE_S`) of that end, and refused
        (:class:`QuestionClosed`, saying how late it was) after it: the phone sends at the
        tap, while the question is open on its screen.

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
        qid = row_id("question id", question_id)
        sid = _submission_id(submission_id)
        device = _device_id(device_id)
        # A countdown's deadline is checked against this, however long the wait.
        arrived = self._store.now()
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
            return _receipt(question, own, rnd.number, already=True,
                            spent=finite_or_inf(spent)), 0
        ended = unit.round_ended(rnd.round_id, arrived, self._grace)
        if ended is not None:  # closed (beyond the grace time), a new round, time is up
            raise QuestionClosed(_closed_sentence(ended, arrived))
        stored, design_json, design = check_report(question, answer, design_params)
        total = finite_or_inf(_spent(mine, design_json))
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
        return _receipt(question, row, rnd.number, already=True,
                        spent=finite_or_inf(_spent([*mine, row]))), 0

    def device_status(self, poll_id: int, question_id: int | None, device_id: str
                      ) -> tuple[Receipt | None, float]:
        """This device's receipt for the current round of ``question_id`` (None: not
        answered, or no question) and the ε it has spent in the poll, from ONE read.

        Nothing stored links a device's reports: each round's token is recomputed from
        the device id presented now.
        """
        receipt, spent, _ = self.device_budget(poll_id, question_id, device_id)
        return receipt, spent

    def device_budget(self, poll_id: int, question_id: int | None, device_id: str
                      ) -> tuple[Receipt | None, float, float | None]:
        """:meth:`device_status` and what answering the question's current round would
        add to this device's spending: less than its ε in a series whose cost this device
        has partly or wholly spent (:func:`~classroom.service.budget.series_charges`);
        None when it is the question's ε."""
        pid = row_id("poll id", poll_id)
        qid = None if question_id is None else row_id("question id", question_id)
        if not isinstance(device_id, str) or not device_id:
            poll_found(self._store.poll(pid), pid)
            return None, 0.0, None
        found = self._store.device_reports(pid, lambda s: dedup_token(s.salt, device_id),
                                           question_id=qid)
        found = poll_found(found, pid)
        question, secrets_, rows = found
        spent = finite_or_inf(_spent(rows))
        if question is None:
            return None, spent, None
        current = {s.round_id for s in secrets_
                   if s.question_id == question.id and s.number == question.round_number}
        row = next((r for r in rows if r.round_id in current), None)
        receipt = None if row is None else _receipt(question, row, question.round_number,
                                                    already=True, spent=spent)
        cost = None
        if series_of(question.design) is not None and math.isfinite(spent):
            cost = max(0.0, finite_or_inf(_spent(rows, question.design_json)) - spent)
        return receipt, spent, cost

    def receipt_for(self, question_id: int, device_id: str) -> Receipt | None:
        """This device's receipt in the question's current round, or None."""
        qid = row_id("question id", question_id)
        q = question_found(self._store.question(qid), qid)
        return self.device_status(q.poll_id, q.id, device_id)[0]

    def spent_epsilon(self, poll_id: int, device_id: str) -> float:
        """Sequential composition of the ε of every report this device made in this poll
        (see :meth:`device_status`)."""
        return self.device_status(poll_id, None, device_id)[1]
