"""The instructor dashboard under AppTest, on a seeded temporary classroom database.

Known reports must produce the exact numbers of the course: V = 30 of n = 40
under the die design gives μ̂ = 2·30/40 − ½ = 1.000 and SD = √(3/160) = 0.137;
under Warner's spinner with p = 0.7 they give μ̂ = (0.75 − 0.3)/0.4 = 1.125 and
SD = √(21/640) = 0.181. Every control is driven through its widget and checked
against the database.
"""

from __future__ import annotations

import math

import pytest
from streamlit.testing.v1 import AppTest

import ldp_core
from classroom.domain import CLASS_EXERCISE
from tests.support.apptest import app_env, log_in
from ui.fmt import fmt_interval

DIE = dict(CLASS_EXERCISE)
TWO_COIN = {"design": "two_coin"}
WARNER = {"design": "warner", "p": 0.7}

SCRIPT = """
from views import dashboard
dashboard.render()
"""


def dashboard(*, instructor: bool = True, query: dict | None = None,
              timeout: float = 60) -> AppTest:
    """A browser session on the dashboard page (the instructor flag set as after login)."""
    at = AppTest.from_string(SCRIPT, default_timeout=timeout)
    if instructor:
        log_in(at)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at.run()


def seed(svc, design: dict, yes: int, n: int, *, revealed: bool = True,
         text: str = "Vanilla (1) or chocolate (0)?", title: str = "CS208"):
    """A poll with one open binary question and exactly ``yes`` of ``n`` reports of 1."""
    poll = svc.polls.create_poll(title)
    q = svc.polls.add_question(poll.id, text, options=("Chocolate", "Vanilla"),
                               design_params=design)
    svc.running.open_question(q.id)
    for i in range(n):
        svc.reports.submit_report(poll.join_code, q.id, answer=1 if i < yes else 0,
                                  design_params=design, submission_id=f"seed-{q.id}-{i:06d}",
                                  device_id=f"device-{q.id}-{i}")
    if revealed:
        svc.running.set_revealed(q.id, True)
    return poll, svc.polls.question(q.id)


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def live_metrics(at: AppTest) -> dict[str, str]:
    """The live panel's metrics (without the what-if panel's)."""
    return {k: v for k, v in metrics(at).items()
            if not k.startswith(("SD now", "SD with"))}


def texts(at: AppTest) -> str:
    parts = []
    for kind in ("markdown", "caption", "info", "warning", "error", "success", "title",
                 "subheader", "code"):
        parts += [str(e.value) for e in at.get(kind)]
    parts += [f"{m.label} {m.value}" for m in at.metric]
    return "\n".join(parts)


def assert_clean(at: AppTest) -> None:
    """No exception box and no NaN anywhere on the page."""
    assert not at.exception, [e.value for e in at.exception]
    text = texts(at)
    assert "nan" not in text.replace("Nan", "").lower().split(), text
    assert "NaN" not in text and " nan" not in text and "inf " not in text


def f3(x: float) -> str:
    return f"{x:.3f}".replace("-", "−")


# -- the exact numbers ------------------------------------------------------------------------


def test_die_v30_n40_shows_mu_1_and_sd_sqrt_3_over_160(app_env):
    seed(app_env, DIE, 30, 40)
    at = dashboard()
    assert_clean(at)
    m = metrics(at)
    assert m["Reports received"] == "40"
    assert m["Reported “Vanilla”"] == "30 of 40"
    assert m["Estimate μ̂"] == "1.000"
    assert m["SD, fixed class"] == f3(math.sqrt(3 / 160)) == "0.137"
    sd = math.sqrt(3 / 160)
    # The headline CI is the exact one (Clopper-Pearson on V/n = 30/40, mapped through the
    # die: lambda >= 0.5881 gives mu >= 0.676; the top clips at 1)...
    low, high = ldp_core.exact_interval(0.75, 0.25, 40, 30)
    assert (f3(low), f3(high)) == ("0.676", "1.000")
    assert m["95% CI"] == "[0.676, 1.000]"
    # ...and the normal interval is kept beside it, labelled as the large-n approximation.
    # Every interval on screen is rounded outward (classroom.display): [0.7316, 1.2684].
    normal = f"[{math.floor(1000 * (1 - 1.959964 * sd)) / 1000:.3f}, " \
             f"{math.ceil(1000 * (1 + 1.959964 * sd)) / 1000:.3f}]"
    assert normal == "[0.731, 1.269]"
    assert f"large-n approximation $\\hat\\mu \\pm 1.96\\,\\mathrm{{SD}}$ = {normal}" in texts(at)
    assert m["Privacy loss ε"] == "1.10"
    # The plug-in SD: sqrt(ybar (1 - ybar) / ((n - 1)(a - b)^2)) with ybar = 3/4.
    assert m["SD, population (plug-in)"] == f3(math.sqrt(0.75 * 0.25 / (39 * 0.25)))
    # Each formula beside its number, with the numbers put in.
    text = texts(at)
    assert r"\hat\mu = 2\,\frac{V}{n} - \tfrac{1}{2} = 2\cdot\frac{30}{40} - \tfrac{1}{2} = 1.000" \
        in text
    assert r"\sqrt{\frac{3}{4n}} = \sqrt{\frac{3}{160}} = 0.137" in text
    assert r"\varepsilon = \ln 3 \approx 1.10" in text
    assert "V/n = 30/40 = 0.750" in text


