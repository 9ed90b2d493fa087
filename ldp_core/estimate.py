"""Inference for the true share mu from binary randomized reports.

Reports are held as grouped counts: for each design in use, how many reports
(n) and how many of them said yes (y). A round whose design changed part-way
simply has several groups; every formula below sums over them, so each report
is corrected with its own (a, b).

Formulas:

* unbiased estimate (Warner 1965): each report y_i gives the unbiased
  ``z_i = (y_i - b_i) / (a_i - b_i)``; ``mu_hat = mean(z_i)``.  For one design
  this is ``(ybar - b) / (a - b)``; for the class exercise ``2 V / n - 1/2``
  (CS208 notes);
* SD, three ways:
    - ``sd_worst``: the design's worst case over all classes,
      ``sqrt(sum_g n_g max(a(1-a), b(1-b)) / (a-b)^2) / n``; for the exercise
      exactly ``sqrt(3 / (4 n))`` (CS208 group-exercise solution);
    - ``sd_at(mu)``: exact SD when the true share is mu and respondents are
      drawn from a population (Warner 1965), ``sqrt(lambda (1 - lambda)) /
      (|a - b| sqrt(n))`` with ``lambda = b + (a - b) mu``;
      ``sd_class_at(mu)`` is the fixed-class version (randomization only);
    - ``sd_plugin``: estimated from the data, the sample SD of z_i over
      sqrt(n) (Warner's unbiased variance estimate for one design);
* the log-likelihood, its maximiser on [0, 1] (the MLE) and the
  likelihood-ratio interval ``{mu : 2 (l(mle) - l(mu)) <= chi2_1(level)}``,
  3.841 at 95% (CS208 "Likelihood based correction").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from . import _checks, postprocess
from .binary import BinaryDesign, EpsilonRR, report_probability
from .categorical import FrequencyOracle
from .formulas import unbiased_coefficients, worst_variance_unit
from .intervals import _exact_interval_groups, exact_interval
from .quantiles import chi2_1_quantile, t_quantile, z_quantile

__all__ = [
    "BinaryCounts",
    "CategoricalCounts",
    "BinaryEstimate",
    "chi2_1_quantile",
    "pm1_mean_abs_error",
    "pm1_mean_estimate",
    "t_quantile",
    "z_quantile",
]


@dataclass(frozen=True)
class BinaryEstimate:
    """A frozen summary of what the reports say about mu.

    Fields are None when they are not defined yet: everything but the counts
    when ``n == 0``, ``sd_plugin`` while ``n < 2``. Estimates may leave [0, 1]
    (the unbiased estimator does not know mu is a share); the MLE never does.

    Three intervals: ``exact_low, exact_high`` (:meth:`BinaryCounts.exact_interval`,
    at least ``level`` coverage at every share and n, the one to headline);
    ``ci_low, ci_high``, the normal interval ``mu_hat -/+ z sd_worst``, the large-n
    approximation the course derives by hand (it covers less at classroom sizes and may
    leave [0, 1]); ``lr_low, lr_high``, the likelihood-ratio interval.
    """

    n: int
    yes: int
    reported_share: float | None
    mu_hat: float | None
    sd_worst: float | None
    sd_plugin: float | None
    ci_low: float | None
    ci_high: float | None
    mle: float | None
    lr_low: float | None
    lr_high: float | None
    epsilon: float
    level: float = 0.95
    exact_low: float | None = None
    exact_high: float | None = None

    @property
    def empty(self) -> bool:
        return self.n == 0

    @property
    def outside_unit_interval(self) -> bool:
        """True when the unbiased estimate is below 0 or above 1 (normal at small n)."""
        return self.mu_hat is not None and not 0.0 <= self.mu_hat <= 1.0


@dataclass(frozen=True)
class BinaryCounts:
    """Grouped binary reports: a tuple of ``(design, n, yes)``.

    >>> from ldp_core import DieRR
    >>> c = BinaryCounts.single(DieRR(4, 3), yes=30, n=40)
    >>> c.unbiased()
    1.0
    >>> round(c.sd_worst() ** 2 * 160, 12)
    3.0
    >>> BinaryCounts.single(DieRR(4, 3), yes=0, n=0).unbiased() is None
    True

    Groups under different designs (a slider moved mid-round) combine, each
    corrected with its own (a, b):

    >>> from ldp_core import EpsilonRR
    >>> mixed = BinaryCounts(((DieRR(4, 3), 40, 30), (EpsilonRR(2.0), 60, 35)))
    >>> mixed.n, mixed.yes, 0.0 <= mixed.mle() <= 1.0
    (100, 65, True)
    """

    groups: tuple[tuple[BinaryDesign, int, int], ...]
    #: Every design given, empty groups included (they still define epsilon).
    _designs: tuple[BinaryDesign, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.groups:
            raise ValueError("at least one (design, n, yes) group is needed, even with n = 0")
        clean = []
        for design, n, yes in self.groups:
            if not isinstance(design, BinaryDesign):
                raise ValueError(f"design must be a BinaryDesign, got {design!r}")
            if not design.informative:
                raise ValueError(
                    f"design {design!r} carries no information (a == b): no estimator "
                    "exists; choose gamma > 0 or a design whose answers depend on the truth")
            n = _checks.integer("n", n, 0, _checks.MAX_COUNT)
            yes = _checks.integer("yes", yes, 0, n)
            if n:
                clean.append((design, n, yes))
        # Designs are kept even for empty groups: they still define epsilon.
        object.__setattr__(self, "_designs", tuple(g[0] for g in self.groups))
        object.__setattr__(self, "groups", tuple(clean))

    # -- constructors ----------------------------------------------------------------------
    @classmethod
    def single(cls, design: BinaryDesign, yes: int, n: int) -> BinaryCounts:
        """All reports under one design."""
        return cls(((design, n, yes),))

    @classmethod
    def from_reports(cls, design: BinaryDesign, reports: object) -> BinaryCounts:
        """From an array of 0/1 reports produced under ``design``."""
        y = _checks.binary_array("reports", reports)
        return cls.single(design, int(y.sum()), int(y.size))

    # -- arrays over groups ---------------------------------------------------------------
    def _arrays(self) -> tuple[np.ndarray, ...]:
        a = np.array([g[0].a for g in self.groups])
        b = np.array([g[0].b for g in self.groups])
        n = np.array([g[1] for g in self.groups], dtype=float)
        y = np.array([g[2] for g in self.groups], dtype=float)
        return a, b, n, y

    @property
    def n(self) -> int:
        return sum(g[1] for g in self.groups)

    @property
    def yes(self) -> int:
        return sum(g[2] for g in self.groups)

    @property
    def epsilon(self) -> float:
        """Privacy loss of one report: the largest over the designs in use."""
        return max(d.epsilon for d in self._designs)

    # -- point estimates --------------------------------------------------------------------
    def unbiased(self) -> float | None:
        """``mu_hat = (1/n) sum_g (y_g - n_g b_g) / (a_g - b_g)``; None when n = 0.

        Warner's (1965) unbiased estimator, summed over design groups; for the
        class exercise ``2 V / n - 1/2`` (CS208 notes). May leave [0, 1].
        """
        if not self.n:
            return None
        total = 0.0
        for design, n, yes in self.groups:
            slope, offset = unbiased_coefficients(design)
            total += float(slope) * yes - float(offset) * n
        return total / self.n

    def log_likelihood(self, mu: float | np.ndarray) -> float | np.ndarray:
        """``l(mu) = sum_g y_g ln(lambda_g) + (n_g - y_g) ln(1 - lambda_g)``.

        Vectorized over ``mu``; returns -inf (never NaN) where a report is impossible.
        """
        m = np.asarray(mu, dtype=float)
        a, b, n, y = self._arrays()
        lam = b[:, None] + (a - b)[:, None] * m.reshape(1, -1)
        with np.errstate(divide="ignore", invalid="ignore"):
            yes_term = np.where(y[:, None] > 0, y[:, None] * np.log(lam), 0.0)
            no_term = np.where((n - y)[:, None] > 0, (n - y)[:, None] * np.log1p(-lam), 0.0)
        ll = (yes_term + no_term).sum(axis=0)
        return float(ll[0]) if m.ndim == 0 else ll.reshape(m.shape)

    def _groups_abny(self) -> tuple[tuple[float, float, int, int], ...]:
        return tuple((d.a, d.b, n, y) for d, n, y in self.groups)

    def _loglik_scalar(self, mu: float) -> float:
        """:meth:`log_likelihood` at one point in plain float math: the bisections
        below call it a hundred times, where numpy's per-call cost would dominate."""
        total = 0.0
        for a, b, n, y in self._groups_abny():
            lam = report_probability(a, b, mu)
            if y:
                if lam <= 0.0:
                    return -math.inf
                total += y * math.log(lam)
            if n - y:
                if lam >= 1.0:
                    return -math.inf
                total += (n - y) * math.log1p(-lam)
        return total

    def _score(self, mu: float) -> float:
        """Derivative of the log-likelihood: ``sum_g (a-b) (y/lambda - (n-y)/(1-lambda))``."""
        total = 0.0
        for a, b, n, y in self._groups_abny():
            lam = report_probability(a, b, mu)
            t_yes = (y / lam if lam > 0 else math.inf) if y else 0.0
            t_no = ((n - y) / (1 - lam) if lam < 1 else math.inf) if n - y else 0.0
            total += (a - b) * (t_yes - t_no)
        return total

    def mle(self) -> float | None:
        """Maximum-likelihood estimate of mu constrained to [0, 1]; None when n = 0.

        The log-likelihood (CS208 2022, "Likelihood based correction") is
        concave in mu, so the maximiser is the clipped unbiased estimate for
        one design and the root of the score
        ``sum_g (a_g - b_g) (y_g / lambda_g - (n_g - y_g) / (1 - lambda_g))``
        otherwise (found by bisection to double precision).

        >>> from ldp_core import DieRR
        >>> BinaryCounts.single(DieRR(4, 3), yes=2, n=40).mle()  # mu_hat = -0.4
        0.0
        """
        if not self.n:
            return None
        if len(self.groups) == 1:
            mu = self.unbiased()
            return None if mu is None else min(1.0, max(0.0, mu))
        if self._score(0.0) <= 0:
            return 0.0
        if self._score(1.0) >= 0:
            return 1.0
        lo, hi = 0.0, 1.0
        for _ in range(80):
            mid = (lo + hi) / 2
            if self._score(mid) > 0:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    # -- spreads ---------------------------------------------------------------------------
    def sd_worst(self) -> float | None:
        """The design's worst-case SD of ``mu_hat`` over all classes of this size.

        ``sqrt(sum_g n_g max(a_g (1 - a_g), b_g (1 - b_g)) / (a_g - b_g)^2) / n``:
        the largest :meth:`sd_class_at`. For the class exercise (a = 3/4, b = 1/4)
        ``sqrt(3 / (4 n))``, the CS208 group-exercise answer.
        """
        if not self.n:
            return None
        units = sum(n * float(worst_variance_unit(design)) for design, n, _ in self.groups)
        return math.sqrt(units) / self.n

    def sd_at(self, mu: float) -> float | None:
        """Exact SD of ``mu_hat`` at true share ``mu``, respondents drawn from a population.

        ``Var = sum_g n_g lambda_g (1 - lambda_g) / (a_g - b_g)^2 / n^2`` (Warner 1965).
        """
        m = _checks.in_range("mu", mu, 0.0, 1.0)
        if not self.n:
            return None
        a, b, n, _ = self._arrays()
        lam = report_probability(a, b, m)
        return float(math.sqrt(np.sum(n * lam * (1 - lam) / (a - b) ** 2)) / n.sum())

    def sd_class_at(self, mu: float) -> float | None:
        """Exact SD of ``mu_hat`` for a fixed class whose true share is ``mu``.

        Only the randomization varies: ``Var = sum_g n_g [mu a(1-a) + (1-mu) b(1-b)]
        / (a-b)^2 / n^2``; at its worst over mu this is :meth:`sd_worst`.
        """
        m = _checks.in_range("mu", mu, 0.0, 1.0)
        if not self.n:
            return None
        a, b, n, _ = self._arrays()
        per = m * a * (1 - a) + (1 - m) * b * (1 - b)
        return float(math.sqrt(np.sum(n * per / (a - b) ** 2)) / n.sum())

    def sd_plugin(self) -> float | None:
        """Data-based SD: the sample SD of the per-report estimates z_i, over sqrt(n).

        Its square is unbiased for ``sd_at(mu)^2`` (population sampling, one design).

        For one design, ``sqrt(ybar (1 - ybar) / ((n - 1) (a - b)^2))``. None while n < 2.
        """
        total = self.n
        if total < 2:
            return None
        a, b, n, y = self._arrays()
        z1 = (1 - b) / (a - b)  # value of z for a "yes" report
        z0 = -b / (a - b)  # value of z for a "no" report
        mean = float(np.sum(y * z1 + (n - y) * z0) / total)
        ss = float(np.sum(y * (z1 - mean) ** 2 + (n - y) * (z0 - mean) ** 2))
        return math.sqrt(ss / (total - 1) / total)

    # -- intervals and tests -----------------------------------------------------------------
    def normal_interval(self, level: float = 0.95, sd: str = "worst"
                        ) -> tuple[float, float] | None:
        """``mu_hat -/+ z * SD``: a normal interval (may leave [0, 1]).

        ``sd="worst"`` (default) uses :meth:`sd_worst`, the course's answer for
        the class's own share; ``sd="plugin"`` uses :meth:`sd_plugin`, the
        population-sampling SD that the likelihood-ratio interval also reflects
        (the two intervals agree for large n). None while the SD is undefined.
        """
        if sd not in ("worst", "plugin"):
            raise ValueError(f"sd must be 'worst' or 'plugin', got {sd!r}")
        z = z_quantile(level)
        mu = self.unbiased()
        spread = self.sd_worst() if sd == "worst" else self.sd_plugin()
        if mu is None or spread is None:
            return None
        return (mu - z * spread, mu + z * spread)

    def lr_statistic(self, mu0: float) -> float | None:
        """``2 (l(mle) - l(mu0))``, compared with chi-squared(1) to test ``mu = mu0``
        (Wilks; the likelihood-ratio test of the CS208 2022 notes). ``inf`` when
        the reports are impossible at ``mu0``; None when n = 0."""
        m0 = _checks.in_range("mu0", mu0, 0.0, 1.0)
        mle = self.mle()
        if mle is None:
            return None
        ll0 = self._loglik_scalar(m0)
        if ll0 == -math.inf:
            return math.inf
        return max(0.0, 2 * (self._loglik_scalar(mle) - ll0))

    def lr_test(self, mu0: float) -> tuple[float, float] | None:
        """The likelihood-ratio test of ``mu = mu0``: ``(statistic, p-value)``.

        ``p = P(chi2_1 > statistic) = erfc(sqrt(statistic / 2))``.

        >>> from ldp_core import DieRR
        >>> stat, p = BinaryCounts.single(DieRR(4, 3), yes=30, n=40).lr_test(0.5)
        >>> round(stat, 2), round(p, 4)
        (10.46, 0.0012)
        """
        stat = self.lr_statistic(mu0)
        if stat is None:
            return None
        p = math.erfc(math.sqrt(stat / 2)) if math.isfinite(stat) else 0.0
        return stat, p

    def exact_interval(self, level: float = 0.95) -> tuple[float, float] | None:
        """The exact interval for mu: covers the true share with probability at least
        ``level`` whatever the share and n; never empty; None when n = 0.

        One design: Clopper-Pearson on the report probability, mapped through the design
        and clipped to [0, 1] (:func:`ldp_core.exact_interval`). Several designs: the same
        test inversion on the signed total of "yes" reports, whose exact distribution is
        the convolution of the groups' binomials (docs/intervals.md).

        >>> from ldp_core import DieRR
        >>> lo, hi = BinaryCounts.single(DieRR(4, 3), yes=10, n=30).exact_interval()
        >>> lo, round(hi, 4)
        (0.0, 0.5562)
        """

        if not self.n:
            return None
        return _exact_interval_groups(self._groups_abny(), level)

    def lr_interval(self, level: float = 0.95) -> tuple[float, float] | None:
        """``{mu in [0, 1] : 2 (l(mle) - l(mu)) <= chi2_1(level)}``, by bisection.

        At 95% the cut-off is 3.841 (CS208 2022, "LogLikelihood surface with
        likelihood ratio test"). The set is an interval because l is concave;
        unlike the normal interval it never leaves [0, 1].

        >>> from ldp_core import DieRR
        >>> lo, hi = BinaryCounts.single(DieRR(4, 3), yes=30, n=40).lr_interval()
        >>> round(lo, 3), hi
        (0.706, 1.0)
        """
        mle = self.mle()
        if mle is None:
            return None
        crit = chi2_1_quantile(level)
        top = self._loglik_scalar(mle)

        def inside(m: float) -> bool:
            return 2 * (top - self._loglik_scalar(m)) <= crit

        def edge(outer: float) -> float:
            if inside(outer):
                return outer
            lo, hi = outer, mle  # lo is outside, hi inside
            for _ in range(60):
                mid = (lo + hi) / 2
                if inside(mid):
                    hi = mid
                else:
                    lo = mid
            return hi

        return (edge(0.0), edge(1.0))

    def summary(self, level: float = 0.95) -> BinaryEstimate:
        """Everything at once, as a frozen :class:`BinaryEstimate`."""
        ci = self.normal_interval(level)
        lr = self.lr_interval(level)
        exact = self.exact_interval(level)
        n = self.n
        return BinaryEstimate(
            n=n,
            yes=self.yes,
            reported_share=self.yes / n if n else None,
            mu_hat=self.unbiased(),
            sd_worst=self.sd_worst(),
            sd_plugin=self.sd_plugin(),
            ci_low=ci[0] if ci else None,
            ci_high=ci[1] if ci else None,
            mle=self.mle(),
            lr_low=lr[0] if lr else None,
            lr_high=lr[1] if lr else None,
            epsilon=self.epsilon,
            level=level,
            exact_low=exact[0] if exact else None,
            exact_high=exact[1] if exact else None,
        )


