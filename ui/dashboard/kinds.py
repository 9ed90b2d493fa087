"""What the dashboard draws differently for each kind of question, registered by kind name.

The mathematics and the words the phone gets are the kind's own (:mod:`classroom.kinds`);
this module holds the dashboard's part: the panel of a revealed round and its rows in the
rounds table (drawn by :mod:`ui.dashboard.estimates` for yes/no and categorical questions,
:mod:`ui.dashboard.numeric` for numbers), the control that sets a rehearsal's simulated
class and the line that names it, the stuffers' target, what the check against ballot
stuffing sees, the plan editor's words, and whether the what-if panel applies. The live
panel (:mod:`ui.dashboard.live`) and the rest of the dashboard look a kind up here and
nowhere else. Adding a kind: its panels, and one :class:`KindView` in :data:`VIEWS`
(``tests/test_kinds.py`` checks every registered kind has one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import streamlit as st

import ldp_core
from classroom import kinds
from classroom.display import value_decimals
from classroom.domain import format_value
from ui.dashboard.estimates import (
    binary_panel,
    binary_rounds,
    categorical_panel,
    categorical_rounds,
)
from ui.dashboard.multiselect import (
    set_check,
    set_control,
    set_note,
    set_panel,
    set_rounds,
    set_stuffers,
)
from ui.dashboard.numeric import numeric_panel, numeric_rounds
from ui.fmt import fmt_count
from ui.text import plain

__all__ = ["VIEWS", "KindView", "view"]


@dataclass(frozen=True)
class KindView:
    """The dashboard's part of one kind of question."""

    #: The kind's name in the plan editor.
    title: str
    #: The panel of a revealed round with reports; draws it, rounds table included, from
    #: (question, estimate, the question's rounds, projector, the arrival trajectory, the
    #: simulated class's note or None).
    results: Callable[[Any, Any, Any, bool, Any, str | None], None]
    #: The rounds table's rows, one per round, round 1 first, from (question, estimate,
    #: the question's rounds); the table shows once there are two.
    rounds: Callable[[Any, Any, Any], list[dict]]
    #: The design the plan editor starts a question of this kind with.
    first_design: str
    #: What the plan editor's options box adds to "Options, one per line".
    options_hint: str
    #: The rehearsal's control for the simulated class: returns its true shares or mean.
    class_control: Callable[[Any], object]
    #: "Simulated class: …", from the tally of the true answers sent and their number.
    class_note: Callable[[Any, dict[str, Any], int], str]
    #: The stuffers' target (drawn in the given column) with its caption; returns nothing.
    stuffers: Callable[[Any, Any], None]
    #: What the check against ballot stuffing sees, and how often it errs (None: the
    #: common words), in markdown.
    check_help: Callable[[Any], tuple[str, str | None]]
    #: One line on a plan's question: its answers.
    plan_line: Callable[[Any], str]
    #: The design parameters the answers fix (a categorical design's d).
    fixed_params: Callable[[list[str]], dict[str, Any]] = lambda labels: {}
    #: What ldp_core recommends for the question at its ε when it is not chosen.
    recommendation: Callable[[Any], str] = lambda question: ""
    #: Whether the what-if panel (the same reports under another design) applies.
    what_if: bool = False


# -- yes/no ----------------------------------------------------------------------------------

def _binary_control(question) -> object:
    return st.slider(f"True share of {plain(question.options[1])}", 0.0, 1.0, 0.6,
                     step=0.05, key="dash_sim_share")


def _binary_note(question, tally: dict[str, Any], total: int) -> str:
    counts = tally["counts"]
    yes = counts[1] if len(counts) > 1 else 0
    return (f"Simulated class: {fmt_count(yes)} of {fmt_count(total)} truly "
            f"“{plain(question.options[1])}” ({yes / total:.0%}), the share the 95% CI "
            "is about.")


def _binary_check(question) -> tuple[str, str | None]:
    return ("**What it sees.** At every refresh the count of “yes” reports is compared with "
            "the honest class most likely to send it: everyone truly answering “yes” (or "
            "everyone “no”). Repeated “yes” votes beyond what even that class reports are "
            "caught; repeated votes that keep the count inside what some class could report "
            "are not.", None)


# -- categorical -----------------------------------------------------------------------------

def _categorical_control(question) -> object:
    k = len(question.options)
    st.caption("Options are drawn with equal shares.")
    return tuple(1.0 / k for _ in range(k))


def _categorical_note(question, tally: dict[str, Any], total: int) -> str:
    parts = ", ".join(f"{plain(opt)} {c}" for opt, c in
                      zip(question.options, tally["counts"], strict=True))
    return f"Simulated class (true answers): {parts}."


def _categorical_check(question) -> tuple[str, str | None]:
    if isinstance(question.design, ldp_core.GRR):
        return ("**What it sees.** At every refresh each option's count is compared with the "
                "class where everyone (or no one) chose that option. An option named far "
                "more often than even that class would name it is caught; votes that keep "
                "every count inside what some class could report are not.", None)
    return ("**What it sees.** Under unary encoding the number of 1s in a report has the "
            "same law for every true answer: at every refresh the reports' counts of 1s are "
            "compared with it. Reports like “11111” are caught; forged reports with a "
            "typical number of 1s are not.",
            "**How often it errs.** An honest class raises it about 3 times in 10,000 "
            "questions at most (its chi-squared approximation is a little generous in "
            "small classes; measured).")


