"""Numeric questions and the privacy budget on the instructor dashboard, under AppTest.

Known reports give exact numbers: under Duchi et al.'s mechanism at ε = ln 3 on
[0, 12], c_ε = 2, so a report is 6 ± 12 hours; 20 reports of +c and 10 of −c give
the mean (20 · 18 − 10 · 6)/30 = 10 hours, with the fixed-class SD 6 c_ε/√30 =
12/√30 = 2.191 hours. The central model's SD at the same ε and n is
√2 · 12/(30 ln 3) = 0.5149 hours.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ldp_core
from tests.support.apptest import app_env
from tests.test_dashboard import assert_clean, dashboard, metrics, texts

__all__ = ["app_env"]

LN3 = math.log(3)
DUCHI = {"design": "duchi", "epsilon": LN3, "lo": 0, "hi": 12}


def hours(x: float) -> str:
    """A value of a question on [0, 12] as the dashboard writes it: every number of the
    question with the same 2 decimals (ui.fmt.value_decimals), a true minus sign."""
    return f"{x:.2f} hours".replace("-", "−")


def _numeric(svc, poll, params=DUCHI, *, open_now=True):
    q = svc.polls.add_question(poll.id, "How many hours did you sleep last night?",
                               kind="numeric", options=("hours",), design_params=params)
    return svc.running.open_question(q.id) if open_now else q


def _report(svc, poll, q, answer, i):
    return svc.reports.submit_report(poll.join_code, q.id, answer=answer,
                                     design_params=q.design_params, submission_id=f"num-{i:06d}",
                                     device_id=f"num-device-{i}")


def test_the_form_preselects_the_recommended_mechanism_and_adds_the_question(app_env):
    poll = app_env.polls.create_poll("sleep")
    at = dashboard()
    at.radio(key="dash_q_preset").set_value("numeric").run()
    assert_clean(at)
    # ε = 1.1 is above ε* ≈ 0.61: the Hybrid Mechanism has the smallest worst case.
    assert at.radio(key="dash_q_num_mech_hybrid").value == "hybrid"
    assert "recommends Hybrid Mechanism" in texts(at) and "1.29" in texts(at)
    assert "ε* ≈ 0.61" in texts(at)
    # ε = 1.1 on [0, 12], n = 100: the Hybrid's worst SD of the mean is 6 √Var / 10, the
    # central model's √2 · 12 / (100 · 1.1); one report's worst SD for each mechanism.
    sd = 6 * math.sqrt(ldp_core.HybridMechanism(1.1).worst_variance())
    # Every value of the form with the question's decimals (two on [0, 12]).
    assert f"the SD of the mean is at most {sd / 10:.2f} hours" in texts(at)
    assert f"a trusted curator's would be {math.sqrt(2) * 12 / 110:.2f} hours" in texts(at)
    c = (math.exp(1.1) + 1) / (math.exp(1.1) - 1)
    assert f"Duchi {6 * c:.2f} hours, Piecewise" in texts(at) and f"Hybrid {sd:.2f}" in texts(at)
    at.slider(key="dash_q_num_eps").set_value(0.5).run()
    assert at.radio(key="dash_q_num_mech_duchi").value == "duchi"
    assert "recommends Duchi" in texts(at)
    at.slider(key="dash_q_num_eps").set_value(2.0).run()
    assert at.radio(key="dash_q_num_mech_hybrid").value == "hybrid"
    at.number_input(key="dash_q_num_hi").set_value(10.0).run()
    at.button(key="dash_add_question").click().run()
    assert_clean(at)
    (q,) = app_env.polls.questions(poll.id)
    assert (q.kind, q.unit, q.mode) == ("numeric", "hours", "device")
    assert q.design_params == {"design": "hybrid", "epsilon": 2.0, "lo": 0.0, "hi": 10.0}


def test_an_empty_range_is_refused_before_anything_is_added(app_env):
    poll = app_env.polls.create_poll("sleep")
    at = dashboard()
    at.radio(key="dash_q_preset").set_value("numeric").run()
    at.number_input(key="dash_q_num_lo").set_value(12.0).run()
    assert "The smallest answer must be below the largest." in texts(at)
    assert at.button(key="dash_add_question").disabled
    at.number_input(key="dash_q_num_lo").set_value(11.9995).run()
    assert "must exceed the smallest by at least 0.001" in texts(at)
    assert at.button(key="dash_add_question").disabled
    assert list(app_env.polls.questions(poll.id)) == []
    assert_clean(at)


def test_the_range_inputs_stop_at_a_billion(app_env):
    app_env.polls.create_poll("sleep")
    at = dashboard()
    at.radio(key="dash_q_preset").set_value("numeric").run()
    for key in ("dash_q_num_lo", "dash_q_num_hi"):
        box = at.number_input(key=key)
        assert (box.min, box.max) == (-1e9, 1e9)


def test_the_numeric_panel_shows_the_exact_mean_sd_and_central_sd(app_env):
    poll = app_env.polls.create_poll("sleep")
    q = _numeric(app_env, poll)
    for i in range(30):
        _report(app_env, poll, q, 1 if i < 20 else 0, i)
    app_env.running.set_revealed(q.id, True)
    at = dashboard()
    assert_clean(at)
    shown = metrics(at)
    assert shown["Reports received"] == "30"
    assert shown["Estimated mean"] == "10.00 hours"
    assert shown["SD, worst case"] == hours(12 / math.sqrt(30))
    est = app_env.results.estimate(q.id).result.estimate
    # Duchi et al.'s reports are randomized response (3/4, 1/4) on a bit of mean (1 + x)/2:
    # the exact (Clopper-Pearson) interval of 20 "+c" of 30, mapped to [0, 12].
    bit_low, bit_high = ldp_core.exact_interval(0.75, 0.25, 30, 20)
    low, high = 12 * bit_low, 12 * bit_high
    assert est.interval() == pytest.approx((low, high))
    # rounded outward, as on every screen (classroom.display)
    assert shown["95% CI"] == (f"{math.floor(100 * low) / 100:.2f} to "
                               f"{math.ceil(100 * high) / 100:.2f} hours")
    page = texts(at)
    assert f"would have had SD {hours(math.sqrt(2) * 12 / (30 * LN3))}" in page
    assert "one of two values, −6.00 hours or 18.00 hours" in page  # ±c_ε = ±2 on [0, 12]
    assert "SD per report in the worst case 12.00 hours" in page  # c_ε · 6
    # The design's line names ε once ("… ε = 1.10. ε = 1.10." said it twice).
    assert "Design: Duchi et al. (one bit) on [0, 12], ε = 1.10. Mean" in page
    assert "ε = 1.10. ε = 1.10." not in page
    assert f"The reports' own spread gives {hours(est.sd)}" in page
    assert len(at.get("vega_lite_chart")) >= 1


def test_a_hybrid_round_is_read_with_both_of_its_parts(app_env):
    """At ε = 2 on [0, 12]: Duchi's part (chance e^-1 = 37%) sends 6 ± 6 c_2 hours, the
    Piecewise part anything within 6 ± 6 C hours; the SD is the Hybrid's flat one."""
    poll = app_env.polls.create_poll("sleep")
    hm = ldp_core.HybridMechanism(2.0)
    q = _numeric(app_env, poll, {**DUCHI, "design": "hybrid", "epsilon": 2.0})
    c = hm.duchi.c_epsilon
    for i, answer in enumerate([c, -c, 0.5, -0.25]):
        _report(app_env, poll, q, answer, i)
    app_env.running.set_revealed(q.id, True)
    at = dashboard()
    assert_clean(at)
    shown, page = metrics(at), texts(at)
    assert shown["Estimated mean"] == hours(6 + 6 * 0.25 / 4)
    assert shown["SD, worst case"] == hours(6 * math.sqrt(hm.worst_variance() / 4))
    big_c = hm.piecewise.big_c
    assert "chance e^(−ε/2) = 37%" in page
    assert f"sends {hours(6 - 6 * c)} or {hours(6 + 6 * c)}" in page
    assert f"anywhere from {hours(6 - 6 * big_c)} to {hours(6 + 6 * big_c)}" in page


