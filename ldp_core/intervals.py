"""Confidence intervals for the true share behind yes/no randomized reports, and their
exact coverage.

A design with channel ``a = P(report 1 | truly 1)`` and ``b = P(report 1 | truly 0)``
turns a true share mu into the report probability ``lambda = b + (a - b) mu``, and the
number of "yes" reports among n is ``Binomial(n, lambda)`` when the respondents are
drawn from a population (Warner 1965). Three intervals for mu:

* ``"exact"``: the Clopper-Pearson (1934) interval for lambda, mapped through
  ``mu = (lambda - b) / (a - b)`` and clipped to [0, 1]. It inverts two one-sided
  binomial tests, so it covers the true share in at least ``level`` of classes at
  every share and every n; when even the nearest share makes the count improbable
  (fewer reports of "yes" than an all-"no" class would give), it is the single point at
  that edge, never empty. The dashboard's headline "95% CI".
* ``"likelihood_ratio"``: ``{mu : 2 (l(mle) - l(mu)) <= chi2_1(level)}`` (Wilks; the CS208
  notes' likelihood-based correction); it stays in [0, 1] but covers a little less than
  ``level`` at some shares.
* ``"normal"``: ``mu_hat -/+ z sd_worst``, the large-n approximation the course derives
  by hand; at classroom sizes it covers as little as 83-90% at some shares (the class
  exercise, students drawn from a population), and far less at a large epsilon.

``"feldman_cousins"`` (Feldman & Cousins 1998: the likelihood-ratio ordering of counts,
with the MLE constrained to [0, 1]) is built on a grid of shares and covers ``level``
only at the grid's own points; it is here to be compared (docs/intervals.md).

Coverage is computed exactly, never simulated: for each true share, the binomial
probabilities of the counts whose interval contains it are summed
(:func:`interval_coverage`). ``model="class"`` gives the coverage for a fixed class of n
whose share is v / n, where only the randomization varies: the count is then
``Binomial(v, a) + Binomial(n - v, b)``.

Pure numpy: the binomial probabilities come from a log-gamma function (Stirling's
series), the beta quantiles of Clopper-Pearson from the regularised incomplete beta
function (its continued fraction, modified Lentz), solved by Newton's method on its
logarithm.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from statistics import NormalDist
from typing import Any

import numpy as np

from . import _checks
from .binary import report_probability
from .formulas import coefficients_ab, variance_unit_ab
from .quantiles import chi2_1_quantile, z_quantile

__all__ = [
    "INTERVAL_METHODS",
    "coverage_shares",
    "exact_interval",
    "expected_width",
    "feldman_cousins_interval",
    "interval_coverage",
    "share_intervals",
]

#: The intervals :func:`share_intervals` and :func:`interval_coverage` know.
INTERVAL_METHODS = ("exact", "likelihood_ratio", "normal", "feldman_cousins")

#: Shares in the grid on which the Feldman-Cousins acceptance regions are built.
FC_GRID = 2001

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_TINY = 1e-300
#: Binomial probabilities are summed over nlambda +/- (_SPREAD sd + _SPREAD): the mass
#: left out is below 1e-20 (Chernoff), far below what a coverage of four decimals needs.
_SPREAD = 10.0


# -- special functions --------------------------------------------------------------------
def _stirling(z: np.ndarray) -> np.ndarray:
    """``ln Gamma(z)`` by Stirling's series, for z >= 16 (the next term is below 2e-14)."""
    zi = 1 / z
    zi2 = zi * zi
    series = zi * (1 / 12 - zi2 * (1 / 360 - zi2 * (1 / 1260 - zi2 * (1 / 1680
                                                                       - zi2 / 1188))))
    return (z - 0.5) * np.log(z) - z + _LOG_SQRT_2PI + series


def _log_gamma(x: np.ndarray) -> np.ndarray:
    """``ln Gamma(x)`` for x > 0, vectorised: Stirling's series at ``z = x + k >= 16``,
    ``ln Gamma(x) = ln Gamma(z) - ln(x (x + 1) ... (z - 1))``. Relative error below 2e-14."""
    x = np.asarray(x, dtype=float)
    out = _stirling(np.maximum(x, 16.0))
    small = x < 16.0
    if small.any():  # shift the few small arguments up to 16 and back down
        xs = x[small]
        shift = np.ceil(16.0 - xs)
        down = np.zeros_like(xs)
        for k in range(int(shift.max())):
            down += np.log(np.where(shift > k, xs + k, 1.0))
        out[small] = _stirling(xs + shift) - down
    return out


