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

A memoized design (:class:`MemoRR`, RAPPOR's two-step randomization) draws its k reports
from one memo kept on the device: given the truth, j is a mixture,
``P(memo 1 | truth) Bin(k, q) + P(memo 0 | truth) Bin(k, p)``. The same functions then
give the loss of k memoized reports of the same answer, which grows with k towards the
memo's own ε∞ and never passes it, and a majority vote that reveals the truth at most
as often as the memo equals it (1 − f/2).
"""

from __future__ import annotations

import math

import numpy as np

from . import _checks
from .binary import BinaryDesign, MemoRR

__all__ = ["composed_epsilon", "majority_reveal_probability", "repeated_posterior",
           "yes_count_distribution"]

#: Largest k the functions accept: the page's slider goes far below it.
MAX_REPEATS = 10_000


def _design_and_k(design: object, k: object) -> tuple[BinaryDesign, int]:
    if not isinstance(design, BinaryDesign):
        raise ValueError(f"design must be a BinaryDesign, got {design!r}")
    return design, _checks.integer("k", k, 1, MAX_REPEATS)


def _sequence_loglik(p: float, k: int) -> np.ndarray:
    """``ln(p^j (1 - p)^(k - j))`` for j = 0..k (-inf where impossible, never NaN)."""
    j = np.arange(k + 1, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.where(j > 0, j * np.log(p), 0.0)
                          + np.where(k - j > 0, (k - j) * np.log1p(-p), 0.0), dtype=float)


def _loglik(design: BinaryDesign, k: int, truth: int) -> np.ndarray:
    """``ln P(one given sequence with j ones | truth)`` for j = 0..k: independent reports,
    or (a memoized design) reports of one memo drawn once."""
    if not isinstance(design, MemoRR):
        return _sequence_loglik(float(design.a if truth else design.b), k)
    memo = float(design.permanent.a if truth else design.permanent.b)
    with np.errstate(divide="ignore"):
        return np.asarray(np.logaddexp(
            math.log(memo) + _sequence_loglik(design.q, k),
            math.log1p(-memo) + _sequence_loglik(design.p, k)), dtype=float)


def _log_ratios(design: BinaryDesign, k: int) -> np.ndarray:
    """``ln P(sequence with j ones | 1) - ln P(same | 0)`` for j = 0..k (±inf allowed).
    Independent reports: ``j ln(a / b) + (k - j) ln((1 - a) / (1 - b))``, term by term."""
    if isinstance(design, MemoRR):
        with np.errstate(invalid="ignore"):
            return np.asarray(_loglik(design, k, 1) - _loglik(design, k, 0), dtype=float)
    a, b = float(design.a), float(design.b)
    j = np.arange(k + 1, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.log(a) - np.log(b) if a > 0 or b > 0 else 0.0
        down = np.log1p(-a) - np.log1p(-b) if a < 1 or b < 1 else 0.0
        out = np.where(j > 0, j * up, 0.0) + np.where(k - j > 0, (k - j) * down, 0.0)
    return np.asarray(out, dtype=float)


def yes_count_distribution(design: BinaryDesign, k: int, truth: int) -> np.ndarray:
    """``P(j yes reports among k | truth)`` for j = 0..k: ``Bin(k, a)`` or ``Bin(k, b)``;
    for a memoized design the mixture over its memo.

    >>> from ldp_core import DieRR
    >>> yes_count_distribution(DieRR(4, 3), 2, 1).round(12).tolist()
    [0.0625, 0.375, 0.5625]
    >>> yes_count_distribution(MemoRR(0.5, 0.25, 0.75), 2, 1).round(12).tolist()
    [0.1875, 0.375, 0.4375]
    """
    design, k = _design_and_k(design, k)
    if truth not in (0, 1):
        raise ValueError(f"truth must be 0 or 1, got {truth!r}")
    j = np.arange(k + 1)
    # ln C(k, j), term by term: ln C(k, j) - ln C(k, j - 1) = ln((k - j + 1) / j).
    log_comb = np.concatenate(([0.0], np.cumsum(np.log(k - j[1:] + 1.0) - np.log(j[1:]))))
    return np.exp(log_comb + _loglik(design, k, truth))


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
    """The exact privacy loss of k linked reports of the same answer, from their joint
    channel: ``max`` over the report sequences of ``|ln P(seq | 1) / P(seq | 0)|``.
    Sequences with the same number of ones have the same ratio, so the maximum runs over
    j = 0..k. k ε for ε-randomized response; below the memo's ε∞ for a memoized design.

    >>> from ldp_core import EpsilonRR
    >>> round(composed_epsilon(EpsilonRR(0.5), 4), 12)
    2.0
    >>> memo = MemoRR(0.5, 0.5, 0.75)  # RAPPOR's example: ε₁ = 0.34, ε∞ = ln 3 = 1.10
    >>> [round(composed_epsilon(memo, k), 3) for k in (1, 2, 10, 1000)]
    [0.336, 0.619, 1.096, 1.099]
    """
    design, k = _design_and_k(design, k)
    ratios = _log_ratios(design, k)
    # possible under some truth (in logs: a probability like 0.62^10000 is not 0)
    possible = np.isfinite(_loglik(design, k, 1)) | np.isfinite(_loglik(design, k, 0))
    loss = float(np.max(np.abs(ratios[possible])))
    if isinstance(design, MemoRR):  # every report is a function of the memo: at most its ε
        loss = min(loss, design.epsilon_series)  # (the sum of logs may pass it by 1e-12)
    return loss


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
