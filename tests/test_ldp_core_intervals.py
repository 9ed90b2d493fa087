"""The yes/no intervals and their exact coverage (ldp_core.intervals).

The headline interval must cover the true share in at least 95% of classes at every
share and every n, and never be empty. Coverage is exact (binomial probabilities
summed), so the thresholds are exact too: no simulation error to allow for. The
references below are independent of the module (integer binomial coefficients and
bisection on exact tail sums); SciPy, when installed, cross-checks them once more.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import ldp_core
from ldp_core import (
    BinaryCounts,
    DieRR,
    EpsilonRR,
    TwoCoinRR,
    WarnerRR,
    exact_interval,
    expected_width,
    feldman_cousins_interval,
    interval_coverage,
    share_intervals,
)
from ldp_core import intervals as iv

#: The designs the headline interval is checked under: the class exercise, the two coins,
#: Warner's spinner (and its mirror, whose reports fall as the share rises), RR_eps.
DESIGNS = {
    "class exercise": DieRR(4, 3),
    "two coins": TwoCoinRR(),
    "Warner p = 0.7": WarnerRR(0.7),
    "Warner p = 0.3": WarnerRR(0.3),
    "RR eps = 0.5": EpsilonRR(0.5),
    "RR eps = 3": EpsilonRR(3.0),
}
SIZES = (1, 2, 5, 10, 20, 30, 40, 100, 300)
LEVEL = 0.95
GRID = np.linspace(0.0, 1.0, 2001)


def _binom_pmf_exact(n: int, lam: float) -> list[float]:
    """P(Binomial(n, lam) = k) from integer binomial coefficients (reference)."""
    return [math.comb(n, k) * lam**k * (1 - lam) ** (n - k) for k in range(n + 1)]


def _cp_reference(n: int, y: int, level: float = LEVEL) -> tuple[float, float]:
    """Clopper-Pearson for a binomial proportion by bisection on exact tail sums."""
    tail = (1 - level) / 2

    def upper_tail(lam: float) -> float:  # P(X >= y), rising in lam
        return math.fsum(_binom_pmf_exact(n, lam)[y:])

    def lower_tail(lam: float) -> float:  # P(X <= y), falling in lam
        return math.fsum(_binom_pmf_exact(n, lam)[: y + 1])

    def solve(f, rising: bool) -> float:
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            if (f(mid) < tail) == rising:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    low = 0.0 if y == 0 else solve(upper_tail, True)
    high = 1.0 if y == n else solve(lower_tail, False)
    return low, high


def _coverage_from_intervals(design, n: int, mu: np.ndarray, low: np.ndarray,
                             high: np.ndarray) -> np.ndarray:
    """Sum the binomial probabilities of the counts whose interval holds each share."""
    out = []
    for m in mu:
        pmf = _binom_pmf_exact(n, design.report_probability(float(m)))
        out.append(math.fsum(p for p, lo, hi in zip(pmf, low, high, strict=True)
                             if lo <= m <= hi))
    return np.array(out)


def _worst_shares(design, n: int, level: float = LEVEL) -> np.ndarray:
    """A fine grid plus both sides of every interval end: coverage jumps down just
    beyond an end, so its minimum sits there."""
    low, high = exact_interval(design.a, design.b, n, np.arange(n + 1), level)
    ends = np.concatenate([low, high])
    near = np.concatenate([ends - 1e-9, ends + 1e-9, ends])
    return np.unique(np.clip(np.concatenate([GRID, near]), 0.0, 1.0))


# -- check values ----------------------------------------------------------------------
def test_clopper_pearson_check_values() -> None:
    """10 "yes" of 30: lambda in [0.172874, 0.528120] (SciPy and R agree); through the
    class exercise's die, mu in [0, 0.5562]."""
    low, high = exact_interval(1.0, 0.0, 30, 10)
    assert (round(low, 6), round(high, 6)) == (0.172874, 0.528120)
    die = DieRR(4, 3)
    low, high = exact_interval(die.a, die.b, 30, 10)
    assert low == 0.0 and round(high, 4) == 0.5562
    assert high == pytest.approx((0.528120 - 0.25) / 0.5, abs=2e-6)
    assert BinaryCounts.single(die, yes=10, n=30).exact_interval() == pytest.approx((low, high))
    assert BinaryCounts.single(die, yes=10, n=30).summary().exact_high == pytest.approx(high)