def pm1_mean_estimate(reports_pm1: object, epsilon: float) -> float | None:
    """The +/-1 form (Smith's slide in CS208 2022): ``A = (1/n) sum_i c_eps Q(y_i)``.

    ``Q`` keeps a +/-1 value w.p. ``e^eps / (e^eps + 1)``; ``c_eps = (e^eps + 1) /
    (e^eps - 1)`` makes each term unbiased for y_i. ``A`` estimates the mean of
    the +/-1 values, so ``(A + 1) / 2`` equals :meth:`BinaryCounts.unbiased`
    for the same reports mapped to 0/1. None when there are no reports.

    >>> import math
    >>> round(pm1_mean_estimate([1, 1, 1, -1], math.log(3)), 12)  # c_eps = 2, mean 1/2
    1.0
    >>> pm1_mean_estimate([], 1.0) is None
    True
    """
    c_eps = EpsilonRR(epsilon).c_epsilon  # validates epsilon even with no reports
    r = np.asarray(reports_pm1)
    if r.dtype.kind not in "iuf" or r.size and not np.all((r == 1) | (r == -1)):
        raise ValueError("reports_pm1 must contain only -1 and +1")
    if r.size == 0:
        return None
    return float(c_eps * r.mean())


def pm1_mean_abs_error(epsilon: float, n: int, n_plus: int) -> float:
    """Exact ``E|A - mean|`` of :func:`pm1_mean_estimate` for a class of ``n`` values in
    {-1, +1}, ``n_plus`` of them +1 (the randomness is RR_eps's alone).

    Smith's slide (CS208, 2022) states ``E|A - mean| <= c_eps / (2 sqrt(n))``. On the
    +/-1 scale that is off by a factor of 2: A's error is twice the error of the
    estimated share ``(A + 1) / 2``, and it is the share's error that the bound
    holds for. At eps = 0.5, n = 100 the +/-1 error is about 1.55 times the bound,
    the share's about 0.77 times:

    >>> e, bound = pm1_mean_abs_error(0.5, 100, 0), EpsilonRR(0.5).c_epsilon / 20
    >>> round(e / bound, 2), round(e / 2 / bound, 2)
    (1.55, 0.77)
    """
    design = EpsilonRR(epsilon)
    n = _checks.integer("n", n, 1)
    k = _checks.integer("n_plus", n_plus, 0, n)
    ks = np.arange(k + 1)
    js = np.arange(n - k + 1)
    from_plus = np.exp(_log_binom(k, ks) + ks * math.log(design.a)
                       + (k - ks) * math.log(design.b))
    from_minus = np.exp(_log_binom(n - k, js) + js * math.log(design.b)
                        + (n - k - js) * math.log(design.a))
    pmf = np.convolve(from_plus, from_minus)  # number of +1 reports
    a_values = design.c_epsilon * (2 * np.arange(n + 1) / n - 1)
    return float(pmf @ np.abs(a_values - (2 * k - n) / n))


