"""Derived quantities for exploring the mechanisms: what the self-study pages display.

Small, vectorized companions to the designs and estimators:

* :func:`share_estimates`: the unbiased estimate for many simulated classes at
  once, ``(V / n - b) / (a - b)`` (Warner 1965; ``2 V / n - 1/2`` for the CS208
  class exercise);
* :func:`posterior_true_yes` and :func:`posterior_bounds`: what an observer
  believes about one respondent after seeing their report (Bayes' rule), and
  the band ``odds x e^(+/-eps)`` that any eps-LDP report must stay inside
  (the definition of local DP, CS208 "Local Differential Privacy");
* :func:`empirical_channel`: the measured 2x2 channel of a simulated class;
* :func:`error_summary`: bias, SD, RMSE, mean and max absolute error of
  simulated estimates;
* :func:`error_order`: the rates ``1 / (eps sqrt(n))`` (local) and
  ``1 / (eps n)`` (central) of CS208 "Local vs. centralized DP";
* :func:`likelihood_profile`: log-likelihood, relative likelihood and LR
  statistic over a grid of mu (CS208 "Likelihood based correction");
* :func:`subsample_counts`: draw n people without replacement from a
  population given as category counts (multivariate hypergeometric).

Nothing here returns NaN silently except where documented (an impossible
report or an empty row), so a page can map those to a dash.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from . import _checks
from ._checks import RNGLike
from .binary import BinaryDesign
from .estimate import BinaryCounts, chi2_1_quantile
from .formulas import unbiased_coefficients

__all__ = [
    "ErrorSummary",
    "LikelihoodProfile",
    "Posterior",
    "empirical_channel",
    "error_order",
    "error_summary",
    "likelihood_profile",
    "posterior_bounds",
    "posterior_true_yes",
    "share_estimates",
    "subsample_counts",
]


def share_estimates(design: BinaryDesign, yes_counts: object, n: int) -> np.ndarray:
    """Unbiased estimates ``(V / n - b) / (a - b)`` for an array of yes counts V out of n.

    The vectorized form of :meth:`BinaryCounts.unbiased` for one design (Warner
    1965); for the class exercise (a = 3/4, b = 1/4) it is ``2 V / n - 1/2``.

    >>> from ldp_core import DieRR
    >>> share_estimates(DieRR(4, 3), [30, 10, 20], 40).tolist()
    [1.0, 0.0, 0.5]
    """
    slope, offset = unbiased_coefficients(design)  # refuses a == b
    n = _checks.integer("n", n, 1)
    v = _checks.count_array("yes_counts", yes_counts, n)
    return float(slope) * (v / n) - float(offset)


class Posterior(NamedTuple):
    """What one report tells an observer who held ``prior = P(truly yes)``.

    ``after_yes`` / ``after_no`` are ``P(truly yes | report)``; NaN where that
    report is impossible under the prior. ``odds_factor_*`` is the factor the
    report multiplies the odds by (``a / b`` and ``(1 - a) / (1 - b)``);
    ``max_odds_factor`` is ``e^eps``, which bounds both.
    """

    prior: np.ndarray | float
    after_yes: np.ndarray | float
    after_no: np.ndarray | float
    odds_factor_yes: float
    odds_factor_no: float
    max_odds_factor: float


def _prior(prior: object) -> np.ndarray:
    pi = np.asarray(prior, dtype=float)
    if not np.all(np.isfinite(pi)) or np.any((pi < 0) | (pi > 1)):
        raise ValueError(f"prior must lie in [0, 1], got {prior!r}")
    return pi


def _ratio(x: float, y: float) -> float:
    if y == 0:
        return math.inf if x > 0 else math.nan
    return x / y


def posterior_true_yes(design: BinaryDesign, prior: object) -> Posterior:
    """Bayes' rule for one report: ``P(X = 1 | Y = 1) = pi a / (pi a + (1 - pi) b)`` and
    ``P(X = 1 | Y = 0) = pi (1 - a) / (pi (1 - a) + (1 - pi) (1 - b))``.

    Posterior odds = prior odds x ``P(y | 1) / P(y | 0)``, and eps-LDP caps that
    factor at ``e^eps`` (CS208 "Local Differential Privacy"). Vectorized over ``prior``.

    >>> from ldp_core import DieRR
    >>> post = posterior_true_yes(DieRR(4, 3), 0.5)
    >>> round(post.after_yes, 12), round(post.after_no, 12), round(post.max_odds_factor, 12)
    (0.75, 0.25, 3.0)
    """
    if not isinstance(design, BinaryDesign):
        raise ValueError(f"design must be a BinaryDesign, got {design!r}")
    pi = _prior(prior)
    a, b = design.a, design.b
    with np.errstate(divide="ignore", invalid="ignore"):
        yes = pi * a / (pi * a + (1 - pi) * b)
        no = pi * (1 - a) / (pi * (1 - a) + (1 - pi) * (1 - b))
    eps = design.epsilon
    bound = math.inf if eps > 700 else math.exp(eps)
    scalar = pi.ndim == 0
    return Posterior(
        prior=float(pi) if scalar else pi,
        after_yes=float(yes) if scalar else yes,
        after_no=float(no) if scalar else no,
        odds_factor_yes=_ratio(a, b),
        odds_factor_no=_ratio(1 - a, 1 - b),
        max_odds_factor=bound,
    )


def posterior_bounds(prior: object, epsilon: float
                     ) -> tuple[np.ndarray | float, np.ndarray | float]:
    """The posteriors any eps-LDP report allows: odds times ``e^-eps`` and ``e^eps``.

    ``lo = pi / (pi + (1 - pi) e^eps)``, ``hi = pi e^eps / (pi e^eps + 1 - pi)``;
    ``(0, 1)`` for ``0 < pi < 1`` when eps is infinite, and ``pi`` itself at
    ``pi`` in {0, 1}.

    >>> lo, hi = posterior_bounds(0.5, math.log(3))
    >>> round(lo, 12), round(hi, 12)
    (0.25, 0.75)
    """
    pi = _prior(prior)
    eps = float(epsilon)
    if math.isnan(eps) or eps < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
    if math.isinf(eps) or eps > 700:
        inner = (pi > 0) & (pi < 1)
        lo = np.where(inner, 0.0, pi)
        hi = np.where(inner, 1.0, pi)
    else:
        e = math.exp(eps)
        lo = pi / (pi + (1 - pi) * e)
        hi = pi * e / (pi * e + (1 - pi))
    if pi.ndim == 0:
        return float(lo), float(hi)
    return np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)


def empirical_channel(truth: object, reports: object) -> tuple[np.ndarray, np.ndarray]:
    """Measured channel of a simulated class: ``(counts, freqs)``, indexed ``[true, reported]``.

    ``counts[x, y]`` is how many respondents with true answer x reported y;
    ``freqs`` divides each row by its total (NaN for a row with nobody in it).
    Compare ``freqs`` with :attr:`BinaryDesign.channel`.

    >>> c, f = empirical_channel([1, 1, 0, 0], [1, 0, 0, 0])
    >>> c.tolist(), f.tolist()
    ([[2, 0], [1, 1]], [[1.0, 0.0], [0.5, 0.5]])
    """
    x = _checks.binary_array("truth", truth).ravel()
    y = _checks.binary_array("reports", reports).ravel()
    if x.shape != y.shape:
        raise ValueError(f"truth and reports must have the same length, got {x.size} and {y.size}")
    counts = np.bincount(2 * x.astype(np.int64) + y, minlength=4).reshape(2, 2)
    rows = counts.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        freqs = np.where(rows > 0, counts / rows, np.nan)
    return counts, freqs


class ErrorSummary(NamedTuple):
    """Error of simulated estimates against the truth; ``rmse^2 = bias^2 + sd^2``."""

    mean: np.ndarray | float
    bias: np.ndarray | float
    sd: np.ndarray | float
    rmse: np.ndarray | float
    mae: np.ndarray | float
    max_abs: np.ndarray | float


def error_summary(estimates: object, truth: object, axis: int | None = None) -> ErrorSummary:
    """Mean, bias, SD of the errors (``ddof = 0``), RMSE, mean and max absolute error.

    ``truth`` broadcasts against ``estimates``; ``axis`` is the axis the
    statistics run over (None: all entries), e.g. ``axis=-1`` gives one
    summary per simulated histogram.

    >>> s = error_summary([0.4, 0.6, 0.8], 0.5)
    >>> [round(v, 12) for v in s]
    [0.6, 0.1, 0.163299316186, 0.191485421551, 0.166666666667, 0.3]
    """
    est = np.asarray(estimates, dtype=float)
    if est.size == 0:
        raise ValueError("estimates must not be empty")
    if not np.all(np.isfinite(est)):
        raise ValueError("estimates must be finite")
    err = est - np.asarray(truth, dtype=float)
    out = ErrorSummary(
        mean=est.mean(axis=axis),
        bias=err.mean(axis=axis),
        sd=err.std(axis=axis),
        rmse=np.sqrt(np.mean(err**2, axis=axis)),
        mae=np.abs(err).mean(axis=axis),
        max_abs=np.abs(err).max(axis=axis),
    )
    if all(np.ndim(v) == 0 for v in out):
        return ErrorSummary(*(float(v) for v in out))
    return out


def error_order(n: object, epsilon: float, model: str) -> np.ndarray | float:
    """The error rates of CS208 "Local vs. centralized DP" for a mean of n bits.

    ``model="local"``: ``1 / (eps sqrt(n))`` (randomized response);
    ``model="central"``: ``1 / (eps n)`` (Laplace mechanism). Orders of
    magnitude, not exact SDs: compare :func:`local_mean_sd` and
    :func:`central_mean_sd`. Vectorized over ``n``.

    >>> error_order(100, 0.5, "local"), error_order(100, 0.5, "central")
    (0.2, 0.02)
    """
    eps = _checks.positive("epsilon", epsilon)
    size = np.asarray(n, dtype=float)
    if not np.all(np.isfinite(size)) or np.any(size < 1):
        raise ValueError(f"n must be >= 1, got {n!r}")
    if model == "local":
        out = 1 / (eps * np.sqrt(size))
    elif model == "central":
        out = 1 / (eps * size)
    else:
        raise ValueError(f"model must be 'local' or 'central', got {model!r}")
    return float(out) if out.ndim == 0 else out


class LikelihoodProfile(NamedTuple):
    """The likelihood of mu over a grid, ready to draw.

    ``log_likelihood`` is -inf where the reports are impossible; there
    ``relative_likelihood`` is 0 and ``lr_statistic`` is +inf (never NaN).
    ``cutoff`` is the log-likelihood at which the LR interval is cut:
    ``l(mle) - chi2_1(level) / 2``.
    """

    mu: np.ndarray
    log_likelihood: np.ndarray
    relative_likelihood: np.ndarray
    lr_statistic: np.ndarray
    mle: float
    max_log_likelihood: float
    cutoff: float
    level: float


def likelihood_profile(counts: BinaryCounts, mu: object, level: float = 0.95) -> LikelihoodProfile:
    """``l(mu)``, ``L(mu) / L(mle) = exp(l(mu) - l(mle))`` and ``2 (l(mle) - l(mu))`` on a grid.

    The MLE is constrained to [0, 1] (:meth:`BinaryCounts.mle`); the LR interval
    is where ``2 (l(mle) - l(mu)) <= chi2_1(level)`` (CS208 "Likelihood based
    correction"; 3.841 at 95%).

    >>> from ldp_core import DieRR
    >>> prof = likelihood_profile(BinaryCounts.single(DieRR(4, 3), yes=20, n=40), [0.0, 0.5])
    >>> prof.mle, prof.relative_likelihood.tolist()[1], bool(prof.lr_statistic[0] > 3.841)
    (0.5, 1.0, True)
    """
    if not isinstance(counts, BinaryCounts):
        raise ValueError(f"counts must be BinaryCounts, got {counts!r}")
    grid = np.asarray(mu, dtype=float).ravel()
    if grid.size == 0 or not np.all(np.isfinite(grid)) or np.any((grid < 0) | (grid > 1)):
        raise ValueError("mu must be a non-empty grid of values in [0, 1]")
    mle = counts.mle()
    if mle is None:
        raise ValueError("no reports yet (n = 0): the likelihood is flat")
    crit = chi2_1_quantile(level)
    top = float(counts.log_likelihood(mle))
    ll = np.asarray(counts.log_likelihood(grid), dtype=float)
    finite = np.isfinite(ll)
    with np.errstate(over="ignore", invalid="ignore"):
        rel = np.where(finite, np.exp(np.minimum(ll - top, 0.0)), 0.0)
        stat = np.where(finite, np.maximum(2 * (top - ll), 0.0), np.inf)
    return LikelihoodProfile(mu=grid, log_likelihood=ll, relative_likelihood=rel,
                             lr_statistic=stat, mle=float(mle), max_log_likelihood=top,
                             cutoff=top - crit / 2, level=float(level))


def subsample_counts(population_counts: object, n: int, *,
                     rng: RNGLike = None) -> np.ndarray:
    """Category counts of ``n`` people drawn without replacement from a population.

    Multivariate hypergeometric: the population is given as counts per category.

    >>> subsample_counts([5, 0, 3], 8, rng=1).tolist()
    [5, 0, 3]
    """
    pop = _checks.count_array("population_counts", population_counts)
    if pop.ndim != 1 or pop.size == 0:
        raise ValueError("population_counts must be a non-empty 1-d array of counts")
    n = _checks.integer("n", n, 0, int(pop.sum()))
    gen = np.random.default_rng(rng)
    return gen.multivariate_hypergeometric(pop, n).astype(np.int64)
