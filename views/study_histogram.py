"""Self-study: the histogram lab.

N people drawn from the 14-occupation population of Near & Abuah's
"Programming Differential Privacy" (US Census 'adult' data) each report their
occupation through a frequency oracle: one-hot + RR(ε/2) per bit (CS208),
unary encoding with any (p, q), OUE, GRR or OLH (Wang et al. 2017). The page
shows the true against the estimated histogram, the max error against the
√(N ln D)/ε scale, the theoretical variances with the recommended mechanism,
and the raw / clipped / Norm-Sub estimates (Wang et al. 2020) with their
measured errors.

Layout only: every number comes from ``ldp_core``.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from ldp_core import (
    GRR,
    OLH,
    ORACLE_NAMES,
    POSTPROCESSING,
    FrequencyOracle,
    UnaryEncoding,
    categorical_oracle_from_params,
    clip_counts,
    error_summary,
    max_error_scale,
    norm_sub,
    oracle,
    recommend_oracle,
    split_wins_above,
    subsample_counts,
    survey_privacy,
    survey_variance_unit,
)
from ui import charts
from ui.fmt import fmt, fmt_count, fmt_eps, fmt_eps_value, fmt_fixed

POPULATION_CSV = Path(__file__).resolve().parent.parent / "assets" / "occupations.csv"

K_EPS = "hist_eps"
K_N = "hist_n"
K_MECH = "hist_mech"
K_P = "hist_p"
K_Q = "hist_q"
K_POST = "hist_post"
K_SEED = "hist_seed"
K_SET_D = "hist_set_d"

MECHANISMS = {
    "sue": "One-hot + RR(ε/2) per bit",
    "ue": "Unary encoding (p, q)",
    "oue": "OUE",
    "grr": "GRR",
    "olh": "OLH",
}
PRESET_EPS, PRESET_N = 1.0, 2_000
EXACT_RUNS = 500  # simulated repetitions when exact aggregate sampling is available
OLH_WORK = 100_000  # OLH is simulated per respondent: runs = OLH_WORK / N, within [10, 50]


def _defaults() -> None:
    ss = st.session_state
    ss.setdefault(K_EPS, PRESET_EPS)
    ss.setdefault(K_N, PRESET_N)
    ss.setdefault(K_MECH, "sue")
    ss.setdefault(K_P, 0.75)
    ss.setdefault(K_Q, 0.25)
    ss.setdefault(K_POST, "raw")
    ss.setdefault(K_SEED, 0)
    ss.setdefault(K_SET_D, 4)


def _preset() -> None:
    st.session_state[K_EPS] = PRESET_EPS
    st.session_state[K_N] = PRESET_N


def _new_simulation() -> None:
    st.session_state[K_SEED] = st.session_state.get(K_SEED, 0) + 1


@st.cache_data(show_spinner=False)
def _population() -> tuple[tuple[str, ...], np.ndarray]:
    """The 14 occupations and their counts (assets/occupations.csv, from Near & Abuah)."""
    with POPULATION_CSV.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return tuple(r["occupation"] for r in rows), np.array([int(r["count"]) for r in rows])


def _runs(kind: str, n: int) -> int:
    if kind != "olh":
        return EXACT_RUNS
    return int(min(50, max(10, OLH_WORK // max(n, 1))))


def _run_errors(estimates: np.ndarray, sample: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each simulated run's max |error| and RMS error per bin (one value per run)."""
    summary = error_summary(estimates, sample, axis=-1)
    return np.asarray(summary.max_abs), np.asarray(summary.rmse)