def test_a_mean_outside_the_range_is_explained_and_clipped(app_env):
    poll = app_env.polls.create_poll("sleep")
    q = _numeric(app_env, poll)
    for i in range(3):
        _report(app_env, poll, q, 1, i)  # three reports of 18 hours: mean 18
    app_env.running.set_revealed(q.id, True)
    at = dashboard()
    assert_clean(at)
    assert metrics(at)["Estimated mean"] == "18.00 hours"
    assert "outside the range of answers [0, 12]" in texts(at)
    assert "Clipped to the range it is 12.00 hours" in texts(at)


def test_a_numeric_rehearsal_says_the_class_mean_it_is_about(app_env):
    poll = app_env.polls.create_poll("dry run", rehearsal=True)
    q = _numeric(app_env, poll, {**DUCHI, "design": "piecewise"})
    at = dashboard()
    at.slider(key=f"dash_sim_mean_{q.id}").set_value(7.0).run()
    at.number_input(key="dash_sim_n").set_value(50).run()
    at.button(key="dash_sim_add").click().run()
    for _ in range(6):
        at.run()
    assert app_env.results.estimate(q.id).n_simulated == 50
    app_env.running.set_revealed(q.id, True)
    at.run()
    assert_clean(at)
    assert "Simulated class: 50 students with true mean 7.00 hours" in texts(at)
    est = app_env.results.estimate(q.id).result.estimate
    assert abs(est.mean - 7.0) <= 4 * est.sd_worst


