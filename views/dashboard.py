"""The instructor dashboard: run the class exercise live and project it.

This view composes the panels of :mod:`ui.dashboard`, each with one job:
selection (which poll and question), controls, the join panel, the live panel
and its estimates, what-if, adding questions, lesson plans, rehearsal, the privacy
budget and deleting, and the style. Every number comes from ``PollService`` or
``ldp_core``. The module only defines functions: ``app.py`` registers
:func:`render` for instructors, and :func:`render` checks access again itself, so
running this file directly shows nothing and a non-instructor sees only a login hint.

Two modes:

* at the desk: pick or create a poll and questions, control voting, explore
  what-if designs, export;
* projection (``?projector=1``): no navigation and no sidebar, large
  high-contrast type, the join code, the QR code and the live panel, and a
  compact row of controls.

Which poll is shown lives in this session (``_dash_pid``) and in the URL (``?pid=..``), so
a reload, or projection mode, keeps it. The question follows the lecture in every window
of the poll, within a second of a change in any of them (:mod:`ui.dashboard.selection`).
"""

from __future__ import annotations

import streamlit as st

from classroom.domain import ClassroomError, design_problem
from ui import session
from ui.dashboard.actions import cb_projector, show_flash, take_notices
from ui.dashboard.budget import budget_panel
from ui.dashboard.controls import (
    controls_panel,
    next_button,
    poll_bar,
    question_bar,
    reveal_button,
    start_panel,
    voting_button,
)
from ui.dashboard.join import join_panel
from ui.dashboard.kinds import view
from ui.dashboard.live import live_panel
from ui.dashboard.management import manage_panel, rehearsal_panel
from ui.dashboard.pacing import pacing_keys
from ui.dashboard.plans import lecture_panel, plans_panel
from ui.dashboard.questions import add_question_panel
from ui.dashboard.selection import (
    choice_of_window,
    follow_lecture,
    resolve,
    shown_of,
    sync_url,
)
from ui.dashboard.style import css
from ui.dashboard.what_if import what_if_panel
from ui.text import html_text

__all__ = ["render"]


def render() -> None:
    """The dashboard page; for anyone but the instructor, only a login hint."""
    if not session.is_instructor():
        st.title("Dashboard")
        st.info("The dashboard is for the instructor. Log in on the **I'm teaching** page "
                "([open it](/teach)) with the instructor key.")
        return
    projector = "projector" in st.query_params
    css(projector)
    try:
        svc = session.service()
        polls = svc.polls.list_polls()
    except ClassroomError as exc:
        st.error(f"The dashboard cannot reach its database: {exc}")
        return
    if projector:
        _render_projector(svc, polls)
    else:
        _render_desk(svc, polls)


def _render_desk(svc, polls) -> None:
    title, to_projector = st.columns([4, 1], vertical_alignment="bottom")
    title.title("Dashboard")
    show_flash()
    try:
        poll, questions, question = resolve(svc, polls)
    except ClassroomError as exc:
        st.error(str(exc))
        return
    if poll is None:
        exercise, lecture = st.columns(2, gap="large")
        with exercise:
            start_panel()
        with lecture:
            lecture_panel()
        plans_panel()
        return
    sync_url(poll.id, choice_of_window())
    follow_lecture(poll.id)
    shown = shown_of(question, questions)
    with to_projector:
        st.button("Projection mode", icon=":material/present_to_all:",
                  key="dash_projector_on", on_click=cb_projector,
                  args=(True,), help="Large type and high contrast for the projector, "
                  "no navigation. There the keyboard (or a presentation clicker's "
                  "PageDown) runs the class: press ? for the keys. Leave it with Esc "
                  "or the button at the bottom; F5 (a clicker's start button) comes back.",
                  width="stretch")
        pacing_keys(shown, svc.running.now(), projector=False)
    poll_bar(polls, poll)
    if question is None or shown is None:
        st.info(f"Poll **{poll.join_code}** has no questions yet. Add one: the class exercise "
                "is one click.")
        add_question_panel(poll, expanded=True)
        plans_panel()
        budget_panel(poll, questions)
        join_panel(poll, big=False)
        manage_panel(poll, None)
        return
    question_bar(questions, question)
    if (problem := design_problem(question.design_json)) is not None:
        st.error(f"This question cannot be run: {problem}. The phones wait as if no question "
                 "were open; remove it below and add it again within the limits.",
                 icon=":material/error:")
        add_question_panel(poll, expanded=False)
        manage_panel(poll, question)
        return
    controls_panel(svc, poll, shown, questions)
    join_col, live_col = st.columns([1, 2.2], gap="large")
    with join_col:
        join_panel(poll, big=False)
    with live_col:
        live_panel(question.id, False)
    if view(question.kind).what_if:
        what_if_panel(svc, question)
    rehearsal_panel(question)
    add_question_panel(poll, expanded=False)
    plans_panel()
    budget_panel(poll, questions)
    manage_panel(poll, question)


def _render_projector(svc, polls) -> None:
    notices = take_notices()
    try:
        poll, questions, question = resolve(svc, polls)
    except ClassroomError as exc:
        notices.append(str(exc))
        poll, questions, question = None, [], None
    shown = shown_of(question, questions)
    pacing_keys(shown, svc.running.now())
    if poll is None:
        for text in notices:
            st.error(text)
        st.info("No poll to show yet. Leave projection mode to create one.")
        st.button("Leave projection mode", key="dash_projector_off", on_click=cb_projector,
                  args=(False,))
        return
    sync_url(poll.id, choice_of_window())
    follow_lecture(poll.id)
    show_join = st.session_state.get("dash_show_join", True)
    if question is not None:
        st.markdown(f"<div class='ldp-question'>{html_text(question.text)}</div>",
                    unsafe_allow_html=True)
    if question is None:
        join_panel(poll, big=True)
    elif show_join:
        join_col, live_col = st.columns([1, 2.9], gap="medium")
        with join_col:
            join_panel(poll, big=True)
        with live_col:
            live_panel(question.id, True)
    else:
        live_panel(question.id, True)
    _control_bar(shown, questions, notices)


def _control_bar(shown, questions, notices: list[str]) -> None:
    """The control bar, at the bottom of the screen whatever the panels above it hold
    (ui.dashboard.style): the projector never needs scrolling to reach it. A refusal or a
    key with nothing to do is said in it, above its buttons, where it covers no number."""
    bar = st.container(key="ldp_projector_controls")
    if notices:
        bar.markdown("<div class='ldp-notice' role='status'>"
                     + " ".join(html_text(text) for text in notices) + "</div>",
                     unsafe_allow_html=True)
    cols = bar.columns([1, 1, 1, 0.9, 1.3], vertical_alignment="center")
    if shown is not None:
        with cols[0]:
            voting_button(shown, key="dash_p_voting")
        with cols[1]:
            reveal_button(shown, key="dash_p_reveal")
        with cols[2]:
            next_button(shown, questions, key="dash_p_next")
    cols[3].checkbox("Show join panel", value=True, key="dash_show_join")
    cols[4].button("Leave projection mode", key="dash_projector_off", on_click=cb_projector,
                   args=(False,), width="stretch")
