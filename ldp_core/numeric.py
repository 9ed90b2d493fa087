"""Local mechanisms for a number in a known range [lo, hi], and the estimate of its mean.

Each student maps their value v to ``x = (2 v - lo - hi) / (hi - lo)`` in [-1, 1]
(:class:`NumericRange`), randomizes x on their device, and sends the report y.
Every mechanism here is unbiased, ``E[y | x] = x``, so the class mean is estimated
by the mean of the reports, mapped back to the original units.

* :class:`DuchiMechanism`: Duchi, Jordan & Wainwright (2013; JASA 2018), the
  "±1 form" of the CS208 notes: round x to ±1 at random (``P(+1) = (1 + x) / 2``),
  apply ``RR_eps`` to that bit, and report ``c_eps`` times it, with
  ``c_eps = (e^eps + 1) / (e^eps - 1)``. Variance ``c_eps^2 - x^2``.
* :class:`PiecewiseMechanism`: Wang, Xiao, Yang, Zhao, Hu, Zhao & Yi, "Collecting and
  analyzing multidimensional data with local differential privacy", ICDE 2019.
  Reports lie in [-C, C] with ``C = (e^(eps/2) + 1) / (e^(eps/2) - 1)``, denser by
  e^eps on a window of width C - 1 around a point that moves with x.
* :class:`HybridMechanism`: Wang et al. (ICDE 2019) again: for ε > ε* ≈ 0.61
  (:data:`HYBRID_EPSILON_STAR`) the Piecewise Mechanism with probability
  ``1 - e^(-eps/2)``, else Duchi et al.'s; at or below ε* Duchi et al.'s alone.
* :class:`LaplaceMechanism`: ``x + Laplace(2 / eps)`` on each device (sensitivity 2
  on [-1, 1]; Dwork, McSherry, Nissim & Smith 2006), the naive baseline.

The worst-case variances cross: Duchi's is lower for small ε, the Piecewise
Mechanism's above ``numeric_crossover()`` (about 1.29, as Wang et al. report), and
the Laplace mechanism's is never the lowest. The Hybrid Mechanism's is below both at
every ε > ε* and equal to Duchi's at or below it, so :func:`recommend_numeric` (the
lowest, ties to the simpler) recommends Duchi et al.'s up to ε* and the Hybrid
Mechanism above. Each class derives its exact ε (``epsilon``) from its channel's
parameters, not from the ε it was built with, so the tests can check it is tight.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from . import _checks
from ._checks import RNGLike
from .binary import EpsilonRR, ForcedResponse
from .categorical import _GRID, _grid_down
from .central import central_mean_sd
from .estimate import BinaryCounts, t_quantile

__all__ = [
    "DEVICE_CELLS",
    "NUMERIC_NAMES",
    "HYBRID_EPSILON_STAR",
    "REPORT_TAIL",
    "DuchiMechanism",
    "HybridMechanism",
    "LaplaceMechanism",
    "NumericDesign",
    "NumericEstimate",
    "NumericMechanism",
    "NumericRange",
    "PiecewiseMechanism",
    "central_numeric_sd",
    "numeric_crossover",
    "numeric_design_from_params",
    "numeric_mechanism",
    "recommend_numeric",
]

#: Smallest and largest ε a numeric mechanism accepts.
MIN_EPSILON, MAX_EPSILON = 1e-3, 20.0
#: No honest phone sends a report this improbable: a report further out than every true
#: value reaches with this probability is refused (:meth:`NumericMechanism.plausible`), and
#: the phone clamps the local Laplace mechanism's reports at that point
#: (:meth:`LaplaceMechanism.device_grid`), so one forged report cannot move the mean without
#: bound.
REPORT_TAIL = 1e-9
#: A phone reports a continuous mechanism's output as the midpoint of one of this many
#: equal cells of its bounded output range (:meth:`NumericMechanism.snap`). Floating-point
#: samplers reach some floats from one input and not from another, which can break
#: ε outright (Mironov, "On significance of the least significant bits for differential
#: privacy", CCS 2012); a fixed grid, the same for every input, removes that: each cell's
#: probability is the integral of the density over it, within e^ε of any other input's.
DEVICE_CELLS = 2**16


def _unit_array(name: str, x: object) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers in [-1, 1], got {x!r}") from None
    if arr.size and (not np.all(np.isfinite(arr)) or arr.min() < -1 or arr.max() > 1):
        raise ValueError(f"{name} must lie in [-1, 1]")
    return arr


@dataclass(frozen=True)
class NumericRange:
    """The range [lo, hi] of a numeric question and the map to and from [-1, 1].

    >>> r = NumericRange(0, 12)
    >>> r.to_unit(9), r.from_unit(0.5), r.half_width
    (0.5, 9.0, 6.0)
    """

    lo: float
    hi: float

    def __post_init__(self) -> None:
        lo, hi = _checks.finite("lo", self.lo), _checks.finite("hi", self.hi)
        if not lo < hi:
            raise ValueError(f"the range needs lo < hi, got lo = {lo:g}, hi = {hi:g}")
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)

    @property
    def half_width(self) -> float:
        return (self.hi - self.lo) / 2

    @property
    def mid(self) -> float:
        return (self.hi + self.lo) / 2

    def to_unit(self, v: Any) -> Any:
        """``(2 v - lo - hi) / (hi - lo)``; a value outside [lo, hi] raises ValueError."""
        arr = np.asarray(v, dtype=float)
        if arr.size and (not np.all(np.isfinite(arr)) or arr.min() < self.lo
                         or arr.max() > self.hi):
            raise ValueError(f"values must lie in [{self.lo:g}, {self.hi:g}]")
        x = np.clip((arr - self.mid) / self.half_width, -1.0, 1.0)
        return float(x) if x.ndim == 0 else x

    def from_unit(self, x: Any) -> Any:
        """``mid + half_width x``, for any real x (reports fall outside [lo, hi])."""
        out = self.mid + self.half_width * np.asarray(x, dtype=float)
        return float(out) if out.ndim == 0 else out


class NumericMechanism(ABC):
    """A local mechanism for x in [-1, 1] with unbiased reports (``E[y | x] = x``)."""

    kind: ClassVar[str] = ""
    label: ClassVar[str] = ""
    #: The ε the mechanism was built with (its one parameter), kept private: :attr:`epsilon`
    #: is the exact loss of the channel that setting gives.
    _epsilon: float

    def __init__(self, epsilon: float) -> None:
        eps = _checks.finite("epsilon", epsilon)
        if not MIN_EPSILON <= eps <= MAX_EPSILON:
            raise ValueError(f"epsilon must be in [{MIN_EPSILON:g}, {MAX_EPSILON:g}], "
                             f"got {epsilon!r}")
        object.__setattr__(self, "_epsilon", eps)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(epsilon={self._epsilon!r})"

    @property
    @abstractmethod
    def epsilon(self) -> float:
        """The exact ε of the channel: sup over y, x, x' of ln(p(y | x) / p(y | x')),
        derived from its probabilities or densities (equal to the setting it was built
        with up to rounding; the tests check it is tight)."""

    @property
    @abstractmethod
    def output_bounds(self) -> tuple[float, float]:
        """The smallest and largest report (±inf for the Laplace mechanism)."""

    @abstractmethod
    def variance(self, x: Any) -> Any:
        """Exact ``Var[y | x]``."""

    @abstractmethod
    def perturb(self, x: object, *, rng: RNGLike = None) -> np.ndarray:
        """One report per value of x (per respondent, vectorised)."""

    def worst_variance(self) -> float:
        """``max over x in [-1, 1] of Var[y | x]`` (at |x| = 1 for Duchi's and PM, flat
        for Laplace)."""
        return float(max(self.variance(-1.0), self.variance(0.0), self.variance(1.0)))

    @abstractmethod
    def survival(self, t: Any, x: float) -> Any:
        """``P(y >= t | x)``, exact, for the report before a phone snaps it to its cell
        (the Laplace mechanism's clamped tails included). It never decreases in x: the
        class whose every student sits at the top of the range sends the largest reports
        (checked for every mechanism in the tests); the plausibility check relies on it."""

    def plausible(self, y: float) -> bool:
        """Whether an honest device could have sent the report y (within float rounding)."""
        lo, hi = self.output_bounds
        slack = 1e-9 * max(1.0, abs(lo), abs(hi))
        return math.isfinite(y) and lo - slack <= y <= hi + slack

    def params(self) -> dict[str, Any]:
        return {"design": self.kind, "epsilon": self._epsilon}

    def device_grid(self) -> tuple[float, float] | None:
        """The range a phone's report is snapped into, in :data:`DEVICE_CELLS` equal cells
        (None for a mechanism with two reports)."""
        return None

    def snap(self, y: Any) -> Any:
        """The midpoint of the :meth:`device_grid` cell holding y (reports beyond the
        range go to its end cells): what a phone sends for the raw report y.

        The cells move the mean of a report by at most the density's change across the
        few cells it jumps in, far below 1e-6 of the range's half-width.

        >>> pm = PiecewiseMechanism(1.0)
        >>> bool(abs(pm.snap(0.0)) < 2 * pm.big_c / DEVICE_CELLS), pm.snap(99.0) < pm.big_c
        (True, True)
        """
        grid = self.device_grid()
        if grid is None:
            return y
        low, high = grid
        width = (high - low) / DEVICE_CELLS
        cell = np.clip(np.floor((np.asarray(y, dtype=float) - low) / width), 0,
                       DEVICE_CELLS - 1)
        out = low + (cell + 0.5) * width
        return float(out) if out.ndim == 0 else out

    def device_epsilon(self) -> float:
        """The ε of what a phone samples (the rounded branch probabilities and the
        cells); never above :attr:`epsilon`. The uniform position inside a branch is
        drawn with 53 random bits, which moves each cell's probability by a relative
        2**-30 at most; that is left out."""
        return self.epsilon


@dataclass(frozen=True, init=False, repr=False)
class DuchiMechanism(NumericMechanism):
    """Duchi, Jordan & Wainwright's one-bit mechanism: report ``±c_eps``.

    ``P(y = +c | x) = 1/2 + x / (2 c)``. The rounding to ±1 is pre-processing; the
    privacy comes from the RR_eps step alone, so the precision of the rounding's
    uniform does not change ε.

    >>> d = DuchiMechanism(math.log(3))
    >>> round(d.c_epsilon, 12), round(d.epsilon, 12), round(float(d.variance(0.0)), 12)
    (2.0, 1.098612288668, 4.0)
    """

    _epsilon: float

    kind: ClassVar[str] = "duchi"
    label: ClassVar[str] = "Duchi et al. (one bit, ±c_ε)"


    @property
    def c_epsilon(self) -> float:
        """``(e^eps + 1) / (e^eps - 1) = 1 / tanh(eps / 2)``."""
        return 1 / math.tanh(self._epsilon / 2)

    def p_plus(self, x: Any) -> Any:
        """``P(y = +c_eps | x) = 1/2 + x / (2 c_eps)``."""
        return 0.5 + np.asarray(x, dtype=float) / (2 * self.c_epsilon)

    @property
    def epsilon(self) -> float:
        # Largest ratio: y = +c at x = 1 against x = -1: (c + 1) / (c - 1).
        c = self.c_epsilon
        return math.log((c + 1) / (c - 1))

    @property
    def output_bounds(self) -> tuple[float, float]:
        return (-self.c_epsilon, self.c_epsilon)

    def plausible(self, y: float) -> bool:
        return y in (-self.c_epsilon, self.c_epsilon)

    def survival(self, t: Any, x: float) -> Any:
        c, tt = self.c_epsilon, np.asarray(t, dtype=float)
        out = np.where(tt <= -c, 1.0, np.where(tt <= c, self.p_plus(x), 0.0))
        return out[()]

    def variance(self, x: Any) -> Any:
        return self.c_epsilon ** 2 - np.asarray(x, dtype=float) ** 2

    def device_weights(self) -> tuple[int, int, int, int]:
        """The integer weights ``(keep, flip, 0, 0)`` of the RR_eps step, as a phone samples
        them (:meth:`EpsilonRR.sampling_weights`, rounded toward privacy)."""
        return EpsilonRR(self._epsilon).sampling_weights()

    def device_epsilon(self) -> float:
        return EpsilonRR(self._epsilon).device_epsilon()

    def report_of_bit(self, bit: Any) -> Any:
        """The report of the randomized bit: ``c_eps`` for 1, ``-c_eps`` for 0."""
        return self.c_epsilon * (2 * np.asarray(bit, dtype=float) - 1)

    def perturb(self, x: object, *, rng: RNGLike = None) -> np.ndarray:
        arr = _unit_array("x", x)
        gen = np.random.default_rng(rng)
        return self.report_of_bit(gen.random(arr.shape) < self.p_plus(arr))

    def sample_plus_counts(self, x: object, counts: object, *, size: int | None = None,
                           rng: RNGLike = None) -> np.ndarray | int:
        """Exact aggregate sampling of the number of ``+c_eps`` reports of a class with
        ``counts[j]`` students at value ``x[j]``: ``sum_j Binomial(counts[j], p_plus(x[j]))``.
        ``size`` classes cost O(size * len(x)), not O(size * n). The class's estimate is
        ``c_eps (2 K - n) / n`` for K plus reports.

        >>> DuchiMechanism(1.0).sample_plus_counts([0.5], [0])
        0
        >>> DuchiMechanism(1.0).sample_plus_counts([-1, 1], [10, 30], size=4, rng=1).shape
        (4,)
        """
        xs = _unit_array("x", x).ravel()
        ns = _checks.count_array("counts", counts).ravel()
        if xs.shape != ns.shape:
            raise ValueError(f"x and counts need the same length, got {xs.size} and {ns.size}")
        gen = np.random.default_rng(rng)
        shape = (xs.size,) if size is None else (int(size), xs.size)
        out = gen.binomial(ns, self.p_plus(xs), shape).sum(axis=-1)
        return int(out) if size is None else out


@dataclass(frozen=True, init=False, repr=False)
class PiecewiseMechanism(NumericMechanism):
    """Wang et al.'s Piecewise Mechanism (ICDE 2019).

    With ``z = e^(eps/2)`` and ``C = (z + 1) / (z - 1)``: ``l(x) = (C + 1) x / 2 - (C - 1) / 2``,
    ``r(x) = l(x) + C - 1``. With probability ``z / (z + 1)`` the report is uniform on
    [l(x), r(x)], else uniform on the rest of [-C, C]. The density is
    ``p = (e^eps - z) / (2 z + 2)`` inside the window and ``p / e^eps`` outside, and
    ``Var[y | x] = x^2 / (z - 1) + (z + 3) / (3 (z - 1)^2)``.

    >>> pm = PiecewiseMechanism(2.0)
    >>> round(pm.epsilon, 12), bool(abs(pm.window(1.0)[1] - pm.big_c) < 1e-12)
    (2.0, True)
    """

    _epsilon: float

    kind: ClassVar[str] = "piecewise"
    label: ClassVar[str] = "Piecewise Mechanism (Wang et al.)"


    @property
    def _z(self) -> float:
        return math.exp(self._epsilon / 2)

    @property
    def big_c(self) -> float:
        """``C = (e^(eps/2) + 1) / (e^(eps/2) - 1) = 1 / tanh(eps / 4)``."""
        return 1 / math.tanh(self._epsilon / 4)

    @property
    def p_window(self) -> float:
        """The probability of a report inside the window: ``z / (z + 1)``."""
        return 1 / (1 + math.exp(-self._epsilon / 2))

    def window(self, x: Any) -> tuple[Any, Any]:
        """``(l(x), r(x))``."""
        c = self.big_c
        left = (c + 1) / 2 * np.asarray(x, dtype=float) - (c - 1) / 2
        return left, left + c - 1

    def densities(self, p_window: float | None = None) -> tuple[float, float]:
        """The density inside the window and outside it (for a window probability other
        than :attr:`p_window` if given: the one a phone realises)."""
        p = self.p_window if p_window is None else p_window
        c = self.big_c
        inside = p / (c - 1)
        outside = (1 - p) / (c + 1)  # the rest of [-C, C] has length C + 1
        return inside, outside

    def pdf(self, y: Any, x: float) -> Any:
        """The density of the report y given x (0 outside [-C, C])."""
        yy = np.asarray(y, dtype=float)
        left, right = self.window(x)
        inside, outside = self.densities()
        c = self.big_c
        return np.where((yy >= left) & (yy <= right), inside,
                        np.where(np.abs(yy) <= c, outside, 0.0))

    def survival(self, t: Any, x: float) -> Any:
        left, right = self.window(x)
        inside, outside = self.densities()
        c = self.big_c
        tt = np.clip(np.asarray(t, dtype=float), -c, c)
        # The mass above t: outside on (r, C], inside on [l, r], outside on [-C, l).
        out = (outside * (c - np.maximum(tt, right))
               + inside * np.clip(right - tt, 0.0, right - left)
               + outside * np.clip(left - tt, 0.0, None))
        return np.clip(out, 0.0, 1.0)[()]

    def _loss(self, p_window: float | None = None) -> float:
        inside, outside = self.densities(p_window)
        return math.log(inside / outside)

    @property
    def epsilon(self) -> float:
        return self._loss()

    def device_p_window(self) -> float:
        """:attr:`p_window` on the 2**-53 grid a phone's uniform draw realises, rounded
        toward privacy (down), so :meth:`device_epsilon` never exceeds ε."""
        p = _grid_down(self.p_window)
        while self._loss(p) > self._epsilon:
            p -= 1 / _GRID  # a float's last bit: one grid step
        return p

    def device_epsilon(self) -> float:
        # A cell's probability mixes the two densities; the ratio is at most theirs.
        return self._loss(self.device_p_window())

    @property
    def output_bounds(self) -> tuple[float, float]:
        return (-self.big_c, self.big_c)

    def device_grid(self) -> tuple[float, float]:
        return self.output_bounds

    def variance(self, x: Any) -> Any:
        z = self._z
        return np.asarray(x, dtype=float) ** 2 / (z - 1) + (z + 3) / (3 * (z - 1) ** 2)

    def perturb(self, x: object, *, rng: RNGLike = None) -> np.ndarray:
        arr = _unit_array("x", x)
        gen = np.random.default_rng(rng)
        c = self.big_c
        left, right = self.window(arr)
        in_window = gen.random(arr.shape) < self.p_window
        u = gen.random(arr.shape)
        inner = left + (c - 1) * u
        # Outside: a point of [-C, l) ∪ (r, C], total length C + 1, laid end to end.
        s = (c + 1) * u
        outer = np.where(s < left + c, -c + s, right + (s - (left + c)))
        return np.where(in_window, inner, outer)


def _hybrid_epsilon_star() -> float:
    """The ε where the Piecewise Mechanism's variance at x = 0 equals Duchi et al.'s:
    ``(z + 3) / (3 (z - 1)^2) = c_eps^2`` with ``z = e^(eps/2)``. Below it Duchi's is the
    smaller at every x, and no mixture beats it (Wang et al. 2019, Section III-C)."""
    lo, hi = 0.1, 2.0  # the Piecewise Mechanism's is larger at 0.1, smaller at 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if PiecewiseMechanism(mid).variance(0.0) > DuchiMechanism(mid).variance(0.0):
            lo = mid
        else:
            hi = mid
        if hi - lo <= 4 * math.ulp(mid):
            break
    return (lo + hi) / 2


#: ε* of Wang et al. (2019), 0.609352...: the Hybrid Mechanism mixes in the Piecewise
#: Mechanism only above it.
HYBRID_EPSILON_STAR: float = _hybrid_epsilon_star()


@dataclass(frozen=True, init=False, repr=False)
class HybridMechanism(NumericMechanism):
    """Wang et al.'s Hybrid Mechanism (ICDE 2019): a coin, independent of x, picks the
    Piecewise Mechanism with probability ``alpha = 1 - e^(-eps/2)`` (for ε above
    :data:`HYBRID_EPSILON_STAR`, else 0), otherwise Duchi et al.'s mechanism; both run
    at the full ε.

    Both parts are unbiased, so the mixture is, with
    ``Var[y | x] = alpha Var_PM(x) + (1 - alpha) Var_Duchi(x)``. With this alpha the x^2
    terms cancel (``alpha / (z - 1) = 1 - alpha = 1 / z``): the variance is the same for
    every x, ``(z + 3) / (3 z (z - 1)) + (e^eps + 1)^2 / (z (e^eps - 1)^2)``, which is the
    smallest worst case any mixture of the two reaches.

    The report is either one of Duchi's two values ``±c_eps`` (an atom of probability
    ``(1 - alpha) P_Duchi(±c | x)``) or a point of [-C, C] with density
    ``alpha pdf_PM(y | x)``, which puts no mass on the atoms. A set of reports therefore
    has a probability ratio between two inputs of at most the atoms' ratio or the
    densities' ratio, each e^ε and each reached: the mixture is exactly ε-LDP.

    >>> hm = HybridMechanism(1.0)
    >>> round(hm.worst_variance(), 3), round(hm.epsilon, 12), round(hm.p_piecewise, 4)
    (4.289, 1.0, 0.3935)
    >>> HybridMechanism(0.5).p_piecewise
    0.0
    """

    _epsilon: float

    kind: ClassVar[str] = "hybrid"
    label: ClassVar[str] = "Hybrid Mechanism (Wang et al.)"


    @property
    def duchi(self) -> DuchiMechanism:
        return DuchiMechanism(self._epsilon)

    @property
    def piecewise(self) -> PiecewiseMechanism:
        return PiecewiseMechanism(self._epsilon)

    @property
    def p_piecewise(self) -> float:
        """``alpha``: the probability of the Piecewise part, ``1 - e^(-eps/2)`` above ε*
        and 0 at or below it."""
        return -math.expm1(-self._epsilon / 2) if self._epsilon > HYBRID_EPSILON_STAR else 0.0

    def atoms(self, x: Any) -> tuple[Any, Any]:
        """``(P(y = -c_eps | x), P(y = +c_eps | x))``: the Duchi part's two reports."""
        plus = self.duchi.p_plus(x)
        rest = 1 - self.p_piecewise
        return rest * (1 - plus), rest * plus

    def pdf(self, y: Any, x: float) -> Any:
        """The density of the Piecewise part, ``alpha pdf_PM(y | x)`` (it integrates to
        alpha; the atoms hold the rest)."""
        return self.p_piecewise * self.piecewise.pdf(y, x)

    @property
    def epsilon(self) -> float:
        # The atoms' largest ratio is at x = 1 against x = -1; the density's is inside
        # the window against outside it. The coin's probability cancels in each ratio.
        low_m, low_p = self.atoms(-1.0)
        high_m, high_p = self.atoms(1.0)
        loss = math.log(max(high_p / low_p, low_m / high_m))
        if self.p_piecewise > 0:
            inside, outside = self.piecewise.densities()
            loss = max(loss, math.log(inside / outside))
        return loss

    def device_p_piecewise(self) -> float:
        """``alpha`` on the 2**-53 grid a phone's uniform draw realises (rounded down). The
        coin does not enter ε (a mixture, with weights independent of x, of two ε-LDP
        channels is ε-LDP whatever the weights) and both parts are unbiased, so this
        rounding moves only the variance, by about 1e-16."""
        return _grid_down(self.p_piecewise)

    def device_epsilon(self) -> float:
        # Duchi's bit from integer weights, the Piecewise part's window probability on
        # the grid, its reports in cells; a cell that held an atom would mix the two parts,
        # whose ratio is at most the larger of theirs.
        loss = self.duchi.device_epsilon()
        if self.p_piecewise > 0:
            loss = max(loss, self.piecewise.device_epsilon())
        return loss

    @property
    def output_bounds(self) -> tuple[float, float]:
        if self.p_piecewise > 0:
            return self.piecewise.output_bounds
        return self.duchi.output_bounds

    def plausible(self, y: float) -> bool:
        if self.p_piecewise > 0:
            return super().plausible(y)
        return self.duchi.plausible(y)

    def device_grid(self) -> tuple[float, float] | None:
        """The Piecewise part's cells (None at or below ε*, where every report is ±c_eps).
        A phone snaps only the Piecewise part's reports; Duchi's two values are sent as
        they are."""
        return self.piecewise.device_grid() if self.p_piecewise > 0 else None

    def variance(self, x: Any) -> Any:
        alpha = self.p_piecewise
        return alpha * self.piecewise.variance(x) + (1 - alpha) * self.duchi.variance(x)

    def survival(self, t: Any, x: float) -> Any:
        alpha = self.p_piecewise
        return alpha * self.piecewise.survival(t, x) + (1 - alpha) * self.duchi.survival(t, x)

    def perturb(self, x: object, *, rng: RNGLike = None) -> np.ndarray:
        arr = _unit_array("x", x)
        gen = np.random.default_rng(rng)
        use_pm = gen.random(arr.shape) < self.p_piecewise
        return np.where(use_pm, self.piecewise.perturb(arr, rng=gen),
                        self.duchi.perturb(arr, rng=gen))


