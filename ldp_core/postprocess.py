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
    """Set negative estimated counts to 0: ``max(c_v, 0)``.

    Biased upward, and the total no longer equals n; shown as a separate step
    so the raw (unbiased, possibly negative) estimate stays visible.

    >>> clip_counts([5.0, -1.0, 3.0]).tolist()
    [5.0, 0.0, 3.0]
    """
    return np.maximum(_finite("estimate", estimate), 0.0)


def norm_sub(estimate: object, total: float) -> np.ndarray:
    """Norm-Sub: ``max(c - delta, 0)`` with delta chosen so the result sums to ``total``.

    Wang, Lopuhaä-Zwakenberg, Li, Skoric & Li (2020). The result is the
    Euclidean projection of ``c`` onto ``{x >= 0, sum x = total}``, computed
    exactly by sorting: with ``u`` sorted decreasingly and ``k`` the largest
    index with ``u_k > (sum_{j<=k} u_j - total) / k``, ``delta = (sum_{j<=k} u_j -
    total) / k``. Works on a batch: the last axis holds the categories.

    >>> norm_sub([5.0, -1.0, 3.0], 6.0).tolist()
    [4.0, 0.0, 2.0]
    >>> norm_sub([[5.0, -1.0, 3.0], [1.0, 1.0, 1.0]], 6.0).tolist()
    [[4.0, 0.0, 2.0], [2.0, 2.0, 2.0]]
    """
    c = _finite("estimate", estimate)
    t = _checks.finite("total", total)
    if t < 0:
        raise ValueError(f"total must be >= 0, got {total!r}")
    if c.ndim == 0:
        raise ValueError("estimate must be an array of counts (one per category)")
    if c.shape[-1] == 0:
        return c
    u = -np.sort(-c, axis=-1)  # decreasing
    css = np.cumsum(u, axis=-1) - t
    j = np.arange(1, u.shape[-1] + 1)
    positive = u - css / j > 0
    # last index where positive holds (0 if none: then total == 0 and all counts <= 0)
    k = u.shape[-1] - 1 - np.argmax(positive[..., ::-1], axis=-1)
    k = np.where(positive.any(axis=-1), k, 0)
    delta = np.take_along_axis(css, k[..., None], axis=-1) / (k[..., None] + 1)
    return np.maximum(c - delta, 0.0)


def grr_em(reported_counts: object, p: float, q: float, *, tol: float = 1e-10,
           max_iter: int = 10_000, method: str = "exact") -> np.ndarray:
    """Maximum-likelihood true counts from GRR reported counts (the fixed point of EM).

    The likelihood of the reported counts r under true shares pi is
    ``sum_y r_y ln(s_y)`` with ``s_y = q + (p - q) pi_y``, the chance of report y.
    Shares pi >= 0 summing to 1 are exactly the s with ``s_y >= q`` summing to 1,
    so the maximiser is ``s_y = max(q, r_y / lam)`` with lam chosen so that the
    s sum to 1 (the KKT conditions; computed exactly by sorting). When the
    unbiased estimate ``(r - n q) / (p - q)`` has no negative entry it is the MLE.

    ``method="em"`` instead runs expectation maximisation, the iterative
    Bayesian update (Agrawal & Aggarwal 2001; a GRR post-processing in Wang et
    al. 2020): ``pi_v <- pi_v * sum_y (r_y / n) P(y|v) / s_y`` until no share
    moves by more than ``tol`` or ``max_iter`` steps; the log-likelihood never
    decreases, but near a zero share EM converges slowly and may stop short of
    the maximum. ``tol`` and ``max_iter`` apply to ``method="em"`` only.

    Returns ``n * pi``: non-negative, sums to n.

    Reports [50, 30, 20] under p = 1/2, q = 1/4 have the unbiased estimate
    [100, 20, -20]; the MLE moves the mass off the impossible negative count:

    >>> grr_em([50, 30, 20], p=0.5, q=0.25).round(6).tolist()
    [87.5, 12.5, 0.0]
    >>> grr_em([50, 30, 20], p=0.5, q=0.25, method="em").round(6).tolist()
    [87.5, 12.5, 0.0]
    """
    r = _checks.count_array("reported_counts", reported_counts).astype(float)
    if r.ndim != 1 or r.size < 2:
        raise ValueError("reported_counts must be a 1-D array of d >= 2 counts")
    p = _checks.in_range("p", p, 0.0, 1.0, lo_open=True)
    q = _checks.in_range("q", q, 0.0, 1.0)
    if p <= q:
        raise ValueError(f"p must be > q, got p = {p:g}, q = {q:g}")
    if abs(p + (r.size - 1) * q - 1) > 1e-9:
        raise ValueError(f"q must be (1 - p) / (d - 1) for GRR over d = {r.size} values, "
                         f"got p = {p:g}, q = {q:g}")
    if method not in ("exact", "em"):
        raise ValueError(f"method must be 'exact' or 'em', got {method!r}")
    tol = _checks.positive("tol", tol)
    max_iter = _checks.integer("max_iter", max_iter, 1)
    n = r.sum()
    if n == 0:
        return np.zeros_like(r)
    if method == "exact":
        pi = _grr_mle_shares(r, p, q)
    else:
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


def _grr_mle_shares(r: np.ndarray, p: float, q: float) -> np.ndarray:
    """Maximise ``sum r_y ln s_y`` over ``s_y >= q, sum s_y = 1``; return the shares pi.

    With the k largest counts "free" (``s = r / lam``) and the rest at q,
    ``lam_k = R_k / (1 - (d - k) q)``; the answer is the largest k whose k-th
    count still has ``r / lam_k > q``.
    """
    d = r.size
    order = np.argsort(-r, kind="stable")
    top = r[order]
    k = np.arange(1, d + 1)
    lam = np.cumsum(top) / (1 - (d - k) * q)
    free = top / lam > q
    kk = int(np.flatnonzero(free)[-1]) + 1 if free.any() else d
    s = np.maximum(q, r / lam[kk - 1])
    return np.maximum((s - q) / (p - q), 0.0)
