"""Statistical tests of ldp_core's samplers against the channels they claim.

Every test uses a fixed seed and the false-alarm rate ALPHA = 1e-6 with
thresholds derived from standard errors (see test_ldp_core_stathelpers). Each
is paired with a power check: the same statistic, fed with a sampler whose
epsilon is 1.3 times the claimed one, must reject. A sampler that leaked more
than it claims would therefore be caught.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

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
    laplace_mechanism,
    randomized_round,
)

try:  # tests/ on sys.path (pytest's default "prepend" import mode)
    from test_ldp_core_stathelpers import (
        ALPHA,
        Z_CRIT,
        bernoulli_sum_cumulants,
        binomial_z,
        chi2_crit,
        chi2_gof,
        chi2_homogeneity,
        mean_z,
        variance_z,
        z_crit,
    )
except ImportError:  # tests/ imported as a package
    from tests.test_ldp_core_stathelpers import (
        ALPHA,
        Z_CRIT,
        bernoulli_sum_cumulants,
        binomial_z,
        chi2_crit,
        chi2_gof,
        chi2_homogeneity,
        mean_z,
        variance_z,
        z_crit,
    )

#: The factor by which the power checks inflate epsilon.
POWER_FACTOR = 1.3

#: Respondents per true answer in the binary sampler tests.
N_BINARY = 100_000


def stronger(design: BinaryDesign, factor: float = POWER_FACTOR) -> ForcedResponse:
    """A forced-response design with ``factor`` times the privacy loss of ``design``.

    Moves the channel toward the truth, ``a_s = a + s (1 - a)``, ``b_s = b (1 - s)``,
    with s found by bisection so that ``eps(a_s, b_s) = factor * eps``.
    """
    a, b = design.a, design.b
    assert a > b
    target = factor * design.epsilon
    lo, hi = 0.0, 1.0
    for _ in range(100):
        s = (lo + hi) / 2
        if ForcedResponse(a + s * (1 - a) - b * (1 - s), b * (1 - s)).epsilon < target:
            lo = s
        else:
            hi = s
    s = (lo + hi) / 2
    alt = ForcedResponse(a + s * (1 - a) - b * (1 - s), b * (1 - s))
    assert alt.epsilon == pytest.approx(target, rel=1e-9)
    return alt


# -- binary designs: perturb() against (a, b) --------------------------------------------------

SAMPLED_DESIGNS = [EpsilonRR(0.5), EpsilonRR(3.0), GammaRR(0.1), DieRR(4, 3), DieRR(6, 5),
                   TwoCoinRR(), WarnerRR(0.7), ForcedResponse(0.5, 0.2)]


def binary_channel_statistic(sampler: BinaryDesign, claimed: BinaryDesign, seed: int) -> float:
    """Sum of the squared z-scores of the yes counts of N truly-yes and N truly-no
    respondents against the claimed a and b: chi-squared with 2 df if the claim holds."""
    rng = np.random.default_rng(seed)
    yes = sampler.perturb(np.ones(N_BINARY, dtype=np.uint8), rng=rng)
    no = sampler.perturb(np.zeros(N_BINARY, dtype=np.uint8), rng=rng)
    assert yes.dtype == np.uint8 and set(np.unique(np.r_[yes, no])) <= {0, 1}
    return (binomial_z(yes.sum(), N_BINARY, claimed.a) ** 2
            + binomial_z(no.sum(), N_BINARY, claimed.b) ** 2)


@pytest.mark.parametrize("design", SAMPLED_DESIGNS, ids=repr)
def test_binary_perturb_follows_the_channel(design: BinaryDesign) -> None:
    crit = chi2_crit(2)
    assert binary_channel_statistic(design, design, seed=101) < crit
    # power: a design leaking 1.3 x epsilon is rejected by the same statistic
    alt = stronger(design)
    noncentrality = N_BINARY * ((alt.a - design.a) ** 2 / (design.a * (1 - design.a))
                                + (alt.b - design.b) ** 2 / (design.b * (1 - design.b)))
    assert noncentrality > 4 * crit  # the test is designed with ample power...
    assert binary_channel_statistic(alt, design, seed=101) > crit  # ...and has it


def test_binary_perturb_keeps_shape_and_accepts_bools() -> None:
    truth = np.array([[True, False, True], [False, False, True]])
    out = DieRR().perturb(truth, rng=1)
    assert out.shape == (2, 3) and out.dtype == np.uint8
    # the same seed gives the same reports; the generator object is used as given
    assert np.array_equal(DieRR().perturb(truth, rng=1), out)
    gen = np.random.default_rng(1)
    assert np.array_equal(DieRR().perturb(truth, rng=gen), out)


# -- frequency oracles: perturb() against the channel -----------------------------------------


def grr_channel_statistic(sampler: GRR, claimed: GRR, per_value: int, seed: int
                          ) -> tuple[float, int]:
    rng = np.random.default_rng(seed)
    stat, df = 0.0, 0
    for x in range(claimed.d):
        reports = sampler.perturb(np.full(per_value, x), rng=rng)
        s, k = chi2_gof(np.bincount(reports, minlength=claimed.d), claimed.channel[x])
        stat, df = stat + s, df + k
    return stat, df


@pytest.mark.parametrize("oracle", [GRR(5, 1.0), GRR(3, 2.0), GRR(2, 0.5)], ids=repr)
def test_grr_perturb_follows_the_channel(oracle: GRR) -> None:
    stat, df = grr_channel_statistic(oracle, oracle, 20_000, seed=7)
    assert stat < chi2_crit(df)
    alt = GRR(oracle.d, POWER_FACTOR * oracle.epsilon)
    stat_alt, _ = grr_channel_statistic(alt, oracle, 20_000, seed=7)
    assert stat_alt > chi2_crit(df)


def ue_output_probabilities(d: int, x: int, p: float, q: float) -> np.ndarray:
    """P(bit vector | x) for every vector, vectors ordered as integers (bit 0 = MSB)."""
    outs = np.array(list(itertools.product((0, 1), repeat=d)))
    one = np.full(d, q)
    one[x] = p
    return np.prod(np.where(outs == 1, one, 1 - one), axis=1)


def ue_channel_statistic(sampler: UnaryEncoding, claimed: UnaryEncoding, per_value: int,
                         seed: int) -> tuple[float, int]:
    """Goodness of fit of the joint distribution of whole output vectors: this also
    checks that the bits are independent, which the privacy proof relies on."""
    rng = np.random.default_rng(seed)
    weights = 1 << np.arange(claimed.d - 1, -1, -1)
    stat, df = 0.0, 0
    for x in range(claimed.d):
        bits = sampler.perturb(np.full(per_value, x), rng=rng)
        assert bits.shape == (per_value, claimed.d) and bits.dtype == np.uint8
        cells = np.bincount(bits @ weights, minlength=2**claimed.d)
        s, k = chi2_gof(cells, ue_output_probabilities(claimed.d, x, claimed.p, claimed.q))
        stat, df = stat + s, df + k
    return stat, df


UE_CASES = [
    (UnaryEncoding(3, 0.75, 0.25), UnaryEncoding.symmetric(3, POWER_FACTOR * math.log(9))),
    (UnaryEncoding.symmetric(3, 1.0), UnaryEncoding.symmetric(3, POWER_FACTOR)),
    (UnaryEncoding.optimized(3, 1.0), UnaryEncoding.optimized(3, POWER_FACTOR)),
]


@pytest.mark.parametrize(("oracle", "alt"), UE_CASES, ids=lambda o: repr(o))
def test_unary_encoding_perturb_follows_the_channel(oracle: UnaryEncoding,
                                                    alt: UnaryEncoding) -> None:
    assert alt.epsilon == pytest.approx(POWER_FACTOR * oracle.epsilon, rel=1e-12)
    stat, df = ue_channel_statistic(oracle, oracle, 40_000, seed=8)
    assert stat < chi2_crit(df)
    stat_alt, _ = ue_channel_statistic(alt, oracle, 40_000, seed=8)
    assert stat_alt > chi2_crit(df)


def olh_channel_statistic(sampler: OLH, claimed: OLH, n: int, seed: int) -> tuple[float, int]:
    """Given each user's hash: the bucket is kept w.p. p and otherwise uniform over the
    g - 1 others; the hashed bucket itself is uniform; a value the user does not hold
    is supported w.p. 1/g."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, claimed.d, n)
    rep = sampler.perturb(x, rng=rng)
    assert rep.a.min() >= 1 and rep.a.max() < (1 << 31) - 1 and rep.b.max() < (1 << 31) - 1
    g = claimed.g
    h = claimed._hash(rep.a, rep.b, x).astype(np.int64)
    kept = rep.y == h
    stat = binomial_z(kept.sum(), n, claimed.p) ** 2
    offsets = (rep.y[~kept] - h[~kept]) % g
    s1, k1 = chi2_gof(np.bincount(offsets, minlength=g)[1:], np.full(g - 1, 1 / (g - 1)))
    s2, k2 = chi2_gof(np.bincount(h, minlength=g), np.full(g, 1 / g))
    other = (x + 1) % claimed.d
    supported = claimed._hash(rep.a, rep.b, other).astype(np.int64) == rep.y
    stat += s1 + s2 + binomial_z(supported.sum(), n, 1 / g) ** 2
    return stat, 2 + k1 + k2


