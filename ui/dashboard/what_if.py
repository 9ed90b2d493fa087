"""What if: the SD at the same n under another design, with γ and ε sliders kept in
step."""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

import ldp_core
from classroom.domain import ClassroomError
from ui import live_charts
from ui.dashboard.actions import cb_new_round
from ui.fmt import fmt_fixed

_EPS_RANGE = (0.01, 5.0)


#: The two ranges map onto each other (ε = ln((1+2γ)/(1−2γ)) at the shown precision), so
#: neither slider is ever clamped and the labels always agree with both.
_GAMMA_RANGE = (0.002, 0.493)


def _cb_link(source: str, prefix: str) -> None:
    """Keep the γ and ε sliders of one group in step (γ = tanh(ε/2)/2, ε = ln((1+2γ)/(1−2γ)))."""
    g_key, e_key = f"{prefix}_gamma", f"{prefix}_eps"
    try:
        if source == "gamma":
            eps = ldp_core.gamma_to_epsilon(st.session_state[g_key])
            st.session_state[e_key] = min(max(round(eps, 2), _EPS_RANGE[0]), _EPS_RANGE[1])
        else:
            gamma = ldp_core.epsilon_to_gamma(st.session_state[e_key])
            st.session_state[g_key] = min(max(round(gamma, 3), _GAMMA_RANGE[0]),
                                          _GAMMA_RANGE[1])
    except ValueError:
        return
    st.session_state[f"{prefix}_src"] = source


def linked_sliders(prefix: str, eps0: float) -> object:
    """γ and ε sliders kept in step; returns the design of the one moved last."""
    g_key, e_key, s_key = f"{prefix}_gamma", f"{prefix}_eps", f"{prefix}_src"
    if e_key not in st.session_state or g_key not in st.session_state:
        eps = min(max(round(eps0, 2), _EPS_RANGE[0]), _EPS_RANGE[1])
        st.session_state[e_key] = eps
        st.session_state[g_key] = min(max(round(ldp_core.epsilon_to_gamma(eps), 3),
                                          _GAMMA_RANGE[0]), _GAMMA_RANGE[1])
        st.session_state[s_key] = "gamma" if abs(eps0 - math.log(3)) < 1e-9 else "epsilon"
    left, right = st.columns(2)
    left.slider("γ: keep the true answer with probability ½ + γ", *_GAMMA_RANGE, step=0.001,
                format="%.3f", key=g_key, on_change=_cb_link, args=("gamma", prefix))
    right.slider("ε: privacy loss per student", *_EPS_RANGE, step=0.01, format="%.2f",
                 key=e_key, on_change=_cb_link, args=("epsilon", prefix))
    if st.session_state.get(s_key) == "gamma":
        design = ldp_core.GammaRR(st.session_state[g_key])
    else:
        design = ldp_core.EpsilonRR(st.session_state[e_key])
    st.caption(rf"Keep w.p. {fmt_fixed(design.a, 3)}; "
               rf"$\varepsilon = \ln\frac{{1+2\gamma}}{{1-2\gamma}} = {design.epsilon:.3f}$, "
               rf"$\gamma = \tfrac12\tanh(\varepsilon/2) = "
               rf"{ldp_core.epsilon_to_gamma(design.epsilon):.3f}$ "
               f"(set by the {'γ' if st.session_state.get(s_key) == 'gamma' else 'ε'} slider).")
    return design


def what_if_panel(svc, question) -> None:
    try:
        est = svc.estimate(question.id)
    except ClassroomError as exc:
        st.warning(str(exc))
        return
    n = est.n if est.n >= 1 else 100
    if st.session_state.get("_dash_wi_qid") != (question.id, question.round_number):
        # Another question or round: start the sliders from its design again.
        for key in ("dash_wi_gamma", "dash_wi_eps", "dash_wi_src"):
            st.session_state.pop(key, None)
        st.session_state["_dash_wi_qid"] = (question.id, question.round_number)
    with st.expander(f"What if: the SD at n = {n} under another design (the data stay as "
                     "they are)", key="dash_open_what_if", on_change="rerun"):
        if est.n < 1:
            st.caption("No reports yet, so the comparison uses n = 100.")
        whatif = linked_sliders("dash_wi", question.epsilon)
        current = question.design
        sd_now = ldp_core.BinaryCounts.single(current, 0, n).sd_worst()
        sd_new = ldp_core.BinaryCounts.single(whatif, 0, n).sd_worst()
        a, b = st.columns(2)
        a.metric(f"SD now (ε = {fmt_fixed(current.epsilon, 2)})", fmt_fixed(sd_now, 3))
        b.metric(f"SD with this design (ε = {fmt_fixed(whatif.epsilon, 2)})",
                 fmt_fixed(sd_new, 3))
        grid = np.linspace(0.1, 5.0, 60)
        curve = [(float(e), ldp_core.BinaryCounts.single(ldp_core.EpsilonRR(float(e)), 0, n)
                  .sd_worst()) for e in grid]
        live_charts.show(live_charts.sd_vs_epsilon(
            curve, [("current design", current.epsilon, sd_now),
                    ("what-if design", whatif.epsilon, sd_new)]))
        st.caption("More privacy (smaller ε) means more noise: the SD grows like 1/ε for "
                   "small ε. Only sliders move here; no report changes.")
        st.markdown(f"**Next round** (round {question.round_number + 1})")
        left, right = st.columns([2, 1], vertical_alignment="bottom")
        left.checkbox("Open voting right away", key="dash_wi_open")
        right.button("Start next round with this design", key="dash_wi_apply",
                     on_click=cb_new_round, args=(question.id, whatif.params(), "dash_wi_open"),
                     width="stretch")
