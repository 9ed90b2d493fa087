"""The numbers of one round of a numeric question: the estimated mean, its SDs and CI,
ε, what the phones sent, the central model's SD for comparison, and the rounds."""

from __future__ import annotations

import math

import streamlit as st

import ldp_core
from ui import live_charts
from ui.dashboard.estimates import rounds_table
from ui.dashboard.formulas import design_with_eps
from ui.dashboard.shuffle import shuffle_caption
from ui.fmt import (
    fmt_count,
    fmt_eps,
    fmt_fixed,
    fmt_value,
    fmt_value_interval,
    value_decimals,
)

__all__ = ["central_numeric_note", "interval_help", "numeric_panel", "numeric_rounds"]


def _decimals(design) -> int:
    """One number of decimals for every value of the question (:func:`value_decimals`)."""
    return value_decimals(design.range.lo, design.range.hi)


def _value(x: float | None, unit: str, decimals: int) -> str:
    return fmt_value(x, unit, decimals)


def _interval(ci: tuple[float, float] | None, unit: str, decimals: int) -> str:
    """Rounded outward, as on every screen (:func:`classroom.display.value_interval`)."""
    return "—" if ci is None else fmt_value_interval(ci[0], ci[1], unit, decimals)


def central_numeric_note(n: int, epsilon: float, design, local_sd: float | None,
                         unit: str) -> str | None:
    """The central model at the same ε and n: Laplace noise on the mean, whose
    sensitivity is (hi − lo)/n (Dwork, McSherry, Nissim & Smith 2006)."""
    if n < 1 or not math.isfinite(epsilon) or epsilon <= 0:
        return None
    sd = ldp_core.central_numeric_sd(n, epsilon, design.range)
    ratio = (f", {local_sd / sd:,.0f}× smaller than the local SD" if local_sd and sd > 0
             else "")
    return (f"A central curator with the same {fmt_eps(epsilon)}, who saw the true "
            f"values and added Laplace noise to their mean (sensitivity (hi − lo)/n), would "
            f"have had SD {_value(sd, unit, _decimals(design))} (√2 (hi − lo)/(εn)){ratio}: "
            "the price of never trusting the server.")


def interval_help(num) -> str:
    """What the numeric 95% CI is: exact for two-valued reports, else mean ± t SD."""
    if num.exact:
        return ("Exact: every report is one of two values, a randomized bit, so the "
                "Clopper–Pearson interval for the share of the larger value, mapped to the "
                "range, covers the class's true mean in at least 95% of re-runs at any n. "
                "It is not built from the SD beside it.")
    t = ldp_core.t_quantile(0.95, max(num.n - 1, 1))
    return (f"The mean ± {t:.2f} × SD (worst case): Student's t quantile for n − 1 degrees "
            "of freedom, which makes up for the skew of a sum of few reports. Measured, it "
            "covers the class's true mean in about 95% of re-runs, never below 94.9%, for "
            "every mechanism and class tried from n = 10 on.")


def numeric_rounds(q, est, rounds) -> list[dict]:
    """A numeric question's rounds table: every round's mean, SD and CI, round 1 first
    (``rounds``, the rounds' designs, unused: the table names no design)."""
    rows = []
    dec = _decimals(q.design)
    for number, e in est.history:
        rows.append({"Round": str(number), "n": fmt_count(e.n),
                     "Mean": _value(e.mean, q.unit, dec),
                     "SD": _value(e.sd_worst, q.unit, dec),
                     "95% CI": _interval(e.interval(), q.unit, dec)})
    return rows