@st.cache_data(show_spinner=False, max_entries=64)
def _simulate(params: tuple, n: int, seed: int) -> dict[str, np.ndarray]:
    """Draw N people, then simulate the oracle ``runs`` times.

    Returns the sampled true counts and, per post-processing, the (runs, d)
    estimated counts; run 0 is "this run". GRR and unary encoding use exact
    aggregate sampling; OLH perturbs every respondent (O(N d) per run), so it
    gets fewer runs.
    """
    oracle = categorical_oracle_from_params(dict(params))
    _, pop = _population()
    gen = np.random.default_rng([seed, 5])
    sample = subsample_counts(pop, n, rng=gen)
    runs = _runs(oracle.kind, n)
    if isinstance(oracle, OLH):
        values = np.repeat(np.arange(oracle.d), sample)
        support = np.stack([oracle.simulate_support_counts(values, rng=gen) for _ in range(runs)])
    else:
        support = oracle.sample_support_counts(sample, size=runs, rng=gen)
    raw = oracle.estimate_counts(support, n)
    return {"sample": sample, "raw": raw, "clip": clip_counts(raw), "norm_sub": norm_sub(raw, n)}


def _oracle(kind: str, d: int, eps: float) -> FrequencyOracle | None:
    if kind in ORACLE_NAMES:
        return oracle(kind, d, eps)
    c1, c2, c3 = st.columns(3)
    p = c1.slider("p = P(bit reads 1 | it is your bit)", 0.01, 0.99, step=0.01, key=K_P,
                  persist_state="session")
    q = c2.slider("q = P(bit reads 1 | another bit)", 0.01, 0.99, step=0.01, key=K_Q,
                  persist_state="session")
    try:
        custom = UnaryEncoding(d, p, q)
    except ValueError as exc:
        c3.metric("ε = ln(p(1−q) / ((1−p)q))", "—")
        if p == q:
            st.warning(f"{exc}. With p = q every bit reads 1 with the same probability "
                       "whatever the occupation: perfect privacy (ε = 0), and the estimator "
                       "(C − Nq)/(p − q) divides by zero. Move p above q.")
        else:
            st.warning(f"{exc}. Swap p and q to get the same privacy the right way round.")
        return None
    c3.metric("ε = ln(p(1−q) / ((1−p)q))", fmt_eps_value(custom.epsilon, 3),
              help="Near & Abuah: p = .75, q = .25 gives 2.197. The ε slider does not apply "
                   "to this mechanism.")
    return custom


def _variance_table(d: int, eps: float, n: int, current: FrequencyOracle) -> None:
    rec = recommend_oracle(d, eps)
    oracles: list[tuple[str, str, FrequencyOracle, str]] = [
        ("sue", MECHANISMS["sue"], UnaryEncoding.symmetric(d, eps), f"{d} bits"),
        ("oue", "OUE (optimized unary encoding)", UnaryEncoding.optimized(d, eps),
         f"{d} bits"),
        ("grr", "GRR (direct encoding)", GRR(d, eps), f"one of {d} categories"),
    ]
    olh = OLH(d, eps)
    oracles.append(("olh", "OLH (local hashing)", olh,
                    f"a hash seed and one of g = {fmt_count(olh.g)} buckets"))
    if current.kind == "ue" and st.session_state[K_MECH] == "ue":
        oracles.append(("ue", "Unary encoding (your p, q)", current, f"{d} bits"))
    df = pd.DataFrame({
        "mechanism": [o[1] for o in oracles],
        "ε": [fmt_eps_value(o[2].epsilon, 3) for o in oracles],
        "p": [fmt(o[2].p, 3) for o in oracles],
        "q": [fmt(o[2].q, 3) for o in oracles],
        "N·Var(share)": [fmt_fixed(o[2].count_variance(1), 2) for o in oracles],
        f"Var of a count at N = {fmt_count(n)}": [fmt(o[2].count_variance(n), 3)
                                                  for o in oracles],
        "each person sends": [o[3] for o in oracles],
        "recommended": ["★" if o[0] == rec else "" for o in oracles],
    })
    st.dataframe(df.style.apply(
        lambda row: ["background-color: #fde7c2; font-weight: 600"
                     if row["recommended"] else "" for _ in row], axis=1),
        hide_index=True)
    best = "GRR" if rec == "grr" else "OUE"
    st.caption(f"Variance of each estimated count, Var = N q(1−q)/(p−q)² (Wang et al. 2017, "
               f"dropping the small term in the bin's own share). ★ {best} is recommended at "
               f"d = {d}, {fmt_eps(eps)}: GRR wins when d < 3e^ε + 2, otherwise OUE "
               "(OLH matches OUE while sending less).")


