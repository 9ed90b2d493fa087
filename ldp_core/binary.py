"""Binary randomized response designs.

Every design answers a yes/no question (1 = yes, 0 = no) and is described by
what the respondent does after a private random draw:

* ``truth``: report the true answer;
* ``lie``: report the opposite;
* ``yes``: report 1 whatever the truth;
* ``no``: report 0 whatever the truth.

The four branch probabilities are derived from each design's defining
parameters, which are the only thing a design stores. From the branches follow
the 2x2 channel ``a = P(report 1 | truly 1) = truth + yes`` and
``b = P(report 1 | truly 0) = lie + yes``, the privacy loss and the estimators.

Sources: Warner (1965) "Randomized response: a survey technique for eliminating
evasive answer bias"; the forced-response (two coins) variant in Dwork & Roth
(2014); the class exercise and ``RR_eps`` in the CS208 lecture notes
"The Local Model: Foundations" (Harvard, 2025).
"""

from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from . import _checks
from ._checks import RNGLike

__all__ = [
    "BinaryDesign",
    "DieRR",
    "EpsilonRR",
    "ForcedResponse",
    "GammaRR",
    "MemoRR",
    "TwoCoinRR",
    "WarnerRR",
    "binary_design_from_params",
    "epsilon_to_gamma",
    "gamma_to_epsilon",
    "report_probability",
]

#: Largest denominator of the integer weights a device samples from.
WEIGHT_DENOMINATOR_LIMIT = 2**32


def gamma_to_epsilon(gamma: float) -> float:
    """Privacy loss of "keep w.p. 1/2 + gamma": ``eps = ln((1 + 2g) / (1 - 2g))``.

    The ratio of the two ways to report an answer is ``(1/2 + g) / (1/2 - g)``
    (the gamma form of randomized response in the course notebook; gamma = 1/4
    is the two-coin design, eps = ln 3).

    >>> round(gamma_to_epsilon(0.25), 12) == round(math.log(3), 12)
    True
    >>> gamma_to_epsilon(0.0)
    0.0
    """
    g = _checks.in_range("gamma", gamma, 0.0, 0.5, hi_open=True)
    return math.log1p(2 * g) - math.log1p(-2 * g)


def report_probability(a: Any, b: Any, mu: Any) -> Any:
    """``lambda = b + (a - b) mu``: the chance that a report is 1 when the true share is mu,
    for a design with ``a = P(report 1 | 1)`` and ``b = P(report 1 | 0)`` (Warner 1965).
    Floats or numpy arrays alike; the one place this formula is written.

    >>> report_probability(0.75, 0.25, 0.5)
    0.5
    """
    return b + (a - b) * mu


def epsilon_to_gamma(epsilon: float) -> float:
    """Inverse of :func:`gamma_to_epsilon`: ``gamma = tanh(eps / 2) / 2``.

    ``epsilon`` may be 0 (gamma 0, perfect privacy) but must be finite.

    >>> round(epsilon_to_gamma(math.log(3)), 12)
    0.25
    >>> round(gamma_to_epsilon(epsilon_to_gamma(1.5)), 12)
    1.5
    """
    eps = _checks.finite("epsilon", epsilon)
    if eps < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
    g = math.tanh(eps / 2) / 2
    if g >= 0.5:  # tanh rounds to 1 for eps > ~38
        raise ValueError(f"epsilon must be < 38 (gamma would round to 1/2), got {epsilon!r}")
    return g


def _fraction(x: float | Fraction) -> Fraction:
    if isinstance(x, Fraction):
        return x
    return Fraction(repr(float(x))).limit_denominator(WEIGHT_DENOMINATOR_LIMIT)


