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

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import numpy as np

from . import _checks

__all__ = [
    "BinaryDesign",
    "DieRR",
    "EpsilonRR",
    "ForcedResponse",
    "GammaRR",
    "TwoCoinRR",
    "WarnerRR",
    "binary_design_from_params",
    "epsilon_to_gamma",
    "gamma_to_epsilon",
]

#: Largest denominator of the integer weights a device samples from.
WEIGHT_DENOMINATOR_LIMIT = 2**32


def gamma_to_epsilon(gamma: float) -> float:
    """Privacy loss of "keep w.p. 1/2 + gamma": ``eps = ln((1 + 2g) / (1 - 2g))``.

    >>> round(gamma_to_epsilon(0.25), 6) == round(math.log(3), 6)
    True
    """
    g = _checks.in_range("gamma", gamma, 0.0, 0.5, hi_open=True)
    return math.log1p(2 * g) - math.log1p(-2 * g)


def epsilon_to_gamma(epsilon: float) -> float:
    """Inverse of :func:`gamma_to_epsilon`: ``gamma = tanh(eps / 2) / 2``.

    ``epsilon`` may be 0 (gamma 0, perfect privacy) but must be finite.

    >>> epsilon_to_gamma(math.log(3))
    0.25
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
class BinaryDesign:
    """Base class: a randomizer for one yes/no answer.

    Subclasses store their defining parameters as dataclass fields and
    implement :meth:`branches`. Everything else is derived here.
    """

    kind: ClassVar[str] = ""
    label: ClassVar[str] = ""

    # -- what a subclass provides -------------------------------------------------
    def branches(self) -> dict[str, Fraction | float]:
        """Probabilities of the four branches ``truth, lie, yes, no`` (sum 1)."""
        raise NotImplementedError

    # -- the channel ---------------------------------------------------------------
    @property
    def a(self) -> float:
        """``P(report 1 | truly 1) = P(truth) + P(yes)``."""
        br = self.branches()
        return float(br["truth"] + br["yes"])

    @property
    def b(self) -> float:
        """``P(report 1 | truly 0) = P(lie) + P(yes)``."""
        br = self.branches()
        return float(br["lie"] + br["yes"])

    @property
    def channel(self) -> np.ndarray:
        """Row-stochastic matrix ``P[true, reported]`` with rows/columns 0 (no), 1 (yes)."""
        a, b = self.a, self.b
        return np.array([[1 - b, b], [1 - a, a]])

    @property
    def epsilon(self) -> float:
        """Exact privacy loss: the largest |log-ratio| over both outputs.

        ``eps = max(|ln(a / b)|, |ln((1 - a) / (1 - b))|)``; infinite when some
        output is possible for one true answer and impossible for the other.
        """
        return _max_log_ratio(self.a, self.b)

    @property
    def informative(self) -> bool:
        """False when ``a == b``: the report says nothing about the truth."""
        return self.a != self.b

    def params(self) -> dict:
        """The defining parameters, JSON-ready; inverse of :func:`binary_design_from_params`."""
        fields = {k: _json_number(v) for k, v in self.__dict__.items()}
        return {"design": self.kind, **fields}

    def report_probability(self, mu: float | np.ndarray) -> float | np.ndarray:
        """``lambda = b + (a - b) mu``: the chance that a report is 1 when the true share is mu."""
        return self.b + (self.a - self.b) * np.asarray(mu, dtype=float) if np.ndim(mu) else \
            self.b + (self.a - self.b) * float(mu)

    # -- device sampling ----------------------------------------------------------
    def sampling_weights(self) -> tuple[int, int, int, int]:
        """Integer weights ``(truth, lie, yes, no)`` a device samples from exactly.

        Draw a uniform integer ``u`` in ``0..sum-1`` (by rejection sampling) and
        take the first branch whose cumulative weight exceeds ``u``. Designs with
        rational probabilities (the die, the coins, decimal parameters) are
        sampled exactly; irrational ones (``EpsilonRR``) to within 2**-32.

        >>> DieRR(faces=4, truthful=3).sampling_weights()
        (3, 1, 0, 0)
        """
        fr = {k: _fraction(v) for k, v in self.branches().items()}
        den = math.lcm(*(f.denominator for f in fr.values()))
        if den > WEIGHT_DENOMINATOR_LIMIT:
            return _round_weights([float(fr[k]) for k in _BRANCHES], WEIGHT_DENOMINATOR_LIMIT)
        return tuple(int(fr[k] * den) for k in _BRANCHES)  # type: ignore[return-value]

    # -- per-respondent simulation ------------------------------------------------------
    def perturb(self, truth: object, rng: object = None) -> np.ndarray:
        """Randomize each true answer (array of 0/1); returns uint8 reports.

        Vectorized over respondents; a single student is an array of one.
        ``rng`` is a ``numpy.random.Generator``, a seed or None.
        """
        x = _checks.binary_array("truth", truth)
        gen = np.random.default_rng(rng)
        br = self.branches()
        cut = np.cumsum([float(br[k]) for k in _BRANCHES])
        u = gen.random(x.shape)
        out = np.where(u < cut[0], x, 1 - x)  # truth, else lie...
        out = np.where(u >= cut[1], (u < cut[2]).astype(np.uint8), out)  # ...else yes / no
        return out.astype(np.uint8)

    def simulate_yes_counts(self, n_true_yes: int, n: int, size: int | None = None,
                            rng: object = None) -> np.ndarray | int:
        """Exact aggregate sampling of the number of "yes" reports.

        ``V = Binomial(v, a) + Binomial(n - v, b)``, the exact distribution of
        the reported count for a class with ``v`` true yeses; ``size`` classes
        cost O(size), not O(size * n).
        """
        n = _checks.integer("n", n, 0)
        v = _checks.integer("n_true_yes", n_true_yes, 0, n)
        gen = np.random.default_rng(rng)
        return gen.binomial(v, self.a, size) + gen.binomial(n - v, self.b, size)


_BRANCHES = ("truth", "lie", "yes", "no")


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
    return tuple(w)  # type: ignore[return-value]


def _max_log_ratio(a: float, b: float) -> float:
    def log_ratio(p: float, q: float) -> float:
        if p == q:
            return 0.0
        if p == 0 or q == 0:
            return math.inf
        return abs(math.log(p / q))

    return max(log_ratio(a, b), log_ratio(1 - a, 1 - b))


@dataclass(frozen=True)
class EpsilonRR(BinaryDesign):
    """``RR_eps``: keep the true answer w.p. ``e^eps / (1 + e^eps)``, flip it otherwise.

    Warner (1965) in the form of the CS208 notes; the privacy loss is exactly
    ``epsilon``.

    >>> d = EpsilonRR(math.log(3))
    >>> round(d.a, 12), round(d.b, 12)
    (0.75, 0.25)
    """

    epsilon_param: float

    kind: ClassVar[str] = "epsilon"
    label: ClassVar[str] = "ε-randomized response"

    def __init__(self, epsilon: float) -> None:
        object.__setattr__(self, "epsilon_param", _checks.positive("epsilon", epsilon))
        if self.epsilon_param > 700:
            raise ValueError(f"epsilon must be <= 700, got {epsilon!r}")

    def branches(self) -> dict[str, float]:
        keep = 1 / (1 + math.exp(-self.epsilon_param))
        return {"truth": keep, "lie": 1 - keep, "yes": 0.0, "no": 0.0}

    def params(self) -> dict:
        return {"design": self.kind, "epsilon": self.epsilon_param}

    @property
    def c_epsilon(self) -> float:
        """``c_eps = (e^eps + 1) / (e^eps - 1)``: ``E[c_eps * Q(y)] = y`` for y in {-1, +1}."""
        return 1 / math.tanh(self.epsilon_param / 2)


@dataclass(frozen=True)
class GammaRR(BinaryDesign):
    """Keep the true answer w.p. ``1/2 + gamma``, flip it otherwise; ``gamma`` in [0, 1/2).

    ``gamma = 1/4`` is the two-coin design; ``gamma = 0`` is perfectly private
    and carries no information (estimators refuse it).
    """

    gamma: float

    kind: ClassVar[str] = "gamma"
    label: ClassVar[str] = "γ-randomized response"

    def __post_init__(self) -> None:
        object.__setattr__(self, "gamma", _checks.in_range("gamma", self.gamma, 0.0, 0.5,
                                                           hi_open=True))

    def branches(self) -> dict[str, float]:
        return {"truth": 0.5 + self.gamma, "lie": 0.5 - self.gamma, "yes": 0.0, "no": 0.0}


@dataclass(frozen=True)
class DieRR(BinaryDesign):
    """The class exercise: roll a ``faces``-sided die; tell the truth on 1..truthful, lie otherwise.

    The CS208 exercise is ``faces=4, truthful=3``: a = 3/4, b = 1/4, eps = ln 3.
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

    a = 3/4, b = 1/4, eps = ln 3.
    """

    kind: ClassVar[str] = "two_coin"
    label: ClassVar[str] = "Two coins (forced response)"

    def branches(self) -> dict[str, Fraction]:
        return {"truth": Fraction(1, 2), "lie": Fraction(0), "yes": Fraction(1, 4),
                "no": Fraction(1, 4)}


@dataclass(frozen=True)
class WarnerRR(BinaryDesign):
    """Warner's (1965) spinner: answer statement A w.p. ``p``, its negation otherwise.

    Answering "true" to the negation reports "no" to A, so a = p, b = 1 - p.
    ``p = 1/2`` carries no information and is refused, as Warner requires.
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
    forced "no" otherwise.  a = p_truth + p_yes, b = p_yes.
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

    def branches(self) -> dict[str, float]:
        no = max(0.0, 1 - self.p_truth - self.p_yes)
        return {"truth": self.p_truth, "lie": 0.0, "yes": self.p_yes, "no": no}


_DESIGNS: dict[str, type[BinaryDesign]] = {
    cls.kind: cls for cls in (EpsilonRR, GammaRR, DieRR, TwoCoinRR, WarnerRR, ForcedResponse)
}


def binary_design_from_params(params: dict) -> BinaryDesign:
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
    except TypeError as exc:
        raise ValueError(f"bad parameters for design {kind!r}: {rest!r}") from exc
