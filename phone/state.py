"""Each poll's current question, cached in the process and shared by every phone.

A lecture hall of phones asks the same thing: "what is the question now?". The
answer is built once from the database, at most about once a second per poll
per process (``ttl``), and served to every phone from memory. Its version is a
hash of its content and travels as the ETag, so an unchanged poll costs a phone
a 304 and the server no database read. Because every process refreshes from the
database on its own, several processes behind a proxy agree within ``ttl``.

Waiting phones long-poll: they hold a request until the version changes. One
refresher task per poll with waiters re-reads the database every ``ttl`` and
wakes them all at once. A state whose countdown has ended is stale at once, and the
refresher wakes at the deadline, so the phones learn of a countdown's close when it
happens, with no dashboard open.

Given a feed of changes (``changes``: on PostgreSQL, ``Store.poll_changes``, the
database's ``NOTIFY`` at each commit that changes a poll, its questions or rounds, from
any process), a changed poll's state is stale at once and its refresher wakes: a question
change reaches the phones of every process as soon as it is committed, not a ``ttl``
later. (Measured on two processes behind nginx, without it: p95 1.9 s, at most 2.1 s.)
The ``ttl`` reading stays, for what no announcement covers (a revealed result's new
reports) and for a feed that is down.

The body carries no time: the route adds the server's current time (``now``) to each
answer, so that an unchanged state keeps its version.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.concurrency import run_in_threadpool

from classroom.domain import Question, StoreUnavailable, design_problem
from classroom.service import PollService

from .present import question_view

__all__ = ["PollStates", "Snapshot"]

_LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class Snapshot:
    """One poll's shared state: the JSON body, its version, and the ids behind it."""

    version: str
    body: bytes
    poll_id: int
    code: str
    question_id: int | None
    #: The current question's privacy note, for receipts (None without a question).
    privacy_note: str | None = None
    #: The deadline of its running countdown, in seconds since 1970, or None.
    closes_at: float | None = None


def build_snapshot(service: PollService, code: str) -> Snapshot:
    """Read the poll and its current question (one pass) and serialise them."""
    poll = service.polls.poll_by_code(code)
    question = service.polls.current_question(poll.id)
    state: dict[str, Any] = {
        "poll": {"code": poll.join_code, "title": poll.title, "budget": poll.epsilon_budget},
        "question": None if question is None else _drawn(service, question),
    }
    digest = hashlib.sha256(json.dumps(state, sort_keys=True, ensure_ascii=False,
                                       default=str).encode()).hexdigest()[:20]
    body = json.dumps({"version": digest, **state}, ensure_ascii=False, default=str,
                      allow_nan=False).encode()
    shown = state["question"]
    closes = None if shown is None or shown["closes_at"] is None else shown["closes_at"] / 1000
    return Snapshot(digest, body, poll.id, poll.join_code,
                    None if question is None else question.id,
                    None if shown is None else shown["privacy_note"], closes)


def _drawn(service: PollService, question: Question) -> dict[str, Any] | None:
    """The question as the phones see it, or None (the phones wait for the next one) when
    it cannot be drawn: a design outside the limits every question keeps, stored before
    they were checked, must not take the rest of the poll down. Logged once per question;
    the dashboard shows the instructor the same error."""
    try:
        problem = design_problem(question.design_json)
        if problem is not None:
            raise ValueError(problem)
        est = service.results.estimate(question.id) if question.revealed else None
        view = question_view(question, est)
        json.dumps(view, allow_nan=False, default=str)  # JSON has no NaN and no infinity
    except (ArithmeticError, ValueError, TypeError) as exc:
        seen = (question.id, question.design_json)
        if seen not in _UNDRAWABLE:
            if len(_UNDRAWABLE) > 1000:
                _UNDRAWABLE.clear()
            _UNDRAWABLE.add(seen)
            _LOG.error("question %d cannot be shown on the phones (%s): %s", question.id,
                       type(exc).__name__, exc)
        return None
    return view


#: The questions (id and design) already logged as impossible to draw.
_UNDRAWABLE: set[tuple[int, str]] = set()


@dataclass
class _Entry:
    snapshot: Snapshot | None = None
    fetched_at: float = -1e18
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    waiters: int = 0
    refresher: asyncio.Task[None] | None = None
    #: Set when the poll changed (an announcement): the refresher reads it again now.
    poked: asyncio.Event = field(default_factory=asyncio.Event)


