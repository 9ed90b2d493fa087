"""Self-study: the manipulation lab. How few fake users break an LDP estimate.

A class of honest students answers through a design (the class exercise's die, GRR or
OUE); a coalition of fake users joins and always sends the report that supports one
target answer. Each fake report moves the target's estimated count by (1 − b)/(a − b)
(Cao, Jia & Gong 2021): the page shows the honest estimate, the manipulated one, the
plausibility check's verdict on a simulated class and its exact chance of raising the
alarm as the fakes grow, the blind zone where the reports stay inside the design's band
and no check can see them, and the stealthy variant (Cheu, Smith & Ullman 2021), whose
fakes randomize the target as if it were their answer.

Layout only: every number comes from ``ldp_core``.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from ldp_core import (
    GRR,
    DieRR,
    UnaryEncoding,
    blind_zone,
    fake_report_gain,
    fakes_until_alarm,
    simulate_stuffing,
    stuffing_alarm_probability,
    stuffing_shift,
    target_channel,
)
from ui import charts
from ui.fmt import fmt_count, fmt_fixed, fmt_pct

K_DESIGN = "manip_design"
K_D = "manip_d"
K_EPS = "manip_eps"
K_N = "manip_n"
K_PI = "manip_pi"
K_FAKES = "manip_fakes"
K_STEALTHY = "manip_stealthy"
K_SEED = "manip_seed"

DESIGNS = {
    "exercise": "The class exercise (die 1–4)",
    "grr": "GRR (direct encoding)",
    "oue": "OUE (optimized unary encoding)",
}
LN3 = math.log(3)
#: The ε a learner can pick for GRR and OUE; ln 3 is the class exercise's.
EPSILONS = (0.5, 1.0, LN3, 2.0, 3.0, 4.0)
N_MAX = 2000
CURVE_POINTS = 41


def _eps_label(eps: float) -> str:
    return "ln 3 ≈ 1.10" if eps == LN3 else fmt_fixed(eps, 1)


def _defaults() -> None:
    ss = st.session_state
    ss.setdefault(K_DESIGN, "exercise")
    ss.setdefault(K_D, 10)
    ss.setdefault(K_EPS, LN3)
    ss.setdefault(K_N, 100)
    ss.setdefault(K_PI, 0.3)
    ss.setdefault(K_FAKES, 20)
    ss.setdefault(K_STEALTHY, False)
    ss.setdefault(K_SEED, 0)


def _new_class() -> None:
    st.session_state[K_SEED] = st.session_state.get(K_SEED, 0) + 1


def _design(kind: str, d: int, eps: float):
    if kind == "grr":
        return GRR(d, eps)
    if kind == "oue":
        return UnaryEncoding.optimized(d, eps)
    return DieRR(4, 3)


def _target_name(kind: str) -> str:
    return "Vanilla" if kind == "exercise" else "option A"


@st.cache_data(show_spinner=False, max_entries=64)
def _alarm_curve(kind: str, d: int, eps: float, n: int, pi: float, k_max: int
                 ) -> dict[str, list[float]]:
    """The exact chance that the band check fires, for 0..k_max fakes of each attack."""
    design = _design(kind, d, eps)
    ks = np.unique(np.linspace(0, k_max, CURVE_POINTS).round().astype(int))
    return {"k": ks.tolist(), **{
        name: [stuffing_alarm_probability(design, n, int(k), pi, stealthy=stealthy,
                                          target=0 if kind != "exercise" else 1)
               for k in ks]
        for name, stealthy in (("stuffing", False), ("stealthy", True))}}


@st.cache_data(show_spinner=False, max_entries=256)
def _fakes_until(kind: str, d: int, eps: float, n: int, pi: float, probability: float
                 ) -> int | None:
    return fakes_until_alarm(_design(kind, d, eps), n, pi, probability=probability,
                             target=0 if kind != "exercise" else 1, limit=20 * N_MAX)


@st.cache_data(show_spinner=False, max_entries=64)
def _one_class(kind: str, d: int, eps: float, n: int, pi: float, fakes: int, stealthy: bool,
               seed: int):
    design = _design(kind, d, eps)
    return simulate_stuffing(design, n, fakes, pi, stealthy=stealthy,
                             target=0 if kind != "exercise" else 1,
                             rng=np.random.default_rng([seed, n, fakes]))


def _verdict(check) -> str:
    if check.fits:
        return (f"The check finds nothing wrong: the reports fit the design "
                f"(p = {check.p_value:.2g}).")
    return (f"**The check raises the alarm** (p = {check.p_value:.1g}, below "
            f"{check.alpha:g}): no honest class could have sent these reports.")


def render() -> None:
    _defaults()
    st.title("Manipulation lab: how few fake users break an estimate")
    st.write(
        "Local privacy protects each student from the server, but it also hides what each "
        "report means, so the server cannot tell a fake report from a real one. A few fake "
        "users who skip the randomizer and always send the report that supports one answer "
        "move the estimate much further than honest students could: the stronger the "
        "privacy, the more each fake report weighs (Cao, Jia & Gong, USENIX Security 2021; "
        "Cheu, Smith & Ullman, IEEE S&P 2021).")
    with st.container(border=True):
        top = st.columns([2, 1, 1])
        kind = top[0].radio("Design", list(DESIGNS), format_func=DESIGNS.__getitem__,
                            key=K_DESIGN, horizontal=True, persist_state="session")
        fixed = kind == "exercise"
        d = int(top[1].slider("Options d", 2, 20, key=K_D, disabled=fixed,
                              persist_state="session"))
        eps = float(top[2].select_slider("ε", EPSILONS, key=K_EPS, format_func=_eps_label,
                                         disabled=fixed, persist_state="session"))
        mid = st.columns(3)
        n = int(mid[0].slider("Honest students n", 10, N_MAX, step=10, key=K_N,
                              persist_state="session"))
        pi = float(mid[1].slider(f"Honest share holding the target ({_target_name(kind)})",
                                 0.0, 1.0, step=0.05, key=K_PI, persist_state="session"))
        fakes = int(mid[2].slider("Fake users k", 0, N_MAX, step=5, key=K_FAKES,
                                  persist_state="session"))
        stealthy = st.toggle("Stealthy fakes: run the randomizer on the target, as if it "
                             "were their true answer", key=K_STEALTHY,
                             persist_state="session")
    design = _design(kind, d, eps)
    target = 1 if fixed else 0
    a, b = target_channel(design, target)
    gain = fake_report_gain(design, target)
    beta = fakes / (n + fakes)
    shift = stuffing_shift(design, pi, beta, stealthy=stealthy, target=target)
    edge = blind_zone(design, pi, target=target)
    edge_fakes = math.floor(edge / (1 - edge) * n) if edge < 1 else None
    prob = stuffing_alarm_probability(design, n, fakes, pi, stealthy=stealthy, target=target)

    name = _target_name(kind)
    st.subheader(f"{fmt_count(fakes)} {'stealthy ' if stealthy else ''}fake users among "
                 f"{fmt_count(n)} students ({fmt_pct(beta, 0)} of the reports)")
    first, second = st.columns(3), st.columns(3)
    first[0].metric("Weight of one fake report", fmt_fixed(1.0 if stealthy else gain, 2),
                    help="(1 − b)/(a − b) for a fake that always sends the target's report, "
                    f"with a = {fmt_fixed(a, 3)} and b = {fmt_fixed(b, 3)}; an honest student "
                    "who truly holds the target moves the count by 1 on average, and so does "
                    "a stealthy fake.")
    first[1].metric("Honest estimate", fmt_pct(pi, 1),
                    help="Expected. The reports are unbiased: without fakes the estimate "
                    "centres on the honest share.")
    first[2].metric("With the fakes", fmt_pct(pi + shift, 1),
                    delta=f"{'+' if shift >= 0 else ''}{shift * 100:.1f} points",
                    delta_color="inverse",
                    help="Expected: β((1 − b)/(a − b) − π) added to the honest share π, with "
                    "β the fakes' share of the reports (β(1 − π) for stealthy fakes).")
    second[0].metric("Blind zone", "any number of fakes" if edge_fakes is None
                     else f"up to {fmt_count(edge_fakes)} fakes",
                     help="Fakes no check can see. While the expected estimate stays at most "
                     "100%, the reports stay inside the band [b, a] that some honest class "
                     "could produce, however large the class: β ≤ (1 − π)/((1 − b)/(a − b) "
                     f"− π) = {fmt_pct(min(edge, 1), 1)}.")
    half = _fakes_until(kind, d, eps, n, pi, 0.5)
    second[1].metric("Fakes the check catches half the time",
                     "never" if stealthy or half is None else f"{fmt_count(half)} or more",
                     help="The fewest fakes that always send the target for which the check "
                     "raises the alarm at least half the time, with this class. Stealthy "
                     "fakes are never caught.")
    second[2].metric("Chance of an alarm now", "< 0.1%" if prob < 0.001 else fmt_pct(prob, 1),
                     help="That the plausibility check flags these reports. Exact: the "
                     "binomial distribution of the target's count, checked against the band "
                     "as the dashboard checks a yes/no question (for GRR, the target's part "
                     "of its check; for OUE, the target's bit).")

    cls = _one_class(kind, d, eps, n, pi, fakes, stealthy, int(st.session_state[K_SEED]))
    st.markdown(
        f"**One simulated class:** the honest reports alone estimate "
        f"{fmt_pct(cls.honest, 1)} for {name}; with the fakes, {fmt_pct(cls.manipulated, 1)}. "
        + _verdict(cls.check))
    st.button("Simulate another class", key="manip_new_class", on_click=_new_class)

    left, right = st.columns(2, gap="large")
    # β from 0 to twice the blind zone (and past the current β), at most 90% fakes.
    betas = np.linspace(0, min(0.9, max(0.1, 2 * edge, 1.25 * beta)), 61)
    with left:
        honest_line = np.full(betas.size, pi)
        charts.show(charts.line_chart(
            betas, {
                "fakes always send the target": pi + np.array(
                    [stuffing_shift(design, pi, x, target=target) for x in betas]),
                "stealthy fakes": pi + np.array(
                    [stuffing_shift(design, pi, x, stealthy=True, target=target)
                     for x in betas]),
                "honest share": honest_line,
                "edge of the band (100%)": np.ones(betas.size)},
            colors={"fakes always send the target": charts.LOCAL,
                    "stealthy fakes": charts.CENTRAL, "honest share": charts.TRUTH,
                    "edge of the band (100%)": charts.THEORY},
            dashed=("honest share", "edge of the band (100%)"),
            x_title="β, the fakes' share of the reports", y_title=f"estimated share of {name}",
            title="The estimate the fakes produce (expected)",
            subtitle=f"blind zone: β up to {fmt_pct(min(edge, 1), 0)} (estimate ≤ 100%)",
            x_format="%", marker=(beta, pi + shift, "now") if beta <= betas[-1] else None))
    with right:
        sure = _fakes_until(kind, d, eps, n, pi, 0.99)
        k_max = max(20, fakes, round(1.25 * (sure or 20 * n)))
        curve = _alarm_curve(kind, d, eps, n, pi, k_max)
        charts.show(charts.line_chart(
            curve["k"], {"fakes always send the target": curve["stuffing"],
                         "stealthy fakes": curve["stealthy"]},
            colors={"fakes always send the target": charts.LOCAL,
                    "stealthy fakes": charts.CENTRAL},
            x_title="k, fake users", y_title="chance the check raises the alarm",
            title=f"What the check sees, with {fmt_count(n)} honest students",
            subtitle="exact, from the binomial distribution of the target's count",
            y_domain=(0.0, 1.0), marker=(fakes, prob, "now") if fakes <= k_max else None))

    st.subheader("Why the check cannot see more")
    st.markdown(
        f"* **The band.** Whatever an honest class believes, the share of reports that "
        f"support {name} lies between b = {fmt_pct(b, 1)} (nobody holds it) and "
        f"a = {fmt_pct(a, 1)} (everybody does). A check can only flag reports outside that "
        "band. Fakes who keep the reports inside it make the class look like one that "
        "truly leans to the target: inside the blind zone no test on the reports, however "
        "many students answer, can tell the difference.\n"
        f"* **Each fake weighs (1 − b)/(a − b).** The estimate divides by a − b, the small "
        f"gap the randomizer leaves between the answers, so a report that always supports "
        f"the target counts {fmt_fixed(gain, 2)} times as much as an honest holder's. More "
        "privacy means a smaller gap and heavier fakes; with many options GRR's gap is "
        "tiny.\n"
        "* **Stealthy fakes are never seen.** A fake who runs the honest randomizer on the "
        "target sends exactly what a true holder would. It moves the estimate by only "
        "β(1 − π), but no check on the reports can ever catch it.\n"
        "* **What the classroom does.** One report per device and round, an optional limit "
        "per network address, and the warning on the dashboard when the reports leave the "
        "band. None of it stops a coalition of real devices: under local privacy the "
        "defence is to know who may answer, not to inspect the answers. The dashboard's "
        "rehearsal panel can add stuffers to a live question to show it.")