def test_feldman_cousins_check_value() -> None:
    """10 of 30 at eps = ln 3 (die 1-4) on a grid of 2,001 shares: [0, 0.534]."""
    low, high = feldman_cousins_interval(0.75, 0.25, 30, 10)
    assert low == 0.0
    assert abs(high - 0.534) <= 0.0005 + 1e-12  # one grid step is 0.0005


@pytest.mark.parametrize("n", [1, 2, 7, 30, 61])
def test_clopper_pearson_matches_exact_tail_sums(n: int) -> None:
    low, high = exact_interval(1.0, 0.0, n, np.arange(n + 1))
    for y in range(n + 1):
        ref = _cp_reference(n, y)
        assert low[y] == pytest.approx(ref[0], abs=1e-12)
        assert high[y] == pytest.approx(ref[1], abs=1e-12)


def test_clopper_pearson_against_scipy_when_available() -> None:
    stats = pytest.importorskip("scipy.stats")
    for n in (1, 3, 30, 300, 2000):
        y = np.arange(n + 1)
        low, high = exact_interval(1.0, 0.0, n, y)
        ref_low = np.where(y > 0, stats.beta.ppf(0.025, y, n - y + 1), 0.0)
        ref_high = np.where(y < n, stats.beta.ppf(0.975, y + 1, n - y), 1.0)
        np.testing.assert_allclose(low, ref_low, atol=1e-12)
        np.testing.assert_allclose(high, ref_high, atol=1e-12)
    for level in (0.5, 0.9, 0.99):
        low, high = exact_interval(1.0, 0.0, 40, 13, level)
        assert low == pytest.approx(stats.beta.ppf((1 - level) / 2, 13, 28), abs=1e-12)
        assert high == pytest.approx(stats.beta.ppf((1 + level) / 2, 14, 27), abs=1e-12)


def test_special_functions_against_the_standard_library() -> None:
    x = np.concatenate([np.linspace(0.05, 40, 800), np.arange(1.0, 5000.0, 7.0)])
    ref = np.array([math.lgamma(v) for v in x])
    np.testing.assert_allclose(iv._log_gamma(x), ref, rtol=2e-14, atol=2e-14)
    for n, lam in ((0, 0.3), (1, 0.0), (12, 1.0), (40, 0.25), (500, 0.61)):
        pmf = np.exp(iv._binom_logpmf(np.arange(n + 1), n, lam))
        assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
        start, window = iv._binom_window(n, lam)  # the counts that hold all but 1e-20
        np.testing.assert_allclose(window, pmf[start:start + window.size], rtol=1e-12)
        assert window.sum() == pytest.approx(1.0, abs=1e-12)
        if n <= 40:
            np.testing.assert_allclose(pmf, _binom_pmf_exact(n, lam), rtol=1e-12, atol=1e-300)
    # the convolution: FFT for long windows, equal to the direct sum within 1e-15
    rng = np.random.default_rng(5)
    x, y = rng.dirichlet(np.ones(900)), rng.dirichlet(np.ones(700))
    np.testing.assert_allclose(iv._convolve(x, y), np.convolve(x, y), rtol=0, atol=1e-15)
    assert iv._convolve(x, y).min() >= 0.0


# -- the guarantee -----------------------------------------------------------------------
@pytest.mark.parametrize("name", DESIGNS)
@pytest.mark.parametrize("n", SIZES)
def test_headline_interval_covers_at_every_share(name: str, n: int) -> None:
    design = DESIGNS[name]
    shares = _worst_shares(design, n)
    cover = interval_coverage(design.a, design.b, n, shares)
    assert cover.min() >= LEVEL, (name, n, float(shares[cover.argmin()]), float(cover.min()))


@pytest.mark.parametrize("n", [500, 1000, 2000])
def test_headline_interval_covers_for_large_classes(n: int) -> None:
    design = DieRR(4, 3)
    cover = interval_coverage(design.a, design.b, n, _worst_shares(design, n))
    assert cover.min() >= LEVEL


