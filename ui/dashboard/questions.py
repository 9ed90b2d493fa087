"""Adding a question: the class exercise, a yes/no design, a histogram question or a
number in a range."""

from __future__ import annotations

import streamlit as st

import ldp_core
from classroom import kinds
from classroom.display import format_value, value_decimals
from classroom.domain import EPSILON_RANGE, MAX_NUMERIC_BOUND, MIN_NUMERIC_SPAN
from ldp_core.planning import MAX_EXACT_N
from ui.dashboard.actions import cb_add_question, cb_start_exercise
from ui.dashboard.formulas import (
    channel_text,
    design_text,
    design_with_eps,
    eps_formula,
    mu_formula,
    sd_formula,
)
from ui.dashboard.selection import EXERCISE_OPTIONS, EXERCISE_TEXT, exercise_design
from ui.dashboard.what_if import design_picker
from ui.fmt import fmt_eps, fmt_eps_value

_PRESETS = {
    "exercise": "Class exercise: die 1–4",
    "two_coin": "Two coins",
    "warner": "Warner's spinner",
    "custom": "Custom ε or γ",
    "memo": "Asked every week: a memo (RAPPOR)",
    "categorical": "Categorical (k options)",
    "numeric": "A number (mean of a range)",
}


def _binary_spec(preset: str) -> tuple[dict | None, str | None]:
    """(design params, error) for the binary preset chosen in the form."""
    try:
        if preset == "exercise":
            design = ldp_core.binary_design_from_params(exercise_design())
        elif preset == "two_coin":
            design = ldp_core.TwoCoinRR()
        elif preset == "memo":
            return _memo_spec()
        elif preset == "warner":
            p = st.slider("p: chance the spinner points at the statement (else its negation)",
                          0.05, 0.95, 0.7, step=0.05, key="dash_q_warner_p")
            design = ldp_core.WarnerRR(p)
        else:
            design = design_picker("dash_q", ldp_core.GammaRR(0.25))
    except ValueError as exc:
        return None, str(exc)
    st.caption(f"Design: {design_text(design)}; " + channel_text(design) + "; "
               + mu_formula(design, 0, 0, None) + "; " + sd_formula(design, 0, None) + "; "
               + eps_formula(design, design.epsilon))
    return design.params(), None


def _memo_spec() -> tuple[dict | None, str | None]:
    """A yes/no question of a series: the phone keeps a randomized answer per series and
    true answer (f) and sends a fresh randomization of it (p, q) every time."""
    series = st.text_input("Series name (the same name in later lectures)", "weekly",
                           max_chars=40, key="dash_q_memo_series",
                           help="Lower-case letters, digits and hyphens, e.g. weekly-sleep.")
    lo, hi = EPSILON_RANGE
    total = st.slider("ε∞: what the whole series may cost", 0.1, hi, 2.0, step=0.05,
                      key="dash_q_memo_total")
    one = st.slider("ε₁: what one report costs", lo, float(total), min(1.0, float(total)),
                    step=0.01, key="dash_q_memo_one")
    try:
        memo = ldp_core.MemoRR.from_epsilons(float(total), float(one))
        design = kinds.kind("binary").build({**memo.params(), "series": series.strip()})
    except ValueError as exc:
        return None, str(exc)
    st.caption(f"Design: {design_text(design)}; " + channel_text(design) + "; "
               + mu_formula(design, 0, 0, None) + "; " + sd_formula(design, 0, None)
               + f"; one report ε₁ = {fmt_eps_value(design.epsilon)}, the whole series "
               f"ε∞ = {fmt_eps_value(total)} (RAPPOR, Erlingsson et al. 2014), against "
               "k × ε₁ for k weeks without the memo.")
    return design.params(), None


#: The frequency oracles the form offers (Wang, Blocki, Li & Jha 2017).
_ORACLES = {"grr": "GRR (direct encoding)", "sue": "SUE (symmetric unary encoding)",
            "oue": "OUE (optimized unary encoding)"}


