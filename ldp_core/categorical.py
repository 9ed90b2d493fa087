"""Frequency oracles: local randomizers for one of ``d`` categories (histograms).

Each oracle reports something that *supports* some categories. With
``p = P(report supports v | true value v)`` and ``q = P(report supports v |
true value != v)``, the support count C_v of n reports gives the unbiased
estimate ``(C_v - n q) / (p - q)`` with variance

    ``Var = n q (1 - q) / (p - q)^2 + n f_v (1 - p - q) / (p - q)``

(Wang, Blocki, Li & Jha 2017, "Locally differentially private protocols for
frequency estimation", USENIX Security; ``f_v`` is the true share of v).

* :class:`GRR`, generalized randomized response (direct encoding):
  ``p = e^eps / (e^eps + d - 1)``, ``q = 1 / (e^eps + d - 1)``.
* :class:`UnaryEncoding` with any ``p > q``; ``eps = ln(p (1 - q) / ((1 - p) q))``
  (Near & Abuah, "Programming Differential Privacy", unary encoding:
  p = .75, q = .25 gives 2.197).  :meth:`UnaryEncoding.symmetric` is one-hot +
  RR_{eps/2} on every bit (SUE, basic RAPPOR; CS208 "Local DP histograms");
  :meth:`UnaryEncoding.optimized` is OUE, ``p = 1/2, q = 1 / (e^eps + 1)``.
* :class:`OLH`, optimized local hashing: hash into g = round(e^eps) + 1 buckets,
  then GRR on the bucket; ``p = e^eps / (e^eps + g - 1)``, ``q = 1 / g``.

With f = 0 the variances per report at d = 14, eps = 1 are GRR 4.99, SUE 3.92,
OUE 3.68 and OLH 3.69 (Wang et al. 2017: GRR ``(e^eps + d - 2) / (e^eps - 1)^2``,
SUE ``e^(eps/2) / (e^(eps/2) - 1)^2``, OUE and OLH ``~ 4 e^eps / (e^eps - 1)^2``).

Every ``perturb`` is vectorized over users; ``rng`` is a Generator, a seed or
None. These samplers are for teaching and simulation; a real deployment
randomizes on the device from the operating system's CSPRNG.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

from . import _checks
from ._checks import RNGLike

__all__ = [
    "GRR",
    "OLH",
    "FrequencyOracle",
    "OLHReports",
    "UnaryEncoding",
    "categorical_oracle_from_params",
    "max_error_scale",
    "recommend_oracle",
]

#: Users perturbed at once by the chunked simulators: bounds peak memory.
CHUNK = 1 << 16


class FrequencyOracle(ABC):
    """The abstract base of the frequency oracles: shared estimation for oracles described
    by (d, p, q); see the module docstring."""

    kind: ClassVar[str] = ""
    label: ClassVar[str] = ""
    d: int

    @property
    @abstractmethod
    def p(self) -> float:
        """See the module docstring."""

    @property
    @abstractmethod
    def q(self) -> float:
        """See the module docstring."""

    @property
    @abstractmethod
    def epsilon(self) -> float:
        """See the module docstring."""

    def device_pq(self) -> tuple[float, float]:
        """``(p, q)`` as a phone draws them: it compares a 53-bit uniform ``k / 2**53``
        with each, so the probabilities it realises lie on that grid. They are rounded
        toward privacy (p down, q up), so :meth:`device_epsilon` never exceeds ``epsilon``.

        >>> GRR(4, 1.0).device_pq()[0] <= GRR(4, 1.0).p
        True
        """
        p, q = _grid_down(self.p), _grid_up(self.q)
        while self._epsilon_of(p, q) > self.epsilon:  # a float's last bit: one grid step
            p -= 1 / _GRID
        return p, q

    def device_epsilon(self) -> float:
        """The exact privacy loss of the probabilities the phone realises (:meth:`device_pq`)."""
        return self._epsilon_of(*self.device_pq())

    def _epsilon_of(self, p: float, q: float) -> float:
        """The exact ε of these (p, q); oracles that a phone runs provide it."""
        raise NotImplementedError(f"{type(self).__name__} is not run on phones")

    @abstractmethod
    def params(self) -> dict[str, Any]:
        """Provided by each oracle."""

    @abstractmethod
    def perturb(self, values: object, *, rng: RNGLike = None) -> Any:
        """Provided by each oracle."""

    @abstractmethod
    def support_counts(self, reports: Any) -> np.ndarray:
        """Provided by each oracle."""

    def sample_support_counts(self, true_counts: object, *, size: int | None = None,
                              rng: RNGLike = None) -> np.ndarray:
        """Exact aggregate sampling of the support counts for a population with
        ``true_counts``; ``size`` simulated classes at O(size * d), whatever n is.
        Returns shape (d,) when ``size`` is None, else (size, d)."""
        raise NotImplementedError

    # -- shared ----------------------------------------------------------------------------
    def estimate_counts(self, support_counts: object, n: int) -> np.ndarray:
        """Unbiased counts ``(C - n q) / (p - q)`` (Wang et al. 2017).

        Entries may be negative: that is the price of unbiasedness, not a bug;
        post-process (clip, Norm-Sub) only for display. Works on a batch of
        support counts (last axis = categories).

        >>> oue = UnaryEncoding(3, 0.75, 0.25)
        >>> oue.estimate_counts([5, 3, 2], n=8).tolist()
        [6.0, 2.0, 0.0]
        """
        n = _checks.integer("n", n, 0)
        c = _checks.count_array("support_counts", support_counts, n)
        if c.shape[-1] != self.d:
            raise ValueError(f"support_counts must have {self.d} entries, got {c.shape[-1]}")
        return (c - n * self.q) / (self.p - self.q)

    def count_variance(self, n: int, true_shares: object = None) -> np.ndarray | float:
        """Exact variance of each estimated count (Wang et al. 2017, pure protocols):

        ``Var = n q (1 - q) / (p - q)^2 + n f_v (1 - p - q) / (p - q)``.

        Without ``true_shares`` the f-term is dropped (its value at f = 0).

        >>> round(GRR(14, 1.0).count_variance(1), 2), round(UnaryEncoding.optimized(14, 1.0)
        ...     .count_variance(1), 2)
        (4.99, 3.68)
        """
        n = _checks.integer("n", n, 0)
        p, q = self.p, self.q
        base = n * q * (1 - q) / (p - q) ** 2
        if true_shares is None:
            return base
        try:
            f = np.asarray(true_shares, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"true_shares must be numbers in [0, 1], got {true_shares!r}"
                             ) from None
        if not np.all(np.isfinite(f)) or np.any(f < 0) or np.any(f > 1):
            raise ValueError("true_shares must be finite shares in [0, 1]")
        return base + n * f * (1 - p - q) / (p - q)

    def simulate_support_counts(self, values: object, *, rng: RNGLike = None,
                                chunk: int = CHUNK) -> np.ndarray:
        """Per-respondent simulation, in chunks so memory stays bounded; returns C.

        Every user's report is drawn with :meth:`perturb`, ``chunk`` users at a
        time, and only the support counts are kept; the result has the same
        distribution as :meth:`sample_support_counts` for the same true counts.

        >>> GRR(3, 1.0).simulate_support_counts([0, 1, 2, 2], rng=0).sum()
        np.int64(4)
        """
        chunk = _checks.integer("chunk", chunk, 1)
        x = _checks.category_array("values", values, self.d).ravel()
        gen = np.random.default_rng(rng)
        total = np.zeros(self.d, dtype=np.int64)
        for start in range(0, x.size, chunk):
            total += self.support_counts(self.perturb(x[start:start + chunk], rng=gen))
        return total


def _exp(eps: float) -> float:
    return math.exp(eps)


#: Range of epsilon the oracles accept: below 1e-6, p - q is lost in rounding.
MIN_EPSILON, MAX_EPSILON = 1e-6, 50.0


def _check_eps(epsilon: object) -> float:
    eps = _checks.positive("epsilon", epsilon)
    if not MIN_EPSILON <= eps <= MAX_EPSILON:
        raise ValueError(f"epsilon must be in [{MIN_EPSILON:g}, {MAX_EPSILON:g}], "
                         f"got {epsilon!r}")
    return eps


def _binomial_columns(gen: np.random.Generator, trials: np.ndarray, prob: float,
                      size: int | None) -> np.ndarray:
    """``Binomial(trials[v], prob)`` for every v, ``size`` times: shape (size, d) or (d,).

    Many classes are drawn one column at a time: with fixed (n, p) numpy keeps
    the binomial sampler's set-up between draws, about twice as fast as
    broadcasting a different n into every draw. Same distribution either way.
    """
    if size is None or size < 64:
        return gen.binomial(trials, prob, (trials.size,) if size is None else (size, trials.size))
    out = np.empty((size, trials.size), dtype=np.int64)
    for v, t in enumerate(trials):
        out[:, v] = gen.binomial(t, prob, size) if t else 0
    return out


def _size(size: object) -> int | None:
    return None if size is None else _checks.integer("size", size, 0)


def _true_counts(oracle: FrequencyOracle, true_counts: object) -> np.ndarray:
    c = _checks.count_array("true_counts", true_counts)
    if c.shape != (oracle.d,):
        raise ValueError(f"true_counts must have {oracle.d} entries, got shape {c.shape}")
    return c


@dataclass(frozen=True)
class GRR(FrequencyOracle):
    """Generalized randomized response: keep the value w.p. p, else a uniform other one.

    Direct encoding in Wang et al. (2017): ``p = e^eps / (e^eps + d - 1)``,
    ``q = 1 / (e^eps + d - 1)``, so ``p / q = e^eps``; the count variance is
    ``n (e^eps + d - 2) / (e^eps - 1)^2`` plus the f-term.

    >>> GRR(14, 1.0)
    GRR(d=14, epsilon=1.0)
    >>> g = GRR(3, math.log(2))
    >>> round(g.p, 12), round(g.q, 12)
    (0.5, 0.25)
    """

    d: int
    _epsilon: float

    kind: ClassVar[str] = "grr"
    label: ClassVar[str] = "GRR (direct encoding)"

    def __init__(self, d: int, epsilon: float) -> None:
        object.__setattr__(self, "d", _checks.integer("d", d, 2, 10_000))
        object.__setattr__(self, "_epsilon", _check_eps(epsilon))

    def __repr__(self) -> str:
        return f"GRR(d={self.d}, epsilon={self._epsilon!r})"

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def p(self) -> float:
        return _exp(self._epsilon) / (_exp(self._epsilon) + self.d - 1)

    @property
    def q(self) -> float:
        return 1 / (_exp(self._epsilon) + self.d - 1)

    def _epsilon_of(self, p: float, q: float) -> float:
        # The phone keeps the truth with p and otherwise picks one of the d - 1 others
        # uniformly (exact integer rejection sampling): the "other" probability is
        # (1 - p) / (d - 1), whatever q says.
        return math.log(p * (self.d - 1) / (1 - p))

    def device_pq(self) -> tuple[float, float]:
        p = _grid_down(self.p)
        while self._epsilon_of(p, 0.0) > self.epsilon:
            p -= 1 / _GRID
        return p, (1 - p) / (self.d - 1)

    @property
    def channel(self) -> np.ndarray:
        """``P[true, reported]``: p on the diagonal, q elsewhere."""
        m = np.full((self.d, self.d), self.q)
        np.fill_diagonal(m, self.p)
        return m

    def params(self) -> dict[str, Any]:
        return {"design": self.kind, "d": self.d, "epsilon": self._epsilon}

    def perturb(self, values: object, *, rng: RNGLike = None) -> np.ndarray:
        """One reported category per user (int64)."""
        x = _checks.category_array("values", values, self.d)
        gen = np.random.default_rng(rng)
        keep = gen.random(x.shape) < self.p
        other = gen.integers(0, self.d - 1, size=x.shape)
        other += other >= x  # uniform over the d - 1 other values
        return np.where(keep, x, other)

    def support_counts(self, reports: object) -> np.ndarray:
        r = _checks.category_array("reports", reports, self.d)
        return np.bincount(r.ravel(), minlength=self.d).astype(np.int64)

    def sample_support_counts(self, true_counts: object, *, size: int | None = None,
                              rng: RNGLike = None) -> np.ndarray:
        """Exact aggregate sampling of the reported counts, O(size * d).

        GRR row v (p on v, q elsewhere) is the mixture "report v w.p. 1 - d q,
        else a value uniform over all d" (that uniform draw lands on v w.p. q,
        and ``1 - d q + q = p``). So ``K_v ~ Binomial(c_v, 1 - d q)`` users keep v
        outright and the other ``R = n - sum K_v`` are one
        ``Multinomial(R, uniform over d)``: the exact distribution of the
        counts, without the d x d channel.

        >>> GRR(3, 1.0).sample_support_counts([5, 0, 2], size=4, rng=0).sum(axis=1).tolist()
        [7, 7, 7, 7]
        """
        c = _true_counts(self, true_counts)
        size = _size(size)
        gen = np.random.default_rng(rng)
        keep_outright = max(0.0, 1.0 - self.d * self.q)
        kept = _binomial_columns(gen, c, keep_outright, size)
        rest = c.sum() - kept.sum(axis=-1)
        return kept + gen.multinomial(rest, np.full(self.d, 1.0 / self.d))


@dataclass(frozen=True)
class UnaryEncoding(FrequencyOracle):
    """Unary encoding: one-hot, then each bit reads 1 w.p. p (true bit) or q (other bits).

    ``eps = ln(p (1 - q) / ((1 - p) q))`` because two inputs differ in two bits
    (Wang et al. 2017; Near & Abuah's unary encoding with p = .75, q = .25
    gives 2.197). Support count ``C_v = Bin(n_v, p) + Bin(n - n_v, q)``.

    >>> ue = UnaryEncoding(14, 0.75, 0.25)
    >>> round(ue.epsilon, 10)
    2.1972245773
    >>> ue
    UnaryEncoding(d=14, p=0.75, q=0.25)
    """

    d: int
    _p: float
    _q: float

    kind: ClassVar[str] = "ue"
    label: ClassVar[str] = "Unary encoding"

    def __repr__(self) -> str:
        return f"UnaryEncoding(d={self.d}, p={self._p!r}, q={self._q!r})"

    def __init__(self, d: int, p: float, q: float) -> None:
        object.__setattr__(self, "d", _checks.integer("d", d, 2, 10_000))
        p = _checks.in_range("p", p, 0.0, 1.0, lo_open=True, hi_open=True)
        q = _checks.in_range("q", q, 0.0, 1.0, lo_open=True, hi_open=True)
        if p <= q:
            raise ValueError(f"p must be > q (got p = {p:g}, q = {q:g}): with p <= q the bits "
                             "carry no information, or inverted information")
        object.__setattr__(self, "_p", p)
        object.__setattr__(self, "_q", q)

    @classmethod
    def symmetric(cls, d: int, epsilon: float) -> UnaryEncoding:
        """SUE: one-hot + RR_{eps/2} on every bit (basic RAPPOR; CS208 "Local DP histograms").

        ``p = e^(eps/2) / (e^(eps/2) + 1)``, ``q = 1 - p``.

        >>> round(UnaryEncoding.symmetric(14, 1.0).epsilon, 12)
        1.0
        """
        half = _check_eps(epsilon) / 2
        p = _exp(half) / (_exp(half) + 1)
        return cls(d, p, 1 - p)

    @classmethod
    def optimized(cls, d: int, epsilon: float) -> UnaryEncoding:
        """OUE: ``p = 1/2, q = 1 / (e^eps + 1)`` minimises the variance (Wang et al. 2017).

        >>> round(UnaryEncoding.optimized(14, 1.0).epsilon, 12)
        1.0
        """
        return cls(d, 0.5, 1 / (_exp(_check_eps(epsilon)) + 1))

    @property
    def p(self) -> float:
        return self._p

    @property
    def q(self) -> float:
        return self._q

    @property
    def epsilon(self) -> float:
        """``ln(p (1 - q) / ((1 - p) q))``: two inputs differ in two bits."""
        return self._epsilon_of(self.p, self.q)

    def _epsilon_of(self, p: float, q: float) -> float:
        return math.log(p * (1 - q) / ((1 - p) * q))

    def params(self) -> dict[str, Any]:
        return {"design": self.kind, "d": self.d, "p": self.p, "q": self.q}

    def perturb(self, values: object, *, rng: RNGLike = None) -> np.ndarray:
        """A ``(n, d)`` uint8 matrix of perturbed bits: bit v is 1 w.p. p if v is the
        user's value, q otherwise, independently. Uses ``8 n d`` bytes of
        uniforms; :meth:`simulate_support_counts` chunks large n."""
        x = _checks.category_array("values", values, self.d).ravel()
        gen = np.random.default_rng(rng)
        bits = gen.random((x.size, self.d)) < self.q
        bits[np.arange(x.size), x] = gen.random(x.size) < self.p
        return bits.view(np.uint8)

    def support_counts(self, reports: object) -> np.ndarray:
        r = np.asarray(reports)
        if r.ndim != 2 or r.shape[1] != self.d:
            raise ValueError(f"reports must be an (n, {self.d}) bit matrix, got shape {r.shape}")
        return r.sum(axis=0, dtype=np.int64)

    def sample_support_counts(self, true_counts: object, *, size: int | None = None,
                              rng: RNGLike = None) -> np.ndarray:
        """Bits are independent, so ``C_v = Bin(n_v, p) + Bin(n - n_v, q)`` exactly,
        independently over v. O(size * d).

        >>> UnaryEncoding.optimized(4, 1.0).sample_support_counts([3, 0, 0, 1], size=2, rng=0).shape
        (2, 4)
        """
        c = _true_counts(self, true_counts)
        size = _size(size)
        gen = np.random.default_rng(rng)
        return (_binomial_columns(gen, c, self.p, size)
                + _binomial_columns(gen, c.sum() - c, self.q, size))


class OLHReports(NamedTuple):
    """What OLH users send: each user's hash seed (a, b) and the perturbed bucket y."""

    a: np.ndarray
    b: np.ndarray
    y: np.ndarray


