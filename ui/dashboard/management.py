"""Rehearsal with simulated students, and deleting questions and polls."""

from __future__ import annotations

import streamlit as st

from ui.dashboard.actions import (
    cb_clear_simulated,
    cb_delete_poll,
    cb_delete_question,
    cb_simulate,
    cb_stuff,
)
from ui.dashboard.kinds import view


def rehearsal_panel(question) -> None:
    with st.expander("Rehearse with simulated students", icon=":material/theater_comedy:",
                     key="dash_open_rehearsal", on_change="rerun"):
        st.caption("Simulated students answer through the same design and the same checks as "
                   "real ones, arriving over a few seconds. Their reports are flagged as "
                   "simulated, left out of exports unless you ask, and removed by "
                   "Clear rehearsal. Voting must be open.")
        st.number_input("Simulated students", 1, 5000, 40, key="dash_sim_n")
        shares = view(question.kind).class_control(question)
        left, right = st.columns(2)
        left.button("Add simulated students", key="dash_sim_add", on_click=cb_simulate,
                    args=(question.id, shares), disabled=not question.is_open)
        right.button("Clear rehearsal", key="dash_sim_clear",
                     on_click=cb_clear_simulated, args=(question.id,))
        st.checkbox("Include simulated reports in Export CSV", key="dash_export_sim")
        _stuffing_controls(question)


def _stuffing_controls(question) -> None:
    """"Add k stuffers": fake users who skip the randomizer and always send the target."""
    st.markdown("**Ballot stuffing**: fake users who skip the randomizer and always send "
                "the report that pushes one answer up.")
    count, target = st.columns(2)
    count.number_input("Stuffers", 1, 5000, 10, key="dash_stuff_n")
    view(question.kind).stuffers(question, target)
    st.button("Add stuffers", key="dash_stuff_add", on_click=cb_stuff, args=(question.id,),
              disabled=not question.is_open)


def manage_panel(poll, question) -> None:
    with st.expander("Delete", icon=":material/delete:", key="dash_open_delete",
                     on_change="rerun"):
        if question is not None:
            st.checkbox(f"Yes, delete question Q{question.position} and all its reports",
                        key=f"dash_confirm_delete_q_{question.id}")
            st.button("Delete this question", key="dash_delete_question",
                      on_click=cb_delete_question, args=(question.id,))
        st.checkbox(f"Yes, delete poll {poll.join_code} with all its questions, rounds and "
                    "reports (cannot be undone)", key=f"dash_confirm_delete_{poll.id}")
        st.button(f"Delete poll {poll.join_code}", key="dash_delete_poll", type="primary",
                  on_click=cb_delete_poll, args=(poll.id, poll.join_code))
