"""Charts of the instructor dashboard: Altair specs built from plain numbers.

Each function takes numbers the page already got from ``PollService.estimate``
or ``ldp_core`` and returns an ``alt.Chart``; nothing here computes an
estimate. ``big=True`` enlarges every label for the projector. Values that are
None, NaN or infinite are left out of a chart, never drawn as NaN.

Colours are fixed by meaning, the same on every chart:

* ``REPORTED`` (slate): what students sent, the randomized reports;
* ``ESTIMATE`` (deep blue): the unbiased estimate and its normal interval;
* ``MLE`` (amber): the maximum-likelihood estimate and its likelihood-ratio interval;
* ``POST`` (teal / green): post-processed histograms (clipped, Norm-Sub);
* ``WHATIF`` (purple): a design that is only being considered.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt
import pandas as pd

__all__ = [
    "ESTIMATE",
    "MLE",
    "POST_CLIP",
    "POST_NORMSUB",
    "REPORTED",
    "WHATIF",
    "estimate_by_round_chart",
    "estimate_trace_chart",
    "histogram_chart",
    "log_likelihood_chart",
    "reported_counts_chart",
    "sd_vs_epsilon_chart",
]

REPORTED = "#64748b"
ESTIMATE = "#1f3a8a"
MLE = "#b45309"
POST_CLIP = "#0f766e"
POST_NORMSUB = "#15803d"
WHATIF = "#7c3aed"
_EDGE = "#111827"


def _ok(x: object) -> bool:
    try:
        return x is not None and not isinstance(x, bool) and math.isfinite(float(x))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _style(chart: alt.TopLevelMixin, big: bool) -> alt.TopLevelMixin:
    size = 20 if big else 13
    return (chart.configure_axis(labelFontSize=size, titleFontSize=size + 2, labelColor=_EDGE,
                                 titleColor=_EDGE, gridColor="#e5e7eb")
            .configure_legend(labelFontSize=size, titleFontSize=size, orient="bottom",
                              labelLimit=0)
            .configure_view(strokeWidth=0))


def reported_counts_chart(labels: Sequence[str], counts: Sequence[int], *, big: bool = False,
                          title: str = "Reports received") -> alt.Chart:
    """One bar per option: how many randomized reports said it (count printed on the bar)."""
    df = pd.DataFrame({"option": list(labels), "count": [int(c) for c in counts]})
    base = alt.Chart(df).encode(
        x=alt.X("option:N", sort=list(labels), title=None, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("count:Q", title=title, axis=alt.Axis(tickMinStep=1)),
    )
    bars = base.mark_bar(color=REPORTED, cornerRadiusTopLeft=4, cornerRadiusTopRight=4)
    text = base.mark_text(dy=-10 if not big else -16, fontSize=26 if big else 14,
                          fontWeight="bold", color=_EDGE).encode(text="count:Q")
    return _style((bars + text).properties(height=320 if big else 240), big)


def estimate_by_round_chart(rows: Sequence[dict], *, big: bool = False,
                            level: float = 0.95) -> alt.Chart:
    """μ̂ with its normal interval per round (``rows``: round, n, mu, lo, hi).

    Dashed lines at 0 and 1 mark where a share can lie; an estimate or an
    interval end outside them is drawn where it is.
    """
    data = [r for r in rows if _ok(r.get("mu"))]
    df = pd.DataFrame(data or [{"round": 1, "n": 0, "mu": None, "lo": None, "hi": None}])
    df["round"] = df["round"].astype(str)
    x = alt.X("round:N", title="Round", axis=alt.Axis(labelAngle=0))
    ci = alt.Chart(df).mark_rule(color=ESTIMATE, strokeWidth=4 if big else 3).encode(
        x=x, y=alt.Y("lo:Q", title="Estimated share"), y2="hi:Q")
    point = alt.Chart(df).mark_point(color=ESTIMATE, filled=True, size=260 if big else 120).encode(
        x=x, y="mu:Q",
        tooltip=[alt.Tooltip("round:N"), alt.Tooltip("n:Q"),
                 alt.Tooltip("mu:Q", format=".3f", title="μ̂"),
                 alt.Tooltip("lo:Q", format=".3f", title=f"{level:.0%} CI low"),
                 alt.Tooltip("hi:Q", format=".3f", title=f"{level:.0%} CI high")])
    edges = alt.Chart(pd.DataFrame({"y": [0.0, 1.0]})).mark_rule(
        color="#9ca3af", strokeDash=[6, 4]).encode(y="y:Q")
    return _style((edges + ci + point).properties(height=300 if big else 220), big)


def estimate_trace_chart(rows: Sequence[dict], *, big: bool = False,
                         level: float = 0.95) -> alt.Chart:
    """μ̂ and its normal interval as reports arrived (``rows``: n, mu, lo, hi)."""
    data = [r for r in rows if _ok(r.get("mu")) and _ok(r.get("lo")) and _ok(r.get("hi"))]
    df = pd.DataFrame(data or [{"n": 0, "mu": None, "lo": None, "hi": None}])
    x = alt.X("n:Q", title="Reports received (n)", axis=alt.Axis(tickMinStep=1))
    band = alt.Chart(df).mark_area(color=ESTIMATE, opacity=0.18).encode(
        x=x, y=alt.Y("lo:Q", title=f"μ̂ and {level:.0%} CI"), y2="hi:Q")
    line = alt.Chart(df).mark_line(color=ESTIMATE, strokeWidth=4 if big else 2.5,
                                   point=alt.OverlayMarkDef(color=ESTIMATE, size=60)).encode(
        x=x, y="mu:Q",
        tooltip=[alt.Tooltip("n:Q"), alt.Tooltip("mu:Q", format=".3f", title="μ̂"),
                 alt.Tooltip("lo:Q", format=".3f"), alt.Tooltip("hi:Q", format=".3f")])
    edges = alt.Chart(pd.DataFrame({"y": [0.0, 1.0]})).mark_rule(
        color="#9ca3af", strokeDash=[6, 4]).encode(y="y:Q")
    return _style((band + edges + line).properties(height=300 if big else 220), big)


def log_likelihood_chart(mu: Sequence[float], log_lik: Sequence[float], *, mle: float | None,
                         lr_low: float | None, lr_high: float | None, critical: float,
                         big: bool = False, floor: float = -8.0) -> alt.Chart:
    """The log-likelihood relative to its maximum, ``l(mu) - l(MLE)``, over mu in [0, 1].

    The horizontal line at ``-critical / 2`` (−1.92 at 95%) cuts out the
    likelihood-ratio interval, shaded; the MLE is the vertical line. Values
    below ``floor`` (and −∞, impossible shares) are cut off at the floor.
    """
    pairs = [(float(m), float(v)) for m, v in zip(mu, log_lik) if _ok(m)]
    top = max((v for _, v in pairs if _ok(v)), default=0.0)
    rel = [(m, max(floor, v - top) if _ok(v) else floor) for m, v in pairs]
    df = pd.DataFrame(rel, columns=["mu", "rel"])
    x = alt.X("mu:Q", title="True share μ", scale=alt.Scale(domain=[0, 1]))
    layers: list[alt.Chart] = []
    if _ok(lr_low) and _ok(lr_high):
        layers.append(alt.Chart(pd.DataFrame({"lo": [lr_low], "hi": [lr_high]})).mark_rect(
            color=MLE, opacity=0.15).encode(x="lo:Q", x2="hi:Q"))
    layers.append(alt.Chart(df).mark_line(color=_EDGE, strokeWidth=3 if big else 2).encode(
        x=x, y=alt.Y("rel:Q", title="log-likelihood − max", scale=alt.Scale(domain=[floor, 0.5])),
        tooltip=[alt.Tooltip("mu:Q", format=".3f"), alt.Tooltip("rel:Q", format=".2f")]))
    layers.append(alt.Chart(pd.DataFrame({"y": [-critical / 2]})).mark_rule(
        color=MLE, strokeDash=[6, 4], strokeWidth=2).encode(y="y:Q"))
    if _ok(mle):
        layers.append(alt.Chart(pd.DataFrame({"x": [mle]})).mark_rule(
            color=MLE, strokeWidth=3).encode(x="x:Q"))
    return _style(alt.layer(*layers).properties(height=300 if big else 220), big)


def histogram_chart(options: Sequence[str], n: int, raw: Sequence[float],
                    clipped: Sequence[float], norm_sub: Sequence[float], sd: Sequence[float],
                    labels: dict[str, str], *, z: float, big: bool = False) -> alt.Chart:
    """Estimated share of each option: raw unbiased (with ± z·SD bars), clipped, Norm-Sub.

    Counts are divided by ``n`` to give shares; ``labels`` names the three
    series (``raw``, ``clip``, ``norm_sub``) as the page shows them.
    """
    rows = []
    for i, opt in enumerate(options):
        for key, values in (("raw", raw), ("clip", clipped), ("norm_sub", norm_sub)):
            v = values[i] / n if n else None
            s = sd[i] / n if (n and key == "raw" and _ok(sd[i])) else None
            rows.append({"option": opt, "series": labels[key], "share": v,
                         "lo": v - z * s if s is not None else None,
                         "hi": v + z * s if s is not None else None})
    df = pd.DataFrame(rows)
    order = [labels["raw"], labels["clip"], labels["norm_sub"]]
    colour = alt.Color("series:N", title=None, sort=order,
                       scale=alt.Scale(domain=order, range=[ESTIMATE, POST_CLIP, POST_NORMSUB]))
    x = alt.X("option:N", sort=list(options), title=None, axis=alt.Axis(labelAngle=0))
    offset = alt.XOffset("series:N", sort=order)
    bars = alt.Chart(df).mark_bar().encode(
        x=x, xOffset=offset, y=alt.Y("share:Q", title="Estimated share"), color=colour,
        tooltip=[alt.Tooltip("option:N"), alt.Tooltip("series:N"),
                 alt.Tooltip("share:Q", format=".3f")])
    err = alt.Chart(df.dropna(subset=["lo", "hi"])).mark_rule(
        color=_EDGE, strokeWidth=2).encode(x=x, xOffset=offset, y="lo:Q", y2="hi:Q")
    zero = alt.Chart(pd.DataFrame({"y": [0.0]})).mark_rule(color=_EDGE).encode(y="y:Q")
    return _style((bars + err + zero).properties(height=340 if big else 260), big)


def sd_vs_epsilon_chart(curve: Sequence[tuple[float, float]],
                        marks: Sequence[tuple[str, float, float]], n: int, *,
                        big: bool = False) -> alt.Chart:
    """The worst-case SD at this n against ε (``curve``: (ε, SD) pairs), with labelled points.

    ``marks`` holds ``(label, ε, SD)`` for the current design and the what-if one.
    """
    df = pd.DataFrame([{"eps": e, "sd": s} for e, s in curve if _ok(e) and _ok(s)])
    line = alt.Chart(df).mark_line(color=REPORTED, strokeWidth=2).encode(
        x=alt.X("eps:Q", title="ε (privacy loss per student)"),
        y=alt.Y("sd:Q", title=f"SD of μ̂ at n = {n}", scale=alt.Scale(type="log")))
    pts = pd.DataFrame([{"label": lb, "eps": e, "sd": s} for lb, e, s in marks
                        if _ok(e) and _ok(s)])
    if pts.empty:
        return _style(line.properties(height=240), big)
    domain = list(pts["label"])
    colour = alt.Color("label:N", title=None, scale=alt.Scale(
        domain=domain, range=[ESTIMATE, WHATIF][: len(domain)]))
    dots = alt.Chart(pts).mark_point(filled=True, size=180).encode(
        x="eps:Q", y="sd:Q", color=colour,
        tooltip=[alt.Tooltip("label:N"), alt.Tooltip("eps:Q", format=".2f"),
                 alt.Tooltip("sd:Q", format=".3f")])
    return _style((line + dots).properties(height=260 if big else 240), big)