class PollStates:
    """The per-poll cache. ``build`` reads the database (run in a worker thread);
    ``changes``, if given, opens the feed of changed poll ids (None: there is none), which
    a task follows from the first read on."""

    def __init__(self, service: PollService, *, ttl: float = 1.0,
                 clock: Callable[[], float] = time.monotonic,
                 build: Callable[[PollService, str], Snapshot] = build_snapshot,
                 changes: Callable[[], AsyncIterator[int | None] | None] | None = None
                 ) -> None:
        self._service = service
        self._ttl = ttl
        self._clock = clock
        self._build = build
        self._entries: dict[str, _Entry] = {}
        self._changes = changes
        self._follower: asyncio.Task[None] | None = None

    def _fresh(self, entry: _Entry) -> Snapshot | None:
        """The entry's state if it may be served as it is: younger than ``ttl``, and its
        countdown (if any) still running; else None."""
        snap = entry.snapshot
        if (snap is not None and self._clock() - entry.fetched_at < self._ttl
                and (snap.closes_at is None or self._until(snap.closes_at) > 0)):
            return snap
        return None

    def _until(self, when: float) -> float:
        """Seconds from now (the service's clock, the one deadlines are set by) to ``when``."""
        return when - self._service.running.now().timestamp()

    def _entry(self, code: str) -> _Entry:
        entry = self._entries.get(code)
        if entry is None:
            entry = self._entries[code] = _Entry()
        return entry

    async def get(self, code: str) -> Snapshot:
        """The poll's state, from memory if younger than ``ttl``.

        Raises the service's errors (unknown poll, database away) only when
        nothing usable is cached: a phone keeps seeing the last known question
        while the database is away.
        """
        if self._changes is not None and self._follower is None:
            self._follower = asyncio.create_task(self._follow(self._changes),
                                                 name="poll-changes")
        entry = self._entry(code)
        if (ready := self._fresh(entry)) is not None:
            return ready
        async with entry.lock:  # one database read per poll, however many phones ask
            if (ready := self._fresh(entry)) is not None:
                return ready
            try:
                fresh = await run_in_threadpool(self._build, self._service, code)
            except StoreUnavailable:
                if entry.snapshot is None:
                    raise
                entry.fetched_at = self._clock()
                return entry.snapshot
            except Exception:  # unknown poll (deleted?), bad code: forget it
                self._entries.pop(code, None)
                raise
            old = entry.snapshot
            entry.snapshot, entry.fetched_at = fresh, self._clock()
            if old is not None and old.version != fresh.version:
                entry.changed.set()
                entry.changed = asyncio.Event()
            return fresh

    async def wait_for_change(self, code: str, version: str, timeout: float) -> Snapshot | None:
        """The poll's state once its version differs from ``version``; None after ``timeout``."""
        current = await self.get(code)
        if current.version != version:
            return current
        entry = self._entry(code)
        event = entry.changed
        entry.waiters += 1
        if entry.refresher is None or entry.refresher.done():
            entry.refresher = asyncio.create_task(self._refresh_while_waited(code, entry))
        try:
            async with asyncio.timeout(timeout):  # no extra task per waiter, as wait_for makes
                await event.wait()
        except TimeoutError:
            return None
        finally:
            entry.waiters -= 1
        return entry.snapshot

    async def _refresh_while_waited(self, code: str, entry: _Entry) -> None:
        while entry.waiters > 0:
            delay = self._ttl
            snap = entry.snapshot
            if snap is not None and snap.closes_at is not None:  # wake at the deadline
                delay = min(delay, max(0.0, self._until(snap.closes_at)) + 0.005)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await entry.poked.wait()
            entry.poked.clear()
            try:
                await self.get(code)
            except Exception:  # noqa: BLE001 - keep serving the last state; try again next tick
                continue

    def poke(self, poll_id: int | None) -> None:
        """Poll ``poll_id`` changed (None: any poll may have): its state is stale, and its
        waiting phones get the new one as soon as it is read."""
        for entry in self._entries.values():
            snap = entry.snapshot
            if poll_id is None or (snap is not None and snap.poll_id == poll_id):
                entry.fetched_at = -1e18
                entry.poked.set()

    async def _follow(self, changes: Callable[[], AsyncIterator[int | None] | None]) -> None:
        feed = changes()
        if feed is None:
            return
        try:
            async for poll_id in feed:
                self.poke(poll_id)
        except Exception:  # noqa: BLE001 - a bug, not the database (the feed outlives that)
            _LOG.exception("the polls' change feed stopped; each poll is read again every "
                           "%g s only", self._ttl)