@dataclass(frozen=True)
class BinaryDesign(ABC):
    """The abstract base of every randomizer for one yes/no answer.

    Subclasses store their defining parameters as dataclass fields and
    implement :meth:`branches`. Everything else is derived here.
    """

    kind: ClassVar[str] = ""
    label: ClassVar[str] = ""

    # -- what a subclass provides -------------------------------------------------
    @abstractmethod
    def branches(self) -> Mapping[str, Fraction | float]:
        """Probabilities of the four branches ``truth, lie, yes, no`` (sum 1)."""

    # -- the channel ---------------------------------------------------------------
    def gap(self) -> Fraction | float:
        """``a - b = P(truth) - P(lie)``, computed without cancellation where a subclass can.

        The exact privacy loss is derived from it (``ln(a / b) = log1p(gap / b)``), so a
        design whose a and b are both near ½ (tiny ε) still gets its ε to full precision.
        """
        br = self.branches()
        return br["truth"] - br["lie"]

    @property
    def a(self) -> float:
        """``P(report 1 | truly 1) = P(truth) + P(yes)``."""
        return _channel_ab(self)[0]

    @property
    def b(self) -> float:
        """``P(report 1 | truly 0) = P(lie) + P(yes)``."""
        return _channel_ab(self)[1]

    @property
    def channel(self) -> np.ndarray:
        """Row-stochastic matrix ``P[true, reported]`` with rows/columns 0 (no), 1 (yes).

        >>> DieRR(4, 3).channel.tolist()
        [[0.75, 0.25], [0.25, 0.75]]
        """
        a, b, not_a, not_b = _channel_ab(self)[:4]
        return np.array([[not_b, b], [not_a, a]])

    @property
    def epsilon(self) -> float:
        """Exact privacy loss: the largest |log-ratio| over both outputs.

        ``eps = max(|ln(a / b)|, |ln((1 - a) / (1 - b))|)``; infinite when some
        output is possible for one true answer and impossible for the other.
        Computed as ``log1p(gap / b)`` and ``log1p(gap / (1 - a))`` with the
        complements taken from the branches, never as ``1 - a``: exact to
        floating-point precision from ε = 1e-6 (a, b near ½) to ε = 20 (b near 0).
        """
        return _epsilon_of(self)

    @property
    def informative(self) -> bool:
        """False when ``a == b``: the report says nothing about the truth."""
        return self.a != self.b

    def params(self) -> dict[str, Any]:
        """The defining parameters, JSON-ready; inverse of :func:`binary_design_from_params`."""
        fields = {k: _json_number(v) for k, v in self.__dict__.items()}
        return {"design": self.kind, **fields}

    def report_probability(self, mu: float | np.ndarray) -> float | np.ndarray:
        """``lambda = b + (a - b) mu``: the chance that a report is 1 when the true share is mu.

        A float for a scalar ``mu``, an array of the same shape for an array
        (Warner 1965; for the class exercise ``lambda = 1/4 + mu/2``, CS208 notes).

        >>> DieRR(4, 3).report_probability(0.5)
        0.5
        >>> DieRR(4, 3).report_probability([0.0, 1.0]).tolist()
        [0.25, 0.75]
        """
        lam = report_probability(self.a, self.b, np.asarray(mu, dtype=float))
        return float(lam) if lam.ndim == 0 else lam

    # -- device sampling ----------------------------------------------------------
    def sampling_weights(self) -> tuple[int, int, int, int]:
        """Integer weights ``(truth, lie, yes, no)`` a device samples from exactly.

        Draw a uniform integer ``u`` in ``0..sum-1`` (by rejection sampling) and
        take the first branch whose cumulative weight exceeds ``u``. Designs with
        rational probabilities (the die, the coins, decimal parameters) are
        sampled exactly; irrational ones (``EpsilonRR``) to within a few 2**-32,
        rounded toward privacy: :meth:`device_epsilon` never exceeds :attr:`epsilon`.

        The weights are non-negative and their sum is the common denominator
        (at most 2**32); ``weight / sum(weights)`` is the branch probability.

        >>> DieRR(faces=4, truthful=3).sampling_weights()
        (3, 1, 0, 0)
        >>> TwoCoinRR().sampling_weights()
        (2, 0, 1, 1)
        """
        exact = self._exact_weights()
        if exact is not None:
            return exact
        br = self.branches()
        return _round_toward_privacy(
            _round_weights([float(br[k]) for k in _BRANCHES], WEIGHT_DENOMINATOR_LIMIT),
            self.epsilon)

    def device_epsilon(self) -> float:
        """The exact privacy loss of what the device samples: the integer
        :meth:`sampling_weights`. Never above :attr:`epsilon` (the rounding to
        multiples of 2**-32 goes toward privacy); equal for rational designs.

        >>> DieRR(4, 3).device_epsilon() == DieRR(4, 3).epsilon
        True
        >>> e = EpsilonRR(19.93); e.device_epsilon() <= e.epsilon
        True
        """
        if self._exact_weights() is not None:
            return self.epsilon  # the device samples the design's own probabilities
        return _weights_epsilon(self.sampling_weights())

    def _exact_weights(self) -> tuple[int, int, int, int] | None:
        fr = {k: _fraction(v) for k, v in self.branches().items()}
        den = math.lcm(*(f.denominator for f in fr.values()))
        if den > WEIGHT_DENOMINATOR_LIMIT or sum(fr.values()) != 1:
            return None
        return tuple(int(fr[k] * den) for k in _BRANCHES)  # type: ignore[return-value]  # four branches give four ints; mypy cannot count a generator

    # -- per-respondent simulation ------------------------------------------------------
    def perturb(self, truth: object, *, rng: RNGLike = None) -> np.ndarray:
        """Randomize each true answer (array of 0/1); returns uint8 reports.

        Vectorized over respondents; a single student is an array of one.
        ``rng`` is a ``numpy.random.Generator``, a seed or None. One uniform
        draw per respondent picks the branch (truth, lie, forced yes, forced
        no), so each report is 1 with probability ``a`` (truly yes) or ``b``
        (truly no). For teaching and simulation only: a real report is
        randomized on the respondent's device from the OS's CSPRNG.

        >>> TwoCoinRR().perturb([1, 0, 1], rng=7).dtype
        dtype('uint8')
        """
        x = _checks.binary_array("truth", truth)
        gen = np.random.default_rng(rng)
        br = self.branches()
        probs = [float(br[k]) for k in _BRANCHES]
        cut = np.cumsum(probs)
        # the last branch that can happen takes everything above the previous cuts, so
        # rounding in the cumulative sums can never hand a report to an impossible branch
        last = max(i for i, pr in enumerate(probs) if pr > 0)
        cut[last:] = np.inf
        u = gen.random(x.shape)
        out = np.where(u < cut[1], np.where(u < cut[0], x, 1 - x),  # truth / lie
                       (u < cut[2]).astype(np.uint8))  # forced yes / forced no
        return out.astype(np.uint8)

    def sample_yes_counts(self, n_true_yes: int, n: int, *, size: int | None = None,
                          rng: RNGLike = None) -> np.ndarray | int:
        """Exact aggregate sampling of the number of "yes" reports.

        ``V = Binomial(v, a) + Binomial(n - v, b)``, the exact distribution of
        the reported count for a class with ``v`` true yeses (v = n_true_yes);
        ``size`` classes cost O(size), not O(size * n). It has the same
        distribution as summing :meth:`perturb` over the class.

        >>> DieRR().sample_yes_counts(0, 0)
        0
        >>> DieRR().sample_yes_counts(30, 40, size=3, rng=1).shape
        (3,)
        """
        n = _checks.integer("n", n, 0)
        v = _checks.integer("n_true_yes", n_true_yes, 0, n)
        gen = np.random.default_rng(rng)
        out = gen.binomial(v, self.a, size) + gen.binomial(n - v, self.b, size)
        return int(out) if size is None else out


