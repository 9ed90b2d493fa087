"""Self-study: the likelihood lab.

For entered or simulated counts of randomized reports: the likelihood and
log-likelihood of the true share μ, the MLE constrained to [0, 1], the
likelihood-ratio test of a hypothesised μ₀ and the LR interval next to the
normal interval (CS208 'The Local Model: Foundations', likelihood-based
correction) and the exact interval the dashboard shows; then how often each of the
three covers the true share, for the chosen design and n, computed exactly.

Layout only: every number comes from ``ldp_core``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import streamlit as st

from ldp_core import (
    BinaryCounts,
    BinaryDesign,
    DieRR,
    EpsilonRR,
    TwoCoinRR,
    WarnerRR,
    binary_design_from_params,
    chi2_1_quantile,
    coverage_shares,
    interval_coverage,
    likelihood_profile,
)
from ui import charts
from ui.fmt import (
    fmt,
    fmt_count,
    fmt_fixed,
    fmt_interval,
    fmt_pct,
    fmt_pct_down,
    fmt_pvalue,
)

K_DESIGN = "lik_design"
K_WARNER = "lik_warner_p"
K_EPS = "lik_eps"
K_SOURCE = "lik_source"
K_MU = "lik_mu"
K_N_SIM = "lik_n_sim"
K_N = "lik_n"
K_YES = "lik_yes"
K_MU0 = "lik_mu0"
K_LEVEL = "lik_level"
K_ZOOM = "lik_zoom"
K_SEED = "lik_seed"
K_MODEL = "lik_cover_model"

DESIGNS = {
    "die": "Die (class exercise)",
    "coins": "Two coins",
    "warner": "Warner's spinner",
    "eps": "ε-RR",
}
SOURCES = {"sim": "Simulate a class", "enter": "Enter counts"}
N_OPTIONS = [1, 2, 5, 10, 20, 40, 60, 100, 200, 500, 1000, 2000, 5000, 10_000, 100_000]
N_MAX = 1_000_000
LEVELS = (0.90, 0.95, 0.99)
GRID = 401


def _defaults() -> None:
    ss = st.session_state
    ss.setdefault(K_DESIGN, "die")
    ss.setdefault(K_WARNER, 0.7)
    ss.setdefault(K_EPS, 1.0)
    ss.setdefault(K_SOURCE, "sim")
    ss.setdefault(K_MU, 0.3)
    ss.setdefault(K_N_SIM, 60)
    ss.setdefault(K_N, 40)
    ss.setdefault(K_YES, 25)
    ss.setdefault(K_MU0, 0.5)
    ss.setdefault(K_LEVEL, 0.95)
    ss.setdefault(K_ZOOM, False)
    ss.setdefault(K_SEED, 0)


def _new_simulation() -> None:
    st.session_state[K_SEED] = st.session_state.get(K_SEED, 0) + 1


@st.cache_data(show_spinner=False, max_entries=128)
def _simulated_yes(params: tuple, n: int, v: int, seed: int) -> int:
    design = binary_design_from_params(dict(params))
    return int(design.sample_yes_counts(v, n, rng=np.random.default_rng([seed, 4])))


def _warner_design() -> BinaryDesign | None:
    p = st.slider("Warner's p (statement A is asked with probability p)", 0.0, 1.0,
                  step=0.01, key=K_WARNER, persist_state="session")
    try:
        return WarnerRR(p)
    except ValueError as exc:
        st.warning(f"{exc}. With p = ½ every answer is a coin flip: the likelihood is "
                   "flat and there is nothing to estimate.")
        return None


def _eps_design() -> BinaryDesign:
    return EpsilonRR(st.slider("ε", 0.01, 10.0, step=0.01, key=K_EPS, persist_state="session"))


#: One picker per design in DESIGNS: draws its controls, returns the design or None (with a
#: message) when its parameters are invalid.
_PICKERS: dict[str, Callable[[], BinaryDesign | None]] = {
    "die": lambda: DieRR(4, 3), "coins": TwoCoinRR, "warner": _warner_design, "eps": _eps_design,
}


def _design() -> BinaryDesign | None:
    kind = st.radio("Design", list(DESIGNS), format_func=DESIGNS.get, key=K_DESIGN,
                    persist_state="session",
                    horizontal=True)
    return _PICKERS[kind]()


def _counts_input(design: BinaryDesign) -> tuple[int, int, float | None]:
    """(n, yes, true share or None) from the simulation or the learner's entries."""
    ss = st.session_state
    source = st.radio("Counts", list(SOURCES), format_func=SOURCES.get, key=K_SOURCE,
                      persist_state="session",
                      horizontal=True)
    if source == "sim":
        c1, c2 = st.columns(2)
        mu = c1.slider("True share μ (hidden from the analyst)", 0.0, 1.0, step=0.01, key=K_MU,
                       persist_state="session")
        n = int(c2.select_slider("Class size n", N_OPTIONS, key=K_N_SIM, persist_state="session"))
        st.button("New simulation", icon=":material/casino:", on_click=_new_simulation)
        v = int(np.floor(mu * n + 0.5))
        yes = _simulated_yes(tuple(sorted(design.params().items())), n, v,
                             int(ss[K_SEED]))
        st.caption(f"{fmt_count(v)} of {fmt_count(n)} truly prefer vanilla; after "
                   f"randomization **{fmt_count(yes)}** report vanilla.")
        return n, yes, v / n
    c1, c2 = st.columns(2)
    n = int(c1.number_input("Reports n", 0, N_MAX, step=1, key=K_N, persist_state="session"))
    if ss[K_YES] > n:
        ss[K_YES] = n
        st.info(f"'Vanilla' reports cannot exceed n: set to {fmt_count(n)}.")
    yes = int(c2.number_input("…of which 'vanilla' V", 0, max(n, 0), step=1, key=K_YES,
                              persist_state="session"))
    return n, yes, None