def test_the_central_models_sd_is_shown_beside_the_estimate(app_env):
    """sqrt(2)/(eps n) at eps = ln 3, n = 40: 0.0322, about 4x below the local 0.137. At the
    desk only: the projector must fit one screen."""
    poll, q = seed(app_env, DIE, 30, 40)
    at = dashboard()
    assert_clean(at)
    central = math.sqrt(2) / (math.log(3) * 40)
    assert f3(central * 10) == "0.322"  # the hand value, to four decimals below
    want = (f"A central curator with the same ε = 1.10, who saw the true answers and added "
            f"Laplace noise to the count, would have had SD {central:.4f} (√2/(εn)), "
            f"{math.sqrt(3 / 160) / central:,.0f}× smaller than the local SD")
    assert want in texts(at)
    assert ldp_core.central_mean_sd(40, math.log(3)) == pytest.approx(central, rel=1e-12)
    projector = dashboard(query={"projector": "1", "pid": str(poll.id), "qid": str(q.id)})
    assert "A central curator" not in texts(projector)


@pytest.mark.parametrize("design, yes, mu, sd, eps, mu_tex, sd_tex", [
    (TWO_COIN, 30, 1.0, math.sqrt(3 / 160), "1.10",
     r"2\cdot\frac{30}{40} - \tfrac{1}{2} = 1.000", r"\sqrt{\frac{3}{160}}"),
    (WARNER, 30, 1.125, math.sqrt(21 / 640), "0.85",
     r"\tfrac{5}{2}\cdot\frac{30}{40} - \tfrac{3}{4} = 1.125", r"\sqrt{\frac{21}{640}}"),
    (WARNER, 10, -0.125, math.sqrt(21 / 640), "0.85",
     r"\tfrac{5}{2}\cdot\frac{10}{40} - \tfrac{3}{4} = -0.125", r"\sqrt{\frac{21}{640}}"),
], ids=["two-coins", "warner-0.7", "warner-0.7-below-0"])
def test_second_design_exact_numbers(app_env, design, yes, mu, sd, eps, mu_tex, sd_tex):
    _, q = seed(app_env, design, yes, 40)
    expected = ldp_core.BinaryCounts.single(q.design, yes=yes, n=40)
    assert expected.unbiased() == pytest.approx(mu)
    at = dashboard()
    assert_clean(at)
    m = metrics(at)
    assert m["Estimate μ̂"] == f3(mu)
    assert m["SD, fixed class"] == f3(sd) == f3(expected.sd_worst())
    assert m["Privacy loss ε"] == eps
    text = texts(at)
    assert mu_tex in text and sd_tex in text
    outside = [w.value for w in at.warning if "A share cannot be" in w.value]
    if 0 <= mu <= 1:
        assert not outside
    else:  # shown honestly, explained, with the MLE (clipped to [0, 1]) beside it
        side, mle = ("above 1", "1.000") if mu > 1 else ("below 0", "0.000")
        assert len(outside) == 1 and side in outside[0]
        assert outside[0].endswith(f"which stays in [0, 1], is {mle}.")


def test_estimate_matches_the_service(app_env):
    _, q = seed(app_env, DIE, 23, 37)
    est = app_env.results.estimate(q.id).result.estimate
    m = metrics(dashboard())
    assert m["Estimate μ̂"] == f3(est.mu_hat)
    assert m["SD, fixed class"] == f3(est.sd_worst)


# -- empty, tiny and hidden -----------------------------------------------------------------


def test_n0_says_no_reports_yet(app_env):
    seed(app_env, DIE, 0, 0)
    at = dashboard()
    assert_clean(at)
    assert metrics(at)["Reports received"] == "0"
    assert any("No reports yet" in i.value for i in at.info)
    assert "Estimate μ̂" not in metrics(at)