def test_the_budget_is_set_shown_and_refuses_a_round_that_would_pass_it(app_env):
    poll = app_env.polls.create_poll("budget")
    q1 = app_env.polls.add_question(poll.id, "Vanilla?", options=("Chocolate", "Vanilla"),
                                    design_params=dict(ldp_core.DieRR(4, 3).params()))
    q1 = app_env.running.open_question(q1.id)
    _report(app_env, poll, q1, 1, 0)  # answered: its ε counts even once it closes
    q2 = _numeric(app_env, poll, open_now=False)
    at = dashboard(query={"pid": str(poll.id), "qid": str(q2.id)})
    assert "has spent ε = 1.10 in this poll. No budget is set." in texts(at)
    at.checkbox(key=f"dash_budget_on_{poll.id}").check().run()
    at.number_input(key=f"dash_budget_value_{poll.id}").set_value(2.0).run()
    at.button(key="dash_budget_save").click().run()
    assert_clean(at)
    assert app_env.polls.poll(poll.id).epsilon_budget == 2.0
    assert "ε = 1.10 of 2.00 committed" in texts(at) and "0.90 left" in texts(at)
    (table,) = [t.value for t in at.table]
    assert table.to_dict("records") == [{"Question": "Q1: Vanilla?", "Round": "1", "ε": "1.10"}]
    at.button(key="dash_voting").click().run()  # open the numeric question: ln 3 more
    assert "would let a student spend ε = 2.20 in this poll, over its budget of ε = 2.00" \
        in texts(at)
    assert not app_env.polls.question(q2.id).is_open
    # A budget under what is already committed is refused, and the old one stays.
    at.number_input(key=f"dash_budget_value_{poll.id}").set_value(1.0).run()
    at.button(key="dash_budget_save").click().run()
    assert "already let a student spend ε = 1.10" in texts(at)
    assert app_env.polls.poll(poll.id).epsilon_budget == 2.0
    at.checkbox(key=f"dash_budget_on_{poll.id}").uncheck().run()
    at.button(key="dash_budget_save").click().run()
    assert app_env.polls.poll(poll.id).epsilon_budget is None
    at.button(key="dash_voting").click().run()
    assert app_env.polls.question(q2.id).is_open
    assert_clean(at)


