"""The averaging attack: the same yes/no answer randomized k times, reports linked.

If a student's k reports of the same question can be put side by side, an observer
counts the "yes" reports ``j``. Given the truth, ``j`` is binomial: ``Bin(k, a)`` for
a true "yes", ``Bin(k, b)`` for a true "no", with ``a = P(report 1 | 1)`` and
``b = P(report 1 | 0)`` of the design. A sequence with ``j`` ones has likelihood
ratio ``(a/b)^j ((1-a)/(1-b))^(k-j)`` between the two truths, so

* the observer's posterior ``P(truly yes | j)`` follows by Bayes' rule;
* the privacy loss of the k linked reports, computed from this joint channel, is
  ``max_j |ln ratio_j|``; for ε-randomized response it is exactly ``k ε`` (at
  ``j = 0`` or ``j = k``): sequential composition ``ε_1 + ... + ε_k`` (Dwork & Roth
  2014, Theorem 3.16) is tight here;
* a majority vote over the k reports reveals the truth more and more often.

This is why the classroom keeps one report per device and question round and makes
a device's reports unlinkable across rounds (a fresh salt per round).
"""

from __future__ import annotations

import numpy as np

from . import _checks
from .binary import BinaryDesign

__all__ = ["composed_epsilon", "majority_reveal_probability", "repeated_posterior",
           "yes_count_distribution"]

#: Largest k the functions accept: the page's slider goes far below it.
MAX_REPEATS = 10_000


def _design_and_k(design: object, k: object) -> tuple[BinaryDesign, int]:
    if not isinstance(design, BinaryDesign):
        raise ValueError(f"design must be a BinaryDesign, got {design!r}")
    return design, _checks.integer("k", k, 1, MAX_REPEATS)


def _log_ratios(design: BinaryDesign, k: int) -> np.ndarray:
    """``ln P(sequence with j ones | 1) - ln P(same | 0)`` for j = 0..k (±inf allowed)."""
    a, b = float(design.a), float(design.b)
    j = np.arange(k + 1, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.log(a) - np.log(b) if a > 0 or b > 0 else 0.0
        down = np.log1p(-a) - np.log1p(-b) if a < 1 or b < 1 else 0.0
        out = np.where(j > 0, j * up, 0.0) + np.where(k - j > 0, (k - j) * down, 0.0)
    return np.asarray(out, dtype=float)


def yes_count_distribution(design: BinaryDesign, k: int, truth: int) -> np.ndarray:
    """``P(j yes reports among k | truth)`` for j = 0..k: ``Bin(k, a)`` or ``Bin(k, b)``.

    >>> from ldp_core import DieRR
    >>> yes_count_distribution(DieRR(4, 3), 2, 1).round(12).tolist()
    [0.0625, 0.375, 0.5625]
    """
    design, k = _design_and_k(design, k)
    if truth not in (0, 1):
        raise ValueError(f"truth must be 0 or 1, got {truth!r}")
    p = float(design.a if truth else design.b)
    j = np.arange(k + 1)
    # ln C(k, j), term by term: ln C(k, j) - ln C(k, j - 1) = ln((k - j + 1) / j).
    log_comb = np.concatenate(([0.0], np.cumsum(np.log(k - j[1:] + 1.0) - np.log(j[1:]))))
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = log_comb + np.where(j > 0, j * np.log(p), 0.0) + \
            np.where(k - j > 0, (k - j) * np.log1p(-p), 0.0)
    return np.exp(logs)


def repeated_posterior(design: BinaryDesign, k: int, prior: float = 0.5) -> np.ndarray:
    """``P(truly yes | j of the k linked reports say yes)`` for j = 0..k (Bayes' rule on
    the joint channel). NaN where ``j`` is impossible under both truths.

    >>> from ldp_core import DieRR
    >>> repeated_posterior(DieRR(4, 3), 2).round(4).tolist()
    [0.1, 0.5, 0.9]
    """
    design, k = _design_and_k(design, k)
    pi = _checks.in_range("prior", prior, 0.0, 1.0)
    yes = yes_count_distribution(design, k, 1) * pi
    no = yes_count_distribution(design, k, 0) * (1 - pi)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(yes / (yes + no), dtype=float)


def composed_epsilon(design: BinaryDesign, k: int) -> float:
    """The exact privacy loss of k linked reports, from their joint channel:
    ``max`` over the report sequences of ``|ln P(seq | 1) / P(seq | 0)|``. Sequences with
    the same number of ones have the same ratio, so the maximum runs over j = 0..k.

    >>> from ldp_core import EpsilonRR
    >>> round(composed_epsilon(EpsilonRR(0.5), 4), 12)
    2.0
    """
    design, k = _design_and_k(design, k)
    ratios = _log_ratios(design, k)
    possible = (yes_count_distribution(design, k, 1) > 0) | \
        (yes_count_distribution(design, k, 0) > 0)
    return float(np.max(np.abs(ratios[possible])))


def majority_reveal_probability(design: BinaryDesign, k: int, truth: int = 1) -> float:
    """The chance that the majority of k linked reports equals the truth (a tie counts
    one half: the observer flips a coin).

    >>> from ldp_core import DieRR
    >>> round(majority_reveal_probability(DieRR(4, 3), 1), 12)
    0.75
    """
    design, k = _design_and_k(design, k)
    dist = yes_count_distribution(design, k, truth)
    j = np.arange(k + 1)
    right = j * 2 > k if truth else j * 2 < k
    return float(dist[right].sum() + 0.5 * dist[j * 2 == k].sum())
