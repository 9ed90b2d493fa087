"""Number formatting for display: never prints ``nan`` or ``inf``.

Every helper accepts None, NaN and infinities. None and NaN become a dash
(``—``, "not defined yet"), infinities become ``∞`` / ``−∞``. Numbers use a
proper minus sign and thousands separators so they read well on a projector.

>>> fmt(None), fmt(float("nan")), fmt(float("inf")), fmt(-0.0123456)
('—', '—', '∞', '−0.0123')
>>> fmt_count(3770), fmt_count(-12.4), fmt_pct(0.5234), fmt_interval(0.1, None)
('3,770', '−12', '52.3%', '—')
"""

from __future__ import annotations

import math
from typing import TypeGuard

from classroom import display
from classroom.display import format_value, value_decimals
from classroom.privacy_numbers import (
    epsilon_down,
    epsilon_up,
    round_down,
    significant_down,
    significant_up,
)

__all__ = [
    "DASH",
    "fmt",
    "fmt_count",
    "fmt_eps",
    "fmt_eps_allowed",
    "fmt_eps_value",
    "fmt_fixed",
    "fmt_interval",
    "fmt_share",
    "fmt_value_interval",
    "fmt_pct",
    "fmt_pct_down",
    "fmt_power",
    "fmt_pvalue",
    "fmt_ratio",
    "fmt_up",
    "fmt_value",
    "is_number",
    "value_decimals",
]

DASH = "—"
MINUS = "−"


def is_number(x: object) -> TypeGuard[float]:
    """True for a finite real number (bools excluded); a type checker then reads ``x`` as
    a float."""
    if x is None or isinstance(x, bool):
        return False
    try:
        return math.isfinite(float(x))  # type: ignore[arg-type]  # any object: float() raises, caught below
    except (TypeError, ValueError):
        return False


def _special(x: object) -> str | None:
    """The text for None / NaN / inf / non-numbers, or None for a finite number."""
    if x is None or isinstance(x, bool):
        return DASH
    try:
        v = float(x)  # type: ignore[arg-type]  # any object: float() raises, caught below
    except (TypeError, ValueError):
        return DASH
    if math.isnan(v):
        return DASH
    if math.isinf(v):
        return "∞" if v > 0 else MINUS + "∞"
    return None


def _minus(text: str) -> str:
    return text.replace("-", MINUS)


def fmt(x: object, sig: int = 3) -> str:
    """``sig`` significant digits, plain notation for everyday sizes, ``a×10^k`` otherwise.

    >>> fmt(1234567), fmt(0.000012345), fmt(2.5e9), fmt(0), fmt(1.0)
    ('1,234,567', '0.0000123', '2.50×10⁹', '0', '1')
    """
    special = _special(x)
    if special is not None:
        return special
    v = float(x)  # type: ignore[arg-type]  # a number: _special() returned None
    if v == 0:
        return "0"
    mag = math.floor(math.log10(abs(v)))
    if mag >= 9 or mag < -6:
        mant, exp = f"{v:.{max(sig - 1, 0)}e}".split("e")
        return _minus(mant) + "×10" + _superscript(int(exp))
    if mag >= sig - 1:
        return _minus(f"{round(v):,}")
    decimals = sig - 1 - mag
    text = f"{v:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return _minus(text)


def fmt_fixed(x: object, decimals: int = 3) -> str:
    """A fixed number of decimals (for values that sit side by side in a table).

    >>> fmt_fixed(0.5), fmt_fixed(-1 / 3, 2), fmt_fixed(None)
    ('0.500', '−0.33', '—')
    """
    special = _special(x)
    if special is not None:
        return special
    text = f"{float(x):,.{decimals}f}"  # type: ignore[arg-type]  # a number: _special() returned None
    if float(text.replace(",", "")) == 0:
        text = text.lstrip("-")
    return _minus(text)


