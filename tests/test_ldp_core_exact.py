"""Exact, deterministic checks of ldp_core against the channels and the course's numbers.

No randomness here: privacy loss is recomputed from each mechanism's channel
(every output, every pair of inputs), expectations are computed by
enumerating every possible set of reports, and the worked numbers of the
course material are compared to 1e-12 (or to the digits the material prints).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

import ldp_core
from ldp_core import (
    GRR,
    OLH,
    BinaryCounts,
    BinaryDesign,
    DieRR,
    EpsilonRR,
    ForcedResponse,
    FrequencyOracle,
    GammaRR,
    TwoCoinRR,
    UnaryEncoding,
    WarnerRR,
)

LN3 = math.log(3)

BINARY_DESIGNS: list[BinaryDesign] = [
    EpsilonRR(0.5),
    EpsilonRR(LN3),
    EpsilonRR(3.0),
    GammaRR(0.1),
    GammaRR(0.25),
    GammaRR(0.45),
    DieRR(4, 3),
    DieRR(6, 1),
    DieRR(10, 7),
    TwoCoinRR(),
    WarnerRR(0.7),
    WarnerRR(0.2),
    ForcedResponse(0.5, 0.2),
    ForcedResponse(0.6, 0.3),
    ForcedResponse(0.25, 0.25),
]

ORACLES: list[FrequencyOracle] = [
    GRR(2, 1.0),
    GRR(5, 0.7),
    GRR(14, 1.0),
    UnaryEncoding(4, 0.75, 0.25),
    UnaryEncoding.symmetric(4, 1.0),
    UnaryEncoding.optimized(4, 2.0),
    OLH(4, 1.0),
    OLH(5, 2.5),
    OLH(3, 1.0, g=7),
]


# -- privacy loss computed independently from a channel ----------------------------------


def max_log_ratio(channel: np.ndarray) -> float:
    """``max over outputs y and inputs x, x' of ln(P(y|x) / P(y|x'))``.

    ``channel[x, y] = P(report y | input x)``. For pure LDP with finitely many
    outputs, singletons are the worst sets, so this is the exact privacy loss.
    """
    m = np.asarray(channel, dtype=float)
    assert np.allclose(m.sum(axis=1), 1.0, atol=1e-12), "rows must be distributions"
    worst = 0.0
    for col in m.T:
        hi, lo = col.max(), col.min()
        if hi == 0:
            continue
        if lo == 0:
            return math.inf
        worst = max(worst, math.log(hi) - math.log(lo))
    return worst


def satisfies_ldp(channel: np.ndarray, epsilon: float) -> bool:
    """OpenDP-style check: every output's likelihood ratio is at most ``e^epsilon``."""
    return max_log_ratio(channel) <= epsilon + 1e-12


def binary_channel_from_story(design: BinaryDesign) -> tuple[Fraction | float, Fraction | float]:
    """(a, b) written down from each design's description, not from its code."""
    if isinstance(design, EpsilonRR):
        e = math.exp(design.params()["epsilon"])
        return e / (1 + e), 1 / (1 + e)
    if isinstance(design, GammaRR):
        return 0.5 + design.gamma, 0.5 - design.gamma
    if isinstance(design, DieRR):
        t = Fraction(design.truthful, design.faces)
        return t, 1 - t
    if isinstance(design, TwoCoinRR):
        # heads (1/2): truth; tails: second coin says yes w.p. 1/2
        return Fraction(1, 2) + Fraction(1, 4), Fraction(1, 4)
    if isinstance(design, WarnerRR):
        return design.p, 1 - design.p
    if isinstance(design, ForcedResponse):
        return design.p_truth + design.p_yes, design.p_yes
    raise AssertionError(design)