def _set_table(d: int, eps: float, n: int) -> None:
    """A set answer (each person checks any of d options) under the same ε: each option its
    own randomized-response bit at ε/d (a set that changes in every option costs the sum,
    d·ε/d = ε), or one option sampled on the phone and answered at the full ε."""
    st.markdown(
        "When a person may check **any** set of options, a one-hot encoding no longer "
        "holds: two sets can differ in every bit. Each option answered as its own "
        "randomized-response bit at ε_bit then costs **d·ε_bit** for the whole set "
        "(Erlingsson et al., RAPPOR; Wang et al. 2017), so the budget ε is split, "
        "ε/d per option. The other honest spend: the phone draws one option and answers "
        "only that one at the full ε; each option then hears from about N/d people, so its "
        "variance is d times one question's (Wang et al., ICDE 2019). ldp_core gives both.")
    st.slider("Options in the set, d", 2, 8, key=K_SET_D)
    rows = []
    for mode, name, per in (("split", "each option its own RR bit", eps / d),
                            ("sample", "one option sampled, at the full ε", eps)):
        unit = float(survey_variance_unit(mode, eps, d, 0.5))
        priv = survey_privacy(mode, eps, d)
        rows.append({"way": name, "ε of the whole set": fmt_eps_value(priv.spent, 3),
                     "ε per option's report": fmt_eps_value(per, 3),
                     "N·Var(share), share ½": fmt_fixed(unit, 2),
                     f"SD of a share at N = {fmt_count(n)}": fmt_fixed((unit / n) ** 0.5, 4)})
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    above = split_wins_above(d)
    where = (f"splitting wins above {fmt_eps(above)}" if above is not None
             else "sampling wins at every ε")
    st.caption(f"N·Var = π(1−π) + e^ε′/(e^ε′ − 1)² per answered option, ε′ its ε; sampling "
               f"pays it d times over. At d = {d} and a share of ½, {where}: at small ε "
               "the noise, about d²/ε² against d/ε², favours sampling; at large ε the "
               "population's spread π(1−π), paid d times by sampling, favours splitting.")


