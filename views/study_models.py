"""Self-study: local, shuffle, federated, central.

One privacy budget ε for the class, four ways to organise trust, and the SD of
the class's estimated share under each: local randomized response, the same
reports through a shuffler (each phone at the largest ε0 the target allows),
federated DP with k table delegates, and a central curator. A fixed-seed
simulation stands beside every formula.

Layout only: every number comes from ``ldp_core``.
"""

from __future__ import annotations

import streamlit as st

from ldp_core import ModelSDs, model_share_sds, sd_with_se, simulate_model_shares
from ui import charts
from ui.fmt import fmt, fmt_count, fmt_eps, fmt_eps_allowed, fmt_fixed, fmt_power

K_N = "models_n"
K_EPS = "models_eps"
K_DELTA = "models_delta"
K_K = "models_k"
K_SEED = "models_seed"

N_MAX = 2_000
DELTAS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10)
CLASSES = 10_000
FIRST_SEED = 2025
#: A simulated SD further than this many standard errors from its formula is flagged.
Z_FLAG = 3.0
MODELS = ModelSDs._fields[:4]
COLOURS = {"local": charts.LOCAL, "shuffle": charts.SHUFFLE, "federated": charts.FEDERATED,
           "central": charts.CENTRAL}


def _defaults() -> None:
    ss = st.session_state
    ss.setdefault(K_N, 30)
    ss.setdefault(K_EPS, 1.0)
    ss.setdefault(K_DELTA, 1e-6)
    ss.setdefault(K_K, 6)
    ss.setdefault(K_SEED, FIRST_SEED)


def _new_simulation() -> None:
    st.session_state[K_SEED] = st.session_state.get(K_SEED, FIRST_SEED) + 1


@st.cache_data(show_spinner="Finding the largest ε0 a shuffler allows…", max_entries=128)
def _numbers(n: int, eps: float, delta: float, k: int, seed: int) -> dict:
    """The four formulas and, for ``CLASSES`` simulated classes, each model's SD ± SE."""
    sds = model_share_sds(n, eps, delta, k)
    sim = simulate_model_shares(n, eps, delta, k, size=CLASSES, rng=seed)
    measured = {m: sd_with_se(getattr(sim, m)) for m in MODELS}
    return {"sds": sds, "sim": measured}


def _labels(sds: ModelSDs, eps: float, k: int) -> dict[str, str]:
    return {
        "local": f"Local RR ({fmt_eps(eps)})",
        "shuffle": f"Shuffle (ε0 = {fmt_eps_allowed(sds.shuffle_local_epsilon)})",
        "federated": f"Federated (k = {fmt_count(k)})",
        "central": "Central",
    }


def _trust(n: int, eps: float, delta: float, k: int, sds: ModelSDs) -> dict[str, str]:
    """What each model trusts, in plain words."""
    per_table = n / k
    table = (f"about {fmt(per_table, 2)} students" if per_table != int(per_table)
             else f"{fmt_count(per_table)} student{'s' if per_table != 1 else ''}")
    return {
        "local": "Nobody. Each phone randomizes its own answer before sending it; the server "
                 "may know who sent which report, and each report is ε-DP on its own.",
        "shuffle": "A shuffler, to strip who sent each report and when and to pass the "
                   "reports on in random order. It never sees a true answer, only randomized "
                   f"ones. Hidden among {fmt_count(n)}, each report can be less noisy "
                   f"(ε0 = {fmt_eps_allowed(sds.shuffle_local_epsilon)}) while the shuffled "
                   f"release stays (ε, δ)-DP with δ = {fmt_power(delta)}.",
        "federated": f"k = {fmt_count(k)} delegates, one per table of {table}: each sees the "
                     "true answers of their own table and nobody else's, and releases its "
                     f"count plus Laplace noise of scale 1/ε. The analyst sees {fmt_count(k)} "
                     "noisy counts.",
        "central": "One curator, with every true answer. The curator adds Laplace noise of "
                   "scale 1/ε to the class's count, once.",
    }


