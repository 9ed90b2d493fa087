"""Self-study: the class exercise of CS208 'The Local Model: Foundations', step by step.

Each student privately picks a number from 1 to 4 and reports their ice-cream
preference truthfully on 1–3, falsely on 4. The three group-exercise
questions (the unbiased estimator, its SD, the ε of the design) each reveal
their solution on demand and check it against a simulated class whose size
the learner picks; the individual-survey question compares the method with
the central Laplace mechanism and measures the accuracy gap.

Layout only: every number comes from ``ldp_core``.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from ldp_core import (
    BinaryCounts,
    DieRR,
    central_mean_sd,
    empirical_channel,
    error_summary,
    laplace_mechanism,
    local_n_for_central_accuracy,
    posterior_true_yes,
    share_estimates,
)
from ui import charts
from ui.fmt import fmt, fmt_count, fmt_eps_value, fmt_fixed, fmt_ratio

K_N = "ex_n"
K_MU = "ex_mu"
K_SEED = "ex_seed"
K_SOL = ("ex_sol1", "ex_sol2", "ex_sol3", "ex_sol4")

CLASSES = 20_000  # simulated classes for the checks (exact aggregate sampling)
N_MAX = 2_000
DESIGN = DieRR(faces=4, truthful=3)
NO, YES = "chocolate", "vanilla"


def _defaults() -> None:
    ss = st.session_state
    ss.setdefault(K_N, 60)
    ss.setdefault(K_MU, 0.6)
    ss.setdefault(K_SEED, 0)
    for key in K_SOL:
        ss.setdefault(key, False)


def _new_simulation() -> None:
    st.session_state[K_SEED] = st.session_state.get(K_SEED, 0) + 1


@st.cache_data(show_spinner=False, max_entries=128)
def _class(n: int, v: int, seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    """One class, student by student: (counts, freqs) indexed [true, reported], and V_rep."""
    truth = np.zeros(n, dtype=np.uint8)
    truth[:v] = 1
    reports = DESIGN.perturb(truth, rng=np.random.default_rng([seed, 6]))
    counts, freqs = empirical_channel(truth, reports)
    return counts, freqs, int(np.count_nonzero(reports))


@st.cache_data(show_spinner=False, max_entries=128)
def _many(n: int, v: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """μ̂ for CLASSES classes (local, exact aggregate sampling) and the central
    Laplace release of the same true share at the same ε."""
    gen = np.random.default_rng([seed, 7])
    local = share_estimates(DESIGN, DESIGN.sample_yes_counts(v, n, size=CLASSES, rng=gen), n)
    central = np.asarray(laplace_mechanism(v / n, 1 / n, DESIGN.epsilon, rng=gen, size=CLASSES))
    return local, central


@st.cache_data(show_spinner=False, max_entries=128)
def _population(n: int, mu: float, seed: int) -> np.ndarray:
    """μ̂ for CLASSES classes whose n students are each drawn from a population with share
    mu: each student then reports "vanilla" with probability b + (a − b)·mu, independently."""
    gen = np.random.default_rng([seed, 8])
    return share_estimates(DESIGN, gen.binomial(n, DESIGN.report_probability(mu), CLASSES), n)


def _coverage(estimates: np.ndarray, target: float, n: int) -> float:
    """Share of the simulated 95% CIs (μ̂ ± 1.96 × the fixed-class SD) that cover target."""
    interval = BinaryCounts.single(DESIGN, 0, n).normal_interval(0.95)
    if interval is None:  # no students, no interval: none covers
        return 0.0
    lo, hi = interval
    return float(np.mean(np.abs(estimates - target) <= (hi - lo) / 2))


def _two_questions(n: int, mu: float, truth: float, local: np.ndarray, seed: int) -> None:
    """The fixed class against students drawn from a population: two SDs, two coverages."""
    st.markdown(
        "**Two different questions.** *This class again:* the same students roll their dice "
        "again; only the die is random, and √(3/(4n)) is exact. *Another class:* new "
        "students are drawn from a population whose share is μ; who is in the class is "
        "random too, so μ̂ spreads more (at μ = ½ the SD is √(1/n)). The normal 95% "
        "interval μ̂ ± 1.96·√(3/(4n)), a large-n approximation, answers the first question; "
        "the dashboard's exact CI keeps 95% for both (the likelihood lab draws both "
        "coverages).")
    population = _population(n, mu, seed)
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("SD, fixed class", fmt(float(np.std(local)), 3),
              help="Over simulated re-runs of the dice for this class")
    m2.metric("SD, population", fmt(float(np.std(population)), 3),
              help=f"Over {fmt_count(CLASSES)} classes drawn from a population with share μ")
    m3.metric("μ̂ ± 1.96 SD covers this class's share", f"{_coverage(local, truth, n):.1%}",
              help="The share of the simulated re-runs whose CI contains this class's share")
    m4.metric("μ̂ ± 1.96 SD covers the population's μ", f"{_coverage(population, mu, n):.1%}",
              help="The share of the population classes whose CI contains μ: less than "
                   "95%, because the CI leaves out who happens to be in the class")


def _solution(i: int) -> bool:
    return st.toggle("Show the solution", key=K_SOL[i], persist_state="session")


def render() -> None:
    _defaults()
    st.title("The class exercise, step by step")
    st.markdown(
        "**The exercise (CS208, 'The Local Model: Foundations').** Privately, write down your "
        "preference: vanilla (1) or chocolate (0). Choose a random number from 1 to 4 (toss "
        "a coin twice, or use random.org). When the class is polled: if your number is 1, 2 "
        "or 3, report truthfully; if it is 4, report the opposite.")
    with st.container(border=True):
        c1, c2, c3 = st.columns([2, 2, 1])
        n = int(c1.slider("Class size n", 1, N_MAX, key=K_N, persist_state="session"))
        mu = c2.slider("True share of vanilla lovers", 0.0, 1.0, step=0.01, key=K_MU,
                       persist_state="session")
        c3.button("New class", icon=":material/casino:", on_click=_new_simulation)
    v = int(np.floor(mu * n + 0.5))
    seed = int(st.session_state[K_SEED])
    counts, freqs, v_rep = _class(n, v, seed)
    est = BinaryCounts.single(DESIGN, v_rep, n)
    local, central = _many(n, v, seed)
    truth = v / n
    st.markdown(
        f"The simulated class: **{fmt_count(v)}** of {fmt_count(n)} students truly prefer "
        f"vanilla (share {fmt_fixed(truth, 3)}). After rolling, **{fmt_count(v_rep)}** report "
        f"vanilla and **{fmt_count(n - v_rep)}** report chocolate. Only these two counts reach "
        "the instructor.")

    # -- Question 1 -------------------------------------------------------------------------
    st.header("1. An unbiased estimator")
    st.markdown(
        "Use the reported counts for vanilla and chocolate to compute an unbiased estimator "
        "μ̂ of the fraction of people in the class who prefer vanilla.\n\n"
        "*Hint:* write the expectation of the number V_rep of vanilla reports in terms of "
        "the number v who truly prefer vanilla and n − v.")
    if _solution(0):
        st.latex(r"E[V_\mathrm{rep}] = \tfrac34\,v + \tfrac14\,(n - v) = \tfrac{v}{2} + "
                 r"\tfrac{n}{4} \quad\Longrightarrow\quad \hat\mu = \tfrac{2}{n}\,"
                 r"V_\mathrm{rep} - \tfrac12")
        sim = error_summary(local, truth)
        m1, m2, m3 = st.columns(3)
        m1.metric("μ̂ for this class", fmt_fixed(est.unbiased(), 3),
                  help=f"2 × {fmt_count(v_rep)} / {fmt_count(n)} − ½ (ldp_core "
                       "BinaryCounts.unbiased)")
        m2.metric("True share", fmt_fixed(truth, 3))
        m3.metric(f"Mean of μ̂ over {fmt_count(CLASSES)} classes", fmt_fixed(sim.mean, 3),
                  help="Unbiased means right on average, not right every time")
        st.caption("One class's μ̂ can be far off, or even outside [0, 1], but averaged over "
                   "many classes it lands on the true share: that is what unbiased means.")

    # -- Question 2 -------------------------------------------------------------------------
    st.header("2. Its standard deviation")
    st.markdown("What is the standard deviation of your estimator?")
    if _solution(1):
        st.latex(r"\sigma^2[\hat\mu] = \tfrac{4}{n^2}\,\sigma^2[V_\mathrm{rep}] = "
                 r"\tfrac{4}{n^2}\cdot n\cdot\tfrac34\cdot\tfrac14 \quad\Longrightarrow\quad "
                 r"\sigma[\hat\mu] = \sqrt{\tfrac{3}{4n}}")
        st.caption("For a fixed class, each report is 'vanilla' with probability 3/4 or 1/4, "
                   "so its variance is 3/4 · 1/4 either way: the SD is √(3/(4n)) whatever "
                   "this class's share. The only randomness is the die.")
        sim = error_summary(local, truth)
        sd = est.sd_worst()
        m1, m2 = st.columns(2)
        m1.metric(f"√(3/(4n)) at n = {fmt_count(n)}", fmt(sd, 3),
                  help="ldp_core BinaryCounts.sd_worst for the die design")
        m2.metric(f"SD of μ̂ over {fmt_count(CLASSES)} simulated classes", fmt(sim.sd, 3))
        charts.show(charts.sampling_distribution(
            local, truth=truth, mean=truth, sd=sd, x_title="μ̂ = 2V/n − ½",
            title=f"μ̂ in {fmt_count(CLASSES)} simulated classes of {fmt_count(n)}",
            subtitle="curve: normal with SD √(3/(4n)); dashed: the true share"))
        _two_questions(n, mu, truth, local, seed)

    # -- Question 3 -------------------------------------------------------------------------
    st.header("3. The privacy loss ε")
    st.markdown("For what ε is this method ε-DP? (Consider the release to be the collection "
                "of everyone's noisy reports.)")
    if _solution(2):
        st.latex(r"\varepsilon = \ln\frac{3/4}{1/4} = \ln 3 \approx 1.1")
        post = posterior_true_yes(DESIGN, 0.5)
        m1, m2 = st.columns(2)
        m1.metric("ε of the die design", fmt_eps_value(DESIGN.epsilon, 4),
                  help="ldp_core DieRR(4, 3).epsilon = max |log-ratio| of the channel")
        m2.metric("A 'vanilla' report multiplies the odds by", fmt_ratio(post.odds_factor_yes))
        left, right = st.columns(2)
        with left:
            charts.show(charts.channel_heatmap(
                DESIGN.channel, [NO, YES], [NO, YES], row_title="truly prefers",
                col_title="reports", title="The design: P(report | truth)",
                subtitle="ratio 3/4 : 1/4 = 3 = e^ε"))
        with right:
            charts.show(charts.channel_heatmap(
                freqs, [NO, YES], [NO, YES], row_title="truly prefers", col_title="reports",
                title="Measured in the simulated class",
                subtitle=f"from {fmt_count(n)} students' die rolls"))
        if not np.all(np.isfinite(freqs)):
            st.caption("A row shows a dash when nobody in the class has that preference.")
        st.caption("Each student's report is ε-DP on its own: changing one student's true "
                   "answer changes the probability of any report by a factor of at most 3. "
                   "The collection of reports is also ln 3-DP, since every student's row "
                   "only affects their own report.")

    # -- Individual survey ------------------------------------------------------------------
    st.header("Individual survey: local against central")
    st.markdown(
        "Compare the method we just used with a standard noise-addition mechanism (the "
        "Laplace mechanism, run by a trusted curator who sees everyone's true answer).\n\n"
        "1. What is an advantage of the method we just used?\n"
        "2. What is a disadvantage?")
    if _solution(3):
        good, bad = st.columns(2)
        with good:
            st.markdown(
                "**Advantages (local)**\n"
                "- No one has to be trusted: the true answer never leaves the student.\n"
                "- Each report has plausible deniability on its own; a leaked or subpoenaed "
                "list of reports reveals little.\n"
                "- Simple enough to run with a die in a lecture hall.")
        with bad:
            st.markdown(
                "**Disadvantages (local)**\n"
                "- Much noisier: error about 1/(ε√n) against 1/(εn) centrally.\n"
                "- Needs many more people for the same accuracy.\n"
                "- Unbiased estimates can fall outside [0, 1]; histograms over many "
                "categories cost more (communication, error ~ √(n log D)/ε).")
        eps = DESIGN.epsilon
        sim_l, sim_c = error_summary(local, truth), error_summary(central, truth)
        sd_c = central_mean_sd(n, eps)
        need = local_n_for_central_accuracy(n, eps)
        st.markdown(f"**Measured at n = {fmt_count(n)}, ε = ln 3**, over "
                    f"{fmt_count(CLASSES)} simulated classes:")
        m1, m2, m3 = st.columns(3)
        m1.metric("Local (this exercise): RMS error", fmt(sim_l.rmse, 3),
                  help=f"theory √(3/(4n)) = {fmt(est.sd_worst(), 3)}")
        m2.metric("Central Laplace: RMS error", fmt(sim_c.rmse, 3),
                  help=f"theory √2/(εn) = {fmt(sd_c, 3)} (ldp_core central_mean_sd)")
        m3.metric("People local needs to match", fmt_count(need) if need >= 1 else "< 1",
                  help="ldp_core local_n_for_central_accuracy")
        charts.show(charts.bar_counts(
            ["local: randomized response", "central: Laplace mechanism"],
            [sim_l.rmse, sim_c.rmse], colors=[charts.LOCAL, charts.CENTRAL],
            text=[fmt(sim_l.rmse, 3), fmt(sim_c.rmse, 3)],
            value_title="RMS error of the estimated share",
            title=f"Typical error at n = {fmt_count(n)}, ε = ln 3",
            subtitle=f"{fmt_count(CLASSES)} simulated classes each"))
        if need > n:
            st.markdown(f"With the same ε, the local method needs about **{fmt_count(need)}** "
                        f"students to be as accurate as the central model with "
                        f"{fmt_count(n)}.")
        else:
            st.markdown(f"With only {fmt_count(n)} student(s), the two are comparable: the "
                        "gap opens as the class grows, like √n.")
    st.caption("Sources: CS208 'The Local Model: Foundations' (2025), group exercise, solution "
               "and individual survey; Warner 1965.")