_BRANCHES = ("truth", "lie", "yes", "no")


@functools.lru_cache(maxsize=4096)
def _channel_ab(design: BinaryDesign) -> tuple[float, float, float, float]:
    """``(a, b, 1 - a, 1 - b)`` from the branches, each complement summed from its own
    branches (``1 - a = lie + no``), cached: designs are frozen and equal designs share it."""
    br = design.branches()
    return (float(br["truth"] + br["yes"]), float(br["lie"] + br["yes"]),
            float(br["lie"] + br["no"]), float(br["truth"] + br["no"]))


@functools.lru_cache(maxsize=4096)
def _epsilon_of(design: BinaryDesign) -> float:
    """max(|ln(a / b)|, |ln((1 - b) / (1 - a))|) without cancellation (see ``epsilon``)."""
    a, b, not_a, not_b = _channel_ab(design)
    gap = float(design.gap())

    def log_ratio(p: float, q: float) -> float:  # |ln(p / q)| where p - q = gap
        if p == q or gap == 0:
            return 0.0
        if p == 0 or q == 0:
            return math.inf
        step = gap / q  # p / q = 1 + step
        return abs(math.log1p(step) if step > -0.5 else math.log(p / q))

    # ln(a / b) = log1p(gap / b) and ln((1 - b) / (1 - a)) = log1p(gap / (1 - a)): each
    # divides by its own side, so nothing subtracts numbers near 1.
    return max(log_ratio(a, b), log_ratio(not_b, not_a))


