"""The five self-study pages under AppTest: defaults, every slider's extremes, and the
numbers they show checked against ldp_core for fixed seeds.

Each page is run as ``from views import <page>; <page>.render()``. ``check_page``
asserts no exception, no "nan"/"inf" in any text a learner can read, and no
blank chart or chart fed NaN/inf data.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: "nan", "inf", "infinity" as words (a number formatted by Python), any case.
BAD_NUMBER = re.compile(r"(?<![\w])(-?nan|-?inf|-?infinity)(?![\w])", re.IGNORECASE)

TEXT_TYPES = {"markdown", "caption", "title", "header", "subheader", "latex", "text", "code",
              "info", "warning", "error", "success"}


def page_app(module: str, timeout: float = 60) -> AppTest:
    """An AppTest that imports ``pages.<module>`` and calls its ``render()``."""
    return AppTest.from_string(f"from views import {module}\n{module}.render()\n",
                               default_timeout=timeout)


def walk(node) -> Iterator:
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            yield child
            yield from walk(child)


def nodes(at: AppTest, kind: str) -> list:
    return [n for n in walk(at._tree) if getattr(n, "type", None) == kind]


def texts(at: AppTest) -> list[str]:
    """Every piece of text a learner can read on the page (labels, values, tables)."""
    out: list[str] = []
    for n in walk(at._tree):
        kind = getattr(n, "type", None)
        if kind in TEXT_TYPES:
            out.append(str(n.value))
        elif kind == "metric":
            out += [str(n.label), str(n.value), str(n.proto.help)]
        elif kind == "dataframe":
            out.append(n.value.to_string())
        elif kind in {"slider", "select_slider", "radio", "number_input", "toggle", "button"}:
            out.append(str(getattr(n, "label", "")))
            out += [str(o) for o in getattr(n, "options", [])]
    return out


def chart_tables(chart) -> dict[str, object]:
    return {d.name: pa.ipc.open_stream(d.data.data).read_all().to_pandas()
            for d in chart.proto.datasets}


def check_page(at: AppTest) -> None:
    """No exception, no NaN/inf in any text, and no blank or NaN-fed chart."""
    assert not at.exception, [e.value for e in at.exception]
    bad = [t for t in texts(at) if BAD_NUMBER.search(t)]
    assert not bad, bad
    for chart in nodes(at, "vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        assert "layer" in spec or "mark" in spec
        tables = chart_tables(chart)
        assert any(len(t) for t in tables.values()), f"blank chart: {spec.get('title')}"
        for name, table in tables.items():
            numeric = table.select_dtypes("number")
            # an empty heatmap cell ("p") is deliberately uncoloured
            numeric = numeric.drop(columns=[c for c in numeric if c == "p"])
            assert numeric.notna().all().all(), (spec.get("title"), name)
            assert numeric.abs().lt(float("inf")).all().all(), (spec.get("title"), name)


def metric(at: AppTest, label_start: str) -> str:
    """The value of the first metric whose label starts with ``label_start``."""
    for m in at.metric:
        if m.label.startswith(label_start):
            return m.value
    raise KeyError(f"no metric starting with {label_start!r}: {[m.label for m in at.metric]}")


def widget(at: AppTest, key: str):
    for group in (at.slider, at.select_slider, at.radio, at.number_input, at.toggle):
        for w in group:
            if w.key == key:
                return w
    raise KeyError(key)


def extremes(w) -> list:
    """The values at both ends of a widget (every option of a radio)."""
    if w.type in ("slider", "number_input"):
        return [w.min, w.max]
    if w.type == "toggle":
        return [True, False]
    return []


def sweep(at: AppTest, keys: list[str], values: dict[str, list] | None = None) -> int:
    """Set each widget to each extreme (or the given values) in turn, check the page,
    and put the widget back. Returns the number of reruns."""
    runs = 0
    for key in keys:
        w = widget(at, key)
        original = w.value
        for v in (values or {}).get(key) or extremes(w):
            widget(at, key).set_value(v).run()
            check_page(at)
            runs += 1
        try:
            widget(at, key).set_value(original).run()
        except KeyError:  # the widget disappeared with the change; the page is still fine
            at.run()
        check_page(at)
        runs += 1
    return runs


# ======================================================================================
# The tests
# ======================================================================================

import ast
import math

import numpy as np
import pandas as pd
import pytest

from ldp_core import (
    GRR,
    OLH,
    BinaryCounts,
    DieRR,
    EpsilonRR,
    GammaRR,
    UnaryEncoding,
    central_mean_sd,
    coverage_shares,
    epsilon_to_gamma,
    error_summary,
    gamma_to_epsilon,
    interval_coverage,
    laplace_mechanism,
    local_mean_sd,
    local_n_for_central_accuracy,
    max_error_scale,
    posterior_true_yes,
    recommend_oracle,
    share_estimates,
    subsample_counts,
)
from ui.fmt import (
    fmt,
    fmt_count,
    fmt_eps_allowed,
    fmt_eps_value,
    fmt_fixed,
    fmt_interval,
    fmt_pct,
    fmt_pct_down,
    fmt_pvalue,
)

PAGES = ["study_rr", "study_exercise", "study_likelihood", "study_asymptotics", "study_models",
         "study_histogram", "study_averaging", "study_manipulation", "study_audit"]


def _class(n: int, v: int) -> np.ndarray:
    truth = np.zeros(n, dtype=np.uint8)
    truth[:v] = 1
    return truth


# -- structure ------------------------------------------------------------------------------

@pytest.mark.parametrize("module", PAGES)
def test_module_only_defines_things(module):
    """Top level: docstring, imports, constants, functions. No Streamlit call runs on import,
    so importing a view, or running its file directly, draws nothing."""
    tree = ast.parse((ROOT / "views" / f"{module}.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Expr):
            assert isinstance(node.value, ast.Constant), ast.dump(node)[:80]  # docstring
        else:
            assert isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.Assign,
                                     ast.AnnAssign)), ast.dump(node)[:80]
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            assert not any(isinstance(c, ast.Call) and "st" in ast.unparse(c.func).split(".")[:1]
                           for c in ast.walk(node))


@pytest.mark.parametrize("module", PAGES)
def test_executing_the_file_directly_shows_nothing(module):
    at = AppTest.from_file(str(ROOT / "views" / f"{module}.py"), default_timeout=60).run()
    assert not at.exception
    assert not list(walk(at.main))


@pytest.mark.parametrize("module", PAGES)
def test_defaults_render_cleanly(module):
    at = page_app(module).run()
    check_page(at)
    if module != "study_exercise":  # the exercise draws its charts with the solutions
        assert nodes(at, "vega_lite_chart"), "every page draws at least one chart"


# -- randomized response explorer -------------------------------------------------------------

def test_rr_defaults_match_ldp_core():
    at = page_app("study_rr").run()
    check_page(at)
    design, n, v = GammaRR(0.25), 100, 60
    reports = design.perturb(_class(n, v), rng=np.random.default_rng([0, 1]))
    yes = int(reports.sum())
    est = BinaryCounts.single(design, yes, n).summary()
    assert metric(at, "a = P(report vanilla") == fmt_fixed(design.a, 4) == "0.7500"
    assert metric(at, "b = P(report vanilla") == "0.2500"
    assert metric(at, "Privacy loss") == fmt_fixed(design.epsilon, 2) == "1.10"
    assert metric(at, "Reported vanilla V") == fmt_count(yes)
    assert metric(at, "Estimate μ̂") == fmt_fixed(est.mu_hat, 3)
    many = share_estimates(design, design.sample_yes_counts(
        v, n, size=5000, rng=np.random.default_rng([0, 2])), n)
    sim = error_summary(many, v / n)
    assert metric(at, "Mean of μ̂") == fmt_fixed(sim.mean, 3)
    assert metric(at, "SD of μ̂ (simulated)") == fmt(sim.sd, 3)
    assert metric(at, "SD of μ̂ (theory)") == fmt(
        BinaryCounts.single(design, 0, n).sd_class_at(v / n), 3) == "0.0866"
    post = posterior_true_yes(design, 0.5)
    assert metric(at, "After a 'vanilla' report") == fmt_pct(post.after_yes) == "75.0%"
    assert metric(at, "After a 'chocolate' report") == "25.0%"
    # the same seed gives the same class on a rerun; a new simulation changes the seed
    at.run()
    assert metric(at, "Reported vanilla V") == fmt_count(yes)
    at.button[0].click().run()
    assert at.session_state["rr_seed"] == 1
    check_page(at)


def test_rr_gamma_and_epsilon_sliders_are_linked():
    at = page_app("study_rr").run()
    at.slider(key="rr_gamma").set_value(0.1).run()
    assert at.slider(key="rr_eps").value == pytest.approx(gamma_to_epsilon(0.1))
    check_page(at)
    at.slider(key="rr_eps").set_value(2.0).run()
    assert at.slider(key="rr_gamma").value == pytest.approx(epsilon_to_gamma(2.0))
    assert metric(at, "Privacy loss") == "2.00"
    at.slider(key="rr_eps").set_value(7.0).run()  # γ would exceed its slider: clamped, said
    assert at.slider(key="rr_gamma").value == pytest.approx(0.499)
    assert metric(at, "Privacy loss") == "7.00"
    assert any("stops at" in c.value for c in at.caption)
    check_page(at)


def test_rr_gamma_zero_means_no_estimator():
    at = page_app("study_rr").run()
    at.slider(key="rr_gamma").set_value(0.0).run()
    check_page(at)
    assert at.slider(key="rr_eps").value == 0.0
    assert any("no estimator" in w.value for w in at.warning)
    assert metric(at, "After a 'vanilla' report") == "50.0%"  # the posterior is the prior


def test_rr_every_slider_extreme():
    at = page_app("study_rr").run()
    runs = sweep(at, ["rr_gamma", "rr_eps", "rr_mu", "rr_n", "rr_prior"],
                 {"rr_n": [1, 100_000]})
    at.slider(key="rr_gamma").set_value(0.0).run()
    runs += sweep(at, ["rr_n"], {"rr_n": [1, 100_000]})
    for design, keys, values in [
        ("die", ["rr_faces", "rr_truthful", "rr_n"], {"rr_n": [1]}),
        ("coins", ["rr_mu", "rr_n"], {"rr_n": [1, 100_000]}),
        ("warner", ["rr_warner_p", "rr_prior"], {"rr_warner_p": [0.0, 0.5, 1.0]}),
    ]:
        at.radio(key="rr_design").set_value(design).run()
        check_page(at)
        runs += sweep(at, keys, values)
    assert runs > 20


def test_rr_bad_designs_say_why():
    at = page_app("study_rr").run()
    at.radio(key="rr_design").set_value("die").run()
    at.slider(key="rr_faces").set_value(2).run()  # 1 truthful face of 2: no information
    check_page(at)
    assert any("carry no information" in w.value for w in at.warning)
    at.radio(key="rr_design").set_value("warner").run()
    at.slider(key="rr_warner_p").set_value(0.5).run()
    check_page(at)
    assert any("coin flip" in w.value for w in at.warning)
    at.slider(key="rr_warner_p").set_value(1.0).run()
    check_page(at)
    assert metric(at, "Privacy loss") == "∞"
    assert metric(at, "Largest odds factor") == "×∞"


# -- likelihood lab -----------------------------------------------------------------------------

def test_likelihood_simulated_defaults_match_ldp_core():
    at = page_app("study_likelihood").run()
    check_page(at)
    design, n, v = DieRR(4, 3), 60, 18
    yes = int(design.sample_yes_counts(v, n, rng=np.random.default_rng([0, 4])))
    counts = BinaryCounts.single(design, yes, n)
    assert metric(at, "Reports 'vanilla'") == f"{fmt_count(yes)} / {fmt_count(n)}"
    assert metric(at, "Unbiased μ̂") == fmt_fixed(counts.unbiased(), 3)
    assert metric(at, "MLE on [0, 1]") == fmt_fixed(counts.mle(), 3)
    assert metric(at, "LR test") == f"p = {fmt_pvalue(counts.lr_test(0.5)[1])}"


def test_likelihood_entered_counts_match_ldp_core():
    at = page_app("study_likelihood").run()
    at.radio(key="lik_source").set_value("enter").run()
    at.number_input(key="lik_n").set_value(40).run()
    at.number_input(key="lik_yes").set_value(25).run()
    at.slider(key="lik_mu0").set_value(0.3).run()
    check_page(at)
    counts = BinaryCounts.single(DieRR(4, 3), 25, 40)
    assert metric(at, "Unbiased μ̂") == fmt_fixed(counts.unbiased(), 3) == "0.750"
    assert metric(at, "LR test") == f"p = {fmt_pvalue(counts.lr_test(0.3)[1])}"
    table = at.dataframe[0].value
    assert table.iloc[1, 1] == fmt_interval(*counts.lr_interval(0.95))
    assert table.iloc[0, 1] == fmt_interval(*counts.normal_interval(0.95))
    stat = counts.lr_test(0.3)[0]
    assert any(fmt(stat, 3) in m.value for m in at.markdown)


def test_likelihood_every_input_extreme():
    at = page_app("study_likelihood").run()
    runs = 0
    for design in ["die", "coins", "warner", "eps"]:
        at.radio(key="lik_design").set_value(design).run()
        check_page(at)
        keys = ["lik_mu", "lik_n_sim", "lik_mu0"]
        values = {"lik_n_sim": [1, 100_000]}
        if design == "warner":
            keys.append("lik_warner_p")
            values["lik_warner_p"] = [0.0, 0.5, 1.0]
        if design == "eps":
            keys.append("lik_eps")
        runs += sweep(at, keys, values)
    runs += sweep(at, ["lik_level", "lik_zoom"], {"lik_level": [0.90, 0.99]})
    at.radio(key="lik_source").set_value("enter").run()
    runs += sweep(at, ["lik_n", "lik_yes", "lik_mu0", "lik_zoom"],
                  {"lik_n": [0, 1, 1_000_000], "lik_yes": [0, 40]})
    assert runs > 30


def test_likelihood_edge_cases_explain_themselves():
    at = page_app("study_likelihood").run()
    at.radio(key="lik_source").set_value("enter").run()
    at.number_input(key="lik_n").set_value(0).run()
    check_page(at)
    assert any("n = 0" in i.value for i in at.info)
    at.number_input(key="lik_n").set_value(40).run()
    at.number_input(key="lik_yes").set_value(30).run()
    at.number_input(key="lik_n").set_value(10).run()  # V > n: clamped with a message
    check_page(at)
    assert at.number_input(key="lik_yes").value == 10
    # Warner p = 1: no privacy, the likelihood is 0 at some mu (log-likelihood -inf)
    at.radio(key="lik_design").set_value("warner").run()
    at.slider(key="lik_warner_p").set_value(1.0).run()
    at.number_input(key="lik_yes").set_value(0).run()
    check_page(at)
    assert any("impossible" in c.value for c in at.caption)


def _coverage_chart(at: AppTest, n: int) -> dict[str, np.ndarray]:
    """The coverage picture's curves by name, from the chart the page drew."""
    for chart in nodes(at, "vega_lite_chart"):
        title = json.loads(chart.proto.spec).get("title", {}).get("text", "")
        if title.startswith(f"Exact coverage at n = {fmt_count(n)}"):
            tables = chart_tables(chart)
            rows = pd.concat([tables[k] for k in ("solid", "dashed") if k in tables])
            return {name: (group["x"].to_numpy(), group["y"].to_numpy())
                    for name, group in rows.groupby("series")}
    raise AssertionError("no coverage picture")


