"""Self-study: local vs central, the error asymptotics.

Error of the estimated share against n on log–log axes, for randomized
response (local model) and the Laplace mechanism (central model) at the same
ε: simulation next to the exact SDs and the rates 1/(ε√n) and 1/(εn) of the
CS208 notes; and how many more people the local model needs.

Layout only: every number comes from ``ldp_core``.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from ldp_core import (
    EpsilonRR,
    central_mean_sd,
    error_order,
    error_summary,
    laplace_mechanism,
    local_mean_sd,
    local_n_for_central_accuracy,
    pm1_mean_abs_error,
    share_estimates,
)
from ui import charts
from ui.fmt import fmt, fmt_count, fmt_eps, fmt_eps_value

K_EPS = "asy_eps"
K_MU = "asy_mu"
K_T = "asy_classes"
K_NC = "asy_n"
K_SEED = "asy_seed"

N_GRID = (1, 3, 10, 30, 100, 300, 1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000)
N_CHOICES = (1, 10, 30, 100, 300, 1_000, 3_000, 10_000, 100_000, 1_000_000)
T_CHOICES = (100, 300, 1_000, 3_000)

SIM_LOCAL = "● local RR, simulated"
SIM_CENTRAL = "● central Laplace, simulated"
SD_LOCAL = "── local, exact SD e^(ε/2)/((e^ε−1)√n)"
SD_CENTRAL = "── central, exact SD √2/(εn)"
RATE_LOCAL = "- - local rate 1/(ε√n)"
RATE_CENTRAL = "- - central rate 1/(εn)"
COLOURS = {SIM_LOCAL: charts.LOCAL, SIM_CENTRAL: charts.CENTRAL, SD_LOCAL: charts.LOCAL,
           SD_CENTRAL: charts.CENTRAL, RATE_LOCAL: charts.LOCAL, RATE_CENTRAL: charts.CENTRAL}


def _defaults() -> None:
    ss = st.session_state
    ss.setdefault(K_EPS, 0.5)
    ss.setdefault(K_MU, 0.5)
    ss.setdefault(K_T, 1_000)
    ss.setdefault(K_NC, 1_000)
    ss.setdefault(K_SEED, 0)


def _new_simulation() -> None:
    st.session_state[K_SEED] = st.session_state.get(K_SEED, 0) + 1


def _class_size_share(mu: float, n: int) -> int:
    """Vanilla lovers in a class of n with share mu, rounded half up."""
    return int(np.floor(mu * n + 0.5))


@st.cache_data(show_spinner=False, max_entries=64)
def _simulate(eps: float, mu: float, classes: int, seed: int) -> dict[str, np.ndarray]:
    """RMS error over ``classes`` simulated classes at every n of the grid, both models.

    Local: exact aggregate sampling of the yes count under ε-RR, then the
    unbiased estimate. Central: the Laplace mechanism on the true mean
    (sensitivity 1/n).
    """
    design = EpsilonRR(eps)
    gen = np.random.default_rng([seed, 3])
    local, central = [], []
    for n in N_GRID:
        v = _class_size_share(mu, n)
        yes = design.sample_yes_counts(v, n, size=classes, rng=gen)
        local.append(error_summary(share_estimates(design, yes, n), v / n).rmse)
        noisy = laplace_mechanism(v / n, 1 / n, eps, rng=gen, size=classes)
        central.append(error_summary(noisy, v / n).rmse)
    return {"local": np.array(local), "central": np.array(central)}


@st.cache_data(show_spinner=False, max_entries=64)
def _theory(eps: float) -> dict[str, np.ndarray]:
    n = np.array(N_GRID, dtype=float)
    return {
        "sd_local": np.array([local_mean_sd(int(m), eps) for m in N_GRID]),
        "sd_central": np.array([central_mean_sd(int(m), eps) for m in N_GRID]),
        "rate_local": np.asarray(error_order(n, eps, "local")),
        "rate_central": np.asarray(error_order(n, eps, "central")),
    }


def render() -> None:
    _defaults()
    st.title("Local vs central: how the error shrinks with n")
    st.caption("Randomized response adds noise to every answer; the central model adds one "
               "noise to the total. Local error falls like 1/(ε√n), central like 1/(εn) "
               "(CS208 'The Local Model', 'Local vs. centralized DP'; the figure "
               "'Asymptotics of Error' uses ε = 0.5).")
    with st.container(border=True):
        c1, c2, c3 = st.columns(3)
        eps = c1.slider("ε (the same for both models)", 0.01, 10.0, step=0.01, key=K_EPS,
                        persist_state="session",
                        help="CS208 draws this figure at ε = 0.5.")
        mu = c2.slider("True share μ", 0.0, 1.0, step=0.01, key=K_MU, persist_state="session")
        classes = c3.select_slider("Simulated classes per n", T_CHOICES, key=K_T,
                                   persist_state="session")
        n_c = c1.select_slider("Compare at n =", N_CHOICES, key=K_NC, persist_state="session")
        c2.button("New simulation", icon=":material/casino:", on_click=_new_simulation)
    eps, mu, classes, n_c = float(eps), float(mu), int(classes), int(n_c)
    seed = int(st.session_state[K_SEED])

    sim = _simulate(eps, mu, classes, seed)
    th = _theory(eps)
    charts.show(charts.line_chart(
        N_GRID,
        {SIM_LOCAL: sim["local"], SIM_CENTRAL: sim["central"], SD_LOCAL: th["sd_local"],
         SD_CENTRAL: th["sd_central"], RATE_LOCAL: th["rate_local"],
         RATE_CENTRAL: th["rate_central"]},
        colors=COLOURS, points=[SIM_LOCAL, SIM_CENTRAL], dashed=[RATE_LOCAL, RATE_CENTRAL],
        log_x=True, log_y=True, x_format="~s",
        x_title="n, number of people (log scale)",
        y_title="RMS error of the estimated share (log scale)",
        title=f"Error against n at {fmt_eps(eps)}",
        subtitle=f"dots: {fmt_count(classes)} simulated classes per n; lines: theory. "
                 "Slope −½ (local) against −1 (central).",
        height=420))
    if np.any(sim["local"] == 0) or np.any(sim["central"] == 0):
        st.caption("Some simulated errors are exactly 0 (at this ε nobody's answer was "
                   "flipped); a log axis cannot show 0, so those dots are missing.")

    st.subheader(f"At n = {fmt_count(n_c)}")
    sd_l, sd_c = local_mean_sd(n_c, eps), central_mean_sd(n_c, eps)
    need = local_n_for_central_accuracy(n_c, eps)
    m1, m2, m3 = st.columns(3)
    m1.metric("Local RR: SD of the share", fmt(sd_l, 3),
              help="e^(ε/2) / ((e^ε − 1)√n), ldp_core.local_mean_sd")
    m2.metric("Central Laplace: SD of the share", fmt(sd_c, 3),
              help="√2 / (εn), ldp_core.central_mean_sd")
    m3.metric("People the local model needs", fmt_count(need) if need >= 1 else "< 1",
              help="Solves local SD(m) = central SD(n) for m: "
                   "m = n² ε² e^ε / (2 (e^ε − 1)²), ldp_core.local_n_for_central_accuracy")
    if need > n_c:
        st.markdown(
            f"To be as accurate as the central model with **{fmt_count(n_c)}** people at "
            f"{fmt_eps(eps)}, randomized response needs about "
            f"**{fmt_count(need)}** people. For small ε that is about n²/2: the price of "
            "not trusting anyone with the raw answers. This is why successful local "
            "deployments (Google, Apple) have millions of users (CS208).")
    else:
        who = "fewer than one person" if need < 1 else f"about **{fmt_count(need)}** people"
        st.markdown(
            f"At {fmt_eps(eps)} and n = {fmt_count(n_c)}, randomized response is "
            f"not worse: {who} already match the central "
            "accuracy. With a large ε almost nobody's answer is flipped, while the Laplace "
            "mechanism still adds noise of scale 1/(εn). The √n gap is a statement about "
            "small ε and large n.")
    with st.expander("The numbers behind the chart"):
        st.dataframe(
            {"n": [fmt_count(n) for n in N_GRID],
             "local simulated": [fmt(x, 3) for x in sim["local"]],
             "local exact SD": [fmt(x, 3) for x in th["sd_local"]],
             "1/(ε√n)": [fmt(x, 3) for x in th["rate_local"]],
             "central simulated": [fmt(x, 3) for x in sim["central"]],
             "central exact SD": [fmt(x, 3) for x in th["sd_central"]],
             "1/(εn)": [fmt(x, 3) for x in th["rate_central"]]},
            hide_index=True)
    st.markdown(
        "**Why √n against n.** In the local model each of the n answers carries its own "
        "noise of size about 1/ε; noise in a sum of n answers grows like √n/ε, so the share "
        "is off by about 1/(ε√n). In the central model a trusted curator adds one Laplace "
        "noise of scale 1/ε to the total (one person changes a count by at most 1), so the "
        "share is off by about 1/(εn). No local protocol can do better than 1/(ε√n) "
        "(CS208: the trade-off of randomized response is optimal for ε-local DP).")

    _seed_bound_check()


def _seed_bound_check() -> None:
    """Smith's bound (CS208) checked exactly, on the scale where it holds."""
    with st.expander("Check the course's bound E|A − mean| ≤ c_ε/(2√n)"):
        st.markdown(
            "The course states it for the ±1 form A = (1/n) Σ c_ε·Q(yᵢ), with "
            "c_ε = (e^ε + 1)/(e^ε − 1). It holds for the **estimated share** "
            "(A + 1)/2, the scale of every chart on this page. On the ±1 scale the error "
            "is twice as large, so there the bound is off by a factor of 2. Exact values "
            "for a class of n = 100 with half +1 and half −1 (from the binomial "
            "distribution of the reports, no simulation):")
        rows: dict[str, list[str]] = {"ε": [], "c_ε/(2√n)": [], "E|share − true share|": [],
                                      "E|A − mean| (±1)": []}
        for eps in (0.25, 0.5, 1.0, 2.0):
            err = pm1_mean_abs_error(eps, 100, 50)
            rows["ε"].append(fmt_eps_value(eps))
            rows["c_ε/(2√n)"].append(fmt(EpsilonRR(eps).c_epsilon / 20, 3))
            rows["E|share − true share|"].append(fmt(err / 2, 3))
            rows["E|A − mean| (±1)"].append(fmt(err, 3))
        st.dataframe(rows, hide_index=True)
        st.caption("The share's error stays below the bound; A's error is above it for "
                   "small ε (at ε = 0.5 about 1.55 times the bound).")