@dataclass(frozen=True, init=False, repr=False)
class LaplaceMechanism(NumericMechanism):
    """``x + Laplace(2 / eps)`` on each device: the naive baseline (sensitivity 2).

    >>> lm = LaplaceMechanism(1.0)
    >>> round(lm.epsilon, 12), float(lm.variance(0.3))
    (1.0, 8.0)
    """

    _epsilon: float

    kind: ClassVar[str] = "laplace"
    label: ClassVar[str] = "Laplace mechanism (local)"


    @property
    def scale(self) -> float:
        return 2 / self._epsilon

    @property
    def epsilon(self) -> float:
        # sup_y |y - x| - |y - x'| = |x - x'| <= 2, divided by the scale.
        return 2 / self.scale

    @property
    def output_bounds(self) -> tuple[float, float]:
        return (-math.inf, math.inf)

    def plausible(self, y: float) -> bool:
        return math.isfinite(y) and abs(y) <= self.device_grid()[1]

    def device_grid(self) -> tuple[float, float]:
        """``±B`` with ``B = 1 + scale ln(1 / (2 REPORT_TAIL))`` (about 1 + 20.03 scales): the
        point a student at the top of the range passes with probability :data:`REPORT_TAIL`
        (1e-9), and every other student less often. A phone clamps its report there. That
        is post-processing, so ε is kept (a tail's probability ratio is at most e^ε too), and
        it bounds every report; the server refuses anything beyond (:meth:`plausible`).
        The clamp moves a report's mean toward the middle by exactly :meth:`clamp_bias`.

        >>> lm = LaplaceMechanism(1.0)
        >>> round(lm.device_grid()[1], 4), round(float(lm.survival(lm.device_grid()[1], 1.0)), 15)
        (41.0602, 1e-09)
        """
        bound = 1 + self.scale * math.log(0.5 / REPORT_TAIL)
        return (-bound, bound)

    def clamp_bias(self, x: Any) -> Any:
        """``E[clamp(x + L, -B, B)] - x = -scale e^(-B/scale) sinh(x/scale)``, exactly: with
        ``B`` from :meth:`device_grid` that is
        ``-scale REPORT_TAIL (e^((x-1)/scale) - e^(-(x+1)/scale))``, toward the middle, at
        most ``2 REPORT_TAIL (1 - e^-eps) / eps < 2e-9`` of the range's half-width (at x = ±1).

        >>> lm = LaplaceMechanism(1.0)
        >>> bool(abs(lm.clamp_bias(1.0) + 2e-9 * (1 - math.exp(-1))) < 1e-22)
        True
        """
        s = self.scale
        xx = np.asarray(x, dtype=float)
        return (-s * REPORT_TAIL * (np.exp((xx - 1) / s) - np.exp(-(xx + 1) / s)))[()]

    def survival(self, t: Any, x: float) -> Any:
        bound, s = self.device_grid()[1], self.scale
        tt = np.asarray(t, dtype=float)
        with np.errstate(over="ignore"):
            upper = 0.5 * np.exp(-np.maximum(tt - x, 0.0) / s)  # t >= x: the upper tail
            lower = 1 - 0.5 * np.exp(-np.maximum(x - tt, 0.0) / s)
        out = np.where(tt >= x, upper, lower)
        return np.where(tt > bound, 0.0, np.where(tt <= -bound, 1.0, out))[()]

    def variance(self, x: Any) -> Any:
        return np.full(np.shape(x), 2 * self.scale ** 2)[()]

    def perturb(self, x: object, *, rng: RNGLike = None) -> np.ndarray:
        """``x + Laplace(2 / eps)``, clamped to :meth:`device_grid` as a phone clamps it."""
        arr = _unit_array("x", x)
        gen = np.random.default_rng(rng)
        bound = self.device_grid()[1]
        return np.clip(arr + gen.laplace(0.0, self.scale, arr.shape), -bound, bound)