def render() -> None:
    _defaults()
    st.title("Likelihood lab")
    st.caption("Which true shares μ make the reports we saw likely? The likelihood answers "
               "with a whole curve: its peak is the estimate, its width the uncertainty "
               "(CS208 'Likelihood based correction').")
    with st.container(border=True):
        design = _design()
        if design is None:
            return
        n, yes, truth = _counts_input(design)
        c1, c2, c3 = st.columns([2, 1, 1])
        mu0 = c1.slider("Hypothesis μ₀ to test", 0.0, 1.0, step=0.01, key=K_MU0,
                        persist_state="session")
        level = c2.select_slider("Level", LEVELS, key=K_LEVEL,
                                 persist_state="session", format_func=fmt_pct)
        zoom = c3.toggle("Zoom to the MLE", key=K_ZOOM, persist_state="session")
    counts = BinaryCounts.single(design, yes, n)
    test, interval = counts.lr_test(mu0), counts.lr_interval(level)
    if test is None or interval is None:  # n = 0
        st.info("No reports yet (n = 0): the likelihood is flat, so there is no estimate. "
                "Enter at least one report.")
        return
    est = counts.summary(level)
    stat, pvalue = test
    crit = chi2_1_quantile(level)

    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Reports 'vanilla'", f"{fmt_count(yes)} / {fmt_count(n)}",
              help=f"reported share {fmt_fixed(est.reported_share, 3)}")
    m2.metric("Unbiased μ̂", fmt_fixed(est.mu_hat, 3), help="(V/n − b)/(a − b), Warner 1965")
    m3.metric("MLE on [0, 1]", fmt_fixed(est.mle, 3),
              help="The maximiser of the likelihood over shares that can exist")
    m4.metric(f"LR test of μ = {fmt_fixed(mu0, 2)}", f"p = {fmt_pvalue(pvalue)}",
              help="statistic 2(ℓ(μ̂) − ℓ(μ₀)) against χ² with 1 degree of freedom")
    verdict = "rejects" if stat > crit else "does not reject"
    st.markdown(
        f"Likelihood-ratio statistic 2(ℓ(μ̂) − ℓ(μ₀)) = **{fmt(stat, 3)}** against the "
        f"χ²₁ {fmt_pct(level, 0)} point **{fmt_fixed(crit, 3)}**: the test **{verdict}** "
        f"μ = {fmt_fixed(mu0, 2)} at level {fmt_pct(1 - level, 0)}.")
    if est.outside_unit_interval:
        st.info(f"The unbiased estimate {fmt_fixed(est.mu_hat, 3)} is outside [0, 1]; the MLE "
                f"is the nearest share that can exist, {fmt_fixed(est.mle, 3)}. The "
                "likelihood knows that a share lies in [0, 1]; the unbiased formula does not.")

    lo, hi = 0.0, 1.0
    if zoom:
        width = max(interval[1] - interval[0], 0.01)
        lo, hi = max(0.0, interval[0] - width), min(1.0, interval[1] + width)
    grid = np.linspace(lo, hi, GRID)
    prof = likelihood_profile(counts, grid, level)
    label = f"{fmt_pct(level, 0)} LR interval"
    left, right = st.columns(2)
    with left:
        charts.show(charts.loglik_curve(
            grid, prof.relative_likelihood, y_title="likelihood L(μ) / L(MLE)", mle=est.mle,
            interval=interval, interval_label=label, title="Likelihood",
            subtitle=f"L(μ) = Π λ^y (1−λ)^(1−y), λ = b + (a−b)μ; shaded: {label}"))
    with right:
        charts.show(charts.loglik_curve(
            grid, prof.log_likelihood, mle=est.mle, interval=interval, interval_label=label,
            cutoff=prof.cutoff, cutoff_label=f"ℓ(MLE) − {fmt_fixed(crit, 2)}/2", mu0=mu0,
            title="Log-likelihood and the LR test",
            subtitle="inside the interval: μ the LR test does not reject"))
    impossible = ~np.isfinite(prof.log_likelihood)
    if impossible.any():
        st.caption(f"At {fmt_count(impossible.sum())} of the {GRID} grid points the reports are "
                   "impossible (ℓ = −∞, likelihood 0): e.g. a 'vanilla' report when nobody "
                   "prefers vanilla and the design never lies. Those points are not drawn "
                   "on the log scale.")

    st.subheader("Three intervals for μ")
    _three_intervals(est, truth, level)
    st.subheader("How often does each interval cover the true share?")
    _coverage(design, n, level)


