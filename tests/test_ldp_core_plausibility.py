"""The plausibility check: reports that no class could have produced under the design.

Size: every check computes its p-value against the honest class most likely to raise it
(everyone at the top of the range, or answering "yes"), so an honest class of any size
raises it at most ALPHA = 1e-4 of the time. Computed exactly where the reports are counts
(yes/no designs, Duchi et al.'s bit, one Laplace report) and measured by simulation
otherwise (at a larger significance, where a simulation can see the rate, since the
calibration is the same at every level). Each size test has a power check: the same
computation rejects the check it replaced (the chi-squared approximation for yes/no, the
normal tail of the mean for the Laplace mechanism). Unary encoding keeps its chi-squared
G-test, whose measured rate on honest classes stays under 0.1%.

Power: 50 "Yes" of 50 under the die (probability at most 0.75^50 ≈ 6e-7 for any class);
one device sending the largest report 150 times beside 100 students: caught beside a class
at the top of the range under every mechanism, and mid-range wherever the reports carry
more than one bit; one Laplace report at the phone's clamp. Stealthy stuffing (reports
randomized as if from a true answer) is not seen, by construction. docs/numeric-checks.md
has the tables.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp_core import (
    ALPHA,
    NUMERIC_NAMES,
    REPORT_TAIL,
    BinaryCounts,
    DieRR,
    DuchiMechanism,
    EpsilonRR,
    LaplaceMechanism,
    TwoCoinRR,
    UnaryEncoding,
    WarnerRR,
    binary_plausibility,
    chi2_sf,
    numeric_design_from_params,
    numeric_mechanism,
    numeric_plausibility,
    ue_plausibility,
)
from ldp_core.plausibility import (
    _mean_sf,
    _numeric_p_values,
    _tail_points,
    _ue_total_sf,
    binom_sf,
    laplace_sum_sf,
    ones_distribution,
    ue_thresholds,
)
from tests.support.numeric_classes import (
    one_report_alarm_rate,
    previous_one_report_rate,
    simulated_alarms,
    two_valued_alarm_rate,
)

DIE = DieRR(4, 3)
SIZES = [10, 30, 100, 300, 1000, 2000]


def _binom_pmf(k: int, p: float) -> np.ndarray:
    j = np.arange(k + 1)
    logs = np.array([math.lgamma(k + 1) - math.lgamma(x + 1) - math.lgamma(k - x + 1)
                     for x in j])
    with np.errstate(divide="ignore"):
        return np.exp(logs + j * np.log(p) + (k - j) * np.log1p(-p))


def _exact_alarm_rate(design, n: int, v: int) -> float:
    """P(alarm) for a fixed class with v true "yes": V = Bin(v, a) + Bin(n - v, b)."""
    pmf = np.convolve(_binom_pmf(v, design.a), _binom_pmf(n - v, design.b))
    alarm = np.array([not binary_plausibility(BinaryCounts.single(design, y, n)).fits
                      for y in range(n + 1)])
    return float(pmf[alarm].sum())


def test_fifty_of_fifty_yes_is_flagged_not_called_noise():
    result = binary_plausibility(BinaryCounts.single(DIE, 50, 50))
    assert not result.fits and result.direction == "too_many_yes"
    assert result.p_value == pytest.approx(2 * 0.75**50)  # two sides share the significance
    low = binary_plausibility(BinaryCounts.single(DIE, 0, 50))
    assert not low.fits and low.direction == "too_few_yes"


BINARY_DESIGNS = {"die": DIE, "two coins": TwoCoinRR(), "warner 0.7": WarnerRR(0.7),
                  "rr 0.5": EpsilonRR(0.5), "rr 1": EpsilonRR(1.0), "rr 3": EpsilonRR(3.0),
                  "rr 5": EpsilonRR(5.0)}


@pytest.mark.parametrize("n", [1, 2, 3, 5, *SIZES])
@pytest.mark.parametrize("name", BINARY_DESIGNS)
def test_honest_classes_raise_the_alarm_at_most_alpha_exactly(name, n):
    design = BINARY_DESIGNS[name]
    for v in sorted({0, n // 2, n}):
        assert _exact_alarm_rate(design, n, v) <= ALPHA


def _chi2_g_alarm(design, y: int, n: int) -> bool:
    """The check before: G = 2 n KL(share || the band's nearest edge) against chi-squared(1)."""
    share = y / n
    edge = min(max(share, design.b), design.a)
    g = 2 * n * sum(s * math.log(s / e) for s, e in ((share, edge), (1 - share, 1 - edge))
                    if s > 0)
    return chi2_sf(g, 1) < ALPHA


def test_power_the_exact_size_sees_the_chi_squared_approximation_overstep():
    """The chi-squared G-test the check used before fires 1.8e-4 of the time for an all-yes
    class of 30 under the die: the exact computation above would have failed it."""
    pmf = _binom_pmf(30, DIE.a)
    rate = sum(pmf[y] for y in range(31) if _chi2_g_alarm(DIE, y, 30))
    assert rate > 1.5 * ALPHA


def test_power_one_device_stuffing_an_all_yes_class():
    """100 honest students who all prefer "Yes" plus one device voting "Yes" 150 times."""
    n, extra = 100, 150
    pmf = _binom_pmf(n, DIE.a)  # the honest part's "yes" count
    alarm = np.array([not binary_plausibility(BinaryCounts.single(DIE, y + extra, n + extra)).fits
                      for y in range(n + 1)])
    assert float(pmf[alarm].sum()) > 0.9


def test_mixed_designs_are_checked_together():
    two = BinaryCounts(((DIE, 40, 30), (EpsilonRR(1.0), 40, 29)))
    assert binary_plausibility(two).fits
    stuffed = BinaryCounts(((DIE, 40, 40), (EpsilonRR(1.0), 40, 40)))
    assert not binary_plausibility(stuffed).fits


OUE = UnaryEncoding.optimized(5, math.log(3))


def test_all_ones_unary_reports_are_flagged():
    hist = np.zeros(6)
    hist[5] = 50
    result = ue_plausibility(OUE, hist)
    assert not result.fits and result.direction == "too_many_ones"


@pytest.mark.parametrize("n", [1, 2, 3, 5, *SIZES])
def test_honest_unary_reports_almost_never_raise_the_alarm(n):
    """Simulated, as the device sends them: 10,000 classes, none flagged (the rate is at
    most 1e-4, so 0 of 10,000 is expected and 3 would be 3 SE beyond it)."""
    rng = np.random.default_rng(n)
    probs = ones_distribution(OUE)
    hists = rng.multinomial(n, probs, size=10_000)
    flagged = sum(not ue_plausibility(OUE, h).fits for h in hists)
    assert flagged <= 3, flagged


SUE_5 = UnaryEncoding(5, math.exp(0.5) / (1 + math.exp(0.5)), 1 / (1 + math.exp(0.5)))
#: The designs the unary-encoding alarm is sized for below: the two where the former G-test
#: fired on honest classes at up to 6.25e-4 (SUE d = 5, ε = 1 at n = 17; OUE d = 5, ε = ln 3
#: at n = 12), a small and a large d, and the largest ε a question accepts.
UE_SIZED = [SUE_5, OUE, UnaryEncoding.optimized(3, 1.0), UnaryEncoding(14, 0.75, 0.25),
            UnaryEncoding.optimized(20, 5.0)]


def _pmf(n: int, q: float) -> np.ndarray:
    """Bin(n, q) from log-gamma binomial coefficients."""
    k = np.arange(n + 1)
    log_comb = np.array([math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1)
                         for j in k])
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.nan_to_num(np.exp(log_comb + k * math.log(q) + (n - k) * math.log1p(-q)))


