"""The poll's privacy budget: what its questions can cost one student, against the total
ε the instructor allows (sequential composition: the ε of each answer adds up)."""

from __future__ import annotations

import streamlit as st

from classroom.domain import ClassroomError
from ui import session
from ui.dashboard.actions import cb_set_budget
from ui.fmt import fmt_eps_allowed, fmt_eps_value
from ui.text import plain

__all__ = ["budget_line", "budget_panel"]


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
