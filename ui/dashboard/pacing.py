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
  value. The command's callback reads the poll afresh, refuses the key with a sentence
  if the question is no longer as the window showed it
  (:func:`ui.dashboard.selection.changed_since`), and otherwise runs the same action as
  the button (:mod:`ui.dashboard.actions`), so a key does exactly what a click does.

The component registers its widget states like any control (a ``json_value`` state and
a ``json_trigger_value`` trigger), so the widget guard (:mod:`ui.widget_guard`) knows
them. It is mounted on every run of the dashboard: in projection mode with every key; at
the desk listening for F5 alone, which enters projection mode (a clicker's start/stop
button sends F5, then Esc: in projection mode F5 keeps it, and an Esc within
:data:`CLICKER_PAIR_MS` of an F5 is ignored).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import streamlit as st

from classroom.domain import ClassroomError, Question, sentence
from ui import session
from ui.dashboard.actions import (
    cb_projector,
    do_close,
    do_next,
    do_open,
    do_reveal,
    flash,
)
from ui.dashboard.selection import Shown, changed_since

__all__ = ["COMMANDS", "KEYS", "Stage", "action_for", "countdown_text", "next_step",
           "pacing_keys", "stage_of", "step_back"]

#: What a key can ask for; the script sends one of these ("present": F5 at the desk).
COMMANDS = ("forward", "back", "voting", "reveal", "next", "leave", "expired", "present")

#: An Esc this soon after an F5 is a presentation clicker's start/stop button, which sends
#: the pair: it leaves projection mode on. ``pacing.js`` has the same number.
CLICKER_PAIR_MS = 2000

#: The keys, as the "?" overlay and the instructor's guide list them.
KEYS: tuple[tuple[str, str], ...] = (
    ("PageDown, →", "Next step: open voting, close it, reveal, next question"),
    ("PageUp, ←", "Step back: hide the results, reopen voting"),
    ("O", "Open or close voting"),
    ("R", "Reveal or hide the results"),
    ("N", "Next question (closes this one, opens the next)"),
    ("B, .", "Blank the screen; any key brings it back"),
    ("?", "Show or hide this list"),
    ("Esc", "Leave projection mode (at the desk, F5 comes back)"),
    ("F5", "Stay in projection mode: a clicker's start/stop button sends F5 then Esc, and "
           "that Esc is ignored; at the desk, F5 enters projection mode (Ctrl+R reloads)"),
)

_KEY = "dash_pacing"


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


def _run(command: str, shown: Shown) -> None:
    """Do what ``command`` asks for the question the window showed, through the buttons'
    actions; refused with a sentence if the poll changed since (another window moved on,
    a countdown closed it): the database, read afresh, is the truth."""
    if command == "expired":  # the countdown reached zero here: the rerun redraws it
        return
    try:
        svc = session.service()
        questions = svc.polls.questions(shown.question.poll_id)
    except ClassroomError as exc:
        flash("error", sentence(exc))
        return
    why = changed_since(shown, questions)
    if why is not None:
        flash("error", why)
        return
    question = next(q for q in questions if q.id == shown.question.id)
    stage = stage_of(question, questions)
    action = action_for(command, stage)
    if action is None:
        flash("info", _no_step(command, stage))
    elif action == "open":
        do_open(question.id)
    elif action == "close":
        do_close(question.id)
    elif action in ("reveal", "hide"):
        do_reveal(question.id, action == "reveal")
    elif action == "next":
        do_next(question.id)


def _command(result: object) -> str | None:
    """The command the page's script sent, or None."""
    sent = getattr(result, "command", None) if result is not None else None
    if sent is None and isinstance(result, dict):
        sent = result.get("command")
    command = sent.get("command") if isinstance(sent, dict) else sent
    return command if isinstance(command, str) and command in COMMANDS else None


def _on_command(shown: Shown | None, projector: bool) -> None:
    if not session.is_instructor():  # projection mode is the instructor's; say so, do nothing
        flash("error", "Only the instructor can do that. Log in on the I'm teaching page.")
        return
    command = _command(st.session_state.get(_KEY))
    if command is None:
        return
    if command in ("leave", "present"):
        cb_projector(command == "present")
    elif projector and shown is not None:
        _run(command, shown)


_SCRIPT = (Path(__file__).with_name("pacing.js").read_text(encoding="utf-8")
           + "\nexport default function (component) { return mountPacing(component); }\n")

_component = st.components.v2.component("ldp_pacing", js=_SCRIPT, isolate_styles=False)


def _left_ms(question: Question | None, now: datetime) -> int | None:
    if question is None:
        return None
    left = question.seconds_left(now)
    return None if left is None else int(left * 1000)


def pacing_keys(shown: Shown | None, now: datetime, *, projector: bool = True) -> None:
    """The keyboard of a dashboard window. In projection mode: the keys, the "?" overlay,
    the blank screen and the countdown, for the question ``shown`` (None: only the keys
    that need no question work). At the desk (``projector`` False): only F5, which enters
    projection mode."""
    question = None if shown is None else shown.question
    left = _left_ms(question, now) if projector else None
    data = {
        "mode": "projector" if projector else "desk",
        "keys": [list(row) for row in KEYS] if projector else [],
        "pair_ms": CLICKER_PAIR_MS,
        "question": None if question is None else f"{question.id}/{question.round_number}",
        "left_ms": left,
        "left_text": None if left is None else countdown_text(left),
    }

    def on_command() -> None:
        _on_command(shown, projector)

    _component(key=_KEY, data=data, on_command_change=on_command, width="stretch",
               height="content")