@pytest.mark.parametrize("name", DESIGNS)
@pytest.mark.parametrize("n", SIZES)
def test_headline_interval_covers_a_fixed_class(name: str, n: int) -> None:
    """For a fixed class of n with v true "yes" (only the randomization varies), too."""
    design = DESIGNS[name]
    shares = np.arange(n + 1) / n
    cover = interval_coverage(design.a, design.b, n, shares, model="class")
    assert cover.min() >= LEVEL, (name, n, float(cover.min()))


def test_the_class_exercise_covers_every_fixed_class_up_to_100() -> None:
    """For a fixed class the guarantee is computed, not proved: every class of 1 to 100
    students under the die, at each share it can have (the guide's promise)."""
    worst = min(float(interval_coverage(0.75, 0.25, n, np.arange(n + 1) / n,
                                        model="class").min()) for n in range(1, 101))
    assert worst >= LEVEL


@pytest.mark.parametrize("name", DESIGNS)
@pytest.mark.parametrize("n", [*SIZES, 2000])
def test_headline_interval_is_never_empty(name: str, n: int) -> None:
    design = DESIGNS[name]
    low, high = exact_interval(design.a, design.b, n, np.arange(n + 1))
    assert np.all(np.isfinite(low)) and np.all(np.isfinite(high))
    assert np.all((0.0 <= low) & (low <= high) & (high <= 1.0))
    # ends move with the count: up for designs whose reports rise with the share
    step = np.diff(low) if design.a > design.b else -np.diff(high)
    assert np.all(step >= -1e-12)


def test_improbable_counts_get_the_nearest_edge() -> None:
    """3 "yes" of 100 under the die is below what an all-"no" class gives (25 expected):
    the interval is the single share 0, not empty; 97 of 100 gives the share 1."""
    assert exact_interval(0.75, 0.25, 100, 3) == (0.0, 0.0)
    assert exact_interval(0.75, 0.25, 100, 97) == (1.0, 1.0)
    assert exact_interval(0.3, 0.7, 100, 97) == (0.0, 0.0)  # Warner p = 0.3: mirrored


def test_vectorised_equals_one_at_a_time() -> None:
    """One count runs the continued fraction in Python floats, many in numpy arrays: the
    same arithmetic, the same interval."""
    for n in (30, 2000):
        ys = np.unique(np.linspace(0, n, 25).astype(int))
        low, high = exact_interval(0.75, 0.25, n, ys)
        for y, lo, hi in zip(ys, low, high, strict=True):
            assert exact_interval(0.75, 0.25, n, int(y)) == pytest.approx((lo, hi), abs=1e-15)
    low2, high2 = exact_interval(0.75, 0.25, np.array([30, 40]), np.array([10, 10]))
    assert low2[0] == low[2] and high2[1] == exact_interval(0.75, 0.25, 40, 10)[1]


# -- the other intervals, and the power of the coverage check ---------------------------
@pytest.mark.parametrize("method", ["exact", "likelihood_ratio", "normal"])
@pytest.mark.parametrize("n", [1, 4, 30])
def test_coverage_agrees_with_the_intervals_themselves(method: str, n: int) -> None:
    """Coverage is decided from each interval's test; summed over the intervals
    themselves (an independent route) it is the same."""
    for design in (DieRR(4, 3), WarnerRR(0.3), EpsilonRR(3.0)):
        low, high = share_intervals(design.a, design.b, n, np.arange(n + 1), method=method)
        shares = np.unique(np.concatenate([np.linspace(0, 1, 101), np.clip(low, 0, 1),
                                           np.clip(high, 0, 1)]))
        shares = shares[(np.abs(shares[:, None] - np.concatenate([low, high])[None, :])
                         > 1e-9).all(axis=1) | np.isin(shares, [0.0, 1.0])]
        got = interval_coverage(design.a, design.b, n, shares, method=method)
        ref = _coverage_from_intervals(design, n, shares, low, high)
        np.testing.assert_allclose(got, ref, atol=1e-12)


