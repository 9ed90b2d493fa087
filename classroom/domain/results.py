"""What the dashboard reads: a question's estimate for one round, its history and its
arrival trajectory, as frozen dataclasses (n = 0 is a state, never NaN)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import ldp_core
from classroom.kinds import CategoricalEstimate, KindResult
from ldp_core import Plausibility, ShuffleGuarantee

from .entities import Question, Round

__all__ = [
    "SHUFFLE_DELTA",
    "CategoricalEstimate",
    "DashboardSnapshot",
    "QuestionEstimate",
    "TrajectoryPoint",
    "finite_or_inf",
]


#: The δ of the guarantee the dashboard shows for shuffled reports (QuestionEstimate.shuffle).
SHUFFLE_DELTA = 1e-6


@dataclass(frozen=True)
class TrajectoryPoint:
    """The estimate after the first ``n`` reports of a round, in arrival order, with its
    exact interval (``BinaryCounts.exact_interval``, the dashboard's headline CI)."""

    n: int
    mu_hat: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class DashboardSnapshot:
    """One refresh of the dashboard for one question, read in one transaction."""

    question: Question
    rounds: tuple[Round, ...]
    estimate: QuestionEstimate
    #: The current round's estimate as reports arrived (yes/no questions; else empty).
    trajectory: tuple[TrajectoryPoint, ...]


@dataclass(frozen=True)
class QuestionEstimate:
    """Everything a dashboard shows for one round of a question."""

    question_id: int | None
    kind: str
    options: tuple[str, ...]
    round_number: int
    rounds: tuple[int, ...]
    n: int
    n_simulated: int
    counts: tuple[int, ...]
    epsilon: float
    #: The kind's own result of the round (:class:`classroom.kinds.BinaryResult`,
    #: :class:`~classroom.kinds.CategoricalEstimate`, :class:`~classroom.kinds.NumericResult`
    #: ...), which its dashboard view and phone results read.
    result: KindResult | None = None
    history: tuple[tuple[int, Any], ...] = field(default=())
    #: Distinct network addresses among the round's real reports (each stored only as a
    #: per-round HMAC); None when none of them carried one (imported or simulated).
    addresses: int | None = None
    #: What these reports would guarantee through a shuffler, at δ = SHUFFLE_DELTA
    #: (ldp_core's exact value for yes/no designs, Feldman et al.'s bound otherwise); for
    #: a round with several designs, the worst of them (a report hides only among reports
    #: of its own design). None while the round has no report.
    shuffle: ShuffleGuarantee | None = None

    @property
    def empty(self) -> bool:
        return self.n == 0

    @property
    def plausibility(self) -> Plausibility | None:
        """Whether the reports fit the design for some class at all (ldp_core's check
        against ballot stuffing); None when there is nothing to check."""
        return None if self.result is None or not self.n else self.result.plausibility


def finite_or_inf(values: list[float]) -> float:
    """Sequential composition that tolerates designs without a finite epsilon."""
    if any(math.isinf(v) for v in values):
        return math.inf
    return ldp_core.sequential_composition(values)