@pytest.mark.parametrize("oracle", [OLH(6, 1.0), OLH(10, 2.0), OLH(4, 1.0, g=3)], ids=repr)
def test_olh_perturb_follows_the_channel(oracle: OLH) -> None:
    stat, df = olh_channel_statistic(oracle, oracle, 100_000, seed=9)
    assert stat < chi2_crit(df)
    alt = OLH(oracle.d, POWER_FACTOR * oracle.epsilon, g=oracle.g)
    stat_alt, _ = olh_channel_statistic(alt, oracle, 100_000, seed=9)
    assert stat_alt > chi2_crit(df)


# -- per-respondent simulation and exact aggregate sampling agree ---------------------------


def binary_count_moments(design: BinaryDesign, v: int, n: int) -> tuple[float, float, float]:
    return bernoulli_sum_cumulants(np.array([design.a, design.b]), np.array([v, n - v]))


@pytest.mark.parametrize("design", [DieRR(4, 3), ForcedResponse(0.5, 0.2), EpsilonRR(2.0)],
                         ids=repr)
def test_binary_per_respondent_and_aggregate_agree(design: BinaryDesign) -> None:
    n, v, t = 60, 10, 20_000
    rng = np.random.default_rng(21)
    truth = np.zeros((t, n), dtype=np.uint8)
    truth[:, :v] = 1
    per_respondent = design.perturb(truth, rng=rng).sum(axis=1)
    aggregate = design.sample_yes_counts(v, n, size=t, rng=rng)
    stat, df = chi2_homogeneity(per_respondent, aggregate)
    assert stat < chi2_crit(df)
    mean, var, k4 = binary_count_moments(design, v, n)
    crit = z_crit(ALPHA / 4)  # four z-tests below
    for sample in (per_respondent, aggregate):
        assert abs(mean_z(sample, mean, var)) < crit
        assert abs(variance_z(sample, var, k4)) < crit
    # power: aggregate sampling of a design leaking 1.3 x epsilon is told apart
    wrong = stronger(design).sample_yes_counts(v, n, size=t, rng=rng)
    stat, df = chi2_homogeneity(per_respondent, wrong)
    assert stat > chi2_crit(df)