#: The three intervals, as the coverage picture and the table name them.
NORMAL, LIKELIHOOD, EXACT = ("normal μ̂ ± z·SD", "likelihood ratio",
                             "exact (the dashboard's CI)")
INTERVAL_COLOURS = {NORMAL: charts.LOCAL, LIKELIHOOD: charts.HIGHLIGHT, EXACT: charts.CENTRAL}
METHODS = {NORMAL: "normal", LIKELIHOOD: "likelihood_ratio", EXACT: "exact"}
MODELS = {"population": "drawn from a population", "class": "this fixed class"}
#: Largest n whose coverage the page computes (the sums run over ~20 √n counts per share).
COVERAGE_N_MAX = 100_000
#: Largest n for the fixed-class picture (one convolution per class share).
CLASS_N_MAX = 2_000


def _three_intervals(est, truth: float | None, level: float) -> None:
    """The normal, likelihood-ratio and exact intervals of these counts, side by side."""
    rows, mids, lows, highs, colours = [], [], [], [], []
    for name, mid, low, high in ((NORMAL, est.mu_hat, est.ci_low, est.ci_high),
                                 (LIKELIHOOD, est.mle, est.lr_low, est.lr_high),
                                 (EXACT, est.mle, est.exact_low, est.exact_high)):
        if low is not None and high is not None:
            rows.append(name)
            mids.append(mid)
            lows.append(low)
            highs.append(high)
            colours.append(INTERVAL_COLOURS[name])
    charts.show(charts.estimate_with_ci(
        rows, mids, lows, highs, truth=truth, colors=colours,
        value_title="share of vanilla lovers μ",
        title=f"Three {fmt_pct(level, 0)} intervals from the same reports",
        subtitle="dashed: the true share (simulation only)"))
    inside = est.ci_low is not None and est.ci_high is not None \
        and 0 <= est.ci_low and est.ci_high <= 1
    st.dataframe(
        {"interval": ["normal, μ̂ ± z·SD (worst-case SD): the large-n approximation",
                      "likelihood ratio", "exact: Clopper–Pearson on V/n, mapped through the "
                      "design"],
         "from – to": [fmt_interval(est.ci_low, est.ci_high),
                       fmt_interval(est.lr_low, est.lr_high),
                       fmt_interval(est.exact_low, est.exact_high)],
         "stays in [0, 1]?": ["yes" if inside else "no", "yes", "yes"]},
        hide_index=True)
    st.markdown(
        "The normal interval is symmetric around μ̂ and can leave [0, 1] in small classes. "
        "The likelihood-ratio interval collects every μ that the LR test does not reject, so "
        "it stays inside [0, 1] and bends with the likelihood near the edges. The exact "
        "interval (Clopper & Pearson 1934) inverts two one-sided binomial tests on the "
        "reported share V/n and maps them through λ = b + (a − b)μ: it is a little wider, "
        "and it is the one that keeps its promise at every n (below). For large n the three "
        "agree.")


