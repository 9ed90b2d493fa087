"""The quantiles every interval uses: the standard normal's, Student's t and chi-squared
with one degree of freedom. A module of their own, below :mod:`.estimate` and
:mod:`.intervals`, which both use them (neither imports the other for them)."""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

from . import _checks

__all__ = ["chi2_1_quantile", "t_quantile", "z_quantile"]


def z_quantile(level: float = 0.95) -> float:
    """Two-sided standard normal quantile ``Phi^-1(1/2 + level/2)``: 1.95996... at 0.95.

    >>> round(z_quantile(0.95), 4)
    1.96
    """
    lv = _checks.in_range("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    return NormalDist().inv_cdf(0.5 + lv / 2)


def _t_two_sided(t: float, df: int) -> float:
    """``P(|T| <= t)`` for Student's t with integer ``df``, in closed form (Abramowitz &
    Stegun 26.7.3 and 26.7.4, with ``theta = atan(t / sqrt(df))``)."""
    theta = math.atan(t / math.sqrt(df))
    cos2, sin = math.cos(theta) ** 2, math.sin(theta)
    if df % 2 == 0:  # sin(theta) (1 + 1/2 cos^2 + 1*3/(2*4) cos^4 + ...), df/2 terms
        term = total = 1.0
        for k in range(1, df // 2):
            term *= (2 * k - 1) / (2 * k) * cos2
            total += term
        return sin * total
    total = 0.0  # (2/pi) (theta + sin cos (1 + 2/3 cos^2 + 2*4/(3*5) cos^4 + ...))
    if df > 1:
        term = total = 1.0
        for k in range(1, (df - 1) // 2):
            term *= 2 * k / (2 * k + 1) * cos2
            total += term
    return 2 / math.pi * (theta + sin * math.cos(theta) * total)


@lru_cache(maxsize=4096)
def t_quantile(level: float, df: int) -> float:
    """Two-sided Student's t quantile with ``df`` degrees of freedom: the t with
    ``P(|T| <= t) = level`` (2.262 at 0.95 and df = 9, 12.706 at df = 1). Exact (by
    bisection on the closed-form distribution) up to df = 2,000; beyond, the
    Cornish-Fisher series in 1/df (Abramowitz & Stegun 26.7.5), whose error is below 1e-10.

    >>> [round(t_quantile(0.95, df), 3) for df in (1, 9, 10**6)]
    [12.706, 2.262, 1.96]
    """
    lv = _checks.in_range("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    nu = _checks.integer("df", df, 1)
    z = z_quantile(lv)
    if nu > 2000:
        z3, z5, z7 = z ** 3, z ** 5, z ** 7
        return (z + (z3 + z) / (4 * nu) + (5 * z5 + 16 * z3 + 3 * z) / (96 * nu ** 2)
                + (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * nu ** 3))
    lo, hi = z, z * 2.0
    while _t_two_sided(hi, nu) < lv:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if _t_two_sided(mid, nu) < lv:
            lo = mid
        else:
            hi = mid
    return hi


def chi2_1_quantile(level: float = 0.95) -> float:
    """Quantile of chi-squared with one degree of freedom: ``z^2`` (3.8415 at 0.95).

    The cut-off of the likelihood-ratio interval (CS208 notes, 2022).

    >>> round(chi2_1_quantile(0.95), 3)
    3.841
    """
    return z_quantile(level) ** 2
