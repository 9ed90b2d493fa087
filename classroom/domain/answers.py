"""Answers: the canonical stored string of a randomized report under its design, and its
label for people (see the package docstring for the encoding)."""

from __future__ import annotations

import math

from ldp_core import (
    REPORT_TAIL,
    DuchiMechanism,
    NumericDesign,
)

from .design import Design
from .errors import BadReport
from .vocabulary import shown

__all__ = ["answer_label", "encode_answer", "format_value", "numeric_report", "ue_label"]


def _encode_numeric(design: NumericDesign, answer: object) -> str:
    mech = design.mechanism
    if isinstance(mech, DuchiMechanism):
        if not isinstance(answer, bool) and answer in (0, 1, "0", "1"):
            return str(int(answer))  # one of 0, 1, "0", "1"
        raise BadReport(f"answer must be the randomized bit, 0 or 1, got "
                        f"{shown(answer)}")
    y = math.nan
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        try:
            y = float(answer)
        except OverflowError:  # an integer beyond every float (10**400): no report
            pass
    elif isinstance(answer, str) and 0 < len(answer) <= 32:  # a CSV cell
        try:
            y = float(answer)
        except ValueError:
            pass
    if not math.isfinite(y):
        raise BadReport(f"answer must be the randomized report, a finite number, got "
                        f"{shown(answer)}")
    if not mech.plausible(y):
        lo, hi = mech.output_bounds
        grid = mech.device_grid()
        if not math.isfinite(lo) and grid is not None:
            why = (f"a phone clamps its reports to [{grid[0]:.6g}, {grid[1]:.6g}]; whatever the "
                   f"student's value, one further out has probability below {REPORT_TAIL:g}")
        else:
            why = f"its reports lie in [{lo:.6g}, {hi:.6g}]"
        raise BadReport(f"answer {shown(answer)} is not a report this mechanism can "
                        f"send ({why})")
    return repr(y + 0.0)  # + 0.0: -0.0 is stored as 0.0


def numeric_report(design: NumericDesign, stored: str) -> float:
    """A stored numeric answer as the report on the [-1, 1] scale."""
    if isinstance(design.mechanism, DuchiMechanism):
        return float(design.mechanism.report_of_bit(int(stored)))
    return float(stored)


def encode_answer(kind: str, design: Design, options: tuple[str, ...], answer: object) -> str:
    """The canonical stored string of ``answer``, or :class:`BadReport` naming what is allowed."""
    if kind == "numeric":
        if not isinstance(design, NumericDesign):
            raise BadReport("a numeric question's report needs a numeric mechanism")
        return _encode_numeric(design, answer)
    k = len(options)
    is_ue = kind == "categorical" and getattr(design, "kind", "") == "ue"
    if is_ue:
        if isinstance(answer, (list, tuple)):
            if all(isinstance(b, int) and not isinstance(b, bool) and b in (0, 1)
                   for b in answer):
                answer = "".join(str(b) for b in answer)
        if isinstance(answer, str) and len(answer) == k and set(answer) <= {"0", "1"}:
            return answer
        raise BadReport(f"answer must be {k} bits, one per option (e.g. {'0' * (k - 1)}1), "
                        f"got {shown(answer)}")
    idx: int | None = None
    if isinstance(answer, bool):
        idx = int(answer) if kind == "binary" else None
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


def ue_label(options: tuple[str, ...], bits: str) -> str:
    chosen = [options[i] for i, b in enumerate(bits) if b == "1"]
    return ", ".join(chosen) if chosen else "(none)"


def format_value(value: float, unit: str = "") -> str:
    """A numeric value as shown to people: 4 significant digits, with its unit.

    >>> format_value(7.256, "hours"), format_value(-1234.6), format_value(0.5, "%")
    ('7.256 hours', '−1235', '0.5 %')
    """
    text = f"{value:.4g}".replace("-", "−")
    if "e" in text:
        text = f"{value:,.0f}".replace("-", "−")
    return f"{text} {unit}".strip()


def answer_label(design: Design, options: tuple[str, ...], stored: str) -> str:
    """Human label of a stored answer under ``design``: the option, for UE the options
    whose bit is 1, for a numeric question the report in the question's units."""
    if isinstance(design, NumericDesign):
        value = design.value_of(numeric_report(design, stored))
        return format_value(value, options[0] if options else "")
    if getattr(design, "kind", "") == "ue":
        return ue_label(options, stored)
    return options[int(stored)]
