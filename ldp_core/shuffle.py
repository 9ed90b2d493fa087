"""Privacy amplification by shuffling: the same reports, anonymised, are (ε, δ)-DP for a small ε.

In the local model every report is ε0-DP on its own, because the analyst knows
who sent it. A *shuffler* (a mix-net, or a trusted party) strips identity and
timing from the reports and hands the analyst a random permutation of them; a
report then hides among the others (CS208, "The Local Model: Foundations",
2025: "anonymous participants, mix-nets"). The released multiset of n reports
is (ε, δ)-DP with ε far below ε0 when n is large.

* **Exact, for a yes/no design** with channel ``a = P(report 1 | truly 1)``,
  ``b = P(report 1 | truly 0)``. After a shuffler the analyst sees only K, the
  number of 1-reports. Fix the other n − 1 students with m true yeses:
  ``S_m = Bin(m, a) ⊕ Bin(n − 1 − m, b)`` and the two neighbouring releases
  are ``P = S_m ⊕ Bern(a)`` (your answer is yes) and ``Q = S_m ⊕ Bern(b)``
  (no): ``P(k) = a S_m(k − 1) + (1 − a) S_m(k)``. Then
  ``δ(ε) = max over m of the hockey-stick divergences in both directions,
  Σ_k (P − e^ε Q)₊ and Σ_k (Q − e^ε P)₊``, and ``ε(δ)`` is the smallest ε
  with ``δ(ε) ≤ δ`` (:func:`shuffle_delta`, :func:`shuffle_epsilon`).
* **An upper bound for any ε0-LDP randomizer** (unary encoding, GRR, the
  numeric mechanisms): Feldman, McMillan & Talwar, "Hiding Among the Clones"
  (FOCS 2021). Shuffling n ε0-DP reports is a post-processing of a pair of
  distributions built from ``C ~ Bin(n − 1, e^−ε0)`` "clones";
  :func:`clones_delta` and :func:`clones_epsilon` compute that pair's
  divergence exactly (their numerical bound), :func:`clones_closed_form` is
  their closed form, valid only where :func:`clones_closed_form_limit` allows.
* **The inverse**: :func:`shuffle_local_epsilon` is the largest ε0 each phone
  could use so that the shuffled release of n reports is (ε, δ)-DP.

Which m is worst. It is tempting to assume that the others all answer alike
(m = 0 or m = n − 1). It is false: for the class exercise (a = 3/4, b = 1/4)
with n = 200 at ε = 0.33, m = 1 (and, mirrored, m = 198) gives δ = 3.43e-6
against 3.33e-6 at the endpoints (a test checks it). δ(m) is not even unimodal
(the discrete thresholds make it zig-zag), so every m is scanned.

How, fast and to full relative precision. The releases ``P_m = S_m ⊕ Bern(a)``
and ``Q_{m+1} = S_{m+1} ⊕ Bern(b)`` are one and the same distribution
(``R_{m+1}``: m + 1 yeses among all n), so the pairs are the consecutive
members of one family. For each m:

1. *Only thresholds matter.* ``S_m`` is a sum of independent Bernoullis, hence
   log-concave, so the likelihood ratio ``P(k) / Q(k) = (a r + 1 − a) / (b r +
   1 − b)`` with ``r = S_m(k − 1) / S_m(k)`` rises with k (for a > b). The set
   where ``P > e^ε Q`` is therefore ``{k ≥ t}`` and
   ``Σ_k (P − e^ε Q)₊ = max_t [G_P(t) − e^ε G_Q(t)]`` with ``G`` the upper
   tails. The smallest ε with that ≤ δ is then closed-form:
   ``e^ε = max(1, max_t (G_P(t) − δ) / G_Q(t))``: no search over ε.
2. *Only thresholds above the mode.* For ``k`` at or below the mode of
   ``S_m``, ``r ≤ 1``, so ``P(k) ≤ Q(k) ≤ e^ε Q(k)`` and moving the threshold
   up past such k can only help: the maximum lies at ``t ≥ mode``, and the mode
   of a Poisson binomial is within 1 of its mean (Darroch 1964).
3. *The other direction* ``Σ (Q − e^ε P)₊`` uses the lower tails; relabelling
   the reports (K → n − K) turns it into the first direction for the design
   ``(1 − b, 1 − a)``. A symmetric design (``a = 1 − b``: the die, ε-RR) needs
   one direction only.
4. *All m at once, accurately.* ``S_m`` comes from an inverse FFT of its
   characteristic function in a window of the support that holds all but 1e-16
   of its mass (a Bernstein bound). A plain FFT is accurate to about 1e-16 of
   the peak, useless in a tail at 1e-12; so the distribution is first tilted
   (``S_m(k) e^{θk}``, again a Poisson binomial, with its mean moved about four
   SDs up), transformed, and untilted: the upper tail is then accurate
   *relatively*, to about 1e-10 (measured at n = 2,000 against exact integer
   arithmetic), from the mode down to probabilities of 1e-16. That is why δ
   may be as small as :data:`DELTA_MIN` = 1e-12.

For n = 2,000 this takes a few tens of milliseconds (``bench/bench_shuffle.py``);
results are cached per channel, n and δ.

Monotone in n, by proof: a release with one more student is the old release
plus an independent report, a post-processing. Monotone in ε0 for ε-RR, by
proof: RR at a smaller ε0 is RR at a larger one followed by a random flip.
The tests check both, and the FMT bound's monotonicity, numerically.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from . import _checks
from .binary import BinaryDesign, EpsilonRR, _channel_ab
from .categorical import FrequencyOracle
from .numeric import NumericDesign, NumericMechanism
from .survey import SurveyDesign

__all__ = [
    "DELTA_MIN",
    "ShuffleGuarantee",
    "clones_closed_form",
    "clones_closed_form_limit",
    "clones_delta",
    "clones_epsilon",
    "shuffle_delta",
    "shuffle_epsilon",
    "shuffle_guarantee",
    "shuffle_local_epsilon",
]

#: The smallest δ accepted: the computations resolve tail probabilities to about
#: 1e-10 relative down to 1e-16, so a δ below 1e-12 would be resolved poorly.
DELTA_MIN = 1e-12
#: Largest n for the exact yes/no computation (its cost grows as n^1.5).
EXACT_MAX_N = 20_000
#: Largest n for Feldman, McMillan & Talwar's numerical bound.
CLONES_MAX_N = 1_000_000
#: A window of the support holds all but this much of a distribution's mass (each side).
_TAIL = 1e-16
#: How many SDs the tilt moves a distribution's mean up (see the module docstring, 4.).
_TILT_SDS = 4.0
#: Most rows of one FFT batch: bounds the memory (128 was fastest here, cache-sized).
_CHUNK_ROWS = 128

#: A yes/no channel ``(a, 1 − a, b, 1 − b)``, each complement from the design's own branches.
Channel = tuple[float, float, float, float]


# -- validation -------------------------------------------------------------------------------
def _delta(delta: object) -> float:
    return _checks.in_range("delta", delta, DELTA_MIN, 1.0, hi_open=True)


def _n(n: object, hi: int) -> int:
    return _checks.integer("n", n, 1, hi)


def _epsilon(name: str, epsilon: object) -> float:
    eps = _checks.finite(name, epsilon)
    if eps < 0:
        raise ValueError(f"{name} must be >= 0, got {epsilon!r}")
    return eps


# -- the shared kernel: tails of S ⊕ Bern(a) and S ⊕ Bern(b) at each threshold ---------------
def _threshold_tails(pmf: np.ndarray, a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """Upper tails of ``P = S ⊕ Bern(a)`` and ``Q = S ⊕ Bern(b)``, one row per S.

    ``pmf[r, i] = S_r(off_r + i)`` on a window of S's support (the mass outside
    is negligible), set to zero below the lowest threshold that can matter
    (module docstring, 2.): thresholds down there then see ``P = Q`` and never
    win a maximum. Returns ``gp, gq`` of shape ``(rows, L + 1)`` with
    ``gp[r, i] = P[S_r + Bern(a) ≥ off_r + i] = P[S_r ≥ t] + a P[S_r = t − 1]``.
    """
    rows, width = pmf.shape
    gq = np.empty((rows, width + 1))
    gq[:, width] = 0.0
    np.cumsum(pmf[:, ::-1], axis=1, out=gq[:, width - 1::-1])  # P[S ≥ off + i]
    gp = gq.copy()
    step = pmf * a  # P[S = t − 1] times the coin
    gp[:, 1:] += step
    np.multiply(pmf, b, out=step)
    gq[:, 1:] += step
    return gp, gq


def _max_ratio(gp: np.ndarray, gq: np.ndarray, delta: float) -> float:
    """``max(1, max (gp − δ) / gq)`` over thresholds with ``gp > δ``: ``e^ε(δ)``."""
    live = gp > delta
    if not live.any():
        return 1.0
    num, den = gp[live] - delta, gq[live]
    if np.any(den <= 0.0):
        return math.inf
    return max(1.0, float(np.max(num / den)))


def _max_hockey(gp: np.ndarray, gq: np.ndarray, ratio: float) -> np.ndarray:
    """Per row, ``max(0, max_t gp − e^ε gq)``: the hockey-stick divergence at ``e^ε = ratio``."""
    return np.maximum(np.max(gp - ratio * gq, axis=1), 0.0)


def _halfwidth(var: np.ndarray | float, count: int) -> np.ndarray:
    """Half-widths h with ``P(|X − E X| ≥ h) ≤ 2 · _TAIL`` for a sum of ``count`` independent
    variables in [0, 1] with variance ``var``: the better of Hoeffding's and Bernstein's bounds."""
    c = -math.log(_TAIL)
    hoeffding = math.sqrt(c * count / 2)
    bernstein = c / 3 + np.sqrt((c / 3) ** 2 + 2 * c * np.asarray(var, dtype=float))
    return np.ceil(np.minimum(hoeffding, bernstein)) + 1


# -- exact: yes/no designs ---------------------------------------------------------------------
def _exact_rows(a: float, qa: float, b: float, qb: float, n: int
                ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield ``(gp, gq)`` for batches of m = 0..n − 1 (see ``_threshold_tails``), a > b.

    ``S_m = Bin(m, a) ⊕ Bin(n − 1 − m, b)`` by an inverse FFT of its tilted
    characteristic function (module docstring, 4.).
    """
    big_n = n - 1
    m_all = np.arange(n)
    sd_all = np.sqrt(m_all * a * qa + (big_n - m_all) * b * qb)
    # batches of rows whose SDs agree within 10% (one tilt suits them all), at most
    # _CHUNK_ROWS long; the SD is monotone in m, so its 10% bands are runs of rows
    band = np.floor(np.log(np.maximum(sd_all, 1e-300)) / math.log(1.1)).astype(np.int64)
    cuts = np.flatnonzero(np.diff(band)) + 1
    edges = np.union1d(np.r_[cuts, n], np.arange(0, n, _CHUNK_ROWS))
    for start, stop in zip(edges[:-1], edges[1:], strict=True):
        sd = sd_all[start:stop]
        yield _exact_batch(a, qa, b, qb, big_n, m_all[start:stop], math.sqrt(sd[0] * sd[-1]))


