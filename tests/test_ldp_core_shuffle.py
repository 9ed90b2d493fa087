"""ldp_core.shuffle: the exact shuffled privacy of yes/no designs against brute force over every
report vector (exact integers), the published check values, Feldman, McMillan & Talwar's bound
against the exact values, monotonicity and the inverse."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from ldp_core import (
    GRR,
    BinaryDesign,
    DieRR,
    EpsilonRR,
    ForcedResponse,
    PiecewiseMechanism,
    ShuffleGuarantee,
    TwoCoinRR,
    UnaryEncoding,
    WarnerRR,
    clones_closed_form,
    clones_closed_form_limit,
    clones_delta,
    clones_epsilon,
    numeric_design_from_params,
    shuffle_delta,
    shuffle_epsilon,
    shuffle_guarantee,
    shuffle_local_epsilon,
)
from ldp_core import shuffle as shuffle_module

#: Balle, Bell, Gascón & Nissim, "The Privacy Blanket of the Shuffle Model" (CRYPTO 2019), their
#: notebook in BorjaBalle/amplification-by-shuffling: binary RR, ε0 = 0.4, n = 5,000, δ = 1e-6.
BLANKET_RR2_HOEFFDING = 0.02397882347116631
BLANKET_RR2_BENNETT = 0.02428301504607527


# -- brute force ------------------------------------------------------------------------------
def _exact_channel(design: BinaryDesign) -> tuple[Fraction, Fraction]:
    br = {k: Fraction(repr(v)) if isinstance(v, float) else Fraction(v)
          for k, v in design.branches().items()}
    return br["truth"] + br["yes"], br["lie"] + br["yes"]


def _release_distributions(a: Fraction, b: Fraction, n: int):
    """Every pair of neighbouring data sets (student 0 says yes / no, the others anything) and
    the exact distribution of the number of 1-reports, by summing over all 2^n report vectors.
    Integer numerators over the common denominator ``den ** n``."""
    den = math.lcm(a.denominator, b.denominator)
    p1 = {1: int(a * den), 0: den - int(a * den)}  # P(report | truly 1) * den
    p0 = {1: int(b * den), 0: den - int(b * den)}
    for others in itertools.product((0, 1), repeat=n - 1):
        dists = []
        for mine in (1, 0):
            truth = (mine, *others)
            dist = [0] * (n + 1)
            for reports in itertools.product((0, 1), repeat=n):
                w = 1
                for x, y in zip(truth, reports, strict=True):
                    w *= (p1 if x else p0)[y]
                dist[sum(reports)] += w
            dists.append(dist)
        yield dists[0], dists[1], den ** n


def _brute_delta(a: Fraction, b: Fraction, n: int, ratio: Fraction) -> Fraction:
    worst = Fraction(0)
    for p, q, total in _release_distributions(a, b, n):
        for x, y in ((p, q), (q, p)):
            worst = max(worst, Fraction(sum(max(0, ratio.denominator * u - ratio.numerator * v)
                                            for u, v in zip(x, y, strict=True)),
                                        ratio.denominator * total))
    return worst


def _brute_epsilon(a: Fraction, b: Fraction, n: int, delta: Fraction) -> float:
    """ln of the largest (P(S) − δ) / Q(S) over EVERY set S of outcomes (not just thresholds)."""
    best = Fraction(1)
    for p, q, total in _release_distributions(a, b, n):
        for x, y in ((p, q), (q, p)):
            for mask in range(1, 2 ** (n + 1)):
                ps = sum(x[k] for k in range(n + 1) if mask >> k & 1)
                qs = sum(y[k] for k in range(n + 1) if mask >> k & 1)
                if Fraction(ps, total) <= delta:
                    continue
                if qs == 0:
                    return math.inf
                best = max(best, (Fraction(ps, total) - delta) / Fraction(qs, total))
    return math.log(best)


BRUTE_DESIGNS = [
    DieRR(4, 3),  # the class exercise (3/4, 1/4)
    ForcedResponse(0.5, 0.2),  # asymmetric (7/10, 2/10)
    ForcedResponse(0.4, 0.5),  # (9/10, 1/2)
    WarnerRR(0.3),  # a < b: the same design with the reports relabelled
    ForcedResponse(0.5, 0.0),  # b = 0: a "yes" report can only come from a yes
]


@pytest.mark.parametrize("design", BRUTE_DESIGNS, ids=repr)
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("ratio", [Fraction(1), Fraction(6, 5), Fraction(2)])
def test_delta_equals_brute_force_over_every_report_vector(design, n, ratio):
    a, b = _exact_channel(design)
    exact = _brute_delta(a, b, n, ratio)
    assert shuffle_delta(design, n, math.log(ratio)) == pytest.approx(float(exact), abs=1e-14)


@pytest.mark.parametrize("design", BRUTE_DESIGNS, ids=repr)
@pytest.mark.parametrize("n", [1, 2, 4, 6])
@pytest.mark.parametrize("delta", [Fraction(1, 1000), Fraction(1, 20)])
def test_epsilon_equals_brute_force_over_every_set_of_outcomes(design, n, delta):
    a, b = _exact_channel(design)
    exact = _brute_epsilon(a, b, n, delta)
    got = shuffle_epsilon(design, n, float(delta))
    if math.isinf(exact):
        assert math.isinf(got)
    else:
        assert got == pytest.approx(exact, abs=1e-12)


# -- which m is worst: not an endpoint ---------------------------------------------------------
def _direct_deltas_per_m(a: float, b: float, n: int, epsilon: float) -> np.ndarray:
    """δ for each m = number of yeses among the others, by direct convolution of binomials
    (positive sums only: accurate in the tails), both directions."""
    lg = [math.lgamma(k + 1) for k in range(n + 1)]

    def pmf(count: int, p: float) -> np.ndarray:
        return np.array([math.exp(lg[count] - lg[k] - lg[count - k] + k * math.log(p)
                                  + (count - k) * math.log1p(-p)) for k in range(count + 1)])

    out = []
    for m in range(n):
        s = np.convolve(pmf(m, a), pmf(n - 1 - m, b))
        up, down = np.r_[0.0, s], np.r_[s, 0.0]
        p, q = a * up + (1 - a) * down, b * up + (1 - b) * down
        x = math.exp(epsilon)
        out.append(max(np.clip(p - x * q, 0, None).sum(), np.clip(q - x * p, 0, None).sum()))
    return np.array(out)


def test_the_worst_class_of_the_others_is_not_all_alike():
    """For the die at n = 200, ε = 0.33 the worst m is 1 (and, mirrored, 198), 3% above both
    endpoints: assuming m = 0 or n - 1 would understate δ. The scan over every m finds it."""
    per_m = _direct_deltas_per_m(0.75, 0.25, 200, 0.33)
    assert per_m[1] == pytest.approx(per_m.max(), rel=1e-12)
    assert per_m[-2] == pytest.approx(per_m.max(), rel=1e-12)
    assert per_m.max() > 1.02 * max(per_m[0], per_m[-1])
    assert shuffle_delta(DieRR(4, 3), 200, 0.33) == pytest.approx(per_m.max(), rel=1e-9)


@pytest.mark.parametrize(("a", "b", "n", "eps"), [(0.75, 0.25, 300, 0.9), (0.7, 0.2, 150, 1.0),
                                                   (0.9, 0.5, 200, 0.8)])
def test_deep_tails_keep_their_relative_precision(a, b, n, eps):
    """δ from 1e-19 down to 1e-28: a plain FFT would return noise of 1e-16 here; the tilted one
    keeps about ten digits."""
    design = ForcedResponse(a - b, b)
    direct = _direct_deltas_per_m(a, b, n, eps).max()
    assert direct < 1e-12
    assert shuffle_delta(design, n, eps) == pytest.approx(direct, rel=1e-8)


# -- the check values --------------------------------------------------------------------------
def test_class_exercise_at_100_students():
    eps = shuffle_epsilon(DieRR(4, 3), 100, 1e-6)
    assert eps == pytest.approx(0.5501, abs=1e-3)
    assert shuffle_delta(DieRR(4, 3), 100, 0.5501) == pytest.approx(9.985e-7, rel=1e-4)
    # tight: a hair below ε the release is not (ε, 1e-6)-DP
    assert shuffle_delta(DieRR(4, 3), 100, eps * (1 - 1e-6)) > 1e-6
    assert shuffle_delta(DieRR(4, 3), 100, eps) <= 1e-6 * (1 + 1e-9)


def test_binary_rr_beats_every_privacy_blanket_bound():
    eps = shuffle_epsilon(EpsilonRR(0.4), 5000, 1e-6)
    assert eps == pytest.approx(0.01844, abs=5e-6)
    assert eps < BLANKET_RR2_HOEFFDING < BLANKET_RR2_BENNETT


def test_feldman_mcmillan_talwar_readme_example():
    eps = clones_epsilon(4.0, 100_000, 1e-6)
    assert 0.1675385583317841 <= eps <= 0.172790550755978
    assert clones_closed_form(4.0, 100_000, 1e-6) == pytest.approx(0.5378040242374512, rel=1e-12)
    assert clones_closed_form(4.0, 100_000, 1e-6) > eps


def test_closed_form_validity_condition():
    limit = clones_closed_form_limit(10_000, 1e-6)
    assert limit == pytest.approx(math.log(10_000 / (16 * math.log(4e6))))
    assert clones_closed_form(limit * 0.999, 10_000, 1e-6) is not None
    assert clones_closed_form(limit * 1.001, 10_000, 1e-6) is None
    assert clones_closed_form(0.5, 100, 1e-6) is None  # 100 < 16 ln(4e6): no ε0 qualifies
    # where it holds, the closed form is an upper bound on the numerical bound
    for eps0 in (0.5, 1.0, 2.0, limit):
        assert clones_closed_form(eps0, 10_000, 1e-6) >= clones_epsilon(eps0, 10_000, 1e-6)


# -- the clones bound --------------------------------------------------------------------------
@pytest.mark.parametrize("design", [DieRR(4, 3), EpsilonRR(0.5), EpsilonRR(2.0), TwoCoinRR(),
                                    ForcedResponse(0.5, 0.2), WarnerRR(0.8)], ids=repr)
@pytest.mark.parametrize("n", [1, 2, 10, 100, 1000])
def test_the_bound_is_at_least_the_exact_value(design, n):
    for delta in (1e-3, 1e-6, 1e-9):
        exact = shuffle_epsilon(design, n, delta)
        bound = clones_epsilon(design.epsilon, n, delta)
        assert bound >= exact - 1e-9
        assert bound <= design.epsilon + 1e-12
    assert clones_delta(design.epsilon, n, 0.2) >= shuffle_delta(design, n, 0.2) - 1e-12


def test_clones_thresholds_match_a_scan_of_every_threshold():
    """delta_and_slope picks one threshold per clone count from the likelihood ratio; a scan
    of every threshold must give the same δ."""
    for eps0, n in ((1.0, 50), (3.0, 400), (0.3, 2000)):
        clones = shuffle_module._Clones.build(eps0, n)
        for eps in (0.0, 0.05, 0.3, eps0 / 2, eps0 * 0.99):
            x = math.exp(eps)
            scan = float(np.sum(clones.weights
                                * np.maximum(np.max(clones.gp - x * clones.gq, axis=1), 0)))
            assert clones.delta_and_slope(x)[0] == pytest.approx(scan + clones.omitted,
                                                                 rel=1e-12, abs=1e-300)


def test_clones_delta_and_epsilon_are_inverse():
    for eps0, n, delta in ((1.0, 100, 1e-6), (4.0, 5000, 1e-9), (0.2, 30, 1e-3)):
        eps = clones_epsilon(eps0, n, delta)
        assert clones_delta(eps0, n, eps) <= delta * (1 + 1e-9)
        if eps > 0:
            assert clones_delta(eps0, n, eps * (1 - 1e-6)) > delta


# -- monotone ------------------------------------------------------------------------------------
def test_monotone_in_n():
    exact = [shuffle_epsilon(DieRR(4, 3), n, 1e-6) for n in range(1, 80)]
    exact += [shuffle_epsilon(DieRR(4, 3), n, 1e-6) for n in range(100, 1200, 100)]
    assert all(x >= y - 1e-12 for x, y in itertools.pairwise(exact))
    bound = [clones_epsilon(1.0, n, 1e-6) for n in (*range(1, 60), *range(100, 3000, 250))]
    assert all(x >= y - 1e-12 for x, y in itertools.pairwise(bound))
    asym = [shuffle_epsilon(ForcedResponse(0.5, 0.2), n, 1e-6) for n in range(1, 120, 7)]
    assert all(x >= y - 1e-12 for x, y in itertools.pairwise(asym))


def test_monotone_in_local_epsilon():
    grid = np.linspace(0.05, 6.0, 40)
    for n in (20, 500):
        exact = [shuffle_epsilon(EpsilonRR(e), n, 1e-6) for e in grid]
        assert all(x <= y + 1e-12 for x, y in itertools.pairwise(exact))
        bound = [clones_epsilon(e, n, 1e-6) for e in grid]
        assert all(x <= y + 1e-12 for x, y in itertools.pairwise(bound))
        assert all(x <= e + 1e-12 for x, e in zip(exact, grid, strict=True))


# -- the inverse ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("n", "eps", "delta"), [(30, 1.0, 1e-6), (100, 0.5501, 1e-6),
                                                 (500, 0.2, 1e-5), (2000, 0.5, 1e-8)])
def test_inverse_round_trips(n, eps, delta):
    e0 = shuffle_local_epsilon(n, eps, delta)
    assert e0 >= eps
    assert shuffle_epsilon(EpsilonRR(e0), n, delta) <= eps * (1 + 1e-9)
    assert shuffle_epsilon(EpsilonRR(e0 * (1 + 1e-4)), n, delta) > eps  # and it is the largest
    any_e0 = shuffle_local_epsilon(n, eps, delta, randomizer="any")
    assert eps <= any_e0 <= e0  # a bound for every randomizer allows less than RR's exact value
    assert clones_epsilon(any_e0, n, delta) <= eps * (1 + 1e-9)
    assert clones_epsilon(any_e0 * (1 + 1e-4), n, delta) > eps


def test_inverse_for_the_class_exercise_is_the_die():
    assert shuffle_local_epsilon(100, 0.5501, 1e-6) == pytest.approx(math.log(3), abs=2e-4)


# -- the guarantee a page shows ---------------------------------------------------------------
def test_guarantee_exact_for_yes_no_and_bounded_otherwise():
    g = shuffle_guarantee(DieRR(4, 3), 100)
    assert g == ShuffleGuarantee(shuffle_epsilon(DieRR(4, 3), 100, 1e-6), 1e-6, 100,
                                 DieRR(4, 3).epsilon, True)
    for design in (GRR(5, 1.0), UnaryEncoding.optimized(5, 1.0), PiecewiseMechanism(2.0),
                   numeric_design_from_params({"design": "duchi", "epsilon": 1.0, "lo": 0,
                                               "hi": 10})):
        g = shuffle_guarantee(design, 300)
        assert not g.exact
        assert g.epsilon == clones_epsilon(g.local_epsilon, 300, 1e-6)
        assert 0 < g.epsilon < g.local_epsilon


def test_a_design_that_reveals_answers_gets_no_finite_epsilon():
    revealing = ForcedResponse(0.5, 0.0)  # b = 0: a "yes" report can only come from a yes
    assert math.isinf(shuffle_guarantee(revealing, 500).epsilon)
    assert math.isinf(shuffle_epsilon(WarnerRR(1.0), 50, 1e-6))  # always truthful


def test_bad_input_is_refused_with_a_message():
    with pytest.raises(ValueError, match="delta"):
        shuffle_epsilon(DieRR(4, 3), 10, 1e-13)
    with pytest.raises(ValueError, match="delta"):
        shuffle_epsilon(DieRR(4, 3), 10, 1.0)
    with pytest.raises(ValueError, match="n must be an integer"):
        shuffle_epsilon(DieRR(4, 3), 0, 1e-6)
    with pytest.raises(ValueError, match="yes/no design"):
        shuffle_epsilon(GRR(3, 1.0), 10, 1e-6)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="randomizer"):
        shuffle_local_epsilon(10, 1.0, 1e-6, randomizer="grr")
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        shuffle_local_epsilon(10, 0.0, 1e-6)
    with pytest.raises(ValueError, match="design must be"):
        shuffle_guarantee("die", 10)  # type: ignore[arg-type]


def test_results_are_cached_per_channel_n_and_delta():
    shuffle_module._exact_epsilon.cache_clear()
    shuffle_epsilon(DieRR(4, 3), 321, 1e-6)
    shuffle_epsilon(TwoCoinRR(), 321, 1e-6)  # the same channel (3/4, 1/4)
    info = shuffle_module._exact_epsilon.cache_info()
    assert (info.hits, info.misses) == (1, 1)


def test_guarantee_beyond_the_exact_range_falls_back_to_the_bound():
    big = shuffle_module.EXACT_MAX_N + 1
    g = shuffle_guarantee(DieRR(4, 3), big)
    assert not g.exact and g.n == big
    assert g.epsilon == clones_epsilon(DieRR(4, 3).epsilon, big, 1e-6)
    huge = shuffle_guarantee(GRR(3, 1.0), shuffle_module.CLONES_MAX_N * 5)
    assert huge.epsilon == clones_epsilon(1.0, shuffle_module.CLONES_MAX_N, 1e-6)