@pytest.mark.parametrize("design", BINARY_DESIGNS, ids=repr)
def test_binary_channel_matches_the_design_story(design: BinaryDesign) -> None:
    a, b = binary_channel_from_story(design)
    assert design.a == pytest.approx(float(a), abs=1e-15)
    assert design.b == pytest.approx(float(b), abs=1e-15)
    expected = np.array([[1 - float(b), float(b)], [1 - float(a), float(a)]])
    np.testing.assert_allclose(design.channel, expected, atol=1e-15)


@pytest.mark.parametrize("design", BINARY_DESIGNS, ids=repr)
def test_binary_epsilon_is_the_channel_max_log_ratio_and_tight(design: BinaryDesign) -> None:
    eps = max_log_ratio(design.channel)
    assert design.epsilon == pytest.approx(eps, abs=1e-12)
    assert satisfies_ldp(design.channel, design.epsilon)
    assert not satisfies_ldp(design.channel, design.epsilon - 1e-9)


def test_epsilon_rr_delivers_the_requested_epsilon() -> None:
    for eps in (1e-3, 0.1, 0.5, 1.0, LN3, 2.0, 5.0):
        assert EpsilonRR(eps).epsilon == pytest.approx(eps, abs=1e-12)
    # up to the cap the channel still holds the flip probability to ~1e-7
    assert EpsilonRR(20.0).epsilon == pytest.approx(20.0, abs=1e-6)


def test_opendp_style_check_on_the_class_exercise() -> None:
    # like OpenDP's check(1, log 9) holds and check(1, log 8.999) fails
    die = DieRR(4, 3)
    assert satisfies_ldp(die.channel, math.log(3))
    assert not satisfies_ldp(die.channel, math.log(2.999))


def _binomial_pmf(n: int, p: float) -> np.ndarray:
    return np.array([math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)])


@pytest.mark.parametrize("design", BINARY_DESIGNS, ids=repr)
def test_binary_unbiased_estimate_has_exact_expectation(design: BinaryDesign) -> None:
    """E[mu_hat] over every possible set of reports equals the true share."""
    n, v = 7, 3
    pmf_yes = _binomial_pmf(v, design.a)  # reports from the truly-yes students
    pmf_no = _binomial_pmf(n - v, design.b)  # reports from the truly-no students
    expectation = 0.0
    for y1, y0 in itertools.product(range(v + 1), range(n - v + 1)):
        est = BinaryCounts.single(design, yes=y1 + y0, n=n).unbiased()
        expectation += pmf_yes[y1] * pmf_no[y0] * est
    assert expectation == pytest.approx(v / n, abs=1e-12)


def test_mixed_design_unbiased_estimate_has_exact_expectation() -> None:
    """A slider moved mid-round: each group is corrected with its own (a, b)."""
    groups = [(DieRR(4, 3), 5, 2), (EpsilonRR(2.0), 4, 3), (ForcedResponse(0.5, 0.2), 3, 0)]
    pmfs = []
    for design, n_g, v_g in groups:
        pmfs.append(np.convolve(_binomial_pmf(v_g, design.a), _binomial_pmf(n_g - v_g, design.b)))
    expectation = 0.0
    for ys in itertools.product(*(range(len(p)) for p in pmfs)):
        prob = math.prod(p[y] for p, y in zip(pmfs, ys, strict=True))
        counts = BinaryCounts(tuple((d, n_g, y) for (d, n_g, _), y in zip(groups, ys,
                                                                         strict=True)))
        expectation += prob * counts.unbiased()
    truth = sum(v for *_, v in groups) / sum(n for _, n, _ in groups)
    assert expectation == pytest.approx(truth, abs=1e-12)


# -- frequency oracles ------------------------------------------------------------------------


def ue_channel(d: int, p: float, q: float) -> np.ndarray:
    """P(output bit vector | input value) over all 2^d bit vectors."""
    outputs = np.array(list(itertools.product((0, 1), repeat=d)))
    rows = []
    for x in range(d):
        prob_one = np.full(d, q)
        prob_one[x] = p
        rows.append(np.prod(np.where(outputs == 1, prob_one, 1 - prob_one), axis=1))
    return np.array(rows)


