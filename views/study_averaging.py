"""Self-study: the averaging attack. One yes/no answer randomized k times, reports linked.

The observer's posterior, the chance a majority vote reveals the truth, and the privacy
loss of the k linked reports computed exactly from their joint channel (k ε for
ε-randomized response: composition is tight). Then why the classroom keeps one report
per device and round, unlinkable across rounds.

Layout only: every number comes from ``ldp_core``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from ldp_core import (
    BinaryDesign,
    DieRR,
    EpsilonRR,
    composed_epsilon,
    majority_reveal_probability,
    repeated_posterior,
    yes_count_distribution,
)
from ui import charts
from ui.fmt import fmt_eps_value, fmt_pct

K_DESIGN = "avg_design"
K_K = "avg_k"
K_PRIOR = "avg_prior"

#: The designs a learner compares: (label, design, chart colour).
DESIGNS = {
    "small": ("ε = 0.5", EpsilonRR(0.5), charts.CENTRAL),
    "exercise": ("the class exercise's die (ε = ln 3 ≈ 1.10)", DieRR(4, 3), charts.LOCAL),
    "large": ("ε = 2", EpsilonRR(2.0), charts.THEORY),
}
K_MAX = 60
K_GRID = np.arange(1, K_MAX + 1)


def _defaults() -> None:
    ss = st.session_state
    ss.setdefault(K_DESIGN, "exercise")
    ss.setdefault(K_K, 5)
    ss.setdefault(K_PRIOR, 0.5)


@st.cache_data(show_spinner=False, max_entries=16)
def _curves(prior: float) -> dict[str, dict[str, list[float]]]:
    """Per design and k: majority reveal probability, and the expected posterior of a
    truly-yes student (the attacker's belief, averaged over the randomization)."""
    out: dict[str, dict[str, list[float]]] = {}
    for key, (_, design, _) in DESIGNS.items():
        reveal, belief = [], []
        for k in K_GRID:
            reveal.append(majority_reveal_probability(design, int(k)))
            post = np.nan_to_num(repeated_posterior(design, int(k), prior))
            belief.append(float(yes_count_distribution(design, int(k), 1) @ post))
        out[key] = {"reveal": reveal, "belief": belief}
    return out


def _numbers(design: BinaryDesign, k: int, prior: float) -> None:
    eps = design.epsilon
    composed = composed_epsilon(design, k)
    post = repeated_posterior(design, k, prior)
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("ε of one report", fmt_eps_value(eps, 3))
    c2.metric(f"ε of {k} linked reports, from their joint channel", fmt_eps_value(composed, 3),
              help="The largest |log ratio| between the two truths over every sequence of "
                   "k reports.")
    c3.metric("k × ε (sequential composition)", fmt_eps_value(k * eps, 3))
    c4.metric("Majority of the reports = the truth", fmt_pct(
        majority_reveal_probability(design, k), 1))
    tight = math.isclose(composed, k * eps, rel_tol=1e-9)
    st.caption("Composition is tight here: the joint channel's privacy loss is exactly k ε, "
               "reached when all k reports agree." if tight else
               "The joint channel's privacy loss is below k ε for this design.")
    table = pd.DataFrame({
        "“yes” reports among k": np.arange(k + 1),
        "chance if truly yes": [fmt_pct(p, 1) for p in yes_count_distribution(design, k, 1)],
        "chance if truly no": [fmt_pct(p, 1) for p in yes_count_distribution(design, k, 0)],
        "attacker's P(truly yes)": [fmt_pct(p, 1) for p in post],
    })
    st.dataframe(table, hide_index=True, width="stretch")


def render() -> None:
    _defaults()
    st.title("The averaging attack: why one answer per question")
    st.write("Randomized response hides one answer. Ask the same question again and again, "
             "each time with fresh randomness, and let someone line the answers up: the lies "
             "average out and the truth shows. Each report spends ε, and k linked reports "
             "spend k ε (CS208 'The Local Model'; Dwork & Roth 2014, composition).")
    with st.container(border=True):
        c1, c2 = st.columns([2, 1])
        choice = c1.radio("Design", list(DESIGNS), format_func=lambda key: DESIGNS[key][0],
                          key=K_DESIGN, horizontal=True, persist_state="session")
        prior = c2.slider("Attacker's prior P(truly yes)", 0.05, 0.95, step=0.05,
                          key=K_PRIOR, persist_state="session")
        k = st.slider("k: how many times the same student answers the same question", 1,
                      K_MAX, key=K_K, persist_state="session")
    label, design, _ = DESIGNS[choice]
    k, prior = int(k), float(prior)

    st.subheader(f"{k} linked report{'s' if k != 1 else ''} with {label}")
    _numbers(design, k, prior)

    curves = _curves(prior)
    left, right = st.columns(2, gap="large")
    with left:
        charts.show(charts.line_chart(
            K_GRID, {DESIGNS[key][0]: curves[key]["reveal"] for key in DESIGNS},
            colors={DESIGNS[key][0]: DESIGNS[key][2] for key in DESIGNS},
            x_title="k, linked reports of the same answer", y_title="P(majority = truth)",
            title="A majority vote reveals the truth", y_domain=(0.5, 1.0),
            marker=(k, curves[choice]["reveal"][k - 1], "now")))
    with right:
        charts.show(charts.line_chart(
            K_GRID, {DESIGNS[key][0]: curves[key]["belief"] for key in DESIGNS},
            colors={DESIGNS[key][0]: DESIGNS[key][2] for key in DESIGNS},
            x_title="k, linked reports of the same answer",
            y_title="attacker's P(truly yes), on average",
            title="What the attacker believes about a truly-yes student",
            y_domain=(0.0, 1.0), marker=(k, curves[choice]["belief"][k - 1], "now")))

    st.subheader("What the classroom does about it")
    st.markdown(
        "* **One report per device and question round.** A second tap, a reload or a second "
        "tab gets the first receipt back; nothing new is stored.\n"
        "* **Nothing links a device's reports across rounds.** The server keeps only an HMAC "
        "of the device's cookie under a secret salt drawn afresh for every round, so two "
        "rounds of the same question look like two different students. An attacker cannot "
        "line up one student's answers, which is what this page needs.\n"
        "* **What a per-poll privacy budget protects.** Even unlinkable, every question a "
        "student answers spends its ε, and the losses add up (ε₁ + ε₂ + …). A budget caps "
        "the total a poll may spend on one student, whoever might later combine the "
        "answers: the instructor sets it on the dashboard, a round that would pass it does "
        "not open, and each phone shows what is left before its student answers.")