def _weights_epsilon(weights: tuple[int, int, int, int]) -> float:
    """The exact ε of integer weights ``(truth, lie, yes, no)``."""
    truth, lie, yes, no = weights
    return max(_log_ratio_int(truth + yes, lie + yes), _log_ratio_int(lie + no, truth + no))


def _log_ratio_int(p: int, q: int) -> float:
    if p == q:
        return 0.0
    if p == 0 or q == 0:
        return math.inf
    return abs(math.log(p / q))


def _round_toward_privacy(weights: tuple[int, int, int, int], epsilon: float
                          ) -> tuple[int, int, int, int]:
    """Move single units between "truth" and "lie", toward equal (less informative), until
    the weights' ε is at most ``epsilon``.

    Nearest rounding to 2**-32 may land a hair on the less private side; a privacy tool
    rounds toward privacy. One unit changes the ratio by at most a few parts in 2**32,
    so this takes a step or two.
    """
    truth, lie, yes, no = weights
    step = 1 if truth > lie else -1
    while truth != lie and _weights_epsilon((truth, lie, yes, no)) > epsilon:
        truth, lie = truth - step, lie + step
    return (truth, lie, yes, no)


def _json_number(v: object) -> object:
    if isinstance(v, Fraction):
        return float(v)
    return v


def _round_weights(probs: list[float], total: int) -> tuple[int, int, int, int]:
    raw = [p * total for p in probs]
    w = [math.floor(r) for r in raw]
    order = sorted(range(len(raw)), key=lambda i: raw[i] - w[i], reverse=True)
    for i in order[: total - sum(w)]:
        w[i] += 1
    return tuple(w)  # type: ignore[return-value]  # four probabilities give four ints