def grr_over_g_channel(g: int, epsilon: float) -> np.ndarray:
    """GRR over g buckets: keep the bucket w.p. e^eps / (e^eps + g - 1)."""
    e = math.exp(epsilon)
    m = np.full((g, g), 1 / (e + g - 1))
    np.fill_diagonal(m, e / (e + g - 1))
    return m


@pytest.mark.parametrize("oracle", ORACLES, ids=repr)
def test_oracle_epsilon_is_the_channel_max_log_ratio_and_tight(oracle: FrequencyOracle) -> None:
    if isinstance(oracle, GRR):
        e = math.exp(oracle.epsilon)
        expected = np.full((oracle.d, oracle.d), 1 / (e + oracle.d - 1))
        np.fill_diagonal(expected, e / (e + oracle.d - 1))
        np.testing.assert_allclose(oracle.channel, expected, rtol=1e-14)
        channel = oracle.channel
    elif isinstance(oracle, UnaryEncoding):
        channel = ue_channel(oracle.d, oracle.p, oracle.q)
    else:
        assert isinstance(oracle, OLH)
        # given the user's hash, the report is GRR over g buckets of H(x)
        channel = grr_over_g_channel(oracle.g, oracle.epsilon)
        assert oracle.p == pytest.approx(channel[0, 0], rel=1e-14)
        assert (1 - oracle.p) / (oracle.g - 1) == pytest.approx(channel[0, 1], rel=1e-12)
    assert oracle.epsilon == pytest.approx(max_log_ratio(channel), abs=1e-12)
    assert satisfies_ldp(channel, oracle.epsilon)
    assert not satisfies_ldp(channel, oracle.epsilon - 1e-9)


def test_ue_parameterisations_from_first_principles() -> None:
    for eps in (0.3, 1.0, 2.5):
        half = math.exp(eps / 2)
        sue = UnaryEncoding.symmetric(6, eps)
        assert sue.p == pytest.approx(half / (half + 1), rel=1e-15)
        assert sue.q == pytest.approx(1 / (half + 1), rel=1e-14)
        oue = UnaryEncoding.optimized(6, eps)
        assert oue.p == 0.5
        assert oue.q == pytest.approx(1 / (math.exp(eps) + 1), rel=1e-15)
        assert max_log_ratio(ue_channel(4, sue.p, sue.q)) == pytest.approx(eps, abs=1e-12)
        assert max_log_ratio(ue_channel(4, oue.p, oue.q)) == pytest.approx(eps, abs=1e-12)


@pytest.mark.parametrize("oracle", [o for o in ORACLES if isinstance(o, OLH)], ids=repr)
def test_olh_report_given_its_hash_has_log_ratio_epsilon(oracle: OLH) -> None:
    """P(y | x, hash) over the values: GRR row at H(x); the ratio reaches e^eps exactly
    when two values hash apart, never more."""
    reports = oracle.perturb(np.zeros(50, dtype=np.int64), rng=3)
    worst = 0.0
    gchan = grr_over_g_channel(oracle.g, oracle.epsilon)
    for a, b in zip(reports.a, reports.b, strict=True):
        h = oracle._hash(a, b, np.arange(oracle.d)).astype(np.int64)
        worst = max(worst, max_log_ratio(gchan[h]))
    assert worst == pytest.approx(oracle.epsilon, abs=1e-12)


