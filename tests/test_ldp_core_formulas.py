"""ldp_core.formulas: exact coefficients, checked against hand-worked fractions."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from ldp_core import (
    BinaryCounts,
    DieRR,
    EpsilonRR,
    ForcedResponse,
    GammaRR,
    TwoCoinRR,
    WarnerRR,
    privacy_ratio,
    unbiased_coefficients,
    worst_variance_unit,
)


def test_class_exercise_is_two_v_over_n_minus_half_and_sd_sqrt_3_over_4n():
    design = DieRR(faces=4, truthful=3)
    assert unbiased_coefficients(design) == (Fraction(2), Fraction(1, 2))
    assert worst_variance_unit(design) == Fraction(3, 4)
    assert unbiased_coefficients(TwoCoinRR()) == (2, Fraction(1, 2))
    assert worst_variance_unit(TwoCoinRR()) == Fraction(3, 4)
    assert privacy_ratio(design) == privacy_ratio(TwoCoinRR()) == 3


def test_warner_p_0_7():
    slope, offset = unbiased_coefficients(WarnerRR(0.7))
    assert slope == pytest.approx(2.5)
    assert offset == pytest.approx(0.75)
    assert worst_variance_unit(WarnerRR(0.7)) == pytest.approx(0.21 / 0.16)


#: (design, slope 1/(a-b), offset b/(a-b), worst unit max(a(1-a), b(1-b))/(a-b)^2), worked
#: out by hand from each design's a = P(report 1 | 1) and b = P(report 1 | 0).
EXACT = [
    (DieRR(4, 3), Fraction(2), Fraction(1, 2), Fraction(3, 4)),  # a = 3/4, b = 1/4
    (DieRR(6, 5), Fraction(3, 2), Fraction(1, 4), Fraction(5, 16)),  # a = 5/6, b = 1/6
    (DieRR(10, 2), Fraction(-5, 3), Fraction(-4, 3), Fraction(4, 9)),  # a = 1/5, b = 4/5
    (TwoCoinRR(), Fraction(2), Fraction(1, 2), Fraction(3, 4)),  # a = 3/4, b = 1/4
    (ForcedResponse(0.6, 0.3), Fraction(5, 3), Fraction(1, 2), Fraction(7, 12)),  # 9/10, 3/10
    (ForcedResponse(0.5, 0.25), Fraction(2), Fraction(1, 2), Fraction(3, 4)),  # 3/4, 1/4
]


@pytest.mark.parametrize("design,slope,offset,unit", EXACT)
def test_coefficients_are_the_exact_fractions(design, slope, offset, unit):
    assert unbiased_coefficients(design) == (slope, offset)
    assert worst_variance_unit(design) == unit


@pytest.mark.parametrize("design,slope,offset,unit", EXACT)
@pytest.mark.parametrize("yes,n", [(0, 1), (1, 1), (30, 40), (7, 13), (400, 1000)])
def test_binary_counts_agree_with_the_exact_fractions(design, slope, offset, unit, yes, n):
    counts = BinaryCounts.single(design, yes=yes, n=n)
    assert counts.unbiased() == pytest.approx(float(slope * Fraction(yes, n) - offset),
                                              abs=1e-12)
    assert counts.sd_worst() == pytest.approx(math.sqrt(unit / n), rel=1e-12)


@pytest.mark.parametrize("design", [
    DieRR(4, 3), DieRR(6, 5), DieRR(10, 2), TwoCoinRR(), WarnerRR(0.7), WarnerRR(0.2),
    GammaRR(0.1), EpsilonRR(0.5), EpsilonRR(3.0), ForcedResponse(0.6, 0.3),
    ForcedResponse(0.5, 0.1), ForcedResponse(1.0, 0.0),
])
def test_privacy_ratio_is_e_to_the_epsilon(design):
    ratio = privacy_ratio(design)
    if math.isinf(design.epsilon):
        assert ratio == math.inf
    else:
        assert math.log(ratio) == pytest.approx(design.epsilon, rel=1e-12, abs=1e-15)


def test_uninformative_design_is_refused():
    with pytest.raises(ValueError, match="no information"):
        unbiased_coefficients(GammaRR(0.0))
    with pytest.raises(ValueError, match="BinaryDesign"):
        worst_variance_unit("die")  # type: ignore[arg-type]
