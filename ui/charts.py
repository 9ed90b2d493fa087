"""Altair chart builders shared by the pages (self-study and instructor dashboard).

Each builder takes plain arrays and labels and returns a :class:`Figure`: an
Altair chart whose marks read *named* datasets, plus those datasets. Draw it
with :func:`show`; get the Vega-Lite dict with :meth:`Figure.to_dict`, or an
Altair object to compose further with :meth:`Figure.to_altair`.

Why named data. Building an Altair chart from a DataFrame and converting it
(``st.altair_chart`` validates the full spec against the Vega-Lite JSON schema
every time) costs 30–300 ms of server CPU per chart, more than the whole
budget of an interaction. The structure of a chart (marks, encodings, titles)
depends only on a few labels, so it is built with Altair once per distinct
structure, converted to JSON and memoised (a pure, bounded cache); each rerun
only fills in the data and the title. The tests validate every template
against the schema.

Colours are defined once here so that "local" and "central" look the same on
every page (Okabe–Ito palette, readable with colour-blindness).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from statistics import NormalDist
from typing import Any

import altair as alt
import numpy as np
from altair.utils.schemapi import UndefinedType

from classroom.display import format_value

__all__ = [
    "CENTRAL",
    "ESTIMATE",
    "HIGHLIGHT",
    "LOCAL",
    "THEORY",
    "TRUTH",
    "Figure",
    "bar_counts",
    "channel_heatmap",
    "compare_bars",
    "estimate_with_ci",
    "freeze",
    "histogram",
    "FEDERATED",
    "SHUFFLE",
    "line_chart",
    "log_ticks",
    "loglik_curve",
    "posterior_chart",
    "quant",
    "sampling_distribution",
    "sd_bars",
    "show",
]

#: The local model (randomized response, frequency oracles): vermillion.
LOCAL = "#D55E00"
#: The central model (a trusted curator adds Laplace noise): blue.
CENTRAL = "#0072B2"
#: The shuffle model (randomized reports through an anonymising shuffler): bluish green.
SHUFFLE = "#009E73"
#: Federated DP (k delegates, each adding noise to their own table): reddish purple.
FEDERATED = "#CC79A7"
#: True values (what nobody but the simulation knows): grey.
TRUTH = "#7A7A7A"
#: An estimate from reports, when local/central does not apply.
ESTIMATE = LOCAL
#: Theory lines and reference rules.
THEORY = "#222222"
#: The current setting, the recommended choice, an interval: amber, darkened from
#: Okabe and Ito's orange (#E69F00, 2.3:1 on white) to 3.6:1, as marks need (WCAG 1.4.11).
HIGHLIGHT = "#B97A00"

FONT_SIZE = 14
TITLE_SIZE = 16
_TEMPLATES = 512  # distinct chart structures kept (titles include parameters)


@dataclass(frozen=True)
class Figure:
    """A chart template (Vega-Lite JSON, data by name), its named datasets and its title.

    Titles often carry parameters ("n = 100"); they are set on the spec when it is
    drawn, so that moving a slider never builds a new template.
    """

    template: str
    datasets: Mapping[str, list[dict]] = field(default_factory=dict)
    title: str = ""
    subtitle: str | None = None

    def to_dict(self) -> dict:
        """The complete Vega-Lite spec, data inlined under ``datasets``."""
        spec = json.loads(self.template)
        if self.title or self.subtitle:
            spec["title"] = {"text": self.title, "subtitle": self.subtitle or ""}
        spec["datasets"] = {name: list(rows) for name, rows in self.datasets.items()}
        _hide_empty_marks(spec)
        return spec

    def to_altair(self) -> alt.TopLevelMixin:
        """The same chart as an Altair object (for layering or concatenating)."""
        spec = self.to_dict()
        cls = alt.LayerChart if "layer" in spec else alt.Chart
        return cls.from_dict(spec, validate=False)

    def validate(self) -> None:
        """Check the spec against the Vega-Lite JSON schema (raises if invalid)."""
        spec = self.to_dict()
        cls = alt.LayerChart if "layer" in spec else alt.Chart
        cls.from_dict(spec, validate=True).to_dict(validate=True)

    def values(self, name: str) -> list[dict]:
        return list(self.datasets.get(name, []))


def _hide_empty_marks(spec: dict) -> None:
    """A layer with no data draws an empty mark group, which a screen reader would find as
    an unnamed picture: it leaves the accessibility tree."""
    datasets = spec.get("datasets", {})
    for part in [spec, *spec.get("layer", [])]:
        name = (part.get("data") or {}).get("name")
        if name is not None and not datasets.get(name) and "mark" in part:
            mark = part["mark"]
            part["mark"] = {**(mark if isinstance(mark, dict) else {"type": mark}),
                            "aria": False}


_ALT_ROWS = 12  # a dataset of at most this many rows is read out row by row
_HEX = re.compile(r"#[0-9A-Fa-f]{6}")


def _alt_value(value: object) -> str:
    """A data value as the chart's text says it: numbers by the shared formatter."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value:,}" if isinstance(value, int) else format_value(value)