def _enumerate_expected_estimate(oracle: FrequencyOracle, values: list[int]) -> np.ndarray:
    """E[estimate_counts] over every combination of the users' possible reports."""
    n = len(values)
    if isinstance(oracle, GRR):
        per_user = [[(np.array(y), oracle.channel[x, y]) for y in range(oracle.d)]
                    for x in values]
    else:
        assert isinstance(oracle, UnaryEncoding)
        outputs = list(itertools.product((0, 1), repeat=oracle.d))
        chan = ue_channel(oracle.d, oracle.p, oracle.q)
        per_user = [[(np.array(out), chan[x, k]) for k, out in enumerate(outputs)]
                    for x in values]
    total = np.zeros(oracle.d)
    mass = 0.0
    for combo in itertools.product(*per_user):
        prob = math.prod(pr for _, pr in combo)
        reports = np.stack([r for r, _ in combo])
        est = oracle.estimate_counts(oracle.support_counts(reports), n)
        total += prob * est
        mass += prob
    assert mass == pytest.approx(1.0, abs=1e-12)
    return total


@pytest.mark.parametrize("oracle", [o for o in ORACLES if not isinstance(o, OLH)], ids=repr)
def test_oracle_estimate_has_exact_expectation(oracle: FrequencyOracle) -> None:
    values = [0, 1, 1] if oracle.d <= 5 and isinstance(oracle, GRR) else [1, 0]
    truth = np.bincount(values, minlength=oracle.d)
    np.testing.assert_allclose(_enumerate_expected_estimate(oracle, values), truth, atol=1e-12)