def _first(flagged, lo: int, hi: int) -> int:
    """The smallest t in lo..hi with ``flagged(t)`` (a monotone test), or hi + 1."""
    while lo <= hi:
        mid = (lo + hi) // 2
        if flagged(mid):
            hi = mid - 1
        else:
            lo = mid + 1
    return lo


def _size_of(p_values: np.ndarray, pmf: np.ndarray, share: float) -> float:
    """P(the test's p-value <= alpha * share) under its exact law."""
    return float(pmf[p_values <= ALPHA * share].sum())


@pytest.mark.parametrize("oracle", UE_SIZED, ids=lambda o: f"d{o.d}-p{o.p:.3f}-q{o.q:.3f}")
def test_the_unary_alarm_is_sized_exactly_at_every_n_up_to_200(oracle):
    """Each of the alarm's tests, against its exact law (the total of ones a convolution of
    two binomials, each count a binomial), computed independently here: their sizes sum to
    at most ALPHA at every n = 1..200 (the union bound, so the alarm's own rate is lower)."""
    law = ones_distribution(oracle)
    high, low = ue_thresholds(oracle)
    worst = 0.0
    for n in range(1, 201):
        total = np.convolve(_pmf(n, oracle.p), _pmf(n * (oracle.d - 1), oracle.q))
        top = total.size - 1

        def upper(t: int, n: int = n) -> bool:  # the alarm's own p-value of "too many"
            return _ue_total_sf(oracle, n, t) <= ALPHA * 0.25

        def lower(t: int, n: int = n, top: int = top) -> bool:  # "too few", from the top
            return 1.0 - _ue_total_sf(oracle, n, top - t + 1) <= ALPHA * 0.25

        size = float(total[_first(upper, 0, top):].sum())
        size += float(total[:top - _first(lower, 0, top) + 1].sum())
        for ks, tail in ((high, lambda k: law[k:].sum()), (low, lambda k: law[:k + 1].sum())):
            for k in ks:
                q = float(tail(k))
                c = np.arange(n + 1)
                size += _size_of(binom_sf(c, n, q), _pmf(n, q), 0.25 / len(ks))
        worst = max(worst, size)
    assert worst <= ALPHA * (1 + 1e-9), worst


