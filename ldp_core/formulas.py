"""The closed forms of a binary design's estimator, for showing a formula beside its number.

For one design with channel ``a = P(report 1 | truly 1)`` and ``b = P(report 1 |
truly 0)``, and V "yes" reports out of n:

* the unbiased estimate is linear in the reported share,
  ``mu_hat = (V/n - b) / (a - b) = slope * V/n - offset`` with
  ``slope = 1 / (a - b)`` and ``offset = b / (a - b)``; for the class exercise
  (die 1-4, lie on 4) that is ``2 V/n - 1/2`` (CS208 group-exercise solution);
* its worst-case variance over all classes is ``unit / n`` with
  ``unit = max(a (1 - a), b (1 - b)) / (a - b)^2``; for the exercise
  ``unit = 3/4``, so ``SD = sqrt(3 / (4 n))``;
* its privacy loss is ``epsilon = ln(ratio)`` with ``ratio`` the largest
  likelihood ratio of a report, ``max(a/b, b/a, (1-a)/(1-b), (1-b)/(1-a))``;
  for the exercise ``ratio = (3/4) / (1/4) = 3``, so ``epsilon = ln 3``.

These coefficients are the one definition of the estimator and its worst-case
variance: ``BinaryCounts.unbiased`` and ``BinaryCounts.sd_worst`` (and
``explore.share_estimates``) are built on them; ``privacy_ratio`` is
``exp(BinaryDesign.epsilon)`` kept exact. Designs whose branch probabilities are
exact fractions (the die, the coins) give exact :class:`fractions.Fraction`
coefficients; the others give floats.
"""

from __future__ import annotations

import math
from fractions import Fraction

from .binary import BinaryDesign

__all__ = ["privacy_ratio", "unbiased_coefficients", "worst_variance_unit"]

Number = Fraction | float


def _channel(design: BinaryDesign) -> tuple[Number, Number]:
    if not isinstance(design, BinaryDesign):
        raise ValueError(f"design must be a BinaryDesign, got {design!r}")
    br = design.branches()
    if all(isinstance(v, Fraction) for v in br.values()):
        a, b = br["truth"] + br["yes"], br["lie"] + br["yes"]
    else:
        a, b = design.a, design.b
    if a == b:
        raise ValueError(f"{design!r} carries no information (a == b): no estimator exists")
    return a, b


def unbiased_coefficients(design: BinaryDesign) -> tuple[Number, Number]:
    """``(slope, offset)`` with ``mu_hat = slope * V/n - offset`` for reports under ``design``.

    >>> from ldp_core import DieRR
    >>> unbiased_coefficients(DieRR(faces=4, truthful=3))
    (Fraction(2, 1), Fraction(1, 2))
    """
    return coefficients_ab(*_channel(design))


def worst_variance_unit(design: BinaryDesign) -> Number:
    """``n * Var(mu_hat)`` in the worst case over classes: ``max(a(1-a), b(1-b)) / (a-b)^2``.

    ``sqrt(worst_variance_unit(design) / n)`` is ``BinaryCounts.sd_worst()``
    for n reports under ``design``.

    >>> from ldp_core import DieRR
    >>> worst_variance_unit(DieRR(faces=4, truthful=3))
    Fraction(3, 4)
    """
    return variance_unit_ab(*_channel(design))


def coefficients_ab(a: Number, b: Number) -> tuple[Number, Number]:
    """``(slope, offset) = (1 / (a - b), b / (a - b))`` from the channel itself."""
    return 1 / (a - b), b / (a - b)


def variance_unit_ab(a: Number, b: Number) -> Number:
    """``max(a (1 - a), b (1 - b)) / (a - b)^2`` from the channel itself."""
    return max(a * (1 - a), b * (1 - b)) / (a - b) ** 2


def privacy_ratio(design: BinaryDesign) -> Number:
    """``e^epsilon``: the largest ratio of a report's probabilities under the two true answers.

    ``math.inf`` when some report is possible under one answer and impossible
    under the other (no privacy).

    >>> from ldp_core import DieRR, WarnerRR
    >>> privacy_ratio(DieRR(faces=4, truthful=3))
    Fraction(3, 1)
    >>> round(privacy_ratio(WarnerRR(0.7)), 12)
    2.333333333333
    """
    a, b = _channel(design)
    ratios = []
    for p, q in ((a, b), (1 - a, 1 - b)):
        if p == q:
            continue
        if p == 0 or q == 0:
            return math.inf
        ratios.append(max(p / q, q / p))
    return max(ratios)