@dataclass(frozen=True)
class EpsilonRR(BinaryDesign):
    """``RR_eps``: keep the true answer w.p. ``e^eps / (1 + e^eps)``, flip it otherwise.

    Warner (1965) in the form of the CS208 notes: ``a = e^eps / (1 + e^eps)``,
    ``b = 1 / (1 + e^eps)``, so ``a / b = (1 - b) / (1 - a) = e^eps`` and the
    privacy loss is ``epsilon`` (up to floating-point rounding of a and b).
    The unbiased estimate of the mean is ``((1 + e^eps) ybar - 1) / (e^eps - 1)``.

    ``epsilon`` is limited to [MIN_EPSILON, MAX_EPSILON] = [1e-6, 20]: beyond
    20 the flip probability is below 2e-9, and below 1e-6 ``a - b`` is so
    small, that a float channel no longer represents the privacy loss to
    better than 1e-9.

    >>> d = EpsilonRR(math.log(3))
    >>> round(d.a, 12), round(d.b, 12)
    (0.75, 0.25)
    >>> EpsilonRR(1.0)
    EpsilonRR(epsilon=1.0)
    >>> round(EpsilonRR(1.0).epsilon, 12)
    1.0
    """

    _epsilon: float

    kind: ClassVar[str] = "epsilon"
    label: ClassVar[str] = "ε-randomized response"
    #: Smallest and largest epsilon accepted (see the class docstring).
    MIN_EPSILON: ClassVar[float] = 1e-6
    MAX_EPSILON: ClassVar[float] = 20.0

    def __init__(self, epsilon: float) -> None:
        eps = _checks.positive("epsilon", epsilon)
        if not self.MIN_EPSILON <= eps <= self.MAX_EPSILON:
            raise ValueError(f"epsilon must be in [{self.MIN_EPSILON:g}, {self.MAX_EPSILON:g}], "
                             f"got {epsilon!r}")
        object.__setattr__(self, "_epsilon", eps)

    def __repr__(self) -> str:
        return f"EpsilonRR(epsilon={self._epsilon!r})"

    def branches(self) -> dict[str, float]:
        # Each probability directly: "1 - keep" loses the flip probability's digits at
        # large epsilon (it drifted by 3.6e-8 in epsilon at 20).
        return {"truth": 1 / (1 + math.exp(-self._epsilon)),
                "lie": 1 / (1 + math.exp(self._epsilon)), "yes": 0.0, "no": 0.0}

    def gap(self) -> float:
        """``a - b = tanh(eps / 2)``, without the cancellation of ``keep - flip``."""
        return math.tanh(self._epsilon / 2)

    def params(self) -> dict[str, Any]:
        return {"design": self.kind, "epsilon": self._epsilon}

    @property
    def c_epsilon(self) -> float:
        """``c_eps = (e^eps + 1) / (e^eps - 1)``: ``E[c_eps * Q(y)] = y`` for y in {-1, +1}.

        Smith's slide in the CS208 notes (2022); equal to ``1 / (a - b)``.

        >>> round(EpsilonRR(math.log(3)).c_epsilon, 12)
        2.0
        """
        return 1 / math.tanh(self._epsilon / 2)


@dataclass(frozen=True)
class GammaRR(BinaryDesign):
    """Keep the true answer w.p. ``1/2 + gamma``, flip it otherwise; ``gamma`` in [0, 1/2).

    ``a = 1/2 + gamma``, ``b = 1/2 - gamma``, ``eps = ln((1 + 2 gamma) / (1 - 2 gamma))``
    (the gamma form of randomized response in the course notebook, after
    Warner 1965). ``gamma = 1/4`` is the two-coin channel (eps = ln 3);
    ``gamma = 0`` is perfectly private and carries no information (the design
    can be built, the estimators refuse it). Like :class:`EpsilonRR`, gamma
    stops at MAX_GAMMA, the gamma of eps = 20 (0.4999999979): closer to 1/2
    the float channel rounds the flip probability away.

    >>> GammaRR(0.25).channel.tolist()
    [[0.75, 0.25], [0.25, 0.75]]
    >>> GammaRR(0.0).epsilon, GammaRR(0.0).informative
    (0.0, False)
    """

    gamma: float

    kind: ClassVar[str] = "gamma"
    label: ClassVar[str] = "γ-randomized response"
    #: Largest gamma accepted: that of eps = EpsilonRR.MAX_EPSILON (see the docstring).
    MAX_GAMMA: ClassVar[float] = 0.5 - 1 / (1 + math.exp(20.0))

    def __post_init__(self) -> None:
        g = _checks.in_range("gamma", self.gamma, 0.0, 0.5, hi_open=True)
        if g > self.MAX_GAMMA:
            raise ValueError(f"gamma must be <= {self.MAX_GAMMA!r} (epsilon <= 20), got "
                             f"{self.gamma!r}")
        object.__setattr__(self, "gamma", g)

    def branches(self) -> dict[str, float]:
        return {"truth": 0.5 + self.gamma, "lie": 0.5 - self.gamma, "yes": 0.0, "no": 0.0}