def _categorical_spec() -> tuple[dict | None, tuple[str, ...], str | None]:
    raw = st.text_area("Options, one per line (2 to 20)", key="dash_q_cat_options",
                       value="Vanilla\nChocolate\nStrawberry\nPistachio")
    labels = tuple(line.strip() for line in raw.splitlines() if line.strip())
    eps = st.slider("ε: privacy loss per student", 0.1, EPSILON_RANGE[1], 1.0, step=0.1,
                    key="dash_q_cat_eps")
    k = len(labels)
    if k < 2:
        return None, labels, "Give at least two options."
    try:
        rec = ldp_core.recommend_oracle(k, eps)
    except ValueError as exc:
        return None, labels, str(exc)
    oracle = st.radio("Frequency oracle", list(_ORACLES),
                      format_func=lambda o: _ORACLES[o] + (" — recommended" if o == rec else ""),
                      index=list(_ORACLES).index(rec), key="dash_q_cat_oracle", horizontal=True)
    st.caption(f"ldp_core recommends {rec.upper()} for k = {k}, {fmt_eps(eps)}: GRR has the "
               "smaller variance when k < 3e^ε + 2 (Wang et al. 2017).")
    try:
        design = ldp_core.oracle(oracle, k, eps)
    except ValueError as exc:
        return None, labels, str(exc)
    st.caption(f"Design: {design_with_eps(design, design.epsilon)}.")
    n = st.number_input("Expected class size n", 2, 100_000, 30, step=10, key="dash_q_cat_n",
                        help="How many students you expect to answer: the smallest share "
                        "the class can find depends on it.")
    st.markdown(class_size_note(oracle, rec, k, eps, int(n)))
    st.caption(CLASS_SIZE_FORMULA)
    return design.params(), labels, None


def class_size_note(chosen: str, recommended: str, k: int, eps: float, n: int) -> str:
    """"Is my class big enough?": the smallest share of an option this class finds (80%
    power, a 5% chance of any false find over the k options), for the chosen oracle and
    the recommended one, and the class a fifth of the students would need."""
    def s_min(name: str) -> float:
        return ldp_core.smallest_detectable_share(ldp_core.oracle(name, k, eps), n)

    def found(share: float) -> str:
        return (f"an option only if **at least {share:.0%}** of the class hold it"
                if share <= 1 else "no option, not even one everybody holds")

    verdict = (f"**Is my class big enough?** With n = {n:,} and {chosen.upper()} at "
               f"{fmt_eps(eps)}, the class reliably finds {found(s_min(chosen))}.")
    if recommended != chosen:
        verdict += f" {recommended.upper()}, recommended, finds {found(s_min(recommended))}."
    needed = ldp_core.needed_class_size(ldp_core.oracle(recommended, k, eps), 0.2)
    verdict += (f" To find an option held by 20% of the class, "
                f"{recommended.upper()} needs about {needed:,} students.")
    if n <= MAX_EXACT_N:
        false = ldp_core.false_present_rate(ldp_core.oracle(chosen, k, eps), n)
        verdict += (f" The chance that this class finds an option nobody holds is "
                    f"{false:.1%}, computed exactly (the 5% aimed at is a normal "
                    "approximation).")
    return verdict


#: How the form's class-size verdict is computed, shown under it.
CLASS_SIZE_FORMULA = (
    "s_min = (z(1 − α/k) + z(0.8)) √(V*/n): an option held by s_min is found 4 times in 5, "
    "with a 5% chance (α) of any false find over the k options; V* is the oracle's variance "
    "per report (Wang, Blocki, Li & Jha 2017). A normal approximation: a few points less "
    "in small classes.")


#: Short names of the numeric mechanisms, for a line that lists them all.
_SHORT = {"duchi": "Duchi", "piecewise": "Piecewise", "hybrid": "Hybrid", "laplace": "Laplace"}