def _axis_titles(spec: Mapping[str, Any]) -> list[str]:
    """The titles of the chart's x and y axes, in every layer, each once."""
    titles: list[str] = []
    for part in [spec, *spec.get("layer", []), *spec.get("hconcat", []),
                 *spec.get("vconcat", [])]:
        for channel in ("x", "y"):
            title = part.get("encoding", {}).get(channel, {}).get("title")
            if isinstance(title, str) and title and title not in titles:
                titles.append(title)
    return titles


def _readable_fields(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The fields of ``rows`` worth reading out: not a colour, and not a copy of an earlier
    field (a bar's printed label repeats its value)."""
    fields: list[str] = []
    for key in rows[0]:
        column = [row.get(key) for row in rows]
        if all(isinstance(v, str) and _HEX.fullmatch(v) for v in column):
            continue
        if any([_alt_value(row.get(k)) for row in rows] == [_alt_value(v) for v in column]
               for k in fields):
            continue
        fields.append(key)
    return fields


def describe(spec: Mapping[str, Any]) -> str:
    """A sentence that says what a chart shows: its title, its axes and its data (each
    row of a small dataset, the range of each number of a larger one). Colours, copies of
    a field and one-number reference lines are left out.

    >>> describe({"title": {"text": "Reports", "subtitle": ""},
    ...           "encoding": {"x": {"title": "option"}, "y": {"title": "count"}},
    ...           "datasets": {"bars": [{"label": "Yes", "count": 3, "text": "3",
    ...                                  "colour": "#D55E00"},
    ...                                 {"label": "No", "count": 5, "text": "5",
    ...                                  "colour": "#D55E00"}],
    ...                        "zero": [{"x": 0}]}})
    'Chart: Reports. Axes: option; count. Data: label Yes, count 3; label No, count 5.'
    """
    title = spec.get("title") or {}
    if isinstance(title, str):
        title = {"text": title}
    words = [t for t in (title.get("text"), title.get("subtitle")) if t]
    parts = ["Chart: " + ", ".join(words) + "." if words else "Chart."]
    axes = _axis_titles(spec)
    if axes:
        parts.append("Axes: " + "; ".join(axes) + ".")
    for rows in spec.get("datasets", {}).values():
        if not rows or (len(rows) == 1 and len(rows[0]) == 1):
            continue
        fields = _readable_fields(rows)
        if len(rows) <= _ALT_ROWS:
            parts.append("Data: " + "; ".join(
                ", ".join(f"{k} {_alt_value(row.get(k))}" for k in fields) for row in rows)
                + ".")
            continue
        ranges = []
        for key in fields:
            numbers = [r[key] for r in rows if isinstance(r.get(key), (int, float))
                       and not isinstance(r.get(key), bool) and math.isfinite(r[key])]
            if numbers:
                ranges.append(f"{key} from {_alt_value(min(numbers))} "
                              f"to {_alt_value(max(numbers))}")
        parts.append(f"{len(rows):,} points" + (": " + "; ".join(ranges) if ranges else "")
                     + ".")
    return " ".join(parts)


def show(fig: Figure) -> None:
    """Draw a figure at full container width (readable on a phone and a projector), with
    its text alternative under it."""
    import streamlit as st

    spec = fig.to_dict()
    st.vega_lite_chart(spec, width="stretch")
    as_text(spec)


def as_text(spec: Mapping[str, Any]) -> None:
    """The chart ``spec`` in words (WCAG 1.1.1), folded under the chart: its title, axes
    and data, for a screen reader and for anyone who wants the numbers."""
    import streamlit as st

    from ui.text import plain

    with st.expander("The chart as text", icon=":material/notes:"):
        st.markdown(plain(describe(spec)))


def freeze(chart: alt.TopLevelMixin, *, legend_columns: int | None = 1,
           frame: bool = True) -> str:
    """Apply the house style and serialise without data (a template): large fonts, legends
    below the chart (in ``legend_columns`` columns; None: side by side), full container
    width; ``frame=False`` drops the plot area's outline (the dashboard's charts)."""
    legend = {"labelFontSize": FONT_SIZE, "titleFontSize": FONT_SIZE, "orient": "bottom",
              "labelLimit": 420}
    if legend_columns is not None:
        legend["columns"] = legend_columns
    styled = chart.configure_axis(labelFontSize=FONT_SIZE, titleFontSize=FONT_SIZE,
                                  labelLimit=240) \
        .configure_legend(**legend) \
        .configure_title(fontSize=TITLE_SIZE, subtitleFontSize=FONT_SIZE - 1, anchor="start")
    if not frame:
        styled = styled.configure_view(strokeWidth=0)
    spec = styled.to_dict(validate=False)
    config = spec.get("config", {})
    # Altair's default theme pins the view to 300 x 300; the page sets the width.
    view = config.get("view", {})
    if view.get("continuousWidth") == 300 and view.get("continuousHeight") == 300:
        del view["continuousWidth"], view["continuousHeight"]
        if not view:
            del config["view"]
    spec.pop("datasets", None)
    # Fill the container's width; ``height`` is the plot area's, titles and legends add to it.
    spec["autosize"] = {"type": "fit-x", "contains": "padding"}
    return json.dumps(spec)


def _data(name: str) -> alt.NamedData:
    return alt.NamedData(name=name)


def quant(name: str, title: str | None = None, **kw: Any) -> dict[str, Any]:
    """The keywords of a quantitative channel on field ``name`` (``title=None``: Vega's
    default title; ``""``: none)."""
    return {"field": name, "type": "quantitative", **({"title": title} if title is not None
                                                       else {}), **kw}


def _num(x: object) -> float:
    return float(x)  # type: ignore[arg-type]  # chart values are numbers, checked by the callers


def _finite(values: object, what: str = "chart values") -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.size and not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} must be finite (map -inf/NaN before charting)")
    return arr


def _truth_rule() -> alt.Chart:
    """A dashed vertical rule at the true value (dataset ``truth``: one row, or none)."""
    return alt.Chart(_data("truth")).mark_rule(color=TRUTH, strokeDash=[6, 4],
                                               strokeWidth=2.5).encode(
        x=alt.X(**quant("truth")),
        tooltip=[alt.Tooltip(field="truth", type="quantitative", title="true value",
                             format=".3f")])


def _t(values: object) -> tuple:
    return tuple(values)  # type: ignore[arg-type]  # any iterable the callers pass


# -- bars ----------------------------------------------------------------------------------

@lru_cache(maxsize=_TEMPLATES)
def _bar_counts_tpl(labels: tuple, value_title: str,
                    category_title: str, with_text: bool, height: int) -> str:
    base = alt.Chart(_data("bars")).encode(
        y=alt.Y(field="label", type="nominal", sort=list(labels), title=category_title or None))
    bars = base.mark_bar().encode(
        x=alt.X(**quant("value", value_title)),
        color=alt.Color(field="colour", type="nominal", scale=None),
        tooltip=[alt.Tooltip(field="label", type="nominal", title=category_title or "label"),
                 alt.Tooltip(field="text", type="nominal", title=value_title)])
    layers = [bars]
    if with_text:
        layers.append(base.mark_text(align="left", dx=4, fontSize=FONT_SIZE - 1).encode(
            x=alt.X(**quant("value")), text=alt.Text(field="text", type="nominal")))
    zero = alt.Chart(_data("zero")).mark_rule(color=THEORY).encode(x=alt.X(**quant("x")))
    return freeze(alt.layer(*layers, zero).properties(height=height))


def bar_counts(labels: Sequence[str], counts: object, *, title: str = "",
               subtitle: str | None = None, value_title: str = "count",
               category_title: str = "", color: str = LOCAL,
               colors: Sequence[str] | None = None, highlight: Sequence[str] = (),
               text: Sequence[str] | None = None, height: int | None = None) -> Figure:
    """Horizontal bars of one value per label, in the given order; negatives allowed.

    ``colors`` gives each bar its own colour (else ``color``); ``highlight``
    labels get :data:`HIGHLIGHT`; ``text`` (e.g. formatted counts) is written
    at the end of each bar and shown in the tooltip.
    """
    vals = _finite(counts)
    labs = [str(x) for x in labels]
    hi = set(highlight)
    cols = list(colors) if colors is not None else [color] * len(labs)
    texts = list(text) if text is not None else [f"{v:,.1f}" for v in vals]
    rows = [{"label": lab, "value": _num(v), "text": tx, "colour": HIGHLIGHT if lab in hi else c}
            for lab, v, tx, c in zip(labs, vals, texts, cols, strict=True)]
    tpl = _bar_counts_tpl(_t(labs), value_title, category_title,
                          text is not None, height or 32 * len(labs))
    return Figure(tpl, {"bars": rows, "zero": [{"x": 0.0}]}, title, subtitle)


@lru_cache(maxsize=_TEMPLATES)
def _compare_bars_tpl(cats: tuple, names: tuple, palette: tuple, value_title: str,
                      category_title: str,
                      height: int) -> str:
    bars = alt.Chart(_data("bars")).mark_bar().encode(
        y=alt.Y(field="category", type="nominal", sort=list(cats), title=category_title or None),
        yOffset=alt.YOffset(field="series", type="nominal", sort=list(names)),
        x=alt.X(**quant("value", value_title)),
        color=alt.Color(field="series", type="nominal", sort=list(names), title=None,
                        scale=alt.Scale(domain=list(names), range=list(palette))),
        tooltip=[alt.Tooltip(field="category", type="nominal", title=category_title or "category"),
                 alt.Tooltip(field="series", type="nominal", title="series"),
                 alt.Tooltip(field="value", type="quantitative", title=value_title,
                             format=",.1f")])
    zero = alt.Chart(_data("zero")).mark_rule(color=THEORY).encode(x=alt.X(**quant("x")))
    return freeze(alt.layer(bars, zero).properties(height=height))


def compare_bars(categories: Sequence[str], series: Mapping[str, object], *,
                 colors: Mapping[str, str], title: str = "", subtitle: str | None = None,
                 value_title: str = "count", category_title: str = "",
                 height: int | None = None) -> Figure:
    """Grouped horizontal bars: one bar per series within each category (e.g. true vs
    estimated counts). Negative values extend left of the zero rule."""
    cats = [str(c) for c in categories]
    names = list(series)
    rows: list[dict[str, object]] = []
    for name in names:
        vals = _finite(series[name])
        rows.extend({"category": c, "series": name, "value": _num(v)}
                    for c, v in zip(cats, vals, strict=True))
    tpl = _compare_bars_tpl(_t(cats), _t(names), _t(colors[n] for n in names),
                            value_title, category_title,
                            height or 13 * len(names) * len(cats) + 10)
    return Figure(tpl, {"bars": rows, "zero": [{"x": 0.0}]}, title, subtitle)


@lru_cache(maxsize=_TEMPLATES)
def _estimate_ci_tpl(labels: tuple, value_title: str,
                     domain: tuple | None, height: int) -> str:
    scale = alt.Scale(domain=list(domain)) if domain is not None else alt.Undefined
    y = alt.Y(field="label", type="nominal", sort=list(labels), title=None)
    colour = alt.Color(field="colour", type="nominal", scale=None)
    tips = [alt.Tooltip(field="label", type="nominal", title="what"),
            alt.Tooltip(field="estimate", type="quantitative", format=".3f"),
            alt.Tooltip(field="low", type="quantitative", format=".3f"),
            alt.Tooltip(field="high", type="quantitative", format=".3f")]
    base = alt.Chart(_data("rows")).encode(y=y)
    ci = base.mark_rule(strokeWidth=7, opacity=0.45).encode(
        x=alt.X(**quant("low", value_title), scale=scale), x2=alt.X2(field="high"),
        color=colour, tooltip=tips)
    pts = base.mark_point(filled=True, size=170, opacity=1).encode(
        x=alt.X(**quant("estimate", value_title), scale=scale), color=colour, tooltip=tips)
    truth = _truth_rule()
    return freeze(alt.layer(ci, pts, truth).properties(height=height))


def estimate_with_ci(labels: Sequence[str], estimates: object, lows: object, highs: object, *,
                     truth: float | None = None, title: str = "", subtitle: str | None = None,
                     value_title: str = "estimate", colors: Sequence[str] | None = None,
                     domain: tuple[float, float] | None = None,
                     height: int | None = None) -> Figure:
    """One row per estimate: a point with its interval as a thick bar, and an optional
    dashed rule at the true value. ``domain`` fixes the value axis."""
    est, lo, hi = _finite(estimates), _finite(lows), _finite(highs)
    labs = [str(x) for x in labels]
    cols = list(colors) if colors is not None else [ESTIMATE] * len(labs)
    rows = [{"label": lab, "estimate": _num(e), "low": _num(a), "high": _num(b), "colour": c}
            for lab, e, a, b, c in zip(labs, est, lo, hi, cols, strict=True)]
    truth_rows = [{"truth": float(truth)}] if truth is not None and math.isfinite(truth) else []
    tpl = _estimate_ci_tpl(_t(labs), value_title,
                           tuple(domain) if domain is not None else None,
                           height or 56 * len(labs) + 20)
    return Figure(tpl, {"rows": rows, "truth": truth_rows}, title, subtitle)


# -- the channel -----------------------------------------------------------------------------

@lru_cache(maxsize=_TEMPLATES)
def _heatmap_tpl(rows: tuple, cols: tuple, row_title: str, col_title: str,
                 height: int) -> str:
    base = alt.Chart(_data("cells")).encode(
        y=alt.Y(field="row", type="nominal", sort=list(rows), title=row_title),
        x=alt.X(field="col", type="nominal", sort=list(cols), title=col_title,
                axis=alt.Axis(orient="top", labelAngle=0)))
    cells = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color(field="p", type="quantitative", title="probability",
                        scale=alt.Scale(domain=[0, 1], scheme="oranges"), legend=None),
        tooltip=[alt.Tooltip(field="row", type="nominal", title=row_title),
                 alt.Tooltip(field="col", type="nominal", title=col_title),
                 alt.Tooltip(field="text", type="nominal", title="probability")])
    labels = base.mark_text(fontSize=22, fontWeight="bold").encode(
        text=alt.Text(field="text", type="nominal"),
        color=alt.condition(alt.datum.ink == "white", alt.value("white"), alt.value("black")))
    return freeze(alt.layer(cells, labels).properties(height=height))