_PRIME = (1 << 31) - 1  # Mersenne prime for the hash family ((a v + b) mod P) mod g


@dataclass(frozen=True)
class OLH(FrequencyOracle):
    """Optimized local hashing (Wang et al. 2017): hash to g buckets, then GRR over g.

    Each user draws a hash ``H(v) = ((a v + b) mod P) mod g`` (P = 2^31 - 1,
    a in 1..P-1, b in 0..P-1), reports ``(a, b)`` and GRR over g buckets of
    ``H(x)``: ``p = e^eps / (e^eps + g - 1)``; given the hash, the report's
    log-ratio is at most eps, and the hash itself does not depend on x.
    A report supports v when ``H(v) == y``; for v != x this happens with
    probability ``q = 1/g`` for an ideal hash. With this family the true
    collision probability differs from 1/g by at most 1/P (about 5e-10),
    which moves an estimated count by at most ``n / (P (p - q))``.
    The default ``g = round(e^eps) + 1`` minimises the variance,
    ``~ 4 e^eps / (e^eps - 1)^2`` per report (capped at P for eps > 21.5).

    >>> OLH(14, 1.0)
    OLH(d=14, epsilon=1.0, g=4)
    """

    d: int
    _epsilon: float
    g: int

    kind: ClassVar[str] = "olh"
    label: ClassVar[str] = "OLH (local hashing)"

    def __repr__(self) -> str:
        return f"OLH(d={self.d}, epsilon={self._epsilon!r}, g={self.g})"

    def __init__(self, d: int, epsilon: float, g: int | None = None) -> None:
        object.__setattr__(self, "d", _checks.integer("d", d, 2, 10_000))
        eps = _check_eps(epsilon)
        object.__setattr__(self, "_epsilon", eps)
        if g is None:  # Wang et al.'s optimum, within the hash family's range
            g = min(max(2, round(_exp(eps)) + 1), _PRIME)
        else:
            g = _checks.integer("g", g, 2, _PRIME)
        object.__setattr__(self, "g", g)

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def p(self) -> float:
        return _exp(self._epsilon) / (_exp(self._epsilon) + self.g - 1)

    @property
    def q(self) -> float:
        return 1 / self.g

    def params(self) -> dict[str, Any]:
        return {"design": self.kind, "d": self.d, "epsilon": self._epsilon, "g": self.g}

    def _hash(self, a: np.ndarray, b: np.ndarray, v: np.ndarray | int) -> np.ndarray:
        return ((a * np.asarray(v, dtype=np.uint64) + b) % np.uint64(_PRIME)) % np.uint64(self.g)

    def perturb(self, values: object, *, rng: RNGLike = None) -> OLHReports:
        """Per user: a random hash seed (a, b) and GRR over g buckets of ``H(x)``."""
        x = _checks.category_array("values", values, self.d).ravel()
        gen = np.random.default_rng(rng)
        a = gen.integers(1, _PRIME, size=x.size, dtype=np.uint64)
        b = gen.integers(0, _PRIME, size=x.size, dtype=np.uint64)
        h = self._hash(a, b, x).astype(np.int64)
        keep = gen.random(x.size) < self.p
        other = gen.integers(0, self.g - 1, size=x.size)
        other += other >= h
        return OLHReports(a, b, np.where(keep, h, other))

    def sample_support_counts(self, true_counts: object, *, size: int | None = None,
                              rng: RNGLike = None) -> np.ndarray:
        """Not available: a user's supports for different v are dependent through the
        hash, so there is no exact sampler cheaper than :meth:`simulate_support_counts`."""
        raise NotImplementedError(
            "OLH has no exact aggregate sampler; use simulate_support_counts (per respondent)")

    def support_counts(self, reports: OLHReports) -> np.ndarray:
        """``C_v = #{users : H_user(v) == y_user}`` for every v."""
        a, b, y = (np.asarray(r) for r in reports)
        yy = y.astype(np.uint64)
        return np.array([np.count_nonzero(self._hash(a, b, v) == yy) for v in range(self.d)],
                        dtype=np.int64)


