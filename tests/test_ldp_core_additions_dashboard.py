"""ldp_core.formulas: the estimator's coefficients agree with BinaryCounts exactly."""

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
)
from ldp_core.formulas import privacy_ratio, unbiased_coefficients, worst_variance_unit


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


@pytest.mark.parametrize("design", [
    DieRR(4, 3), DieRR(6, 5), DieRR(10, 2), TwoCoinRR(), WarnerRR(0.7), WarnerRR(0.2),
    GammaRR(0.1), EpsilonRR(0.5), EpsilonRR(3.0), ForcedResponse(0.6, 0.3),
    ForcedResponse(0.5, 0.1),
])
@pytest.mark.parametrize("yes,n", [(0, 1), (1, 1), (30, 40), (7, 13), (400, 1000)])
def test_coefficients_reproduce_binary_counts(design, yes, n):
    counts = BinaryCounts.single(design, yes=yes, n=n)
    slope, offset = unbiased_coefficients(design)
    assert float(slope) * yes / n - float(offset) == pytest.approx(counts.unbiased(), abs=1e-12)
    assert math.sqrt(float(worst_variance_unit(design)) / n) == pytest.approx(
        counts.sd_worst(), rel=1e-12)


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