def test_n1_says_so_and_has_no_plugin_sd(app_env):
    seed(app_env, DIE, 1, 1)
    at = dashboard()
    assert_clean(at)
    m = metrics(at)
    assert m["Estimate μ̂"] == "1.500"  # 2·1/1 − ½: honest, outside [0, 1]
    assert m["SD, fixed class"] == f3(math.sqrt(3 / 4))
    assert "SD, population (plug-in)" not in m
    text = texts(at)
    assert "Only one report so far" in text
    assert "SD, population (plug-in): needs at least 2 reports." in text
    assert "above 1" in text


def test_hidden_results_show_only_the_count(app_env):
    seed(app_env, DIE, 30, 40, revealed=False)
    at = dashboard()
    assert_clean(at)
    assert live_metrics(at) == {"Reports received": "40"}
    assert any("Results are hidden" in i.value for i in at.info)
    assert not at.get("vega_lite_chart") or all(
        "reports received" not in str(c.proto.spec) for c in at.get("vega_lite_chart"))
    assert "30 of 40" not in texts(at)


def test_projector_hidden_shows_only_count_and_join_panel(app_env):
    poll, q = seed(app_env, DIE, 30, 40, revealed=False)
    at = dashboard(query={"projector": "1"})
    assert_clean(at)
    assert metrics(at) == {"Reports received": "40"}
    assert not at.get("vega_lite_chart")
    assert not at.table
    assert poll.join_code in texts(at)


# -- creating -------------------------------------------------------------------------------


def test_empty_dashboard_starts_the_class_exercise_in_one_click(app_env):
    at = dashboard()
    assert_clean(at)
    at.button(key="dash_start_exercise").click().run()
    assert_clean(at)
    polls = app_env.polls.list_polls()
    assert len(polls) == 1
    (q,) = app_env.polls.questions(polls[0].id)
    assert q.text == "Vanilla (1) or chocolate (0)?"
    assert q.options == ("Chocolate", "Vanilla")
    assert q.design_params == DIE and q.mode == "device" and q.kind == "binary"
    assert q.is_open and not q.revealed
    text = texts(at)
    assert polls[0].join_code in text
    assert f"/join/{polls[0].join_code}" in text
    assert at.get("image"), "the QR code image is missing"
    assert live_metrics(at) == {"Reports received": "0"}


def test_create_poll_then_add_warner_question(app_env):
    at = dashboard()
    at.text_input(key="dash_new_poll_title").input("Week 10")
    at.button(key="dash_create_poll").click().run()
    assert_clean(at)
    (poll,) = app_env.polls.list_polls()
    assert poll.title == "Week 10"
    at.radio(key="dash_q_preset").set_value("warner").run()
    at.slider(key="dash_q_warner_p").set_value(0.8).run()
    at.text_input(key="dash_q_text").input("Statement A: I prefer vanilla").run()
    at.radio(key="dash_q_mode").set_value("physical").run()
    at.button(key="dash_add_question").click().run()
    assert_clean(at)
    (q,) = app_env.polls.questions(poll.id)
    assert q.design_params == {"design": "warner", "p": 0.8}
    assert q.mode == "physical" and q.state == "draft"
    assert q.text == "Statement A: I prefer vanilla"


def test_custom_design_by_gamma_or_by_epsilon(app_env):
    poll = app_env.polls.create_poll("custom")
    at = dashboard()
    at.radio(key="dash_q_preset").set_value("custom").run()
    # Starts at the exercise's privacy, set by gamma = 1/4 (eps = ln 3 beside it).
    assert at.radio(key="dash_q_by").value == "gamma"
    assert at.slider(key="dash_q_gamma").value == pytest.approx(0.25)
    assert r"\approx 1.0987$ (rounded up)" in texts(at)  # ln 3 = 1.09861…: a bound, so up
    at.radio(key="dash_q_by").set_value("epsilon").run()
    assert at.slider(key="dash_q_eps").value == pytest.approx(1.10)
    at.slider(key="dash_q_eps").set_value(2.0).run()
    at.checkbox(key="dash_q_open").check().run()
    at.button(key="dash_add_question").click().run()
    assert_clean(at)
    (q,) = app_env.polls.questions(poll.id)
    assert q.design_params == {"design": "epsilon", "epsilon": 2.0}  # the slider on screen
    assert q.is_open
    # Set by gamma, the design is defined by gamma.
    at.radio(key="dash_q_by").set_value("gamma").run()
    assert at.slider(key="dash_q_gamma").value == pytest.approx(round(math.tanh(1.0) / 2, 3))
    at.slider(key="dash_q_gamma").set_value(0.2).run()
    at.button(key="dash_add_question").click().run()
    q2 = app_env.polls.questions(poll.id)[-1]
    assert q2.design_params == {"design": "gamma", "gamma": 0.2}