@dataclass(frozen=True)
class DieRR(BinaryDesign):
    """The class exercise: roll a ``faces``-sided die; tell the truth on 1..truthful, lie otherwise.

    ``a = t / k``, ``b = 1 - t / k`` (k faces, t truthful), so
    ``eps = |ln(t / (k - t))|``. The CS208 exercise (2025) is ``faces=4,
    truthful=3``: a = 3/4, b = 1/4, eps = ln 3, ``mu_hat = 2 V / n - 1/2`` and
    SD ``sqrt(3 / (4 n))``. ``t`` must be in 1..k-1 and ``2 t != k``.

    >>> d = DieRR(4, 3)
    >>> (d.a, d.b), round(d.epsilon, 4)
    ((0.75, 0.25), 1.0986)
    """

    faces: int = 4
    truthful: int = 3

    kind: ClassVar[str] = "die"
    label: ClassVar[str] = "Die: truthful on low faces, lie on the rest"

    def __post_init__(self) -> None:
        k = _checks.integer("faces", self.faces, 2, 1000)
        t = _checks.integer("truthful", self.truthful, 1, k - 1)
        if 2 * t == k:
            raise ValueError(
                f"truthful must not be half of faces ({t} of {k}): the report would carry no "
                "information")
        object.__setattr__(self, "faces", k)
        object.__setattr__(self, "truthful", t)

    def branches(self) -> dict[str, Fraction]:
        t = Fraction(self.truthful, self.faces)
        return {"truth": t, "lie": 1 - t, "yes": Fraction(0), "no": Fraction(0)}


@dataclass(frozen=True)
class TwoCoinRR(BinaryDesign):
    """Dwork & Roth's forced response: heads, tell the truth; tails, a second coin answers.

    ``a = 1/2 + 1/4 = 3/4``, ``b = 1/4``, eps = ln 3; the estimate is
    ``2 (ybar - 1/4)`` (CS208 lecture notes; Near & Abuah, "Programming
    Differential Privacy").

    >>> TwoCoinRR().channel.tolist()
    [[0.75, 0.25], [0.25, 0.75]]
    """

    kind: ClassVar[str] = "two_coin"
    label: ClassVar[str] = "Two coins (forced response)"

    def branches(self) -> dict[str, Fraction]:
        return {"truth": Fraction(1, 2), "lie": Fraction(0), "yes": Fraction(1, 4),
                "no": Fraction(1, 4)}


@dataclass(frozen=True)
class WarnerRR(BinaryDesign):
    """Warner's (1965) spinner: answer statement A w.p. ``p``, its negation otherwise.

    Answering "true" to the negation reports "no" to A, so a = p, b = 1 - p and
    ``eps = |ln(p / (1 - p))|``. Warner's estimator of the share is
    ``(ybar - (1 - p)) / (2 p - 1)`` with variance ``lambda (1 - lambda) / (n (2p - 1)^2)``.
    ``p = 1/2`` carries no information and is refused, as Warner requires.

    >>> w = WarnerRR(0.7)
    >>> (w.a, round(w.b, 12)), round(w.epsilon, 6) == round(math.log(7 / 3), 6)
    ((0.7, 0.3), True)
    """

    p: float

    kind: ClassVar[str] = "warner"
    label: ClassVar[str] = "Warner's spinner"

    def __post_init__(self) -> None:
        p = _checks.in_range("p", self.p, 0.0, 1.0)
        if p == 0.5:
            raise ValueError("p must differ from 1/2: at p = 1/2 the report carries no "
                             "information")
        object.__setattr__(self, "p", p)

    def branches(self) -> dict[str, float]:
        return {"truth": self.p, "lie": 1 - self.p, "yes": 0.0, "no": 0.0}


