"""Numeric questions: a number in a range [lo, hi] with a unit (``options`` is ``(unit,)``),
randomized on the phone by Duchi et al.'s, the Piecewise, the Hybrid or the Laplace
mechanism (:mod:`ldp_core.numeric`). The report: Duchi et al.'s randomized bit ``"0"``/``"1"``
(the report is ``-c_eps``/``+c_eps``); for the others the report on the [-1, 1] scale as the
shortest decimal that reads back as the same float (the Hybrid Mechanism's Duchi part sends
its value ``±c_eps``)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

import ldp_core
from classroom.basics.errors import BadInput, BadReport
from classroom.basics.vocabulary import (
    MAX_NUMERIC_BOUND,
    MAX_UNIT_CHARS,
    MIN_NUMERIC_SPAN,
    clean_text,
    shown,
)
from classroom.display import format_value, value_decimals, value_interval
from ldp_core import REPORT_TAIL, DuchiMechanism, NumericDesign

from .base import Design, DesignOf, QuestionKind, RoundEstimate, RoundItems

__all__ = ["NumericKind", "NumericResult", "format_value", "numeric_class", "numeric_report",
           "value_decimals"]


@dataclass(frozen=True)
class NumericResult:
    """A numeric round's result: the mean (ldp_core), the reports in the question's units
    as sorted ``(value, count)`` pairs (the chart of what the phones sent) and whether they
    fit the design at all."""

    estimate: ldp_core.NumericEstimate
    reports: tuple[tuple[float, int], ...]
    check: ldp_core.Plausibility | None

    @property
    def plausibility(self) -> ldp_core.Plausibility | None:
        return self.check if self.estimate.n else None


def _decimals(num: Any) -> int:
    """The decimals of every value of the question of ``num`` (a design or an estimate
    with a ``range``, or ``lo`` and ``hi``)."""
    r = getattr(num, "range", num)
    return value_decimals(r.lo, r.hi)


def numeric_report(design: NumericDesign, stored: str) -> float:
    """A stored numeric answer as the report on the [-1, 1] scale."""
    if isinstance(design.mechanism, DuchiMechanism):
        return float(design.mechanism.report_of_bit(int(stored)))
    return float(stored)


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


def _nice_step(lo: float, hi: float) -> float:
    """A round slider step giving about 100 to 1000 positions over [lo, hi].

    >>> _nice_step(0, 12), _nice_step(0, 100), _nice_step(-1, 1)
    (0.1, 1.0, 0.01)
    """
    return float(10 ** math.floor(math.log10((hi - lo) / 100)))


def _report_number(answer: object) -> float:
    """A report as sent (a JSON number) or exported (a CSV cell) as a float; NaN for
    anything else, an integer beyond every float (10**400) included."""
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        try:
            return float(answer)
        except OverflowError:
            return math.nan
    if isinstance(answer, str) and 0 < len(answer) <= 32:  # a CSV cell
        try:
            return float(answer)
        except ValueError:
            return math.nan
    return math.nan


def _reach(mech: ldp_core.NumericMechanism) -> str:
    """Why a report beyond the mechanism's range is refused, in words."""
    lo, hi = mech.output_bounds
    grid = mech.device_grid()
    if not math.isfinite(lo) and grid is not None:
        return (f"a phone clamps its reports to [{grid[0]:.6g}, {grid[1]:.6g}]; whatever the "
                f"student's value, one further out has probability below {REPORT_TAIL:g}")
    return f"its reports lie in [{lo:.6g}, {hi:.6g}]"


def _numeric(design: Design | None) -> NumericDesign:
    if not isinstance(design, NumericDesign):
        raise BadReport("a numeric question's report needs a numeric mechanism")
    return design