def fmt_value(x: object, unit: str = "", decimals: int = 2) -> str:
    """A value in the question's units with a fixed number of decimals
    (:func:`value_decimals`); a dash when it is not a number.

    >>> fmt_value(17.9863, "hours"), fmt_value(-5.98763, "hours"), fmt_value(6, "hours")
    ('17.99 hours', '−5.99 hours', '6.00 hours')
    >>> fmt_value(float("nan"), "hours"), fmt_value(1234.5, "", 0)
    ('—', '1,234')
    """
    special = _special(x)
    if special == DASH:
        return DASH
    if special is not None:  # ±∞
        return f"{special} {unit}".strip()
    return format_value(float(x), unit, decimals)  # type: ignore[arg-type]  # a number: _special() returned None


def fmt_up(x: object, sig: int = 3) -> str:
    """``sig`` significant digits, rounded UP: an ε shown as a guarantee errs toward privacy
    (:func:`classroom.privacy_numbers.significant_up`, float noise ignored).

    >>> fmt_up(0.5500655), fmt_up(0.551), fmt_up(0.0184387), fmt_up(1.0986), fmt_up(None)
    ('0.551', '0.551', '0.0185', '1.10', '—')
    >>> fmt_up(3.0000000000000004)
    '3.00'
    """
    special = _special(x)
    if special is not None:
        return special
    return _minus(significant_up(float(x), sig))  # type: ignore[arg-type]  # a number: _special() returned None


def fmt_power(x: object) -> str:
    """A power of ten as ``10⁻⁶``; any other number as :func:`fmt` writes it.

    >>> fmt_power(1e-6), fmt_power(1e-9), fmt_power(2e-6)
    ('10⁻⁶', '10⁻⁹', '0.000002')
    """
    special = _special(x)
    if special is not None:
        return special
    v = float(x)  # type: ignore[arg-type]  # a number: _special() returned None
    k = round(math.log10(v)) if v > 0 else 0
    if v > 0 and v == float(f"1e{k}"):
        return "10" + _superscript(k)
    return fmt(v)


def fmt_count(x: object) -> str:
    """A (possibly estimated, possibly negative) count, rounded to a whole number."""
    special = _special(x)
    if special is not None:
        return special
    v = round(float(x))  # type: ignore[arg-type]  # a number: _special() returned None
    return _minus(f"{v:,}") if v else "0"


def fmt_pct(x: object, decimals: int = 1) -> str:
    """A share in [0, 1] as a percentage: ``0.5234 -> '52.3%'``."""
    special = _special(x)
    if special is not None:
        return special
    return fmt_fixed(100 * float(x), decimals) + "%"  # type: ignore[arg-type]  # a number: _special() returned None


def fmt_pct_down(x: object, decimals: int = 1) -> str:
    """A share as a percentage rounded down, for a floor ("covers at least …"): it never
    reads higher than it is (float noise ignored, as in :mod:`classroom.privacy_numbers`).

    >>> fmt_pct_down(0.95096), fmt_pct_down(0.9), fmt_pct_down(None)
    ('95.0%', '90.0%', '—')
    """
    special = _special(x)
    if special is not None:
        return special
    return f"{round_down(100 * float(x), decimals):.{decimals}f}%"  # type: ignore[arg-type]  # a number: _special() returned None


def fmt_share(x: object) -> str:
    """A share (μ̂, an option's estimate) as every screen writes it
    (:func:`classroom.display.share`, three decimals).

    >>> fmt_share(0.55), fmt_share(-0.0674), fmt_share(None)
    ('0.550', '−0.067', '—')
    """
    special = _special(x)
    if special is not None:
        return special
    return display.share(float(x))  # type: ignore[arg-type]  # a number: _special() returned None


def fmt_interval(lo: object, hi: object, decimals: int = 3) -> str:
    """``[lo, hi]`` rounded outward, as every screen rounds an interval
    (:func:`classroom.display.interval`), or a dash when either end is missing.

    >>> fmt_interval(0.24951, 0.99049), fmt_interval(-0.0004, 1.0)
    ('[0.249, 0.991]', '[−0.001, 1.000]')
    """
    if _special(lo) == DASH or _special(hi) == DASH:
        return DASH
    if _special(lo) is not None or _special(hi) is not None:  # an infinite end
        return f"[{fmt_fixed(lo, decimals)}, {fmt_fixed(hi, decimals)}]"
    low, high = display.interval(float(lo), float(hi), decimals)  # type: ignore[arg-type]  # numbers: _special() returned None
    return f"[{low}, {high}]"


