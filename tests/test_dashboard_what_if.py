"""The what-if panel and the custom yes/no design under AppTest.

What the panel shows must determine what it computes: the same values on screen never
give two SDs. Its chart's axis reads in round numbers, it says which n it uses and why,
and it stays open while reports arrive.
"""

from __future__ import annotations

import math

import pytest

import ldp_core
from tests.support.apptest import app_env
from tests.test_dashboard import DIE, assert_clean, dashboard, f3, metrics, seed, texts

__all__ = ["app_env"]

_WHICH = {"gamma": "gamma", "eps": "epsilon"}


def _shown(at) -> tuple:
    """Everything the what-if panel shows that could set its design: each slider's label
    and value, and which parameter it is set by."""
    shown = [(s.label, round(float(s.value), 6)) for s in at.slider
             if str(s.key).startswith("dash_wi_")]
    shown += [(r.label, r.value) for r in at.radio if str(r.key).startswith("dash_wi_")]
    return tuple(sorted(shown))


def _sd_shown(at) -> str:
    return next(m.value for m in at.metric if m.label.startswith("SD with this design"))


def _move(at, which: str, value: float) -> None:
    """Move the γ or ε slider, choosing that parameter first where the panel asks."""
    by = [r for r in at.radio if r.key == "dash_wi_by"]
    if by and by[0].value != _WHICH[which]:
        by[0].set_value(_WHICH[which]).run()
    at.slider(key=f"dash_wi_{which}").set_value(value).run()


MOVES = [[("gamma", 0.002)], [("eps", 0.02), ("eps", 0.01)], [("gamma", 0.3)],
         [("eps", 1.39)], [("gamma", 0.493)], [("eps", 5.0)], [("eps", 1.0), ("gamma", 0.25)]]


def test_the_values_on_screen_alone_set_the_what_if_sd(app_env):
    """Whatever was moved last, the same values on screen give the same SD, and that SD
    is the one of the design the slider on screen sets."""
    seed(app_env, DIE, 30, 40)
    seen: dict[tuple, str] = {}
    for moves in MOVES:
        at = dashboard()
        for which, value in moves:
            _move(at, which, value)
        assert_clean(at)
        shown, sd = _shown(at), _sd_shown(at)
        assert seen.setdefault(shown, sd) == sd, f"{shown} shows SD {seen[shown]} and {sd}"
        which, value = moves[-1]
        design = ldp_core.GammaRR(value) if which == "gamma" else ldp_core.EpsilonRR(value)
        assert sd == f3(ldp_core.BinaryCounts.single(design, 0, 40).sd_worst())


# ε is shown rounded up, never understating the loss: γ = 0.493 is ε = 4.9548… (4.96).
@pytest.mark.parametrize("which, value, eps", [
    ("gamma", 0.493, 4.96), ("gamma", 0.002, 0.01), ("eps", 5.0, 5.0), ("eps", 0.01, 0.01)])
def test_both_ends_of_each_parameter_are_reachable(app_env, which, value, eps):
    seed(app_env, DIE, 30, 40)
    at = dashboard()
    _move(at, which, value)
    assert_clean(at)
    label = next(m.label for m in at.metric if m.label.startswith("SD with this design"))
    assert label == f"SD with this design (ε = {eps:.2f})"


def test_switching_the_parameter_keeps_the_design_where_it_was(app_env):
    seed(app_env, DIE, 30, 40)
    at = dashboard()
    assert at.radio(key="dash_wi_by").value == "gamma"  # the die: γ = 1/4 exactly
    assert at.slider(key="dash_wi_gamma").value == pytest.approx(0.25)
    _move(at, "gamma", 0.3)
    at.radio(key="dash_wi_by").set_value("epsilon").run()
    assert at.slider(key="dash_wi_eps").value == pytest.approx(round(math.log(1.6 / 0.4), 2))
    assert not [s for s in at.slider if s.key == "dash_wi_gamma"]  # one slider on screen
    at.slider(key="dash_wi_eps").set_value(2.0).run()
    at.radio(key="dash_wi_by").set_value("gamma").run()
    assert at.slider(key="dash_wi_gamma").value == pytest.approx(round(math.tanh(1.0) / 2, 3))
    assert_clean(at)


def test_what_if_does_not_touch_the_data_and_applies_to_the_next_round(app_env):
    _, q = seed(app_env, DIE, 30, 40)
    before = app_env.results.estimate(q.id)
    at = dashboard()
    assert metrics(at)["SD now (ε = 1.10)"] == "0.137"
    _move(at, "eps", 2.0)
    want = ldp_core.BinaryCounts.single(ldp_core.EpsilonRR(2.0), 0, 40).sd_worst()
    assert metrics(at)["SD with this design (ε = 2.00)"] == f3(want)
    _move(at, "gamma", 0.1)
    want = ldp_core.BinaryCounts.single(ldp_core.GammaRR(0.1), 0, 40).sd_worst()
    assert metrics(at)["SD with this design (ε = 0.41)"] == f3(want)
    after = app_env.results.estimate(q.id)
    assert (after.n, after.counts, after.round_number) == (before.n, before.counts, 1)
    at.checkbox(key="dash_wi_open").check().run()
    at.button(key="dash_wi_apply").click().run()
    assert_clean(at)
    rounds = app_env.running.rounds(q.id)
    assert rounds[-1].number == 2 and rounds[-1].design_params == {"design": "gamma",
                                                                   "gamma": 0.1}
    assert rounds[0].design_params == DIE
    assert app_env.polls.question(q.id).is_open


def test_what_if_starts_from_each_questions_design(app_env):
    poll, q1 = seed(app_env, DIE, 30, 40, text="First?")
    q2 = app_env.polls.add_question(poll.id, "Second?", options=("No", "Yes"),
                                    design_params={"design": "epsilon", "epsilon": 2.5})
    at = dashboard()
    assert at.slider(key="dash_wi_gamma").value == pytest.approx(0.25)
    _move(at, "eps", 0.5)
    at.selectbox(key="dash_question_select").set_value(q2.id).run()
    assert at.radio(key="dash_wi_by").value == "epsilon"  # ε = 2.5: γ is not a round number
    assert at.slider(key="dash_wi_eps").value == pytest.approx(2.5)
    assert_clean(at)


def _what_if_expander(at):
    return next(e for e in at.expander if e.label.startswith("What if"))


def _expander_id(at) -> str:
    """The what-if expander's element id: a new id is a new expander, closed again."""
    state = at.session_state._state._state  # the SessionState behind the test's proxy
    return state._key_id_mapper.get_id_from_key("dash_open_what_if")


def test_the_panel_says_which_n_and_stays_the_same_expander_as_reports_arrive(app_env):
    poll, q = seed(app_env, DIE, 0, 0)
    at = dashboard()
    title, element = _what_if_expander(at).label, _expander_id(at)
    assert "n =" not in title  # the class's n is not known before the first report
    assert "No reports in this round yet, so the SDs are for a class of n = 100" in texts(at)
    for i in range(12):
        app_env.reports.submit_report(poll.join_code, q.id, answer=i % 2, design_params=DIE,
                                      submission_id=f"late-{i:06d}", device_id=f"late-{i}")
    at.run()
    assert (_what_if_expander(at).label, _expander_id(at)) == (title, element)
    assert "At n = 12, the reports of this round so far." in texts(at)
    assert metrics(at)["SD now (ε = 1.10)"] == f3(math.sqrt(3 / (4 * 12)))