_MECHANISMS: dict[str, type[NumericMechanism]] = {
    m.kind: m for m in (DuchiMechanism, PiecewiseMechanism, HybridMechanism, LaplaceMechanism)}
#: The mechanisms' keys, in the order a form lists them.
NUMERIC_NAMES: tuple[str, ...] = tuple(_MECHANISMS)


def numeric_mechanism(name: str, epsilon: float) -> NumericMechanism:
    """The mechanism called ``name`` (one of :data:`NUMERIC_NAMES`) at ``epsilon``.

    >>> numeric_mechanism("piecewise", 1.0)
    PiecewiseMechanism(epsilon=1.0)
    """
    cls = _MECHANISMS.get(name)
    if cls is None:
        raise ValueError(f"mechanism must be one of {list(NUMERIC_NAMES)}, got {name!r}")
    return cls(epsilon)


def _worst(name: str, epsilon: float) -> float:
    return numeric_mechanism(name, epsilon).worst_variance()


def numeric_crossover() -> float:
    """The ε where Duchi's and the Piecewise Mechanism's worst-case variances are equal.

    Below it Duchi et al.'s is smaller, above it the Piecewise Mechanism's (Wang et al.
    2019 report about 1.29).

    >>> round(numeric_crossover(), 2)
    1.29
    """
    lo, hi = 0.1, 5.0  # Duchi is better at 0.1, PM at 5 (checked in the tests)
    for _ in range(100):
        mid = (lo + hi) / 2
        if _worst("duchi", mid) < _worst("piecewise", mid):
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def recommend_numeric(epsilon: float) -> str:
    """The mechanism with the lowest worst-case variance at ``epsilon``, ties to the first
    of :data:`NUMERIC_NAMES` (the simpler one).

    That is Duchi et al.'s up to :data:`HYBRID_EPSILON_STAR` (≈ 0.61; there the Hybrid
    Mechanism is Duchi's itself) and the Hybrid Mechanism at every ε above it, where its
    worst case is strictly below both of its parts' (checked over the whole range of ε in
    the tests).

    >>> recommend_numeric(0.5), recommend_numeric(math.log(3)), recommend_numeric(2.0)
    ('duchi', 'hybrid', 'hybrid')
    """
    eps = _checks.positive("epsilon", epsilon)
    return min(NUMERIC_NAMES, key=lambda name: _worst(name, eps))