def test_categorical_question_with_recommended_oracle(app_env):
    poll = app_env.polls.create_poll("flavours")
    at = dashboard()
    at.radio(key="dash_q_preset").set_value("categorical").run()
    # k = 4 < 3e + 2: ldp_core recommends GRR, and the radio starts there.
    assert at.radio(key="dash_q_cat_oracle").value == "grr"
    assert "recommends GRR" in texts(at)
    # The design's line names ε once ("ε = 1.00; ε = 1.000." said it twice).
    assert "Design: GRR over 4 options, ε = 1.00." in texts(at)
    assert "ε = 1.000" not in texts(at)
    at.radio(key="dash_q_cat_oracle").set_value("oue").run()
    assert "Design: unary encoding over 4 options, p = 0.500, q = 0.269, ε = 1.00." \
        in texts(at)
    at.radio(key="dash_q_cat_oracle").set_value("grr").run()
    at.button(key="dash_add_question").click().run()
    assert_clean(at)
    (q,) = app_env.polls.questions(poll.id)
    assert q.kind == "categorical"
    assert q.options == ("Vanilla", "Chocolate", "Strawberry", "Pistachio")
    assert q.design_params == {"design": "grr", "d": 4, "epsilon": 1.0}
    at.radio(key="dash_q_cat_oracle").set_value("oue").run()
    at.button(key="dash_add_question").click().run()
    q2 = app_env.polls.questions(poll.id)[-1]
    assert q2.design_params == ldp_core.UnaryEncoding.optimized(4, 1.0).params()


def test_the_categorical_form_says_whether_the_class_is_big_enough(app_env):
    """GRR, 4 options, ε = 1, n = 30: s_min = 0.71 (the check value); OUE, when chosen,
    needs s_min = 1.08 there, so the class finds nothing with it, and the recommended GRR
    is shown beside it; a bigger class finds smaller shares."""
    app_env.polls.create_poll("flavours")
    at = dashboard()
    at.radio(key="dash_q_preset").set_value("categorical").run()
    assert at.number_input(key="dash_q_cat_n").value == 30
    page = texts(at)
    assert "With n = 30 and GRR at ε = 1.00, the class reliably finds an option only if " \
           "**at least 71%** of the class hold it." in page
    grr = ldp_core.GRR(4, 1.0)
    assert f"GRR needs about {ldp_core.needed_class_size(grr, 0.2):,} students" in page
    assert "The chance that this class finds an option nobody holds is 8.0%, computed " \
           "exactly" in page
    at.radio(key="dash_q_cat_oracle").set_value("oue").run()
    assert ldp_core.smallest_detectable_share(ldp_core.oracle("oue", 4, 1.0), 30) > 1
    assert "With n = 30 and OUE at ε = 1.00, the class reliably finds no option, not even " \
           "one everybody holds." in texts(at)
    assert "GRR, recommended, finds an option only if **at least 71%**" in texts(at)
    at.number_input(key="dash_q_cat_n").set_value(300).run()
    s300 = ldp_core.smallest_detectable_share(ldp_core.oracle("oue", 4, 1.0), 300)
    assert f"OUE at ε = 1.00, the class reliably finds an option only if **at least " \
           f"{s300:.0%}**" in texts(at) and s300 < 1.08 / 3
    assert_clean(at)


def test_a_rehearsal_of_a_categorical_question_names_its_simulated_class(app_env):
    poll = app_env.polls.create_poll("dry run")
    params = {"design": "grr", "d": 3, "epsilon": 1.0}
    q = app_env.polls.add_question(poll.id, "Favourite?", options=("A", "B", "C"),
                                   design_params=params, kind="categorical")
    app_env.running.open_question(q.id)
    at = dashboard()
    at.number_input(key="dash_sim_n").set_value(30).run()
    at.button(key="dash_sim_add").click().run()
    for _ in range(4):  # the class arrives over refreshes of the live panel
        at.run()
    assert app_env.results.estimate(q.id).n_simulated == 30
    app_env.running.set_revealed(q.id, True)
    at.run()
    assert_clean(at)
    notes = [c.value for c in at.caption
             if c.value.startswith("Simulated class (true answers): ")]
    assert len(notes) == 1, texts(at)
    counts = [int(part.rsplit(" ", 1)[1]) for part in
              notes[0].removeprefix("Simulated class (true answers): ").rstrip(".").split(", ")]
    assert sum(counts) == 30 and len(counts) == 3


