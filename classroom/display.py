"""How every screen writes an estimate: the one rule for the phones, the projector, the
desk and what is computed from an exported CSV.

Every screen shows the same digits for the same number:

* a **share** (μ̂ of a yes/no question, an option's estimated share) has three decimals,
  rounded to the nearest: ``0.373`` on the projector and the desk; a phone writes the same
  digits as a percentage, ``37.3%`` (the percentage is made from the rounded share, never
  rounded again);
* a **confidence interval** is rounded **outward**, its low end down and its high end up,
  so that the interval on screen always contains the one computed and keeps its promise
  of covering the truth in at least 95% of classes: ``[0.249, 0.991]``, on a phone
  ``24.9% to 99.1%``;
* a **value** of a number question (mean, SD) has the question's decimals
  (:func:`value_decimals`, from the width of its range), rounded to the nearest; its
  interval is rounded outward like a share's;
* **ε** keeps the privacy rule of :mod:`classroom.privacy_numbers` (a guarantee is rounded
  up, an allowance down), two decimals.

>>> share(0.37251), share_percent(0.37251), share_percent(-0.0674), share_percent(1.0)
('0.373', '37.3%', '−6.7%', '100.0%')
>>> share_interval(0.24951, 0.99049), share_interval_percent(0.24951, 0.99049)
(('0.249', '0.991'), ('24.9%', '99.1%'))
>>> value_interval(2.6249, 11.0751, "hours", 2)
('2.62 hours', '11.08 hours')
"""

from __future__ import annotations

import math

from classroom.privacy_numbers import round_down, round_up

__all__ = ["MINUS", "SHARE_DECIMALS", "format_value", "interval", "share", "share_interval",
           "share_interval_percent", "share_percent", "share_texts", "value", "value_decimals",
           "value_interval"]

#: Decimals of a share (μ̂, an option's share, an interval's end) on every screen; a phone's
#: percentage has two fewer.
SHARE_DECIMALS = 3

MINUS = "−"


def _signed(units: int, decimals: int, suffix: str = "") -> str:
    """``units / 10**decimals`` written with ``decimals`` decimals, a real minus sign,
    and never "−0"."""
    sign = MINUS if units < 0 else ""
    whole, frac = divmod(abs(units), 10**decimals)
    text = f"{whole:,}" + (f".{frac:0{decimals}d}" if decimals else "")
    return sign + text + suffix


def _thousandths(x: float) -> int:
    """``x`` in thousandths, rounded to the nearest as Python's ``f"{x:.3f}"`` rounds the
    float: the share and its percentage come from this one integer."""
    return int(f"{x:.{SHARE_DECIMALS}f}".replace(".", ""))


def share(x: float) -> str:
    """A share with :data:`SHARE_DECIMALS` decimals: ``0.373``."""
    return _signed(_thousandths(x), SHARE_DECIMALS)


def share_percent(x: float) -> str:
    """The digits of :func:`share` as a percentage: ``37.3%``."""
    return _signed(_thousandths(x), SHARE_DECIMALS - 2, "%")


def _outward(lo: float, hi: float, decimals: int) -> tuple[int, int]:
    """The ends in units of the last decimal, low end down, high end up (float noise below
    12 digits dropped first, as in :mod:`classroom.privacy_numbers`)."""
    return (math.floor(float(f"{lo * 10**decimals:.12g}")),
            math.ceil(float(f"{hi * 10**decimals:.12g}")))


def interval(lo: float, hi: float, decimals: int = SHARE_DECIMALS) -> tuple[str, str]:
    """An interval's ends with ``decimals`` decimals, rounded outward.

    >>> interval(0.12345, 0.98761), interval(-0.5004, 1.0, 2)
    (('0.123', '0.988'), ('−0.51', '1.00'))
    """
    low, high = _outward(lo, hi, decimals)
    return _signed(low, decimals), _signed(high, decimals)


def share_interval(lo: float, hi: float) -> tuple[str, str]:
    """An interval of shares, its ends rounded outward: ``('0.249', '0.991')``."""
    return interval(lo, hi, SHARE_DECIMALS)


def share_interval_percent(lo: float, hi: float) -> tuple[str, str]:
    """The digits of :func:`share_interval` as percentages: ``('24.9%', '99.1%')``."""
    low, high = _outward(lo, hi, SHARE_DECIMALS)
    return _signed(low, SHARE_DECIMALS - 2, "%"), _signed(high, SHARE_DECIMALS - 2, "%")


def value_decimals(lo: object, hi: object) -> int:
    """How many decimals every number of a numeric question gets: one rule for the whole
    question (mean, SD, CI, the values the phones sent, on the projector and the phones),
    so numbers side by side read alike. The last digit is about a thousandth of the width
    of the range of answers: [0, 12] gives 2 decimals, [0, 100] 1, [0, 1] 3, [0, 5000] none.

    >>> value_decimals(0, 12), value_decimals(0, 100), value_decimals(0, 1), value_decimals(0, 5000)
    (2, 1, 3, 0)
    >>> value_decimals(3, 3), value_decimals(None, 1)
    (2, 2)
    """
    if not (isinstance(lo, (int, float)) and isinstance(hi, (int, float))
            and math.isfinite(lo) and math.isfinite(hi)) or hi == lo:
        return 2
    return max(0, min(6, 3 - math.floor(math.log10(abs(float(hi) - float(lo))))))


def format_value(value: float, unit: str = "", decimals: int | None = None) -> str:
    """A numeric value as shown to people, with its unit: ``decimals`` decimals (a
    question's :func:`value_decimals`), or 4 significant digits where no range applies.

    >>> format_value(7.256, "hours"), format_value(-1234.6), format_value(0.5, "%")
    ('7.256 hours', '−1235', '0.5 %')
    >>> format_value(17.9863, "hours", 2), format_value(-6, "hours", 2), format_value(1234.5, "", 0)
    ('17.99 hours', '−6.00 hours', '1,234')
    >>> format_value(-0.001, "hours", 2)
    '0.00 hours'
    """
    if decimals is not None:
        text = f"{value:,.{decimals}f}"
        if float(text.replace(",", "")) == 0:
            text = text.lstrip("-")  # −0.00 reads as a sign without a number
    else:
        text = f"{value:.4g}"
        if "e" in text:
            text = f"{value:,.0f}"
    return f"{text.replace('-', MINUS)} {unit}".strip()


def value(x: float, unit: str, decimals: int) -> str:
    """A mean or an SD in the question's units: ``6.84 hours``."""
    return format_value(x, unit, decimals)


def value_interval(lo: float, hi: float, unit: str, decimals: int) -> tuple[str, str]:
    """A numeric interval's ends in the question's units, rounded outward:
    ``('2.62 hours', '11.08 hours')``."""
    return (format_value(round_down(lo, decimals), unit, decimals),
            format_value(round_up(hi, decimals), unit, decimals))


def share_texts(x: float | None, lo: float | None, hi: float | None) -> dict[str, object]:
    """What a phone writes for a share and its interval, as percentages with the digits
    the projector shows (``None`` where a number is missing or not finite).

    >>> share_texts(0.37251, 0.0, 0.7619)
    {'share': '37.3%', 'ci': ['0.0%', '76.2%']}
    >>> share_texts(None, None, None)
    {'share': None, 'ci': None}
    """
    def ok(v: float | None) -> bool:
        return v is not None and math.isfinite(v)

    return {"share": share_percent(x) if x is not None and ok(x) else None,
            "ci": list(share_interval_percent(lo, hi))
            if lo is not None and hi is not None and ok(lo) and ok(hi) else None}