def _option_target(question, column) -> None:
    design = question.design
    options = list(range(len(question.options)))
    picked = column.selectbox("Target", options,
                              index=kinds.kind(question.kind).default_target,
                              format_func=lambda i: plain(question.options[i]),
                              key=f"dash_stuff_target_{question.id}")
    gain = ldp_core.fake_report_gain(design, int(picked))
    st.caption(f"Each stuffed report moves the estimated count of "
               f"“{plain(question.options[int(picked)])}” by (1 − b)/(a − b) = "
               f"{gain:.3g}, where an honest student who holds it moves it by 1. The "
               "dashboard's check sees it only once the reports leave what the design "
               "can produce for any class (the Manipulation lab shows where).")


def _categorical_recommendation(question) -> str:
    best = ldp_core.recommend_oracle(len(question.options), question.epsilon)
    if (best == "grr") != (question.design.kind == "grr"):  # SUE and OUE are unary encodings
        return f" ldp_core recommends {best.upper()} for these options at this ε."
    return ""


# -- numeric ---------------------------------------------------------------------------------

def _numeric_control(question) -> object:
    lo, hi = question.design.range.lo, question.design.range.hi
    unit = f" ({plain(question.unit)})" if question.unit else ""
    value = st.slider(f"True mean of the class{unit}", lo, hi, lo + 0.6 * (hi - lo),
                      key=f"dash_sim_mean_{question.id}")
    st.caption("Values are spread evenly around this mean, within the range.")
    return value


def _numeric_note(question, tally: dict[str, Any], total: int) -> str:
    r = question.design.range  # the decimals of every value of the question
    mean = format_value(tally["value_sum"] / total, question.unit, value_decimals(r.lo, r.hi))
    return (f"Simulated class: {fmt_count(total)} students with true mean {mean}, the "
            "mean the 95% CI is about.")


def _numeric_stuffers(question, column) -> None:
    design = question.design
    top = ldp_core.fake_report(design.mechanism)
    dec = value_decimals(design.range.lo, design.range.hi)
    st.caption(f"Each stuffer sends the largest report the server accepts, "
               f"{format_value(design.value_of(top), question.unit, dec)}, and pulls the "
               "mean up by far more than any student could.")


def _numeric_check(question) -> tuple[str, str | None]:
    return (
        "**What it sees.** At every refresh the reports are compared with the honest "
        "class most likely to send them: everyone at the top of the range (or the "
        "bottom). Is the mean beyond the range? Is one report further out than a phone "
        "sends? Are there more reports near an end than that class sends? Many copies of "
        "the largest report, or one report far out, are caught, beside a class at the "
        "top or in the middle. With Duchi et al.'s mechanism each report is one bit: "
        "stuffing shows only when it pushes the share of the larger report beyond what a "
        "class at the top sends, so beside a mid-range class it can hide.", None)


def _numeric_line(question) -> str:
    r = question.design.range
    return f"a number, {format_value(r.lo, question.unit)} to {format_value(r.hi, question.unit)}"


def _numeric_recommendation(question) -> str:
    best = ldp_core.recommend_numeric(question.epsilon)
    if best != question.design.kind:
        return (f" ldp_core recommends the {ldp_core.numeric_mechanism(best, 1.0).label} "
                "at this ε (the smallest worst-case variance).")
    return ""


#: Every kind's view, by the kind's stored name (the order of :data:`classroom.kinds.KINDS`).
VIEWS: Mapping[str, KindView] = MappingProxyType({
    "binary": KindView(
        title="Yes/no", results=binary_panel, rounds=binary_rounds, first_design="die",
        options_hint=" (answer 0, then answer 1: the share estimated)",
        class_control=_binary_control, class_note=_binary_note, stuffers=_option_target,
        check_help=_binary_check,
        plan_line=lambda q: f"{q.options[0]} (0) or {q.options[1]} (1)", what_if=True),
    "categorical": KindView(
        title="Categorical", results=categorical_panel, rounds=categorical_rounds,
        first_design=kinds.kind("categorical").designs[0],
        options_hint="", class_control=_categorical_control, class_note=_categorical_note,
        stuffers=_option_target, check_help=_categorical_check,
        plan_line=lambda q: f"{len(q.options)} options",
        fixed_params=lambda labels: {"d": len(labels)},
        recommendation=_categorical_recommendation),
    "numeric": KindView(
        title="A number", results=numeric_panel, rounds=numeric_rounds,
        first_design=kinds.kind("numeric").designs[0], options_hint="",
        class_control=_numeric_control, class_note=_numeric_note, stuffers=_numeric_stuffers,
        check_help=_numeric_check, plan_line=_numeric_line,
        recommendation=_numeric_recommendation),
    "multiselect": KindView(
        title="Check all that apply", results=set_panel, rounds=set_rounds,
        first_design="survey", options_hint=" (each one a box to check)",
        class_control=set_control, class_note=set_note, stuffers=set_stuffers,
        check_help=set_check, plan_line=lambda q: f"{len(q.options)} boxes to check",
        fixed_params=lambda labels: {"d": len(labels)}),
})


def view(kind: str) -> KindView:
    """The dashboard's part of the kind called ``kind``."""
    return VIEWS[kind]