def test_likelihood_coverage_picture_is_ldp_cores_exact_coverage():
    """The page draws ldp_core's exact coverage (binomial sums) of the three intervals for
    the chosen design and n, with the 95% line; the exact one never dips below it, the
    normal approximation does."""
    at = page_app("study_likelihood").run()
    check_page(at)
    design, n = DieRR(4, 3), 60
    curves = _coverage_chart(at, n)
    shares = coverage_shares(n)
    for name, method in (("exact (the dashboard's CI)", "exact"),
                         ("likelihood ratio", "likelihood_ratio"),
                         ("normal μ̂ ± z·SD", "normal")):
        xs, ys = curves[name]
        np.testing.assert_allclose(xs, shares)
        np.testing.assert_allclose(ys, interval_coverage(design.a, design.b, n, shares,
                                                         method=method), atol=1e-12)
    assert set(curves["95%: the promise"][1]) == {0.95}
    table = at.dataframe[1].value.set_index("interval")
    exact = interval_coverage(design.a, design.b, n, shares)
    assert table.loc["exact (the dashboard's CI)", "lowest coverage"] == fmt_pct_down(exact.min())
    assert table.loc["exact (the dashboard's CI)", "never below 95%?"] == "yes"
    assert table.loc["normal μ̂ ± z·SD", "never below 95%?"] == "no"
    assert at.dataframe[0].value.iloc[2, 1] == fmt_interval(
        *BinaryCounts.single(design, int(design.sample_yes_counts(
            18, n, rng=np.random.default_rng([0, 4]))), n).exact_interval())


