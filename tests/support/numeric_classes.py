"""Classes of students and what their phones send, for measuring a numeric question's
interval and stuffing check: the tests and docs/numeric_checks.py use the same classes.

A class is a fixed set of true values on the [-1, 1] scale; only the phones' randomness
varies between re-runs, which is what the dashboard's "fixed class" interval is about.
"""

from __future__ import annotations

import math

import numpy as np

from ldp_core import ALPHA, NumericDesign, NumericEstimate, NumericMechanism
from ldp_core.plausibility import _numeric_p_values

__all__ = ["CLASSES", "class_values", "coverage", "one_report_alarm_rate", "phone_reports",
           "previous_one_report_rate", "simulated_alarms", "spread_coverage",
           "two_valued_alarm_rate"]

#: The classes the interval is measured on (the [-1, 1] scale is the range [lo, hi]).
CLASSES = ("mid-range", "near the top", "all at the maximum", "skewed", "exponential")


def class_values(kind: str, n: int) -> np.ndarray:
    """The true values of a class of n, spread evenly (no randomness):

    * mid-range: evenly over the middle 30% of the range;
    * near the top: evenly over its top 10%;
    * all at the maximum;
    * skewed: 85% evenly over the bottom 10%, the rest at the maximum;
    * exponential: the quantiles of an exponential with mean a fifth of the range, from
      the bottom, cut at the top.
    """
    def even(lo: float, hi: float, k: int) -> np.ndarray:
        return np.linspace(lo, hi, k) if k > 1 else np.full(k, (lo + hi) / 2)

    if kind == "mid-range":
        return even(-0.3, 0.3, n)
    if kind == "near the top":
        return even(0.8, 1.0, n)
    if kind == "all at the maximum":
        return np.ones(n)
    if kind == "skewed":
        low = round(0.85 * n)
        return np.concatenate([even(-1.0, -0.8, low), np.ones(n - low)])
    if kind == "exponential":
        quantiles = (np.arange(n) + 0.5) / n
        return np.minimum(1.0, -1.0 - 0.4 * np.log1p(-quantiles))
    raise ValueError(f"unknown class {kind!r}; one of {CLASSES}")


def phone_reports(mech: NumericMechanism, x: object, shape: object,
                  rng: np.random.Generator) -> np.ndarray:
    """What phones of students at x send: the report, snapped to its cell where the
    mechanism has cells (x broadcasts against ``shape``)."""
    y = mech.perturb(np.broadcast_to(np.asarray(x, dtype=float), shape), rng=rng)
    return y if mech.device_grid() is None else mech.snap(y)


def _bit_pmf(mech: NumericMechanism, xs: np.ndarray) -> np.ndarray:
    """P(K = k) for the number K of +c reports of a class (one Bernoulli per student)."""
    top = float(mech.output_bounds[1])
    pmf = np.array([1.0])
    for p in np.asarray(mech.survival(top, xs), dtype=float).reshape(-1):
        pmf = np.convolve(pmf, [1 - p, p])
    return pmf