def numeric_panel(q, est, rounds, projector: bool, points, note: str | None) -> None:
    """A numeric question's round: the mean, its SDs and CI, what the phones sent and the
    rounds (``points``, the arrival trajectory, unused; ``note``: the simulated class, or
    None)."""
    num, unit, design = est.result.estimate, q.unit, q.design
    mech = design.mechanism
    n = est.n
    dec = _decimals(design)
    # The CI is the longest number ("2.62 to 11.07 hours"): on the projector its column
    # is wide enough to show it whole; at the desk, whose live panel shares the width with
    # the join panel and the sidebar, it has a row of its own under the other three.
    top = (list(st.columns([1, 1, 1, 1.45])) if projector
           else [*st.columns(3), st.columns([2, 1])[0]])
    top[0].metric("Reports received", fmt_count(n))
    top[1].metric("Estimated mean", _value(num.mean, unit, dec),
                  help="The average of the reports, in the question's units. Each report is "
                  "unbiased, so their average is an unbiased estimate of the class's mean.")
    top[2].metric("SD, worst case", _value(num.sd_worst, unit, dec),
                  help="How far the estimate moves if the same class answered again with "
                  "fresh noise, in the worst case over the class's values: the "
                  "mechanism's exact variance over √n."
                  + ("" if num.exact else " The 95% CI is built from this SD."))
    top[3].metric("95% CI", _interval(num.interval(), unit, dec), help=interval_help(num))
    if not projector:
        st.caption(
            f"Design: {design_with_eps(design, est.epsilon)}. Mean "
            r"$\hat m = \frac{1}{n}\sum_i y_i$ with each report $y_i$ mapped back to "
            f"[{design.range.lo:g}, {design.range.hi:g}]; SD per report in the worst case "
            f"{_value(design.worst_sd(), unit, dec)}, so SD(mean) = that/√n. "
            f"The reports' own spread gives {_value(num.sd, unit, dec)}; it also counts how "
            "much the students' answers differ"
            + (". The CI is exact: the reports are a randomized bit." if num.exact else
               ", so the CI uses the worst case."))
        central = central_numeric_note(n, est.epsilon, design, num.sd_worst, unit)
        if central:
            st.caption(central)
        shuffle_caption(est)  # beside ε, which only the desk shows for a numeric question
    if note:
        st.caption(note)
    if num.mean is not None and not num.lo <= num.mean <= num.hi:
        st.warning(
            f"The estimated mean {_value(num.mean, unit, dec)} is outside the range of "
            "answers "
            f"[{num.lo:g}, {num.hi:g}]. No class average can be, but the unbiased estimate "
            f"does not know that: with n = {n} the noise "
            f"(SD {_value(num.sd_worst, unit, dec)}) "
            f"can push it past the edge. Clipped to the range it is "
            f"{_value(num.clipped_mean, unit, dec)}.")
    left, right = st.columns([1.4, 1], gap="large")
    with left:
        st.markdown("**What the phones sent** (shaded: the range of answers; dashed: the "
                    "estimated mean)")
        live_charts.show(live_charts.numeric_reports(est.result.reports, num.lo, num.hi,
                                                     num.mean, unit=unit), big=projector,
                         # alone in its row of numbers and charts: taller than the
                         # yes/no question's two side by side
                         max_height=live_charts.PROJECTOR_MAIN_HEIGHT + 60)
    with right:
        st.markdown("**Reading the chart**")
        duchi = mech if isinstance(mech, ldp_core.DuchiMechanism) else \
            mech.duchi if isinstance(mech, ldp_core.HybridMechanism) else None
        if duchi is not None:
            low, high = (design.value_of(-duchi.c_epsilon), design.value_of(duchi.c_epsilon))
            sent = (f"{_value(low, unit, dec)} or {_value(high, unit, dec)}: a randomized "
                    f"bit scaled by c_ε = (e^ε + 1)/(e^ε − 1) = {fmt_fixed(duchi.c_epsilon, 2)}")
        if isinstance(mech, ldp_core.HybridMechanism) and mech.p_piecewise > 0:
            grid = mech.device_grid()
            assert grid is not None  # the Piecewise part has its cells
            low, high = (design.value_of(b) for b in grid)
            sent = (f"a coin on each phone chose Duchi et al.'s part (chance "
                    f"e^(−ε/2) = {1 - mech.p_piecewise:.0%}), which sends {sent}, or the "
                    f"Piecewise Mechanism, which sends a value anywhere from "
                    f"{_value(low, unit, dec)} to {_value(high, unit, dec)}")
        elif duchi is not None:
            sent = f"every phone sent one of two values, {sent}"
        else:
            low, high = (design.value_of(b) for b in mech.device_grid())
            sent = (f"a phone's report can be anywhere from {_value(low, unit, dec)} to "
                    f"{_value(high, unit, dec)}")
        st.markdown(f"- The reports run far outside the range of answers: {sent}.\n"
                    "- One report says little about its student; the noise cancels in "
                    "the average, so the mean comes through.\n"
                    "- The SD shrinks like 1/√n; a trusted curator's like 1/n.")
    rounds_table(numeric_rounds(q, est, rounds))