@pytest.mark.parametrize(("oracle", "n"), [(SUE_5, 17), (OUE, 12)], ids=["SUE-n17", "OUE-n12"])
def test_the_unary_alarm_rate_is_exact_where_the_g_test_failed(oracle, n):
    """Every histogram of n reports, with its exact multinomial probability: the alarm's
    true rate on honest classes, where the chi-squared approximation gave 6.25e-4."""
    import itertools

    law = ones_distribution(oracle)
    cells = oracle.d + 1
    rate = 0.0
    for bars in itertools.combinations(range(n + cells - 1), cells - 1):
        edges = (-1, *bars, n + cells - 1)
        hist = np.array([edges[i + 1] - edges[i] - 1 for i in range(cells)])
        if not ue_plausibility(oracle, hist).fits:
            log_p = math.lgamma(n + 1) + sum(h * math.log(q) - math.lgamma(h + 1)
                                             for h, q in zip(hist, law, strict=True))
            rate += math.exp(log_p)
    assert rate <= ALPHA, rate


@pytest.mark.parametrize(("oracle", "n"), [(SUE_5, 17), (OUE, 12)], ids=["SUE-n17", "OUE-n12"])
def test_power_in_the_small_classes_five_all_ones_reports_are_flagged(oracle, n):
    """Power where the alarm is sized exactly: one device adding 5 all-ones reports to an
    honest class of n is flagged in at least 99% of 2,000 classes (fixed seed; measured
    100%), and 15 all-zeros reports (honest reports are all zeros up to 16% of the time
    under OUE) in 95%."""
    rng = np.random.default_rng(n)
    hists = rng.multinomial(n, ones_distribution(oracle), size=2_000)
    ones, zeros = hists.copy(), hists.copy()
    ones[:, oracle.d] += 5
    zeros[:, 0] += 15
    assert np.mean([not ue_plausibility(oracle, h).fits for h in ones]) >= 0.99
    flagged = [ue_plausibility(oracle, h) for h in zeros]
    assert np.mean([not f.fits for f in flagged]) >= 0.95
    assert {f.direction for f in flagged if not f.fits} == {"too_few_ones"}


def test_ones_distribution_matches_the_device():
    rng = np.random.default_rng(3)
    reports = OUE.perturb(rng.integers(0, 5, 200_000), rng=rng)
    seen = np.bincount(reports.sum(axis=1), minlength=6) / 200_000
    se = np.sqrt(ones_distribution(OUE) * (1 - ones_distribution(OUE)) / 200_000)
    assert np.all(np.abs(seen - ones_distribution(OUE)) <= 4 * se + 1e-12)


