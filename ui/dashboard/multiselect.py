"""The dashboard's part of a check-all-that-apply question (:mod:`classroom.kinds.multiselect`):
each option's estimated share with its exact 95% CI, what the round's ε buys per option
under each way of spending it (split, sample), and the rounds table."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import streamlit as st

import ldp_core
from ui import live_charts
from ui.dashboard.estimates import _round_row, _stat, rounds_table
from ui.dashboard.formulas import design_text
from ui.dashboard.shuffle import shuffle_caption
from ui.fmt import fmt_count, fmt_eps_value, fmt_fixed, fmt_interval, fmt_share
from ui.text import plain

__all__ = ["set_check", "set_control", "set_note", "set_panel", "set_rounds", "set_stuffers"]

_MODES = {"split": "each box its own bit at ε/d", "sample": "one box drawn, at the full ε",
          "fake": "one box drawn, fair coins for the rest"}


def set_panel(q, est, rounds, projector: bool, points, note: str | None) -> None:
    """A check-all-that-apply round: each option's share (the yes/no estimator of its bit)
    with its exact 95% CI, the reports per option and the rounds (``points`` unused;
    ``note``: the simulated class, or None)."""
    res, survey = est.result, q.design
    top = st.columns(4 if projector else 3)
    _stat(top[0], "Reports received", fmt_count(est.n), None if projector else "$n$")
    _stat(top[1], "Privacy loss ε", fmt_eps_value(est.epsilon), None,
          help="What a phone's whole report costs: two sets that differ in every box.")
    _stat(top[2], "Design", _MODES[survey.mode], None if projector else design_text(survey))
    with top[3] if projector else st.container():
        shuffle_caption(est, short=projector)
    if note:
        st.caption(note)
    st.markdown("**Estimated share who checked each option** (exact 95% CI); the shares "
                "need not sum to 1")
    shares = [o.mu_hat for o in res.options]
    live_charts.show(live_charts.histogram(
        q.options, {"Estimated share": shares}, [o.exact_low for o in res.options],
        [o.exact_high for o in res.options], every_label=projector), big=projector,
        max_height=live_charts.PROJECTOR_MAIN_HEIGHT)
    st.table([{"Option": plain(opt), "Reports answering it": fmt_count(o.n),
               "Of them “checked”": fmt_count(o.yes), "Share": fmt_share(o.mu_hat),
               "Exact 95% CI": fmt_interval(o.exact_low, o.exact_high, 3),
               "SD": fmt_fixed(o.sd_worst, 3)}
              for opt, o in zip(q.options, res.options, strict=True)])
    if not projector:
        st.markdown(_spending(survey, est.n))
    rounds_table(set_rounds(q, est, rounds))


def _spending(survey, n: int) -> str:
    """Each way of spending this ε, per option: n·Var at a share of ½ and the SD at n."""
    rows = []
    for mode in ("split", "sample"):
        unit = float(ldp_core.survey_variance_unit(mode, survey.budget, survey.d))
        sd = f"{math.sqrt(unit / n):.3f}" if n else "—"
        rows.append(f"| {_MODES[mode]} | {unit:.2f} | {sd} |")
    return ("**The same ε, spent two ways** (per option, share ½; Wang et al.): "
            "\n\n| way | n·Var | SD at this n |\n|---|---|---|\n" + "\n".join(rows))


def set_rounds(q, est, rounds) -> list[dict[str, Any]]:
    """Every round's share of each option, round 1 first."""
    designs = {r.number: r for r in rounds}
    rows: list[dict[str, Any]] = []
    for number, options in est.history:
        phones = SimpleNamespace(n=max((o.n for o in options), default=0))
        row = _round_row(number, designs.get(number), phones)
        for opt, o in zip(q.options, options, strict=True):
            row[plain(opt)] = fmt_share(o.mu_hat)
        rows.append(row)
    return rows


def set_control(question) -> object:
    shares = []
    columns = st.columns(min(4, len(question.options)))
    for j, opt in enumerate(question.options):
        shares.append(columns[j % len(columns)].slider(
            f"True share checking {plain(opt)}", 0.0, 1.0, 0.5, step=0.05,
            key=f"dash_sim_set_{question.id}_{j}"))
    return tuple(shares)


def set_note(question, tally: dict[str, Any], total: int) -> str:
    per = [sum(c for mask, c in enumerate(tally["counts"]) if mask >> j & 1)
           for j in range(len(question.options))]
    parts = ", ".join(f"{plain(opt)} {c}" for opt, c in zip(question.options, per, strict=True))
    return f"Simulated class of {fmt_count(total)} (students checking each option): {parts}."


def set_stuffers(question, column) -> None:
    options = list(range(len(question.options)))
    picked = column.selectbox("Target", options, format_func=lambda i: plain(question.options[i]),
                              key=f"dash_stuff_target_{question.id}")
    st.caption(f"Each stuffer checks only “{plain(question.options[int(picked)])}” and skips "
               "the randomizer.")


def set_check(question) -> tuple[str, str | None]:
    return ("**What it sees.** Each option's bit is checked as a yes/no question's: its "
            "count of “checked” reports against the class where everyone (or no one) "
            "checked it. A box checked far more often than any class would report is "
            "caught.", None)
