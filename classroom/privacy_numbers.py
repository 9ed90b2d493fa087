"""Numbers that state a privacy guarantee, rounded so that they never promise more than is
true: the one rounding rule of every privacy sentence on the phone, the dashboard and the
self-study pages.

* A bound on what a report can reveal rounds UP: an ε (of a design, spent, committed, a
  budget's cap), and the factor by which the odds between two true answers can change
  ("at most k×", e^ε).
* A promise that something stays likely or available rounds DOWN: "this report was at
  least X% likely whatever you truly prefer", the ε left in a budget.

Floating-point noise is ignored first: the number is rounded to 12 significant digits,
then up or down to what is shown. So e^(ln 3) = 3.0000000000000004 reads "3×" and
ln 3 = 1.0986… reads "1.10"; only a true value within a part in 10¹² of the shown one
could be rounded the other way. The phone's ``flow.js`` writes its ε the same way
(``epsilonText``), and tests/test_privacy_numbers.py checks that both give the same text.

>>> epsilon_up(3.0), epsilon_up(math.log(3)), epsilon_down(0.8027756377319946)
('3.00', '1.10', '0.80')
>>> at_least_percent(1 / (1 + math.exp(3))), at_most_factor(math.exp(3))
('4.7%', '20.1×')
"""

from __future__ import annotations

import math

__all__ = [
    "HUGE_FACTOR",
    "NOISE_DIGITS",
    "at_least_percent",
    "at_most_factor",
    "epsilon_down",
    "epsilon_up",
    "round_down",
    "round_up",
    "significant_down",
    "significant_up",
]

#: Significant digits kept before rounding up or down (what lies beyond is float noise).
NOISE_DIGITS = 12

#: Above this factor the odds sentence says "a huge factor" instead of a long number.
HUGE_FACTOR = 1e9


def _scaled(x: float, decimals: int) -> float:
    """``x * 10^decimals`` to :data:`NOISE_DIGITS` significant digits (as the phone's
    ``Number((x * 100).toPrecision(12))``)."""
    return float(f"{x * 10**decimals:.{NOISE_DIGITS}g}")


def round_up(x: float, decimals: int) -> float:
    """``x`` rounded up to ``decimals`` decimals (noise below 12 digits ignored).

    >>> round_up(1.0000000000000002, 2), round_up(1.001, 2), round_up(0.0, 2)
    (1.0, 1.01, 0.0)
    """
    return math.ceil(_scaled(x, decimals)) / 10**decimals


def round_down(x: float, decimals: int) -> float:
    """``x`` rounded down to ``decimals`` decimals (noise below 12 digits ignored).

    >>> round_down(0.7999999999999998, 2), round_down(4.7426, 1)
    (0.8, 4.7)
    """
    return math.floor(_scaled(x, decimals)) / 10**decimals


def epsilon_up(eps: float, decimals: int = 2) -> str:
    """An ε that bounds what is revealed: rounded up; ``"∞"`` for no bound.

    >>> epsilon_up(1.0), epsilon_up(0.01), epsilon_up(7.3), epsilon_up(math.inf)
    ('1.00', '0.01', '7.30', '∞')
    """
    if math.isnan(eps):
        raise ValueError("epsilon is not a number")
    if math.isinf(eps):
        return "∞"
    return f"{round_up(eps, decimals):.{decimals}f}"


def epsilon_down(eps: float, decimals: int = 2) -> str:
    """An ε still available (a budget's rest): rounded down, never below 0.

    >>> epsilon_down(0.8027756377319946), epsilon_down(-1e-12)
    ('0.80', '0.00')
    """
    if math.isnan(eps):
        raise ValueError("epsilon is not a number")
    if math.isinf(eps):
        return "∞"
    return f"{max(0.0, round_down(eps, decimals)):.{decimals}f}"


def at_least_percent(p: float) -> str:
    """A probability promised as a floor, in percent, rounded down: one decimal (none when
    it is 0), two significant digits below 1%.

    >>> at_least_percent(0.25), at_least_percent(0.2689414213699951), at_least_percent(0.000675)
    ('25%', '26.8%', '0.067%')
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"a probability must be in [0, 1], got {p!r}")
    percent = p * 100
    if percent == 0.0:
        return "0%"
    decimals = 1 if percent >= 1 else 1 - math.floor(math.log10(percent))
    text = f"{round_down(percent, decimals):.{decimals}f}"
    return (text.rstrip("0").rstrip(".") if "." in text else text) + "%"


def _significant(x: float, sig: int, up: bool) -> str:
    if x == 0:
        return "0"
    decimals = sig - 1 - math.floor(math.log10(abs(x)))
    step = round_up if up else round_down
    if decimals <= 0:
        whole = _scaled(x, 0)
        return f"{math.ceil(whole) if up else math.floor(whole):,}"
    return f"{step(x, decimals):,.{decimals}f}"


def significant_up(x: float, sig: int = 3) -> str:
    """``x`` to ``sig`` significant digits, rounded up (trailing zeros kept).

    >>> significant_up(0.0184387), significant_up(1.0986), significant_up(0.5500655)
    ('0.0185', '1.10', '0.551')
    """
    return _significant(x, sig, True)


def significant_down(x: float, sig: int = 3) -> str:
    """``x`` to ``sig`` significant digits, rounded down: a factor below 1 moved away from 1.

    >>> significant_down(1 / 3), significant_down(0.2689)
    ('0.333', '0.268')
    """
    return _significant(x, sig, False)


def at_most_factor(x: float) -> str:
    """A factor promised as a ceiling ("the odds change by at most k×"), rounded up: three
    significant digits below 100 (trailing zeros dropped), whole numbers above.

    >>> at_most_factor(math.exp(math.log(3))), at_most_factor(math.e), at_most_factor(math.exp(7.3))
    ('3×', '2.72×', '1,481×')
    >>> at_most_factor(math.exp(0.01)), at_most_factor(math.exp(40))
    ('1.02×', 'a huge factor')
    """
    if not x >= 1.0:
        raise ValueError(f"a factor of odds is at least 1, got {x!r}")
    if x >= HUGE_FACTOR:
        return "a huge factor"
    text = significant_up(x, 3)
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text + "×"