def _log_binom(n: int, ks: np.ndarray) -> np.ndarray:
    return np.array([math.lgamma(n + 1) - math.lgamma(x + 1) - math.lgamma(n - x + 1)
                     for x in ks])


@dataclass(frozen=True)
class CategoricalCounts:
    """Grouped categorical reports: a tuple of ``(oracle, n, support_counts)``, the
    counterpart of :class:`BinaryCounts` for frequency oracles.

    Each group is corrected with its own oracle (a slider moved mid-round), and the
    count estimates add up: ``raw = sum_g (C_g - n_g q_g) / (p_g - q_g)`` (Wang, Blocki,
    Li & Jha 2017). Groups with ``n = 0`` still count for ``epsilon``.

    >>> from ldp_core import GRR
    >>> c = CategoricalCounts(((GRR(3, 1.0), 10, (6, 3, 1)),))
    >>> c.n, c.d, round(float(c.raw().sum()), 9)
    (10, 3, 10.0)
    >>> CategoricalCounts(((GRR(3, 1.0), 0, (0, 0, 0)),)).raw() is None
    True
    """

    groups: tuple[tuple[FrequencyOracle, int, Sequence[int]], ...]

    def __post_init__(self) -> None:
        if not self.groups:
            raise ValueError("at least one (oracle, n, support_counts) group is needed")
        for oracle, _, _ in self.groups:
            if not isinstance(oracle, FrequencyOracle):
                raise ValueError(f"oracle must be a FrequencyOracle, got {oracle!r}")
        d = self.groups[0][0].d
        clean = []
        for oracle, n, support in self.groups:
            if oracle.d != d:
                raise ValueError(f"every oracle must have the same d; got {oracle.d} and {d}")
            n = _checks.integer("n", n, 0)
            counts = _checks.count_array("support_counts", support)
            if counts.shape != (d,):
                raise ValueError(f"support_counts must have {d} entries, got {counts.shape}")
            clean.append((oracle, n, tuple(int(c) for c in counts)))
        object.__setattr__(self, "groups", tuple(clean))

    @property
    def d(self) -> int:
        return int(self.groups[0][0].d)

    @property
    def n(self) -> int:
        return sum(g[1] for g in self.groups)

    @property
    def epsilon(self) -> float:
        """Privacy loss of one report: the largest over the oracles in use."""
        return max(float(g[0].epsilon) for g in self.groups)

    def support_counts(self) -> np.ndarray:
        """Reports supporting each value, all groups together."""
        return np.sum([np.asarray(g[2], dtype=np.int64) for g in self.groups], axis=0)

    def raw(self) -> np.ndarray | None:
        """The unbiased count estimates (may be negative or above n); None when n = 0."""
        if not self.n:
            return None
        return np.sum([oracle.estimate_counts(np.asarray(support), n)
                       for oracle, n, support in self.groups if n], axis=0)

    def clipped(self) -> np.ndarray | None:
        raw = self.raw()
        return None if raw is None else postprocess.clip_counts(raw)

    def norm_sub(self) -> np.ndarray | None:
        """Norm-Sub: non-negative counts that sum to n (Wang et al. 2020)."""
        raw = self.raw()
        return None if raw is None else postprocess.norm_sub(raw, self.n)

    def sd(self) -> np.ndarray | None:
        """Per-value SD of :meth:`raw`, each group's variance at the Norm-Sub shares."""
        counts = self.norm_sub()
        if counts is None:
            return None
        shares = counts / self.n
        var = np.sum([np.asarray(oracle.count_variance(n, shares), dtype=float)
                      for oracle, n, _ in self.groups if n], axis=0)
        return np.sqrt(np.maximum(var, 0.0))

    def exact_intervals(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray] | None:
        """Each option's exact interval for its true share: ``(lows, highs)``, None when
        n = 0.

        Option v's support count is a yes/no question: a report supports v with
        probability ``a = p`` when the true answer is v and ``b = q`` otherwise (unary
        encoding: the bit's p and q; GRR: p and (1 - p) / (d - 1); OLH: p and 1 / g). So
        each option gets the yes/no exact interval (:func:`ldp_core.exact_interval`,
        Clopper-Pearson (1934) on the report probability, mapped through (a, b) and
        clipped to [0, 1]; several designs: the convolution of their binomials). Each
        covers its own option's share with probability at least ``level`` at every
        share and n; never empty. The level holds option by option, not for all options
        at once.

        >>> from ldp_core import GRR
        >>> lows, highs = CategoricalCounts(((GRR(4, 1.0), 30, (15, 6, 5, 4)),)
        ...                                ).exact_intervals()
        >>> [round(float(x), 3) for x in lows], [round(float(x), 3) for x in highs]
        ([0.46, 0.0, 0.0, 0.0], [1.0, 0.701, 0.574, 0.44])
        """

        if not self.n:
            return None
        live = [(oracle, n, support) for oracle, n, support in self.groups if n]
        if len({(float(o.p), float(o.q)) for o, _, _ in live}) == 1:  # one vectorised call
            oracle = live[0][0]
            low, high = exact_interval(float(oracle.p), float(oracle.q), self.n,
                                       self.support_counts(), level)
            return np.asarray(low, dtype=float), np.asarray(high, dtype=float)
        ends = [_exact_interval_groups(tuple((float(o.p), float(o.q), n, int(s[v]))
                                             for o, n, s in live), level)
                for v in range(self.d)]
        return (np.array([e[0] for e in ends], dtype=float),
                np.array([e[1] for e in ends], dtype=float))