def _olh_exact_collision_probability(g: int) -> Fraction:
    """P(H(u) == H(v)) for u != v over the family ((a x + b) mod P) mod g.

    For a != 0 the pair ((a u + b) mod P, (a v + b) mod P) is uniform over the
    P (P - 1) ordered pairs of distinct residues, so the collision probability
    is ``sum_k m_k (m_k - 1) / (P (P - 1))`` with m_k residues in bucket k.
    """
    prime = (1 << 31) - 1
    sizes = [prime // g + (1 if k < prime % g else 0) for k in range(g)]
    return Fraction(sum(m * (m - 1) for m in sizes), prime * (prime - 1))


@pytest.mark.parametrize("oracle", [o for o in ORACLES if isinstance(o, OLH)], ids=repr)
def test_olh_estimate_expectation(oracle: OLH) -> None:
    """Given the hashes, enumerate every report; then average the hash exactly."""
    values = np.array([0, 0, 1])
    gen = np.random.default_rng(5)
    seeds_a = gen.integers(1, (1 << 31) - 1, size=3, dtype=np.uint64)
    seeds_b = gen.integers(0, (1 << 31) - 1, size=3, dtype=np.uint64)
    gchan = grr_over_g_channel(oracle.g, oracle.epsilon)
    hashed = [oracle._hash(seeds_a[i], seeds_b[i], values[i]).item() for i in range(3)]
    expected_c = np.zeros(oracle.d)
    for ys in itertools.product(range(oracle.g), repeat=3):
        prob = math.prod(gchan[hashed[i], ys[i]] for i in range(3))
        reports = ldp_core.OLHReports(seeds_a, seeds_b, np.array(ys, dtype=np.int64))
        expected_c += prob * oracle.support_counts(reports)
    # the same conditional expectation from the definition of support
    formula = np.zeros(oracle.d)
    for i in range(3):
        for v in range(oracle.d):
            same = oracle._hash(seeds_a[i], seeds_b[i], v).item() == hashed[i]
            formula[v] += gchan[0, 0] if same else gchan[0, 1]
    np.testing.assert_allclose(expected_c, formula, atol=1e-12)

    # averaged over the hash: a non-value is supported w.p. coll p + (1 - coll)(1 - p)/(g - 1)
    p, g = oracle.p, oracle.g
    truth = np.bincount(values, minlength=oracle.d)
    n = values.size

    def expected_estimate(coll: float) -> np.ndarray:
        q_true = coll * p + (1 - coll) * (1 - p) / (g - 1)
        e_c = truth * p + (n - truth) * q_true
        return oracle.estimate_counts(np.zeros(oracle.d, dtype=int), n) + e_c / (p - oracle.q)

    np.testing.assert_allclose(expected_estimate(1 / g), truth, atol=1e-12)  # ideal hash
    coll = _olh_exact_collision_probability(g)
    prime = (1 << 31) - 1
    assert abs(coll - Fraction(1, g)) < Fraction(1, prime)
    bias = np.abs(expected_estimate(float(coll)) - truth)
    assert np.all(bias <= n / (prime * (p - oracle.q)) + 1e-12)


# -- the course's worked numbers --------------------------------------------------------------


def test_class_exercise_epsilon_is_ln3() -> None:
    for design in (DieRR(4, 3), TwoCoinRR(), GammaRR(0.25)):
        assert design.epsilon == pytest.approx(LN3, abs=1e-12)
        assert round(design.epsilon, 4) == 1.0986


@pytest.mark.parametrize("design", [DieRR(4, 3), TwoCoinRR()], ids=repr)
def test_class_exercise_estimator_is_2v_over_n_minus_half(design: BinaryDesign) -> None:
    n = 40
    for v in range(n + 1):
        counts = BinaryCounts.single(design, yes=v, n=n)
        assert counts.unbiased() == pytest.approx(2 * v / n - 0.5, abs=1e-12)
    assert design.report_probability(0.3) == pytest.approx(0.3 / 2 + 0.25, abs=1e-15)


def test_class_exercise_worked_example_v30_n40() -> None:
    counts = BinaryCounts.single(DieRR(4, 3), yes=30, n=40)
    assert counts.unbiased() == pytest.approx(1.0, abs=1e-12)
    assert counts.sd_worst() == pytest.approx(math.sqrt(3 / 160), abs=1e-12)
    for n in (1, 2, 25, 40, 1000):
        sd = BinaryCounts.single(DieRR(4, 3), yes=0, n=n).sd_worst()
        assert sd == pytest.approx(math.sqrt(3 / (4 * n)), abs=1e-12)
        # fixed class: the randomization variance is the same at every true share
        for mu in (0.0, 0.3, 1.0):
            assert BinaryCounts.single(DieRR(4, 3), 0, n).sd_class_at(mu) == pytest.approx(
                math.sqrt(3 / (4 * n)), abs=1e-12)


def test_epsilon_rr_estimator_of_the_notes() -> None:
    """mu_hat = (1/n) sum ((1 + e^eps) y_i - 1) / (e^eps - 1) (CS208 2025)."""
    eps = 0.8
    e = math.exp(eps)
    rng = np.random.default_rng(2)
    y = EpsilonRR(eps).perturb(rng.integers(0, 2, 500), rng=rng)
    notes = float(np.mean(((1 + e) * y - 1) / (e - 1)))
    assert BinaryCounts.from_reports(EpsilonRR(eps), y).unbiased() == pytest.approx(notes,
                                                                                   abs=1e-12)


def test_unary_epsilon_of_the_book() -> None:
    assert round(UnaryEncoding(14, 0.75, 0.25).epsilon, 10) == 2.1972245773
    unary_epsilon = math.log((0.75 * (1 - 0.25)) / ((1 - 0.75) * 0.25))
    assert UnaryEncoding(14, 0.75, 0.25).epsilon == pytest.approx(unary_epsilon, abs=1e-15)


def test_book_aggregate_formula() -> None:
    """A[i] = (sum_j B'_j[i] - n q) / (p - q) (Near & Abuah, unary encoding)."""
    ue = UnaryEncoding(3, 0.75, 0.25)
    sums = np.array([10036, 10227, 8815])
    n = 32561
    np.testing.assert_allclose(ue.estimate_counts(sums, n), (sums - n * 0.25) / 0.5, rtol=1e-15)


@pytest.mark.parametrize("p", [0.6, 0.7, 0.9, 0.25])
def test_warner_estimator_and_variance(p: float) -> None:
    """Warner (1965): pi_hat = (ybar - (1 - p)) / (2p - 1), and
    Var = pi (1 - pi) / n + p (1 - p) / (n (2p - 1)^2)."""
    design = WarnerRR(p)
    n = 50
    for yes in (0, 13, 25, 50):
        counts = BinaryCounts.single(design, yes=yes, n=n)
        assert counts.unbiased() == pytest.approx((yes / n - (1 - p)) / (2 * p - 1), abs=1e-12)
    for pi in (0.0, 0.2, 0.5, 0.9):
        warner_var = pi * (1 - pi) / n + p * (1 - p) / (n * (2 * p - 1) ** 2)
        sd = BinaryCounts.single(design, yes=0, n=n).sd_at(pi)
        assert sd**2 == pytest.approx(warner_var, rel=1e-12)


def test_pm1_form_matches_the_unbiased_estimate() -> None:
    """(A + 1) / 2 with A = mean(c_eps Q(y)) equals the unbiased estimate on the same reports."""
    rng = np.random.default_rng(9)
    for eps in (0.3, 1.0, LN3, 4.0):
        design = EpsilonRR(eps)
        reports01 = design.perturb(rng.integers(0, 2, 301), rng=rng)
        a = ldp_core.pm1_mean_estimate(2 * reports01.astype(int) - 1, eps)
        unbiased = BinaryCounts.from_reports(design, reports01).unbiased()
        assert (a + 1) / 2 == pytest.approx(unbiased, abs=1e-12)
        assert design.c_epsilon == pytest.approx((math.exp(eps) + 1) / (math.exp(eps) - 1),
                                                 rel=1e-12)


def test_n_var_at_d14_eps1_matches_wang_et_al() -> None:
    d, eps = 14, 1.0
    got = {
        "GRR": GRR(d, eps).count_variance(1),
        "SUE": UnaryEncoding.symmetric(d, eps).count_variance(1),
        "OUE": UnaryEncoding.optimized(d, eps).count_variance(1),
        "OLH": OLH(d, eps).count_variance(1),
    }
    assert {k: round(v, 2) for k, v in got.items()} == {
        "GRR": 4.99, "SUE": 3.92, "OUE": 3.68, "OLH": 3.69}


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("d", [2, 5, 14, 100])
def test_count_variance_closed_forms(d: int, eps: float) -> None:
    """Wang et al. (2017): GRR n (e^eps + d - 2) / (e^eps - 1)^2, SUE n e^(eps/2) /
    (e^(eps/2) - 1)^2, OUE n 4 e^eps / (e^eps - 1)^2, each plus n f (1 - p - q) / (p - q)."""
    e, n = math.exp(eps), 1000
    grr = GRR(d, eps)
    assert grr.count_variance(n) == pytest.approx(n * (e + d - 2) / (e - 1) ** 2, rel=1e-12)
    sue = UnaryEncoding.symmetric(d, eps)
    assert sue.count_variance(n) == pytest.approx(n * math.sqrt(e) / (math.sqrt(e) - 1) ** 2,
                                                  rel=1e-12)
    oue = UnaryEncoding.optimized(d, eps)
    assert oue.count_variance(n) == pytest.approx(n * 4 * e / (e - 1) ** 2, rel=1e-12)
    f = np.array([0.0, 0.25, 1.0])
    for oracle in (grr, sue, oue, OLH(d, eps)):
        p, q = oracle.p, oracle.q
        np.testing.assert_allclose(
            oracle.count_variance(n, f),
            n * q * (1 - q) / (p - q) ** 2 + n * f * (1 - p - q) / (p - q), rtol=1e-12)
    # SUE's f-term vanishes (p + q = 1)
    np.testing.assert_allclose(sue.count_variance(n, f), sue.count_variance(n), rtol=1e-12)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 1.5, 2.0, 3.0])