def test_power_for_partly_stuffed_unary_reports():
    rng = np.random.default_rng(9)
    honest = rng.multinomial(300, ones_distribution(OUE), size=500)
    honest[:, 5] += 30  # one device sends "11111" 30 times
    assert np.mean([not ue_plausibility(OUE, h).fits for h in honest]) > 0.9


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7])
def test_chi2_sf_against_simulation(df):
    rng = np.random.default_rng(df)
    draws = rng.chisquare(df, 400_000)
    for x in (0.5, 2.0, 6.0, 12.0):
        p = chi2_sf(x, df)
        se = math.sqrt(p * (1 - p) / draws.size)
        assert abs(np.mean(draws > x) - p) <= 4 * se + 1e-9
    assert ALPHA == 1e-4


# -- numeric ----------------------------------------------------------------------------------


NUMERIC_SIZES = [1, 2, 3, 5, 10, 30, 100, 1000]
FORM_EPS = [0.1, 0.5, math.log(3), 2.0, 3.0, 5.0]
#: The significance the simulated size tests run at: large enough for 40,000 classes to see
#: the rate (its SE is 1.6e-4), and the check's calibration is the same at every level.
SIM_ALPHA = 1e-3


def _numeric(name: str, eps: float = 1.0):
    return numeric_design_from_params({"design": name, "epsilon": eps, "lo": 0, "hi": 12})


def _check(design, reports):
    return numeric_plausibility([(design, np.asarray(reports, dtype=float))])


def _sent(mech, x, shape, rng) -> np.ndarray:
    """What phones send for students at x: the report, snapped to its cell if it has cells."""
    y = mech.perturb(np.full(shape, x), rng=rng)
    return y if mech.device_grid() is None else mech.snap(y)


def _largest(mech) -> float:
    """The largest report a phone sends."""
    grid = mech.device_grid()
    return float(mech.output_bounds[1]) if grid is None else float(mech.snap(grid[1]))


def test_binom_sf_against_exact_sums():
    for n, q in ((1, 0.3), (7, 0.5), (40, 0.75), (60, 1e-3)):
        for k in range(n + 2):
            exact = sum(math.comb(n, j) * q**j * (1 - q) ** (n - j) for j in range(k, n + 1))
            assert float(binom_sf(k, n, q)) == pytest.approx(exact, rel=1e-10, abs=1e-300)


@pytest.mark.parametrize("name", NUMERIC_NAMES)
@pytest.mark.parametrize("eps", FORM_EPS)
def test_every_mechanism_s_reports_grow_with_the_true_value(name, eps):
    """The check's premise: P(y >= t | x) never decreases in x, so the class at the top of
    the range is the most likely to send large reports."""
    mech = numeric_mechanism(name, eps)
    bound = (mech.device_grid() or mech.output_bounds)[1]
    t = np.linspace(-bound - 1, bound + 1, 801)
    sf = np.array([mech.survival(t, x) for x in np.linspace(-1, 1, 41)])
    assert np.all((sf >= 0) & (sf <= 1))
    assert np.all(np.diff(sf, axis=0) >= -1e-12)
    assert np.all(np.diff(sf, axis=1) <= 1e-12)  # and it is a survival function


@pytest.mark.parametrize("name", NUMERIC_NAMES)
@pytest.mark.parametrize("eps", [0.5, 3.0])
def test_survival_is_what_the_phones_send(name, eps):
    mech = numeric_mechanism(name, eps)
    rng = np.random.default_rng(21)
    draws = 400_000
    for x in (-1.0, 0.3, 1.0):
        y = mech.perturb(np.full(draws, x), rng=rng)
        ts = np.quantile(y, [0.05, 0.3, 0.7, 0.97, 0.999])
        sf = np.asarray(mech.survival(ts, x))
        seen = (y[:, None] >= ts[None, :]).mean(axis=0)
        se = np.sqrt(sf * (1 - sf) / draws) + 1e-12
        assert np.all(np.abs(seen - sf) <= 4 * se), (seen, sf)
        # power: the survival of a value 0.1 away is told apart
        wrong = np.asarray(mech.survival(ts, x - 0.1 if x > 0 else x + 0.1))
        assert np.any(np.abs(seen - wrong) > 4 * se)