class NumericKind(QuestionKind):
    name: ClassVar[str] = "numeric"
    label: ClassVar[str] = "numeric"
    designs: ClassVar[tuple[str, ...]] = ldp_core.NUMERIC_NAMES
    physical: ClassVar[bool] = False  # a number has no by-hand randomizer
    has_unit: ClassVar[bool] = True
    continuous: ClassVar[bool] = True
    default_target: ClassVar[int] = 1
    example_options: ClassVar[tuple[str, ...]] = ("hours",)
    example_params: ClassVar[Mapping[str, Any]] = MappingProxyType(
        {"design": "hybrid", "epsilon": 2.0, "lo": 0, "hi": 12})
    example_share: ClassVar[object] = 7.0

    def clean_options(self, options: Any) -> tuple[str, ...]:
        if len(options) != 1:
            raise BadInput("a numeric question has one option: the unit of its answers "
                           "(e.g. ('hours',), or ('',) for none)")
        return (clean_text("unit", options[0], 0, MAX_UNIT_CHARS),)

    def unit(self, options: tuple[str, ...]) -> str:
        return options[0] if options else ""

    def _wrong_design(self, name: object) -> str:
        return f"numeric questions use a mechanism in {list(self.designs)}, got {name!r}"

    def _build(self, params: dict[str, Any]) -> Design:
        return ldp_core.numeric_design_from_params(params)

    def owns(self, design: object) -> bool:
        return isinstance(design, NumericDesign)

    def out_of_limits(self, design: Design) -> str | None:
        """Also the range: lo and hi within ±:data:`MAX_NUMERIC_BOUND`, hi - lo at least
        :data:`MIN_NUMERIC_SPAN`."""
        r = _numeric(design).range
        for name, bound in (("lo", r.lo), ("hi", r.hi)):
            if abs(bound) > MAX_NUMERIC_BOUND:
                return (f"{name} must be within ±{MAX_NUMERIC_BOUND:,.0f}, got "
                        f"{shown(bound)}")
        if r.hi - r.lo < MIN_NUMERIC_SPAN:
            return (f"hi must exceed lo by at least {MIN_NUMERIC_SPAN:g} (numbers are shown "
                    f"with at most 6 decimals), got a range of width {r.hi - r.lo:.3g}")
        return super().out_of_limits(design)

    def encode(self, design: Design, options: tuple[str, ...], answer: object) -> str:
        mech = _numeric(design).mechanism
        if isinstance(mech, DuchiMechanism):
            if not isinstance(answer, bool) and answer in (0, 1, "0", "1"):
                return str(int(answer))  # one of 0, 1, "0", "1"
            raise BadReport(f"answer must be the randomized bit, 0 or 1, got "
                            f"{shown(answer)}")
        y = _report_number(answer)
        if not math.isfinite(y):
            raise BadReport(f"answer must be the randomized report, a finite number, got "
                            f"{shown(answer)}")
        if not mech.plausible(y):
            raise BadReport(f"answer {shown(answer)} is not a report this mechanism "
                            f"can send ({_reach(mech)})")
        return repr(y + 0.0)  # + 0.0: -0.0 is stored as 0.0

    def answer_label(self, design: Design, options: tuple[str, ...], stored: str) -> str:
        num = _numeric(design)
        return format_value(num.value_of(numeric_report(num, stored)), self.unit(options),
                            _decimals(num))

    def true_class(self, design: Design | None, options: tuple[str, ...], n: int,
                   true_share: object) -> np.ndarray:
        """``true_share`` is the class's true mean (:func:`numeric_class`)."""
        return numeric_class(_numeric(design).range, n, true_share)

    def simulate(self, design: Design, options: tuple[str, ...], truths: np.ndarray,
                 rng: np.random.Generator) -> list[object]:
        num = _numeric(design)
        try:
            reports = num.perturb_values(truths, rng=rng)
        except ValueError as exc:
            raise BadInput(f"simulated answers: {exc}") from None
        return _stored(num, reports)

    def stuffed(self, design: Design, options: tuple[str, ...], n: int,
                target: int | None) -> list[object]:
        """The largest report the server accepts (the mean is pushed up)."""
        num = _numeric(design)
        return _stored(num, np.full(n, ldp_core.fake_report(num.mechanism)))

    def estimate_round(self, design_of: DesignOf, items: RoundItems, fallback: str | None,
                       options: tuple[str, ...], level: float) -> RoundEstimate:
        """The mean, the reports in the question's units as sorted ``(value, count)`` pairs
        (the chart of what the phones sent), and whether they fit the design at all
        (ldp_core's check against ballot stuffing)."""
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
        used = {dj for dj, _, _ in items} | ({fallback} if fallback else set())
        result = NumericResult(est, tuple(sorted(in_units.items())),
                               ldp_core.numeric_plausibility(groups))
        return RoundEstimate(est, result, {
            "counts": (), "n": est.n,
            "epsilon": max((design_of(dj).epsilon for dj in used), default=0.0)})

    def csv_width(self, design: Design) -> int:
        return 1

    def csv_label_index(self, design: Design, stored: str) -> int | None:
        return None

    def csv_options(self, k: int) -> tuple[str, ...]:
        return ("",)

    def phone_scheme(self, design: Design, params: dict[str, Any]) -> dict[str, Any]:
        """Duchi et al.'s bit as integer weights; the Piecewise Mechanism's window and the
        Laplace scale with the cells a continuous report is snapped to (``device_grid``);
        the Hybrid Mechanism's coin (which does not enter ε) and both parts."""
        num = _numeric(design)
        mech = num.mechanism
        scheme: dict[str, Any] = {"type": "numeric", "mechanism": mech.kind,
                                  "lo": num.range.lo, "hi": num.range.hi}
        if isinstance(mech, ldp_core.DuchiMechanism):
            scheme["weights"] = [int(w) for w in mech.device_weights()]
            return scheme
        if isinstance(mech, ldp_core.HybridMechanism):
            # A coin picks the part; Duchi's bit is sent as its value ±c_eps (the Piecewise
            # part's reports lie in the same range), the Piecewise part's report snapped.
            scheme.update(weights=[int(w) for w in mech.duchi.device_weights()],
                          c_duchi=mech.duchi.c_epsilon, p_piecewise=mech.device_p_piecewise())
            if mech.p_piecewise == 0:
                return scheme
            mech = mech.piecewise
        grid = mech.device_grid()
        assert grid is not None  # every mechanism with more than two reports has one
        scheme.update(low=grid[0], high=grid[1], cells=ldp_core.DEVICE_CELLS)
        if isinstance(mech, ldp_core.PiecewiseMechanism):
            scheme.update(c=mech.big_c, p_window=mech.device_p_window())
        elif isinstance(mech, ldp_core.LaplaceMechanism):
            scheme["scale"] = mech.scale
        return scheme

    def phone_input(self, text: str, options: tuple[str, ...],
                    params: dict[str, Any]) -> tuple[tuple[int, ...], dict[str, Any]]:
        """No buttons: a slider over the range, in round steps, starting mid-range."""
        lo, hi = float(params["lo"]), float(params["hi"])
        step = _nice_step(lo, hi)
        digits = max(0, -math.floor(math.log10(step)))
        return (), {"type": "number", "lo": lo, "hi": hi, "unit": self.unit(options), "step": step,
                    "start": round(round((lo + hi) / 2 / step) * step, digits)}

    def privacy_note(self, design: Design, ratio: str, eps_text: str) -> str:
        return (f"Your privacy: your phone added noise to your number before sending it. "
                f"Whatever your true value, the chance of the report it sent changes by at "
                f"most {ratio} (ε = {eps_text}). Nobody, including the instructor, can tell "
                "your number from it; the class average still comes through.")

    def phone_results(self, estimate: Any, options: tuple[str, ...]) -> dict[str, Any]:
        num = estimate.result.estimate
        ci = num.interval()
        unit, decimals = self.unit(options), _decimals(num)
        return {"n": estimate.n, "numeric": {
            "mean": None if num.mean is None else format_value(num.mean, unit, decimals),
            # rounded outward, as on the projector (classroom.display)
            "ci": None if ci is None else list(value_interval(ci[0], ci[1], unit, decimals)),
            "outside": num.mean is not None and not num.lo <= num.mean <= num.hi}}


def _stored(design: NumericDesign, reports: np.ndarray) -> list[object]:
    """Reports on the unit scale in their stored form (Duchi et al.'s: the bit)."""
    if isinstance(design.mechanism, DuchiMechanism):
        return list((reports > 0).astype(int).tolist())
    return list(reports.tolist())
