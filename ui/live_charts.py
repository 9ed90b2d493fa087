"""Charts of the instructor dashboard, on top of :mod:`ui.charts`.

The live panel redraws every 2 s, so its charts must be cheap: like
:mod:`ui.charts`, each chart's structure is built with Altair once, frozen to
Vega-Lite JSON and memoised; a redraw only fills in the named datasets
(building and validating an Altair chart from scratch costs a quarter of a
second per chart). Where a shared builder fits, it is used as it is:

* :func:`reported_counts`: ``charts.bar_counts``;
* :func:`log_likelihood`: ``charts.loglik_curve``, relative to its maximum;
* :func:`estimate_by_round`: ``charts.estimate_with_ci``.

Dashboard-only charts are built here: :func:`estimate_trace` (μ̂ and its CI as
reports arrive), :func:`histogram` (raw, clipped and Norm-Sub shares with error
bars), :func:`numeric_reports` (what the phones sent for a number, against the
range of true answers) and :func:`sd_vs_epsilon` (the what-if curve).

:func:`show` draws a figure; ``big=True`` enlarges every font for the
projector. Values that are None, NaN or infinite are left out of a chart,
never drawn.

Colours follow :mod:`ui.charts`: randomized reports and estimates from them
in the local-model colour, the MLE, likelihood interval and what-if design in
the highlight colour; the two post-processed histograms get two further
Okabe–Ito colours.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache

import altair as alt
import numpy as np

from ui import charts
from ui.charts import Figure, quant
from ui.fmt import is_number

__all__ = [
    "CLIPPED",
    "ESTIMATE",
    "HIGHLIGHT",
    "NORM_SUB",
    "PROJECTOR_MAIN_HEIGHT",
    "REPORTED",
    "estimate_by_round",
    "estimate_trace",
    "histogram",
    "log_likelihood",
    "numeric_reports",
    "reported_counts",
    "sd_vs_epsilon",
    "show",
]

REPORTED = charts.LOCAL
ESTIMATE = charts.ESTIMATE
HIGHLIGHT = charts.HIGHLIGHT
CLIPPED = "#CC79A7"
NORM_SUB = "#009E73"
_THEORY = charts.THEORY
_TEMPLATES = 128
_BIG_FONT = 24
#: The least gap (px) between two tick labels of an axis on the projector.
_LABEL_GAP = 12
#: The plot height (px) of a main chart on the projector: with the question, the key
#: numbers and the control bar it fits a 1280×720 screen.
PROJECTOR_MAIN_HEIGHT = 170


def _freeze(chart: alt.TopLevelMixin) -> str:
    """The house style of :mod:`ui.charts`, with the legend's entries side by side and no
    outline around the plot area."""
    return charts.freeze(chart, legend_columns=None, frame=False)


def _enlarge(spec: dict) -> dict:
    """Projector sizes: every axis, legend and title font at 24 px or more (readable from
    the back of a lecture hall); the height stays, so both charts fit one screen."""
    config = spec.setdefault("config", {})
    # At 24 px, ticks every 5 reports run into each other ("3035 40" at 1280): a label
    # keeps a gap of its own from the next, and Vega leaves out what would come closer.
    config.setdefault("axis", {}).update(labelFontSize=_BIG_FONT, titleFontSize=_BIG_FONT + 2,
                                         labelSeparation=_LABEL_GAP)
    # Two columns at most: at 24 px three entries side by side overrun a 1280 px screen.
    config.setdefault("legend", {}).update(labelFontSize=_BIG_FONT, titleFontSize=_BIG_FONT,
                                           columns=2)
    config.setdefault("title", {}).update(fontSize=_BIG_FONT + 4, subtitleFontSize=_BIG_FONT)
    for layer in spec.get("layer", []):
        mark = layer.get("mark")
        if isinstance(mark, dict) and mark.get("type") == "text":
            mark["fontSize"] = _BIG_FONT
    return spec


def show(fig: Figure, *, big: bool = False, max_height: int | None = None) -> None:
    """Draw ``fig`` at full container width; ``big`` for the projector, where
    ``max_height`` (px, the plot area) keeps a main chart on the first screen."""
    import streamlit as st

    spec = fig.to_dict()
    if big:
        spec = _enlarge(spec)
        if max_height is not None and isinstance(spec.get("height"), (int, float)):
            spec["height"] = min(spec["height"], max_height)
    st.vega_lite_chart(spec, width="stretch")
    if not big:  # the projector shows the numbers as text beside its charts
        charts.as_text(spec)


# -- built on ui.charts --------------------------------------------------------------------


def reported_counts(labels: Sequence[str], counts: Sequence[int], *,
                    value_title: str = "reports received") -> Figure:
    """One bar per option: how many randomized reports said (or supported) it."""
    values = [int(c) for c in counts]
    return charts.bar_counts(list(labels), values, value_title=value_title, color=REPORTED,
                             text=[f"{v:,}" for v in values], height=44 * len(values) + 10)


def log_likelihood(mu: Sequence[float] | np.ndarray, values: Sequence[float] | np.ndarray, *,
                   top: float,
                   mle: float | None, lr_low: float | None, lr_high: float | None,
                   critical: float, level: float = 0.95, floor: float = -8.0) -> Figure:
    """``l(mu) - l(MLE)`` over mu in [0, 1], the LR interval shaded, the cut-off ``-critical/2``.

    Points below ``floor`` (and impossible shares, ``-inf``) are left out so the
    interesting part near the maximum fills the chart.
    """
    rel = np.asarray(values, dtype=float) - float(top)
    with np.errstate(invalid="ignore"):
        rel = np.where(np.isfinite(rel) & (rel >= floor), rel, np.nan)
    interval = (float(lr_low), float(lr_high)) if is_number(lr_low) and is_number(lr_high) else None
    return charts.loglik_curve(
        mu, rel, y_title="ℓ(μ) − ℓ(MLE)", mle=float(mle) if is_number(mle) else None,
        interval=interval, interval_label=f"{level:.0%} likelihood-ratio interval",
        cutoff=-critical / 2, cutoff_label=f"cut-off −χ²₁({level:g})/2 = {-critical / 2:.2f}",
        height=240)


def estimate_by_round(rows: Sequence[Mapping[str, object]], *, level: float = 0.95
                      ) -> Figure | None:
    """Each round's μ̂ with its normal CI (``rows``: round, n, mu, lo, hi); None if no round
    has an estimate yet. The axis always shows [0, 1] and stretches to any interval end
    outside it."""
    ok = [r for r in rows
          if is_number(r.get("mu")) and is_number(r.get("lo")) and is_number(r.get("hi"))]
    if not ok:
        return None
    lows = [float(r["lo"]) for r in ok]  # type: ignore[arg-type]  # is_number() above
    highs = [float(r["hi"]) for r in ok]  # type: ignore[arg-type]  # is_number() above
    # Quarter steps keep the number of distinct chart templates small.
    domain = (min(0.0, math.floor(min(lows) * 4) / 4), max(1.0, math.ceil(max(highs) * 4) / 4))
    return charts.estimate_with_ci(
        [f"round {r['round']}" for r in ok], [r["mu"] for r in ok], lows, highs,
        value_title=f"μ̂ and {level:.0%} CI", colors=[ESTIMATE] * len(ok), domain=domain)


# -- dashboard-only charts -----------------------------------------------------------------


#: The trajectory chart's y range: [0, 1] with a margin. Estimates beyond it (a small class's
#: first reports can give μ̂ = 3.5) are drawn at the edge and marked, so they never squash
#: the rest of the chart.
TRACE_Y = (-0.1, 1.1)


@lru_cache(maxsize=_TEMPLATES)
def _trace_tpl(y_title: str, height: int) -> str:
    x = alt.X(**quant("n", "reports received (n)"), axis=alt.Axis(tickMinStep=1, format="d"))
    scale = alt.Scale(domain=list(TRACE_Y), clamp=True, nice=False)
    data = alt.Chart(alt.NamedData(name="trace"))
    band = data.mark_area(color=ESTIMATE, opacity=0.18).encode(
        x=x, y=alt.Y(**quant("lo_plot", y_title), scale=scale), y2=alt.Y2(field="hi_plot"))
    whiskers = data.mark_rule(color=ESTIMATE, opacity=0.5, strokeWidth=2).encode(
        x=x, y=alt.Y(**quant("lo_plot"), scale=scale), y2=alt.Y2(field="hi_plot"))
    tooltip = [alt.Tooltip(field="n", type="quantitative", title="n"),
               alt.Tooltip(field="mu", type="quantitative", title="μ̂", format=".3f"),
               alt.Tooltip(field="lo", type="quantitative", title="CI low", format=".3f"),
               alt.Tooltip(field="hi", type="quantitative", title="CI high", format=".3f")]
    line = data.mark_line(color=ESTIMATE, strokeWidth=3,
                          point=alt.OverlayMarkDef(color=ESTIMATE, size=50)).encode(
        x=x, y=alt.Y(**quant("mu_plot"), scale=scale), tooltip=tooltip)
    beyond = alt.Chart(alt.NamedData(name="beyond")).mark_point(
        filled=True, size=160, color=HIGHLIGHT).encode(
        x=x, y=alt.Y(**quant("mu_plot"), scale=scale),
        shape=alt.Shape(field="side", type="nominal", legend=None,
                        scale=alt.Scale(domain=["above", "below"],
                                        range=["triangle-up", "triangle-down"])),
        tooltip=tooltip)
    edges = alt.Chart(alt.NamedData(name="edges")).mark_rule(
        color=_THEORY, strokeDash=[6, 4], opacity=0.6).encode(y=alt.Y(**quant("y"), scale=scale))
    return _freeze(alt.layer(band, whiskers, edges, line, beyond).properties(height=height))


def _clip(value: float) -> float:
    return min(max(value, TRACE_Y[0]), TRACE_Y[1])


def estimate_trace(rows: Sequence[Mapping[str, object]], *, level: float = 0.95) -> Figure:
    """μ̂ and its CI at each number of reports seen (``rows``: n, mu, lo, hi).

    The y axis holds [0, 1] with a margin (:data:`TRACE_Y`); dashed lines at 0 and 1
    mark where a share can lie. A μ̂ beyond the axis is drawn at its edge as a
    triangle pointing the way it went (``beyond``), with its value in the tooltip.
    """
    data = []
    for r in rows:
        if not (is_number(r.get("mu")) and is_number(r.get("lo")) and is_number(r.get("hi"))):
            continue
        # is_number() above; "n" is a count.
        mu, lo, hi = float(r["mu"]), float(r["lo"]), float(r["hi"])  # type: ignore[arg-type]
        data.append({"n": int(r["n"]), "mu": mu, "lo": lo, "hi": hi,  # type: ignore[call-overload]
                     "mu_plot": _clip(mu), "lo_plot": _clip(lo), "hi_plot": _clip(hi),
                     "side": "above" if mu > TRACE_Y[1] else "below" if mu < TRACE_Y[0]
                     else None})
    beyond = [d for d in data if d["side"] is not None]
    return Figure(_trace_tpl(f"μ̂ and {level:.0%} CI", 240),
                  {"trace": data, "beyond": beyond, "edges": [{"y": 0.0}, {"y": 1.0}]})


@lru_cache(maxsize=_TEMPLATES)
def _histogram_tpl(options: tuple, names: tuple, height: int, every_label: bool) -> str:
    # Upright labels while they fit side by side. Many options (the 14 occupations): on
    # the projector (``every_label``, at least 1280 px wide) slanted, each one drawn;
    # at the desk, whose width may be a phone's, upright on end, where they fit even at
    # 390 px (and Vega leaves out any that would still overlap).
    many = len(options) > 6 or sum(len(o) for o in options) > 60
    angle = (-35 if every_label else -90) if many else 0
    x = alt.X(field="option", type="nominal", sort=list(options), title=None,
              axis=alt.Axis(labelAngle=angle, labelLimit=260,
                            labelOverlap=False if every_label else True))
    offset = alt.XOffset(field="series", type="nominal", sort=list(names),
                         scale=alt.Scale(domain=list(names)))
    # On the projector the series side by side in one row of the legend.
    colour = alt.Color(field="series", type="nominal", sort=list(names), title=None,
                       scale=alt.Scale(domain=list(names), range=[ESTIMATE, CLIPPED, NORM_SUB]),
                       legend=alt.Legend(columns=len(names)) if every_label else alt.Undefined)
    bars = alt.Chart(alt.NamedData(name="bars")).mark_bar().encode(
        x=x, xOffset=offset, y=alt.Y(**quant("share", "estimated share")), color=colour,
        tooltip=[alt.Tooltip(field="option", type="nominal"),
                 alt.Tooltip(field="series", type="nominal"),
                 alt.Tooltip(field="share", type="quantitative", format=".3f")])
    err = alt.Chart(alt.NamedData(name="err")).mark_rule(color=_THEORY, strokeWidth=2).encode(
        x=x, xOffset=offset, y=alt.Y(**quant("lo")), y2=alt.Y2(field="hi"))
    zero = alt.Chart(alt.NamedData(name="zero")).mark_rule(color=_THEORY).encode(
        y=alt.Y(**quant("y")))
    return _freeze(alt.layer(bars, err, zero).properties(height=height))


def histogram(options: Sequence[str], shares: Mapping[str, Sequence[float | None]],
              raw_low: Sequence[float | None], raw_high: Sequence[float | None], *,
              every_label: bool = False) -> Figure:
    """Estimated share of each option for three named series (raw, clipped, Norm-Sub, in
    that order), with each option's interval ``[raw_low, raw_high]`` drawn on the raw
    series (the dashboard's exact CI); ``every_label`` labels every option even if
    labels would touch (the projector)."""
    names = tuple(shares)
    opts = tuple(str(o) for o in options)
    bars = [{"option": o, "series": name, "share": float(v)}
            for name in names for o, v in zip(opts, shares[name], strict=True) if is_number(v)]
    err = [{"option": o, "series": names[0], "lo": float(lo), "hi": float(hi)}
           for o, lo, hi in zip(opts, raw_low, raw_high, strict=True)
           if is_number(lo) and is_number(hi)]
    return Figure(_histogram_tpl(opts, names, 260, every_label),
                  {"bars": bars, "err": err, "zero": [{"y": 0.0}]})


@lru_cache(maxsize=_TEMPLATES)
def _sd_tpl(labels: tuple, y_title: str, height: int, ticks: tuple) -> str:
    line = alt.Chart(alt.NamedData(name="curve")).mark_line(color=_THEORY, strokeWidth=2).encode(
        x=alt.X(**quant("eps", "ε (privacy loss per student)")),
        y=alt.Y(**quant("sd", y_title), scale=alt.Scale(type="log"),
                axis=alt.Axis(values=list(ticks), format="~g") if ticks else alt.Undefined))
    colour = alt.Color(field="label", type="nominal", title=None, sort=list(labels),
                       scale=alt.Scale(domain=list(labels),
                                       range=[ESTIMATE, HIGHLIGHT][: len(labels)]))
    dots = alt.Chart(alt.NamedData(name="marks")).mark_point(filled=True, size=200,
                                                             opacity=1).encode(
        x=alt.X(**quant("eps")), y=alt.Y(**quant("sd")), color=colour,
        tooltip=[alt.Tooltip(field="label", type="nominal"),
                 alt.Tooltip(field="eps", type="quantitative", title="ε", format=".2f"),
                 alt.Tooltip(field="sd", type="quantitative", title="SD", format=".3f")])
    return _freeze(alt.layer(line, dots).properties(height=height))


def sd_vs_epsilon(curve: Sequence[tuple[float, float | None]],
                  marks: Sequence[tuple[str, float, float | None]]) -> Figure:
    """The worst-case SD at a fixed n against ε (``curve``: (ε, SD) pairs), with
    labelled points ``marks``: (label, ε, SD), e.g. the current and the what-if design."""
    pts = [(str(lb), float(e), float(s)) for lb, e, s in marks
           if is_number(e) and is_number(s) and s > 0]
    rows = [{"eps": float(e), "sd": float(s)} for e, s in curve
            if is_number(e) and is_number(s) and s > 0]
    sds = [r["sd"] for r in rows] + [p[2] for p in pts]
    ticks = charts.log_ticks(min(sds), max(sds)) if sds else ()
    return Figure(_sd_tpl(tuple(p[0] for p in pts), "worst-case SD of μ̂", 240, ticks), {
        "curve": rows, "marks": [{"label": lb, "eps": e, "sd": s} for lb, e, s in pts]})


@lru_cache(maxsize=_TEMPLATES)
def _numeric_tpl(x_title: str, height: int) -> str:
    band = alt.Chart(alt.NamedData(name="range")).mark_rect(color=charts.CENTRAL,
                                                              opacity=0.15).encode(
        x=alt.X(**quant("lo")), x2=alt.X2(field="hi"))
    # Each bar stands on zero (y2): its height is the number of reports in its bin, read
    # against an axis that starts at 0, so a bin of 20 reports looks twice one of 10.
    bars = alt.Chart(alt.NamedData(name="bars")).mark_bar(color=REPORTED).encode(
        x=alt.X(**quant("x0", x_title)), x2=alt.X2(field="x1"),
        y=alt.Y(**quant("count", "reports"), scale=alt.Scale(zero=True, nice=True)),
        y2=alt.Y2Datum(0),
        tooltip=[alt.Tooltip(field="x0", type="quantitative", title="from", format=".3~g"),
                 alt.Tooltip(field="x1", type="quantitative", title="to", format=".3~g"),
                 alt.Tooltip(field="count", type="quantitative", title="reports")])
    mean = alt.Chart(alt.NamedData(name="mean")).mark_rule(color=_THEORY, strokeWidth=3,
                                                           strokeDash=[6, 3]).encode(
        x=alt.X(**quant("x")))
    return _freeze(alt.layer(band, bars, mean).properties(height=height))


def numeric_reports(reports: Sequence[tuple[float, int]], lo: float, hi: float,
                    mean: float | None, *, unit: str = "", bins: int = 24) -> Figure:
    """The reports of a numeric question binned over everything they span (at least
    [lo, hi]), with the range of true answers shaded and the estimated mean as a dashed
    line: randomized reports run far outside the range, their mean does not."""
    values = np.array([float(v) for v, _ in reports if is_number(v)], dtype=float)
    weights = np.array([int(c) for v, c in reports if is_number(v)], dtype=float)
    left = float(min(lo, values.min())) if values.size else float(lo)
    right = float(max(hi, values.max())) if values.size else float(hi)
    counts, edges = np.histogram(values, bins=bins, range=(left, right), weights=weights)
    bars = [{"x0": float(a), "x1": float(b), "count": int(c)}
            for a, b, c in zip(edges[:-1], edges[1:], counts, strict=True) if c > 0]
    title = f"reported value ({unit})" if unit else "reported value"
    return Figure(_numeric_tpl(title, 240), {
        "bars": bars, "range": [{"lo": float(lo), "hi": float(hi)}],
        "mean": [{"x": float(mean)}] if is_number(mean) else []})