def support_count_moments(oracle: FrequencyOracle, true_counts: np.ndarray
                          ) -> list[tuple[float, float, float]]:
    """Each support count is a sum of independent Bernoullis: p for holders of v, q else."""
    n = int(true_counts.sum())
    return [bernoulli_sum_cumulants(np.array([oracle.p, oracle.q]),
                                    np.array([c, n - c])) for c in true_counts]


AGREEMENT_ORACLES = [GRR(4, 1.0), UnaryEncoding.optimized(4, 1.0), UnaryEncoding(4, 0.75, 0.25)]


def _alt_oracle(oracle: FrequencyOracle) -> FrequencyOracle:
    if isinstance(oracle, GRR):
        return GRR(oracle.d, POWER_FACTOR * oracle.epsilon)
    if oracle.p == 0.5:
        return UnaryEncoding.optimized(oracle.d, POWER_FACTOR * oracle.epsilon)
    return UnaryEncoding.symmetric(oracle.d, POWER_FACTOR * oracle.epsilon)


def _max_moment_z(samples: np.ndarray, moments: list[tuple[float, float, float]]) -> float:
    worst = 0.0
    for v, (mean, var, k4) in enumerate(moments):
        worst = max(worst, abs(mean_z(samples[:, v], mean, var)),
                    abs(variance_z(samples[:, v], var, k4)))
    return worst