def coverage(design: NumericDesign, xs: np.ndarray, *, reps: int,
             rng: np.random.Generator, level: float = 0.95) -> tuple[float, float]:
    """``(coverage, mean length)`` of :meth:`NumericEstimate.interval` for the class ``xs``
    (unit scale), the length in the question's units: exact (every count of +c) for
    two-valued reports, over ``reps`` simulated re-runs otherwise."""
    mech, n = design.mechanism, xs.size
    truth = float(design.value_of(xs.mean()))
    if mech.device_grid() is None:
        c = float(mech.output_bounds[1])
        pmf = _bit_pmf(mech, xs)
        hit = length = 0.0
        for k, p in enumerate(pmf):
            reports = np.where(np.arange(n) < k, c, -c)
            low, high = NumericEstimate.from_groups([(design, reports)]).interval(level)
            hit += p * (low <= truth <= high)
            length += p * (high - low)
        return hit, length
    first = NumericEstimate.from_groups([(design, phone_reports(mech, xs, n, rng))])
    low, high = first.interval(level)
    half = (high - low) / 2  # mean ± t sd_worst: the same half-width for every re-run
    hits = 0
    for start in range(0, reps, max(1, 1_000_000 // n)):
        rows = min(max(1, 1_000_000 // n), reps - start)
        means = design.value_of(phone_reports(mech, xs, (rows, n), rng).mean(axis=1))
        hits += int(np.sum(np.abs(means - truth) <= half))
    return hits / reps, 2 * half


def spread_coverage(design: NumericDesign, xs: np.ndarray, *, reps: int,
                    rng: np.random.Generator) -> float:
    """The coverage of the interval the dashboard used before: the mean ± 1.96 times the
    SD estimated from the reports' spread (exact for two-valued reports)."""
    mech, n = design.mechanism, xs.size
    truth = float(xs.mean())
    z = 1.959963984540054
    if mech.device_grid() is None:
        c = float(mech.output_bounds[1])
        k = np.arange(n + 1)
        mean = c * (2 * k / n - 1)
        sd = np.sqrt(4 * c * c * k * (n - k) / (n * (n - 1)))
        return float(_bit_pmf(mech, xs)[np.abs(mean - truth) <= z * sd / math.sqrt(n)].sum())
    hits = 0
    for start in range(0, reps, max(1, 1_000_000 // n)):
        rows = min(max(1, 1_000_000 // n), reps - start)
        y = phone_reports(mech, xs, (rows, n), rng)
        half = z * y.std(axis=1, ddof=1) / math.sqrt(n)
        hits += int(np.sum(np.abs(y.mean(axis=1) - truth) <= half))
    return hits / reps


# -- the stuffing check on honest classes ------------------------------------------------


def two_valued_alarm_rate(mech: NumericMechanism, xs: np.ndarray, alpha: float = ALPHA
                          ) -> float:
    """Exactly, for a mechanism with two reports ±c: how often the class ``xs`` raises the
    alarm (the check sees the count K of +c, a sum of one Bernoulli per student)."""
    n, c = xs.size, float(mech.output_bounds[1])
    rows = np.where(np.arange(n)[None, :] < np.arange(n + 1)[:, None], c, -c)
    p, _, _ = _numeric_p_values(mech, rows)
    return float(_bit_pmf(mech, xs)[p < alpha].sum())


def one_report_alarm_rate(mech: NumericMechanism, alpha: float = ALPHA) -> float:
    """Exactly, for one report of a student at the top: the alarm region is y >= t or
    y <= -t (t found by bisection on the check itself), and its probability the survival's."""
    low, high = 0.0, float((mech.device_grid() or mech.output_bounds)[1])
    for _ in range(100):
        mid = (low + high) / 2
        p, _, _ = _numeric_p_values(mech, np.array([[mid]]))
        low, high = (mid, high) if p[0] >= alpha else (low, mid)
    return float(mech.survival(low, 1.0) + 1 - mech.survival(-low, 1.0))  # bounds it


def previous_one_report_rate(epsilon: float) -> float:
    """The check before, on one local Laplace report at ε: the mean's normal tail at 3.719
    worst-case SDs (√2 scales each), on either side, ``½ e^(-3.719 √2) (1 + e^-ε)``."""
    return 0.5 * math.exp(-3.719 * math.sqrt(2)) * (1 + math.exp(-epsilon))


def simulated_alarms(mech: NumericMechanism, n: int, classes: int, *, seed: int,
                     alpha: float = ALPHA) -> int:
    """How many of ``classes`` simulated classes of n students at the top raise the alarm."""
    rng = np.random.default_rng(seed)
    alarms, step = 0, max(1, 2_000_000 // n)
    for start in range(0, classes, step):
        rows = min(step, classes - start)
        p, _, _ = _numeric_p_values(mech, phone_reports(mech, 1.0, (rows, n), rng))
        alarms += int((p < alpha).sum())
    return alarms