@dataclass(frozen=True)
class NumericDesign:
    """A numeric question's design: a mechanism and the range of the answers.

    ``params()`` is ``{"design": mechanism, "epsilon": ε, "lo": lo, "hi": hi}``.

    >>> d = numeric_design_from_params({"design": "duchi", "epsilon": 1.0, "lo": 0, "hi": 12})
    >>> d.kind, d.epsilon == d.mechanism.epsilon, d.value_of(d.mechanism.c_epsilon) > 12
    ('duchi', True, True)
    """

    mechanism: NumericMechanism
    range: NumericRange

    @property
    def kind(self) -> str:
        return self.mechanism.kind

    @property
    def label(self) -> str:
        return self.mechanism.label

    @property
    def epsilon(self) -> float:
        return self.mechanism.epsilon

    def params(self) -> dict[str, Any]:
        return {**self.mechanism.params(), "lo": self.range.lo, "hi": self.range.hi}

    def value_of(self, report: Any) -> Any:
        """A report (unit scale) in the question's units."""
        return self.range.from_unit(report)

    def worst_sd(self, n: int = 1) -> float:
        """The SD of the mean of n reports (one by default) in the question's units, in
        the worst case over the students' values."""
        return math.sqrt(self.mechanism.worst_variance() / n) * self.range.half_width

    def perturb_values(self, values: object, *, rng: RNGLike = None) -> np.ndarray:
        """Reports (unit scale) for values in [lo, hi]: what a class of phones would send."""
        return self.mechanism.perturb(self.range.to_unit(values), rng=rng)


