"""The service: the use cases the views and the phone API call, one object per use case,
split the way Optuna splits its study.

* :mod:`.polls`: :class:`Polls`, polls and their questions, the privacy budget, a
  question's design;
* :mod:`.running`: :class:`Running`, running a class: open, close, reveal, next, the
  countdown, new rounds;
* :mod:`.reports`: :class:`Reports`, a phone's report (ONE write transaction), its
  receipt, a device's status; :func:`check_report`, the one validation of every report;
* :mod:`.results`: :class:`Results`, estimates, the dashboard's snapshot, CSV export and
  replay, the rehearsal's simulated students;
* :mod:`.plans`: :class:`Plans`, saved lesson plans and a class started from one;
* :mod:`.budget` and :mod:`.common`: what several of them share.

Validation and the server-side rules live here; SQL lives in :mod:`classroom.store`;
estimates from counts in :mod:`classroom.estimates`; CSV in :mod:`classroom.csvio`; the
mathematics in :mod:`ldp_core`. Each use case holds nothing but its store (and the
reports their per-address limit), so one :class:`PollService` serves every session:
``service.polls.create_poll(...)``, ``service.reports.submit_report(...)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..store import Store
from .common import new_join_code
from .plans import Plans
from .polls import Polls
from .reports import BURST_LOG_AT, GRACE_S, Reports, address_tag, dedup_token
from .results import MAX_SIMULATED, Results
from .running import Running

__all__ = [
    "BURST_LOG_AT",
    "GRACE_S",
    "MAX_SIMULATED",
    "Plans",
    "PollService",
    "Polls",
    "Reports",
    "Results",
    "Running",
    "address_tag",
    "dedup_token",
    "new_join_code",
]


@dataclass(frozen=True, slots=True)
class PollService:
    """One object per use case, reachable from one place (the composition root builds
    one :class:`PollService` per process, :mod:`web.composition`)."""

    store: Store
    polls: Polls
    running: Running
    reports: Reports
    results: Results
    plans: Plans

    @classmethod
    def on(cls, store: Store, *, max_reports_per_address: int | None = None,
           grace_s: float = GRACE_S) -> PollService:
        """One of each use case on ``store``. ``max_reports_per_address``: the optional
        limit of reports per network address and round (None: no limit; see
        :func:`classroom.config.max_reports_per_address`); ``grace_s``: the grace time of
        a report still on its way when voting ended (:data:`GRACE_S`)."""
        return cls(store, Polls(store), Running(store),
                   Reports(store, max_reports_per_address=max_reports_per_address,
                           grace_s=grace_s),
                   Results(store), Plans(store))
