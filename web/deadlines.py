"""The countdown's close, written down by every process at every deadline.

Readers already see a question closed from its deadline on (``Question.at``), and a
report that arrives then is refused in its own transaction, so nothing waits for this
task to be right. It makes the stored state say so too, without a dashboard open: each
process asks the database for the next deadline (a deadline set by another process is
found within :data:`IDLE_S`), sleeps until it, and closes what has ended
(``Running.close_expired``, idempotent: of several processes one closes, the others
find nothing left). A database that does not answer is asked again later, less and less
often, instead of filling the log.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from starlette.concurrency import run_in_threadpool

from classroom.domain import ClassroomError
from classroom.service import PollService

__all__ = ["IDLE_S", "close_at_deadlines", "closing_deadlines"]

#: How often a process looks for deadlines when none is near.
IDLE_S = 2.0
#: The longest wait between tries while the database does not answer.
MAX_BACKOFF_S = 30.0
_LOG = logging.getLogger(__name__)


async def close_at_deadlines(service: Callable[[], PollService], *,
                             idle_s: float = IDLE_S) -> None:
    """Run until cancelled: at each countdown's deadline, close what has ended."""
    backoff = idle_s
    while True:
        try:
            svc = service()
            deadline = await run_in_threadpool(svc.running.next_deadline)
            if deadline is not None and deadline <= svc.running.now():
                await run_in_threadpool(svc.running.close_expired)
                continue
        except Exception as exc:  # noqa: BLE001 - readers do not depend on it: try again
            if backoff == idle_s:
                _LOG.warning("the countdown's close could not be written down (%s); "
                             "trying again", exc if isinstance(exc, ClassroomError)
                             else repr(exc))
            await asyncio.sleep(backoff)
            backoff = min(MAX_BACKOFF_S, backoff * 2)
            continue
        backoff = idle_s
        wait = idle_s if deadline is None else (deadline - svc.running.now()).total_seconds()
        await asyncio.sleep(min(idle_s, max(0.0, wait)))


@asynccontextmanager
async def closing_deadlines(service: Callable[[], PollService], *,
                            idle_s: float = IDLE_S) -> AsyncIterator[asyncio.Task[None]]:
    """:func:`close_at_deadlines` as a task for the duration of the block (the app's
    lifespan), cancelled at its end."""
    task = asyncio.create_task(close_at_deadlines(service, idle_s=idle_s),
                               name="countdown-closer")
    try:
        yield task
    finally:
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