def test_likelihood_coverage_for_a_fixed_class_and_another_level():
    at = page_app("study_likelihood").run()
    at.radio(key="lik_design").set_value("eps").run()
    at.slider(key="lik_eps").set_value(3.0).run()
    at.select_slider(key="lik_n_sim").set_value(20).run()
    at.select_slider(key="lik_level").set_value(0.90).run()
    at.radio(key="lik_cover_model").set_value("class").run()
    check_page(at)
    design = EpsilonRR(3.0)
    xs, ys = _coverage_chart(at, 20)["exact (the dashboard's CI)"]
    np.testing.assert_allclose(xs, np.arange(21) / 20)  # the shares a class of 20 can have
    np.testing.assert_allclose(ys, interval_coverage(design.a, design.b, 20, xs, level=0.90,
                                                     model="class"), atol=1e-12)
    assert ys.min() >= 0.90
    assert set(_coverage_chart(at, 20)["90%: the promise"][1]) == {0.90}


def test_likelihood_coverage_limits_explain_themselves():
    at = page_app("study_likelihood").run()
    at.radio(key="lik_cover_model").set_value("class").run()
    at.select_slider(key="lik_n_sim").set_value(5000).run()
    check_page(at)
    assert any("fixed-class picture is computed for n up to 2,000" in i.value for i in at.info)
    _coverage_chart(at, 5000)  # drawn for a population instead
    at.radio(key="lik_source").set_value("enter").run()
    at.number_input(key="lik_n").set_value(1_000_000).run()
    check_page(at)
    assert any("computed for n up to 100,000" in i.value for i in at.info)


