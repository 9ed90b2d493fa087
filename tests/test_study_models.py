"""The self-study page "Local, shuffle, federated, central" under AppTest: the course's check
value, every number against ldp_core for its fixed seed, the sliders' extremes, k kept within
the class, and a new simulation."""

from __future__ import annotations

import pytest

from ldp_core import model_share_sds, sd_with_se, simulate_model_shares
from tests.test_study_pages import check_page, metric, page_app, sweep
from ui.fmt import fmt, fmt_eps_allowed, fmt_fixed


def _table(at) -> dict[str, list[str]]:
    frame = at.dataframe[0].value
    return {column: list(frame[column]) for column in frame.columns}


def test_defaults_are_the_course_check_and_match_ldp_core():
    from views import study_models as page

    at = page_app("study_models").run()
    check_page(at)
    n, eps, delta, k = 30, 1.0, 1e-6, 6
    sds = model_share_sds(n, eps, delta, k)
    assert metric(at, "Federated, k = 6: SD") == "0.1155"  # √12 / 30
    assert metric(at, "Local RR: SD") == fmt(sds.local, 4)
    assert metric(at, "Shuffle model: SD") == fmt(sds.shuffle, 4)
    assert metric(at, "Central Laplace: SD") == fmt(sds.central, 4)
    # the simulation beside the formulas: numpy's generator seeded 2025, 10,000 classes
    sim = simulate_model_shares(n, eps, delta, k, size=page.CLASSES, rng=page.FIRST_SEED)
    table = _table(at)
    for i, model in enumerate(page.MODELS):
        s, se = sd_with_se(getattr(sim, model))
        assert table["SD, simulated ± SE"][i] == f"{fmt(s, 3)} ± {fmt(se, 2)}"
        assert table["SD, formula"][i] == fmt(getattr(sds, model), 4)
        z = abs(s - getattr(sds, model)) / se
        assert table["Off by"][i] == f"{fmt_fixed(z, 1)} SE" and z < 4
    assert any("seeded 2025" in c.value for c in at.caption)
    text = " ".join(m.value for m in at.markdown)
    for words in ("What each model trusts", "Nobody", "A shuffler", "6 delegates",
                  "One curator"):
        assert words in text or any(words in h.value for h in at.subheader), words


def test_a_large_class_shows_what_anonymity_buys():
    at = page_app("study_models").run()
    at.slider(key="models_n").set_value(2000).run()
    check_page(at)
    sds = model_share_sds(2000, 1.0, 1e-6, 6)
    assert sds.shuffle_local_epsilon > 3
    assert metric(at, "Shuffle model: SD") == fmt(sds.shuffle, 4)
    shown = fmt_eps_allowed(sds.shuffle_local_epsilon)  # the largest allowed ε0, rounded down
    assert float(shown) <= sds.shuffle_local_epsilon
    assert any(f"ε0 = {shown}" in m.value
               and "more accurate" in m.value for m in at.markdown)


def test_k_stays_within_the_class():
    at = page_app("study_models").run()
    at.slider(key="models_k").set_value(30).run()
    at.slider(key="models_n").set_value(10).run()
    check_page(at)
    assert at.slider(key="models_k").value == 10
    assert at.slider(key="models_k").max == 10
    assert metric(at, "Federated, k = 10: SD") == fmt(model_share_sds(10, 1.0, 1e-6, 10)
                                                     .federated, 4)


def test_new_simulation_draws_with_the_next_seed():
    at = page_app("study_models").run()
    before = _table(at)["SD, simulated ± SE"]
    at.button[0].click().run()
    check_page(at)
    assert at.session_state["models_seed"] == 2026
    assert _table(at)["SD, simulated ± SE"] != before
    assert any("seeded 2026" in c.value for c in at.caption)


@pytest.mark.parametrize("delta", [1e-3, 1e-10])
def test_every_slider_extreme(delta):
    at = page_app("study_models").run()
    at.select_slider(key="models_delta").set_value(delta).run()
    check_page(at)
    runs = sweep(at, ["models_n", "models_eps", "models_k"], {"models_n": [2, 2000]})
    at.slider(key="models_eps").set_value(5.0).run()
    runs += sweep(at, ["models_n"], {"models_n": [2, 2000]})
    assert runs >= 8
