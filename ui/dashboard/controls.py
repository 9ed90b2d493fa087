"""The controls of a class: start the exercise, pick a poll and a question, open and
close voting, reveal, new round, export."""

from __future__ import annotations

import functools

import streamlit as st

from ui.dashboard.actions import (
    cb_close,
    cb_create_poll,
    cb_new_round,
    cb_next,
    cb_open,
    cb_pick_poll,
    cb_pick_question,
    cb_reveal,
    cb_start_exercise,
)


def start_panel() -> None:
    st.subheader("Run the class exercise")
    st.write("One click creates a poll with the question **“Vanilla (1) or chocolate (0)?”** "
             "and opens voting. Each phone rolls a die 1–4: on 1–3 it reports the true answer, "
             "on 4 the opposite. The class then estimates the share who prefer vanilla with "
             "μ̂ = 2V/n − ½, whose SD is √(3/(4n)), at privacy loss ε = ln 3 ≈ 1.10.")
    st.button("Start the class exercise", icon=":material/play_arrow:", type="primary",
              key="dash_start_exercise",
              on_click=cb_start_exercise, args=(None,))
    with st.expander("Or create an empty poll and add your own questions"):
        _new_poll_form()


def _new_poll_form() -> None:
    st.text_input("Title (optional, only you see it)", key="dash_new_poll_title",
                  max_chars=100, placeholder="CS208, April 7")
    st.checkbox("Rehearsal poll: lets you add simulated students to try the dashboard",
                key="dash_new_poll_rehearsal")
    st.button("Create poll", key="dash_create_poll", on_click=cb_create_poll)


def _poll_label(poll) -> str:
    parts = [poll.join_code]
    if poll.title:
        parts.append(poll.title)
    if poll.rehearsal:
        parts.append("rehearsal")
    return " · ".join(parts) + f" · {poll.created_at:%Y-%m-%d %H:%M}"


def poll_bar(polls, poll) -> None:
    labels = {p.id: _poll_label(p) for p in polls}
    st.session_state["dash_poll_select"] = poll.id
    pick, new = st.columns([4, 1], vertical_alignment="bottom")
    pick.selectbox("Poll", list(labels), format_func=labels.__getitem__,
                   key="dash_poll_select", on_change=cb_pick_poll)
    with new.popover("New poll", icon=":material/add:", width="stretch"):
        _new_poll_form()


def _question_label(q) -> str:
    state = {"open": "voting open", "closed": "closed", "draft": "draft"}.get(q.state, q.state)
    text = q.text if len(q.text) <= 70 else q.text[:69] + "…"
    rnd = f", round {q.round_number}" if q.round_number > 1 else ""
    return f"Q{q.position}: {text} ({state}{rnd})"


def question_bar(questions, question) -> None:
    labels = {q.id: _question_label(q) for q in questions}
    st.session_state["dash_question_select"] = question.id
    st.selectbox("Question", list(labels), format_func=labels.__getitem__,
                 key="dash_question_select", on_change=cb_pick_question)


def voting_button(question, *, key: str) -> None:
    if question.is_open:
        st.button("Close voting", icon=":material/stop_circle:", key=key, on_click=cb_close,
                  args=(question.id,), width="stretch")
    else:
        st.button("Open voting" if question.state == "draft" else "Reopen voting",
                  icon=":material/play_arrow:", key=key, type="primary", on_click=cb_open,
                  args=(question.id,), width="stretch")


def reveal_button(question, *, key: str) -> None:
    if question.revealed:
        st.button("Hide results", icon=":material/visibility_off:", key=key,
                  on_click=cb_reveal, args=(question.id, False), width="stretch")
    else:
        st.button("Reveal results", icon=":material/visibility:", key=key,
                  on_click=cb_reveal, args=(question.id, True), width="stretch")


def next_button(question, questions, *, key: str) -> None:
    """Next question: close this one and open the next of the poll (the phones follow);
    disabled on the poll's last question."""
    after = [q for q in questions if (q.position, q.id) > (question.position, question.id)]
    st.button("Next question", icon=":material/skip_next:", key=key, on_click=cb_next,
              args=(question.id,), width="stretch", disabled=not after,
              help=(f"Close this question and open Q{after[0].position}; the phones follow."
                    if after else "This is the poll's last question."))


def controls_panel(svc, poll, question, questions=()) -> None:
    vote, reveal, nxt, again, export = st.columns(5)
    with vote:
        voting_button(question, key="dash_voting")
    with reveal:
        reveal_button(question, key="dash_reveal")
    with nxt:
        next_button(question, questions, key="dash_next")
    with again:
        st.button("New round", icon=":material/replay:", key="dash_new_round",
                  on_click=cb_new_round,
                  args=(question.id, None), width="stretch",
                  help="Ask the same question again with the same design: a fresh round, "
                  "results hidden, voting not yet open. Earlier rounds stay in the history.")
    with export:
        # Built when clicked (Streamlit runs the callable then, on a thread of its own), not
        # on every rerun: at 100,000 reports the CSV is 9 MB and takes about 2 s to build.
        build = functools.partial(svc.results.export_csv, question.id, include_simulated=bool(
            st.session_state.get("dash_export_sim")))
        st.download_button("Export CSV", icon=":material/download:", data=build,
                           key="dash_export",
                           file_name=f"ldp-{poll.join_code}-q{question.position}.csv",
                           mime="text/csv", on_click="ignore", width="stretch",
                           help="Every randomized report of this question (all rounds): "
                           "round, answer, label, design, time. No device or "
                           "submission ids.")