def test_laplace_clamp_is_where_the_top_class_reaches_report_tail():
    for eps in FORM_EPS:
        mech = LaplaceMechanism(eps)
        bound = mech.device_grid()[1]
        assert float(mech.survival(bound, 1.0)) == pytest.approx(REPORT_TAIL, rel=1e-9)
        assert float(mech.survival(bound, -1.0)) < REPORT_TAIL
        assert float(mech.survival(np.nextafter(bound, np.inf), 1.0)) == 0.0
        assert mech.plausible(bound) and not mech.plausible(bound * (1 + 1e-6))


@pytest.mark.parametrize("n", [1, 2, 5, 30])
def test_the_laplace_sum_tail_is_exact(n):
    """Against closed forms (n = 1, 2) and 2 million simulated sums, and the normal tail of
    the same variance is told apart (power)."""
    scale = 2.0
    if n == 1:
        assert float(laplace_sum_sf(7.0, 1, scale)) == pytest.approx(0.5 * math.exp(-3.5),
                                                                      rel=1e-12)
    if n == 2:
        r = 7.0 / scale
        assert float(laplace_sum_sf(7.0, 2, scale)) == pytest.approx(
            math.exp(-r) * (2 + r) / 4, rel=1e-12)
    rng = np.random.default_rng(n)
    sums = rng.laplace(0.0, scale, (2_000_000, n)).sum(axis=1)
    sd = scale * math.sqrt(2 * n)
    for z in (-1.0, 0.0, 2.0, 3.5):
        p = float(laplace_sum_sf(z * sd, n, scale))
        se = math.sqrt(p * (1 - p) / sums.size)
        assert abs(np.mean(sums >= z * sd) - p) <= 4 * se
    normal = 0.5 * math.erfc(3.5 / math.sqrt(2))
    p = float(laplace_sum_sf(3.5 * sd, n, scale))
    assert abs(p - normal) > 8 * math.sqrt(p / sums.size)  # the normal tail is not it


@pytest.mark.parametrize("name", [m for m in NUMERIC_NAMES if m not in ("laplace", "duchi")])
@pytest.mark.parametrize("n", [1, 2, 3, 5, 10, 30])
def test_the_normal_tail_bounds_the_mean_of_the_bounded_mechanisms(name, n):
    """Their report at the top of the range leans toward the middle, so beyond two SDs (a
    p-value below 0.023; the alarm needs 2.5e-5) the mean's upper tail is lighter than the
    normal one: the normal p-value holds its level there. The same measurement rejects it
    for the Laplace mechanism (next test). Duchi et al.'s mean is its exact binomial."""
    for eps in (0.1, 0.7, 2.0, 5.0):
        mech = numeric_mechanism(name, eps)
        if mech.device_grid() is None:  # two reports at this ε: the exact binomial instead
            continue
        rng = np.random.default_rng(n)
        means = _sent(mech, 1.0, (400_000, n), rng).mean(axis=1)
        sd = math.sqrt(float(mech.variance(1.0)) / n)
        for z in (2.0, 3.0):
            bound = float(_mean_sf(mech, n, np.array([1.0 + z * sd]))[0])
            seen = float(np.mean(means >= 1.0 + z * sd))
            assert seen <= bound + 4 * math.sqrt(bound / means.size) + 1e-6, (eps, z)


def test_power_the_normal_tail_does_not_bound_the_laplace_mean():
    mech = LaplaceMechanism(1.0)
    rng = np.random.default_rng(2)
    for n in (1, 3, 10):
        means = mech.perturb(np.ones((400_000, n)), rng=rng).mean(axis=1)
        sd = math.sqrt(mech.worst_variance() / n)
        normal = 0.5 * math.erfc(3.0 / math.sqrt(2))
        seen = float(np.mean(means >= 1.0 + 3.0 * sd))
        assert seen > normal + 4 * math.sqrt(normal / means.size)
        exact = float(_mean_sf(mech, n, np.array([1.0 + 3.0 * sd]))[0])
        assert abs(seen - exact) <= 4 * math.sqrt(exact / means.size)