def test_intervals_agree_with_binary_counts() -> None:
    design = WarnerRR(0.7)
    for n, y in ((1, 0), (1, 1), (17, 5), (40, 33)):
        counts = BinaryCounts.single(design, yes=y, n=n)
        for method, expected in (("normal", counts.normal_interval()),
                                 ("likelihood_ratio", counts.lr_interval()),
                                 ("exact", counts.exact_interval())):
            low, high = share_intervals(design.a, design.b, n, [y], method=method)
            assert (low[0], high[0]) == pytest.approx(expected, abs=1e-12), (method, n, y)


@pytest.mark.parametrize("method", ["normal", "likelihood_ratio"])
def test_the_coverage_check_rejects_intervals_that_undercover(method: str) -> None:
    """Power: the same check fails the normal and likelihood-ratio intervals, and a
    Clopper-Pearson interval built at 90%, at classroom sizes."""
    design = DieRR(4, 3)
    for n in (10, 20, 30, 40):
        cover = interval_coverage(design.a, design.b, n, GRID, method=method)
        assert cover.min() < LEVEL, (method, n)
    cover = interval_coverage(design.a, design.b, 30, GRID, level=0.90)
    assert cover.min() < LEVEL


def test_normal_interval_coverage_quoted_in_the_docs() -> None:
    """The normal interval's exact coverage for the class exercise, population model."""
    design = DieRR(4, 3)
    cover = interval_coverage(design.a, design.b, 30, [0.1, 0.5], method="normal")
    # mu = 1/2: the interval holds it for 11 <= X <= 19, X ~ Binomial(30, 1/2)
    assert cover[1] == pytest.approx(0.901262853294611, abs=1e-12)


def test_class_model_sums_the_two_binomials() -> None:
    design = DieRR(4, 3)
    n, v = 6, 4
    low, high = exact_interval(design.a, design.b, n, np.arange(n + 1))
    yes = _binom_pmf_exact(v, 0.75)
    no = _binom_pmf_exact(n - v, 0.25)
    pmf = np.convolve(yes, no)
    ref = math.fsum(p for p, lo, hi in zip(pmf, low, high, strict=True) if lo <= v / n <= hi)
    got = interval_coverage(design.a, design.b, n, [v / n], model="class")
    assert got[0] == pytest.approx(ref, abs=1e-12)
    with pytest.raises(ValueError, match="v / n"):
        interval_coverage(design.a, design.b, n, [0.5001], model="class")


def test_feldman_cousins_covers_on_its_grid_but_not_between() -> None:
    """Built on 2,001 shares it covers 95% there; between grid points a count that just
    left an acceptance region is not yet replaced, and coverage dips (docs/intervals.md)."""
    design = DieRR(4, 3)
    n = 20
    on_grid = interval_coverage(design.a, design.b, n, GRID[::10], method="feldman_cousins")
    assert on_grid.min() >= LEVEL
    between = GRID[:-1] + 0.00025
    off = interval_coverage(design.a, design.b, n, between, method="feldman_cousins")
    assert off.min() < 0.94


def test_expected_width_orders_the_methods() -> None:
    design = DieRR(4, 3)
    shares = np.linspace(0, 1, 21)
    widths = {m: expected_width(design.a, design.b, 30, shares, method=m).mean()
              for m in ("exact", "likelihood_ratio", "feldman_cousins")}
    assert widths["likelihood_ratio"] < widths["feldman_cousins"] < widths["exact"]
    assert widths["exact"] < 1.1 * widths["feldman_cousins"]
    low, high = exact_interval(design.a, design.b, 30, np.arange(31))
    pmf = _binom_pmf_exact(30, 0.5)
    assert expected_width(design.a, design.b, 30, [0.5])[0] == pytest.approx(
        math.fsum(p * (hi - lo) for p, lo, hi in zip(pmf, low, high, strict=True)), abs=1e-12)


# -- rounds with several designs ------------------------------------------------------------
def _mixed_coverage(groups, shares) -> list[float]:
    """Exact coverage of the several-design interval by enumerating every pair of counts."""
    (d1, n1), (d2, n2) = groups
    intervals = {}
    for y1 in range(n1 + 1):
        for y2 in range(n2 + 1):
            low, high = BinaryCounts(((d1, n1, y1), (d2, n2, y2))).exact_interval()
            assert 0.0 <= low <= high <= 1.0
            intervals[y1, y2] = (low, high)
    out = []
    for mu in shares:
        p1 = _binom_pmf_exact(n1, d1.report_probability(mu))
        p2 = _binom_pmf_exact(n2, d2.report_probability(mu))
        out.append(math.fsum(p1[y1] * p2[y2] for (y1, y2), (lo, hi) in intervals.items()
                             if lo <= mu <= hi))
    return out