@dataclass(frozen=True)
class ForcedResponse(BinaryDesign):
    """General forced response: truthful w.p. ``p_truth``, forced "yes" w.p. ``p_yes``,
    forced "no" otherwise.  a = p_truth + p_yes, b = p_yes, and
    ``eps = max(ln(a / b), ln((1 - b) / (1 - a)))`` (infinite if p_yes = 0 or
    p_truth + p_yes = 1). The parameters are read as the decimals they print
    as, so ``ForcedResponse(0.7, 0.3)`` has ``a = 1`` exactly, never above.

    >>> f = ForcedResponse(0.5, 0.25)
    >>> f.a, f.b
    (0.75, 0.25)
    """

    p_truth: float
    p_yes: float

    kind: ClassVar[str] = "forced"
    label: ClassVar[str] = "Forced response"

    def __post_init__(self) -> None:
        t = _checks.in_range("p_truth", self.p_truth, 0.0, 1.0, lo_open=True)
        f = _checks.in_range("p_yes", self.p_yes, 0.0, 1.0)
        if t + f > 1 + 1e-12:
            raise ValueError(f"p_truth + p_yes must be <= 1, got {t} + {f}")
        object.__setattr__(self, "p_truth", t)
        object.__setattr__(self, "p_yes", f)

    def branches(self) -> dict[str, Fraction]:
        t = Fraction(repr(self.p_truth))
        f = min(Fraction(repr(self.p_yes)), 1 - t)  # p_truth + p_yes may exceed 1 by rounding
        return {"truth": t, "lie": Fraction(0), "yes": f, "no": 1 - t - f}