def channel_heatmap(matrix: object, row_labels: Sequence[str], col_labels: Sequence[str], *,
                    row_title: str = "true answer", col_title: str = "report",
                    title: str = "", subtitle: str | None = None,
                    text: Sequence[Sequence[str]] | None = None,
                    height: int | None = None) -> Figure:
    """A transition matrix P[row, column] as coloured cells with the probabilities
    written in (``text`` overrides the default two-decimal labels). A NaN cell
    (e.g. a row nobody is in) is left uncoloured and labelled with a dash."""
    m = np.asarray(matrix, dtype=float)
    rows = []
    for i, r in enumerate(row_labels):
        for j, c in enumerate(col_labels):
            known = bool(np.isfinite(m[i, j]))
            label = text[i][j] if text is not None else (f"{m[i, j]:.2f}" if known else "—")
            rows.append({"row": str(r), "col": str(c), "p": _num(m[i, j]) if known else None,
                         "text": label, "ink": "white" if known and m[i, j] > 0.55 else "black"})
    tpl = _heatmap_tpl(_t(map(str, row_labels)), _t(map(str, col_labels)), row_title,
                       col_title, height or 75 * len(row_labels))
    return Figure(tpl, {"cells": rows}, title, subtitle)


# -- distributions -----------------------------------------------------------------------------