def test_a_question_or_round_over_the_budget_adds_nothing_and_says_why(app_env):
    """Before, a question refused on opening stayed behind as a silent draft (the instructor
    added it twice), and "New round" made a round that could never open."""
    poll = app_env.polls.create_poll("budget")
    q1 = app_env.polls.add_question(poll.id, "Vanilla?", options=("Chocolate", "Vanilla"),
                                    design_params=dict(ldp_core.DieRR(4, 3).params()),
                                    open_now=True)
    _report(app_env, poll, q1, 1, 0)
    app_env.polls.set_budget(poll.id, 2.0)
    at = dashboard(query={"pid": str(poll.id), "qid": str(q1.id)})
    for open_now in (True, False):
        at.checkbox(key="dash_q_open").set_value(open_now).run()
        at.button(key="dash_add_question").click().run()
        assert_clean(at)
        (error,) = [e.value for e in at.error]
        assert error.startswith("“Vanilla (1) or chocolate (0)?” was not added: it would let "
                                "a student spend ε = 2.20 in this poll, over its budget of "
                                "ε = 2.00"), error
        assert "Give it a smaller ε, or raise the budget" in error
        assert [q.id for q in app_env.polls.questions(poll.id)] == [q1.id]
        assert not at.success
    at.button(key="dash_add_exercise").click().run()
    assert "was not added" in at.error[0].value
    at.button(key="dash_new_round").click().run()
    assert_clean(at)
    (error,) = [e.value for e in at.error]
    assert error.startswith("Round 2 of “Vanilla?” was not started: it would let a student "
                            "spend ε = 2.20"), error
    q1 = app_env.polls.question(q1.id)
    assert (q1.round_number, q1.state) == (1, "open")
    assert [q.id for q in app_env.polls.questions(poll.id)] == [q1.id]


def test_the_projector_shows_a_numeric_question_without_formulas(app_env):
    poll = app_env.polls.create_poll("sleep")
    q = _numeric(app_env, poll)
    for i in range(10):
        _report(app_env, poll, q, i % 2, i)
    app_env.running.set_revealed(q.id, True)
    at = dashboard(query={"projector": "1", "pid": str(poll.id), "qid": str(q.id)})
    assert_clean(at)
    assert metrics(at)["Estimated mean"] == "6.00 hours"
    assert "central curator" not in texts(at)
    # The design names its ε already ("Duchi et al. on [0, 12], ε = 1.10"): the status
    # line says it once.
    status = [m.value for m in at.markdown if "round 1" in m.value]
    assert len(status) == 1 and status[0].count("ε = 1.10") == 1, status


def test_every_number_of_a_numeric_question_has_the_same_decimals(app_env):
    """One rule for the whole question (ui.fmt.value_decimals): on [0, 12], two decimals
    for the mean, the SDs, the CI and the values the phones sent, side by side."""
    import re

    poll = app_env.polls.create_poll("sleep")
    q = _numeric(app_env, poll, {**DUCHI, "design": "hybrid"})
    for i, answer in enumerate([1.0, -1.0, 0.3, -0.2, 0.7]):
        _report(app_env, poll, q, answer, i)
    app_env.running.set_revealed(q.id, True)
    at = dashboard()
    assert_clean(at)
    shown = " ".join(metrics(at).values()) + " " + texts(at)
    # The range's own bounds ("from 0 to 12 hours", as the instructor typed them) aside.
    values = [v for v in re.findall(r"(−?[\d,]+(?:\.\d+)?) hours", shown)
              if v not in ("0", "12")]
    assert len(values) >= 8, values
    assert {len(v.partition(".")[2]) for v in values} == {2}, values


