"""Yes/no questions: two options (answer 0 "no", answer 1 "yes"), a binary randomized-response
design (die, coins, Warner's spinner, ε-RR, …), the report the bit ``"0"``/``"1"``."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

import ldp_core
from classroom import designs
from classroom.basics.errors import BadInput, BadReport
from classroom.basics.vocabulary import CLASS_EXERCISE, shown
from classroom.display import share_texts
from classroom.privacy_numbers import at_least_percent, epsilon_up

from .base import (
    Design,
    DesignOf,
    QuestionKind,
    RoundEstimate,
    RoundItems,
    epsilon_problem,
    finite,
)

__all__ = ["SERIES_PATTERN", "BinaryKind", "BinaryResult", "SeriesMemo", "series_charges",
           "series_of"]

#: A series name: lower-case letters, digits and inner hyphens, e.g. "weekly-sleep".
SERIES_PATTERN = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?")


@dataclass(frozen=True)
class SeriesMemo(ldp_core.MemoRR):
    """A memoized yes/no design whose question belongs to a series: the same question
    asked again in later lectures (RAPPOR's two steps, :class:`ldp_core.MemoRR`). The
    phone keeps one permanent randomized answer (the memo, made with f) per series, f
    and true answer in its own storage, and sends an instantaneous randomization of it
    (p, q) every time. The memo never leaves the phone. The series name is public: it
    is what the phone keys its memo by, and what the budget charges once
    (:mod:`classroom.service.budget`).

    >>> d = SeriesMemo(0.5, 0.25, 0.75, series="weekly-sleep")
    >>> d.params()["series"], round(d.epsilon_series, 4), round(d.epsilon, 4)
    ('weekly-sleep', 1.0986, 0.5108)
    """

    series: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.series, str) or not SERIES_PATTERN.fullmatch(self.series):
            raise ValueError("series must name the series in 1-40 lower-case letters, digits "
                             f"and inner hyphens, e.g. 'weekly-sleep', got {self.series!r}")

    def params(self) -> dict[str, Any]:
        memo = ldp_core.MemoRR(self.f, self.p, self.q).params()
        return {**memo, "series": self.series}


def series_of(design: object) -> SeriesMemo | None:
    """The design when it is a series' memo, else None."""
    return design if isinstance(design, SeriesMemo) else None


def _series_key(found: Iterable[object]) -> tuple[tuple[str, float], float] | None:
    """``((series, f), ε∞)`` when every design in ``found`` is the memo of one series
    with one f (the phone keeps one memo per series, f and answer), else None."""
    keys: set[tuple[str, float]] = set()
    cap = 0.0
    for design in found:
        memo = series_of(design)
        if memo is None:
            return None
        keys.add((memo.series, memo.f))
        cap = max(cap, memo.epsilon_series)
    return (keys.pop(), cap) if len(keys) == 1 else None


def series_charges(items: Sequence[tuple[Iterable[object], float]]) -> list[float]:
    """What each item (the designs behind a round or a report, and its ε) adds to what a
    device spends: its ε, except in a series. All reports of one answer through one memo
    reveal at most the memo's ε∞ (RAPPOR, Erlingsson, Pihur & Korolova 2014), and at most
    the sum of their ε₁, so a series (one name and f) costs ``min(Σ ε₁, ε∞)`` in all:
    each of its rounds adds what its ε₁ adds to that, 0 once ε∞ is reached. This holds
    while the answer stays the same; a changed answer gets a memo of its own, which the
    phone and the guide say costs again. Nothing here links a device's reports: the
    items are a poll's rounds (the most any device can have spent), a plan's questions,
    or the reports one device presents its id for.

    >>> memo = SeriesMemo(0.5, 0.25, 0.75, series="w")
    >>> [round(c, 4) for c in series_charges([((memo,), memo.epsilon)] * 3)]
    [0.5108, 0.5108, 0.077]
    """
    used: dict[tuple[str, float], float] = {}
    out: list[float] = []
    for found, cost in items:
        key_cap = _series_key(found)
        if key_cap is None:
            out.append(cost)
            continue
        key, cap = key_cap
        before = used.get(key, 0.0)
        used[key] = before + cost
        out.append(max(0.0, min(before + cost, cap) - min(before, cap)))
    return out


@dataclass(frozen=True)
class BinaryResult:
    """A yes/no round's result: ldp_core's summary (the estimate, its SDs and intervals)
    and the counts per design it came from."""

    estimate: ldp_core.BinaryEstimate
    counts: ldp_core.BinaryCounts

    @property
    def plausibility(self) -> ldp_core.Plausibility | None:
        return ldp_core.binary_plausibility(self.counts) if self.counts.n else None


class BinaryKind(QuestionKind):
    name: ClassVar[str] = "binary"
    label: ClassVar[str] = "yes/no"
    designs: ClassVar[tuple[str, ...]] = ("epsilon", "gamma", "die", "two_coin", "warner",
                                          "forced", "memo")
    trajectory: ClassVar[bool] = True
    default_target: ClassVar[int] = 1
    yes_first: ClassVar[bool] = True
    example_options: ClassVar[tuple[str, ...]] = ("Chocolate", "Vanilla")
    example_params: ClassVar[Mapping[str, Any]] = CLASS_EXERCISE
    example_share: ClassVar[object] = 0.6

    def clean_options(self, options: Any) -> tuple[str, ...]:
        if len(options) != 2:
            raise BadInput(f"a binary question has exactly 2 options (answer 0, answer 1), "
                           f"got {len(options)}")
        return super().clean_options(options)

    def build(self, params: dict[str, Any]) -> Design:
        return self._build(params)  # ldp_core names the binary designs itself

    def _build(self, params: dict[str, Any]) -> Design:
        if params.get("design") == "memo":  # a memo belongs to a series, named with it
            rest = {k: v for k, v in params.items() if k != "design"}
            try:
                return SeriesMemo(**rest)
            except TypeError as exc:
                raise ValueError("a memo design has f, p, q and its series, e.g. "
                                 "{design = \"memo\", f = 0.5, p = 0.25, q = 0.75, "
                                 f"series = \"weekly-sleep\"}}, got {rest!r}") from exc
        return ldp_core.binary_design_from_params(params)

    def owns(self, design: object) -> bool:
        return isinstance(design, ldp_core.BinaryDesign)

    def check(self, design: Design, options: tuple[str, ...]) -> None:
        if isinstance(design, ldp_core.BinaryDesign) and not design.informative:
            raise BadInput("this design's report carries no information about the answer "
                           "(a == b); no estimate would be possible — choose another design")

    def out_of_limits(self, design: Design) -> str | None:
        memo = series_of(design)
        if memo is not None and (problem := epsilon_problem(memo.epsilon_series,
                                                            named=False)) is not None:
            return f"f: the whole series' {problem.split('; ', 1)[-1]} (ε∞ = " \
                   f"{memo.epsilon_series:.4g})"
        return super().out_of_limits(design)

    def encode(self, design: Design, options: tuple[str, ...], answer: object) -> str:
        return _option_index(options, answer, bools=True)

    def answer_label(self, design: Design, options: tuple[str, ...], stored: str) -> str:
        return options[int(stored)]

    def true_class(self, design: Design | None, options: tuple[str, ...], n: int,
                   true_share: object) -> np.ndarray:
        """``round(true_share * n)`` students answer ``options[1]`` (half up)."""
        try:
            share = float(true_share)  # type: ignore[arg-type]  # a number from a slider; the rest raises, caught below
        except (TypeError, ValueError):
            share = math.nan
        if not 0.0 <= share <= 1.0:
            raise BadInput(f"true_share must be a number in [0, 1], got {true_share!r}")
        yes = math.floor(share * n + 0.5)  # round half up: 0.5 of 5 students is 3
        return np.repeat(np.array([1, 0]), [yes, n - yes])

    def simulate(self, design: Design, options: tuple[str, ...], truths: np.ndarray,
                 rng: np.random.Generator) -> list[object]:
        assert isinstance(design, ldp_core.BinaryDesign)
        _check_option_numbers(truths, len(options))
        return list(design.perturb(truths.astype(bool), rng=rng).tolist())

    def stuffed(self, design: Design, options: tuple[str, ...], n: int,
                target: int | None) -> list[object]:
        assert isinstance(design, ldp_core.BinaryDesign)
        t = _target(target, self.default_target, len(options))
        return [int(ldp_core.fake_report(design, t))] * n

    def estimate_round(self, design_of: DesignOf, items: RoundItems, fallback: str | None,
                       options: tuple[str, ...], level: float) -> RoundEstimate:
        per: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # design json -> [n, yes]
        for design_json, answer, count in items:
            cell = per[design_json]
            cell[0] += count
            if answer == "1":
                cell[1] += count
        if fallback is not None and fallback not in per:
            per[fallback] = [0, 0]
        counts = ldp_core.BinaryCounts(
            tuple((design_of(dj), n, yes) for dj, (n, yes) in per.items()))
        summary = counts.summary(level)
        return RoundEstimate(summary, BinaryResult(summary, counts), {
            "n": counts.n, "counts": (counts.n - counts.yes, counts.yes),
            "epsilon": counts.epsilon})

    def csv_options(self, k: int) -> tuple[str, ...]:
        return ("No", "Yes")

    def csv_check(self, design: Design) -> str | None:
        if isinstance(design, ldp_core.BinaryDesign) and not design.informative:
            return "the design carries no information (a == b)"
        return None

    def phone_scheme(self, design: Design, params: dict[str, Any]) -> dict[str, Any]:
        """Integer branch weights (``sampling_weights``) and what the phone animates."""
        assert isinstance(design, ldp_core.BinaryDesign)
        memo = series_of(design)
        if memo is not None:  # the memo is made and kept on the phone (randomizer.js)
            return {"type": "memo", "series": memo.series, "f": memo.f, "p": memo.p,
                    "q": memo.q}
        animation = designs.phone_animation(params)
        scheme: dict[str, Any] = {"type": "binary",
                                  "weights": [int(w) for w in design.sampling_weights()],
                                  "animation": animation}
        if animation == "die":
            scheme["faces"] = int(params["faces"])
        return scheme

    def privacy_note(self, design: Design, ratio: str, eps_text: str) -> str:
        assert isinstance(design, ldp_core.BinaryDesign)
        memo = series_of(design)
        if memo is not None:
            return memo_note(memo, eps_text)
        floor = float(design.channel.min())
        return (f"Your privacy: whatever you truly prefer, this report was at least "
                f"{at_least_percent(floor)} likely, and the odds between your two possible "
                f"true answers change by at most {ratio}: ε = {eps_text}. Nobody, including the "
                "instructor, can be sure from it what you really think.")

    def phone_results(self, estimate: Any, options: tuple[str, ...]) -> dict[str, Any]:
        b = estimate.result.estimate
        return {"n": estimate.n, "binary": {
            "label": options[1], "share": finite(b.mu_hat), "sd": finite(b.sd_worst),
            "ci_low": finite(b.exact_low), "ci_high": finite(b.exact_high),
            # the same digits as the projector's (classroom.display)
            "shown": share_texts(b.mu_hat, b.exact_low, b.exact_high)}}


def memo_note(memo: SeriesMemo, eps_text: str) -> str:
    """The phone's privacy note for a report of a series, in plain words."""
    return (f"Your privacy: this question is part of the series “{memo.series}”. The first "
            "time, your phone made a randomized answer and kept it; each time it sends a "
            f"fresh randomization of that kept answer. One report reveals at most ε = "
            f"{eps_text}; all reports of the series together at most ε∞ = "
            f"{epsilon_up(memo.epsilon_series)}, however often it is asked, while your answer "
            "stays the same. A changed answer gets a kept answer of its own and costs again. "
            "A new phone or a cleared browser starts a new kept answer (and costs again). "
            "The kept answer never leaves your phone.")


def _option_index(options: tuple[str, ...], answer: object, *, bools: bool) -> str:
    """An option number in canonical decimal, or ``BadReport`` listing the options."""
    k = len(options)
    idx: int | None = None
    if isinstance(answer, bool):
        idx = int(answer) if bools else None
    elif isinstance(answer, int):
        idx = answer
    elif isinstance(answer, str) and 0 < len(answer) <= 4 and answer.isdigit() \
            and answer == str(int(answer)):
        idx = int(answer)  # canonical decimal only: "1", not "01" or " 1"
    if idx is None or not 0 <= idx < k:
        allowed = " or ".join(f"{i} ({label})" for i, label in enumerate(options)) if k <= 4 \
            else f"0..{k - 1}"
        raise BadReport(f"answer must be {allowed}, got {shown(answer)}")
    return str(idx)


def _check_option_numbers(truths: np.ndarray, k: int) -> None:
    if truths.min() < 0 or truths.max() >= k:
        raise BadInput(f"simulated answers must be option numbers 0..{k - 1}")


def _target(target: object, default: int, k: int) -> int:
    t = default if target is None else target
    if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < k:
        raise BadInput(f"the stuffers' target must be an option number 0..{k - 1}, "
                       f"got {t!r}")
    return t