def _density_bins(values: np.ndarray, max_atoms: int = 60, bins: int = 40,
                  weights: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(left, right, density)`` of a histogram whose area is 1 (each value counted
    once, or with its weight: an exact distribution's probabilities).

    When the values take few distinct values (small classes make an estimate
    discrete), each atom gets its own bar, as wide as the smallest spacing.
    """
    w = np.ones(values.size) if weights is None else weights
    atoms, where = np.unique(values, return_inverse=True)
    if atoms.size <= max_atoms:
        spacing = float(np.min(np.diff(atoms))) if atoms.size > 1 else 1.0
        dens = np.bincount(where.ravel(), weights=w, minlength=atoms.size) / (w.sum() * spacing)
        return atoms - spacing / 2, atoms + spacing / 2, dens
    dens, edges = np.histogram(values, bins=bins, density=True, weights=w)
    return edges[:-1], edges[1:], dens


def _bar_rows(values: np.ndarray, weights: np.ndarray | None = None) -> list[dict]:
    left, right, dens = _density_bins(values, weights=weights)
    return [{"left": _num(a), "right": _num(b), "density": _num(d), "base": 0.0}
            for a, b, d in zip(left, right, dens, strict=True)]


@lru_cache(maxsize=_TEMPLATES)
def _sampling_tpl(x_title: str, color: str,
                  height: int) -> str:
    bars = alt.Chart(_data("bars")).mark_rect(color=color, opacity=0.55).encode(
        x=alt.X(**quant("left", x_title)), x2=alt.X2(field="right"),
        y=alt.Y(**quant("density", "density")), y2=alt.Y2(field="base"),
        tooltip=[alt.Tooltip(field="left", type="quantitative", title="from", format=".3f"),
                 alt.Tooltip(field="right", type="quantitative", title="to", format=".3f"),
                 alt.Tooltip(field="density", type="quantitative", format=".3f")])
    curve = alt.Chart(_data("curve")).mark_line(color=THEORY, strokeWidth=2.5).encode(
        x=alt.X(**quant("x")), y=alt.Y(**quant("pdf")),
        tooltip=[alt.Tooltip(field="what", type="nominal", title="curve")])
    truth = _truth_rule()
    return freeze(alt.layer(bars, curve, truth).properties(height=height))


def _normal_rows(mean: float | None, sd: float | None, lo: float, hi: float,
                 label: str) -> list[dict]:
    if mean is None or sd is None or not (math.isfinite(mean) and math.isfinite(sd)) \
            or sd <= 0:
        return []
    lo, hi = min(lo, mean - 4 * sd), max(hi, mean + 4 * sd)
    nd = NormalDist(mean, sd)
    return [{"x": float(x), "pdf": nd.pdf(float(x)), "what": label}
            for x in np.linspace(lo, hi, 160)]


def sampling_distribution(values: object, *, truth: float | None = None,
                          mean: float | None = None, sd: float | None = None,
                          x_title: str = "estimate", title: str = "",
                          subtitle: str | None = None, color: str = LOCAL,
                          curve_label: str = "normal curve", height: int = 260) -> Figure:
    """Density histogram of simulated estimates, with the normal curve N(mean, sd²)
    (when both are given and sd > 0) and a dashed rule at the true value."""
    vals = _finite(values).ravel()
    bars = _bar_rows(vals)
    curve = _normal_rows(mean, sd, bars[0]["left"], bars[-1]["right"], curve_label)
    truth_rows = [{"truth": float(truth)}] if truth is not None and math.isfinite(truth) else []
    tpl = _sampling_tpl(x_title, color, height)
    return Figure(tpl, {"bars": bars, "curve": curve, "truth": truth_rows}, title, subtitle)


@lru_cache(maxsize=_TEMPLATES)
def _histogram_tpl(x_title: str, color: str,
                   names: tuple, palette: tuple, height: int) -> str:
    bars = alt.Chart(_data("bars")).mark_rect(color=color, opacity=0.6).encode(
        x=alt.X(**quant("left", x_title)), x2=alt.X2(field="right"),
        y=alt.Y(**quant("density", "density")), y2=alt.Y2(field="base"))
    layers = [bars]
    if names:
        layers.append(alt.Chart(_data("rules")).mark_rule(strokeWidth=3, strokeDash=[6, 4])
                      .encode(x=alt.X(**quant("x")),
                              color=alt.Color(field="what", type="nominal", title=None,
                                              scale=alt.Scale(domain=list(names),
                                                              range=list(palette))),
                              tooltip=[alt.Tooltip(field="what", type="nominal"),
                                       alt.Tooltip(field="x", type="quantitative",
                                                   format=",.1f")]))
    return freeze(alt.layer(*layers).properties(height=height))


def histogram(values: object, *, weights: object = None,
              rules: Mapping[str, float] | None = None,
              rule_colors: Mapping[str, str] | None = None, x_title: str = "value",
              title: str = "", subtitle: str | None = None, color: str = LOCAL,
              height: int = 240) -> Figure:
    """Density histogram of ``values`` (each weighted by ``weights`` when given: an exact
    distribution) with labelled vertical rules (e.g. a theory scale).

    Rule names are legend entries; keep them free of changing numbers."""
    vals = _finite(values).ravel()
    w = None if weights is None else _finite(weights, "weights").ravel()
    rules = {k: v for k, v in (rules or {}).items() if v is not None and math.isfinite(v)}
    names = tuple(rules)
    palette = tuple((rule_colors or {}).get(k, THEORY) for k in names)
    tpl = _histogram_tpl(x_title, color, names, palette, height)
    return Figure(tpl, {"bars": _bar_rows(vals, w),
                        "rules": [{"what": k, "x": float(v)} for k, v in rules.items()]},
                  title, subtitle)


# -- curves ---------------------------------------------------------------------------------

def log_ticks(lo: float, hi: float, *, most: int = 8) -> tuple[float, ...]:
    """Round values to label a log axis over ``[lo, hi]``: 1, 2 and 5 times powers of ten,
    or only the powers of ten when those would be more than ``most``. (Vega-Lite's own
    choice on a short log axis can read 3, 1, 0.2, 0.03, 0.01.)

    >>> log_ticks(0.08, 1.6)
    (0.1, 0.2, 0.5, 1.0)
    >>> log_ticks(1e-4, 50)
    (0.0001, 0.001, 0.01, 0.1, 1.0, 10.0)
    >>> log_ticks(0.3, 0.4)
    ()
    """
    if not (lo > 0 and hi >= lo and math.isfinite(lo) and math.isfinite(hi)):
        return ()
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    for mantissas in ((1, 2, 5), (1,)):
        ticks = tuple(float(f"{m}e{k}") for k in range(first, last + 1) for m in mantissas
                      if lo <= float(f"{m}e{k}") <= hi)
        if len(ticks) <= most:
            return ticks
    return ticks


@lru_cache(maxsize=_TEMPLATES)
def _sd_bars_tpl(labels: tuple, value_title: str, height: int) -> str:
    y = alt.Y(field="label", type="nominal", sort=list(labels), title=None)
    tips = [alt.Tooltip(field="label", type="nominal", title="model"),
            alt.Tooltip(field="text", type="nominal", title="formula"),
            alt.Tooltip(field="sim_text", type="nominal", title="simulated")]
    base = alt.Chart(_data("rows")).encode(y=y, tooltip=tips)
    bars = base.mark_bar(opacity=0.85).encode(
        x=alt.X(**quant("value", value_title)),
        color=alt.Color(field="colour", type="nominal", scale=None))
    whisker = base.mark_rule(color=THEORY, strokeWidth=2.5).encode(
        x=alt.X(**quant("sim_low")), x2=alt.X2(field="sim_high"))
    dot = base.mark_point(shape="circle", filled=True, size=90, color=THEORY, opacity=1).encode(
        x=alt.X(**quant("sim")))
    text = base.mark_text(align="left", dx=8, fontSize=FONT_SIZE, fontWeight="bold").encode(
        x=alt.X(**quant("text_at")), text=alt.Text(field="text", type="nominal"))
    return freeze(alt.layer(bars, whisker, dot, text).properties(height=height))


def sd_bars(labels: Sequence[str], sds: object, simulated: object, simulated_se: object, *,
            colors: Sequence[str], text: Sequence[str], sim_text: Sequence[str],
            value_title: str = "SD", title: str = "", subtitle: str | None = None,
            height: int | None = None) -> Figure:
    """One bar per row at its formula value, a dot at its simulated value with a whisker of
    ± 2 standard errors, and the formula's value written beside the bar."""
    vals, sims, ses = _finite(sds), _finite(simulated), _finite(simulated_se)
    labs = [str(x) for x in labels]
    rows = [{"label": lab, "value": _num(v), "sim": _num(m), "sim_low": _num(m - 2 * e),
             "sim_high": _num(m + 2 * e), "text_at": _num(max(v, m + 2 * e)), "colour": c,
             "text": tx, "sim_text": st}
            for lab, v, m, e, c, tx, st in zip(labs, vals, sims, ses, colors, text, sim_text,
                                               strict=True)]
    tpl = _sd_bars_tpl(_t(labs), value_title, height or 56 * len(labs) + 20)
    return Figure(tpl, {"rows": rows}, title, subtitle)


@lru_cache(maxsize=_TEMPLATES)
def _line_tpl(names: tuple, palette: tuple, dashed: tuple, points: tuple, x_title: str,
              y_title: str, log_x: bool, log_y: bool,
              y_domain: tuple | None, x_format: str | None, height: int) -> str:
    xscale = alt.Scale(type="log") if log_x else alt.Undefined
    yscale: alt.Scale | UndefinedType
    if log_y:
        yscale = alt.Scale(type="log")
    elif y_domain is not None:
        yscale = alt.Scale(domain=list(y_domain))
    else:
        yscale = alt.Undefined
    enc = {
        "x": alt.X(**quant("x", x_title), scale=xscale,
                   axis=alt.Axis(format=x_format) if x_format else alt.Undefined),
        "y": alt.Y(**quant("y", y_title), scale=yscale),
        "color": alt.Color(field="series", type="nominal", sort=list(names), title=None,
                           scale=alt.Scale(domain=list(names), range=list(palette))),
        "tooltip": [alt.Tooltip(field="series", type="nominal", title="curve"),
                    alt.Tooltip(field="x", type="quantitative", title=x_title, format=",.4~g"),
                    alt.Tooltip(field="y", type="quantitative", title=y_title, format=",.4~g")],
    }
    layers = []
    line_names = [n for n in names if n not in points]
    if any(n not in dashed for n in line_names):
        layers.append(alt.Chart(_data("solid")).mark_line(strokeWidth=3).encode(**enc))
    if any(n in dashed for n in line_names):
        layers.append(alt.Chart(_data("dashed")).mark_line(strokeWidth=2, strokeDash=[7, 5])
                      .encode(**enc))
    if points:
        layers.append(alt.Chart(_data("points")).mark_point(filled=True, size=100, opacity=0.95)
                      .encode(**enc))
    marker = alt.Chart(_data("marker"))
    layers.append(marker.mark_point(shape="diamond", size=280, filled=True, color=HIGHLIGHT,
                                    stroke=THEORY, opacity=1).encode(
        x=alt.X(**quant("x")), y=alt.Y(**quant("y")),
        tooltip=[alt.Tooltip(field="label", type="nominal", title="you are here")]))
    layers.append(marker.mark_text(align="left", dx=12, dy=-12, fontSize=FONT_SIZE,
                                   fontWeight="bold").encode(
        x=alt.X(**quant("x")), y=alt.Y(**quant("y")), text=alt.Text(field="label", type="nominal")))
    return freeze(alt.layer(*layers).properties(height=height))


def line_chart(x: object, series: Mapping[str, object], *, colors: Mapping[str, str],
               dashed: Sequence[str] = (), points: Sequence[str] = (),
               x_title: str = "x", y_title: str = "y", title: str = "",
               subtitle: str | None = None, log_x: bool = False, log_y: bool = False,
               marker: tuple[float, float, str] | None = None,
               y_domain: tuple[float, float] | None = None, x_format: str | None = None,
               height: int = 300) -> Figure:
    """Several named curves over a shared x; ``points`` series are drawn as dots
    (e.g. simulation), ``dashed`` ones as dashed lines (e.g. orders of magnitude).

    ``marker = (x, y, label)`` puts a highlighted diamond on the chart (the current
    setting). Non-finite values, and non-positive ones on a log axis, are left out.
    """
    xs = np.asarray(x, dtype=float)
    names = tuple(series)
    groups: dict[str, list[dict]] = {"solid": [], "dashed": [], "points": []}
    for name in names:
        ys = np.asarray(series[name], dtype=float)
        ok = np.isfinite(xs) & np.isfinite(ys)
        if log_x:
            ok &= xs > 0
        if log_y:
            ok &= ys > 0
        group = "points" if name in points else ("dashed" if name in dashed else "solid")
        groups[group].extend({"x": _num(a), "y": _num(b), "series": name}
                             for a, b in zip(xs[ok], ys[ok], strict=True))
    marks = []
    if marker is not None:
        mx, my, label = marker
        if all(v is not None and math.isfinite(v) for v in (mx, my)) \
                and (not log_x or mx > 0) and (not log_y or my > 0):
            marks = [{"x": float(mx), "y": float(my), "label": str(label)}]
    tpl = _line_tpl(names, _t(colors[n] for n in names), _t(d for d in dashed if d in names),
                    _t(p for p in points if p in names), x_title, y_title,
                    log_x, log_y, tuple(y_domain) if y_domain is not None else None, x_format,
                    height)
    return Figure(tpl, {**groups, "marker": marks}, title, subtitle)


@lru_cache(maxsize=_TEMPLATES)
def _loglik_tpl(y_title: str, x_title: str, color: str,
                height: int) -> str:
    band = alt.Chart(_data("band")).mark_rect(color=HIGHLIGHT, opacity=0.22).encode(
        x=alt.X(**quant("lo")), x2=alt.X2(field="hi"),
        tooltip=[alt.Tooltip(field="what", type="nominal"),
                 alt.Tooltip(field="lo", type="quantitative", format=".3f"),
                 alt.Tooltip(field="hi", type="quantitative", format=".3f")])
    line = alt.Chart(_data("curve")).mark_line(color=color, strokeWidth=3).encode(
        x=alt.X(**quant("mu", x_title), scale=alt.Scale(domain=[0, 1])),
        y=alt.Y(**quant("value", y_title), scale=alt.Scale(zero=False)),
        tooltip=[alt.Tooltip(field="mu", type="quantitative", title="μ", format=".3f"),
                 alt.Tooltip(field="value", type="quantitative", title=y_title,
                             format=",.4~g")])
    rules = alt.Chart(_data("rules"))
    rule = rules.mark_rule(strokeWidth=2.5, strokeDash=[6, 4]).encode(
        x=alt.X(**quant("x")), color=alt.Color(field="colour", type="nominal", scale=None),
        tooltip=[alt.Tooltip(field="what", type="nominal")])
    rule_text = rules.mark_text(align="left", dx=5, fontSize=FONT_SIZE - 1,
                                fontWeight="bold").encode(
        x=alt.X(**quant("x")), y=alt.value(12),
        color=alt.Color(field="colour", type="nominal", scale=None),
        text=alt.Text(field="what", type="nominal"))
    cutoff = alt.Chart(_data("cutoff")).mark_rule(color=HIGHLIGHT, strokeWidth=2.5).encode(
        y=alt.Y(**quant("y")),
        tooltip=[alt.Tooltip(field="what", type="nominal"),
                 alt.Tooltip(field="y", type="quantitative", format=",.4~g")])
    return freeze(alt.layer(band, line, rule, rule_text, cutoff)
                  .properties(height=height))


def loglik_curve(mu: object, values: object, *, y_title: str = "log-likelihood ℓ(μ)",
                 x_title: str = "μ, the true share", mle: float | None = None,
                 interval: tuple[float, float] | None = None,
                 interval_label: str = "95% LR interval", cutoff: float | None = None,
                 cutoff_label: str = "cut-off ℓ(μ̂) − χ²₁(0.95)/2",
                 mu0: float | None = None, title: str = "", subtitle: str | None = None,
                 color: str = LOCAL, height: int = 280) -> Figure:
    """A (log-)likelihood curve over μ in [0, 1] with the MLE and a hypothesised μ0
    as labelled rules, a shaded interval and a horizontal cut-off line.

    Points where ``values`` is not finite (impossible reports: ℓ = −∞) are left
    out; the caller should say so.
    """
    m, v = np.asarray(mu, dtype=float), np.asarray(values, dtype=float)
    ok = np.isfinite(m) & np.isfinite(v)
    curve = [{"mu": _num(a), "value": _num(b)} for a, b in zip(m[ok], v[ok], strict=True)]
    band = []
    if interval is not None and all(x is not None and math.isfinite(x) for x in interval):
        band = [{"lo": float(interval[0]), "hi": float(interval[1]), "what": interval_label}]
    rules = []
    if mle is not None and math.isfinite(mle):
        rules.append({"x": float(mle), "what": f"MLE {mle:.3f}", "colour": THEORY})
    if mu0 is not None and math.isfinite(mu0):
        rules.append({"x": float(mu0), "what": f"μ₀ = {mu0:.3f}", "colour": CENTRAL})
    cut = [{"y": float(cutoff), "what": cutoff_label}] \
        if cutoff is not None and math.isfinite(cutoff) else []
    tpl = _loglik_tpl(y_title, x_title, color, height)
    return Figure(tpl, {"band": band, "curve": curve, "rules": rules, "cutoff": cut},
                  title, subtitle)


_POSTERIOR_NAMES = ("after a 'vanilla' report", "after a 'chocolate' report",
                    "prior (no report)")


@lru_cache(maxsize=_TEMPLATES)
def _posterior_tpl(height: int) -> str:
    names = list(_POSTERIOR_NAMES)
    band = alt.Chart(_data("band")).mark_area(color=HIGHLIGHT, opacity=0.22).encode(
        x=alt.X(**quant("prior", "prior P(truly vanilla)"), scale=alt.Scale(domain=[0, 1])),
        y=alt.Y(**quant("lo", "posterior P(truly vanilla | report)"),
                scale=alt.Scale(domain=[0, 1])),
        y2=alt.Y2(field="hi"))
    colour = alt.Color(field="series", type="nominal", sort=names, title=None,
                       scale=alt.Scale(domain=names, range=[LOCAL, CENTRAL, TRUTH]))
    tips = [alt.Tooltip(field="series", type="nominal", title="curve"),
            alt.Tooltip(field="prior", type="quantitative", format=".2f"),
            alt.Tooltip(field="posterior", type="quantitative", format=".3f")]
    curves = alt.Chart(_data("lines")).mark_line(strokeWidth=3).encode(
        x=alt.X(**quant("prior")), y=alt.Y(**quant("posterior")), color=colour, tooltip=tips)
    diagonal = alt.Chart(_data("diagonal")).mark_line(strokeWidth=2, strokeDash=[4, 4]).encode(
        x=alt.X(**quant("prior")), y=alt.Y(**quant("posterior")), color=colour, tooltip=tips)
    current = alt.Chart(_data("current")).mark_rule(color=THEORY, strokeDash=[2, 3],
                                                    strokeWidth=2).encode(x=alt.X(**quant("x")))
    chart = alt.layer(band, curves, diagonal, current)
    return freeze(chart.properties(height=height))


def posterior_chart(prior: object, after_yes: object, after_no: object, band_lo: object,
                    band_hi: object, *, current_prior: float | None = None,
                    title: str = "", subtitle: str | None = None, height: int = 320) -> Figure:
    """Posterior P(truly yes | report) against the prior for both reports, inside the
    band that ε-LDP allows (prior odds times e^(±ε)). NaN posteriors (a report
    impossible under that prior) are left out."""
    pi = _finite(prior)
    band = [{"prior": _num(p), "lo": _num(a), "hi": _num(b)}
            for p, a, b in zip(pi, _finite(band_lo), _finite(band_hi), strict=True)]
    lines: list[dict[str, object]] = []
    for name, post in zip(_POSTERIOR_NAMES[:2], (after_yes, after_no), strict=True):
        arr = np.asarray(post, dtype=float)
        ok = np.isfinite(arr)
        lines.extend({"prior": _num(p), "posterior": _num(q), "series": name}
                     for p, q in zip(pi[ok], arr[ok], strict=True))
    diagonal = [{"prior": _num(p), "posterior": _num(p), "series": _POSTERIOR_NAMES[2]}
                for p in (pi.min(), pi.max())] if pi.size else []
    cur = [{"x": float(current_prior)}] \
        if current_prior is not None and math.isfinite(current_prior) else []
    return Figure(_posterior_tpl(height),
                  {"band": band, "lines": lines, "diagonal": diagonal, "current": cur},
                  title, subtitle)
