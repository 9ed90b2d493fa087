"""Post-processing of estimated histograms, each a separate, named step.

Post-processing never costs privacy (CS208 notes on DP properties). It trades
the unbiasedness of the raw estimate for a histogram that looks like one:

* :func:`clip_counts`: negatives to 0 (biased upward; the total drifts);
* :func:`norm_sub`: Norm-Sub of Wang, Lopuhaä-Zwakenberg, Li, Skoric & Li
  (2020), "Locally differentially private frequency estimation with
  consistency" (NDSS): subtract one constant delta from every count and clip
  at 0, choosing delta so the counts sum to n. This is the Euclidean
  projection onto ``{c >= 0, sum c = n}``;
* :func:`grr_em`: the maximum-likelihood histogram for GRR reports by
  expectation maximisation (iterative Bayesian update, Agrawal & Aggarwal 2001).
"""

from __future__ import annotations

import numpy as np

from . import _checks

__all__ = ["POSTPROCESSING", "clip_counts", "grr_em", "norm_sub"]

#: Display names of the post-processing steps, keyed as the pages use them.
POSTPROCESSING = {
    "raw": "Raw unbiased estimate",
    "clip": "Clipped at 0",
    "norm_sub": "Norm-Sub (sum = n, no negatives)",
}


def _finite(name: str, est: object) -> np.ndarray:
    x = np.asarray(est, dtype=float)
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite")
    return x


def clip_counts(estimate: object) -> np.ndarray:
    """Set negative estimated counts to 0."""
    return np.maximum(_finite("estimate", estimate), 0.0)


def norm_sub(estimate: object, total: float) -> np.ndarray:
    """Norm-Sub: ``max(c - delta, 0)`` with delta chosen so the result sums to ``total``.

    >>> norm_sub([5.0, -1.0, 3.0], 6.0).tolist()
    [4.0, 0.0, 2.0]
    """
    c = _finite("estimate", estimate)
    t = _checks.finite("total", total)
    if t < 0:
        raise ValueError(f"total must be >= 0, got {total!r}")
    if c.size == 0:
        return c
    u = np.sort(c)[::-1]
    css = np.cumsum(u) - t
    j = np.arange(1, u.size + 1)
    rho = np.nonzero(u - css / j > 0)[0]
    k = rho[-1] if rho.size else 0
    delta = css[k] / (k + 1)
    return np.maximum(c - delta, 0.0)


def grr_em(reported_counts: object, p: float, q: float, *, tol: float = 1e-10,
           max_iter: int = 10_000) -> np.ndarray:
    """Maximum-likelihood true counts from GRR reported counts, by EM.

    Each step: ``pi_v <- pi_v * sum_y (r_y / n) P(y|v) / (P pi)_y`` with
    ``P(y|v) = p`` if y == v else q. Returns ``n * pi`` (non-negative, sums to n).
    """
    r = _checks.count_array("reported_counts", reported_counts).astype(float)
    p = _checks.in_range("p", p, 0.0, 1.0, lo_open=True)
    q = _checks.in_range("q", q, 0.0, 1.0)
    if p <= q:
        raise ValueError(f"p must be > q, got p = {p:g}, q = {q:g}")
    n = r.sum()
    if n == 0:
        return np.zeros_like(r)
    share = r / n
    pi = np.full(r.size, 1.0 / r.size)
    for _ in range(max_iter):
        seen = q + (p - q) * pi  # P(report y) under pi
        new = pi * (q * np.sum(share / seen) + (p - q) * share / seen)
        if np.max(np.abs(new - pi)) < tol:
            pi = new
            break
        pi = new
    return n * pi / pi.sum()