def test_a_stuffed_numeric_round_is_flagged_as_not_fitting_the_design(app_env):
    """Ten honest reports, then one device's 90 largest reports (as a forged client could
    send, one per cookie): 95 of 100 "+c" is beyond even a class that all sleep 12 hours,
    which sends "+c" three times in four at ε = ln 3."""
    poll = app_env.polls.create_poll("sleep")
    q = _numeric(app_env, poll)
    for i in range(100):
        _report(app_env, poll, q, 1 if i >= 10 or i % 2 else 0, i)
    app_env.running.set_revealed(q.id, True)
    at = dashboard()
    assert_clean(at)
    page = texts(at)
    assert "These reports do not fit the design" in page
    assert "a mean above the largest possible answer" in page


def test_the_numeric_ci_is_the_mean_plus_or_minus_t_times_the_sd_shown(app_env):
    """The CI is built from the SD beside it: mean ± t(n - 1) SD (worst case)."""
    poll = app_env.polls.create_poll("sleep")
    q = _numeric(app_env, poll, {**DUCHI, "design": "piecewise", "epsilon": 2.0})
    for i, y in enumerate(np.linspace(-1.5, 1.5, 12)):
        _report(app_env, poll, q, float(y), i)
    app_env.running.set_revealed(q.id, True)
    at = dashboard()
    assert_clean(at)
    shown = metrics(at)
    est = app_env.results.estimate(q.id).result.estimate
    sd = q.design.worst_sd(12)
    assert shown["SD, worst case"] == hours(sd)
    half = ldp_core.t_quantile(0.95, 11) * sd
    low, high = est.mean - half, est.mean + half  # rounded outward (classroom.display)
    assert shown["95% CI"] == (f"{math.floor(100 * low) / 100:.2f} to "
                               f"{hours(math.ceil(100 * high) / 100)}")
    assert any(e.label == "What the stuffing check can and cannot see" for e in at.expander)
    assert "stealthy stuffing" in texts(at)


def test_one_forged_laplace_report_is_flagged_at_once(app_env):
    """Ten honest reports, then one at the phone's clamp (252 h on [0, 12] at ε = 1)."""
    poll = app_env.polls.create_poll("sleep")
    laplace = {"design": "laplace", "epsilon": 1.0, "lo": 0, "hi": 12}
    q = _numeric(app_env, poll, laplace)
    for i, y in enumerate(np.linspace(-2.0, 2.0, 10)):
        _report(app_env, poll, q, float(y), i)
    _report(app_env, poll, q, q.design.mechanism.device_grid()[1], 10)
    app_env.running.set_revealed(q.id, True)
    at = dashboard()
    assert_clean(at)
    page = texts(at)
    assert "These reports do not fit the design" in page
    assert "a report so far above the range that no honest phone sends one like it" in page
    assert "a forged report" in page


def test_stuffers_on_a_hybrid_question_send_the_largest_report_and_raise_the_warning(app_env):
    """The rehearsal's stuffers on a numeric question: the caption names the largest report
    the server accepts (6 + 6 C hours for the Hybrid Mechanism at ε = 2); 60 honest
    simulated students, then 300 stuffers, and the dashboard warns."""
    poll = app_env.polls.create_poll("dry run", rehearsal=True)
    q = _numeric(app_env, poll, {**DUCHI, "design": "hybrid", "epsilon": 2.0})
    app_env.results.add_simulated_reports(q.id, 60, 6.0, seed=2)
    app_env.running.set_revealed(q.id, True)
    at = dashboard()
    top = 6 + 6 * ldp_core.HybridMechanism(2.0).piecewise.big_c
    assert f"the largest report the server accepts, {top:.4g} hours" in texts(at)
    at.number_input(key="dash_stuff_n").set_value(300).run()
    at.button(key="dash_stuff_add").click().run()
    at.run()
    assert_clean(at)
    assert app_env.results.estimate(q.id).n_simulated == 360
    assert "These reports do not fit the design" in texts(at)