@pytest.mark.parametrize("oracle", AGREEMENT_ORACLES, ids=repr)
def test_oracle_per_respondent_and_aggregate_agree(oracle: FrequencyOracle) -> None:
    true_counts = np.array([120, 50, 30, 0])
    values = np.repeat(np.arange(4), true_counts)
    t = 3000
    rng = np.random.default_rng(31)
    # small chunks, so that the chunk boundaries are exercised too
    per_respondent = np.array([oracle.simulate_support_counts(values, rng=rng, chunk=64)
                               for _ in range(t)])
    aggregate = oracle.sample_support_counts(true_counts, size=t, rng=rng)
    assert aggregate.shape == (t, 4) and aggregate.dtype.kind == "i"
    if isinstance(oracle, GRR):  # one report per user: the counts add up to n
        assert np.all(per_respondent.sum(axis=1) == 200)
        assert np.all(aggregate.sum(axis=1) == 200)
    moments = support_count_moments(oracle, true_counts)
    crit = z_crit(ALPHA / (2 * 2 * 4))  # mean and variance, 2 samplers, 4 categories
    assert _max_moment_z(per_respondent, moments) < crit
    assert _max_moment_z(aggregate, moments) < crit
    for v in range(3):  # and the two samples have the same distribution
        stat, df = chi2_homogeneity(per_respondent[:, v], aggregate[:, v])
        assert stat < chi2_crit(df, ALPHA / 3)
    # power: the aggregate sampler of a 1.3 x epsilon oracle fails the same checks
    wrong = _alt_oracle(oracle).sample_support_counts(true_counts, size=t, rng=rng)
    assert _max_moment_z(wrong, moments) > crit


def test_sample_support_counts_single_class_and_empty() -> None:
    for oracle in (GRR(5, 1.0), UnaryEncoding.optimized(5, 1.0)):
        one = oracle.sample_support_counts([3, 0, 0, 1, 2], rng=0)
        assert one.shape == (5,)
        empty = oracle.sample_support_counts([0] * 5, size=3, rng=0)
        assert empty.shape == (3, 5) and not empty.any()
        assert not oracle.simulate_support_counts(np.array([], dtype=int), rng=0).any()


def test_chunked_simulation_counts_every_user_once() -> None:
    values = np.random.default_rng(0).integers(0, 6, 10_001)
    for chunk in (7, 999, 10_001, 1 << 16):
        assert GRR(6, 1.0).simulate_support_counts(values, rng=4, chunk=chunk).sum() == 10_001
    ue = UnaryEncoding.optimized(6, 1.0)
    counts = ue.simulate_support_counts(values, rng=4, chunk=999)
    assert counts.shape == (6,) and counts.max() <= values.size
    # a user always supports the value hashed to the bucket they report, under OLH
    olh = OLH(6, 1.0)
    rep = olh.perturb(values, rng=4)
    assert olh.support_counts(rep).max() <= values.size


# -- variance formulas against Monte Carlo -----------------------------------------------------


def _mu_hat(design: BinaryDesign, yes: np.ndarray, n: int) -> np.ndarray:
    """The unbiased estimator, vectorized (identical to BinaryCounts.unbiased, which
    test_ldp_core_exact checks exactly)."""
    return (yes / n - design.b) / (design.a - design.b)


VAR_DESIGNS = [DieRR(4, 3), ForcedResponse(0.5, 0.2), EpsilonRR(0.7)]