def test_categorical_panel_raw_and_post_processed(app_env):
    poll = app_env.polls.create_poll("flavours")
    params = {"design": "grr", "d": 4, "epsilon": 1.0}
    q = app_env.polls.add_question(poll.id, "Favourite?", options=("A", "B", "C", "D"),
                                   design_params=params, kind="categorical")
    app_env.running.open_question(q.id)
    answers = [0] * 9 + [1] * 3 + [2] * 2 + [3] * 1
    for i, a in enumerate(answers):
        app_env.reports.submit_report(poll.join_code, q.id, answer=a, design_params=params,
                                      submission_id=f"cat-{i:06d}", device_id=f"cat-device-{i}")
    app_env.running.set_revealed(q.id, True)
    at = dashboard()
    assert_clean(at)
    est = app_env.results.estimate(q.id).result
    assert metrics(at)["Reports received"] == "15"
    table = at.table[0].value
    names = ldp_core.POSTPROCESSING
    for col in (names["raw"], names["clip"], names["norm_sub"]):
        assert col in table.columns
    assert list(table[names["raw"]]) == [f3(x / 15) for x in est.raw]
    assert list(table[names["norm_sub"]]) == [f3(x / 15) for x in est.norm_sub]
    # each option's exact CI (ldp_core's), not raw ± 1.96 SD
    counts = ldp_core.CategoricalCounts(((ldp_core.GRR(4, 1.0), 15, est.support_counts),))
    lows, highs = counts.exact_intervals()
    assert est.ci_low == tuple(lows) and est.ci_high == tuple(highs)
    assert list(table["Exact 95% CI"]) == [fmt_interval(lo, hi, 3)
                                           for lo, hi in zip(lows, highs, strict=True)]
    assert lows[0] > 0 and all(0 <= lo <= hi <= 1 for lo, hi in zip(lows, highs, strict=True))
    assert "each option's exact 95% CI" in texts(at)
    assert min(est.raw) < 0  # this seed has a negative raw count: explained on the page
    assert "Some raw estimates are negative" in texts(at)


# -- controls -------------------------------------------------------------------------------


def test_close_open_and_reveal(app_env):
    _, q = seed(app_env, DIE, 3, 4, revealed=False)
    at = dashboard()
    assert at.button(key="dash_voting").label == "Close voting"
    at.button(key="dash_voting").click().run()
    assert app_env.polls.question(q.id).state == "closed"
    assert at.button(key="dash_voting").label == "Reopen voting"
    assert "Voting closed" in texts(at)
    at.button(key="dash_voting").click().run()
    assert app_env.polls.question(q.id).is_open
    assert at.button(key="dash_reveal").label == "Reveal results"
    at.button(key="dash_reveal").click().run()
    assert app_env.polls.question(q.id).revealed
    assert "Estimate μ̂" in metrics(at)
    at.button(key="dash_reveal").click().run()
    assert not app_env.polls.question(q.id).revealed
    assert_clean(at)


def test_new_round_keeps_history(app_env):
    _, q = seed(app_env, DIE, 30, 40)
    at = dashboard()
    at.button(key="dash_new_round").click().run()
    assert_clean(at)
    rounds = app_env.running.rounds(q.id)
    assert [r.number for r in rounds] == [1, 2]
    q = app_env.polls.question(q.id)
    assert q.state == "draft" and not q.revealed and q.round_number == 2
    at.button(key="dash_reveal").click().run()
    history = at.table[0].value
    assert list(history["Round"]) == ["1", "2"]
    assert list(history["μ̂"]) == ["1.000", "—"]
    assert list(history["n"]) == ["40", "0"]
    assert any("No reports yet" in i.value for i in at.info)
    assert_clean(at)


def test_several_questions_and_switching(app_env):
    poll, q1 = seed(app_env, DIE, 30, 40, text="First?")
    q2 = app_env.polls.add_question(poll.id, "Second?", options=("No", "Yes"), design_params=WARNER)
    at = dashboard()
    # The open question is shown by default.
    assert at.selectbox(key="dash_question_select").value == q1.id
    at.selectbox(key="dash_question_select").set_value(q2.id).run()
    assert_clean(at)
    # A question of the window's own choosing is named in the URL (a reload keeps it).
    assert at.query_params["qid"] == str(q2.id)
    assert at.button(key="dash_voting").label == "Open voting"
    at.button(key="dash_voting").click().run()
    assert app_env.polls.question(q2.id).is_open
    assert app_env.polls.question(q1.id).state == "closed"  # one open question per poll
    # The lecture is on Q2 now: the window follows it, and its URL names no question.
    assert at.selectbox(key="dash_question_select").value == q2.id
    assert "qid" not in at.query_params