def render() -> None:
    _defaults()
    labels, pop = _population()
    d = len(labels)
    st.title("Histogram lab")
    st.caption(f"{fmt_count(pop.sum())} adults with a recorded occupation (US Census 'adult' "
               "data, counts from Near & Abuah, 'Programming Differential Privacy'). Draw N of "
               "them; each reports their occupation through a local randomizer.")
    with st.container(border=True):
        c1, c2 = st.columns(2)
        eps = c1.slider("ε", 0.05, 10.0, step=0.05, key=K_EPS, persist_state="session")
        n = c2.slider("N, people sampled from the population", 1, int(pop.sum()), key=K_N,
                      persist_state="session")
        b1, b2 = st.columns(2)
        b1.button("Preset: ε = 1, N = 2,000 (CS208)", on_click=_preset)
        b2.button("New simulation", icon=":material/casino:", on_click=_new_simulation)
        kind = st.radio("Mechanism", list(MECHANISMS), format_func=MECHANISMS.get, key=K_MECH,
                        persist_state="session",
                        horizontal=True)
        oracle = _oracle(kind, d, float(eps))
        post = st.radio("Show", list(POSTPROCESSING), format_func=POSTPROCESSING.get,
                        key=K_POST, persist_state="session", horizontal=True,
                        help="Post-processing never costs privacy; it trades unbiasedness "
                             "for a histogram without negative counts.")
    if oracle is None:
        return
    n, eps_mech = int(n), float(oracle.epsilon)
    sim = _simulate(tuple(sorted(oracle.params().items())), n, int(st.session_state[K_SEED]))
    sample = sim["sample"]
    runs = sim["raw"].shape[0]
    this = {k: sim[k][0] for k in POSTPROCESSING}
    errors = {k: _run_errors(sim[k], sample) for k in POSTPROCESSING}
    max_abs = {k: errors[k][0] for k in POSTPROCESSING}
    rmse = {k: errors[k][1] for k in POSTPROCESSING}
    scale = max_error_scale(n, d, eps_mech)

    m1, m2, m3, m4 = st.columns(4)
    m1.metric("ε of this mechanism", fmt_eps_value(eps_mech, 3))
    m2.metric("Max |error|, this run", fmt_count(max_abs[post][0]),
              help="max over the 14 occupations of |estimate − true count|")
    m3.metric("Scale √(N ln D)/ε", fmt_count(scale),
              help="CS208: the expected max error over D bins is ±O(√(N log D)/ε)")
    m4.metric(f"Mean max |error|, {fmt_count(runs)} runs", fmt_count(max_abs[post].mean()))

    charts.show(charts.compare_bars(
        labels, {"true count": sample, POSTPROCESSING[post]: this[post]},
        colors={"true count": charts.TRUTH, POSTPROCESSING[post]: charts.LOCAL},
        value_title="people", title=f"{MECHANISMS[kind]}: true against estimated counts",
        subtitle=f"N = {fmt_count(n)}, {fmt_eps(eps_mech)}; one simulated run"))

    negative = this["raw"] < 0
    if negative.any():
        shown = ("shown above" if post == "raw"
                 else f"before {POSTPROCESSING[post].lower()}")
        st.info(
            f"**{fmt_count(negative.sum())} of {d} raw estimates "
            f"{'is' if negative.sum() == 1 else 'are'} negative** ({shown}; smallest "
            f"{fmt_count(this['raw'].min())}). Each raw count is (C − Nq)/(p − q): the reports "
            "that support a category, minus the supports expected from noise alone. When a "
            "category is rare, noise can leave fewer supports than expected, and the unbiased "
            "estimate goes below zero. That is the price of being right on average, not a "
            "bug. Clipping at 0 removes negatives but biases small counts upward and lets the "
            "total drift above N; Norm-Sub subtracts one constant and clips so the counts "
            "are non-negative and sum to N (Wang et al. 2020).")

    st.subheader("Post-processing and its measured error")
    st.dataframe({
        "estimate": [POSTPROCESSING[k] + (" ◀ shown" if k == post else "")
                     for k in POSTPROCESSING],
        "max |error|, this run": [fmt_count(max_abs[k][0]) for k in POSTPROCESSING],
        "RMS error per bin, this run": [fmt(rmse[k][0], 3) for k in POSTPROCESSING],
        "total (N = " + fmt_count(n) + ")": [fmt_count(this[k].sum()) for k in POSTPROCESSING],
        f"mean max |error|, {runs} runs": [fmt_count(max_abs[k].mean())
                                           for k in POSTPROCESSING],
        f"mean RMS error, {runs} runs": [fmt(rmse[k].mean(), 3) for k in POSTPROCESSING],
    }, hide_index=True)
    if kind == "olh":
        st.caption(f"OLH is simulated person by person (each user hashes with their own seed), "
                   f"so only {runs} runs are simulated here; the other mechanisms use "
                   f"{EXACT_RUNS} runs of exact aggregate sampling.")

    charts.show(charts.histogram(
        max_abs[post], rules={"scale √(N ln D)/ε": scale,
                                      "this run": float(max_abs[post][0])},
        rule_colors={"scale √(N ln D)/ε": charts.THEORY, "this run": charts.HIGHLIGHT},
        x_title="max over the 14 occupations of |error| (people)",
        title=f"Max error over {runs} simulated runs ({POSTPROCESSING[post].lower()})",
        subtitle="The scale is an order of magnitude: the constant depends on the mechanism"))

    st.subheader("Which mechanism? Theoretical variances")
    _variance_table(d, float(eps), n, oracle)

    st.subheader("The set case: check all that apply")
    _set_table(int(st.session_state[K_SET_D]), float(eps), n)
