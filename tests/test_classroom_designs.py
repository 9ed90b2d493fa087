"""classroom.designs: every design the app accepts is described once, with its numbers."""

from __future__ import annotations

import pytest

from classroom import designs
from classroom.domain import (
    BINARY_DESIGNS,
    CATEGORICAL_DESIGNS,
    CLASS_EXERCISE,
    NUMERIC_DESIGNS,
)


@pytest.mark.parametrize("key", sorted(set(BINARY_DESIGNS) | set(CATEGORICAL_DESIGNS)
                                       | set(NUMERIC_DESIGNS)))
def test_every_accepted_design_has_a_name_and_a_summary(key):
    assert key in designs.DESIGNS
    assert designs.DESIGNS[key].name


@pytest.mark.parametrize("params, summary", [
    (dict(CLASS_EXERCISE), "die 1–4: truthful on 1–3, lie on 4"),
    ({"design": "die", "faces": 6, "truthful": 4}, "die 1–6: truthful on 1–4, lie on 5–6"),
    ({"design": "two_coin"}, "two coins: heads → truth; tails → second coin answers"),
    ({"design": "warner", "p": 0.7}, "Warner's spinner, p = 0.70"),
    ({"design": "grr", "d": 5, "epsilon": 1.0}, "GRR over 5 options, ε = 1.00"),
    ({"design": "piecewise", "epsilon": 1.0, "lo": 0.0, "hi": 12.0},
     "Piecewise Mechanism on [0, 12], ε = 1.00"),
])
def test_the_summary_carries_the_design_numbers(params, summary):
    assert designs.describe(params) == summary


def test_by_hand_instructions_name_the_options_and_the_numbers():
    die = designs.physical_instructions(dict(CLASS_EXERCISE), "Vanilla", "Chocolate")
    assert "4-sided die" in die and "On 1–3 report your true answer" in die
    coins = designs.physical_instructions({"design": "two_coin"}, "Vanilla", "Chocolate")
    assert "report Vanilla on heads, Chocolate on tails" in coins
    spinner = designs.physical_instructions({"design": "warner", "p": 0.7}, "Vanilla", "No")
    assert "probability 0.7" in spinner and "do you NOT prefer Vanilla?" in spinner
    other = designs.physical_instructions({"design": "epsilon", "epsilon": 1.0}, "Y", "N")
    assert "randomizer your instructor describes" in other


@pytest.mark.parametrize("key, animation", [("die", "die"), ("two_coin", "coins"),
                                            ("warner", "spinner"), ("epsilon", "spinner"),
                                            ("grr", "none"), ("unknown", "none")])
def test_the_phone_animation(key, animation):
    assert designs.phone_animation({"design": key}) == animation