def test_switch_polls_and_delete_with_confirmation(app_env):
    old, _ = seed(app_env, DIE, 3, 4, title="old")
    new, _ = seed(app_env, DIE, 1, 2, title="new")
    at = dashboard()
    assert at.selectbox(key="dash_poll_select").value == new.id  # newest first
    at.selectbox(key="dash_poll_select").set_value(old.id).run()
    assert old.join_code in texts(at)
    at.button(key="dash_delete_poll").click().run()
    assert {p.id for p in app_env.polls.list_polls()} == {old.id, new.id}  # not without the tick
    assert any("Tick the box" in w.value for w in at.warning)
    at.checkbox(key=f"dash_confirm_delete_{old.id}").check().run()
    at.button(key="dash_delete_poll").click().run()
    assert_clean(at)
    assert [p.id for p in app_env.polls.list_polls()] == [new.id]
    assert at.selectbox(key="dash_poll_select").value == new.id


def test_export_csv_button_builds_the_csv_only_when_clicked(app_env, monkeypatch):
    """Before, every full rerun of the dashboard built the CSV (at 100,000 reports 9 MB and
    1.9 s), whether or not anyone downloaded it. Now the button holds a callable that
    Streamlit runs on the click."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    poll, q = seed(app_env, DIE, 30, 40)
    built, registered = [], {}
    export = app_env.results.export_csv
    monkeypatch.setattr(app_env.results, "export_csv",
                        lambda *a, **kw: built.append((a, kw)) or export(*a, **kw))
    add_deferred = MediaFileManager.add_deferred

    def remember(self, callable_, *args, **kwargs):
        file_id = add_deferred(self, callable_, *args, **kwargs)
        registered[file_id] = callable_
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", remember)
    at = dashboard()
    for _ in range(3):
        at.run()
    buttons = [b for b in at.get("download_button") if b.proto.label == "Export CSV"]
    assert len(buttons) == 1
    assert built == []  # four full runs, no CSV built
    # The click: Streamlit runs the callable registered for the button.
    csv = registered[buttons[0].proto.deferred_file_id]()
    assert built == [((q.id,), {"include_simulated": False})]
    assert csv == export(q.id)
    assert csv.count("\n") == 41 and "device" not in csv


def test_rehearsal_class_arrives_over_refreshes_and_clears(app_env):
    poll = app_env.polls.create_poll("dry run")
    q = app_env.polls.add_question(poll.id, "Vanilla?", options=("Chocolate", "Vanilla"),
                                   design_params=DIE)
    app_env.running.open_question(q.id)
    real = app_env.reports.submit_report(poll.join_code, q.id, answer=1, design_params=DIE,
                                         submission_id="real-student-0001", device_id="phone")
    at = dashboard()
    at.number_input(key="dash_sim_n").set_value(50).run()
    at.button(key="dash_sim_add").click().run()
    assert_clean(at)
    arrived = [app_env.results.estimate(q.id).n_simulated]
    for _ in range(6):  # each run is one refresh of the live panel
        at.run()
        arrived.append(app_env.results.estimate(q.id).n_simulated)
    assert arrived[0] == 10 and arrived[-1] == 50  # five batches of ten, then no more
    assert arrived == sorted(arrived)
    app_env.running.set_revealed(q.id, True)
    at.run()
    # 60% of 50 is exactly 30 simulated Vanilla fans, and the page says so under μ̂.
    assert "Simulated class: 30 of 50 truly “Vanilla” (60%)" in texts(at)
    assert len(app_env.results.export_csv(q.id).splitlines()) == 2  # header + the real report only
    assert len(app_env.results.export_csv(q.id, include_simulated=True).splitlines()) == 52
    at.button(key="dash_sim_clear").click().run()
    est = app_env.results.estimate(q.id)
    assert est.n == 1 and est.n_simulated == 0  # the real report stays
    assert app_env.reports.receipt_for(q.id, "phone").answer == real.answer


def test_stuffers_in_rehearsal_move_the_estimate_and_raise_the_warning(app_env):
    """40 honest simulated students (60% Vanilla), then 10 stuffers: the estimated count
    grows by exactly 1.5 per stuffer, inside the blind zone no warning; 200 more and the
    dashboard's stuffing warning appears. Clear rehearsal removes them all."""
    poll = app_env.polls.create_poll("dry run", rehearsal=True)
    q = app_env.polls.add_question(poll.id, "Vanilla?", options=("Chocolate", "Vanilla"),
                                   design_params=DIE)
    app_env.running.open_question(q.id)
    app_env.results.add_simulated_reports(q.id, 40, 0.6, seed=5)
    app_env.running.set_revealed(q.id, True)
    before = app_env.results.estimate(q.id).result.estimate.mu_hat
    at = dashboard()
    assert at.selectbox(key=f"dash_stuff_target_{q.id}").value == 1  # "Vanilla"
    assert "by (1 − b)/(a − b) = 1.5, where an honest student" in texts(at)
    at.number_input(key="dash_stuff_n").set_value(10).run()
    at.button(key="dash_stuff_add").click().run()
    assert_clean(at)
    est = app_env.results.estimate(q.id)
    assert est.n_simulated == 50 and est.counts[1] >= 10
    assert 50 * est.result.estimate.mu_hat == pytest.approx(40 * before + 10 * 1.5)
    assert "10 stuffed reports added" in texts(at)
    assert "These reports do not fit the design" not in texts(at)
    at.number_input(key="dash_stuff_n").set_value(200).run()
    at.button(key="dash_stuff_add").click().run()
    at.run()  # the live panel's next refresh
    assert "These reports do not fit the design" in texts(at)
    assert "more “Vanilla” than even a class where everyone truly prefers" in texts(at)
    at.button(key="dash_sim_clear").click().run()
    assert app_env.results.estimate(q.id).n == 0