@pytest.mark.parametrize("design", VAR_DESIGNS, ids=repr)
def test_sd_class_at_and_sd_worst_against_monte_carlo(design: BinaryDesign) -> None:
    n, t = 80, 100_000
    rng = np.random.default_rng(41)
    counts = BinaryCounts.single(design, yes=0, n=n)
    alt_counts = BinaryCounts.single(stronger(design), yes=0, n=n)
    grid = np.linspace(0, 1, 21)
    assert counts.sd_worst() == pytest.approx(max(counts.sd_class_at(0.0),
                                                  counts.sd_class_at(1.0)), rel=1e-12)
    assert all(counts.sd_class_at(m) <= counts.sd_worst() * (1 + 1e-12) for m in grid)
    scale = n * (design.a - design.b)
    for mu in (0.25, 1.0):
        v = round(mu * n)
        est = _mu_hat(design, design.sample_yes_counts(v, n, size=t, rng=rng), n)
        _, var_v, k4_v = binary_count_moments(design, v, n)
        claimed = counts.sd_class_at(mu) ** 2
        assert claimed == pytest.approx(var_v / scale**2, rel=1e-12)
        assert abs(mean_z(est, mu, claimed)) < Z_CRIT
        assert abs(variance_z(est, claimed, k4_v / scale**4)) < Z_CRIT
        # power: the variance the 1.3 x epsilon design claims is rejected
        assert abs(variance_z(est, alt_counts.sd_class_at(mu) ** 2, k4_v / scale**4)) > Z_CRIT


@pytest.mark.parametrize("design", VAR_DESIGNS, ids=repr)
def test_sd_at_population_sampling_against_monte_carlo(design: BinaryDesign) -> None:
    """Each respondent truly says yes w.p. mu: the report is Bernoulli(lambda)."""
    n, t, mu = 50, 40_000, 0.3
    rng = np.random.default_rng(42)
    truth = (rng.random((t, n)) < mu).astype(np.uint8)
    est = _mu_hat(design, design.perturb(truth, rng=rng).sum(axis=1), n)
    lam = design.report_probability(mu)
    _, var_v, k4_v = bernoulli_sum_cumulants(np.array([lam]), np.array([n]))
    scale = n * (design.a - design.b)
    claimed = BinaryCounts.single(design, 0, n).sd_at(mu) ** 2
    assert claimed == pytest.approx(var_v / scale**2, rel=1e-12)
    assert abs(mean_z(est, mu, claimed)) < Z_CRIT
    assert abs(variance_z(est, claimed, k4_v / scale**4)) < Z_CRIT
    alt_claim = BinaryCounts.single(stronger(design), 0, n).sd_at(mu) ** 2
    assert abs(variance_z(est, alt_claim, k4_v / scale**4)) > Z_CRIT


@pytest.mark.parametrize("design", VAR_DESIGNS, ids=repr)
def test_sd_plugin_is_unbiased_for_the_variance(design: BinaryDesign) -> None:
    """E[sd_plugin^2] = sd_at(mu)^2 exactly (over V ~ Bin(n, lambda)), and on simulated
    classes the mean of sd_plugin^2 matches the Monte Carlo variance of mu_hat."""
    n, mu = 30, 0.4
    lam = design.report_probability(mu)
    exact = sum(math.comb(n, v) * lam**v * (1 - lam) ** (n - v)
                * BinaryCounts.single(design, v, n).sd_plugin() ** 2 for v in range(n + 1))
    assert exact == pytest.approx(BinaryCounts.single(design, 0, n).sd_at(mu) ** 2, rel=1e-12)

    rng = np.random.default_rng(43)
    t = 4000
    yes = rng.binomial(n, lam, t)
    plug = np.array([BinaryCounts.single(design, int(v), n).sd_plugin() ** 2 for v in yes])
    true_var = BinaryCounts.single(design, 0, n).sd_at(mu) ** 2
    assert abs(plug.mean() - true_var) / (plug.std(ddof=1) / math.sqrt(t)) < Z_CRIT


ORACLE_VAR_CASES = [GRR(5, 1.0), UnaryEncoding.optimized(5, 1.0),
                    UnaryEncoding.symmetric(5, 1.0), UnaryEncoding(5, 0.75, 0.25)]


