"""Decisions taken inside one transaction: a poll's privacy budget and a round's reports.

The service holds the rules; a unit gives it what a rule reads and the write that follows,
on one connection, inside one transaction that no other decision about the same poll can
interleave with:

* :class:`PollUnit` (:meth:`Store.poll_unit`): opening a round, changing an open round's
  design, adding a question, starting a round, setting the budget. The poll's row is
  locked first (PostgreSQL: ``SELECT … FOR UPDATE``; SQLite: ``BEGIN IMMEDIATE`` already
  serialises every writer), so two dashboards, or two app processes, deciding about one
  poll take turns, and the second sees what the first committed.
* :class:`ReportUnit` (:meth:`Store.report_unit`): one report, from the lookup of its join
  code to its insert, with the device's earlier reports in the poll (for the budget and
  for the receipt's running total) and the count of its address's reports. A report that
  counts against a budget, or against a per-address limit, takes the same poll lock
  before it reads, so the check and the insert are one step for every other process;
  other reports only share-lock their question, as a close or a new round must wait for
  them (and they for it).

Locks are always taken poll first, then question, so two units never wait on each other
in a circle.

A question read here is as it stands at the unit's clock (``question_of``: closed once its
countdown's deadline has passed), and a report's round is open only if the report arrived
before that deadline (:meth:`ReportUnit.round_open`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ..domain import Poll, Question, Round, as_utc, check_stored_design, state_at
from .rows import QUESTION_COLS, ReportRow, RoundSecret, RoundUse, poll_of, question_of, round_of
from .schema import polls, questions, reports, rounds

__all__ = ["PollUnit", "ReportUnit", "add_question", "close_open", "insert_round", "rounds_use",
           "set_budget", "set_design", "set_state"]


# -- the writes of a decision, on a connection (Store's own methods use them too) -------------
def set_state(conn: Connection, question_id: int, state: str, now: datetime, *,
              close_others: bool = False) -> Question | None:
    """Set a question's state; with ``close_others`` close every other open question of
    its poll in the same transaction. Opening starts the question's countdown (its
    deadline ``now`` + ``countdown_s``); closing keeps a deadline only if it has passed
    (the countdown closed the question, at its deadline)."""
    this = questions.c.id == question_id
    if state == "open":
        row = _open(conn, question_id, now)
    elif state == "closed" and close_open(conn, this, now):
        row = conn.execute(sa.select(*QUESTION_COLS).where(this)).first()
    else:  # a draft, or a close of a question not open (which keeps when voting ended)
        values: dict[str, Any] = {"state": state, "updated_at": now, "closes_at": None}
        if state != "closed":
            values["closed_at"] = None
        row = conn.execute(questions.update().where(this).values(**values)
                           .returning(*QUESTION_COLS)).first()
    if row is not None and close_others:
        close_open(conn, sa.and_(questions.c.poll_id == row.poll_id,
                                 questions.c.id != question_id), now)
    return question_of(row, now) if row else None


def _open(conn: Connection, question_id: int, now: datetime) -> Any:
    """Open a question, with its deadline if it has a countdown; its row, or None."""
    seconds = conn.execute(sa.select(questions.c.countdown_s)
                           .where(questions.c.id == question_id)).first()
    if seconds is None:
        return None
    closes = None if seconds[0] is None else now + timedelta(seconds=seconds[0])
    return conn.execute(questions.update().where(questions.c.id == question_id)
                        .values(state="open", updated_at=now, closes_at=closes, closed_at=None)
                        .returning(*QUESTION_COLS)).first()


def close_open(conn: Connection, where: Any, now: datetime) -> int:
    """Close the open questions matching ``where``; the number closed.

    One whose deadline has passed closed at its deadline, which it keeps (its countdown
    closed it, whether or not anything wrote that down yet); any other closes ``now``
    and forgets its deadline. Either way ``closed_at`` records when voting ended.
    """
    at = sa.literal(now, questions.c.closes_at.type)
    ended = sa.and_(questions.c.closes_at.is_not(None), questions.c.closes_at <= at)
    return int(conn.execute(
        questions.update().where(where, questions.c.state == "open")
        .values(state="closed",
                updated_at=sa.case((ended, questions.c.closes_at), else_=at),
                closed_at=sa.case((ended, questions.c.closes_at), else_=at),
                closes_at=sa.case((ended, questions.c.closes_at), else_=sa.null()))
    ).rowcount)


def question_after(conn: Connection, question: Question, now: datetime) -> Question | None:
    """The next question of ``question``'s poll by position (ties by id), or None."""
    after = sa.or_(questions.c.position > question.position,
                   sa.and_(questions.c.position == question.position,
                           questions.c.id > question.id))
    row = conn.execute(sa.select(*QUESTION_COLS)
                       .where(questions.c.poll_id == question.poll_id, after)
                       .order_by(questions.c.position, questions.c.id).limit(1)).first()
    return question_of(row, now) if row else None


