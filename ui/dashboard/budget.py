"""The poll's privacy budget: what its questions can cost one student, against the total
ε the instructor allows (sequential composition: the ε of each answer adds up)."""

from __future__ import annotations

import streamlit as st

from classroom.domain import ClassroomError
from classroom.kinds.binary import series_of
from ui import session
from ui.dashboard.actions import cb_set_budget
from ui.fmt import fmt_eps_allowed, fmt_eps_value
from ui.text import plain

__all__ = ["budget_line", "budget_panel", "series_note"]


def series_note(questions) -> str | None:
    """What each series among ``questions`` costs: ε∞ once for the whole series, ε₁ a
    report, against k·ε₁ without the memo; None when no question is of a series."""
    series: dict[tuple[str, float], list] = {}
    for q in questions:
        memo = series_of(q.design)
        if memo is not None:
            series.setdefault((memo.series, memo.f), []).append((q, memo))
    if not series:
        return None
    parts = []
    for (name, _), found in series.items():
        memo = found[0][1]
        k = sum(max(q.round_number, 1) for q, _ in found)
        parts.append(
            f"series “{name}”: ε∞ = {fmt_eps_value(memo.epsilon_series)} for the whole series, "
            f"ε₁ = {fmt_eps_value(memo.epsilon)} a report; its {k} round"
            f"{'s' if k != 1 else ''} without the memo would cost "
            f"{k} × ε₁ = {fmt_eps_value(k * memo.epsilon)}")
    return ("A series is counted once while a student's answer holds (the phone keeps a "
            "randomized answer per series and sends a fresh randomization of it): "
            + "; ".join(parts) + ". A changed answer, a new phone or a cleared browser "
            "starts a new memo and costs again; the budget cannot see that.")


def budget_line(status) -> str:
    """One line: spent by the rounds so far, of the budget, and what is left."""
    spent = fmt_eps_value(status.committed)
    if status.budget is None:
        return (f"A student who answered every round so far has spent ε = {spent} in this "
                "poll. No budget is set.")
    return (f"Privacy budget: ε = {spent} of {fmt_eps_value(status.budget)} committed by the "
            f"rounds so far; {fmt_eps_allowed(status.left)} left. A round that would pass the "
            "budget does not open.")


def budget_panel(poll, questions) -> None:
    """Set or remove the budget, and list what each round costs."""
    try:
        status = session.service().polls.budget(poll.id)
    except ClassroomError as exc:
        st.warning(f"The budget cannot be read right now: {exc}")
        return
    with st.expander("Privacy budget", icon=":material/account_balance_wallet:",
                     key="dash_open_budget", on_change="rerun"):
        st.caption("Each answer spends its question's ε, and the ε of a student's answers "
                   "adds up (sequential composition). A budget caps the total a student can "
                   "spend in this poll: a question whose round would pass it does not open. "
                   "The count needs no link between a phone's answers: it is the ε of every "
                   "round that was answered or is open.")
        st.markdown(budget_line(status))
        note = series_note(questions)
        if note:
            st.caption(note)
        by_id = {q.id: q for q in questions}
        rows = []
        for qid, number, eps in status.rounds:
            q = by_id.get(qid)
            name = f"Q{q.position}: {plain(q.text)[:50]}" if q else "(deleted question)"
            rows.append({"Question": name, "Round": str(number), "ε": fmt_eps_value(eps)})
        if rows:
            st.table(rows)
        limit = st.checkbox("Limit the total ε per student", value=status.budget is not None,
                            key=f"dash_budget_on_{poll.id}")
        if limit:
            default = status.budget if status.budget is not None else \
                max(3.0, round(status.committed + 1.1, 1))
            st.number_input("Total ε a student may spend in this poll", min_value=0.1,
                            max_value=100.0, value=float(default), step=0.1, format="%.2f",
                            key=f"dash_budget_value_{poll.id}")
        st.button("Save budget", key="dash_budget_save", on_click=cb_set_budget,
                  args=(poll.id,))
