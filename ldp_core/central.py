"""The central model for comparison, composition, and values in [0, 1].

* Laplace mechanism: release ``f(x) + Lap(sensitivity / eps)`` (Dwork, McSherry,
  Nissim & Smith 2006; CS208 lecture notes on privacy and noise). For a count
  the sensitivity is 1; for a mean of n values in [0, 1] it is 1/n, so its SD
  is ``sqrt(2) / (eps n)`` against ``~1 / (eps sqrt(n))`` for local randomized
  response (CS208 "Local vs. centralized DP": Theta(1/(eps n)) vs
  Theta(1/(eps sqrt n))).
* Sequential composition: releasing several eps_i-DP answers costs sum(eps_i).
* Randomized rounding: a value x in [0, 1] becomes 1 w.p. x, then goes through
  RR (CS208 "how to use RR for fractional-valued functions").
"""

from __future__ import annotations

import math

import numpy as np

from . import _checks
from ._checks import RNGLike
from .binary import EpsilonRR
from .estimate import BinaryCounts

__all__ = [
    "central_mean_sd",
    "laplace_mechanism",
    "local_mean_sd",
    "local_n_for_central_accuracy",
    "randomized_round",
    "sequential_composition",
]


def laplace_mechanism(value: float | np.ndarray, sensitivity: float, epsilon: float, *,
                      size: int | tuple[int, ...] | None = None, rng: RNGLike = None
                      ) -> np.ndarray | float:
    """``value + Laplace(0, sensitivity / epsilon)``: eps-DP for a query of that sensitivity.

    The noise has scale ``b = sensitivity / epsilon`` and SD ``sqrt(2) b``
    (Dwork, McSherry, Nissim & Smith 2006; CS208 lecture notes, "Laplace
    mechanism"). A scalar ``value`` with ``size=None`` gives a float; an array
    ``value`` gets independent noise per entry; ``size`` draws that many
    releases (broadcast against ``value``).

    >>> x = laplace_mechanism(10.0, 1.0, 1.0, rng=0)
    >>> isinstance(x, float)
    True
    >>> laplace_mechanism([1.0, 2.0], 1.0, 1.0, rng=0).shape
    (2,)
    """
    s = _checks.positive("sensitivity", sensitivity)
    eps = _checks.positive("epsilon", epsilon)
    try:
        v = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"value must be a number or an array of numbers, got {value!r}") from None
    if not np.all(np.isfinite(v)):
        raise ValueError("value must be finite")
    gen = np.random.default_rng(rng)
    if size is None:
        noise = gen.laplace(0.0, s / eps, v.shape)
        return float(v + noise) if v.ndim == 0 else v + noise
    return v + gen.laplace(0.0, s / eps, size)


def central_mean_sd(n: int, epsilon: float) -> float:
    """SD of the Laplace mechanism for a mean of n values in [0, 1]: ``sqrt(2) / (eps n)``.

    The sensitivity of the mean is 1/n (CS208 lecture notes, "Privacy and noise").

    >>> round(central_mean_sd(100, 1.0), 6)
    0.014142
    """
    n = _checks.integer("n", n, 1)
    eps = _checks.positive("epsilon", epsilon)
    return math.sqrt(2) / (eps * n)


def local_mean_sd(n: int, epsilon: float) -> float:
    """SD of the eps-RR estimate of a mean of n bits: ``e^(eps/2) / ((e^eps - 1) sqrt(n))``.

    Worst case over classes; about ``1 / (eps sqrt(n))`` for small eps
    (CS208 notes: ``O(1 / (eps sqrt n))``).

    >>> round(local_mean_sd(1, math.log(3)), 6) == round(math.sqrt(3 / 4), 6)
    True
    """
    n = _checks.integer("n", n, 1)
    sd = BinaryCounts.single(EpsilonRR(epsilon), 0, n).sd_worst()
    assert sd is not None
    return sd


def local_n_for_central_accuracy(n_central: int, epsilon: float) -> float:
    """How many students local RR needs to match the central Laplace SD with ``n_central``.

    Solves ``local_mean_sd(m, eps) = central_mean_sd(n_central, eps)`` for m:
    ``m = n_central^2 eps^2 e^eps / (2 (e^eps - 1)^2)`` (about n_central^2 / 2 for small eps).

    >>> round(local_n_for_central_accuracy(100, 1.0))
    4603
    """
    n_c = _checks.integer("n_central", n_central, 1)
    unit = local_mean_sd(1, epsilon)
    return (unit / central_mean_sd(n_c, epsilon)) ** 2


def sequential_composition(epsilons: object) -> float:
    """Total privacy loss of releasing several answers: ``sum(eps_i)`` (basic composition).

    A student who answered three questions at ln 3 each has spent 3 ln 3
    (CS208 lecture notes on DP properties: privacy losses add up).

    >>> round(sequential_composition([math.log(3)] * 3), 4)
    3.2958
    """
    try:
        eps = np.asarray(epsilons, dtype=float).ravel()
    except (TypeError, ValueError):
        raise ValueError(f"epsilons must be numbers, got {epsilons!r}") from None
    if eps.size and (not np.all(np.isfinite(eps)) or np.any(eps < 0)):
        raise ValueError("epsilons: each epsilon must be finite and >= 0")
    return float(eps.sum())


def randomized_round(values: object, *, rng: RNGLike = None) -> np.ndarray:
    """Round each value x in [0, 1] to 1 w.p. x and to 0 otherwise (unbiased: E = x).

    Then randomized response applies to the rounded bits, and the mean of the
    values is estimated as for yes/no answers (CS208 notes, "how to use RR
    for fractional-valued functions").

    >>> randomized_round([0.0, 1.0], rng=3).tolist()
    [0, 1]
    """
    try:
        x = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"values must be numbers in [0, 1], got {values!r}") from None
    if x.size and (not np.all(np.isfinite(x)) or x.min() < 0 or x.max() > 1):
        raise ValueError("values must lie in [0, 1]")
    gen = np.random.default_rng(rng)
    return (gen.random(x.shape) < x).astype(np.uint8)