def set_design(conn: Connection, question_id: int, design_json: str,
               now: datetime) -> Question | None:
    """Change the design of the question and of its current round (``updated_at`` records
    changes of state and reveal, so it is left alone)."""
    row = conn.execute(questions.update().where(questions.c.id == question_id)
                       .values(design_params=design_json)
                       .returning(*QUESTION_COLS)).first()
    if row is None:
        return None
    check_stored_design(design_json)  # raises: the unit of work is rolled back
    conn.execute(rounds.update()
                 .where(rounds.c.question_id == question_id, rounds.c.number == row.round_count)
                 .values(design_params=design_json))
    return question_of(row, now)


def insert_round(conn: Connection, question_id: int, design_json: str | None, salt: bytes,
                 now: datetime, state: str) -> Round | None:
    """Start round n + 1 (``design_json`` None keeps the design); None if no question."""
    values: dict[str, Any] = {"round_count": questions.c.round_count + 1, "state": "draft",
                              "revealed": False, "updated_at": now, "closes_at": None,
                              "closed_at": None}
    if design_json is not None:
        values["design_params"] = design_json
    row = conn.execute(questions.update().where(questions.c.id == question_id)
                       .values(**values)
                       .returning(questions.c.round_count, questions.c.design_params,
                                  questions.c.kind, questions.c.poll_id)).first()
    if row is None:
        return None
    if design_json is not None:
        check_stored_design(design_json)  # raises: the unit of work is rolled back
    if state == "open":
        close_open(conn, sa.and_(questions.c.poll_id == row.poll_id,
                                 questions.c.id != question_id), now)
        _open(conn, question_id, now)
    new = conn.execute(rounds.insert().values(
        question_id=question_id, number=row.round_count, design_params=row.design_params,
        salt=salt.hex(), opened_at=now).returning(*rounds.c)).one()
    return round_of(new, row.kind)


def add_question(conn: Connection, *, poll_id: int, position: int | None = None, text: str,
                 kind: str, options_json: str, design_json: str, mode: str, salt: bytes,
                 now: datetime, countdown_s: int | None = None) -> Question:
    """Insert a draft question and its round 1 (``position`` None: after the poll's last
    question; the caller holds the poll's row, so two additions get distinct positions)."""
    check_stored_design(design_json)
    if position is None:
        position = conn.execute(
            sa.select(sa.func.coalesce(sa.func.max(questions.c.position), 0))
            .where(questions.c.poll_id == poll_id)).scalar_one() + 1
    row = conn.execute(
        questions.insert().values(
            poll_id=poll_id, position=position, text=text, kind=kind, options=options_json,
            design_params=design_json, mode=mode, state="draft", revealed=False,
            round_count=1, created_at=now, updated_at=now, countdown_s=countdown_s)
        .returning(*QUESTION_COLS)).one()
    conn.execute(rounds.insert().values(question_id=row.id, number=1,
                                        design_params=design_json, salt=salt.hex(),
                                        opened_at=now))
    return question_of(row, now)


def set_budget(conn: Connection, poll_id: int, budget: float | None) -> Poll | None:
    row = conn.execute(polls.update().where(polls.c.id == poll_id)
                       .values(epsilon_budget=budget).returning(*polls.c)).first()
    return poll_of(row) if row else None


def rounds_use(conn: Connection, poll_id: int, now: datetime) -> list[RoundUse]:
    """Every round of the poll's questions: its design, whether it is its question's
    current round, the question's state at ``now``, its number of real reports and the
    designs those reports were made under."""
    rows = conn.execute(
        sa.select(rounds.c.id.label("r_id"), questions.c.id, questions.c.state,
                  questions.c.closes_at, questions.c.round_count, rounds.c.number,
                  rounds.c.design_params)
        .select_from(rounds.join(questions, rounds.c.question_id == questions.c.id))
        .where(questions.c.poll_id == poll_id)
        .order_by(questions.c.position, rounds.c.number)).all()
    used = conn.execute(
        sa.select(reports.c.round_id, reports.c.design_params, sa.func.count())
        .where(reports.c.round_id.in_([r.r_id for r in rows]), sa.not_(reports.c.simulated))
        .group_by(reports.c.round_id, reports.c.design_params)).all() if rows else []
    designs: dict[int, list[str]] = {}
    counts: dict[int, int] = {}
    for used_row in used:
        round_id, design_json, n = int(used_row[0]), str(used_row[1]), int(used_row[2])
        designs.setdefault(round_id, []).append(design_json)
        counts[round_id] = counts.get(round_id, 0) + n
    return [RoundUse(question_id=r.id, number=r.number, design_json=r.design_params,
                     current=r.number == r.round_count,
                     question_state=state_at(r.state, r.closes_at, now),
                     reports=counts.get(r.r_id, 0),
                     report_designs=tuple(designs.get(r.r_id, ())))
            for r in rows]


