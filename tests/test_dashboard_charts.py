"""ui.live_charts: valid Vega-Lite, no NaN in the data, cheap redraws, projector sizes."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import ldp_core
from ui import live_charts as lc

COUNTS = ldp_core.BinaryCounts.single(ldp_core.DieRR(4, 3), yes=30, n=40)
GRID = np.linspace(0, 1, 201)


def figures():
    b = COUNTS.summary()
    return {
        "reported": lc.reported_counts(["Chocolate", "Vanilla"], [10, 30]),
        "trace": lc.estimate_trace([{"n": 1, "mu": 1.5, "lo": -0.2, "hi": 3.2},
                                    {"n": 2, "mu": None, "lo": None, "hi": None},
                                    {"n": 40, "mu": b.mu_hat, "lo": b.ci_low, "hi": b.ci_high}]),
        "loglik": lc.log_likelihood(GRID, COUNTS.log_likelihood(GRID),
                                    top=COUNTS.log_likelihood(b.mle), mle=b.mle,
                                    lr_low=b.lr_low, lr_high=b.lr_high,
                                    critical=ldp_core.chi2_1_quantile(0.95)),
        "rounds": lc.estimate_by_round([{"round": 1, "n": 40, "mu": 1.0, "lo": 0.73, "hi": 1.27},
                                        {"round": 2, "n": 0, "mu": None, "lo": None,
                                         "hi": None},
                                        {"round": 3, "n": 9, "mu": 0.2, "lo": -0.4, "hi": 0.8}]),
        "histogram": lc.histogram(["A", "B", "C"], {"raw": [0.6, -0.1, 0.5],
                                                    "clipped": [0.6, 0.0, 0.5],
                                                    "norm-sub": [0.55, 0.0, 0.45]},
                                  [0.3, -0.4, 0.2], [0.9, 0.2, float("nan")]),
        "sd": lc.sd_vs_epsilon([(e, 1 / e) for e in np.linspace(0.1, 5, 50)],
                               [("current design", math.log(3), 0.137),
                                ("what-if design", float("inf"), 0.1)]),
    }


@pytest.mark.parametrize("name", list(figures()))
def test_every_chart_is_valid_vega_lite_without_nan(name):
    fig = figures()[name]
    fig.validate()
    text = json.dumps(fig.to_dict(), allow_nan=False)  # raises on NaN / infinity
    assert "NaN" not in text
    big = lc._enlarge(fig.to_dict())
    assert big["config"]["axis"]["labelFontSize"] >= 20


def test_non_finite_values_are_left_out():
    figs = figures()
    assert [r["n"] for r in figs["trace"].values("trace")] == [1, 40]
    assert len(figs["histogram"].values("err")) == 2
    assert [m["label"] for m in figs["sd"].values("marks")] == ["current design"]
    rows = figs["loglik"].values("curve")
    assert rows and all(-8 <= r["value"] <= 1e-9 for r in rows)
    assert lc.estimate_by_round([{"round": 1, "n": 0, "mu": None, "lo": None,
                                  "hi": None}]) is None


def test_trajectory_holds_the_unit_interval_and_marks_estimates_beyond_it():
    """The first reports of a small class can give μ̂ = 3.5: the axis still shows [0, 1]
    with a margin, and that point sits at the edge, marked, with its value in the tooltip."""
    fig = lc.estimate_trace([{"n": 1, "mu": 3.5, "lo": 1.2, "hi": 5.8},
                             {"n": 2, "mu": -0.5, "lo": -2.0, "hi": 1.0},
                             {"n": 40, "mu": 0.55, "lo": 0.28, "hi": 0.82}])
    spec = fig.to_dict()
    domains = {json.dumps(enc["y"]["scale"]["domain"]) for layer in spec["layer"]
               for enc in [layer["encoding"]] if "scale" in enc.get("y", {})}
    assert domains == {json.dumps(list(lc.TRACE_Y))}
    assert lc.TRACE_Y[0] < 0 and lc.TRACE_Y[1] > 1
    trace = fig.values("trace")
    assert [r["mu_plot"] for r in trace] == [lc.TRACE_Y[1], lc.TRACE_Y[0], 0.55]
    assert [r["mu"] for r in trace] == [3.5, -0.5, 0.55]  # the tooltip keeps the value
    assert [(r["n"], r["side"]) for r in fig.values("beyond")] == [(1, "above"), (2, "below")]
    assert all(lc.TRACE_Y[0] <= r[k] <= lc.TRACE_Y[1] for r in trace
               for k in ("lo_plot", "hi_plot"))


@pytest.mark.parametrize("n", [1, 40, 1000, 10**6])
def test_the_what_if_axis_reads_in_round_numbers(n):
    """The SD axis is labelled at 1, 2 and 5 times powers of ten (not 3, 1, 0.2, 0.03),
    at least three labels, and they span the curve."""
    curve = [(float(e), ldp_core.BinaryCounts.single(ldp_core.EpsilonRR(float(e)), 0, n)
              .sd_worst()) for e in np.linspace(0.1, 5.0, 60)]
    fig = lc.sd_vs_epsilon(curve, [("current design", math.log(3), 0.137 * math.sqrt(40 / n))])
    fig.validate()
    axis = next(layer["encoding"]["y"]["axis"] for layer in fig.to_dict()["layer"]
                if "axis" in layer["encoding"]["y"])
    ticks = axis["values"]
    assert len(ticks) >= 3
    for t in ticks:
        mantissa = t / 10 ** math.floor(math.log10(t))
        assert round(mantissa, 9) in (1, 2, 5), ticks
    sds = [s for _, s in curve] + [0.137 * math.sqrt(40 / n)]
    assert min(sds) <= ticks[0] and ticks[-1] <= max(sds)  # on the drawn range...
    assert ticks[-1] / ticks[0] >= max(sds) / min(sds) / 10  # ...and across most of it


def test_what_the_phones_sent_stands_on_zero_in_wide_bars():
    """Duchi et al.'s reports on [0, 12] at ε = ln 3 are −6 or 18 hours: the two bars
    rise from 0 (an axis from zero, each bar's foot at 0), so 20 reports look twice 10,
    and each bar is at least a thirtieth of the chart wide, readable from the back."""
    fig = lc.numeric_reports([(-6.0, 10), (18.0, 20)], 0.0, 12.0, 10.0, unit="hours")
    spec = fig.to_dict()
    bars = next(layer for layer in spec["layer"] if layer["data"]["name"] == "bars")
    assert bars["encoding"]["y2"] == {"datum": 0}
    assert bars["encoding"]["y"]["scale"]["zero"] is True
    data = spec["datasets"]["bars"]
    assert sorted(row["count"] for row in data) == [10, 20]
    span = 18.0 - (-6.0)
    assert all(row["x1"] - row["x0"] >= span / 30 for row in data)


def test_the_projector_caps_a_main_chart_and_keeps_its_legend_on_screen():
    """On the projector a main chart's plot area is at most PROJECTOR_MAIN_HEIGHT, every
    font is 24 px or more, and a legend takes two columns at most."""
    spec = lc._enlarge(figures()["histogram"].to_dict())
    assert spec["config"]["legend"]["columns"] == 2
    assert spec["config"]["axis"]["labelFontSize"] >= 24
    assert lc.PROJECTOR_MAIN_HEIGHT <= 180


def test_many_options_are_all_labelled():
    """Fourteen occupations on the projector: every label is drawn (slanted), none dropped
    for overlap; on a narrow desk screen Vega may leave some out rather than overprint."""
    options = [f"occupation {i}" for i in range(14)]
    fig = lc.histogram(options, {"raw": [1 / 14] * 14}, [0.0] * 14, [0.2] * 14,
                       every_label=True)
    axis = next(layer["encoding"]["x"]["axis"] for layer in fig.to_dict()["layer"]
                if "axis" in layer["encoding"].get("x", {}))
    assert axis["labelOverlap"] is False and axis["labelAngle"] < 0
    desk = lc.histogram(options, {"raw": [1 / 14] * 14}, [0.0] * 14, [0.2] * 14)
    axis = next(layer["encoding"]["x"]["axis"] for layer in desk.to_dict()["layer"]
                if "axis" in layer["encoding"].get("x", {}))
    assert axis["labelOverlap"] is True and axis["labelAngle"] < 0


@pytest.mark.parametrize("name", sorted(figures()))
def test_the_projector_keeps_tick_labels_apart(name):
    """At 24 px the labels of a tick every 5 reports ran into each other at 1280×720: on
    the projector every axis keeps a gap between its labels and drops what would crowd."""
    axis = lc._enlarge(figures()[name].to_dict())["config"]["axis"]
    assert axis["labelSeparation"] >= 8 and axis["labelFontSize"] >= 24