def test_recommend_oracle_is_grr_iff_d_below_3e_eps_plus_2(eps: float) -> None:
    for d in range(2, 80):
        rec = ldp_core.recommend_oracle(d, eps)
        assert rec == ("grr" if d < 3 * math.exp(eps) + 2 else "oue")
        # and that is where GRR's variance is the smaller one
        grr_var = GRR(d, eps).count_variance(1)
        oue_var = UnaryEncoding.optimized(d, eps).count_variance(1)
        if rec == "grr":
            assert grr_var < oue_var * (1 + 1e-12)
        else:
            assert grr_var >= oue_var * (1 - 1e-12)


def test_max_error_scale() -> None:
    assert ldp_core.max_error_scale(10_000, 14, 2.0) == pytest.approx(
        math.sqrt(10_000 * math.log(14)) / 2.0, rel=1e-15)
    assert ldp_core.max_error_scale(0, 14, 2.0) == 0.0


def test_local_and_central_sd_and_sample_size() -> None:
    for eps in (0.25, 1.0, 2.0):
        e = math.exp(eps)
        assert ldp_core.local_mean_sd(100, eps) == pytest.approx(
            math.sqrt(e) / ((e - 1) * 10), rel=1e-12)
        assert ldp_core.central_mean_sd(100, eps) == pytest.approx(math.sqrt(2) / (eps * 100))
        for n_c in (1, 40, 1000):
            m = ldp_core.local_n_for_central_accuracy(n_c, eps)
            assert m == pytest.approx(n_c**2 * eps**2 * e / (2 * (e - 1) ** 2), rel=1e-12)
            # m students locally give the central SD of n_c students
            assert math.sqrt(e) / ((e - 1) * math.sqrt(m)) == pytest.approx(
                ldp_core.central_mean_sd(n_c, eps), rel=1e-12)