def test_stuffers_on_a_categorical_question_target_the_chosen_option(app_env):
    poll = app_env.polls.create_poll("dry run", rehearsal=True)
    q = app_env.polls.add_question(poll.id, "Flavour?", options=("Vanilla", "Chocolate", "Mango"),
                                   kind="categorical",
                                   design_params={"design": "grr", "d": 3, "epsilon": 1.0})
    app_env.running.open_question(q.id)
    at = dashboard()
    at.selectbox(key=f"dash_stuff_target_{q.id}").set_value(2).run()
    gain = ldp_core.fake_report_gain(ldp_core.GRR(3, 1.0), 2)
    assert f"of “Mango” by (1 − b)/(a − b) = {gain:.3g}" in texts(at)
    at.number_input(key="dash_stuff_n").set_value(300).run()
    at.button(key="dash_stuff_add").click().run()
    at.run()
    assert_clean(at)
    assert app_env.results.estimate(q.id).counts == (0, 0, 300)
    assert "one option named more often than even a class where everyone" in texts(at)


# -- projection mode, join link, errors -------------------------------------------------------


def test_projection_mode_toggle(app_env):
    poll, q = seed(app_env, DIE, 30, 40)
    at = dashboard()
    at.button(key="dash_projector_on").click().run()
    assert at.query_params["projector"] == "1"
    assert_clean(at)
    assert not at.selectbox  # no poll/question pickers on the projector
    assert poll.join_code in texts(at)
    assert metrics(at)["Estimate μ̂"] == "1.000"
    assert at.button(key="dash_p_voting").label == "Close voting"
    at.button(key="dash_projector_off").click().run()
    assert "projector" not in at.query_params
    assert at.selectbox(key="dash_poll_select").value == poll.id


def test_projector_url_keeps_the_chosen_question(app_env):
    poll, q1 = seed(app_env, DIE, 30, 40, text="First?")
    q2 = app_env.polls.add_question(poll.id, "Second?", options=("No", "Yes"), design_params=WARNER)
    at = dashboard(query={"projector": "1", "pid": str(poll.id), "qid": str(q2.id)})
    assert_clean(at)
    assert "Second?" in texts(at)


def test_join_link_uses_the_configured_public_url(app_env, monkeypatch):
    import web

    monkeypatch.setenv("LDP_CLASSROOM_PUBLIC_URL", "https://class.example.org/")
    web.PROCESS.reset()  # settings are read once, when the process starts
    poll, _ = seed(web.root().service, DIE, 0, 0)
    at = dashboard()
    codes = [c.value for c in at.code]
    assert f"https://class.example.org/join/{poll.join_code}" in codes