def numeric_design_from_params(params: dict[str, Any]) -> NumericDesign:
    """Build a :class:`NumericDesign` from its ``params()``; ValueError names what is wrong."""
    if not isinstance(params, dict):
        raise ValueError(f"design parameters must be a dict, got {type(params).__name__}")
    extra = set(params) - {"design", "epsilon", "lo", "hi"}
    if extra:
        raise ValueError(f"unknown numeric design parameters: {sorted(extra)}")
    missing = [k for k in ("design", "epsilon", "lo", "hi") if k not in params]
    if missing:
        raise ValueError(f"numeric design parameters need {missing}")
    return NumericDesign(numeric_mechanism(params["design"], params["epsilon"]),
                         NumericRange(params["lo"], params["hi"]))


def central_numeric_sd(n: int, epsilon: float, value_range: NumericRange) -> float:
    """SD of the central Laplace mechanism on the mean of n values in [lo, hi].

    The mean's sensitivity is ``(hi - lo) / n``, so the SD is ``sqrt(2) (hi - lo) / (n eps)``
    (CS208 lecture notes, "Privacy and noise").

    >>> round(central_numeric_sd(100, 1.0, NumericRange(0, 10)), 6)
    0.141421
    """
    return central_mean_sd(n, epsilon) * (value_range.hi - value_range.lo)


