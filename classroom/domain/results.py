"""What the dashboard reads: a question's estimate for one round, its history and its
arrival trajectory, as frozen dataclasses (n = 0 is a state, never NaN)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import ldp_core
from classroom.kinds import CategoricalEstimate
from ldp_core import (
    BinaryCounts,
    BinaryEstimate,
    NumericEstimate,
    Plausibility,
    ShuffleGuarantee,
    binary_plausibility,
)

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
    binary: BinaryEstimate | None = None
    binary_counts: BinaryCounts | None = None
    categorical: CategoricalEstimate | None = None
    numeric: NumericEstimate | None = None
    #: A numeric round's reports in the question's units: sorted ``(value, count)`` pairs.
    numeric_reports: tuple[tuple[float, int], ...] = ()
    #: Whether a numeric round's reports fit its design (``plausibility`` gives it).
    numeric_check: Plausibility | None = None
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
        if self.binary_counts is not None and self.n:
            return binary_plausibility(self.binary_counts)
        if self.numeric is not None and self.n:
            return self.numeric_check
        return None if self.categorical is None else self.categorical.plausibility


def finite_or_inf(values: list[float]) -> float:
    """Sequential composition that tolerates designs without a finite epsilon."""
    if any(math.isinf(v) for v in values):
        return math.inf
    return ldp_core.sequential_composition(values)
