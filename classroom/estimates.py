"""Estimates from stored counts: grouped reports in, ldp_core's estimates out.

Pure functions of counts (no store, no I/O): the service, the CSV replay and the
rehearsal's exact simulated class all use them.
"""


import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

import ldp_core
from ldp_core import BinaryCounts, BinaryDesign

from .domain import (
    SHUFFLE_DELTA,
    BadInput,
    CategoricalEstimate,
    Design,
    QuestionEstimate,
    TrajectoryPoint,
    canonical_design,
    kind_of_params,
    numeric_report,
)

__all__ = ["estimate_from_groups", "exact_class", "numeric_class",
           "parse_binary_design", "parse_design", "trajectory"]


def parse_design(text: str) -> Design:
    params = json.loads(text)
    return canonical_design(kind_of_params(params), params)[0]


def parse_binary_design(text: str) -> BinaryDesign:
    design = parse_design(text)
    if not isinstance(design, BinaryDesign):
        raise BadInput(f"a yes/no round holds a report of another kind: {text[:80]}")
    return design


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


def numeric_class(value_range: ldp_core.NumericRange, n: int, true_mean: object) -> np.ndarray:
    """True values (unshuffled) of a class of ``n`` whose mean is exactly ``true_mean``:
    spread evenly and symmetrically around it, as far as the range allows (at most a
    quarter of its width either side).

    >>> numeric_class(ldp_core.NumericRange(0, 12), 5, 7.0).tolist()
    [4.0, 5.5, 7.0, 8.5, 10.0]
    """
    try:
        mean = float(true_mean)  # type: ignore[arg-type]  # a number from a slider; the rest raises, caught below
    except (TypeError, ValueError):
        mean = math.nan
    lo, hi = value_range.lo, value_range.hi
    if not lo <= mean <= hi:
        raise BadInput(f"the true mean must be a number in [{lo:g}, {hi:g}], got {true_mean!r}")
    spread = min(mean - lo, hi - mean, (hi - lo) / 4)
    return mean + spread * np.linspace(-1.0, 1.0, n) if n > 1 else np.array([mean])


def _numeric_round(design_of: Callable[[str], Any], items: list[tuple[str, str, int]],
                   fallback: str | None
                   ) -> tuple[ldp_core.NumericEstimate, tuple[tuple[float, int], ...],
                              ldp_core.Plausibility]:
    """The round's estimate, its reports in the question's units as sorted
    ``(value, count)`` pairs (for the chart of what the phones sent), and whether they
    fit the design at all (ldp_core's check against ballot stuffing)."""
    reports: dict[str, list[float]] = defaultdict(list)
    in_units: dict[float, int] = defaultdict(int)
    for design_json, answer, count in items:
        design = design_of(design_json)
        value = numeric_report(design, answer)
        reports[design_json].extend([value] * count)
        in_units[float(design.value_of(value))] += count
    if fallback is not None and fallback not in reports:
        reports[fallback] = []
    groups = [(design_of(dj), np.asarray(r, dtype=float)) for dj, r in reports.items()]
    est = ldp_core.NumericEstimate.from_groups(groups)
    return est, tuple(sorted(in_units.items())), ldp_core.numeric_plausibility(groups)


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
    groups: list[tuple[ldp_core.FrequencyOracle, int, Sequence[int]]] = [
        (design_of(dj), ns[dj], support.tolist()) for dj, support in per.items()]
    if fallback is not None and fallback not in per:
        groups.append((design_of(fallback), 0, [0] * k))
    if not groups:
        return CategoricalEstimate(n=0, support_counts=(0,) * k, raw=None, clipped=None,
                                   norm_sub=None, sd=None, epsilon=0.0)
    counts = ldp_core.CategoricalCounts(tuple(groups))
    support_total = tuple(int(c) for c in counts.support_counts())
    raw, clipped, ns_counts, sd = counts.raw(), counts.clipped(), counts.norm_sub(), counts.sd()
    if raw is None or clipped is None or ns_counts is None or sd is None:  # n = 0
        return CategoricalEstimate(n=0, support_counts=support_total, raw=None, clipped=None,
                                   norm_sub=None, sd=None, epsilon=counts.epsilon)
    checks = [ldp_core.ue_plausibility(design_of(dj), hist) for dj, hist in ones.items()]
    checks += [ldp_core.grr_plausibility(oracle, support) for oracle, _, support in groups
               if isinstance(oracle, ldp_core.GRR)]
    ends = counts.exact_intervals()
    return CategoricalEstimate(
        n=counts.n, support_counts=support_total, raw=tuple(float(x) for x in raw),
        clipped=tuple(float(x) for x in clipped), norm_sub=tuple(float(x) for x in ns_counts),
        sd=tuple(float(x) for x in sd), epsilon=counts.epsilon,
        plausibility=min(checks, key=lambda c: c.p_value) if checks else None,
        ci_low=None if ends is None else tuple(float(x) for x in ends[0]),
        ci_high=None if ends is None else tuple(float(x) for x in ends[1]))


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
        elif kind == "numeric":
            num, sent, check = _numeric_round(design_of, items, fallback)
            history.append((number, num))
            if number == round_number:
                used = {dj for dj, _, _ in items} | ({fallback} if fallback else set())
                chosen = {"numeric": num, "numeric_reports": sent, "numeric_check": check,
                          "counts": (), "n": num.n,
                          "epsilon": max((design_of(dj).epsilon for dj in used), default=0.0)}
        else:
            cat = _categorical_round(design_of, items, fallback, len(options))
            history.append((number, cat))
            if number == round_number:
                chosen = {"categorical": cat, "counts": cat.support_counts, "n": cat.n,
                          "epsilon": cat.epsilon}
    return QuestionEstimate(
        question_id=question_id, kind=kind, options=tuple(options), round_number=round_number,
        rounds=numbers, n_simulated=simulated.get(round_number, 0), history=tuple(history),
        shuffle=_shuffle(design_of, by_round.get(round_number, [])),
        **chosen)  # type: ignore[arg-type]  # chosen holds this kind's fields; mypy cannot check a dict against keywords