def fmt_value_interval(lo: object, hi: object, unit: str, decimals: int) -> str:
    """A numeric question's interval in its units, rounded outward
    (:func:`classroom.display.value_interval`): ``2.62 to 11.08 hours``.

    >>> fmt_value_interval(2.6249, 11.0751, "hours", 2), fmt_value_interval(None, 1, "", 2)
    ('2.62 to 11.08 hours', '—')
    """
    if not (is_number(lo) and is_number(hi)):
        return DASH
    low, high = display.value_interval(lo, hi, unit, decimals)
    return f"{low.removesuffix(unit).strip()} to {high}"


def fmt_pvalue(p: object) -> str:
    """A p-value: ``'< 0.001'`` below a thousandth, three decimals otherwise."""
    special = _special(p)
    if special is not None:
        return special
    v = float(p)  # type: ignore[arg-type]  # a number: _special() returned None
    if v < 0.001:
        return "< 0.001"
    return fmt_fixed(v, 3)


def fmt_eps(eps: object, decimals: int = 2) -> str:
    """``ε = 1.10``, rounded up (:func:`classroom.privacy_numbers.epsilon_up`: an ε on
    screen is a guarantee, so it never reads smaller than it is); ``ε = ∞`` for no
    privacy; ``ε = 0.00`` for no information.

    >>> fmt_eps(math.log(3)), fmt_eps(3.0), fmt_eps(2.001), fmt_eps(float("inf")), fmt_eps(None)
    ('ε = 1.10', 'ε = 3.00', 'ε = 2.01', 'ε = ∞', 'ε = —')
    """
    return "ε = " + fmt_eps_value(eps, decimals)


def fmt_eps_value(eps: object, decimals: int = 2) -> str:
    """The number of :func:`fmt_eps` alone, for a table cell or a metric.

    >>> fmt_eps_value(math.log(3), 4), fmt_eps_value(0.8472978603872037)
    ('1.0987', '0.85')
    """
    special = _special(eps)
    if special is not None:
        return special
    return epsilon_up(float(eps), decimals)  # type: ignore[arg-type]  # a number: _special() returned None


def fmt_eps_allowed(eps: object, decimals: int = 2) -> str:
    """The largest ε something may use (a budget's rest, the local ε a shuffler allows),
    rounded DOWN (:func:`classroom.privacy_numbers.epsilon_down`): an allowance on screen
    never reads larger than it is.

    >>> fmt_eps_allowed(1.0986122886681098), fmt_eps_allowed(2.3868), fmt_eps_allowed(None)
    ('1.09', '2.38', '—')
    """
    special = _special(eps)
    if special is not None:
        return special
    return epsilon_down(float(eps), decimals)  # type: ignore[arg-type]  # a number: _special() returned None


def fmt_ratio(x: object) -> str:
    """A factor the odds are multiplied by, three significant digits, rounded away from 1
    (up above 1, down below): the factor never reads gentler than it is
    (:mod:`classroom.privacy_numbers`); ``'×∞'`` when unbounded.

    >>> fmt_ratio(3.0000000000000004), fmt_ratio(math.e), fmt_ratio(1 / 3), fmt_ratio(float("inf"))
    ('×3', '×2.72', '×0.333', '×∞')
    """
    special = _special(x)
    if special is not None:
        return "×" + special
    v = float(x)  # type: ignore[arg-type]  # a number: _special() returned None
    text = significant_up(v, 3) if v >= 1 else significant_down(v, 3)
    return "×" + (text.rstrip("0").rstrip(".") if "." in text else text)


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _superscript(k: int) -> str:
    return str(k).translate(_SUPERSCRIPT)