@pytest.mark.parametrize("n", NUMERIC_SIZES)
@pytest.mark.parametrize("eps", FORM_EPS)
def test_duchi_classes_raise_the_alarm_at_most_alpha_exactly(n, eps):
    mech = DuchiMechanism(eps)
    for xs in (np.ones(n), -np.ones(n), np.zeros(n), np.linspace(-1, 1, n)):
        assert two_valued_alarm_rate(mech, xs) <= ALPHA


@pytest.mark.parametrize("eps", FORM_EPS)
def test_one_laplace_report_raises_the_alarm_at_most_alpha_exactly(eps):
    """n = 1: the alarm region is y >= t_up or y <= -t_up; its probability at the worst class
    is exact. The check before (the mean's normal tail) fired 27-41x as often."""
    assert one_report_alarm_rate(LaplaceMechanism(eps)) <= ALPHA
    assert previous_one_report_rate(eps) > 20 * ALPHA


@pytest.mark.parametrize("n", NUMERIC_SIZES)
@pytest.mark.parametrize("name", [m for m in NUMERIC_NAMES if m != "duchi"])
def test_honest_classes_at_the_top_raise_the_alarm_at_most_alpha(name, n):
    """Simulated at the class most likely to raise it (everyone at the top), at SIM_ALPHA."""
    mech = numeric_mechanism(name, math.log(3))
    classes = 40_000 if n <= 100 else 4_000
    alarms = simulated_alarms(mech, n, classes, seed=n, alpha=SIM_ALPHA)
    assert alarms / classes <= SIM_ALPHA + 3 * math.sqrt(SIM_ALPHA / classes)


def test_power_the_simulated_size_sees_the_old_laplace_check_overstep():
    """The old check (the mean's normal tail at the worst-case SD) on the same classes."""
    mech = LaplaceMechanism(math.log(3))
    rng = np.random.default_rng(1)
    y = mech.perturb(np.ones((40_000, 1)), rng=rng)
    z = (y[:, 0] - 1.0) / math.sqrt(mech.worst_variance())
    rate = np.mean(0.5 * np.vectorize(math.erfc)(z / math.sqrt(2)) < SIM_ALPHA)
    assert rate > SIM_ALPHA + 3 * math.sqrt(SIM_ALPHA / 40_000)


def test_the_counted_points_are_where_the_top_class_reaches_each_level():
    for name in NUMERIC_NAMES:
        for eps in (0.5, 3.0):
            mech = numeric_mechanism(name, eps)
            points = _tail_points(mech)
            ts = np.array([t for t, _ in points])
            qs = np.array([q for _, q in points])
            assert np.all(np.diff(ts) > 0) and np.all(np.diff(qs) < 0)
            assert np.all(qs >= np.asarray(mech.survival(ts, 1.0)))  # half a cell lower
            assert qs.min() >= REPORT_TAIL


def _stuffed(mech, x: float, extra: np.ndarray, runs: int, seed: int) -> float:
    """Share of runs where 100 honest students at x plus the reports ``extra`` are flagged."""
    rng = np.random.default_rng(seed)
    honest = _sent(mech, x, (runs, 100), rng)
    rows = np.hstack([honest, np.broadcast_to(extra, (runs, extra.size))])
    p, _, _ = _numeric_p_values(mech, rows)
    return float(np.mean(p < ALPHA))


@pytest.mark.parametrize("name", NUMERIC_NAMES)
def test_power_one_device_sending_the_largest_report_150_times(name):
    """At the top of the range every mechanism catches it (as for yes/no). Mid-range the
    counts near the top catch it wherever the reports carry more than one bit; with Duchi
    et al.'s one bit at ε = ln 3 they cannot (150 extra +c beside 100 students make 80% +c,
    and a class at the top sends 75%): the exact power there is below 5%."""
    mech = numeric_mechanism(name, math.log(3))
    extra = np.full(150, _largest(mech))
    assert _stuffed(mech, 1.0, extra, 200, seed=4) > 0.9
    if mech.device_grid() is None:
        pmf = _binom_pmf(100, 0.5)  # the mid-range class's +c reports
        c = _largest(mech)
        rows = np.where(np.arange(250)[None, :] < (np.arange(101) + 150)[:, None], c, -c)
        p, _, _ = _numeric_p_values(mech, rows)
        assert float(pmf[p < ALPHA].sum()) < 0.05
    else:
        assert _stuffed(mech, 0.0, extra, 200, seed=5) > 0.9