@dataclass(frozen=True)
class MemoRR(BinaryDesign):
    """RAPPOR's two-step randomization of one yes/no answer (Erlingsson, Pihur & Korolova,
    "RAPPOR: Randomized Aggregatable Privacy-Preserving Ordinal Response", CCS 2014).

    * **Permanent** (made once per answer and kept on the device, the memo): the bit
      B' is 1 w.p. f/2, 0 w.p. f/2, and the true answer B w.p. 1 − f
      (:attr:`permanent`, a forced response with ``a = 1 − f/2``, ``b = f/2``).
    * **Instantaneous** (each report): S is 1 w.p. q if B' = 1, p if B' = 0
      (:attr:`instant`, ``0 <= p < q <= 1``).

    One report's channel, the memo averaged out, is ``a = q* = p + (q − p)(1 − f/2)``
    and ``b = p* = p + (q − p) f/2`` (RAPPOR's ``q*, p*``), so the estimators of every
    binary design apply; :attr:`epsilon` is one report's exact loss (ε₁ for the single
    bit of a yes/no answer). Every report of the same answer is a randomization of the
    same memo, so all of them together never reveal more than the memo does:
    :attr:`epsilon_series` = ``ln((1 − f/2) / (f/2))`` (ε∞ of one bit; RAPPOR's
    ``2h ln(...)`` counts the 2h bits in which two Bloom filters differ, see
    ``ldp_core.memo.rappor_epsilons``). k reports of the same answer are analysed
    exactly in ``ldp_core.repeated``.

    >>> m = MemoRR(0.5, 0.5, 0.75)
    >>> m.a, m.b
    (0.6875, 0.5625)
    >>> round(m.epsilon_series, 4), round(m.epsilon, 4)  # ln 3, then ln(0.4375 / 0.3125)
    (1.0986, 0.3365)
    """

    f: float
    p: float
    q: float

    kind: ClassVar[str] = "memo"
    label: ClassVar[str] = "Memoized randomized response (RAPPOR)"

    def __post_init__(self) -> None:
        f = _checks.in_range("f", self.f, 0.0, 1.0, lo_open=True, hi_open=True)
        p = _checks.in_range("p", self.p, 0.0, 1.0)
        q = _checks.in_range("q", self.q, 0.0, 1.0)
        if not p < q:
            raise ValueError(f"the instantaneous step needs p < q, got p = {p!r}, q = {q!r}")
        object.__setattr__(self, "f", f)
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "q", q)

    @classmethod
    def from_epsilons(cls, epsilon_series: float, epsilon: float) -> MemoRR:
        """The symmetric memo (``p = 1 − q``) whose whole series costs ``epsilon_series``
        and one report ``epsilon``: ``f = 2 / (1 + e^ε∞)`` and ``q`` from
        ``q* = e^ε₁ / (1 + e^ε₁)``. Needs ``0 < epsilon <= epsilon_series``; one report's
        channel is then that of RR at ``epsilon``.

        >>> m = MemoRR.from_epsilons(math.log(3), math.log(5 / 3))
        >>> round(m.f, 12), round(m.q, 12), round(m.p, 12)
        (0.5, 0.75, 0.25)
        """
        total = _checks.in_range("epsilon_series", epsilon_series, 0.0, EpsilonRR.MAX_EPSILON,
                                 lo_open=True)
        one = _checks.in_range("epsilon", epsilon, 0.0, total, lo_open=True)
        f = 2 / (1 + math.exp(total))
        q = (1 / (1 + math.exp(-one)) - f / 2) / (1 - f)
        q = min(q, 1.0)  # q* = 1 - f/2 exactly when epsilon == epsilon_series
        return cls(f, 1 - q, q)

    @property
    def permanent(self) -> ForcedResponse:
        """The memo's step: truth w.p. 1 − f, else a fair coin."""
        return ForcedResponse(1 - self.f, self.f / 2)

    @property
    def instant(self) -> ForcedResponse:
        """Each report's step on the memo: ``P(S = 1 | B' = 1) = q``, ``P(S = 1 | B' = 0) = p``."""
        return ForcedResponse(self.q - self.p, self.p)

    @property
    def epsilon_series(self) -> float:
        """ε∞: what every report of the same answer, together, can reveal (the memo's ε)."""
        return self.permanent.epsilon

    def branches(self) -> dict[str, Fraction]:
        f, p, q = (Fraction(repr(v)) for v in (self.f, self.p, self.q))
        a = report_probability(q, p, 1 - f / 2)
        b = report_probability(q, p, f / 2)
        return {"truth": a - b, "lie": Fraction(0), "yes": b, "no": 1 - a}


_DESIGNS: dict[str, type[BinaryDesign]] = {
    cls.kind: cls for cls in (EpsilonRR, GammaRR, DieRR, TwoCoinRR, WarnerRR, ForcedResponse,
                              MemoRR)
}


def binary_design_from_params(params: dict[str, Any]) -> BinaryDesign:
    """Rebuild a design from :meth:`BinaryDesign.params` (validated again).

    >>> binary_design_from_params({"design": "die", "faces": 4, "truthful": 3})
    DieRR(faces=4, truthful=3)
    """
    if not isinstance(params, dict) or "design" not in params:
        raise ValueError(f"design parameters must be a dict with a 'design' key, got {params!r}")
    kind = params["design"]
    cls = _DESIGNS.get(kind)
    if cls is None:
        raise ValueError(f"unknown binary design {kind!r}; known: {sorted(_DESIGNS)}")
    rest = {k: v for k, v in params.items() if k != "design"}
    try:
        return cls(**rest)
    except TypeError as exc:  # "DieRR.__init__() got an unexpected keyword argument 'x'"
        why = str(exc).split(") ", 1)[-1]
        raise ValueError(f"bad parameters for design {kind!r} ({why}): {rest!r}") from exc