def _numeric_spec() -> tuple[dict | None, tuple[str, ...], str | None]:
    """(design params, (unit,), error) for a numeric question."""
    unit_col, lo_col, hi_col = st.columns([2, 1, 1])
    unit = unit_col.text_input("Unit (optional)", key="dash_q_num_unit", value="hours",
                               max_chars=24)
    lo = lo_col.number_input("Smallest answer", key="dash_q_num_lo", value=0.0,
                             min_value=-MAX_NUMERIC_BOUND, max_value=MAX_NUMERIC_BOUND)
    hi = hi_col.number_input("Largest answer", key="dash_q_num_hi", value=12.0,
                             min_value=-MAX_NUMERIC_BOUND, max_value=MAX_NUMERIC_BOUND)
    eps = st.slider("ε: privacy loss per student", 0.1, EPSILON_RANGE[1], 1.1, step=0.1,
                    key="dash_q_num_eps")
    if not lo < hi:
        return None, (unit,), "The smallest answer must be below the largest."
    if hi - lo < MIN_NUMERIC_SPAN:
        return None, (unit,), (f"The largest answer must exceed the smallest by at least "
                               f"{MIN_NUMERIC_SPAN:g} (numbers are shown with at most 6 "
                               "decimals).")
    rec = ldp_core.recommend_numeric(eps)
    names = ldp_core.NUMERIC_NAMES
    # Keyed by the recommendation: moving ε across the crossover preselects the new one.
    mech = st.radio("Mechanism", names, index=names.index(rec), key=f"dash_q_num_mech_{rec}",
                    horizontal=True, format_func=lambda m: ldp_core.numeric_mechanism(
                        m, 1.0).label + (" — recommended" if m == rec else ""))
    try:
        design = ldp_core.numeric_design_from_params(
            {"design": mech, "epsilon": eps, "lo": lo, "hi": hi})
    except ValueError as exc:
        return None, (unit,), str(exc)
    n = 100
    central = ldp_core.central_numeric_sd(n, eps, design.range)
    sds = {m: ldp_core.NumericDesign(ldp_core.numeric_mechanism(m, eps), design.range)
           .worst_sd() for m in names}
    dec = value_decimals(lo, hi)  # one number of decimals for every value of the form
    worst = ", ".join(f"{_SHORT[m]} {format_value(sd, unit, dec)}" for m, sd in sds.items())
    st.caption(
        f"ldp_core recommends {ldp_core.numeric_mechanism(rec, 1.0).label} at {fmt_eps(eps)}: "
        f"the smallest worst-case variance. Duchi et al.'s beats the Piecewise Mechanism "
        f"below ε ≈ {ldp_core.numeric_crossover():.2f} (Wang et al. 2019); their Hybrid "
        f"Mechanism mixes the two and beats both at every ε above ε* ≈ "
        f"{ldp_core.HYBRID_EPSILON_STAR:.2f} (below it, it is Duchi et al.'s); the Laplace "
        f"mechanism is never the best. SD of one report in the worst case: {worst}. "
        f"With n = {n}, the SD of the mean is at most "
        f"{format_value(design.worst_sd(n), unit, dec)}; a trusted curator's would be "
        f"{format_value(central, unit, dec)}. The phone accepts answers in the range only.")
    return design.params(), (unit.strip(),), None


def add_question_panel(poll, *, expanded: bool) -> None:
    with st.expander("Add a question", icon=":material/add_circle:", expanded=expanded,
                     key="dash_open_add_question", on_change="rerun"):
        st.button("Add the class exercise and open voting", icon=":material/play_arrow:",
                  type="primary",
                  key="dash_add_exercise", on_click=cb_start_exercise, args=(poll.id,),
                  help=f"“{EXERCISE_TEXT}”, options Chocolate (0) and Vanilla (1), "
                  "a die 1–4 on each phone.")
        st.markdown("**Or build one:**")
        preset = st.radio("Design", list(_PRESETS), format_func=_PRESETS.__getitem__,
                          key="dash_q_preset", horizontal=True)
        if preset == "categorical":
            text = st.text_input("Question", key="dash_q_cat_text",
                                 value="Which flavour do you like best?")
            params, options, error = _categorical_spec()
            kind = "categorical"
        elif preset == "numeric":
            text = st.text_input("Question", key="dash_q_num_text",
                                 value="How many hours did you sleep last night?")
            params, options, error = _numeric_spec()
            kind = "numeric"
        else:
            text = st.text_input("Question", key="dash_q_text", value=EXERCISE_TEXT)
            zero, one = st.columns(2)
            no = zero.text_input("Option for answer 0", key="dash_q_opt0",
                                 value=EXERCISE_OPTIONS[0])
            yes = one.text_input("Option for answer 1 (the share estimated)",
                                 key="dash_q_opt1", value=EXERCISE_OPTIONS[1])
            options = (no, yes)
            params, error = _binary_spec(preset)
            kind = "binary"
        if not kinds.kind(kind).physical:
            mode = "device"
            st.caption("Numbers are randomized on the phone (no by-hand version).")
        else:
            mode = st.radio("Randomization", ["device", "physical"], key="dash_q_mode",
                            horizontal=True, format_func={
                                "device": "On the phone (device randomness)",
                                "physical": "Physical: students roll / toss themselves and "
                                            "tap what they report"}.__getitem__)
        st.checkbox("Open voting right away", key="dash_q_open")
        if error:
            st.error(error)
        spec = {"text": text, "options": options, "design_params": params, "kind": kind,
                "mode": mode}
        st.button("Add question", key="dash_add_question", disabled=params is None,
                  on_click=cb_add_question, args=(poll.id, spec, "dash_q_open"))