# -- a poll's decisions --------------------------------------------------------------------------
_LOCK_POLL = sa.select(polls).where(polls.c.id == sa.bindparam("poll_id")).with_for_update()
_LOCK_POLL_OF_QUESTION = (sa.select(polls)
                          .select_from(polls.join(questions, questions.c.poll_id == polls.c.id))
                          .where(questions.c.id == sa.bindparam("question_id"))
                          .with_for_update(of=polls))


class PollUnit:
    """One decision about a poll, inside the transaction that holds the poll's row.

    ``poll`` is the poll as it is now (None when there is none); every read after it sees
    what earlier decisions committed, and no other decision about this poll runs until
    this one ends.
    """

    def __init__(self, conn: Connection, *, clock: Callable[[], datetime],
                 poll_id: int | None = None, question_id: int | None = None) -> None:
        self._conn = conn
        self._clock = clock
        if poll_id is not None:
            row = conn.execute(_LOCK_POLL, {"poll_id": poll_id}).first()
        else:
            row = conn.execute(_LOCK_POLL_OF_QUESTION, {"question_id": question_id}).first()
        self.poll: Poll | None = poll_of(row) if row else None

    def question(self, question_id: int) -> Question | None:
        """The question, if it belongs to this poll."""
        row = self._conn.execute(sa.select(*QUESTION_COLS).where(
            questions.c.id == question_id)).first()
        if row is None or self.poll is None or row.poll_id != self.poll.id:
            return None
        return question_of(row, self._clock())

    def question_after(self, question: Question) -> Question | None:
        """The poll's next question after ``question`` by position, or None."""
        return question_after(self._conn, question, self._clock())

    def rounds_use(self) -> list[RoundUse]:
        return [] if self.poll is None else rounds_use(self._conn, self.poll.id, self._clock())

    def set_state(self, question_id: int, state: str, now: datetime, *,
                  close_others: bool = False) -> Question | None:
        return set_state(self._conn, question_id, state, now, close_others=close_others)

    def close_others(self, question_id: int, now: datetime) -> int:
        """Close every open question of the poll but ``question_id``; the number closed."""
        assert self.poll is not None
        return close_open(self._conn, sa.and_(questions.c.poll_id == self.poll.id,
                                              questions.c.id != question_id), now)

    def set_design(self, question_id: int, design_json: str) -> Question | None:
        return set_design(self._conn, question_id, design_json, self._clock())

    def insert_round(self, question_id: int, design_json: str | None, salt: bytes,
                     now: datetime, state: str) -> Round | None:
        return insert_round(self._conn, question_id, design_json, salt, now, state)

    def add_question(self, **kw: Any) -> Question:
        assert self.poll is not None
        return add_question(self._conn, poll_id=self.poll.id, **kw)

    def set_budget(self, budget: float | None) -> Poll | None:
        assert self.poll is not None
        return set_budget(self._conn, self.poll.id, budget)


# -- one report ------------------------------------------------------------------------------------
def _context_stmt() -> sa.Select[Any]:
    qid = sa.bindparam("question_id", type_=sa.Integer)
    return (sa.select(polls.c.id.label("p_id"), polls.c.join_code.label("p_code"),
                      polls.c.title.label("p_title"), polls.c.created_at.label("p_created"),
                      polls.c.rehearsal.label("p_rehearsal"),
                      polls.c.epsilon_budget.label("p_budget"), *QUESTION_COLS,
                      rounds.c.id.label("r_id"), rounds.c.salt.label("r_salt"),
                      questions.c.closed_at.label("q_closed_at"))
            .select_from(polls.outerjoin(
                questions, sa.and_(questions.c.poll_id == polls.c.id, questions.c.id == qid))
                .outerjoin(rounds, sa.and_(rounds.c.question_id == questions.c.id,
                                           rounds.c.number == questions.c.round_count)))
            .where(polls.c.join_code == sa.bindparam("join_code", type_=sa.String)))