@pytest.mark.parametrize("second", [EpsilonRR(2.0), WarnerRR(0.3)])
def test_several_designs_cover_and_are_never_empty(second) -> None:
    shares = np.linspace(0.0, 1.0, 41)
    cover = _mixed_coverage(((DieRR(4, 3), 5), (second, 4)), shares)
    assert min(cover) >= LEVEL, (second, shares[int(np.argmin(cover))], min(cover))


def test_several_designs_with_one_channel_are_one_binomial() -> None:
    one = BinaryCounts.single(DieRR(4, 3), yes=21, n=40).exact_interval()
    two = BinaryCounts(((DieRR(4, 3), 15, 9), (TwoCoinRR(), 25, 12))).exact_interval()
    assert two == pytest.approx(one, abs=1e-12)
    # the convolution route, forced with a channel a hair away, lands on the same interval
    near = BinaryCounts(((DieRR(4, 3), 15, 9), (WarnerRR(0.75 + 1e-12), 25, 12)))
    assert near.exact_interval() == pytest.approx(one, abs=1e-6)


# -- input -----------------------------------------------------------------------------------
def test_bad_input_is_refused_with_its_name() -> None:
    with pytest.raises(ValueError, match="carry no information"):
        exact_interval(0.5, 0.5, 10, 3)
    with pytest.raises(ValueError, match="n must be at least 1"):
        exact_interval(0.75, 0.25, 0, 0)
    with pytest.raises(ValueError, match="yes must be <= n"):
        exact_interval(0.75, 0.25, 10, 11)
    with pytest.raises(ValueError, match="level"):
        exact_interval(0.75, 0.25, 10, 3, level=1.0)
    with pytest.raises(ValueError, match="method"):
        interval_coverage(0.75, 0.25, 10, [0.5], method="wald")
    with pytest.raises(ValueError, match="model"):
        interval_coverage(0.75, 0.25, 10, [0.5], model="world")
    with pytest.raises(ValueError, match="shares"):
        interval_coverage(0.75, 0.25, 10, [1.5])
    assert BinaryCounts.single(DieRR(4, 3), yes=0, n=0).exact_interval() is None
    assert BinaryCounts.single(DieRR(4, 3), yes=0, n=0).summary().exact_low is None


def test_exact_fractions_and_floats_give_the_same_interval() -> None:
    """The die's channel is exact (3/4, 1/4); the same numbers as floats agree."""
    die = DieRR(4, 3)
    assert Fraction(die.a) == Fraction(3, 4)
    assert exact_interval(die.a, die.b, 40, 21) == exact_interval(0.75, 0.25, 40, 21)
    assert ldp_core.INTERVAL_METHODS[0] == "exact"


# -- the docs ------------------------------------------------------------------------------------
def test_docs_intervals_shows_what_the_script_computes() -> None:
    """docs/intervals.md quotes docs/make_interval_tables.py: the guide's fixed-class table
    and rehearsal line, and the class exercise's rows (the slow designs table is the same
    code on other designs)."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("make_interval_tables",
                                                  root / "docs" / "make_interval_tables.py")
    assert spec is not None and spec.loader is not None
    tables = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tables)
    doc = (root / "docs" / "intervals.md").read_text()
    for line in tables.fixed_class_table():
        assert line in doc, line
    assert "24 of 40 truly Vanilla: the normal interval covers it in\n95.6% of rehearsals, " \
           "the exact interval in 98.3%" in doc
    assert tables.rehearsal_line().endswith("normal 95.6%, exact 98.3%")
    for line in tables.class_exercise_table():
        assert line in doc, line
    guide = (root / "docs" / "instructor-guide.md").read_text()
    assert "98.3%" in guide and "97.1%" in guide and "about 95% of classes" not in guide
