"""Pacing the lecture from the keyboard in projection mode: a presentation clicker's
PageDown and PageUp (or the arrow keys) step through a question, single keys open and
close voting, reveal and hide, move to the next question, and "?" lists them.

Two parts:

* :func:`next_step` and :func:`step_back`, pure functions of where the question stands
  (:class:`Stage`): PageDown goes draft → open → closed → revealed → the next question
  (which opens); PageUp undoes the last step where that makes sense (hide, reopen).
  :func:`action_for` turns a key's command into one of these actions.
* :func:`pacing_keys`, a Streamlit component (``st.components.v2``) whose script
  (``pacing.js`` beside this file) runs in the page: it listens for the keys, draws the
  "?" overlay, the blank screen and the countdown, and sends a command back as a trigger
  value. The command's callback reads the question afresh and runs the same callback
  as the button (:mod:`ui.dashboard.actions`), so a key does exactly what a click does.

The component registers its widget states like any control (a ``json_value`` state and
a ``json_trigger_value`` trigger), so the widget guard (:mod:`ui.widget_guard`) knows
them; it is mounted on every run of projection mode and on no other page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import streamlit as st

from classroom.domain import ClassroomError, Question, sentence
from ui import session
from ui.dashboard.actions import cb_close, cb_next, cb_open, cb_projector, cb_reveal, flash

__all__ = ["COMMANDS", "KEYS", "Stage", "action_for", "countdown_text", "next_step",
           "pacing_keys", "stage_of", "step_back"]

#: What a key can ask for; the script sends one of these.
COMMANDS = ("forward", "back", "voting", "reveal", "next", "leave", "expired")

#: The keys, as the "?" overlay and the instructor's guide list them.
KEYS: tuple[tuple[str, str], ...] = (
    ("PageDown, →", "Next step: open voting, close it, reveal, next question"),
    ("PageUp, ←", "Step back: hide the results, reopen voting"),
    ("O", "Open or close voting"),
    ("R", "Reveal or hide the results"),
    ("N", "Next question (closes this one, opens the next)"),
    ("B, .", "Blank the screen; any key brings it back"),
    ("?", "Show or hide this list"),
    ("Esc", "Leave projection mode"),
)

_KEY = "dash_pacing"
_NOTE = "_dash_pacing_note"


@dataclass(frozen=True)
class Stage:
    """Where the question on screen stands, as far as pacing cares."""

    state: str  # "draft", "open" or "closed"
    revealed: bool
    has_next: bool


def next_step(stage: Stage) -> str | None:
    """What PageDown does: draft → "open", open → "close", closed → "reveal", closed and
    revealed → "next" (close this question and open the next); None after the last."""
    if stage.state == "draft":
        return "open"
    if stage.state == "open":
        return "close"
    if not stage.revealed:
        return "reveal"
    return "next" if stage.has_next else None


def step_back(stage: Stage) -> str | None:
    """What PageUp does: undo the last step where that is sensible: shown results are
    hidden ("hide"), a closed question is reopened ("open"). Voting cannot be un-opened
    and a question left cannot be taken back, so from draft or open (results hidden)
    there is no step back (None)."""
    if stage.revealed:
        return "hide"
    if stage.state == "closed":
        return "open"
    return None


def action_for(command: str, stage: Stage) -> str | None:
    """The action a key's ``command`` asks for at ``stage``: "open", "close", "reveal",
    "hide", "next", "leave", or None (nothing to do)."""
    if command == "forward":
        return next_step(stage)
    if command == "back":
        return step_back(stage)
    if command == "voting":
        return "close" if stage.state == "open" else "open"
    if command == "reveal":
        return "hide" if stage.revealed else "reveal"
    if command == "next":
        return "next" if stage.has_next else None
    if command == "leave":
        return command
    return None


def countdown_text(ms: float) -> str:
    """A countdown's time left as minutes:seconds, rounded up: the last second reads
    0:01, never 0:00 while voting is still open (the phone's rule, ``countdownText`` in
    ``phone/assets/flow.js``; ``pacing.js`` has the same)."""
    secs = max(0, math.ceil(ms / 1000))
    return f"{secs // 60}:{secs % 60:02d}"


def stage_of(question: Question, questions: list[Question]) -> Stage:
    """The stage of ``question`` among its poll's ``questions`` (by position, as the
    service's Next goes)."""
    after = [q for q in questions if (q.position, q.id) > (question.position, question.id)]
    return Stage(question.state, question.revealed, bool(after))


def _no_step(command: str, stage: Stage) -> str:
    if command == "forward":
        return "This was the last question of the poll."
    if command == "back":
        return ("Voting cannot be taken back once open: press PageDown to close it."
                if stage.state == "open" else "Nothing to go back to.")
    if command == "next":
        return "This is the last question of the poll: there is no next question."
    return "Nothing to do."


def _run(command: str, question_id: int) -> None:
    """Do what ``command`` asks for the question on screen, read afresh (a countdown may
    have closed it, another tab may have moved on), through the buttons' callbacks."""
    if command == "expired":  # the countdown reached zero here: the rerun redraws it
        return
    try:
        svc = session.service()
        question = svc.polls.question(question_id)
        stage = stage_of(question, svc.polls.questions(question.poll_id))
    except ClassroomError as exc:
        flash("error", sentence(exc))
        return
    action = action_for(command, stage)
    if action is None:
        st.session_state[_NOTE] = _no_step(command, stage)
    elif action == "open":
        cb_open(question_id)
    elif action == "close":
        cb_close(question_id)
    elif action in ("reveal", "hide"):
        cb_reveal(question_id, action == "reveal")
    elif action == "next":
        cb_next(question_id)
    elif action == "leave":
        cb_projector(False)


def _on_command(question_id: int | None) -> None:
    if not session.is_instructor():  # projection mode is the instructor's; say so, do nothing
        flash("error", "Only the instructor can do that. Log in on the I'm teaching page.")
        return
    result = st.session_state.get(_KEY)
    sent = getattr(result, "command", None) if result is not None else None
    if sent is None and isinstance(result, dict):
        sent = result.get("command")
    command = sent.get("command") if isinstance(sent, dict) else sent
    if not isinstance(command, str) or command not in COMMANDS:
        return
    if command == "leave":
        cb_projector(False)
    elif question_id is not None:
        _run(command, question_id)


_SCRIPT = (Path(__file__).with_name("pacing.js").read_text(encoding="utf-8")
           + "\nexport default function (component) { return mountPacing(component); }\n")

_component = st.components.v2.component("ldp_pacing", js=_SCRIPT, isolate_styles=False)


def _left_ms(question: Question | None, now: datetime) -> int | None:
    if question is None:
        return None
    left = question.seconds_left(now)
    return None if left is None else int(left * 1000)


def pacing_keys(question: Question | None, now: datetime) -> None:
    """The keyboard, the "?" overlay, the blank screen and the countdown of projection
    mode, for ``question`` (None: only the keys that need no question work)."""
    note = st.session_state.pop(_NOTE, None)
    if note:
        st.toast(note)
    left = _left_ms(question, now)
    data = {
        "keys": [list(row) for row in KEYS],
        "question": None if question is None else f"{question.id}/{question.round_number}",
        "left_ms": left,
        "left_text": None if left is None else countdown_text(left),
    }

    def on_command() -> None:
        _on_command(None if question is None else question.id)

    _component(key=_KEY, data=data, on_command_change=on_command, width="stretch",
               height="content")