def _smooth_odd(x: int) -> int:
    """The smallest odd number ≥ x with no prime factor above 7: a fast FFT length."""
    x += 1 - x % 2
    while True:
        y = x
        for p in (3, 5, 7):
            while y % p == 0:
                y //= p
        if y == 1:
            return x
        x += 2


def _exact_batch(a: float, qa: float, b: float, qb: float, big_n: int, m: np.ndarray,
                 sd: float) -> tuple[np.ndarray, np.ndarray]:
    others_no = big_n - m
    # θ ≤ 1: a class this small (SD below 4) is a lattice of a few dozen points, where a
    # stronger tilt would only magnify rounding at its far end
    theta = min(_TILT_SDS / sd, 1.0) if sd > 0 else 0.0
    grow = math.expm1(theta)
    da, db = 1 + a * grow, 1 + b * grow  # E[e^{θ·Bern}] for each coin
    at, qat, bt, qbt = a * (1 + grow) / da, qa / da, b * (1 + grow) / db, qb / db
    mean = m * a + others_no * b
    mean_t = m * at + others_no * bt
    half = _halfwidth(m * at * qat + others_no * bt * qbt, big_n)
    first = np.floor(mean).astype(np.int64) - 2  # below the mode (Darroch 1964), with room
    lo = np.maximum(np.minimum(first - 1, np.floor(mean_t - half)), 0).astype(np.int64)
    hi = np.minimum(np.ceil(mean_t + half), big_n).astype(np.int64)
    width = _smooth_odd(int(np.max(hi - lo)) + 1)  # odd: no ω = π, where a coin of ½ has a zero
    if width > big_n + 1:
        width = big_n + 1 + (1 - (big_n + 1) % 2)
    off = np.maximum(np.minimum(lo, big_n + 1 - width), 0)
    freq = 2 * np.pi * np.arange(width // 2 + 1) / width
    # |E e^{−iωS}| ≤ exp(−Var(S) (1 − cos ω)) (each coin: 1 − x ≤ e^{−x}), so frequencies
    # where that is below _TAIL add less than _TAIL to any probability: left at zero
    var_low = float(np.min(m * at * qat + others_no * bt * qbt))
    used = int(np.searchsorted(var_low * (1 - np.cos(freq)), -math.log(_TAIL), side="right"))
    f = freq[:used]
    z = np.exp(-1j * f)
    log_a, log_b = np.log(qat + at * z), np.log(qbt + bt * z)
    spectrum = np.zeros((len(m), len(freq)), dtype=complex)
    block = np.outer(m, log_a - log_b)
    block += big_n * log_b
    block += 1j * np.outer(off, f)
    spectrum[:, :used] = np.exp(block)
    pmf = np.fft.irfft(spectrum, n=width, axis=1)
    np.maximum(pmf, 0.0, out=pmf)
    # untilt: S(k) = S_θ(k) · M(θ) · e^{−θ k}, M(θ) = (1 + a(e^θ − 1))^m (1 + b(e^θ − 1))^rest
    log_mgf = m * math.log1p(a * grow) + others_no * math.log1p(b * grow)
    i = np.arange(width)
    pmf *= np.exp(log_mgf - theta * off)[:, None]
    pmf *= np.exp(-theta * i)[None, :]
    pmf[i[None, :] < (first - 1 - off)[:, None]] = 0.0  # not needed; the untilt magnifies noise
    if b == 0 or qa == 0:  # exact zeros outside the support: a coin that never lies or says yes
        k = off[:, None] + i[None, :]
        support_hi = m + (others_no if b > 0 else 0)
        support_lo = m if qa == 0 else np.zeros_like(m)
        pmf[(k > support_hi[:, None]) | (k < support_lo[:, None])] = 0.0
    return _threshold_tails(pmf, a, b)


def _oriented(design: BinaryDesign) -> Channel:
    """``(a, 1 − a, b, 1 − b)`` with a ≥ b: a design with a < b is the same design with its
    reports relabelled, which a shuffled count does not care about."""
    if not isinstance(design, BinaryDesign):
        raise ValueError(f"design must be a yes/no design (BinaryDesign), got {design!r}")
    a, b, qa, qb = _channel_ab(design)
    if a < b:
        a, b, qa, qb = qa, qb, a, b
    return a, qa, b, qb


def _directions(a: float, qa: float, b: float, qb: float) -> list[Channel]:
    """The design and, unless it is symmetric, its mirror ``(1 − b, 1 − a)``: the upper tails
    of both cover both directions of the hockey-stick divergence."""
    mirror = (qb, b, qa, a)
    if abs(qb - a) <= 1e-15 and abs(qa - b) <= 1e-15:
        return [(a, qa, b, qb)]
    return [(a, qa, b, qb), mirror]


@functools.lru_cache(maxsize=256)
def _exact_epsilon(a: float, qa: float, b: float, qb: float, n: int, delta: float) -> float:
    if a == b:
        return 0.0
    best = 1.0
    for direction in _directions(a, qa, b, qb):
        for gp, gq in _exact_rows(*direction, n):
            best = max(best, _max_ratio(gp, gq, delta))
            if math.isinf(best):
                return math.inf
    return math.log(best)


@functools.lru_cache(maxsize=256)
def _exact_delta(a: float, qa: float, b: float, qb: float, n: int, epsilon: float) -> float:
    if a == b:
        return 0.0
    ratio = math.exp(epsilon)
    worst = 0.0
    for direction in _directions(a, qa, b, qb):
        for gp, gq in _exact_rows(*direction, n):
            worst = max(worst, float(np.max(_max_hockey(gp, gq, ratio))))
    return min(worst, 1.0)


def shuffle_delta(design: BinaryDesign, n: int, epsilon: float) -> float:
    """Exact δ(ε) of n shuffled reports of a yes/no design: what a shuffler's output leaks.

    The largest hockey-stick divergence ``Σ_k (P(k) − e^ε Q(k))₊`` over every
    class of the other n − 1 students and both directions (module docstring).
    Accurate to about 1e-14 absolute, and to eight digits or more deep in the
    tails (tested against direct summation at δ from 1e-19 down to 1e-28).

    >>> from ldp_core import DieRR
    >>> f"{shuffle_delta(DieRR(4, 3), 100, 0.5501):.4g}"
    '9.985e-07'
    >>> shuffle_delta(DieRR(4, 3), 1, math.log(3))  # alone, a report is ln 3-DP
    0.0
    """
    n = _n(n, EXACT_MAX_N)
    eps = _epsilon("epsilon", epsilon)
    return _exact_delta(*_oriented(design), n, eps)


def shuffle_epsilon(design: BinaryDesign, n: int, delta: float) -> float:
    """Exact ε(δ): the smallest ε such that n shuffled reports of ``design`` are (ε, δ)-DP.

    Closed-form once the tails are known (module docstring, 1.): no search.
    ``math.inf`` for a design that reveals some answers outright (b = 0 or
    a = 1) when δ is below the chance of such a report.

    >>> from ldp_core import DieRR, EpsilonRR
    >>> round(shuffle_epsilon(DieRR(4, 3), 100, 1e-6), 4)  # the class exercise, 100 students
    0.5501
    >>> round(shuffle_epsilon(EpsilonRR(0.4), 5000, 1e-6), 5)
    0.01844
    """
    n = _n(n, EXACT_MAX_N)
    return _exact_epsilon(*_oriented(design), n, _delta(delta))


# -- Feldman, McMillan & Talwar: any ε0-LDP randomizer ----------------------------------------
def _log_binomial_pmf(count: int, p: float, k: np.ndarray) -> np.ndarray:
    """``ln P[Bin(count, p) = k]`` by ``math.lgamma`` (k inside 0..count)."""
    lg = np.frompyfunc(math.lgamma, 1, 1)
    kf = k.astype(float)
    log_choose = (math.lgamma(count + 1) - lg(kf + 1).astype(float)
                  - lg(count - kf + 1).astype(float))
    log_q = math.log1p(-p) if p < 1 else -math.inf
    with np.errstate(invalid="ignore"):
        tail = np.where(count - kf > 0, (count - kf) * log_q, 0.0)
        head = np.where(kf > 0, kf * math.log(p), 0.0) if p > 0 else np.where(kf > 0, -np.inf, 0.)
    return log_choose + head + tail


@dataclass(frozen=True)
class _Clones:
    """The clones pair of Feldman, McMillan & Talwar for (ε0, n), ready for any ε.

    With ``C ~ Bin(n − 1, e^−ε0)`` clones, ``A ~ Bin(C, 1/2)`` and
    ``α = e^ε0 / (1 + e^ε0)``, the shuffled output of any ε0-DP local
    randomizers on neighbouring data sets is a post-processing of
    ``P = (A + Δ, C − A + 1 − Δ)`` and ``Q = (A + 1 − Δ, C − A + Δ)``,
    ``Δ ~ Bern(α)`` (their Theorem 3.2). Given C = c the first coordinate
    determines the pair, so ``D_{e^ε}(P ‖ Q) = Σ_c P[C = c] · D_c`` with ``D_c``
    the divergence of ``Bin(c, 1/2) ⊕ Bern(α)`` from ``Bin(c, 1/2) ⊕ Bern(1 − α)``:
    the symmetric case of the exact computation above, by symmetry the same in
    both directions. Here ``Bin(c, 1/2)`` is exact in log space (no FFT needed).
    """

    weights: np.ndarray  # P[C = c] for the rows kept
    rows: np.ndarray  # c
    off: np.ndarray
    gp: np.ndarray
    gq: np.ndarray
    omitted: float  # an upper bound on the mass of C outside the rows kept
    alpha: float

    @classmethod
    def build(cls, epsilon0: float, n: int) -> _Clones:
        big_n = n - 1
        p = math.exp(-epsilon0)
        alpha = 1 / (1 + math.exp(-epsilon0))
        q_alpha = 1 / (1 + math.exp(epsilon0))
        half_c = float(_halfwidth(big_n * p * (1 - p), big_n))
        lo = max(0, math.floor(big_n * p - half_c))
        hi = min(big_n, math.ceil(big_n * p + half_c))
        rows = np.arange(lo, hi + 1)
        weights = np.exp(_log_binomial_pmf(big_n, p, rows))
        omitted = 2 * _TAIL if (lo > 0 or hi < big_n) else 0.0
        log_fact = np.array([math.lgamma(x + 1) for x in range(hi + 1)])
        # Bin(c, 1/2) from the lowest threshold that can matter up to where its tail ends
        first = np.floor(rows / 2).astype(np.int64) - 2
        off = np.maximum(first - 1, 0)
        top = np.minimum(np.ceil(rows / 2 + _halfwidth(rows / 4, max(hi, 1))), rows)
        width = int(np.max(top - off)) + 1
        gp = np.empty((len(rows), width + 1))
        gq = np.empty_like(gp)
        for start in range(0, len(rows), _CHUNK_ROWS):
            part = slice(start, start + _CHUNK_ROWS)
            c, o = rows[part], off[part]
            k = o[:, None] + np.arange(width)[None, :]
            inside = k <= c[:, None]
            kk = np.where(inside, k, 0)
            log_pmf = (log_fact[c][:, None] - log_fact[kk]
                       - log_fact[np.where(inside, c[:, None] - kk, 0)] - c[:, None] * math.log(2))
            pmf = np.where(inside, np.exp(log_pmf), 0.0)
            pmf[k < (first[part] - 1)[:, None]] = 0.0
            gp[part], gq[part] = _threshold_tails(pmf, alpha, q_alpha)
        return cls(weights, rows, off, gp, gq, omitted, alpha)

    def delta_and_slope(self, ratio: float) -> tuple[float, float]:
        """``δ(ε)`` at ``e^ε = ratio`` and ``−dδ/d(e^ε)``.

        For each c the optimal set is ``{k ≥ t_c}``: ``P(k) / Q(k) > e^ε`` where
        ``k / (c − k + 1) > r* = (e^ε α − ᾱ) / (α − e^ε ᾱ)``.
        """
        a, qa = self.alpha, 1 - self.alpha
        if ratio * qa >= a:
            return self.omitted, 0.0
        r_star = (ratio * a - qa) / (a - ratio * qa)
        t = np.floor(r_star * (self.rows + 1) / (1 + r_star)).astype(np.int64) + 1
        col = np.clip(t - self.off, 0, self.gp.shape[1] - 1)
        idx = np.arange(len(self.rows))
        gp, gq = self.gp[idx, col], self.gq[idx, col]
        gain = np.maximum(gp - ratio * gq, 0.0)
        delta = float(np.sum(self.weights * gain))
        slope = float(np.sum(self.weights * np.where(gain > 0, gq, 0.0)))
        return delta + self.omitted, slope


def _clones_ratio(clones: _Clones, delta: float) -> float:
    """The smallest ``e^ε`` with ``δ(ε) ≤ delta``, by Newton's method from ε = 0.

    δ as a function of ``e^ε`` is a maximum of lines per c, so convex, decreasing
    and piecewise linear: Newton from the left never overshoots the root and
    lands on it once it reaches the root's piece.
    """
    ratio = 1.0
    for _ in range(200):
        value, slope = clones.delta_and_slope(ratio)
        if value <= delta * (1 + 1e-12):
            return ratio
        if slope <= 0:
            return math.inf
        ratio += (value - delta) / slope
    return ratio


def clones_delta(epsilon0: float, n: int, epsilon: float) -> float:
    """Feldman, McMillan & Talwar's numerical bound on δ(ε) for n shuffled ε0-LDP reports.

    An upper bound for every ε0-LDP randomizer (their Theorem 3.2), computed
    exactly here (their reference code bounds it from above and below by
    grouping the clone counts). See :class:`_Clones`.

    >>> clones_delta(math.log(3), 1, math.log(3))
    0.0
    """
    eps0 = _epsilon("epsilon0", epsilon0)
    n = _n(n, CLONES_MAX_N)
    eps = _epsilon("epsilon", epsilon)
    if eps0 == 0:
        return 0.0
    return min(1.0, _Clones.build(eps0, n).delta_and_slope(math.exp(eps))[0])


@functools.lru_cache(maxsize=256)
def _clones_epsilon(epsilon0: float, n: int, delta: float) -> float:
    if epsilon0 == 0:
        return 0.0
    return min(epsilon0, math.log(_clones_ratio(_Clones.build(epsilon0, n), delta)))


def clones_epsilon(epsilon0: float, n: int, delta: float) -> float:
    """Feldman, McMillan & Talwar's numerical bound: shuffled n ε0-LDP reports are (ε, δ)-DP.

    Holds for any ε0-LDP randomizer. Their README's example, n = 10^5, ε0 = 4,
    δ = 1e-6, brackets it in [0.16754, 0.17279]:

    >>> 0.16754 <= clones_epsilon(4.0, 100_000, 1e-6) <= 0.17279
    True
    """
    eps0 = _epsilon("epsilon0", epsilon0)
    if math.isinf(eps0):
        return math.inf
    return _clones_epsilon(eps0, _n(n, CLONES_MAX_N), _delta(delta))


def clones_closed_form_limit(n: int, delta: float) -> float:
    """The largest ε0 for which :func:`clones_closed_form` holds: ``ln(n / (16 ln(4/δ)))``.

    Feldman, McMillan & Talwar's Theorem 3.1 asks ``ε0 ≤ ln(n / (16 ln(2/δ)))``;
    this is their reference implementation's slightly stricter form. Negative
    when n < 16 ln(4/δ): then no ε0 qualifies.

    >>> round(clones_closed_form_limit(100_000, 1e-6), 4)
    6.0189
    """
    n = _checks.integer("n", n, 1)
    d = _delta(delta)
    ratio = n / (16 * math.log(4 / d))
    return math.log(ratio)


def clones_closed_form(epsilon0: float, n: int, delta: float) -> float | None:
    """Feldman, McMillan & Talwar's closed form, or None outside its validity condition.

    With ``A = 8 √(e^ε0 ln(4/δ) / n) + 8 e^ε0 / n``:
    ``ε ≤ ln(1 + (1 − e^−ε0) / (1 + e^−(ε0 + ln(1 + A))) · A)``, valid for
    ``ε0 ≤ ln(n / (16 ln(4/δ)))`` (:func:`clones_closed_form_limit`; in the
    form of their reference implementation). Their README: n = 10^5, ε0 = 4,
    δ = 1e-6 gives 0.5378.

    >>> round(clones_closed_form(4.0, 100_000, 1e-6), 4)
    0.5378
    >>> clones_closed_form(4.0, 1_000, 1e-6) is None  # too few reports for this ε0
    True
    """
    eps0 = _epsilon("epsilon0", epsilon0)
    n = _checks.integer("n", n, 1)
    d = _delta(delta)
    if eps0 > clones_closed_form_limit(n, d):
        return None
    big_a = 8 * math.sqrt(math.exp(eps0) * math.log(4 / d) / n) + 8 * math.exp(eps0) / n
    shrink = -math.expm1(-eps0) / (1 + math.exp(-eps0 - math.log1p(big_a)))
    return math.log1p(shrink * big_a)


# -- the inverse: the largest local ε0 ----------------------------------------------------------
_RANDOMIZERS = ("rr", "any")


def _largest(feasible: Callable[[float], bool], lo: float, hi_cap: float,
             tol: float = 1e-5) -> float:
    """The largest x in [lo, hi_cap] with ``feasible(x)``, for a monotone ``feasible`` true
    at ``lo``; the answer errs on the feasible side."""
    step = max(1.0, lo)
    hi = lo + step
    while hi < hi_cap and feasible(hi):
        lo, step = hi, 2 * step
        hi = lo + step
    if hi >= hi_cap:
        if feasible(hi_cap):
            return hi_cap
        hi = hi_cap
    while hi - lo > tol * max(1.0, lo):
        mid = (lo + hi) / 2
        if feasible(mid):
            lo = mid
        else:
            hi = mid
    return lo


@functools.lru_cache(maxsize=256)
def _local_epsilon(n: int, epsilon: float, delta: float, randomizer: str) -> float:
    if randomizer == "rr":
        cap = EpsilonRR.MAX_EPSILON

        def feasible(e0: float) -> bool:
            return _exact_delta(*_oriented(EpsilonRR(e0)), n, epsilon) <= delta
    else:
        cap = 30.0

        def feasible(e0: float) -> bool:
            return _Clones.build(e0, n).delta_and_slope(math.exp(epsilon))[0] <= delta
    lo = max(epsilon, EpsilonRR.MIN_EPSILON)
    return _largest(feasible, lo, cap)


def shuffle_local_epsilon(n: int, epsilon: float, delta: float, *,
                          randomizer: str = "rr") -> float:
    """The largest local ε0 each phone could use so that n shuffled reports are (ε, δ)-DP.

    ``randomizer="rr"``: each phone answers a yes/no question with ε0-RR, and the
    shuffled guarantee is the exact one (:func:`shuffle_epsilon`).
    ``randomizer="any"``: any ε0-LDP randomizer, by Feldman, McMillan & Talwar's
    bound (:func:`clones_epsilon`). The answer errs toward privacy (a hair
    below the exact root) and is at least ε: a report that is ε-DP on its own
    stays ε-DP after shuffling. For "rr" it is at most ``EpsilonRR.MAX_EPSILON``.

    >>> e0 = shuffle_local_epsilon(100, 0.5501, 1e-6)
    >>> round(e0, 3)  # the class exercise's die (ln 3 = 1.0986) just fits
    1.099
    """
    n = _n(n, EXACT_MAX_N if randomizer == "rr" else CLONES_MAX_N)
    eps = _checks.positive("epsilon", epsilon)
    d = _delta(delta)
    if randomizer not in _RANDOMIZERS:
        raise ValueError(f"randomizer must be one of {_RANDOMIZERS}, got {randomizer!r}")
    return _local_epsilon(n, eps, d, randomizer)


# -- what a page shows ------------------------------------------------------------------------
@dataclass(frozen=True)
class ShuffleGuarantee:
    """What n reports of one design would guarantee through a shuffler.

    ``epsilon`` is exact for a yes/no design (``exact=True``) and Feldman,
    McMillan & Talwar's upper bound otherwise; ``local_epsilon`` is the ε0 of one
    report on its own. ``math.inf`` when the design has no finite ε0.
    """

    epsilon: float
    delta: float
    n: int
    local_epsilon: float
    exact: bool


Design = BinaryDesign | FrequencyOracle | NumericMechanism | NumericDesign


def shuffle_guarantee(design: Design, n: int, delta: float = 1e-6) -> ShuffleGuarantee:
    """The shuffled (ε, δ) of n reports under ``design``: exact for yes/no, bounded otherwise.

    Exact for a yes/no design up to :data:`EXACT_MAX_N` reports; beyond that, and for
    every other design, Feldman, McMillan & Talwar's bound (beyond
    :data:`CLONES_MAX_N` reports, the bound at that many, which still holds: a release
    with more reports is a post-processing of one with fewer).

    >>> from ldp_core import DieRR, GRR
    >>> g = shuffle_guarantee(DieRR(4, 3), 100)
    >>> g.exact, round(g.epsilon, 4), round(g.local_epsilon, 4)
    (True, 0.5501, 1.0986)
    >>> shuffle_guarantee(GRR(4, 1.0), 100).exact
    False
    """
    d = _delta(delta)
    n = _checks.integer("n", n, 1)
    if isinstance(design, BinaryDesign):
        if n <= EXACT_MAX_N:
            return ShuffleGuarantee(shuffle_epsilon(design, n, d), d, n, design.epsilon, True)
        eps0 = design.epsilon
    elif isinstance(design, (FrequencyOracle, NumericDesign, NumericMechanism, SurveyDesign)):
        eps0 = design.epsilon  # a survey: a phone's whole set of reports is one ε0 report
    else:
        raise ValueError(f"design must be a yes/no design, a frequency oracle, a numeric "
                         f"mechanism or a survey, got {design!r}")
    # beyond CLONES_MAX_N the bound at CLONES_MAX_N still holds: more reports never hurt
    return ShuffleGuarantee(clones_epsilon(eps0, min(n, CLONES_MAX_N), d), d, n, eps0, False)