def _bits(groups: list[tuple[NumericDesign, np.ndarray]]) -> BinaryCounts | None:
    """The groups as yes/no counts of their +c reports, when every mechanism sends one of
    two values and one range holds every group (else None)."""
    if any(d.mechanism.device_grid() is not None or d.range != groups[0][0].range
           for d, _ in groups):
        return None
    parts = []
    for design, reports in groups:
        mech = design.mechanism
        top = float(mech.output_bounds[1])
        a, b = float(mech.survival(top, 1.0)), float(mech.survival(top, -1.0))
        y = np.asarray(reports, dtype=float).ravel()
        parts.append((ForcedResponse(a - b, b), int(y.size), int((y > 0).sum())))
    return BinaryCounts(tuple(parts))


@dataclass(frozen=True)
class NumericEstimate:
    """The estimated mean of a class from its reports, in the question's units.

    ``sd_worst`` is the SD of the mean for a fixed class, in the worst case over the
    students' values, from the mechanisms' exact variances: the SD that
    :meth:`interval` uses. ``sd`` is estimated from the spread of the reports
    (``s / sqrt(n)``); it also counts how much the students' values differ, so it is
    shown only as a comparison. Every field is None where it does not exist (no
    reports; ``sd`` with one report).

    ``bits``: when every report is one of two values ``±c`` (Duchi et al.'s mechanism, and
    the Hybrid Mechanism at or below ε*) and one range holds them all, each report is
    randomized response on a bit whose mean is ``(1 + x) / 2``: its groups as yes/no counts
    (the channel ``P(+c | x = 1)``, ``P(+c | x = -1)``), for the exact interval.
    """

    n: int
    mean: float | None
    sd: float | None
    sd_worst: float | None
    lo: float
    hi: float
    bits: BinaryCounts | None = None

    @classmethod
    def from_groups(cls, groups: list[tuple[NumericDesign, np.ndarray]]) -> NumericEstimate:
        """From ``(design, reports on the unit scale)`` groups of one round (a round's
        design can change while it is open; each report is mapped with its own)."""
        if not groups:
            raise ValueError("from_groups needs at least one design (for the range)")
        values = [np.asarray(d.value_of(np.asarray(r, dtype=float)), dtype=float).ravel()
                  for d, r in groups]
        allv = np.concatenate(values) if values else np.zeros(0)
        n = int(allv.size)
        lo, hi = groups[-1][0].range.lo, groups[-1][0].range.hi
        if n == 0:
            return cls(0, None, None, None, lo, hi)
        worst = math.sqrt(sum(len(v) * d.worst_sd() ** 2
                              for (d, _), v in zip(groups, values, strict=True))) / n
        sd = float(np.std(allv, ddof=1) / math.sqrt(n)) if n >= 2 else None
        return cls(n, float(allv.mean()), sd, worst, lo, hi, _bits(groups))

    @property
    def exact(self) -> bool:
        """Whether :meth:`interval` is the exact binomial one (two-valued reports)."""
        return self.bits is not None

    def interval(self, level: float = 0.95) -> tuple[float, float] | None:
        """The interval for the class's mean. None without reports.

        Two-valued reports (:attr:`bits`): the exact interval of the bit's mean
        (:meth:`BinaryCounts.exact_interval`, Clopper-Pearson) mapped to the range: it
        covers the class's mean at least ``level`` of the time at every n. Otherwise
        ``mean ± t sd_worst``, with Student's t quantile for n - 1 degrees of freedom (at
        least 1): the worst-case SD bounds the SD of the mean for every class (the
        reports' spread, ``sd``, also counts how much the students' values differ, and is
        noisy at small n), and the t quantile (2.26 at n = 10, 1.98 at n = 100 for 95%)
        makes up for the skew and the lumps of a sum of few reports. Measured from
        n = 10 on (docs/numeric-checks.md): at least 94.9% for 95%, where the normal
        quantile falls to 93.7% and ``mean ± 1.96 sd`` to 48%.
        """
        if self.mean is None or self.sd_worst is None:
            return None
        if self.bits is not None:
            bit = self.bits.exact_interval(level)
            if bit is not None:
                mid, half = (self.hi + self.lo) / 2, (self.hi - self.lo) / 2
                return (mid + half * (2 * bit[0] - 1), mid + half * (2 * bit[1] - 1))
        half = t_quantile(level, max(self.n - 1, 1)) * self.sd_worst
        return (self.mean - half, self.mean + half)

    @property
    def clipped_mean(self) -> float | None:
        """The mean clipped to [lo, hi], for display (the raw mean is unbiased)."""
        return None if self.mean is None else min(self.hi, max(self.lo, self.mean))