@st.cache_data(show_spinner=False, max_entries=64)
def _coverage_curves(a: float, b: float, n: int, level: float, model: str
                     ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    shares = coverage_shares(n, model)
    return shares, {name: interval_coverage(a, b, n, shares, method=method, level=level,
                                            model=model)
                    for name, method in METHODS.items()}


def _coverage(design: BinaryDesign, n: int, level: float) -> None:
    """The exact coverage of the three intervals against the true share, for this design
    and n (ldp_core.interval_coverage: binomial probabilities summed, not simulated)."""
    if n > COVERAGE_N_MAX:
        st.info(f"The coverage picture is computed for n up to {fmt_count(COVERAGE_N_MAX)}; "
                "choose a smaller class to see it.")
        return
    model = st.radio("The students are", list(MODELS), format_func=MODELS.get,
                     key=K_MODEL, persist_state="session", horizontal=True,
                     help="Drawn from a population: who is in the class varies too, so the "
                          "count of 'vanilla' reports is Binomial(n, λ). This fixed class: "
                          "only the randomization varies, Binomial(v, a) + Binomial(n − v, b) "
                          "for v true 'vanilla' among n.")
    if model == "class" and n > CLASS_N_MAX:
        st.info(f"The fixed-class picture is computed for n up to {fmt_count(CLASS_N_MAX)}; "
                "for larger classes it is drawn for students drawn from a population.")
        model = "population"
    shares, curves = _coverage_curves(design.a, design.b, n, level, model)
    target = f"{fmt_pct(level, 0)}: the promise"
    lowest = min(float(c.min()) for c in curves.values())
    floor = min(level - 0.05, math.floor(lowest * 20) / 20)
    charts.show(charts.line_chart(
        shares, {**curves, target: np.full(shares.shape, level)},
        colors={**INTERVAL_COLOURS, target: charts.TRUTH}, dashed=[target],
        x_title="true share μ", y_title="coverage", y_domain=(floor, 1.0), x_format=".0%",
        title=f"Exact coverage at n = {fmt_count(n)}, {fmt_pct(level, 0)} intervals",
        subtitle="P(the interval from a class's reports contains the true share), "
                 "binomial probabilities summed, not simulated"))
    rows = {"interval": list(curves), "lowest coverage": [], "at μ =": [],
            f"never below {fmt_pct(level, 0)}?": []}
    for curve in curves.values():
        i = int(np.argmin(curve))
        rows["lowest coverage"].append(fmt_pct_down(float(curve[i]), 1))
        rows["at μ ="].append(fmt_fixed(float(shares[i]), 3))
        rows[f"never below {fmt_pct(level, 0)}?"].append(
            "yes" if curve.min() >= level else "no")
    st.dataframe(rows, hide_index=True)
    where = ("of classes drawn from a population with this true share" if model == "population"
             else "of repetitions of the randomization for a class with exactly this share")
    st.caption(
        f"Each point is the probability, over the randomization, that the interval computed "
        f"from the reports contains the true share: the share {where}. Coverage jumps "
        "wherever a possible count enters or leaves an interval, so it zigzags. The exact "
        "interval stays on or above the line at every share and every n; the normal "
        "approximation and the likelihood-ratio interval dip below it in small classes. "
        "Percentages are rounded down.")