# -- local vs central ---------------------------------------------------------------------------

def test_asymptotics_defaults_match_ldp_core():
    from views import study_asymptotics as page

    at = page_app("study_asymptotics").run()
    check_page(at)
    eps, n = 0.5, 1000
    assert metric(at, "Local RR: SD") == fmt(local_mean_sd(n, eps), 3)
    assert metric(at, "Central Laplace: SD") == fmt(central_mean_sd(n, eps), 3)
    need = local_n_for_central_accuracy(n, eps)
    assert metric(at, "People the local model needs") == fmt_count(need)
    assert any(fmt_count(need) in m.value for m in at.markdown)
    # the simulated dots: exact aggregate sampling and Laplace noise, seed 0
    from ldp_core import EpsilonRR

    design, gen = EpsilonRR(eps), np.random.default_rng([0, 3])
    table = at.dataframe[0].value
    for i, m in enumerate(page.N_GRID):
        v = int(np.floor(0.5 * m + 0.5))
        yes = design.sample_yes_counts(v, m, size=1000, rng=gen)
        local = error_summary(share_estimates(design, yes, m), v / m).rmse
        central = error_summary(laplace_mechanism(v / m, 1 / m, eps, rng=gen, size=1000),
                                v / m).rmse
        assert table["local simulated"][i] == fmt(local, 3)
        assert table["central simulated"][i] == fmt(central, 3)


def test_asymptotics_checks_the_course_bound_on_the_share_scale():
    from ldp_core import EpsilonRR, pm1_mean_abs_error

    at = page_app("study_asymptotics").run()
    check_page(at)
    table = next(t for t in at.dataframe if "c_ε/(2√n)" in t.value.columns)
    rows = table.value.to_dict("records")
    for row, eps in zip(rows, (0.25, 0.5, 1.0, 2.0), strict=True):
        err = pm1_mean_abs_error(eps, 100, 50)
        assert row["c_ε/(2√n)"] == fmt(EpsilonRR(eps).c_epsilon / 20, 3)
        assert row["E|share − true share|"] == fmt(err / 2, 3)
        assert row["E|A − mean| (±1)"] == fmt(err, 3)
        assert err / 2 <= EpsilonRR(eps).c_epsilon / 20  # holds for the share
    assert float(rows[1]["E|A − mean| (±1)"]) > float(rows[1]["c_ε/(2√n)"])


def test_asymptotics_every_slider_extreme():
    at = page_app("study_asymptotics").run()
    runs = sweep(at, ["asy_eps", "asy_mu", "asy_classes", "asy_n"],
                 {"asy_classes": [100, 3000], "asy_n": [1, 1_000_000]})
    at.slider(key="asy_eps").set_value(10.0).run()
    runs += sweep(at, ["asy_n"], {"asy_n": [1, 1_000_000]})
    assert runs >= 10


