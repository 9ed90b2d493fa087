"""Which poll and question a dashboard window shows.

The poll is this window's choice: kept in its session (``_dash_pid``) and in the URL
(``?pid=..``), so a reload or projection mode keeps it.

The question follows the lecture. Every window of a poll, at the desk or on the projector,
shows the poll's lecture question (:func:`lecture_question`: the question the phones show,
:func:`classroom.domain.current_of`, or the first before any was opened), and follows the
lecture when it moves (another question, or this one opened, closed, revealed, hidden or
asked again), whichever window (or process, or countdown) moved it. A window may look at
another question (the desk's question list, a question just added, a URL's ``qid`` on the
window's first run): that choice (``_dash_qid``) holds until the lecture moves, and then
the window follows again. The URL names the question (``?qid=..``) only while the
window shows a choice of its own, so a reload of a window that follows the lecture shows
the lecture's question.

:func:`lecture_key` is what a window drew its page from; :func:`follow_lecture`, a 1-s
fragment, reads it again and runs the whole page when it changed, so every window shows the
right question and buttons within a second of a change anywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from classroom.domain import CLASS_EXERCISE, ClassroomError, Poll, Question, current_of
from classroom.service import PollService
from ui import session

__all__ = ["EXERCISE_OPTIONS", "EXERCISE_TEXT", "FLASH", "QID", "Shown", "changed_since",
           "choice_of_window", "exercise_design", "follow_lecture", "lecture_key",
           "lecture_question", "resolve", "select", "shown_of", "sync_url"]

EXERCISE_TEXT = "Vanilla (1) or chocolate (0)?"


EXERCISE_OPTIONS = ("Chocolate", "Vanilla")


# Session-state keys that no widget uses.
_PID = "_dash_pid"


#: The question this window chose to show instead of the lecture's (None: it follows).
QID = "_dash_qid"


#: Where the lecture stood when this window last drew its page (:func:`_where`): if it
#: stands elsewhere now, the lecture moved on, and the window follows it.
_SEEN = "_dash_seen"


#: What this window last drew its page from (:func:`lecture_key`).
_DRAWN = "_dash_drawn"


FLASH = "_dash_flash"


def exercise_design() -> dict[str, Any]:
    """The class exercise (CS208): a die 1-4, tell the truth on 1-3, lie on 4."""
    return dict(CLASS_EXERCISE)


def select(pid: int | None, qid: int | None = None) -> None:
    """Show poll ``pid`` and, if given, its question ``qid`` (else the lecture's)."""
    if pid is None:
        st.session_state.pop(_PID, None)
    else:
        st.session_state[_PID] = pid
    if qid is None:
        st.session_state.pop(QID, None)
    else:
        st.session_state[QID] = qid


def _as_int(value: object) -> int | None:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None


def _chosen_poll(ids: list[int]) -> int | None:
    """The poll kept in this session, else the one in the URL, else the newest."""
    for candidate in (st.session_state.get(_PID), _as_int(st.query_params.get("pid"))):
        if candidate in ids:
            return candidate
    return ids[0] if ids else None


def sync_url(pid: int | None, qid: int | None) -> None:
    """Mirror the poll and this window's own choice of question (None: it follows the
    lecture) in the URL."""
    for name, value in (("pid", pid), ("qid", qid)):
        if value is None:
            if name in st.query_params:
                del st.query_params[name]
        elif st.query_params.get(name) != str(value):
            st.query_params[name] = str(value)


def lecture_question(questions: Sequence[Question]) -> Question | None:
    """The question the lecture is on: the one the phones show (the open question, else the
    one the class last left), else, before any was opened, the first."""
    current = current_of(questions)
    return current if current is not None else (questions[0] if questions else None)


def lecture_key(questions: Sequence[Question]) -> tuple[Question, ...]:
    """What a window's page is drawn from: every question of the poll as it stands (its
    state, reveal, round, deadline, text and design). Any change, by any window or
    process or by a countdown's end, makes a different key."""
    return tuple(questions)


def _where(pid: int, lecture: Question | None) -> tuple[object, ...]:
    """Where the lecture of poll ``pid`` stands: its question, that question's round,
    state and reveal. Any change is the lecture moving on (a question opened, closed,
    revealed, a new round), and every window follows it."""
    if lecture is None:
        return (pid, None)
    return (pid, lecture.id, lecture.round_number, lecture.state, lecture.revealed)


def _choice(pid: int, lecture: Question | None, qids: list[int]) -> int | None:
    """The question this window chose to show, or None to follow the lecture."""
    lecture_id = None if lecture is None else lecture.id
    seen = st.session_state.get(_SEEN)
    st.session_state[_SEEN] = _where(pid, lecture)
    if seen is None:  # the window's first run: the URL's question, once
        choice = st.session_state.get(QID) or _as_int(st.query_params.get("qid"))
    elif seen != _where(pid, lecture):  # another poll, or the lecture moved on: follow it
        choice = None
    else:
        choice = st.session_state.get(QID)
    return choice if choice in qids and choice != lecture_id else None


def resolve(svc: PollService, polls: Sequence[Poll]
            ) -> tuple[Poll | None, list[Question], Question | None]:
    """(poll, its questions, the question to show) for this window; None where there is
    none. Records what the page is drawn from, for :func:`follow_lecture`."""
    ids = [p.id for p in polls]
    pid = _chosen_poll(ids)
    if pid is None:
        return None, [], None
    poll = next(p for p in polls if p.id == pid)
    questions = svc.polls.questions(pid)
    lecture = lecture_question(questions)
    choice = _choice(pid, lecture, [q.id for q in questions])
    st.session_state[_PID] = pid
    if choice is None:
        st.session_state.pop(QID, None)
    else:
        st.session_state[QID] = choice
    st.session_state[_DRAWN] = (pid, lecture_key(questions))
    question = next((q for q in questions if q.id == choice), lecture)
    return poll, questions, question


def choice_of_window() -> int | None:
    """The question this window chose to show (for the URL), or None while it follows."""
    value = st.session_state.get(QID)
    return value if isinstance(value, int) else None


@dataclass(frozen=True)
class Shown:
    """What a window showed when one of its buttons or keys was pressed: the question as it
    then stood and the lecture's question. A press acts on exactly that, or is refused
    (:func:`changed_since`): two windows pressing at once never step twice, and a window
    that has not yet followed a change never acts on what it no longer shows."""

    question: Question
    lecture_id: int | None


def shown_of(question: Question | None, questions: Sequence[Question]) -> Shown | None:
    """What a window shows of its poll's ``questions``: ``question`` and the lecture's."""
    if question is None:
        return None
    lecture = lecture_question(questions)
    return Shown(question, None if lecture is None else lecture.id)


def _stage_words(q: Question) -> str:
    if q.state == "open":
        state = "voting is open"
    elif q.state == "closed":
        state = "its countdown closed voting" if q.timed_out else "voting is closed"
    else:
        state = "voting is not open yet"
    return f"{state}, results {'shown' if q.revealed else 'hidden'}"


def changed_since(shown: Shown, questions: Sequence[Question]) -> str | None:
    """Why a press on what ``shown`` was cannot act now that the poll's ``questions`` are
    as given (another window, another process or a countdown changed them), or None. One
    line: projection mode says it in its control bar."""
    was = shown.question
    now = next((q for q in questions if q.id == was.id), None)
    if now is None:
        return f"Nothing was done: Q{was.position} was deleted."
    lecture = lecture_question(questions)
    if lecture is not None and lecture.id != shown.lecture_id:
        return (f"Nothing was done: another window moved the lecture to Q{lecture.position}, "
                "shown now.")
    if (now.round_number, now.state, now.revealed) != (was.round_number, was.state,
                                                       was.revealed):
        started = (f"round {now.round_number} started, " if now.round_number != was.round_number
                   else "")
        return (f"Nothing was done: Q{now.position} changed before this press "
                f"({started}{_stage_words(now)}).")
    return None


@st.fragment(run_every=1)
def follow_lecture(poll_id: int) -> None:
    """Every second: read the poll's questions again (one read transaction) and, if they
    are not what this window drew its page from, run the whole page, so its question and
    its buttons are the lecture's as it stands. Draws nothing."""
    if not session.is_instructor():
        return
    try:
        questions = session.service().polls.questions(poll_id)
    except ClassroomError:  # the database is away: the live panel says so
        return
    if st.session_state.get(_DRAWN) != (poll_id, lecture_key(questions)):
        st.rerun(scope="app")
