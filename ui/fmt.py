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
from decimal import ROUND_CEILING, Decimal

__all__ = [
    "DASH",
    "fmt",
    "fmt_count",
    "fmt_eps",
    "fmt_fixed",
    "fmt_interval",
    "fmt_pct",
    "fmt_power",
    "fmt_pvalue",
    "fmt_ratio",
    "fmt_up",
    "is_number",
]

DASH = "—"
MINUS = "−"


def is_number(x: object) -> bool:
    """True for a finite real number (bools excluded)."""
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


def fmt_up(x: object, sig: int = 3) -> str:
    """``sig`` significant digits, rounded UP: an ε shown as a guarantee errs toward privacy.

    >>> fmt_up(0.5500655), fmt_up(0.551), fmt_up(0.0184387), fmt_up(1.0986), fmt_up(None)
    ('0.551', '0.551', '0.0185', '1.10', '—')
    """
    special = _special(x)
    if special is not None:
        return special
    d = Decimal(repr(float(x)))  # type: ignore[arg-type]  # a number: _special() returned None
    if d == 0:
        return "0"
    quantum = Decimal(1).scaleb(d.adjusted() - sig + 1)
    return _minus(f"{d.quantize(quantum, rounding=ROUND_CEILING):f}")


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


def fmt_interval(lo: object, hi: object, decimals: int = 3) -> str:
    """``[lo, hi]``, or a dash when either end is missing."""
    if _special(lo) == DASH or _special(hi) == DASH:
        return DASH
    return f"[{fmt_fixed(lo, decimals)}, {fmt_fixed(hi, decimals)}]"


def fmt_pvalue(p: object) -> str:
    """A p-value: ``'< 0.001'`` below a thousandth, three decimals otherwise."""
    special = _special(p)
    if special is not None:
        return special
    v = float(p)  # type: ignore[arg-type]  # a number: _special() returned None
    if v < 0.001:
        return "< 0.001"
    return fmt_fixed(v, 3)


def fmt_eps(eps: object) -> str:
    """``ε = 1.10``; ``ε = ∞`` for no privacy; ``ε = 0`` for no information."""
    special = _special(eps)
    if special is not None:
        return "ε = " + special
    return "ε = " + fmt_fixed(eps, 2)


def fmt_ratio(x: object) -> str:
    """A multiplicative factor: ``3 -> '×3.00'``; ``'×∞'`` when unbounded."""
    special = _special(x)
    if special is not None:
        return "×" + special
    return "×" + fmt(x, 3)


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _superscript(k: int) -> str:
    return str(k).translate(_SUPERSCRIPT)