# -- histogram lab ------------------------------------------------------------------------------

def _population():
    import csv

    with (ROOT / "assets" / "occupations.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return [r["occupation"] for r in rows], np.array([int(r["count"]) for r in rows])


def test_population_csv_is_the_course_data():
    labels, counts = _population()
    assert len(labels) == 14
    assert dict(zip(labels, counts.tolist(), strict=True))["Adm-clerical"] == 3770
    assert dict(zip(labels, counts.tolist(), strict=True))["Priv-house-serv"] == 149
    assert dict(zip(labels, counts.tolist(), strict=True))["Armed-Forces"] == 9
    assert counts.sum() == 30_718


def test_histogram_defaults_match_ldp_core():
    at = page_app("study_histogram").run()
    check_page(at)
    labels, pop = _population()
    n, eps, d = 2000, 1.0, 14
    oracle = UnaryEncoding.symmetric(d, eps)
    gen = np.random.default_rng([0, 5])
    sample = subsample_counts(pop, n, rng=gen)
    raw = oracle.estimate_counts(oracle.sample_support_counts(sample, size=500, rng=gen), n)
    errs = error_summary(raw, sample, axis=-1)
    assert metric(at, "Scale √(N ln D)/ε") == fmt_count(max_error_scale(n, d, eps))
    assert metric(at, "Max |error|, this run") == fmt_count(errs.max_abs[0])
    assert metric(at, "Mean max |error|") == fmt_count(errs.max_abs.mean())
    table = at.dataframe[1].value
    oue = table[table["mechanism"].str.startswith("OUE")].iloc[0]
    assert oue["N·Var(share)"] == fmt_fixed(UnaryEncoding.optimized(d, eps).count_variance(1),
                                            2) == "3.68"
    assert recommend_oracle(d, eps) == "oue" and oue["recommended"] == "★"
    olh = table[table["mechanism"].str.startswith("OLH")].iloc[0]
    assert olh["N·Var(share)"] == fmt_fixed(OLH(d, eps).count_variance(1), 2)
    if (raw[0] < 0).any():
        assert any("negative" in i.value for i in at.info)


def test_histogram_lab_shows_a_set_answer_spent_two_ways():
    """Check all that apply at the lab's ε = 1: each option its own RR bit at ε/d beside one
    option sampled at the full ε, both costing ε for the whole set, with ldp_core's
    variances (sampling wins at this ε)."""
    from ldp_core import survey_variance_unit

    at = page_app("study_histogram").run()
    at.slider(key="hist_set_d").set_value(5).run()
    check_page(at)
    table = at.dataframe[2].value
    assert list(table["ε of the whole set"]) == ["1.000", "1.000"]
    assert list(table["ε per option's report"]) == ["0.200", "1.000"]
    assert list(table["N·Var(share), share ½"]) == [
        fmt_fixed(survey_variance_unit(m, 1.0, 5), 2) for m in ("split", "sample")]
    assert float(table["N·Var(share), share ½"][0]) > float(table["N·Var(share), share ½"][1])


def test_histogram_preset_and_postprocessing():
    at = page_app("study_histogram").run()
    at.slider(key="hist_eps").set_value(3.0).run()
    at.slider(key="hist_n").set_value(10).run()
    at.button[0].click().run()  # the CS208 preset
    assert at.slider(key="hist_eps").value == 1.0
    assert at.slider(key="hist_n").value == 2000
    for post in ["raw", "clip", "norm_sub"]:
        at.radio(key="hist_post").set_value(post).run()
        check_page(at)
        table = at.dataframe[0].value
        shown = table[table["estimate"].str.endswith("◀ shown")]
        assert len(shown) == 1
    totals = at.dataframe[0].value.iloc[:, 3].tolist()
    assert totals[2] == "2,000"  # Norm-Sub sums to N


def test_histogram_every_input_extreme():
    at = page_app("study_histogram").run()
    runs = 0
    for mech in ["sue", "oue", "grr", "olh", "ue"]:
        at.radio(key="hist_mech").set_value(mech).run()
        check_page(at)
        keys = ["hist_n"] + (["hist_p", "hist_q"] if mech == "ue" else ["hist_eps"])
        runs += sweep(at, keys)
    runs += sweep(at, ["hist_post"], {"hist_post": ["clip", "norm_sub"]})
    assert runs >= 15


def test_histogram_unary_p_equal_q_is_explained():
    at = page_app("study_histogram").run()
    at.radio(key="hist_mech").set_value("ue").run()
    # ln 9 = 2.1972…: an ε on screen is a bound, rounded up (classroom.privacy_numbers)
    assert metric(at, "ε = ln(p(1−q)") == fmt_eps_value(math.log(9), 3) == "2.198"  # Near & Abuah
    at.slider(key="hist_p").set_value(0.4).run()
    at.slider(key="hist_q").set_value(0.4).run()
    check_page(at)
    assert any("p = q" in w.value for w in at.warning)
    assert metric(at, "ε = ln(p(1−q)") == "—"


# -- the class exercise -------------------------------------------------------------------------

def _show_solutions(at):
    for t in at.toggle:
        t.set_value(True)
    return at.run()


def test_exercise_solutions_match_ldp_core():
    at = page_app("study_exercise").run()
    check_page(at)
    assert not at.latex  # solutions are hidden until asked for
    _show_solutions(at)
    check_page(at)
    assert len(at.latex) == 3
    design, n, v = DieRR(4, 3), 60, 36
    yes = int(design.perturb(_class(n, v), rng=np.random.default_rng([0, 6])).sum())
    counts = BinaryCounts.single(design, yes, n)
    assert metric(at, "μ̂ for this class") == fmt_fixed(2 * yes / n - 0.5, 3) \
        == fmt_fixed(counts.unbiased(), 3)
    assert metric(at, "√(3/(4n))") == fmt(math.sqrt(3 / (4 * n)), 3) \
        == fmt(counts.sd_worst(), 3)
    assert metric(at, "ε of the die design") == fmt_eps_value(math.log(3), 4) == "1.0987"
    gen = np.random.default_rng([0, 7])
    local = share_estimates(design, design.sample_yes_counts(v, n, size=20_000, rng=gen), n)
    central = laplace_mechanism(v / n, 1 / n, design.epsilon, rng=gen, size=20_000)
    assert metric(at, "SD of μ̂ over") == fmt(error_summary(local, v / n).sd, 3)
    assert metric(at, "Mean of μ̂ over") == fmt_fixed(error_summary(local, v / n).mean, 3)
    assert metric(at, "Central Laplace: RMS") == fmt(error_summary(central, v / n).rmse, 3)
    assert metric(at, "People local needs") == fmt_count(
        local_n_for_central_accuracy(n, design.epsilon))


def test_exercise_shows_both_coverages_and_both_sds():
    """Fixed class against a class drawn from a population (n = 60, μ = 0.6): the CI built
    with √(3/(4n)) covers the class's own share about 95% of the time, the population's
    share less often; the population SD is the larger. Recomputed here directly."""
    at = _show_solutions(page_app("study_exercise").run())
    check_page(at)
    design, n, v, mu = DieRR(4, 3), 60, 36, 0.6
    gen = np.random.default_rng([0, 7])
    local = share_estimates(design, design.sample_yes_counts(v, n, size=20_000, rng=gen), n)
    pop = share_estimates(design, np.random.default_rng([0, 8]).binomial(
        n, 0.25 + 0.5 * mu, 20_000), n)
    half = 1.959963984540054 * math.sqrt(3 / (4 * n))
    own = float(np.mean(np.abs(local - v / n) <= half))
    popcov = float(np.mean(np.abs(pop - mu) <= half))
    assert metric(at, "μ̂ ± 1.96 SD covers this class's share") == f"{own:.1%}"
    assert metric(at, "μ̂ ± 1.96 SD covers the population's μ") == f"{popcov:.1%}"
    assert metric(at, "SD, fixed class") == fmt(float(np.std(local)), 3)
    assert metric(at, "SD, population") == fmt(float(np.std(pop)), 3)
    se = math.sqrt(0.95 * 0.05 / 20_000)
    assert abs(own - 0.95) < 0.02 and popcov < own - 4 * se  # the two really differ
    assert float(np.std(pop)) > float(np.std(local))
    text = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "whatever the class looks like" not in text


def test_exercise_every_slider_extreme():
    at = _show_solutions(page_app("study_exercise").run())
    runs = sweep(at, ["ex_n", "ex_mu"])
    at.slider(key="ex_n").set_value(1).run()
    runs += sweep(at, ["ex_mu"])
    assert runs >= 6


# -- the averaging attack ------------------------------------------------------------------------

@pytest.mark.parametrize("design_key, design", [
    ("exercise", DieRR(4, 3)), ("small", EpsilonRR(0.5)), ("large", EpsilonRR(2.0))])
@pytest.mark.parametrize("k", [1, 5, 60])
def test_averaging_numbers_match_ldp_core(design_key, design, k):
    from ldp_core import composed_epsilon, majority_reveal_probability, repeated_posterior

    at = page_app("study_averaging")
    at.session_state["avg_design"] = design_key
    at.session_state["avg_k"] = k
    at.run()
    check_page(at)
    assert metric(at, "ε of one report") == fmt_eps_value(design.epsilon, 3)
    assert metric(at, f"ε of {k} linked") == fmt_eps_value(composed_epsilon(design, k), 3)
    assert metric(at, "k × ε") == fmt_eps_value(k * design.epsilon, 3)
    assert metric(at, f"ε of {k} linked") == metric(at, "k × ε")  # tight: k eps exactly
    assert metric(at, "Majority") == fmt_pct(majority_reveal_probability(design, k), 1)
    table = nodes(at, "dataframe")[0].value
    assert len(table) == k + 1
    assert table["attacker's P(truly yes)"].tolist() == [
        fmt_pct(p, 1) for p in repeated_posterior(design, k, 0.5)]
    assert "Composition is tight here" in " ".join(texts(at))


@pytest.mark.parametrize("k", [1, 5, 60])
@pytest.mark.parametrize("total", [2.0, 6.0])
def test_averaging_memo_numbers_match_ldp_core(k, total):
    from ldp_core import MemoRR, composed_epsilon, majority_reveal_probability

    at = page_app("study_averaging")
    at.session_state["avg_k"] = k
    at.session_state["avg_memo_eps"] = total
    at.run()
    check_page(at)
    design = DieRR(4, 3)
    memo = MemoRR.from_epsilons(total, design.epsilon)
    assert metric(at, f"{k} reports without a memo") == fmt_eps_value(k * design.epsilon, 3)
    assert metric(at, f"{k} reports with the memo") == fmt_eps_value(
        composed_epsilon(memo, k), 3)
    assert metric(at, "ε∞, the whole series") == fmt_eps_value(total, 3)
    assert metric(at, "Majority = truth, memo") == fmt_pct(
        majority_reveal_probability(memo, k), 1)
    page = " ".join(texts(at))
    for note in ("A changed answer costs again", "A new phone or a cleared browser starts a new "
                 "memo", "The memo never leaves the phone"):
        assert note in page
    assert len(nodes(at, "vega_lite_chart")) == 4


def test_averaging_memo_slider_starts_at_the_designs_epsilon():
    """ε∞ cannot be below one report's ε: after switching to ε = 2 the memo's slider starts
    at 2 and a smaller ε∞ chosen before moves up to it."""
    at = page_app("study_averaging")
    at.session_state["avg_memo_eps"] = 1.2
    at.run()
    at.radio(key="avg_design").set_value("large").run()
    check_page(at)
    assert widget(at, "avg_memo_eps").min == 2.0
    assert widget(at, "avg_memo_eps").value == 2.0
    assert metric(at, "ε∞, the whole series") == "2.000"


def test_averaging_every_slider_extreme():
    at = page_app("study_averaging").run()
    runs = sweep(at, ["avg_k", "avg_prior", "avg_memo_eps"])
    for key in ("small", "large"):
        at.radio(key="avg_design").set_value(key).run()
        runs += sweep(at, ["avg_k"])
    assert runs >= 10


# -- the manipulation lab --------------------------------------------------------------------


def _manipulation(**state) -> AppTest:
    at = page_app("study_manipulation")
    for key, value in state.items():
        at.session_state[f"manip_{key}"] = value
    return at.run()


@pytest.mark.parametrize(("kind", "design", "target", "gain"), [
    ("exercise", DieRR(4, 3), 1, "1.50"),
    ("oue", UnaryEncoding.optimized(4, math.log(3)), 0, "3.00"),
    ("grr", GRR(20, math.log(3)), 0, "10.50"),
])
def test_manipulation_numbers_match_ldp_core(kind, design, target, gain):
    """The check values (1.5 per fake report for the class exercise, 3.0 for OUE's bit at
    ε = ln 3, 10.5 for GRR over 20 options), the expected estimates, the blind zone, the
    alarm chances and the simulated class, each as ldp_core computes them."""
    from ldp_core import (
        blind_zone,
        fakes_until_alarm,
        simulate_stuffing,
        stuffing_alarm_probability,
        stuffing_shift,
    )

    n, pi, fakes = 200, 0.3, 40
    at = _manipulation(design=kind, d=design.d if kind != "exercise" else 10,
                       eps=math.log(3), n=n, pi=pi, fakes=fakes)
    check_page(at)
    beta = fakes / (n + fakes)
    assert metric(at, "Weight of one fake report") == gain
    assert metric(at, "Honest estimate") == fmt_pct(pi, 1)
    shift = stuffing_shift(design, pi, beta, target=target)
    assert metric(at, "With the fakes") == fmt_pct(pi + shift, 1)
    edge = blind_zone(design, pi, target=target)
    assert metric(at, "Blind zone") == f"up to {fmt_count(math.floor(edge / (1 - edge) * n))} fakes"
    half = fakes_until_alarm(design, n, pi, target=target)
    assert metric(at, "Fakes the check catches half the time") == f"{fmt_count(half)} or more"
    prob = stuffing_alarm_probability(design, n, fakes, pi, target=target)
    assert metric(at, "Chance of an alarm now") == ("< 0.1%" if prob < 0.001
                                                    else fmt_pct(prob, 1))
    one = simulate_stuffing(design, n, fakes, pi, target=target, rng=[0, n, fakes])
    page = " ".join(texts(at))
    assert f"with the fakes, {fmt_pct(one.manipulated, 1)}." in page
    assert ("The check finds nothing wrong" if one.check.fits
            else "The check raises the alarm") in page
    assert len(nodes(at, "vega_lite_chart")) == 2


def test_stealthy_fakes_weigh_one_and_are_never_caught():
    at = _manipulation(stealthy=True, n=100, pi=0.3, fakes=100)
    check_page(at)
    assert metric(at, "Weight of one fake report") == "1.00"
    assert metric(at, "With the fakes") == fmt_pct(0.3 + 0.5 * 0.7, 1)
    assert metric(at, "Fakes the check catches half the time") == "never"
    assert metric(at, "Chance of an alarm now") == "< 0.1%"


def test_past_the_blind_zone_the_simulated_class_raises_the_alarm():
    at = _manipulation(n=100, pi=0.3, fakes=600)
    check_page(at)
    assert "The check raises the alarm" in " ".join(texts(at))
    assert metric(at, "Chance of an alarm now") == "100.0%"
    at.button(key="manip_new_class").click().run()  # another class: still caught
    assert "The check raises the alarm" in " ".join(texts(at))


def test_manipulation_every_slider_extreme():
    at = _manipulation()
    runs = sweep(at, ["manip_n", "manip_pi", "manip_fakes", "manip_stealthy"])
    for kind in ("grr", "oue"):
        at.radio(key="manip_design").set_value(kind).run()
        runs += sweep(at, ["manip_d", "manip_pi", "manip_fakes"],
                      {"manip_d": [2, 20], "manip_pi": [0.0, 1.0], "manip_fakes": [0, 2000]})
        widget(at, "manip_eps").set_value(4.0).run()
        check_page(at)
        widget(at, "manip_eps").set_value(0.5).run()
        check_page(at)
    assert runs >= 20


# -- several questions under one budget (on the randomized response explorer) ---------------------

@pytest.mark.parametrize("d", [2, 3, 10])
def test_rr_survey_table_matches_ldp_core(d):
    from ldp_core import SURVEY_MODES, survey_privacy, survey_variance_unit

    at = page_app("study_rr")
    at.session_state["rr_questions"] = d
    at.run()
    check_page(at)
    eps, n, mu = GammaRR(0.25).epsilon, 100, 0.6
    table = next(t.value for t in nodes(at, "dataframe") if "each phone" in t.value.columns)
    assert table["ε spent"].tolist() == [fmt_eps_value(eps)] * 3
    assert table["ε of one answer"].tolist() == [
        fmt_eps_value(survey_privacy(m, eps, d).per_answer) for m in SURVEY_MODES]
    units = [survey_variance_unit(m, eps, d, mu, n=n if m == "sample" else None)
             for m in SURVEY_MODES]
    assert table["n·Var"].tolist() == [fmt(u, 3) for u in units]
    assert table["SD of μ̂"].tolist() == [fmt_fixed(math.sqrt(u / n), 3) for u in units]
    for text, unit in zip(table["SD, simulated"], units, strict=True):
        sim, se = (float(x) for x in text.split(" ± "))
        assert abs(sim - math.sqrt(unit / n)) <= 4 * se + 0.0005  # shown to 3 decimals
    assert "sampling wins below ε =" in " ".join(texts(at))


def test_rr_survey_section_with_no_privacy_or_one_student():
    at = page_app("study_rr")
    at.session_state["rr_n"] = 1
    at.run()
    check_page(at)
    assert "at least 2 to compare" in " ".join(texts(at))
    at = page_app("study_rr").run()
    assert sweep(at, ["rr_questions"]) == 3  # d = 2, d = 10, and back


# -- the audit lab --------------------------------------------------------------------------------

def _audit(**state) -> AppTest:
    at = page_app("study_audit")
    for key, value in state.items():
        at.session_state[f"audit_{key}"] = value
    return at.run()


def test_audit_defaults_match_ldp_core():
    from classroom.audits import audit_verdict
    from ldp_core import audit_distribution, audit_epsilon

    at = _audit()
    check_page(at)
    design, n = EpsilonRR(1.1), 100
    rng = np.random.default_rng(2024)
    k1, k0 = int(rng.binomial(n, design.a)), int(rng.binomial(n, design.b))
    lower = audit_epsilon(k1, n, k0, n)
    assert metric(at, "Shown 1, reported 1") == f"{k1}/100"
    assert metric(at, "Shown 0, reported 1") == f"{k0}/100"
    assert metric(at, "ε_LB, measured from below") == fmt_eps_allowed(lower)
    assert metric(at, "ε promised") == "1.10"
    dist = audit_distribution(design.a, design.b, n)
    assert metric(at, "Median ε_LB") == fmt_eps_allowed(dist.median()) == "0.68"
    assert metric(at, "False alarms") == fmt_pct(dist.exceeds(1.1), 2)
    verdict = audit_verdict(lower, 1.1, n, n)
    assert verdict.level == "consistent"
    assert any(verdict.sentence in b.value for b in at.success)
    assert len(nodes(at, "vega_lite_chart")) == 3


def test_audit_lab_catches_the_cheat():
    """The phone build that claims ln 3 and keeps the truth w.p. 0.9: caught 99.9% of the
    time at N = 100, and about 77 runs per input catch it 99% of the time."""
    from ldp_core import audit_distribution

    at = _audit(phones="cheat", promise=1.1)
    check_page(at)
    assert metric(at, "The phones' true ε") == fmt_eps_value(math.log(9))
    assert metric(at, "Caught: ε_LB above the promise") == fmt_pct(
        audit_distribution(0.9, 0.1, 100).exceeds(1.1), 2) == "99.91%"
    page = " ".join(texts(at))
    assert "This cheat is caught 99% of the time from about" in page
    assert at.error and "Caught: these phones leak more than they promise" in at.error[0].value


def test_audit_lab_new_audit_draws_new_counts():
    design = EpsilonRR(1.1)
    at = _audit(n=1000)
    at.button[0].click().run()
    check_page(at)
    assert at.session_state["audit_seed"] == 2025
    k1 = int(np.random.default_rng(2025).binomial(1000, design.a))
    assert metric(at, "Shown 1, reported 1") == f"{fmt_count(k1)}/1,000"


def test_audit_lab_a_cheat_that_keeps_its_promise_says_so():
    at = _audit(phones="cheat", keep=0.6, promise=2.0)
    check_page(at)
    assert "This 'cheat' keeps its promise" in " ".join(texts(at))


def test_audit_lab_every_control_extreme():
    at = _audit()
    runs = sweep(at, ["audit_promise", "audit_n"], {"audit_n": [10, 10_000]})
    at.radio(key="audit_phones").set_value("cheat").run()
    runs += sweep(at, ["audit_keep", "audit_promise", "audit_n"], {"audit_n": [10, 10_000]})
    assert runs >= 10