@pytest.mark.parametrize("oracle", ORACLE_VAR_CASES, ids=repr)
def test_count_variance_against_monte_carlo(oracle: FrequencyOracle) -> None:
    true_counts = np.array([200, 100, 60, 40, 0])
    n, t = int(true_counts.sum()), 100_000
    est = oracle.estimate_counts(
        oracle.sample_support_counts(true_counts, size=t, rng=np.random.default_rng(51)), n)
    claimed = oracle.count_variance(n, true_counts / n)
    alt_claimed = _alt_oracle(oracle).count_variance(n, true_counts / n)
    crit = z_crit(ALPHA / (2 * 5))
    scale = oracle.p - oracle.q
    power_hits = 0
    for v, (_, var_c, k4_c) in enumerate(support_count_moments(oracle, true_counts)):
        assert claimed[v] == pytest.approx(var_c / scale**2, rel=1e-12)
        assert abs(mean_z(est[:, v], true_counts[v], claimed[v])) < crit
        assert abs(variance_z(est[:, v], claimed[v], k4_c / scale**4)) < crit
        power_hits += abs(variance_z(est[:, v], alt_claimed[v], k4_c / scale**4)) > crit
    assert power_hits == 5


def test_olh_count_variance_against_per_respondent_monte_carlo() -> None:
    oracle = OLH(4, 1.0)
    true_counts = np.array([150, 100, 50, 0])
    values = np.repeat(np.arange(4), true_counts)
    n, t = int(true_counts.sum()), 1000
    rng = np.random.default_rng(52)
    est = oracle.estimate_counts(
        np.array([oracle.simulate_support_counts(values, rng=rng) for _ in range(t)]), n)
    claimed = oracle.count_variance(n, true_counts / n)
    alt_claimed = OLH(4, POWER_FACTOR * oracle.epsilon).count_variance(n, true_counts / n)
    crit = z_crit(ALPHA / (2 * 4))
    scale = oracle.p - oracle.q
    for v, (_, _var_c, k4_c) in enumerate(support_count_moments(oracle, true_counts)):
        assert abs(mean_z(est[:, v], true_counts[v], claimed[v])) < crit
        assert abs(variance_z(est[:, v], claimed[v], k4_c / scale**4)) < crit
        assert abs(variance_z(est[:, v], alt_claimed[v], k4_c / scale**4)) > crit


# -- central model and values in [0, 1] --------------------------------------------------------


def test_laplace_mechanism_sd_against_monte_carlo() -> None:
    sens, eps, t = 2.0, 0.5, 200_000
    out = laplace_mechanism(10.0, sens, eps, rng=61, size=t)
    scale = sens / eps
    var = 2 * scale**2  # SD sqrt(2) sens / eps
    k4 = 12 * scale**4  # Laplace: mu4 = 24 b^4, kappa4 = mu4 - 3 var^2
    assert abs(mean_z(out, 10.0, var)) < Z_CRIT
    assert abs(variance_z(out, var, k4)) < Z_CRIT
    alt_var = 2 * (sens / (POWER_FACTOR * eps)) ** 2
    assert abs(variance_z(out, alt_var, k4)) > Z_CRIT
    # the noise is symmetric: the share above the value is 1/2
    assert abs(binomial_z(np.sum(out > 10.0), t, 0.5)) < Z_CRIT


def test_randomized_round_then_rr_is_unbiased_for_the_mean() -> None:
    """Values in [0, 1]: round to 1 w.p. x, then RR; the estimate targets mean(x)."""
    rng = np.random.default_rng(62)
    x = rng.random(400)
    design = EpsilonRR(1.0)
    t = 5000
    bits = randomized_round(np.broadcast_to(x, (t, x.size)), rng=rng)
    assert set(np.unique(bits)) <= {0, 1}
    est = _mu_hat(design, design.perturb(bits, rng=rng).sum(axis=1), x.size)
    # per value: Bernoulli(x) then the channel, so a report is 1 w.p. b + (a - b) x
    lam = design.report_probability(x)
    _, var_v, _ = bernoulli_sum_cumulants(lam)
    var = var_v / (x.size * (design.a - design.b)) ** 2
    assert abs(mean_z(est, x.mean(), var)) < Z_CRIT
    # power: decoding with the 1.3 x epsilon design's (a, b) is visibly biased
    alt = stronger(design)
    alt_est = (est * (design.a - design.b) + design.b - alt.b) / (alt.a - alt.b)
    assert abs(mean_z(alt_est, x.mean(), var)) > Z_CRIT


def test_randomized_round_is_exact_at_the_ends() -> None:
    out = randomized_round(np.array([0.0, 1.0] * 1000), rng=0)
    assert np.array_equal(out, np.array([0, 1] * 1000, dtype=np.uint8))
