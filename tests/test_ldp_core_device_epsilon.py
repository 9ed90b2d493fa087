"""The privacy loss the phone really has, and the displayed ε, agree the safe way round.

* ``EpsilonRR``'s derived ε equals its parameter to 1e-12 relative over [1e-6, 20]
  (computing b as 1 - keep drifted by 3.6e-8 at ε = 20).
* The phone samples binary designs from integer weights (multiples of 2**-32);
  their exact ε (``device_epsilon``) is never above the displayed ε, for every
  design and parameter the dashboard offers and for a random sample beyond
  (``EpsilonRR(19.93)`` once gave 19.9835 on the device), and within about 1e-8
  of it where the UI goes (ε ≤ 5).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp_core import DieRR, EpsilonRR, ForcedResponse, GammaRR, TwoCoinRR, WarnerRR


@pytest.mark.parametrize("eps", np.geomspace(1e-6, 20, 500).tolist())
def test_epsilon_rr_derives_its_own_parameter(eps):
    assert abs(EpsilonRR(eps).epsilon - eps) <= 1e-12 * eps


def test_the_old_drift_is_gone_at_large_epsilon():
    d = EpsilonRR(20.0)
    assert d.b == 1 / (1 + math.exp(20.0)) and d.epsilon == pytest.approx(20.0, rel=1e-14)


def _ui_designs():
    """Every design the dashboard's presets and sliders can make."""
    yield from (DieRR(k, t) for k in range(2, 21) for t in range(1, k) if 2 * t != k)
    yield TwoCoinRR()
    yield from (WarnerRR(p / 100) for p in range(1, 100) if p != 50)
    yield from (EpsilonRR(e / 100) for e in range(1, 501))  # the ε slider: 0.01 .. 5.00
    yield from (GammaRR(g / 1000) for g in range(2, 494))  # the γ slider: 0.002 .. 0.493


@pytest.mark.parametrize("design", list(_ui_designs()), ids=repr)
def test_device_epsilon_never_exceeds_the_displayed_one_in_the_ui(design):
    dev, shown = design.device_epsilon(), design.epsilon
    assert dev <= shown
    assert shown - dev <= 2e-8 * max(1.0, shown)


def test_device_epsilon_never_exceeds_the_displayed_one_beyond_the_ui():
    rng = np.random.default_rng(20261124)
    designs = [EpsilonRR(float(e)) for e in rng.uniform(1e-6, 20, 3000)]
    designs += [GammaRR(float(g)) for g in rng.uniform(1e-6, 0.4999, 1000)]
    designs += [WarnerRR(float(p)) for p in rng.uniform(0.001, 0.999, 1000)]
    designs += [ForcedResponse(float(t), float(y)) for t, y in
                zip(rng.uniform(0.05, 0.9, 500), rng.uniform(0.01, 0.05, 500), strict=True)]
    designs.append(EpsilonRR(19.93))
    worse = [d for d in designs if d.device_epsilon() > d.epsilon]
    assert worse == []


def test_exact_designs_sample_exactly():
    for design in (DieRR(4, 3), TwoCoinRR(), WarnerRR(0.7)):
        assert design.device_epsilon() == pytest.approx(design.epsilon, rel=1e-15)


def test_categorical_devices_round_toward_privacy():
    """The phone compares 53-bit uniforms with p and q (GRR, unary encoding)."""
    from ldp_core import GRR, UnaryEncoding

    oracles = [make(d, e) for d in range(2, 21) for e in np.linspace(0.01, 5, 50)
               for make in (GRR, UnaryEncoding.optimized, UnaryEncoding.symmetric)]
    for o in oracles:
        p, q = o.device_pq()
        assert p * 2**53 == int(p * 2**53) and q * 2**53 == int(q * 2**53) or o.kind == "grr"
        assert o.device_epsilon() <= o.epsilon
        assert o.epsilon - o.device_epsilon() <= 1e-12