#: The oracles by the name their ``params()`` carry.
_BUILDERS: dict[str, Callable[..., FrequencyOracle]] = {"grr": GRR, "ue": UnaryEncoding,
                                                        "olh": OLH}


def categorical_oracle_from_params(params: dict[str, Any]) -> FrequencyOracle:
    """Rebuild an oracle from its :meth:`FrequencyOracle.params`.

    >>> categorical_oracle_from_params(GRR(5, 1.0).params())
    GRR(d=5, epsilon=1.0)
    """
    if not isinstance(params, dict) or "design" not in params:
        raise ValueError(f"oracle parameters must be a dict with a 'design' key, got {params!r}")
    rest = {k: v for k, v in params.items() if k != "design"}
    cls = _BUILDERS.get(params["design"])
    if cls is None:
        raise ValueError(f"unknown categorical design {params['design']!r}; known: "
                         f"{sorted(_BUILDERS)}")
    try:
        return cls(**rest)
    except TypeError as exc:
        raise ValueError(f"bad parameters for {params['design']!r}: {rest!r}") from exc


#: The frequency oracles by name, as :func:`oracle` builds them (Wang, Blocki, Li & Jha
#: 2017): direct encoding, symmetric and optimized unary encoding, optimized local hashing.
ORACLE_NAMES = ("grr", "sue", "oue", "olh")