# The report path's statements, built once (bound per call): building Core statements
# costs more CPU than running them on SQLite.
_CONTEXT = _context_stmt()
_HOLD_POLL = sa.select(polls.c.id).where(polls.c.id == sa.bindparam("poll_id")).with_for_update()
# Whether the round is still its question's current round and the question open (its state
# and deadline), with the question's row share-locked (PostgreSQL) until the insert commits:
# a close or a new round either committed before, and the report is refused, or waits for it.
_ROUND_OPEN = (sa.select(questions.c.state, questions.c.closes_at, questions.c.closed_at)
               .select_from(rounds.join(questions, rounds.c.question_id == questions.c.id))
               .where(rounds.c.id == sa.bindparam("round_id"),
                      rounds.c.number == questions.c.round_count)
               .with_for_update(read=True, of=questions))
_POLL_ROUNDS = (sa.select(rounds.c.id, rounds.c.number, rounds.c.salt, rounds.c.question_id)
                .select_from(rounds.join(questions, rounds.c.question_id == questions.c.id))
                .where(questions.c.poll_id == sa.bindparam("poll_id")))
_REPORT_COLS = (reports.c.round_id, reports.c.answer, reports.c.design_params,
                reports.c.created_at, reports.c.simulated, reports.c.dedup_token)
# Both IN lists: the (round_id, dedup_token) unique index serves the lookup.
_BY_TOKENS = sa.select(*_REPORT_COLS).where(
    reports.c.round_id.in_(sa.bindparam("round_ids", expanding=True)),
    reports.c.dedup_token.in_(sa.bindparam("tokens", expanding=True)))
_BY_TOKEN_OR_SUBMISSION = sa.select(*_REPORT_COLS).where(sa.or_(
    sa.and_(reports.c.round_id == sa.bindparam("round_id"),
            reports.c.dedup_token == sa.bindparam("token")),
    reports.c.submission_id == sa.bindparam("sid")))
_ADDRESS_COUNT = (sa.select(sa.func.count()).select_from(reports)
                  .where(reports.c.round_id == sa.bindparam("round_id"),
                         reports.c.address_tag == sa.bindparam("tag")))


def report_row(r: Any, *, submission_id_matched: bool = False) -> ReportRow:
    return ReportRow(r.round_id, r.answer, r.design_params, as_utc(r.created_at),
                     bool(r.simulated), submission_id_matched=submission_id_matched)


def reports_by_tokens(conn: Connection, pairs: Iterable[tuple[int, str]]) -> list[ReportRow]:
    """The reports matching any of the (round id, token) pairs."""
    wanted = set(pairs)
    if not wanted:
        return []
    rows = conn.execute(_BY_TOKENS, {"round_ids": sorted({r for r, _ in wanted}),
                                     "tokens": sorted({t for _, t in wanted})}).all()
    return [report_row(r) for r in rows if (r.round_id, r.dedup_token) in wanted]


def poll_round_secrets(conn: Connection, poll_id: int) -> list[RoundSecret]:
    """Every round of every question of a poll, with its salt."""
    return [RoundSecret(r.id, r.number, bytes.fromhex(r.salt), r.question_id)
            for r in conn.execute(_POLL_ROUNDS, {"poll_id": poll_id})]


def find_report(conn: Connection, round_id: int, token: str,
                submission_id: str | None = None) -> ReportRow | None:
    """The report of this token in this round, else the one with this submission id."""
    rows = conn.execute(_BY_TOKEN_OR_SUBMISSION, {"round_id": round_id, "token": token,
                                                  "sid": submission_id}).all()
    if not rows:
        return None

    def own(r: Any) -> bool:
        return bool(r.round_id == round_id and r.dedup_token == token)

    r = min(rows, key=lambda r: not own(r))  # the device's own report first
    return report_row(r, submission_id_matched=not own(r))