@functools.lru_cache(maxsize=8)
def _log_factorial_table(size: int) -> np.ndarray:
    """``ln k!`` for k = 0..size-1 (read-only, cached)."""
    out = _log_gamma(np.arange(size, dtype=float) + 1)
    out.flags.writeable = False
    return out


def _log_factorials(n: int) -> np.ndarray:
    """``ln k!`` for k = 0..n, from a cached table of the next power of two."""
    return _log_factorial_table(1 << max(6, (n + 1).bit_length()))[: n + 1]


def _loglik(n: np.ndarray, yes: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """``y ln(lambda) + (n - y) ln(1 - lambda)``, -inf (never NaN) where impossible."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.where(yes > 0, yes * np.log(lam), 0.0)
                + np.where(n - yes > 0, (n - yes) * np.log1p(-lam), 0.0))


def _binom_logpmf(k: np.ndarray, n: int, p: object) -> np.ndarray:
    """``ln P(Binomial(n, p) = k)`` for whole k (any shape, broadcast against p); -inf
    (never NaN) where impossible."""
    k = np.asarray(k)
    inside = (k >= 0) & (k <= n)
    kk = np.where(inside, k, 0)
    log_fact = _log_factorials(n)
    comb = log_fact[n] - log_fact[kk] - log_fact[n - kk]
    return np.where(inside, comb + _loglik(np.asarray(float(n)), kk.astype(float),
                                           np.asarray(p, dtype=float)), -np.inf)


def _betacf(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The continued fraction of the incomplete beta function, element by element; one
    element is computed in Python floats (the same arithmetic, without numpy's cost per
    call, which would be most of a dashboard refresh's interval)."""
    if x.size == 1:
        return np.full(x.shape, _lentz(float(a.flat[0]), float(b.flat[0]), float(x.flat[0])))
    return np.asarray(_lentz(a, b, x))


def _lentz(a: Any, b: Any, x: Any) -> Any:
    """The continued fraction of the incomplete beta function (modified Lentz; Press et al.,
    Numerical Recipes 6.4), iterated until every element has converged. Only arithmetic,
    so it runs on floats and on arrays alike."""
    qab, qap, qam = a + b, a + 1, a - 1
    # Lentz's guard against a zero denominator: adding _TINY changes no other value
    c = 1.0 + 0.0 * x
    d = 1 / (1 - qab * x / qap + _TINY)
    h = d
    done: Any = False
    for m in range(1, 1_000_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1 / (1 + aa * d + _TINY)
        c = 1 + aa / c + _TINY
        h = h * d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1 / (1 + aa * d + _TINY)
        c = 1 + aa / c + _TINY
        step = d * c
        h = h * step
        done = done | (abs(step - 1) < 1e-15)  # once converged, the terms stay 1 to an ulp
        if done if isinstance(done, bool) else done.all():
            break
    return h


def _log_betainc(a: np.ndarray, b: np.ndarray, x: np.ndarray, log_beta: np.ndarray
                 ) -> np.ndarray:
    """``ln I_x(a, b)``, the regularised incomplete beta function, for a, b > 0 and
    0 < x < 1, kept in logs so that no tail underflows.

    ``P(Binomial(n, p) >= k) = I_p(k, n - k + 1)``. The continued fraction converges
    fast below ``x = (a + 1) / (a + b + 2)``; above it, ``1 - I_(1-x)(b, a)``.
    ``log_beta`` is ``ln B(a, b)``."""
    log_front = a * np.log(x) + b * np.log1p(-x) - log_beta
    flip = x >= (a + 1) / (a + b + 2)
    big_a, big_b = np.where(flip, b, a), np.where(flip, a, b)
    log_part = log_front + np.log(_betacf(big_a, big_b, np.where(flip, 1 - x, x)) / big_a)
    return np.where(flip, np.log1p(-np.exp(np.minimum(log_part, 0.0))), log_part)


def _beta_quantile(q: float, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The x in (0, 1) with ``I_x(a, b) = q``, for a, b >= 1.

    Solved for the smaller tail (``I_x(a, b) = q`` is ``I_(1-x)(b, a) = 1 - q``) by
    Newton's method on ``h(u) = ln I_(e^u)(a, b) - ln q``: the beta density is
    log-concave in u = ln x when b >= 1, so h is concave and increasing, and Newton's
    steps close in on the root from below after at most one step, quadratically."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    flip = q > 0.5
    p, r, target = (b, a, 1 - q) if flip else (a, b, q)
    log_target = math.log(target)
    log_beta = _log_gamma(p) + _log_gamma(r) - _log_gamma(p + r)
    # start from the normal approximation: near the root, where the continued fraction
    # converges in a few terms (at the mean it needs hundreds)
    mean = p / (p + r)
    guess = mean + NormalDist().inv_cdf(target) * np.sqrt(mean * (1 - mean) / (p + r + 1))
    u = np.log(np.clip(guess, mean * 1e-3, mean))
    active = np.ones(p.shape, dtype=bool)
    for _ in range(100):
        ua, pa, ra = u[active], p[active], r[active]
        y = np.exp(ua)
        log_cdf = _log_betainc(pa, ra, y, log_beta[active])
        # d ln I / du = y f(y) / I, with f the beta density
        slope = np.exp(pa * ua + (ra - 1) * np.log1p(-y) - log_beta[active] - log_cdf)
        step = (log_cdf - log_target) / slope
        new = np.minimum(ua - step, ua / 2)  # x stays below 1
        u[active] = new
        done = np.abs(new - ua) <= 1e-14
        idx = np.flatnonzero(active)
        active[idx[done]] = False
        if not active.any():
            break
    x = np.exp(u)
    return 1 - x if flip else x


# -- the intervals ------------------------------------------------------------------------
def _channel(a: object, b: object) -> tuple[float, float]:
    fa = _checks.in_range("a", a, 0.0, 1.0)
    fb = _checks.in_range("b", b, 0.0, 1.0)
    if fa == fb:
        raise ValueError(f"a == b = {fa!r}: the reports carry no information about the share")
    return fa, fb


def _counts(n: object, yes: object) -> tuple[np.ndarray, np.ndarray]:
    nn = _checks.count_array("n", n)
    if np.any(nn < 1):
        raise ValueError("n must be at least 1 (no interval without reports)")
    yy = _checks.count_array("yes", yes)
    nn, yy = np.broadcast_arrays(nn, yy)
    if np.any(yy > nn):
        raise ValueError("yes must be <= n (the number of reports)")
    return nn.astype(float), yy.astype(float)


def _to_share(a: float, b: float, lam_low: np.ndarray, lam_high: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """Map a lambda interval to mu and clip it to [0, 1]; an interval wholly beyond an
    edge becomes that edge (never empty)."""
    ends = ((lam_low - b) / (a - b), (lam_high - b) / (a - b))
    low, high = (ends[0], ends[1]) if a > b else (ends[1], ends[0])
    low = np.where(low > 1.0, 1.0, np.maximum(low, 0.0))
    high = np.where(high < 0.0, 0.0, np.minimum(high, 1.0))
    return low, high


def _clopper_pearson(n: np.ndarray, yes: np.ndarray, level: float
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson for the report probability: the beta quantiles
    ``B(alpha/2; y, n - y + 1)`` and ``B(1 - alpha/2; y + 1, n - y)``."""
    tail = (1 - level) / 2
    low, high = np.zeros(yes.shape), np.ones(yes.shape)
    some = yes > 0
    if some.any():
        low[some] = _beta_quantile(tail, yes[some], n[some] - yes[some] + 1)
    short = yes < n
    if short.any():
        high[short] = _beta_quantile(1 - tail, yes[short] + 1, n[short] - yes[short])
    return low, high


def _shape(x: np.ndarray, like: object) -> Any:
    """A float when ``like`` is a scalar, else the array."""
    return float(x) if np.asarray(like).ndim == 0 else x


def exact_interval(a: float, b: float, n: object, yes: object, level: float = 0.95
                   ) -> tuple[Any, Any]:
    """The exact interval for the true share: Clopper-Pearson on lambda, mapped, clipped.

    ``a``, ``b`` is the design's channel; ``yes`` of ``n`` reports said yes (integers or
    arrays of them, broadcast together). Covers the true share with probability at least
    ``level`` at every share in [0, 1] and every n (Clopper & Pearson 1934); never empty.

    The report probability for 10 "yes" of 30 (the channel a = 1, b = 0 reports the
    truth), then the share under the class exercise's die (a = 3/4, b = 1/4):

    >>> [round(v, 6) for v in exact_interval(1.0, 0.0, 30, 10)]
    [0.172874, 0.52812]
    >>> [round(v, 4) for v in exact_interval(0.75, 0.25, 30, 10)]
    [0.0, 0.5562]
    """
    fa, fb = _channel(a, b)
    lv = _checks.in_range("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    nn, yy = _counts(n, yes)
    lam_low, lam_high = _clopper_pearson(nn, yy, lv)
    low, high = _to_share(fa, fb, lam_low, lam_high)
    like = np.broadcast_arrays(np.asarray(n), np.asarray(yes))[0]
    return _shape(low, like), _shape(high, like)


def _normal(a: float, b: float, n: np.ndarray, yes: np.ndarray, level: float
            ) -> tuple[np.ndarray, np.ndarray]:
    slope, offset = coefficients_ab(a, b)
    mu = slope * yes / n - offset
    half = z_quantile(level) * np.sqrt(variance_unit_ab(a, b) / n)
    return mu - half, mu + half


def _mle_lambda(a: float, b: float, n: np.ndarray, yes: np.ndarray) -> np.ndarray:
    """The MLE of lambda when mu is held to [0, 1]: the reported share clipped to [b, a]."""
    return np.clip(yes / n, min(a, b), max(a, b))


def _likelihood_ratio(a: float, b: float, n: np.ndarray, yes: np.ndarray, level: float
                      ) -> tuple[np.ndarray, np.ndarray]:
    """``{mu in [0, 1] : 2 (l(mle) - l(mu)) <= chi2_1(level)}``, each end by bisection
    (60 halvings, as :meth:`BinaryCounts.lr_interval`)."""
    crit = chi2_1_quantile(level)
    top_lam = _mle_lambda(a, b, n, yes)
    top = _loglik(n, yes, top_lam)
    mle = (top_lam - b) / (a - b)

    def inside(mu: np.ndarray) -> np.ndarray:
        return 2 * (top - _loglik(n, yes, report_probability(a, b, mu))) <= crit

    def edge(outer: float) -> np.ndarray:
        out = np.full(mle.shape, outer)
        lo, hi = out.copy(), mle.copy()  # lo outside, hi inside
        for _ in range(60):
            mid = (lo + hi) / 2
            ok = inside(mid)
            hi = np.where(ok, mid, hi)
            lo = np.where(ok, lo, mid)
        return np.where(inside(out), out, hi)

    return edge(0.0), edge(1.0)


def _fc_accepted(a: float, b: float, n: int, level: float, grid: np.ndarray) -> np.ndarray:
    """Feldman-Cousins acceptance: ``[i, x]`` is True when count x is in the acceptance
    region of share ``grid[i]``: counts ranked by ``P(x | mu) / P(x | mle(x))``, taken
    until their probability reaches ``level``."""
    xs = np.arange(n + 1)
    nn = np.asarray(float(n))
    logp = _binom_logpmf(xs[None, :], n, report_probability(a, b, grid)[:, None])
    best = _binom_logpmf(xs, n, _mle_lambda(a, b, nn, xs.astype(float)))
    order = np.argsort(-(logp - best[None, :]), axis=1, kind="stable")
    probs = np.take_along_axis(np.exp(logp), order, axis=1)
    before = np.cumsum(probs, axis=1) - probs  # mass ranked ahead of each count
    accepted = np.zeros(logp.shape, dtype=bool)
    np.put_along_axis(accepted, order, before < level - 1e-12, axis=1)
    return accepted


def feldman_cousins_interval(a: float, b: float, n: int, yes: object, level: float = 0.95,
                             grid: int = FC_GRID) -> tuple[Any, Any]:
    """The Feldman-Cousins interval on a grid of ``grid`` shares: from the smallest to the
    largest grid share whose acceptance region holds the count (Feldman & Cousins 1998).

    Its coverage reaches ``level`` at the grid's shares, not between them
    (docs/intervals.md).

    >>> [round(v, 4) for v in feldman_cousins_interval(0.75, 0.25, 30, 10)]
    [0.0, 0.5345]
    """
    fa, fb = _channel(a, b)
    lv = _checks.in_range("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    nn = _checks.integer("n", n, 1)
    size = _checks.integer("grid", grid, 2)
    ys = _checks.count_array("yes", yes, nn)
    shares = np.linspace(0.0, 1.0, size)
    accepted = _fc_accepted(fa, fb, nn, lv, shares)[:, ys.ravel()]
    mle = (_mle_lambda(fa, fb, np.asarray(float(nn)), ys.ravel().astype(float)) - fb) / (fa - fb)
    none = ~accepted.any(axis=0)
    first = shares[np.argmax(accepted, axis=0)]
    last = shares[size - 1 - np.argmax(accepted[::-1], axis=0)]
    low = np.where(none, mle, first).reshape(ys.shape)
    high = np.where(none, mle, last).reshape(ys.shape)
    return _shape(low, yes), _shape(high, yes)


def share_intervals(a: float, b: float, n: int, yes: object, level: float = 0.95,
                    method: str = "exact") -> tuple[np.ndarray, np.ndarray]:
    """Each method's interval for the counts ``yes`` of n, as two arrays (low, high).

    ``"normal"`` is not clipped (it may leave [0, 1], as on the self-study pages).

    >>> low, high = share_intervals(0.75, 0.25, 30, [10], method="likelihood_ratio")
    >>> round(float(low[0]), 3), round(float(high[0]), 3)
    (0.0, 0.521)
    """
    fa, fb = _channel(a, b)
    lv = _checks.in_range("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    nn = _checks.integer("n", n, 1)
    ys = np.atleast_1d(_checks.count_array("yes", yes, nn)).astype(float)
    ns = np.full(ys.shape, float(nn))
    if method == "exact":
        low, high = _to_share(fa, fb, *_clopper_pearson(ns, ys, lv))
    elif method == "likelihood_ratio":
        low, high = _likelihood_ratio(fa, fb, ns, ys, lv)
    elif method == "normal":
        low, high = _normal(fa, fb, ns, ys, lv)
    elif method == "feldman_cousins":
        low, high = feldman_cousins_interval(fa, fb, nn, ys.astype(np.int64), lv)
    else:
        raise ValueError(f"method must be one of {INTERVAL_METHODS}, got {method!r}")
    return np.asarray(low, dtype=float), np.asarray(high, dtype=float)


# -- exact coverage -----------------------------------------------------------------------
def _width(n: int) -> int:
    return min(n + 1, 2 * math.ceil(_SPREAD * math.sqrt(n / 4) + _SPREAD) + 1)


def _window(n: int, lam: np.ndarray) -> np.ndarray:
    """For each lambda, the counts (a row) that hold all but 1e-20 of Binomial(n, lambda)."""
    width = _width(n)
    start = np.clip(np.round(n * lam).astype(np.int64) - width // 2, 0, n + 1 - width)
    return start[:, None] + np.arange(width)[None, :]


def _binom_window(n: int, p: float) -> tuple[int, np.ndarray]:
    """``(start, pmf)``: Binomial(n, p) on the counts start.. that hold all but 1e-20."""
    ks = _window(n, np.array([p]))[0]
    return int(ks[0]), np.exp(_binom_logpmf(ks, n, p))


def _convolve(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The convolution of two probability vectors: direct while small, else by FFT (its
    rounding error, about 1e-16 of the largest term, clipped at 0)."""
    if x.size * y.size <= 1 << 18:
        return np.convolve(x, y)
    size = x.size + y.size - 1
    fft = 1 << (size - 1).bit_length()
    return np.maximum(np.fft.irfft(np.fft.rfft(x, fft) * np.fft.rfft(y, fft), fft)[:size], 0.0)


def _class_pmf(n: int, v: int, a: float, b: float, xs: np.ndarray) -> np.ndarray:
    """``P(Binomial(v, a) + Binomial(n - v, b) = x)`` for the counts xs."""
    start_yes, yes = _binom_window(v, a)
    start_no, no = _binom_window(n - v, b)
    full = np.convolve(yes, no)
    at = xs - start_yes - start_no
    inside = (at >= 0) & (at < full.size)
    return np.where(inside, full[np.clip(at, 0, full.size - 1)], 0.0)


def _accepts(method: str, a: float, b: float, n: int, mu: np.ndarray, xs: np.ndarray,
             level: float) -> np.ndarray:
    """``[i, j]``: does the interval of count ``xs[i, j]`` contain share ``mu[i]``?

    Decided where the interval is defined (the test it inverts), for the count rows of
    :func:`_window`: the exact interval holds mu when neither binomial tail at
    lambda(mu) is below alpha/2, or when mu is the edge an improbable count is put on."""
    lam = report_probability(a, b, mu)[:, None]
    nf = float(n)
    x = xs.astype(float)
    if method == "exact":
        tail = (1 - level) / 2
        p = np.exp(_binom_logpmf(xs, n, lam))
        # tails summed over the window (the mass outside it is below 1e-20)
        cdf = np.cumsum(p, axis=1)
        sf = np.cumsum(p[:, ::-1], axis=1)[:, ::-1]
        ok = (cdf >= tail) & (sf >= tail)
        up = a > b
        top_edge = mu[:, None] == (1.0 if up else 0.0)  # the share whose lambda is largest
        low_edge = mu[:, None] == (0.0 if up else 1.0)
        return ok | (top_edge & (sf < tail)) | (low_edge & (cdf < tail))
    if method == "likelihood_ratio":
        crit = chi2_1_quantile(level)
        top = _loglik(np.asarray(nf), x, _mle_lambda(a, b, np.asarray(nf), x))
        return 2 * (top - _loglik(np.asarray(nf), x, lam)) <= crit
    if method == "normal":
        low, high = _normal(a, b, np.asarray(nf), x, level)
    else:  # feldman_cousins: its intervals, built on a grid, decide
        counts, where = np.unique(xs, return_inverse=True)
        ends = share_intervals(a, b, n, counts, level, method)
        low, high = ends[0][where.reshape(xs.shape)], ends[1][where.reshape(xs.shape)]
    return (low <= mu[:, None]) & (mu[:, None] <= high)


def _probabilities(a: float, b: float, n: int, mu: np.ndarray, xs: np.ndarray,
                   model: str) -> np.ndarray:
    if model == "population":
        lam = report_probability(a, b, mu)[:, None]
        return np.exp(_binom_logpmf(xs, n, lam))
    v = np.round(mu * n).astype(np.int64)
    return np.stack([_class_pmf(n, int(vi), a, b, row) for vi, row in zip(v, xs, strict=True)])


def _shares(mu: object, n: int, model: str) -> np.ndarray:
    grid = np.atleast_1d(np.asarray(mu, dtype=float)).ravel()
    if grid.size == 0 or not np.all(np.isfinite(grid)) or np.any((grid < 0) | (grid > 1)):
        raise ValueError("mu must be a non-empty array of shares in [0, 1]")
    if model == "class":
        if np.any(np.abs(grid * n - np.round(grid * n)) > 1e-9 * max(n, 1)):
            raise ValueError("for a fixed class, every share must be v / n for a whole v")
    elif model != "population":
        raise ValueError(f"model must be 'population' or 'class', got {model!r}")
    return grid


def coverage_shares(n: int, model: str = "population", points: int = 401) -> np.ndarray:
    """The true shares to draw a coverage curve at: ``points`` evenly spaced shares in
    [0, 1] for ``model="population"``; for a fixed class, the shares v / n it can have
    (every one when n < points, else ``points`` of them, evenly spaced, 0 and 1 included).

    >>> coverage_shares(4, "class").tolist(), coverage_shares(10, points=3).tolist()
    ([0.0, 0.25, 0.5, 0.75, 1.0], [0.0, 0.5, 1.0])
    """
    nn = _checks.integer("n", n, 1)
    size = _checks.integer("points", points, 2)
    if model == "population":
        return np.linspace(0.0, 1.0, size)
    if model != "class":
        raise ValueError(f"model must be 'population' or 'class', got {model!r}")
    return np.unique(np.round(np.linspace(0, nn, min(nn + 1, size)))) / nn


def interval_coverage(a: float, b: float, n: int, mu: object, *, method: str = "exact",
                      level: float = 0.95, model: str = "population") -> np.ndarray:
    """Exact coverage: the probability that the interval for the count contains mu.

    For each true share in ``mu``, the probabilities of the counts whose ``method``
    interval contains it, summed. ``model="population"``: the count is
    ``Binomial(n, b + (a - b) mu)``; ``model="class"``: a fixed class with
    ``v = mu n`` true "yes" (every share must be a multiple of 1/n), the count
    ``Binomial(v, a) + Binomial(n - v, b)``. Not simulated.

    >>> cover = interval_coverage(0.75, 0.25, 30, [0.1, 0.5, 0.9], method="normal")
    >>> [round(float(c), 4) for c in cover]
    [0.9298, 0.9013, 0.9298]
    >>> bool(interval_coverage(0.75, 0.25, 30, [0.1, 0.5, 0.9]).min() >= 0.95)
    True
    """
    fa, fb = _channel(a, b)
    lv = _checks.in_range("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    nn = _checks.integer("n", n, 1)
    if method not in INTERVAL_METHODS:
        raise ValueError(f"method must be one of {INTERVAL_METHODS}, got {method!r}")
    grid = _shares(mu, nn, model)
    xs = _window(nn, report_probability(fa, fb, grid))
    probs = _probabilities(fa, fb, nn, grid, xs, model)
    return np.minimum(1.0, np.sum(probs * _accepts(method, fa, fb, nn, grid, xs, lv), axis=1))


def expected_width(a: float, b: float, n: int, mu: object, *, method: str = "exact",
                   level: float = 0.95) -> np.ndarray:
    """``E[width]`` of the part of the interval inside [0, 1], counts drawn from
    ``Binomial(n, b + (a - b) mu)``: what a method pays for its coverage.

    >>> [round(float(w), 3) for w in expected_width(0.75, 0.25, 30, [0.5])]
    [0.7]
    """
    fa, fb = _channel(a, b)
    lv = _checks.in_range("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    nn = _checks.integer("n", n, 1)
    grid = _shares(mu, nn, "population")
    xs = _window(nn, report_probability(fa, fb, grid))
    probs = _probabilities(fa, fb, nn, grid, xs, "population")
    counts, where = np.unique(xs, return_inverse=True)
    low, high = share_intervals(fa, fb, nn, counts, lv, method)
    width = (np.clip(high, 0.0, 1.0) - np.clip(low, 0.0, 1.0))[where.reshape(xs.shape)]
    return np.sum(probs * np.maximum(width, 0.0), axis=1)


@functools.lru_cache(maxsize=4096)
def _exact_interval_groups(groups: tuple[tuple[float, float, int, int], ...],
                           level: float = 0.95) -> tuple[float, float]:
    """The exact interval for reports under several designs, ``(a, b, n, yes)`` each.

    The statistic is ``T = sum_g s_g y_g`` with ``s_g`` the sign of ``a_g - b_g``: each
    term grows stochastically with mu, so ``P_mu(T >= t)`` rises and ``P_mu(T <= t)``
    falls, and the shares where neither is below alpha/2 form an interval that covers
    with probability at least ``level`` (the Clopper-Pearson argument; its distribution
    is the convolution of the groups' binomials). With one group it is
    :func:`exact_interval`. Cached: the dashboard asks again every 2 s, mostly for counts
    it has seen.
    """
    lv = _checks.in_range("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    groups = _merged_groups(groups)
    if len(groups) == 1:
        a, b, n, y = groups[0]
        low, high = exact_interval(a, b, n, y, lv)
        return float(low), float(high)
    tail = (1 - lv) / 2
    signs = tuple(1 if a > b else -1 for a, b, _, _ in groups)
    offset = sum(n for (_, _, n, _), s in zip(groups, signs, strict=True) if s < 0)
    t = offset + sum(s * y for (_, _, _, y), s in zip(groups, signs, strict=True))
    upper = functools.partial(_tail_of_sum, groups, signs, t, True)  # P(T >= t), rising
    lower = functools.partial(_tail_of_sum, groups, signs, t, False)  # P(T <= t), falling
    up_1, low_0 = upper(1.0), lower(0.0)
    if up_1 < tail:
        return 1.0, 1.0
    if low_0 < tail:
        return 0.0, 0.0
    up_0, low_1 = upper(0.0), lower(1.0)
    low = 0.0 if up_0 >= tail else _crossing(upper, up_0, up_1, tail)
    high = 1.0 if low_1 >= tail else _crossing(lower, low_0, low_1, tail)
    return low, high


def _merged_groups(groups: tuple[tuple[float, float, int, int], ...]
                   ) -> tuple[tuple[float, float, int, int], ...]:
    """Groups of equal channels as one binomial each, empty ones left out; ValueError when
    none has a report."""
    merged: dict[tuple[float, float], tuple[int, int]] = {}
    for a, b, n, y in groups:
        n0, y0 = merged.get((a, b), (0, 0))
        merged[(a, b)] = (n0 + n, y0 + y)
    kept = tuple((a, b, n, y) for (a, b), (n, y) in merged.items() if n)
    if not kept:
        raise ValueError("at least one (a, b, n, yes) group with reports is needed")
    return kept


def _sum_pmf(groups: tuple[tuple[float, float, int, int], ...], signs: tuple[int, ...],
             mu: float) -> tuple[int, np.ndarray]:
    """The distribution of ``T + offset`` at share ``mu``, from its first value on: the
    convolution of the groups' binomials (a group of negative sign counts ``n - y``)."""
    start, out = 0, np.ones(1)
    for (a, b, n, _), s in zip(groups, signs, strict=True):
        first, part = _binom_window(n, float(report_probability(a, b, mu)))
        if s < 0:  # n - y: the window reversed
            first, part = n - (first + part.size - 1), part[::-1]
        start, out = start + first, _convolve(out, part)
    return start, out


def _tail_of_sum(groups: tuple[tuple[float, float, int, int], ...], signs: tuple[int, ...],
                 t: int, at_least: bool, mu: float) -> float:
    """``P(T >= t)`` (``at_least``, rising in mu) or ``P(T <= t)`` (falling) at ``mu``."""
    start, probs = _sum_pmf(groups, signs, mu)
    if at_least:
        return float(probs[max(t - start, 0):].sum())
    return float(probs[: max(t + 1 - start, 0)].sum())


def _crossing(f: Callable[[float], float], at_0: float, at_1: float, tail: float) -> float:
    """Where the monotone ``f`` crosses ``tail`` in [0, 1], on the side where
    ``f >= tail`` (the interval's own side, so it keeps its coverage): regula falsi
    with the Illinois step (Dowell & Jarratt 1971), every fourth step a bisection, to
    a bracket of 1e-13. About a dozen evaluations instead of bisection's 50."""
    lo, hi, g_lo, g_hi = 0.0, 1.0, at_0 - tail, at_1 - tail
    kept = 0  # which end the last step kept: -1 lo, +1 hi
    for step in range(200):
        if hi - lo <= 1e-13:
            break
        x = (lo * g_hi - hi * g_lo) / (g_hi - g_lo) if step % 4 != 3 else (lo + hi) / 2
        if not lo < x < hi:
            x = (lo + hi) / 2
        g_x = f(x) - tail
        if (g_x >= 0) == (g_hi >= 0):
            hi, g_hi = x, g_x
            g_lo = g_lo / 2 if kept == -1 else g_lo
            kept = -1
        else:
            lo, g_lo = x, g_x
            g_hi = g_hi / 2 if kept == 1 else g_hi
            kept = 1
    return hi if g_hi >= 0 else lo
