"""ldp_core.planning: "is my class big enough?", against simulated detection rates.

* Check value: GRR, d = 4, ε = 1, n = 30 gives s_min = 0.71.
* The formula's pieces: Wang et al.'s variance factors, Bonferroni over d, the round trip
  with needed_class_size.
* Simulated classes (exact aggregate sampling, fixed seeds) with one option held by a
  share s_min: the option is found in about 80% of them. The formula's normal
  approximation with the variance at share 0 errs a few points low at small n (the SD
  grows with the share; counts are whole numbers), so small classes must land in
  [0.70, 0.83] and a class of 50,000 within 4 SE + 0.01 of 0.80. Power: s_min without the
  Bonferroni split, or 25% smaller, is found far less often and fails the same check.
* No false discoveries: an option nobody holds is declared present in at most α of the
  classes over all d options together (4 SE); in a class of 30, under 10%.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from ldp_core import (
    GRR,
    false_present_rate,
    needed_class_size,
    oracle,
    presence_threshold,
    recommend_oracle,
    smallest_detectable_share,
)

RUNS = 4000


def test_the_check_value():
    assert round(smallest_detectable_share(GRR(4, 1.0), 30), 2) == 0.71


@pytest.mark.parametrize(("name", "factor"), [
    ("grr", lambda e, d: (math.exp(e) + d - 2) / (math.exp(e) - 1) ** 2),
    ("oue", lambda e, d: 4 * math.exp(e) / (math.exp(e) - 1) ** 2),
    ("sue", lambda e, d: math.exp(e / 2) / (math.exp(e / 2) - 1) ** 2),
])
@pytest.mark.parametrize(("d", "eps", "n"), [(2, 0.5, 20), (4, 1.0, 30), (14, 2.0, 500)])
def test_the_formula_is_wang_et_al_s_variance_with_bonferroni(name, factor, d, eps, n):
    o = oracle(name, d, eps)
    z = NormalDist().inv_cdf
    sd = math.sqrt(factor(eps, d) / n)
    assert presence_threshold(o, n) == pytest.approx(z(1 - 0.05 / d) * sd, rel=1e-9)
    assert smallest_detectable_share(o, n) == pytest.approx((z(1 - 0.05 / d) + z(0.8)) * sd,
                                                            rel=1e-9)
    assert smallest_detectable_share(o, n, alpha=0.01, power=0.9) == pytest.approx(
        (z(1 - 0.01 / d) + z(0.9)) * sd, rel=1e-9)


@pytest.mark.parametrize("d", [2, 4, 8, 20])
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 4.0])
def test_the_recommended_oracle_finds_the_smallest_share(d, eps):
    shares = {name: smallest_detectable_share(oracle(name, d, eps), 100)
              for name in ("grr", "sue", "oue")}
    assert shares[recommend_oracle(d, eps)] == pytest.approx(min(shares.values()), rel=1e-12)


@pytest.mark.parametrize("share", [0.71, 0.5, 0.2, 0.05])
def test_needed_class_size_round_trips(share):
    o = GRR(4, 1.0)
    n = needed_class_size(o, share)
    assert smallest_detectable_share(o, n) <= share < smallest_detectable_share(o, n - 1)
    assert needed_class_size(o, smallest_detectable_share(o, 30)) == 30


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="frequency oracle"):
        smallest_detectable_share("grr", 30)
    with pytest.raises(ValueError, match="n must be"):
        smallest_detectable_share(GRR(4, 1.0), 0)
    with pytest.raises(ValueError, match="power"):
        smallest_detectable_share(GRR(4, 1.0), 30, power=1.0)
    with pytest.raises(ValueError, match="share"):
        needed_class_size(GRR(4, 1.0), 0.0)


def _detection_rate(o, n: int, share: float, *, seed: int, threshold: float | None = None
                    ) -> float:
    """Share of simulated classes (exactly round(share n) of n holding option 0, the rest
    spread over the others) whose estimated share of option 0 passes the threshold."""
    held = int(round(share * n))
    rest = np.full(o.d - 1, (n - held) // (o.d - 1))
    rest[: (n - held) - rest.sum()] += 1
    counts = o.sample_support_counts(np.concatenate(([held], rest)), size=RUNS, rng=seed)
    est = o.estimate_counts(counts, n)[:, 0] / n
    t = presence_threshold(o, n) if threshold is None else threshold
    return float(np.mean(est > t))


CASES = [("grr", 4, 1.0, 30), ("grr", 4, 2.0, 200), ("oue", 10, 1.0, 300),
         ("oue", 6, 0.5, 2000), ("sue", 4, 1.0, 400)]


@pytest.mark.parametrize(("name", "d", "eps", "n"), CASES)
def test_a_class_finds_an_option_held_by_s_min_four_times_in_five(name, d, eps, n):
    o = oracle(name, d, eps)
    s_min = smallest_detectable_share(o, n)
    rate = _detection_rate(o, n, s_min, seed=n)
    assert 0.70 <= rate <= 0.83, rate
    # Power: without the Bonferroni split s_min is too small, and 25% less is too.
    naive = (NormalDist().inv_cdf(0.95) + NormalDist().inv_cdf(0.8)) \
        * math.sqrt(float(o.count_variance(1)) / n)
    for wrong in (naive, 0.75 * s_min):
        assert _detection_rate(o, n, wrong, seed=n + 1) < 0.70


def test_in_a_large_class_the_power_is_80_percent():
    o = GRR(4, 1.0)
    n = 50_000
    rate = _detection_rate(o, n, smallest_detectable_share(o, n), seed=4)
    assert abs(rate - 0.8) <= 4 * math.sqrt(0.16 / RUNS) + 0.01


@pytest.mark.parametrize(("name", "d", "eps", "n"), CASES)
def test_an_option_nobody_holds_is_rarely_declared_present(name, d, eps, n):
    """Family-wise: the class holds only option 0; options 1..d-1 are absent. The chance
    that any of them passes its threshold is at most alpha = 5% (within 4 SE). In a class
    of 30 the normal threshold is a little liberal for the skewed counts of rare reports
    (8.05% exactly for GRR, d = 4, ε = 1): there it must stay under 10%. The simulated
    rate agrees with :func:`false_present_rate` within 4 SE."""
    o = oracle(name, d, eps)
    true = np.zeros(d, dtype=int)
    true[0] = n
    counts = o.sample_support_counts(true, size=RUNS, rng=99)
    est = o.estimate_counts(counts, n)[:, 1:] / n
    rate = float(np.mean((est > presence_threshold(o, n)).any(axis=1)))
    allowed = 0.10 if n < 100 else 0.05
    assert rate <= allowed + 4 * math.sqrt(0.05 * 0.95 / RUNS), rate
    exact = false_present_rate(o, n)
    assert abs(rate - exact) <= 4 * math.sqrt(exact * (1 - exact) / RUNS) + 1e-9, (rate, exact)


def _brute_force_false_present(o, n: int) -> float:
    """Every outcome of the d - 1 absent options' counts (and the rest), its exact
    multinomial probability, whether any passes the threshold."""
    import itertools

    d = o.d
    q = float(o.q) if isinstance(o, GRR) else None
    most = n * (o.q + presence_threshold(o, n) * (o.p - o.q))
    total = 0.0
    if q is None:  # unary encoding: each absent option's bit count Bin(n, q), independent
        below = sum(math.comb(n, c) * o.q**c * (1 - o.q) ** (n - c) for c in range(n + 1)
                    if c <= most)
        return 1 - below ** (d - 1)
    cells = d
    probs = [q] * (d - 1) + [1 - (d - 1) * q]
    for bars in itertools.combinations(range(n + cells - 1), cells - 1):
        edges = (-1, *bars, n + cells - 1)
        c = [edges[i + 1] - edges[i] - 1 for i in range(cells)]
        if any(x > most for x in c[:-1]):
            total += math.exp(math.lgamma(n + 1) + sum(
                x * math.log(p) - math.lgamma(x + 1) for x, p in zip(c, probs, strict=True)))
    return total


@pytest.mark.parametrize(("name", "d", "eps", "n"),
                         [("grr", 4, 1.0, 30), ("grr", 3, 0.5, 12), ("grr", 5, 2.0, 20),
                          ("oue", 4, 1.0, 30), ("sue", 6, 5.0, 8)])
def test_the_false_present_rate_is_exact(name, d, eps, n):
    o = oracle(name, d, eps)
    assert false_present_rate(o, n) == pytest.approx(_brute_force_false_present(o, n),
                                                     rel=1e-9, abs=1e-15)


def test_the_false_present_rate_of_the_issue_s_class():
    assert round(false_present_rate(GRR(4, 1.0), 30), 4) == 0.0805
    with pytest.raises(ValueError, match="GRR and unary encoding"):
        false_present_rate(oracle("olh", 4, 1.0), 30)