class ReportUnit:
    """One report's reads and its insert, in one write transaction.

    Call :meth:`context` first (with ``hold_poll`` when the poll has a budget or reports
    are limited per address); :meth:`round_open` then says, for the rest of the
    transaction, whether the round may still take reports.
    """

    def __init__(self, conn: Connection, backend: str, insert_stmt: Any, *,
                 clock: Callable[[], datetime]) -> None:
        self._conn = conn
        self._backend = backend
        self._insert = insert_stmt
        self._clock = clock
        self._open_at_begin: tuple[int, str, datetime | None, datetime | None] | None = None

    def context(self, join_code: str, question_id: int, *,
                hold_poll: Callable[[Poll], bool] | None = None
                ) -> tuple[Poll | None, Question | None, RoundSecret | None]:
        """Poll by code, the question if it belongs to it, and its current round's secret.

        When ``hold_poll(poll)`` is true (the poll has a budget, say), the poll's row is
        locked and everything is read again under the lock: every other decision about
        the poll (a budgeted or limited report, an opening, a budget change) waits until
        this transaction ends, and this one sees what the previous one committed.
        """
        found = self._context(join_code, question_id)
        poll = found[0]
        if (poll is not None and hold_poll is not None and hold_poll(poll)
                and self._backend != "sqlite"):  # SQLite: the write lock taken at BEGIN
            self._conn.execute(_HOLD_POLL, {"poll_id": poll.id})
            found = self._context(join_code, question_id)
        return found

    def _context(self, join_code: str, question_id: int
                 ) -> tuple[Poll | None, Question | None, RoundSecret | None]:
        row = self._conn.execute(_CONTEXT, {"join_code": join_code,
                                            "question_id": question_id}).first()
        if row is None:
            return None, None, None
        poll = Poll(id=row.p_id, join_code=row.p_code, title=row.p_title,
                    created_at=as_utc(row.p_created), rehearsal=bool(row.p_rehearsal),
                    epsilon_budget=row.p_budget)
        if row.id is None or row.r_id is None:
            return poll, None, None
        # SQLite: this transaction began with BEGIN IMMEDIATE, so nothing changes under it
        # and the question's state as read here holds until the commit.
        self._open_at_begin = (row.r_id, row.state, row.closes_at, row.q_closed_at)
        return poll, question_of(row, self._clock()), RoundSecret(row.r_id, row.round_count,
                                                                bytes.fromhex(row.r_salt))

    def round_open(self, round_id: int, at: datetime | None = None,
                   grace: timedelta = timedelta(0)) -> bool:
        """Whether the round is its question's current round and the question is open, now
        and until this transaction commits, for a report that arrived ``at`` (default:
        now): one that arrived at or after the round's deadline finds it closed, however
        long it waited for this transaction. With ``grace``, a round whose voting ended
        (its deadline, or the close written down) less than ``grace`` before ``at`` still
        takes it; a round that is the question's current one only as a draft never does."""
        return self.round_ended(round_id, at, grace) is None

    def round_ended(self, round_id: int, at: datetime | None = None,
                    grace: timedelta = timedelta(0)) -> datetime | str | None:
        """:meth:`round_open`'s answer with its reason: None when the round takes a report
        that arrived ``at``; else when its voting ended (a report that arrived later than
        ``grace`` after it is refused), or ``"not open"`` (a draft, not the current round,
        or closed with no time recorded)."""
        when = self._clock() if at is None else at
        if self._backend == "sqlite" and self._open_at_begin is not None \
                and self._open_at_begin[0] == round_id:
            _, state, closes_at, closed_at = self._open_at_begin
        else:
            row = self._conn.execute(_ROUND_OPEN, {"round_id": round_id}).first()
            if row is None:
                return "not open"
            state, closes_at, closed_at = row.state, row.closes_at, row.closed_at
        if state_at(state, closes_at, when) == "open":
            return None
        if state == "open" and closes_at is not None:  # its countdown ended (written or not)
            ended = as_utc(closes_at)
        elif state == "closed" and closed_at is not None:
            ended = as_utc(closed_at)
        else:
            return "not open"
        return None if when < ended + grace else ended

    def poll_rounds(self, poll_id: int) -> list[RoundSecret]:
        return poll_round_secrets(self._conn, poll_id)

    def reports_by_tokens(self, pairs: Iterable[tuple[int, str]]) -> list[ReportRow]:
        return reports_by_tokens(self._conn, pairs)

    def find_report(self, round_id: int, token: str,
                    submission_id: str | None = None) -> ReportRow | None:
        return find_report(self._conn, round_id, token, submission_id)

    def address_count(self, round_id: int, tag: str) -> int:
        """Reports of this round from the address with this tag."""
        return int(self._conn.execute(_ADDRESS_COUNT, {"round_id": round_id, "tag": tag})
                   .scalar_one())

    def insert(self, *, round_id: int, answer: str, design_json: str, created_at: datetime,
               submission_id: str, token: str, simulated: bool,
               address_tag: str | None) -> bool:
        """Insert the report; False (nothing written) when its token or its submission id
        is already stored."""
        values = {"round_id": round_id, "answer": answer, "design_params": design_json,
                  "created_at": created_at, "submission_id": submission_id,
                  "dedup_token": token, "simulated": simulated, "address_tag": address_tag}
        # RETURNING, not rowcount: rowcount of ON CONFLICT DO NOTHING is not reliable on
        # every driver.
        return self._conn.execute(self._insert, values).first() is not None
