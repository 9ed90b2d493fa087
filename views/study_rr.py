"""Self-study: the randomized response explorer.

Pick a design (ε-RR with linked γ and ε sliders, the class die, two coins,
Warner's spinner), a true share and a class size; see the channel, one
simulated class, the sampling distribution of the estimate over many classes,
the privacy–utility curve, how to spend one ε on several questions (split it, or
sample one question; Wang et al. ICDE 2019, Arcolezi et al. CIKM 2021) and what one
report tells an observer.

Layout only: every number comes from ``ldp_core``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from classroom.designs import physical_instructions
from ldp_core import (
    SURVEY_MODES,
    BinaryCounts,
    BinaryDesign,
    DieRR,
    EpsilonRR,
    GammaRR,
    TwoCoinRR,
    WarnerRR,
    binary_design_from_params,
    empirical_channel,
    epsilon_to_gamma,
    error_summary,
    gamma_to_epsilon,
    local_mean_sd,
    posterior_bounds,
    posterior_true_yes,
    sd_with_se,
    share_estimates,
    simulate_survey,
    split_wins_above,
    survey_estimates,
    survey_privacy,
    survey_variance_unit,
)
from ui import charts
from ui.fmt import (
    fmt,
    fmt_count,
    fmt_eps,
    fmt_eps_value,
    fmt_fixed,
    fmt_interval,
    fmt_pct,
    fmt_ratio,
)

# Session-state keys (all prefixed, so pages never collide).
K_DESIGN = "rr_design"
K_GAMMA = "rr_gamma"
K_EPS = "rr_eps"
K_SRC = "rr_src"  # which of the linked sliders the learner moved last
K_FACES = "rr_faces"
K_TRUTHFUL = "rr_truthful"
K_WARNER = "rr_warner_p"
K_MU = "rr_mu"
K_N = "rr_n"
K_PRIOR = "rr_prior"
K_SEED = "rr_seed"
K_QUESTIONS = "rr_questions"

GAMMA_MAX = 0.499
EPS_MAX = 7.0
CLASSES = 5000  # simulated classes for the sampling distribution
SURVEY_CLASSES = 4000  # simulated classes per way of answering a survey
SURVEY_WAYS = {"split": "Split: every question at ε/d",
               "sample": "Sample: one question at ε",
               "fake": "Sample + fake answers for the others"}
N_OPTIONS = [1, 2, 3, 5, 10, 20, 30, 50, 100, 200, 300, 500, 1000, 2000, 5000, 10_000,
             100_000]

DESIGNS = {
    "eps": "ε-RR (γ ↔ ε)",
    "die": "Die (class exercise)",
    "coins": "Two coins",
    "warner": "Warner's spinner",
}
NO, YES = "chocolate", "vanilla"


def _defaults() -> None:
    ss = st.session_state
    ss.setdefault(K_DESIGN, "eps")
    ss.setdefault(K_GAMMA, 0.25)
    ss.setdefault(K_EPS, gamma_to_epsilon(0.25))
    ss.setdefault(K_SRC, "gamma")
    ss.setdefault(K_FACES, 4)
    ss.setdefault(K_TRUTHFUL, 3)
    ss.setdefault(K_WARNER, 0.7)
    ss.setdefault(K_MU, 0.6)
    ss.setdefault(K_N, 100)
    ss.setdefault(K_PRIOR, 0.5)
    ss.setdefault(K_SEED, 0)
    ss.setdefault(K_QUESTIONS, 3)


# -- linked sliders ----------------------------------------------------------------------------

def _on_gamma() -> None:
    """γ moved: ε follows through ldp_core.gamma_to_epsilon."""
    ss = st.session_state
    ss[K_SRC] = "gamma"
    ss[K_EPS] = min(gamma_to_epsilon(ss[K_GAMMA]), EPS_MAX)


def _on_eps() -> None:
    """ε moved: γ follows through ldp_core.epsilon_to_gamma (clamped to the slider)."""
    ss = st.session_state
    ss[K_SRC] = "eps"
    ss[K_GAMMA] = min(epsilon_to_gamma(ss[K_EPS]), GAMMA_MAX)


def _new_simulation() -> None:
    st.session_state[K_SEED] = st.session_state.get(K_SEED, 0) + 1


# -- cached simulations (keyed by the design's defining parameters) ------------------------------

def _key(design: BinaryDesign) -> tuple:
    return tuple(sorted(design.params().items()))


@st.cache_data(show_spinner=False, max_entries=128)
def _one_class(params: tuple, n: int, v: int, seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    """One class of n students, v of them truly vanilla: (counts, freqs, yes reports)."""
    design = binary_design_from_params(dict(params))
    truth = np.zeros(n, dtype=np.uint8)
    truth[:v] = 1
    reports = design.perturb(truth, rng=np.random.default_rng([seed, 1]))
    counts, freqs = empirical_channel(truth, reports)
    return counts, freqs, int(np.count_nonzero(reports))


@st.cache_data(show_spinner=False, max_entries=128)
def _many_classes(params: tuple, n: int, v: int, seed: int) -> np.ndarray:
    """μ̂ for CLASSES classes by exact aggregate sampling: V = Bin(v, a) + Bin(n − v, b)."""
    design = binary_design_from_params(dict(params))
    yes = design.sample_yes_counts(v, n, size=CLASSES, rng=np.random.default_rng([seed, 2]))
    return share_estimates(design, yes, n)


@st.cache_data(show_spinner=False, max_entries=64)
def _sd_curve(n: int, eps_max: float) -> tuple[np.ndarray, np.ndarray]:
    grid = np.linspace(0.05, eps_max, 120)
    return grid, np.array([local_mean_sd(n, float(e)) for e in grid])


# -- controls ----------------------------------------------------------------------------------

def _eps_design() -> BinaryDesign:
    ss = st.session_state
    st.slider("γ: keep the true answer with probability ½ + γ", 0.0, GAMMA_MAX, step=0.001,
              key=K_GAMMA, persist_state="session", on_change=_on_gamma, format="%.3f",
              help="γ = 0: a fair coin decides (perfect privacy, no information). "
                   "γ → ½: always the truth (no privacy).")
    st.slider("ε: privacy loss, ε = ln((1 + 2γ)/(1 − 2γ))", 0.0, EPS_MAX, step=0.01,
              key=K_EPS, persist_state="session", on_change=_on_eps, format="%.2f",
              help="Moving either slider moves the other (CS208 notes: γ = tanh(ε/2)/2).")
    if ss[K_SRC] != "eps":
        return GammaRR(float(ss[K_GAMMA]))
    eps = float(ss[K_EPS])
    if eps > 0 and epsilon_to_gamma(eps) > GAMMA_MAX:
        gamma = fmt(epsilon_to_gamma(eps), 5)
        st.caption(f"The γ slider stops at {GAMMA_MAX}; this design uses "
                   f"{fmt_eps(eps)} exactly (γ = {gamma}).")
    return EpsilonRR(eps) if eps > 0 else GammaRR(0.0)


def _die_design() -> BinaryDesign | None:
    ss = st.session_state
    c1, c2 = st.columns(2)
    faces = c1.slider("Faces on the die", 2, 12, key=K_FACES, persist_state="session")
    if ss[K_TRUTHFUL] > faces - 1:
        ss[K_TRUTHFUL] = faces - 1
    if faces > 2:
        truthful = c2.slider("Tell the truth on faces 1 to …", 1, faces - 1,
                             key=K_TRUTHFUL, persist_state="session")
    else:  # a slider from 1 to 1 cannot exist: the only choice is face 1
        truthful = 1
        c2.markdown("Tell the truth on face **1** only (a 2-sided die has no other "
                    "choice).")
    try:
        design = DieRR(faces, truthful)
    except ValueError as exc:
        st.warning(f"{exc}. Pick another number of truthful faces.")
        return None
    st.caption(f"{_by_hand(design)} The class exercise is 4 faces, truthful on 1–3 (CS208).")
    return design


def _coins_design() -> BinaryDesign:
    design = TwoCoinRR()
    st.caption(f"{_by_hand(design)} (Dwork & Roth; Near & Abuah.)")
    return design


def _warner_design() -> BinaryDesign | None:
    p = st.slider("p: the spinner points at statement A ('I prefer vanilla') with probability p",
                  0.0, 1.0, step=0.01, key=K_WARNER, persist_state="session")
    try:
        design = WarnerRR(p)
    except ValueError as exc:
        st.warning(f"{exc}. At p = ½ the answer is a coin flip whatever the truth, so "
                   "nothing about the class can be estimated.")
        return None
    st.caption("Otherwise it points at B ('I do NOT prefer vanilla'); the student answers "
               "True/False to whichever statement (Warner 1965).")
    return design


def _by_hand(design: BinaryDesign) -> str:
    """How a student runs this design by hand, in the words the phone and dashboard use."""
    return physical_instructions(design.params(), "vanilla", "chocolate") or ""


#: One picker per design in DESIGNS: it draws the design's controls and returns the design,
#: or None (with a message) when the parameters are invalid.
_PICKERS: dict[str, Callable[[], BinaryDesign | None]] = {
    "eps": _eps_design, "die": _die_design, "coins": _coins_design, "warner": _warner_design,
}


def _design_controls() -> BinaryDesign | None:
    """The design picker and its parameters; None (with a message) when invalid."""
    kind = st.radio("Design", list(DESIGNS), format_func=DESIGNS.get, key=K_DESIGN,
                    persist_state="session",
                    horizontal=True)
    return _PICKERS[kind]()


# -- sections ----------------------------------------------------------------------------------

def _channel_section(design: BinaryDesign) -> None:
    st.subheader("The channel: what each true answer turns into")
    left, right = st.columns([3, 2])
    with left:
        charts.show(charts.channel_heatmap(
            design.channel, [NO, YES], [NO, YES], row_title="truly prefers",
            col_title="reports",
            title="P(report | truth)",
            subtitle="Each row sums to 1. a = P(vanilla | vanilla), b = P(vanilla | chocolate)"))
    with right:
        eps = design.epsilon
        st.metric("a = P(report vanilla | truly vanilla)", fmt_fixed(design.a, 4))
        st.metric("b = P(report vanilla | truly chocolate)", fmt_fixed(design.b, 4))
        st.metric("Privacy loss ε", fmt_eps(eps).removeprefix("ε = "),
                  help="ε = max(|ln(a/b)|, |ln((1−a)/(1−b))|): the largest factor by which "
                       "one report can be more likely under one truth than the other.")
        if not design.informative:
            st.info("Both rows are identical: the report does not depend on the truth. "
                    "Perfect privacy (ε = 0), and no information at all.")
        elif eps == float("inf"):
            st.info("ε = ∞: some report is possible under one truth and impossible under the "
                    "other, so it reveals the truth with certainty. No privacy.")


def _one_class_section(design: BinaryDesign, n: int, v: int, seed: int) -> None:
    st.subheader(f"One simulated class of {fmt_count(n)}")
    counts, _freqs, yes = _one_class(_key(design), n, v, seed)
    c1, c2 = st.columns([2, 3])
    with c1:
        st.markdown(f"**{fmt_count(v)}** of {fmt_count(n)} students truly prefer vanilla "
                    f"(true share {fmt_fixed(v / n if n else 0, 3)}).")
        st.dataframe(
            {"truly prefers": [NO, YES],
             f"reports {NO}": [fmt_count(counts[0, 0]), fmt_count(counts[1, 0])],
             f"reports {YES}": [fmt_count(counts[0, 1]), fmt_count(counts[1, 1])]},
            hide_index=True)
        st.caption("Only the simulation knows the rows; the analyst sees the column totals.")
    with c2:
        if not design.informative:
            st.warning("γ = 0 (ε = 0): the reports carry no information about the truth, so "
                       "no estimator exists. Move γ or ε above 0.")
            return
        est = BinaryCounts.single(design, yes, n).summary()
        m1, m2, m3 = st.columns(3)
        m1.metric("Reported vanilla V", fmt_count(est.yes),
                  help=f"{fmt_pct(est.reported_share)} of the reports")
        m2.metric("Estimate μ̂", fmt_fixed(est.mu_hat, 3),
                  help="Unbiased: μ̂ = (V/n − b)/(a − b) (Warner 1965)")
        m3.metric("Error μ̂ − μ", fmt_fixed(error_summary([est.mu_hat], v / n).bias, 3))
        st.markdown(f"95% normal interval μ̂ ± 1.96·SD (the large-n approximation): "
                    f"**{fmt_interval(est.ci_low, est.ci_high)}**"
                    f" · MLE on [0, 1]: **{fmt_fixed(est.mle, 3)}** "
                    f"(likelihood-ratio interval {fmt_interval(est.lr_low, est.lr_high)})")
        if est.outside_unit_interval:
            st.info(f"μ̂ = {fmt_fixed(est.mu_hat, 3)} lies outside [0, 1]. That is normal for "
                    "an unbiased estimate from noisy reports in a small class: it must "
                    "overshoot sometimes to be right on average. The maximum-likelihood "
                    "estimate stays inside [0, 1].")
        rows, est_v, lows, highs = [], [], [], []
        if est.ci_low is not None:
            rows.append("μ̂ ± 1.96·SD (large n)")
            est_v.append(est.mu_hat)
            lows.append(est.ci_low)
            highs.append(est.ci_high)
        if est.lr_low is not None:
            rows.append("MLE, LR interval")
            est_v.append(est.mle)
            lows.append(est.lr_low)
            highs.append(est.lr_high)
        charts.show(charts.estimate_with_ci(
            rows, est_v, lows, highs, truth=v / n, value_title="share of vanilla lovers",
            title="This class's estimate", subtitle="dashed: the true share",
            colors=[charts.LOCAL, charts.HIGHLIGHT]))


def _sampling_section(design: BinaryDesign, n: int, v: int, seed: int) -> None:
    st.subheader(f"Many classes: how μ̂ varies over {fmt_count(CLASSES)} simulated classes")
    if not design.informative:
        st.info("No sampling distribution to show: with γ = 0 there is no estimator.")
        return
    est = _many_classes(_key(design), n, v, seed)
    truth = v / n
    sim = error_summary(est, truth)
    theory_sd = BinaryCounts.single(design, 0, n).sd_class_at(truth)
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("True share μ", fmt_fixed(truth, 3))
    m2.metric("Mean of μ̂", fmt_fixed(sim.mean, 3), help="Unbiased: close to μ")
    m3.metric("SD of μ̂ (simulated)", fmt(sim.sd, 3))
    m4.metric("SD of μ̂ (theory)", fmt(theory_sd, 3),
              help="sqrt(μ a(1−a) + (1−μ) b(1−b)) / (|a − b| √n): only the randomization "
                   "varies, the class is fixed (ldp_core BinaryCounts.sd_class_at)")
    charts.show(charts.sampling_distribution(
        est, truth=truth, mean=truth, sd=theory_sd, x_title="estimate μ̂ (share)",
        title=f"Sampling distribution of μ̂, n = {fmt_count(n)}",
        subtitle="bars: simulation (exact aggregate sampling V = Bin(v, a) + Bin(n − v, b)); "
                 "curve: normal with the theoretical SD"))
    if n < 30:
        st.caption("With so few students μ̂ takes only a few values, so the normal curve is "
                   "a rough guide; it gets good as n grows (central limit theorem).")


def _tradeoff_section(design: BinaryDesign, n: int) -> None:
    st.subheader("Privacy–utility: SD of μ̂ against ε")
    eps = design.epsilon
    eps_max = float(min(max(6.0, eps + 0.5), 12.0)) if np.isfinite(eps) else 6.0
    grid, sd = _sd_curve(n, eps_max)
    marker = None
    sd_here = BinaryCounts.single(design, 0, n).sd_worst() if design.informative else None
    if sd_here is not None and np.isfinite(eps):
        marker = (eps, sd_here, f"your design: SD {fmt(sd_here, 2)}")
    name = "ε-RR, worst case: e^(ε/2) / ((e^ε − 1)√n)"
    charts.show(charts.line_chart(
        grid, {name: sd}, colors={name: charts.LOCAL}, x_title="ε (privacy loss)",
        y_title="SD of μ̂ (log scale)", log_y=True, marker=marker,
        title=f"Less privacy, less noise (n = {fmt_count(n)})",
        subtitle="small ε: SD ≈ 1/(ε√n) (CS208)"))
    if not design.informative:
        st.caption("Your design has ε = 0: its SD is infinite, so it is not on the chart.")
    elif not np.isfinite(eps):
        st.caption("Your design has ε = ∞ (no privacy), so it is off the chart to the right.")


@st.cache_data(show_spinner=False, max_entries=64)
def _survey_rows(eps: float, d: int, n: int, mu: float, seed: int) -> list[dict[str, Any]]:
    """Per way: the privacy, the formula's SD of one question's estimate and a simulated
    SD ± SE over SURVEY_CLASSES classes (those whose question got a report)."""
    rows = []
    for mode in SURVEY_MODES:
        privacy = survey_privacy(mode, eps, d)
        unit = survey_variance_unit(mode, eps, d, mu, n=n if mode == "sample" else None)
        reports, yes = simulate_survey(mode, eps, [mu] * d, n, size=SURVEY_CLASSES,
                                       rng=np.random.default_rng([seed, 3]))
        est = survey_estimates(mode, eps, d, reports[:, 0], yes[:, 0])
        sd, se = sd_with_se(est[np.isfinite(est)])
        rows.append({"mode": mode, "spent": privacy.spent, "answer": privacy.per_answer,
                     "unit": unit, "sd": float(np.sqrt(unit / n)), "sim": sd, "se": se})
    return rows


@st.cache_data(show_spinner=False, max_entries=32)
def _survey_curves(d: int, mu: float) -> tuple[np.ndarray, dict[str, list[float]]]:
    grid = np.linspace(0.1, 8.0, 80)
    return grid, {m: [float(survey_variance_unit(m, float(e), d, mu)) for e in grid]
                  for m in SURVEY_MODES}


def _survey_section(design: BinaryDesign, n: int, mu: float, seed: int) -> None:
    st.subheader("Several questions, one budget: split ε, or sample one question")
    eps = design.epsilon
    if not (design.informative and np.isfinite(eps)) or n < 2:
        st.caption("Pick a design with a finite ε > 0 and a class of at least 2 to compare "
                   "the ways of answering several questions.")
        return
    d = int(st.slider("d: sensitive questions asked together, each phone spending ε in all",
                      2, 10, key=K_QUESTIONS, persist_state="session"))
    rows = _survey_rows(float(eps), d, n, float(mu), seed)
    st.dataframe(pd.DataFrame({
        "each phone": [SURVEY_WAYS[r["mode"]] for r in rows],
        "ε spent": [fmt_eps_value(r["spent"]) for r in rows],
        "ε of one answer": [fmt_eps_value(r["answer"]) for r in rows],
        "n·Var": [fmt(r["unit"], 3) for r in rows],
        "SD of μ̂": [fmt_fixed(r["sd"], 3) for r in rows],
        "SD, simulated": [f"{fmt_fixed(r['sim'], 3)} ± {fmt(r['se'], 1)}" for r in rows],
    }), hide_index=True, width="stretch")
    st.caption(f"One question's estimate in a class of {fmt_count(n)} phones. Simulated: "
               f"{fmt_count(SURVEY_CLASSES)} classes, each student drawn from a population "
               "with the true share μ; ± one standard error.")
    grid, curves = _survey_curves(d, float(mu))
    charts.show(charts.line_chart(
        grid, {SURVEY_WAYS[m]: curves[m] for m in SURVEY_MODES},
        colors=dict(zip(SURVEY_WAYS.values(), (charts.CENTRAL, charts.LOCAL, charts.SHUFFLE),
                        strict=True)),
        x_title="ε, the whole budget of a phone", y_title="n·Var of one question (log scale)",
        log_y=True, marker=(float(eps), rows[1]["unit"], "sample, your ε"),
        title=f"{d} questions: which way is more accurate?",
        subtitle=f"population model, true share μ = {fmt_fixed(mu, 2)}"))
    crossing = split_wins_above(d, float(mu))
    st.markdown(
        "**Sampling** gives each question about n/d reports at the full ε; **splitting** gives "
        "every question all n reports at ε/d. Noise grows like 1/ε², so dividing ε by d "
        "costs d² while sampling costs only d: sampling wins "
        + (f"below ε = {fmt_eps_value(crossing)} at this share. " if crossing is not None
           else "at every ε for this share. ")
        + "Splitting only wins at a large ε, where the noise is small and what remains is "
        "how much the students differ, which sampling sees through fewer of them. "
        "**Fake answers** hide which question a phone answered: each answer then costs less "
        "than ε, but the coins add noise to every question.")


def _deniability_section(design: BinaryDesign) -> None:
    st.subheader("Plausible deniability: what one report tells an observer")
    prior = st.slider("Observer's prior P(a student truly prefers vanilla)", 0.0, 1.0,
                      step=0.01, key=K_PRIOR, persist_state="session")
    post = posterior_true_yes(design, prior)
    m1, m2, m3 = st.columns(3)
    m1.metric("After a 'vanilla' report", fmt_pct(post.after_yes),
              help="P(truly vanilla | report vanilla) = πa / (πa + (1−π)b)")
    m2.metric("After a 'chocolate' report", fmt_pct(post.after_no),
              help="P(truly vanilla | report chocolate) = π(1−a) / (π(1−a) + (1−π)(1−b))")
    m3.metric("Largest odds factor e^ε", fmt_ratio(post.max_odds_factor))
    st.markdown(
        "A 'vanilla' report multiplies the observer's odds by "
        f"**{fmt_ratio(post.odds_factor_yes)}**, a 'chocolate' report by "
        f"**{fmt_ratio(post.odds_factor_no)}**. ε-local DP "
        f"guarantees neither factor exceeds e^ε = {fmt_ratio(post.max_odds_factor)[1:]} "
        "(or falls below e^−ε): whatever the observer believed, one answer moves the belief "
        "only inside the shaded band.")
    grid = np.linspace(0.0, 1.0, 101)
    curve = posterior_true_yes(design, grid)
    lo, hi = posterior_bounds(grid, design.epsilon)
    charts.show(charts.posterior_chart(
        grid, curve.after_yes, curve.after_no, lo, hi, current_prior=prior,
        title="Posterior against prior",
        subtitle="band: every posterior an ε-LDP report allows (odds × e^±ε)"))


def render() -> None:
    _defaults()
    st.title("Randomized response explorer")
    st.caption("Each student randomizes their own answer before it leaves their hands. "
               "The class still learns the share of vanilla lovers, with noise. "
               "Sources: Warner 1965; CS208 'The Local Model'; Near & Abuah, "
               "'Programming Differential Privacy'.")
    with st.container(border=True):
        left, right = st.columns([3, 2], gap="large")
        with left:
            design = _design_controls()
        with right:
            mu = st.slider("True share of vanilla lovers μ", 0.0, 1.0, step=0.01, key=K_MU,
                           persist_state="session")
            n = st.select_slider("Class size n", N_OPTIONS, key=K_N, persist_state="session")
            st.button("New simulation", icon=":material/casino:", on_click=_new_simulation,
                      help="Draw new random answers (the sliders stay).")
    if design is None:
        return
    n = int(n)
    v = int(np.floor(mu * n + 0.5))  # rounded half up
    seed = int(st.session_state[K_SEED])
    if v != mu * n:
        st.caption(f"μ·n = {fmt(mu * n, 4)} is not a whole number of students: the class has "
                   f"{fmt_count(v)} vanilla lovers (true share {fmt_fixed(v / n, 3)}).")
    _channel_section(design)
    _one_class_section(design, n, v, seed)
    _sampling_section(design, n, v, seed)
    _tradeoff_section(design, n)
    _survey_section(design, n, v / n, seed)
    _deniability_section(design)
