"""Self-study: the averaging attack. One yes/no answer randomized k times, reports linked.

The observer's posterior, the chance a majority vote reveals the truth, and the privacy
loss of the k linked reports computed exactly from their joint channel (k ε for
ε-randomized response: composition is tight). Then the memo (RAPPOR's permanent
randomized response): the same k reports drawn from one memo cost at most ε∞, however
many. Then why the classroom keeps one report per device and round, unlinkable across
rounds.

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
    MemoRR,
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
K_MEMO = "avg_memo_eps"

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
    ss.setdefault(K_MEMO, 2.0)


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


@st.cache_data(show_spinner=False, max_entries=64)
def _memo_curves(epsilon: float, epsilon_series: float) -> dict[str, list[float]]:
    """Per k: the cost of k reports without and with the memo, and the majority's chance."""
    plain, memo = EpsilonRR(epsilon), MemoRR.from_epsilons(epsilon_series, epsilon)
    return {"plain": [composed_epsilon(plain, int(k)) for k in K_GRID],
            "memo": [composed_epsilon(memo, int(k)) for k in K_GRID],
            "plain_reveal": [majority_reveal_probability(plain, int(k)) for k in K_GRID],
            "memo_reveal": [majority_reveal_probability(memo, int(k)) for k in K_GRID]}


def _memo_section(design: BinaryDesign, label: str, k: int) -> None:
    st.subheader("The same question every week: a memo")
    eps = design.epsilon
    st.write(
        "RAPPOR (Erlingsson, Pihur & Korolova, CCS 2014) keeps privacy from running out. "
        "The phone randomizes the answer once, a permanent memo kept in its own storage, and "
        "every week sends a fresh randomization of that memo. However many reports an "
        "attacker lines up, they can reveal no more than the memo: ε∞ for the whole series, "
        "ε₁ for one report.")
    low = float(math.ceil(eps * 100) / 100)
    if st.session_state[K_MEMO] < low:
        st.session_state[K_MEMO] = low
    total = st.slider("ε∞, the memo's ε: what the whole series may cost", low, max(6.0, low),
                      step=0.05, key=K_MEMO, persist_state="session",
                      help=f"One report costs ε₁ = {fmt_eps_value(eps, 3)} ({label}); the "
                           "memo's ε must be at least that.")
    memo = MemoRR.from_epsilons(float(total), eps)
    curves = _memo_curves(eps, float(total))
    c1, c2, c3, c4 = st.columns(4)
    c1.metric(f"{k} reports without a memo (k × ε)", fmt_eps_value(curves["plain"][k - 1], 3))
    c2.metric(f"{k} reports with the memo", fmt_eps_value(curves["memo"][k - 1], 3),
              help="Exact, from the joint channel of k reports of one memo: it grows with k "
                   "and never passes ε∞.")
    c3.metric("ε∞, the whole series", fmt_eps_value(memo.epsilon_series, 3))
    c4.metric("Majority = truth, memo", fmt_pct(curves["memo_reveal"][k - 1], 1),
              help=f"At most the chance that the memo equals the truth, "
                   f"{fmt_pct(memo.permanent.a, 1)}, however many reports.")
    left, right = st.columns(2, gap="large")
    names = {"without a memo": "plain", "with the memo": "memo"}
    colours = {"without a memo": charts.LOCAL, "with the memo": charts.CENTRAL,
               "ε∞": charts.THEORY}
    with left:
        charts.show(charts.line_chart(
            K_GRID, {**{n: curves[key] for n, key in names.items()},
                     "ε∞": [memo.epsilon_series] * K_MAX},
            colors=colours, dashed=("ε∞",), x_title="k, reports of the same answer",
            y_title="privacy loss of the k reports (log scale)", log_y=True,
            title="What a series costs",
            marker=(k, curves["memo"][k - 1], "now")))
    with right:
        charts.show(charts.line_chart(
            K_GRID, {n: curves[f"{key}_reveal"] for n, key in names.items()},
            colors=colours, x_title="k, reports of the same answer",
            y_title="P(majority = truth)", y_domain=(0.5, 1.0),
            title="The majority vote stops at the memo",
            marker=(k, curves["memo_reveal"][k - 1], "now")))
    st.markdown(
        "* **A changed answer costs again.** The memo belongs to one answer. A student whose "
        "answer changes gets a new memo, which costs ε∞ once more, and many reports from "
        "two memos can show that the answer changed.\n"
        "* **A new phone or a cleared browser starts a new memo**, and so costs ε∞ again.\n"
        "* **The memo never leaves the phone.** Only the weekly randomization of it is sent; "
        "the memo itself is kept in the phone's own storage.")


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

    _memo_section(design, label, k)

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