def test_bad_public_url_is_a_message_not_a_crash(tmp_path, monkeypatch):
    """Settings are read once, at start: a malformed public URL stops the app there (the
    lifespan); a page that meets it says which setting, never a traceback."""
    import web

    monkeypatch.setenv("LDP_CLASSROOM_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("LDP_CLASSROOM_PUBLIC_URL", "class.example.org")
    web.PROCESS.reset()
    try:
        teach = AppTest.from_string("from views import teach\nteach.render()",
                                    default_timeout=60).run()
        assert not teach.exception
        assert any("LDP_CLASSROOM_PUBLIC_URL must start with http" in e.value
                   for e in teach.error)
    finally:
        web.PROCESS.reset()


def test_unusable_database_is_a_message_not_a_traceback(tmp_path, monkeypatch):
    import web

    monkeypatch.setenv("LDP_CLASSROOM_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("LDP_CLASSROOM_DATABASE_URL", "sqlite://")
    web.PROCESS.reset()
    try:
        at = dashboard(instructor=False)  # no session can be started or checked
        assert not at.exception
        assert "for the instructor" in at.info[0].value
        teach = AppTest.from_string("from views import teach\nteach.render()",
                                    default_timeout=60).run()
        assert not teach.exception
        assert any("nobody can log in" in e.value and "in-memory" in e.value
                   for e in teach.error)
    finally:
        web.PROCESS.reset()


def test_deleted_question_under_the_live_panel(app_env):
    poll, q = seed(app_env, DIE, 3, 4)
    at = dashboard()
    app_env.polls.delete_question(q.id)  # e.g. from another tab
    at.run()
    assert_clean(at)
    assert "no questions yet" in texts(at)


def test_user_text_is_shown_literally(app_env):
    poll = app_env.polls.create_poll("t")
    q = app_env.polls.add_question(poll.id, "**Bold?** [link](http://x)", options=("No", "*Yes*"),
                                   design_params=DIE)
    app_env.running.open_question(q.id)
    app_env.running.set_revealed(q.id, True)
    app_env.reports.submit_report(poll.join_code, q.id, answer=1, design_params=DIE,
                                  submission_id="lit-000001", device_id="lit-device")
    at = dashboard()
    assert_clean(at)
    assert "Reported “\\*Yes\\*”" in metrics(at)
    projector = dashboard(query={"projector": "1"})
    shown = [m.value for m in projector.markdown if "ldp-question" in m.value]
    assert shown == ["<div class='ldp-question'>&#42;&#42;Bold?&#42;&#42; "
                     "&#91;link&#93;&#40;http&#58;//x&#41;</div>"]


HOSTILE_TEXT = "Vanilla?\n\n![x](http://img.invalid/x.png) <img src=http://img.invalid/y> [go](http://a.invalid)"
HOSTILE_LABEL = "![i](http://img.invalid/z.png)"


def _no_live_markup(markdown: str) -> None:
    """No Markdown image or link and no HTML tag would render from this Markdown source."""
    import re

    assert not re.search(r"(?<!\\)!(?<!\\)\[", markdown), markdown
    assert not re.search(r"(?<!\\)\]\(", markdown), markdown
    assert "<img" not in markdown, markdown


def test_instructor_text_never_renders_as_markup(app_env):
    """Images, links, HTML and blank lines in a question or a label stay text: in the
    projector's question, the tables and the labels."""
    poll = app_env.polls.create_poll("t")
    q = app_env.polls.add_question(poll.id, HOSTILE_TEXT, options=("Red", "Green", HOSTILE_LABEL),
                                   design_params={"design": "grr", "d": 3, "epsilon": 1.0},
                                   kind="categorical")
    app_env.running.open_question(q.id)
    app_env.running.set_revealed(q.id, True)
    app_env.results.add_simulated_reports(q.id, 30, (0.3, 0.3, 0.4), seed=3)
    for at in (dashboard(), dashboard(query={"projector": "1"})):
        assert not at.exception
        for m in at.markdown:
            if "ldp-question" in m.value:
                assert "\n" not in m.value and "<img" not in m.value
                assert "&#33;&#91;x&#93;&#40;http&#58;" in m.value
            else:
                _no_live_markup(m.value)
        for table in at.table:
            for cell in table.value.to_numpy().ravel().tolist() + list(table.value.columns):
                _no_live_markup(str(cell))


def test_fifty_of_fifty_yes_is_flagged_as_not_fitting_the_design(app_env):
    """One device voting "Yes" 50 times (fresh cookies) gives 50 of 50 under the die: the
    dashboard says the reports do not fit the design and never calls it noise."""
    seed(app_env, DIE, 50, 50)
    at = dashboard()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "These reports do not fit the design" in errors
    assert "more “Vanilla” than even a class where everyone truly prefers “Vanilla”" in errors
    assert "repeated votes from one device" in errors and "not randomization noise" in errors
    assert not any("randomization noise" in w.value and "can push it" in w.value
                   for w in at.warning)


def test_honest_reports_raise_no_alarm(app_env):
    seed(app_env, DIE, 30, 40)
    at = dashboard()
    assert not any("do not fit the design" in e.value for e in at.error)


def test_all_ones_unary_reports_are_flagged(app_env):
    poll = app_env.polls.create_poll("ue")
    oue = {"design": "ue", "d": 5, "p": 0.5, "q": 0.25}
    q = app_env.polls.add_question(poll.id, "Which flavour?", options=("A", "B", "C", "D", "E"),
                                   design_params=oue, kind="categorical")
    app_env.running.open_question(q.id)
    for i in range(50):
        app_env.reports.submit_report(poll.join_code, q.id, answer="11111", design_params=oue,
                                      submission_id=f"ones-{i:06d}", device_id=f"ones-device-{i}")
    app_env.running.set_revealed(q.id, True)
    at = dashboard()
    assert not at.exception
    assert any("more 1s per report than the phones' randomizer produces" in e.value
               for e in at.error)