def oracle(name: str, d: int, epsilon: float) -> FrequencyOracle:
    """The frequency oracle ``name`` (one of :data:`ORACLE_NAMES`) over ``d`` values at
    privacy loss ``epsilon``.

    >>> oracle("oue", 4, 1.0)
    UnaryEncoding(d=4, p=0.5, q=0.2689414213699951)
    >>> oracle("grr", 3, 1.0).params()
    {'design': 'grr', 'd': 3, 'epsilon': 1.0}
    """
    builders: dict[str, Callable[[int, float], FrequencyOracle]] = {
        "grr": GRR, "sue": UnaryEncoding.symmetric, "oue": UnaryEncoding.optimized,
        "olh": OLH}
    if name not in builders:
        raise ValueError(f"unknown frequency oracle {name!r}; known: {list(ORACLE_NAMES)}")
    return builders[name](d, epsilon)


def recommend_oracle(d: int, epsilon: float) -> str:
    """The name (for :func:`oracle`) of the oracle with the smaller variance: ``"grr"`` when
    ``d < 3 e^eps + 2``, else ``"oue"``.

    Wang et al. 2017, Section 6. OLH matches OUE's variance with less communication.

    >>> recommend_oracle(2, 1.0), recommend_oracle(14, 1.0)
    ('grr', 'oue')
    """
    d = _checks.integer("d", d, 2)
    eps = _check_eps(epsilon)
    return "grr" if d < 3 * _exp(eps) + 2 else "oue"


def max_error_scale(n: int, d: int, epsilon: float) -> float:
    """``sqrt(n ln d) / eps``: the order of the expected max count error over d bins
    for one-hot + RR (CS208 "Local DP histograms"); a scale for charts, not a bound.

    >>> round(max_error_scale(10_000, 14, 1.0), 1)
    162.5
    """
    n = _checks.integer("n", n, 0)
    d = _checks.integer("d", d, 2)
    return math.sqrt(n * math.log(d)) / _checks.positive("epsilon", epsilon)


_GRID = 2.0**53


def _grid_down(x: float) -> float:
    """The largest multiple of 2**-53 not above ``x``."""
    return math.floor(x * _GRID) / _GRID


def _grid_up(x: float) -> float:
    """The smallest multiple of 2**-53 not below ``x``."""
    return math.ceil(x * _GRID) / _GRID
