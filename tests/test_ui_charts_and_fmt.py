"""ui.charts and ui.fmt: every chart template is valid Vega-Lite, and no formatter ever
prints "nan" or "inf"."""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ui import charts
from ui import fmt as F

BAD = re.compile(r"(?<![\w])(-?nan|-?inf|-?infinity)(?![\w])", re.IGNORECASE)
SPECIAL = [None, math.nan, math.inf, -math.inf, np.nan, np.float64("inf"), "text", True]
ORDINARY = [0, 0.0, -0.0, 1, -1, 0.5, -1 / 3, 1e-12, 2.5e-7, 123.456, 999.96, 1e6, -2.5e9,
            1e300, np.int64(3770), np.float32(0.25)]
FORMATTERS = [F.fmt, F.fmt_fixed, F.fmt_count, F.fmt_pct, F.fmt_pvalue, F.fmt_eps, F.fmt_ratio]


# -- fmt -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("func", FORMATTERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("value", SPECIAL + ORDINARY, ids=repr)
def test_formatters_never_print_nan_or_inf(func, value):
    text = func(value)
    assert isinstance(text, str) and text
    assert not BAD.search(text), text


def test_formatting_examples():
    assert F.fmt(None) == "—" and F.fmt(math.nan) == "—"
    assert F.fmt(math.inf) == "∞" and F.fmt(-math.inf) == "−∞"
    assert F.fmt(0.0866025) == "0.0866"
    assert F.fmt(489712.3) == "489,712"
    assert F.fmt_fixed(-0.0004, 3) == "0.000"  # no "−0.000"
    assert F.fmt_count(-81.6) == "−82"
    assert F.fmt_pct(0.75) == "75.0%"
    assert F.fmt_interval(0.1, 0.25) == "[0.100, 0.250]"
    assert F.fmt_interval(None, 0.25) == "—"
    assert F.fmt_pvalue(0.0001) == "< 0.001"
    assert F.fmt_eps(math.log(3)) == "ε = 1.10"
    assert F.fmt_eps(math.inf) == "ε = ∞"
    assert F.fmt_ratio(3.0) == "×3"
    assert F.is_number(1.5) and not F.is_number(math.nan) and not F.is_number(None)


# -- charts -----------------------------------------------------------------------------------

def _all_figures() -> dict[str, charts.Figure]:
    grid = np.linspace(0, 1, 11)
    return {
        "bar_counts": charts.bar_counts(["a", "b", "c"], [3, -1, 0], text=["3", "−1", "0"],
                                        highlight=["a"], title="t", value_title="people"),
        "compare_bars": charts.compare_bars(["a", "b"], {"true": [1, 2], "est": [1.5, -0.2]},
                                            colors={"true": charts.TRUTH,
                                                    "est": charts.LOCAL}),
        "estimate_with_ci": charts.estimate_with_ci(["x", "y"], [0.5, 0.6], [0.4, 0.5],
                                                    [0.6, 0.7], truth=0.55,
                                                    domain=(0.0, 1.0)),
        "channel_heatmap": charts.channel_heatmap([[0.75, 0.25], [np.nan, np.nan]],
                                                  ["no", "yes"], ["no", "yes"]),
        "sampling_distribution": charts.sampling_distribution(
            np.random.default_rng(0).normal(0.5, 0.1, 500), truth=0.5, mean=0.5, sd=0.1),
        "sampling_discrete": charts.sampling_distribution([-0.5, 1.5, 1.5], truth=1.0,
                                                          mean=1.0, sd=0.87),
        "histogram": charts.histogram(np.arange(100.0), rules={"scale": 50.0, "none": None}),
        "line_chart": charts.line_chart([1, 10, 100], {"a": [1, 0.3, 0.1], "b": [1, 0.1, 0.0],
                                                       "c": [2, 0.2, np.nan]},
                                        colors={"a": charts.LOCAL, "b": charts.CENTRAL,
                                                "c": charts.THEORY},
                                        points=["a"], dashed=["c"], log_x=True, log_y=True,
                                        marker=(10, 0.3, "here")),
        "loglik_curve": charts.loglik_curve(grid, np.where(grid < 1, -(grid - 0.3) ** 2, -np.inf),
                                            mle=0.3, interval=(0.1, 0.5), cutoff=-0.04,
                                            mu0=0.6),
        "posterior_chart": charts.posterior_chart(grid, grid, grid ** 2, grid / 2,
                                                  np.sqrt(grid), current_prior=0.5),
        "sd_bars": charts.sd_bars(["local", "central"], [0.17, 0.05], [0.171, 0.049],
                                  [0.001, 0.0005], colors=[charts.LOCAL, charts.CENTRAL],
                                  text=["0.170", "0.0500"], sim_text=["0.171 ± 0.001",
                                                                      "0.0490 ± 0.0005"]),
    }


@pytest.mark.parametrize("name", list(_all_figures()))
def test_every_template_is_valid_vega_lite(name):
    fig = _all_figures()[name]
    fig.validate()  # raises on a schema violation
    spec = fig.to_dict()
    assert spec["autosize"]["type"] == "fit-x"
    json.dumps(spec, allow_nan=False)  # no NaN/inf reaches the browser
    assert any(rows for rows in spec["datasets"].values())
    assert fig.to_altair().to_dict(validate=False)["datasets"] == spec["datasets"]


def test_non_finite_inputs_are_dropped_or_refused():
    lc = _all_figures()["line_chart"]
    assert all(r["y"] > 0 for r in lc.values("solid") + lc.values("points") + lc.values("dashed"))
    ll = _all_figures()["loglik_curve"]
    assert len(ll.values("curve")) == 10  # mu = 1 has log-likelihood -inf: not drawn
    with pytest.raises(ValueError):
        charts.bar_counts(["a"], [math.nan])
    with pytest.raises(ValueError):
        charts.sampling_distribution([0.1, math.inf])
    post = charts.posterior_chart([0.0, 1.0], [math.nan, 1.0], [0.0, math.nan], [0, 1], [0, 1])
    assert len(post.values("lines")) == 2


def test_templates_are_reused_across_reruns():
    a = charts.bar_counts(["x", "y"], [1, 2], title="n = 10")
    b = charts.bar_counts(["x", "y"], [5, 6], title="n = 20", subtitle="new")
    assert a.template is b.template  # built once; only the data and the title change
    assert a.values("bars") != b.values("bars")
    assert a.to_dict()["title"] == {"text": "n = 10", "subtitle": ""}
    assert b.to_dict()["title"] == {"text": "n = 20", "subtitle": "new"}
    assert "title" not in charts.bar_counts(["x"], [1]).to_dict()


def test_local_and_central_colours_are_distinct_and_fixed():
    assert charts.LOCAL != charts.CENTRAL
    assert (charts.LOCAL, charts.CENTRAL) == ("#D55E00", "#0072B2")


def test_fmt_doctests():
    import doctest

    assert doctest.testmod(F).failed == 0