def render() -> None:
    _defaults()
    st.title("Local, shuffle, federated, central")
    st.caption("The same privacy for every student, four ways to organise trust: how "
               "accurate is the class's estimated share? (CS208 'The Local Model: "
               "Foundations': federated DP with k delegates, 'can we get the best of both "
               "worlds?', the shuffle model.)")
    with st.container(border=True):
        c1, c2 = st.columns(2)
        n = c1.slider("Class size n", 2, N_MAX, key=K_N, persist_state="session")
        eps = c2.slider("Privacy ε, the same for every model", 0.1, 5.0, step=0.05, key=K_EPS,
                        persist_state="session",
                        help="What each student is guaranteed against whoever sees the "
                             "release: the server (local), the analyst after the shuffler "
                             "(shuffle), the analyst who sees the delegates' or the "
                             "curator's noisy counts (federated, central).")
        delta = c1.select_slider("δ, the shuffle model's small chance of more leakage",
                                 DELTAS, format_func=fmt_power, key=K_DELTA,
                                 persist_state="session",
                                 help="The three other models are ε-DP with δ = 0.")
        st.session_state[K_K] = max(1, min(int(st.session_state[K_K]), int(n)))
        k = c2.slider("k, table delegates (federated)", 1, int(n), key=K_K,
                      persist_state="session",
                      help="k = 1 is the central model; k = n gives every student their "
                           "own Laplace noise.")
    n, eps, delta, k = int(n), float(eps), float(delta), int(k)
    seed = int(st.session_state[K_SEED])
    numbers = _numbers(n, eps, delta, k, seed)
    sds: ModelSDs = numbers["sds"]
    sim: dict[str, tuple[float, float]] = numbers["sim"]
    labels = _labels(sds, eps, k)

    cols = st.columns(4)
    helps = {
        "local": "e^(ε/2) / ((e^ε − 1) √n): ε-RR, the class fixed, ldp_core.local_mean_sd",
        "shuffle": "the same formula at ε0, the largest local ε for which the shuffled n "
                   "reports are (ε, δ)-DP: exact for RR, ldp_core.shuffle_local_epsilon",
        "federated": "√(2k) / (nε): k Laplace noises of variance 2/ε² on the class count, "
                     "ldp_core.federated_share_sd",
        "central": "√2 / (nε): one Laplace noise on the class count, "
                   "ldp_core.central_mean_sd",
    }
    titles = {"local": "Local RR", "shuffle": "Shuffle model",
              "federated": f"Federated, k = {fmt_count(k)}", "central": "Central Laplace"}
    for col, model in zip(cols, MODELS, strict=True):
        col.metric(f"{titles[model]}: SD", fmt(getattr(sds, model), 4), help=helps[model])

    charts.show(charts.sd_bars(
        [labels[m] for m in MODELS], [getattr(sds, m) for m in MODELS],
        [sim[m][0] for m in MODELS], [sim[m][1] for m in MODELS],
        colors=[COLOURS[m] for m in MODELS], text=[fmt(getattr(sds, m), 4) for m in MODELS],
        sim_text=[f"{fmt(sim[m][0], 3)} ± {fmt(sim[m][1], 2)}" for m in MODELS],
        value_title="SD of the estimated share",
        title=f"n = {fmt_count(n)}, {fmt_eps(eps)}, δ = {fmt_power(delta)} "
              "(shuffle only)",
        subtitle=f"bars: formulas; dots: {fmt_count(CLASSES)} simulated classes, seed {seed}, "
                 "± 2 SE"))

    ratio = sds.local / sds.shuffle
    federated = (f"Federated with k = {fmt_count(k)} costs √k = "
                 f"{fmt(sds.federated / sds.central, 3)} times the central SD.")
    if ratio >= 1.05:
        st.markdown(
            f"Through a shuffler each phone can use **ε0 = "
            f"{fmt_eps_allowed(sds.shuffle_local_epsilon)}** instead of {fmt_eps(eps)}: "
            f"the class's estimate is **{fmt(ratio, 3)}× more accurate** than in the local "
            f"model, at the same privacy (plus δ = {fmt_power(delta)}). {federated}")
    else:
        st.markdown(
            f"With {fmt_count(n)} students a shuffler buys almost nothing at "
            f"{fmt_eps(eps)}: a report has too few others to hide among, so "
            f"each phone must stay near ε. Try a larger class. {federated}")

    st.subheader("What each model trusts")
    trust = _trust(n, eps, delta, k, sds)
    st.markdown("\n".join(f"- **{titles[m]}**: {trust[m]}" for m in MODELS))

    st.subheader("Formula and simulation")
    rows: dict[str, list[str]] = {"Model": [], "SD, formula": [], "SD, simulated ± SE": [],
                                  "Off by": []}
    flagged = []
    for model in MODELS:
        formula, (s, se) = getattr(sds, model), sim[model]
        z = abs(s - formula) / se if se > 0 else 0.0
        rows["Model"].append(titles[model])
        rows["SD, formula"].append(fmt(formula, 4))
        rows["SD, simulated ± SE"].append(f"{fmt(s, 3)} ± {fmt(se, 2)}")
        rows["Off by"].append(f"{fmt_fixed(z, 1)} SE")
        if z > Z_FLAG:
            flagged.append(titles[model])
    st.dataframe(rows, hide_index=True)
    st.caption(
        f"{fmt_count(CLASSES)} classes of {fmt_count(n)} students, half of them answering "
        f"yes, drawn with numpy's generator seeded {seed} (vectorized: the yes counts "
        "of randomized response sampled exactly, the delegates' k Laplace noises summed as "
        "a difference of two Gamma(k, 1/ε) draws). The standard error of a simulated SD "
        "comes from the sample's fourth moment. The simulated SD lands within about 2 "
        "standard errors of its formula 95% of the time.")
    if flagged:
        st.info(f"{', '.join(flagged)}: more than {fmt_fixed(Z_FLAG, 0)} standard errors "
                "from the formula in this simulation. That happens about 3 times in 1,000 "
                "by chance; draw a new simulation to see.")
    st.button("New simulation", icon=":material/casino:", on_click=_new_simulation,
              help="Draw the classes again with the next seed.")

    st.markdown(
        "**Why they differ.** The local model adds noise to each of the n answers, so its "
        "error falls like 1/(ε√n). The central model adds one noise to the total: 1/(εn). "
        "Federated DP adds k noises, one per delegate: √k/(εn), between the two (CS208: "
        "k = 1 is central DP, k = n is local). The shuffle model keeps the local model's "
        "protocol, but anonymity lets each phone randomize less, so its error approaches "
        "the central model's as the class grows.")
