"""Four trust models for one yes/no question, compared at equal privacy.

The class's estimated share of "yes", n students, privacy ε (the shuffle model
adds a δ), its standard deviation for a fixed class under:

* **local**: every phone randomizes its own answer with ε-RR and the server
  sees every report (:func:`~ldp_core.local_mean_sd`,
  ``e^(ε/2) / ((e^ε − 1) √n)``);
* **shuffle**: the same randomized reports reach the analyst through a
  shuffler, which hides who sent which; each phone can then use the largest
  ε0 for which the shuffled n reports are still (ε, δ)-DP
  (:func:`~ldp_core.shuffle_local_epsilon`, exact for RR), and the SD is
  ``local_mean_sd(n, ε0)``;
* **federated** with k delegates (CS208 "Comparing the Models": data split
  over k parties, error Θ(√k/ε) for sums, "interpolates between local &
  central"): each delegate holds the true answers of their own table and
  releases its count plus Laplace(1/ε), so the class count carries k Laplace
  noises and the share's SD is ``√(2k) / (nε)``;
* **central**: one trusted curator adds Laplace(1/ε) to the class count once,
  ``√2 / (nε)`` (:func:`~ldp_core.central_mean_sd`).

Every model but the shuffle one is ε-DP with δ = 0. For ε-RR the fixed-class SD
is the same whatever the class's true share, so one number describes each model.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from . import _checks
from ._checks import RNGLike
from .binary import EpsilonRR
from .central import central_mean_sd, local_mean_sd
from .explore import share_estimates
from .shuffle import DELTA_MIN, EXACT_MAX_N, shuffle_local_epsilon

__all__ = [
    "ModelSDs",
    "ModelShares",
    "federated_share_sd",
    "model_share_sds",
    "sd_with_se",
    "simulate_model_shares",
]


class ModelSDs(NamedTuple):
    """The SD of the estimated share under each model, and the shuffle model's local ε0."""

    local: float
    shuffle: float
    federated: float
    central: float
    shuffle_local_epsilon: float


class ModelShares(NamedTuple):
    """Simulated estimated shares, one array per model (one entry per simulated class)."""

    local: np.ndarray
    shuffle: np.ndarray
    federated: np.ndarray
    central: np.ndarray


def _inputs(n: object, epsilon: object, delta: object, k: object) -> tuple[int, float, float, int]:
    n = _checks.integer("n", n, 1, EXACT_MAX_N)
    eps = _checks.in_range("epsilon", epsilon, EpsilonRR.MIN_EPSILON, EpsilonRR.MAX_EPSILON)
    d = _checks.in_range("delta", delta, DELTA_MIN, 1.0, hi_open=True)
    k = _checks.integer("k", k, 1, n)
    return n, eps, d, k


def federated_share_sd(n: int, epsilon: float, k: int) -> float:
    """SD of the share when k delegates each release their table's count + Laplace(1/ε).

    The class count then carries k independent Laplace(1/ε) noises, each of
    variance 2/ε², so ``SD = √(2k) / (nε)``: k = 1 is the central model, k = n
    one noise per student.

    >>> round(federated_share_sd(30, 1.0, 6), 4)
    0.1155
    >>> federated_share_sd(30, 1.0, 1) == central_mean_sd(30, 1.0)
    True
    """
    n = _checks.integer("n", n, 1)
    eps = _checks.positive("epsilon", epsilon)
    k = _checks.integer("k", k, 1, n)
    return math.sqrt(2 * k) / (n * eps)


def model_share_sds(n: int, epsilon: float, delta: float, k: int) -> ModelSDs:
    """The SD of the class's estimated share under the four models at the same (ε, δ).

    >>> s = model_share_sds(30, 1.0, 1e-6, 6)
    >>> round(s.federated, 4), round(s.central, 4), s.local > s.shuffle > s.federated
    (0.1155, 0.0471, True)
    """
    n, eps, d, k = _inputs(n, epsilon, delta, k)
    eps0 = shuffle_local_epsilon(n, eps, d)
    return ModelSDs(local=local_mean_sd(n, eps), shuffle=local_mean_sd(n, eps0),
                    federated=federated_share_sd(n, eps, k), central=central_mean_sd(n, eps),
                    shuffle_local_epsilon=eps0)


def simulate_model_shares(n: int, epsilon: float, delta: float, k: int, *,
                          true_share: float = 0.5, size: int = 10_000,
                          rng: RNGLike = None) -> ModelShares:
    """``size`` classes of n with ``round(true_share · n)`` true yeses, each estimated
    under the four models (vectorized, the cost independent of n and k).

    Local and shuffle: the exact number of "yes" reports under ε-RR and ε0-RR
    (``sample_yes_counts``), then the unbiased estimate. Federated: the k
    delegates' Laplace noises summed exactly, as the difference of two
    Gamma(k, 1/ε) variables (a Laplace variable is the difference of two
    exponential ones). Central: the true share plus Laplace(1/(nε)).
    For teaching and simulation only.
    """
    n, eps, d, k = _inputs(n, epsilon, delta, k)
    mu = _checks.in_range("true_share", true_share, 0.0, 1.0)
    size = _checks.integer("size", size, 1)
    gen = np.random.default_rng(rng)
    yes = math.floor(mu * n + 0.5)
    local_design = EpsilonRR(eps)
    shuffle_design = EpsilonRR(shuffle_local_epsilon(n, eps, d))
    local = share_estimates(local_design, local_design.sample_yes_counts(yes, n, size=size,
                                                                         rng=gen), n)
    shuffled = share_estimates(shuffle_design,
                               shuffle_design.sample_yes_counts(yes, n, size=size, rng=gen), n)
    scale = 1 / eps
    noise = gen.gamma(k, scale, size) - gen.gamma(k, scale, size)
    federated = (yes + noise) / n
    central = yes / n + gen.laplace(0.0, scale / n, size)
    return ModelShares(np.asarray(local, dtype=float), np.asarray(shuffled, dtype=float),
                       federated, central)


def sd_with_se(values: object) -> tuple[float, float]:
    """The sample SD of ``values`` (ddof = 1) and its standard error.

    ``SE(s) ≈ √((m4 − s⁴) / R) / (2s)`` from the sample's fourth central moment
    m4 (the delta method on ``Var(s²) ≈ (m4 − σ⁴)/R``), so heavy tails (Laplace
    noise) widen it as they should.

    >>> s, se = sd_with_se(np.random.default_rng(1).normal(0, 2, 40_000))
    >>> abs(s - 2) < 3 * se, round(se, 3)
    (True, 0.007)
    """
    x = np.asarray(values, dtype=float).ravel()
    if x.size < 2 or not np.all(np.isfinite(x)):
        raise ValueError("values must be at least two finite numbers")
    centred = x - x.mean()
    s = float(np.sqrt(np.sum(centred**2) / (x.size - 1)))
    if s == 0:
        return 0.0, 0.0
    m4 = float(np.mean(centred**4))
    return s, math.sqrt(max(m4 - s**4, 0.0) / x.size) / (2 * s)
