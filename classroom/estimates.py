"""Estimates from stored counts: grouped reports in, ldp_core's estimates out.

Pure functions of counts (no store, no I/O): the service, the CSV replay and the
rehearsal's exact simulated class all use them.
"""


from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

import ldp_core
from ldp_core import BinaryCounts, BinaryDesign

from . import kinds
from .domain import (
    SHUFFLE_DELTA,
    BadInput,
    Design,
    QuestionEstimate,
    TrajectoryPoint,
    design_from_json,
)
from .kinds import numeric_class

__all__ = ["estimate_from_groups", "exact_class", "numeric_class",
           "parse_binary_design", "parse_design", "trajectory"]


def parse_design(text: str) -> Design:
    """The design of a stored design JSON, built by the kind it records."""
    return design_from_json(text)


def parse_binary_design(text: str) -> BinaryDesign:
    design = parse_design(text)
    if not isinstance(design, BinaryDesign):
        raise BadInput(f"a yes/no round holds a report of another kind: {text[:80]}")
    return design


def exact_class(kind_name: str, k: int, n: int, true_share: float | Sequence[float]
                ) -> np.ndarray:
    """True answers (unshuffled) of a class of ``n`` with exactly the chosen shares, for a
    yes/no or categorical question of ``k`` options (the kind's ``true_class``).

    >>> exact_class("binary", 2, 40, 0.6).sum(), exact_class("binary", 2, 5, 0.5).sum()
    (np.int64(24), np.int64(3))
    >>> np.bincount(exact_class("categorical", 3, 10, (1, 1, 1)), minlength=3).tolist()
    [4, 3, 3]
    """
    # The yes/no and categorical kinds' classes depend on the number of options only.
    return kinds.kind(kind_name).true_class(None, tuple(str(j) for j in range(k)), n,
                                            true_share)


def trajectory(answers: Sequence[tuple[str, str]], *, points: int = 60,
               level: float = 0.95) -> tuple[TrajectoryPoint, ...]:
    """μ̂ and its exact interval (the dashboard's headline CI) after the first k of these
    ``(design JSON, answer)`` reports (arrival order), for up to ``points`` values of k
    spread over them, the last one included; each report corrected with its own design."""
    total = len(answers)
    if total == 0:
        return ()
    steps = max(1, points)
    marks = sorted({max(1, round(total * i / steps)) for i in range(1, steps + 1)})
    designs: dict[str, BinaryDesign] = {}
    counts: dict[str, list[int]] = {}
    taken: list[BinaryCounts] = []
    for k, (design_json, answer) in enumerate(answers, start=1):
        if design_json not in designs:
            designs[design_json] = parse_binary_design(design_json)
            counts[design_json] = [0, 0]
        counts[design_json][0] += 1
        counts[design_json][1] += answer == "1"
        if k == marks[len(taken)]:
            taken.append(BinaryCounts(tuple((designs[j], n, y) for j, (n, y) in counts.items())))
    if len(designs) == 1:  # one design: every interval in one vectorised call
        design = next(iter(designs.values()))
        lows, highs = ldp_core.exact_interval(
            design.a, design.b, np.array([bc.n for bc in taken]),
            np.array([bc.yes for bc in taken]), level)
        intervals: list[tuple[float, float] | None] = list(
            zip(lows.tolist(), highs.tolist(), strict=True))
    else:
        intervals = [bc.exact_interval(level) for bc in taken]
    out: list[TrajectoryPoint] = []
    for bc, interval in zip(taken, intervals, strict=True):
        mu = bc.unbiased()
        if interval is not None and mu is not None:  # k >= 1: both exist
            out.append(TrajectoryPoint(bc.n, mu, *interval))
    return tuple(out)


def _shuffle(design_of: Callable[[str], Any], items: list[tuple[str, str, int]]
             ) -> ldp_core.ShuffleGuarantee | None:
    """The round's reports through a shuffler: each design's reports hide only among their
    own (a report carries its design), so the worst design's guarantee; ldp_core caches it."""
    per: dict[str, int] = defaultdict(int)
    for design_json, _, count in items:
        per[design_json] += count
    found = [ldp_core.shuffle_guarantee(design_of(dj), n, SHUFFLE_DELTA)
             for dj, n in per.items() if n]
    return max(found, key=lambda g: g.epsilon, default=None)


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
            d = cache[text] = design_from_json(text)
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
    strategy = kinds.kind(kind)
    history: list[tuple[int, object]] = []
    chosen: dict[str, Any] = {}  # the QuestionEstimate fields this kind fills
    for number in numbers:
        found = strategy.estimate_round(design_of, by_round.get(number, []),
                                        round_designs.get(number), tuple(options), level)
        history.append((number, found.summary))
        if number == round_number:
            chosen = {**found.fields, "result": found.result}
    return QuestionEstimate(
        question_id=question_id, kind=kind, options=tuple(options), round_number=round_number,
        rounds=numbers, n_simulated=simulated.get(round_number, 0), history=tuple(history),
        shuffle=_shuffle(design_of, by_round.get(round_number, [])),
        **chosen)
