"""What if: the SD at the class's n under another design, chosen by γ or by ε.

One parameter sets the design, and it is the one on screen: the instructor picks
whether to set γ or ε, moves that one slider, and the other parameter is shown
beside it, computed from it (γ = ½ tanh(ε/2), ε = ln((1 + 2γ)/(1 − 2γ))). Two
sliders kept in step, each rounded to its own grid, could show the same two values
for two different designs; one slider cannot.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

import ldp_core
from classroom.domain import EPSILON_RANGE, ClassroomError
from ui import live_charts
from ui.dashboard.actions import cb_new_round
from ui.fmt import fmt_count, fmt_eps, fmt_eps_value, fmt_fixed

__all__ = ["BY_EPSILON", "BY_GAMMA", "WHAT_IF_N", "design_picker", "what_if_panel"]

_EPS_RANGE = EPSILON_RANGE
_GAMMA_RANGE = (0.002, 0.493)
BY_GAMMA, BY_EPSILON = "gamma", "epsilon"
_BY = {BY_GAMMA: "γ: keep the true answer with probability ½ + γ",
       BY_EPSILON: "ε: privacy loss per student"}
#: The class size of the comparison while the round has no report yet.
WHAT_IF_N = 100


def _on_grid(x: float, step: float, lo: float, hi: float) -> float:
    """``x`` on a slider's grid: rounded to its step and kept in its range."""
    return min(max(round(round(x / step) * step, 6), lo), hi)


def _gamma_of(design) -> float:
    """γ of the symmetric design with the same ε as ``design``."""
    return ldp_core.epsilon_to_gamma(design.epsilon)


def _cb_switch(prefix: str) -> None:
    """The parameter to set changed: its slider starts where the other one left the design."""
    by, g_key, e_key = (st.session_state[f"{prefix}_by"], f"{prefix}_gamma", f"{prefix}_eps")
    try:
        if by == BY_EPSILON and g_key in st.session_state:
            eps = ldp_core.gamma_to_epsilon(st.session_state[g_key])
            st.session_state[e_key] = _on_grid(eps, 0.01, *_EPS_RANGE)
        elif by == BY_GAMMA and e_key in st.session_state:
            gamma = ldp_core.epsilon_to_gamma(st.session_state[e_key])
            st.session_state[g_key] = _on_grid(gamma, 0.001, *_GAMMA_RANGE)
    except ValueError:
        return


def design_picker(prefix: str, start) -> ldp_core.BinaryDesign:
    """Choose a symmetric yes/no design by γ or by ε with one slider, starting from
    ``start`` (a design); returns the design the slider on screen sets.

    It starts by γ when ``start``'s γ lies on the γ slider's grid (the die and the
    two coins: γ = 0.250; Warner's spinner at p = 0.7: γ = 0.200), by ε otherwise.
    """
    by_key, g_key, e_key = f"{prefix}_by", f"{prefix}_gamma", f"{prefix}_eps"
    if by_key not in st.session_state:
        gamma = _gamma_of(start)
        on_grid = abs(gamma - round(gamma, 3)) < 1e-9 and \
            _GAMMA_RANGE[0] <= gamma <= _GAMMA_RANGE[1]
        st.session_state[by_key] = BY_GAMMA if on_grid else BY_EPSILON
        st.session_state[g_key] = _on_grid(gamma, 0.001, *_GAMMA_RANGE)
        st.session_state[e_key] = _on_grid(start.epsilon, 0.01, *_EPS_RANGE)
    by = st.radio("Set the design by", list(_BY), key=by_key, horizontal=True,
                  format_func=lambda b: "γ (how often the truth is kept)" if b == BY_GAMMA
                  else "ε (the privacy loss)",
                  on_change=_cb_switch, args=(prefix,))
    if by == BY_GAMMA:
        st.session_state.setdefault(g_key, 0.25)
        gamma = st.slider(_BY[BY_GAMMA], *_GAMMA_RANGE, step=0.001, format="%.3f", key=g_key)
        design: ldp_core.BinaryDesign = ldp_core.GammaRR(gamma)
        st.caption(rf"Keep the true answer w.p. {fmt_fixed(design.a, 3)}; "
                   rf"$\varepsilon = \ln\frac{{1+2\gamma}}{{1-2\gamma}} \approx "
                   rf"{fmt_eps_value(design.epsilon, 4)}$ (rounded up).")
    else:
        st.session_state.setdefault(e_key, 1.0)
        eps = st.slider(_BY[BY_EPSILON], *_EPS_RANGE, step=0.01, format="%.2f", key=e_key)
        design = ldp_core.EpsilonRR(eps)
        st.caption(rf"Keep the true answer w.p. $\frac{{e^\varepsilon}}{{1+e^\varepsilon}} = "
                   rf"{design.a:.4f}$, so $\gamma = \tfrac12\tanh(\varepsilon/2) = "
                   rf"{_gamma_of(design):.4f}$.")
    return design


def _class_size(n: int) -> tuple[int, str]:
    """(n of the comparison, why that n)."""
    if n >= 1:
        return n, f"At n = {fmt_count(n)}, the reports of this round so far."
    return WHAT_IF_N, (f"No reports in this round yet, so the SDs are for a class of "
                       f"n = {WHAT_IF_N}; with the first reports they use this round's n.")


def what_if_panel(svc, question) -> None:
    try:
        est = svc.results.estimate(question.id)
    except ClassroomError as exc:
        st.warning(str(exc))
        return
    n, why = _class_size(est.n)
    if st.session_state.get("_dash_wi_qid") != (question.id, question.round_number):
        # Another question or round: start the slider from its design again.
        for key in ("dash_wi_by", "dash_wi_gamma", "dash_wi_eps"):
            st.session_state.pop(key, None)
        st.session_state["_dash_wi_qid"] = (question.id, question.round_number)
    # The title never changes: a new title would be a new expander, closed again.
    with st.expander("What if: the SD under another design (the data stay as they are)",
                     key="dash_open_what_if", on_change="rerun"):
        current = question.design
        whatif = design_picker("dash_wi", current)
        sd_now = ldp_core.BinaryCounts.single(current, 0, n).sd_worst()
        sd_new = ldp_core.BinaryCounts.single(whatif, 0, n).sd_worst()
        st.caption(why + " The ratio of the two SDs is the same at every n.")
        a, b = st.columns(2)
        a.metric(f"SD now ({fmt_eps(current.epsilon)})", fmt_fixed(sd_now, 3))
        b.metric(f"SD with this design ({fmt_eps(whatif.epsilon)})",
                 fmt_fixed(sd_new, 3))
        grid = np.linspace(0.1, 5.0, 60)
        curve = [(float(e), ldp_core.BinaryCounts.single(ldp_core.EpsilonRR(float(e)), 0, n)
                  .sd_worst()) for e in grid]
        live_charts.show(live_charts.sd_vs_epsilon(
            curve, [("current design", current.epsilon, sd_now),
                    ("what-if design", whatif.epsilon, sd_new)]))
        st.caption("More privacy (smaller ε) means more noise: the SD grows like 1/ε for "
                   "small ε. Only the slider moves here; no report changes.")
        st.markdown(f"**Next round** (round {question.round_number + 1})")
        left, right = st.columns([2, 1], vertical_alignment="bottom")
        left.checkbox("Open voting right away", key="dash_wi_open")
        right.button("Start next round with this design", key="dash_wi_apply",
                     on_click=cb_new_round, args=(question.id, whatif.params(), "dash_wi_open"),
                     width="stretch")
