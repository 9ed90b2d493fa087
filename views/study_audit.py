"""Self-study: the audit lab. Measuring a randomizer's ε from below, from its reports.

The phones promise ε. An audit runs their randomizer N times on input 1 and N times on
input 0, bounds both report probabilities with Clopper-Pearson intervals and turns them
into ε_LB, a lower bound on ε (Arcolezi & Gambs, PoPETs 2024(4)). The page shows one
audit, the exact distribution of ε_LB for N, the promise and the phones (honest, or a
build that cheats), how often honest phones are wrongly caught, and why an audit needs
many trials: ε_LB creeps up to the true ε only as the intervals shrink, like 1/√N.

Layout only: every number comes from ``ldp_core`` and ``classroom.audits``.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from classroom.audits import audit_verdict
from ldp_core import (
    AuditDistribution,
    BinaryDesign,
    EpsilonRR,
    WarnerRR,
    audit_distribution,
    audit_epsilon,
    audit_runs_needed,
    exact_interval,
)
from ui import charts
from ui.fmt import fmt_count, fmt_eps_allowed, fmt_eps_value, fmt_fixed, fmt_pct

K_PROMISE = "audit_promise"
K_PHONES = "audit_phones"
K_KEEP = "audit_keep"
K_N = "audit_n"
K_SEED = "audit_seed"

FIRST_SEED = 2024
N_OPTIONS = [10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000]
N_GRID = (10, 20, 30, 50, 100, 200, 300, 500, 1000, 2000, 3000, 5000, 10_000)
PHONES = {"honest": "honest phones", "cheat": "a phone build that cheats"}
EPS_MIN, EPS_MAX = 0.1, 4.0


def _defaults() -> None:
    ss = st.session_state
    ss.setdefault(K_PROMISE, round(math.log(3), 2))
    ss.setdefault(K_PHONES, "honest")
    ss.setdefault(K_KEEP, 0.9)
    ss.setdefault(K_N, 100)
    ss.setdefault(K_SEED, FIRST_SEED)


def _new_audit() -> None:
    st.session_state[K_SEED] = st.session_state.get(K_SEED, FIRST_SEED) + 1


def _phones(promise: float, phones: str, keep: float) -> BinaryDesign:
    """What the phones really do: RR at the promise, or keep the truth w.p. ``keep``."""
    return EpsilonRR(promise) if phones == "honest" else WarnerRR(keep)


@st.cache_data(show_spinner=False, max_entries=64)
def _distribution(a: float, b: float, n: int) -> AuditDistribution:
    return audit_distribution(a, b, n)


@st.cache_data(show_spinner="Computing the exact distribution for every N…", max_entries=32)
def _curves(a: float, b: float, promise: float) -> dict[str, list[float]]:
    """Over N_GRID: the median and the 5% and 95% points of ε_LB, and P(ε_LB > promise)."""
    out: dict[str, list[float]] = {"median": [], "low": [], "high": [], "caught": []}
    for n in N_GRID:
        dist = audit_distribution(a, b, n)
        out["median"].append(dist.median())
        out["low"].append(dist.quantile(0.05))
        out["high"].append(dist.quantile(0.95))
        out["caught"].append(dist.exceeds(promise))
    return out


@st.cache_data(show_spinner=False, max_entries=32)
def _runs_needed(a: float, b: float, promise: float) -> int | None:
    return audit_runs_needed(a, b, promise, limit=10_000)


def _one_audit(design: BinaryDesign, promise: float, n: int, seed: int) -> None:
    st.subheader(f"One audit: {fmt_count(n)} runs on each input")
    rng = np.random.default_rng(seed)
    k1, k0 = int(rng.binomial(n, design.a)), int(rng.binomial(n, design.b))
    lower = audit_epsilon(k1, n, k0, n)
    lo1, hi1 = exact_interval(1.0, 0.0, n, k1)
    lo0, hi0 = exact_interval(1.0, 0.0, n, k0)
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Shown 1, reported 1 (k₁/N)", f"{fmt_count(k1)}/{fmt_count(n)}",
              help=f"P(report 1 | 1) lies in [{fmt_fixed(lo1, 3)}, {fmt_fixed(hi1, 3)}] "
                   "(Clopper-Pearson, 2.5% on each side)")
    c2.metric("Shown 0, reported 1 (k₀/N)", f"{fmt_count(k0)}/{fmt_count(n)}",
              help=f"P(report 1 | 0) lies in [{fmt_fixed(lo0, 3)}, {fmt_fixed(hi0, 3)}]")
    c3.metric("ε_LB, measured from below", fmt_eps_allowed(lower),
              help="max over the outputs 1 and 0 of ln(lower bound of one input's chance / "
                   "upper bound of the other's), and at least 0")
    c4.metric("ε promised", fmt_eps_value(promise))
    verdict = audit_verdict(lower, promise, n, n)
    box = st.error if verdict.level == "caught" else st.success
    box(f"**{verdict.headline}.** {verdict.sentence}")
    st.button("Run another audit", icon=":material/casino:", on_click=_new_audit)


def _distribution_section(design: BinaryDesign, promise: float, n: int, honest: bool) -> None:
    st.subheader("Many audits: the exact distribution of ε_LB")
    dist = _distribution(design.a, design.b, n)
    above = dist.exceeds(promise)
    c1, c2, c3 = st.columns(3)
    c1.metric("The phones' true ε", fmt_eps_value(design.epsilon))
    c2.metric("Median ε_LB", fmt_eps_allowed(dist.median()))
    if honest:
        c3.metric("False alarms", fmt_pct(above, 2),
                  help="How often honest phones are found leaking: P(ε_LB > the promise) "
                       "when the phones keep it, at most 5% by construction")
    else:
        c3.metric("Caught: ε_LB above the promise", fmt_pct(above, 2))
    # the bars cover all but 1e-4 of the probability on each side (the rest is invisible)
    shown = (dist.values >= dist.quantile(1e-4)) & (dist.values <= dist.quantile(1 - 1e-4))
    rules = ({"promised ε = true ε": promise} if honest else
             {"promised ε": promise, "true ε": design.epsilon})
    charts.show(charts.histogram(
        dist.values[shown], weights=dist.probabilities[shown], rules=rules,
        rule_colors={"promised ε = true ε": charts.THEORY, "promised ε": charts.HIGHLIGHT,
                     "true ε": charts.THEORY},
        x_title="ε_LB", title=f"ε_LB over all audits of N = {fmt_count(n)} per input",
        subtitle="exact: every pair of counts (k₁, k₀) weighted by its binomial probability"))


def _trials_section(design: BinaryDesign, promise: float, honest: bool) -> None:
    st.subheader("Why auditing needs many trials")
    curves = _curves(design.a, design.b, promise)
    left, right = st.columns(2, gap="large")
    with left:
        charts.show(charts.line_chart(
            N_GRID, {"median ε_LB": curves["median"], "5% of audits below": curves["low"],
                     "5% of audits above": curves["high"],
                     "true ε": [design.epsilon] * len(N_GRID),
                     "promised ε": [promise] * len(N_GRID)},
            colors={"median ε_LB": charts.LOCAL, "5% of audits below": charts.TRUTH,
                    "5% of audits above": charts.TRUTH, "true ε": charts.THEORY,
                    "promised ε": charts.HIGHLIGHT},
            dashed=("5% of audits below", "5% of audits above", "true ε", "promised ε"),
            log_x=True,
            x_title="N, runs per input", y_title="ε_LB",
            title="The bound creeps up to the true ε", x_format="~s"))
    with right:
        name = "false alarms (honest phones)" if honest else "caught (the cheat)"
        series = {name: curves["caught"]}
        if honest:
            series["at most 5%"] = [0.05] * len(N_GRID)
        charts.show(charts.line_chart(
            N_GRID, series, colors={name: charts.LOCAL, "at most 5%": charts.THEORY},
            dashed=("at most 5%",), log_x=True, x_title="N, runs per input",
            y_title="P(ε_LB > promised ε)", y_domain=(0.0, 0.1) if honest else (0.0, 1.0),
            title="How often ε_LB passes the promise", x_format="~s"))
    needed = None if honest else _runs_needed(design.a, design.b, promise)
    st.markdown(
        "Each report is one coin flip of the randomizer, and ε is a ratio of two of its "
        "probabilities. The audit only knows each probability to within an interval that "
        "shrinks like 1/√N, and it must take the pessimistic end of both, so ε_LB stays "
        "below the true ε and approaches it slowly. A large ε is the hardest: its small "
        "probability (a lie) is rare, and a rare event needs many runs to be pinned down. "
        + ("" if honest else
           (f"This cheat is caught 99% of the time from about **{fmt_count(needed)}** runs "
            "per input." if needed else
            "This cheat is too close to the promise to be caught 99% of the time within "
            "10,000 runs per input.")))


def render() -> None:
    _defaults()
    st.title("Audit lab: measuring ε from below")
    st.caption("The phones promise ε. Run their randomizer on inputs you know, count the "
               "reports, and bound ε from below (Arcolezi & Gambs, 'Revealing the True Cost "
               "of Locally Differentially Private Protocols: An Auditing Perspective', "
               "PoPETs 2024). The classroom's audit round does this with the phones in the "
               "room.")
    with st.container(border=True):
        c1, c2 = st.columns(2, gap="large")
        promise = c1.slider("Promised ε", EPS_MIN, EPS_MAX, step=0.01, key=K_PROMISE,
                            persist_state="session")
        n = c1.select_slider("N, runs of the randomizer per input", N_OPTIONS, key=K_N,
                             persist_state="session")
        phones = c2.radio("The phones", list(PHONES), format_func=PHONES.__getitem__,
                          key=K_PHONES, horizontal=True, persist_state="session")
        keep = c2.slider("The cheat keeps the truth with probability", 0.51, 0.99, step=0.01,
                         key=K_KEEP, persist_state="session", disabled=phones == "honest",
                         help="It still claims the promised ε. At 0.9 its true ε is ln 9 "
                              "≈ 2.20.")
    honest = phones == "honest"
    design = _phones(float(promise), str(phones), float(keep))
    if not honest and design.epsilon <= promise:
        st.info("This 'cheat' keeps its promise: keeping the truth with that probability "
                "costs at most the promised ε. Raise the probability to see a real cheat.")
    _one_audit(design, float(promise), int(n), int(st.session_state[K_SEED]))
    _distribution_section(design, float(promise), int(n), honest)
    _trials_section(design, float(promise), honest)