@pytest.mark.parametrize("name", NUMERIC_NAMES)
def test_stealthy_stuffing_is_not_seen(name):
    """150 reports randomized as if from students at the top, beside 100 mid-range
    students, are a possible honest class: no test on the reports can flag them."""
    mech = numeric_mechanism(name, math.log(3))
    rng = np.random.default_rng(6)
    rows = np.hstack([_sent(mech, 0.0, (400, 100), rng), _sent(mech, 1.0, (400, 150), rng)])
    p, _, _ = _numeric_p_values(mech, rows)
    assert np.mean(p < ALPHA) <= 0.01


@pytest.mark.parametrize("where", [1.0, -0.25])
def test_one_forged_laplace_report_at_the_clamp_is_flagged(where):
    """100 honest phones (at the top, or at 4.5 h of 12), then one report at the phone's
    clamp: the mean moves by 2.4 h, and the check on the most extreme report says so."""
    design = _numeric("laplace", 1.0)
    mech = design.mechanism
    rng = np.random.default_rng(8)
    flagged = 0
    for _ in range(50):
        honest = _sent(mech, where, 100, rng)
        result = _check(design, np.append(honest, mech.device_grid()[1]))
        flagged += not result.fits and result.direction == "extreme_high"
    assert flagged == 50
    assert not mech.plausible(81.0)  # the old clamp, 492 h: refused outright


@pytest.mark.parametrize("name", [m for m in NUMERIC_NAMES if m != "laplace"])
@pytest.mark.parametrize("eps", FORM_EPS)
def test_one_largest_report_of_a_bounded_mechanism_is_not_an_outlier(name, eps):
    """Phones at the top of the range send the end of a bounded mechanism's range now and
    then: one such report, beside none or many mid-range ones, raises no alarm."""
    mech = numeric_mechanism(name, eps)
    for n in (1, 10, 100):
        rows = np.zeros((1, n))
        rows[0, -1] = _largest(mech)
        p, _, _ = _numeric_p_values(mech, rows)
        assert p[0] >= ALPHA, (n, p[0])


def test_an_empty_or_single_numeric_round_fits():
    design = _numeric("piecewise")
    assert _check(design, []).fits and numeric_plausibility([]).fits
    assert _check(design, [design.mechanism.big_c]).fits
    duchi = _numeric("duchi")
    assert _check(duchi, []).fits


def test_fifty_largest_duchi_reports_are_flagged_like_fifty_yes():
    """Duchi et al.'s mechanism is RR_eps on a bit: 50 of 50 "+c" is the binary case."""
    design = _numeric("duchi", math.log(3))
    result = _check(design, [design.mechanism.c_epsilon] * 50)
    assert not result.fits and result.direction == "above_range" and result.p_value < 1e-4
    low = _check(design, [-design.mechanism.c_epsilon] * 50)
    assert not low.fits and low.direction == "below_range"


def test_forty_largest_piecewise_reports_are_too_many_near_the_top():
    design = _numeric("piecewise", 1.0)
    result = _check(design, [design.mechanism.big_c] * 40)
    assert not result.fits and result.direction == "too_many_high"


def test_designs_changed_mid_round_are_each_checked():
    a, b = _numeric("laplace", 1.0), _numeric("laplace", 2.0)
    rng = np.random.default_rng(10)
    fine = numeric_plausibility([(a, _sent(a.mechanism, 0.0, 40, rng)),
                                 (b, _sent(b.mechanism, 0.0, 40, rng))])
    assert fine.fits
    forged = numeric_plausibility([(a, _sent(a.mechanism, 0.0, 40, rng)),
                                   (b, np.append(_sent(b.mechanism, 0.0, 40, rng),
                                                 b.mechanism.device_grid()[1]))])
    assert not forged.fits and forged.direction == "extreme_high"