def test_sequential_composition_adds_up() -> None:
    assert ldp_core.sequential_composition([LN3, LN3, 0.5]) == pytest.approx(2 * LN3 + 0.5)
    assert ldp_core.sequential_composition([]) == 0.0
    designs = [DieRR(4, 3), EpsilonRR(1.0), UnaryEncoding.optimized(5, 2.0)]
    assert ldp_core.sequential_composition([d.epsilon for d in designs]) == pytest.approx(
        LN3 + 3.0, abs=1e-12)


def test_gamma_epsilon_conversions_of_the_notebook() -> None:
    assert ldp_core.gamma_to_epsilon(0.25) == pytest.approx(LN3, abs=1e-15)
    assert ldp_core.epsilon_to_gamma(LN3) == pytest.approx(0.25, abs=1e-15)
    assert ldp_core.gamma_to_epsilon(0.0) == 0.0
    for g in (0.0, 0.1, 0.2, 0.3, 0.4, 0.45):
        assert GammaRR(g).epsilon == pytest.approx(ldp_core.gamma_to_epsilon(g), abs=1e-12)
    # near gamma = 1/2, 1/2 - gamma carries a rounding error of about 2^-53, which
    # moves ln((1/2 + g) / (1/2 - g)) by about 2^-53 / (1/2 - g)
    g = 0.5 - 1e-6
    assert GammaRR(g).epsilon == pytest.approx(ldp_core.gamma_to_epsilon(g),
                                               abs=4 * 2**-53 / (0.5 - g))


def test_sampling_weights_are_exact_for_rational_designs() -> None:
    assert DieRR(4, 3).sampling_weights() == (3, 1, 0, 0)
    assert TwoCoinRR().sampling_weights() == (2, 0, 1, 1)
    assert ForcedResponse(0.7, 0.2).sampling_weights() == (7, 0, 2, 1)
    assert GammaRR(0.1).sampling_weights() == (3, 2, 0, 0)
    assert WarnerRR(0.7).sampling_weights() == (7, 3, 0, 0)
    for eps in (0.3, 1.0, LN3, 5.0):  # irrational: within 2^-32 of the channel
        w = EpsilonRR(eps).sampling_weights()
        assert 0 < sum(w) <= 2**32 and w[2:] == (0, 0)
        assert w[0] / sum(w) == pytest.approx(EpsilonRR(eps).a, abs=2**-32)
