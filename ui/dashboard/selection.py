"""Which poll and question the dashboard shows: kept in this session (``_dash_pid``,
``_dash_qid``) and mirrored in the URL (``?pid=..&qid=..``), so a reload or projection
mode keeps it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from classroom.domain import CLASS_EXERCISE, Poll, Question
from classroom.service import PollService

EXERCISE_TEXT = "Vanilla (1) or chocolate (0)?"


EXERCISE_OPTIONS = ("Chocolate", "Vanilla")


# Session-state keys that no widget uses.
_PID = "_dash_pid"


QID = "_dash_qid"


FLASH = "_dash_flash"


def exercise_design() -> dict[str, Any]:
    """The class exercise (CS208): a die 1-4, tell the truth on 1-3, lie on 4."""
    return dict(CLASS_EXERCISE)


def select(pid: int | None, qid: int | None = None) -> None:
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


def _chosen(key: str, param: str, ids: list[int], default: int | None) -> int | None:
    """The id kept in this session, else the one in the URL, else ``default``."""
    for candidate in (st.session_state.get(key), _as_int(st.query_params.get(param))):
        if candidate in ids:
            return candidate
    return default


def sync_url(pid: int | None, qid: int | None) -> None:
    for name, value in (("pid", pid), ("qid", qid)):
        if value is None:
            if name in st.query_params:
                del st.query_params[name]
        elif st.query_params.get(name) != str(value):
            st.query_params[name] = str(value)


def resolve(svc: PollService, polls: Sequence[Poll]
            ) -> tuple[Poll | None, list[Question], Question | None]:
    """(poll, its questions, question) for this session; None where there is none."""
    ids = [p.id for p in polls]
    pid = _chosen(_PID, "pid", ids, ids[0] if ids else None)
    if pid is None:
        return None, [], None
    poll = next(p for p in polls if p.id == pid)
    questions = svc.polls.questions(pid)
    qids = [q.id for q in questions]
    default = None
    if questions:
        current = svc.polls.current_question(pid)
        default = current.id if current is not None else questions[-1].id
    qid = _chosen(QID, "qid", qids, default)
    st.session_state[_PID] = pid
    if qid is None:
        st.session_state.pop(QID, None)
    else:
        st.session_state[QID] = qid
    question = next((q for q in questions if q.id == qid), None)
    return poll, questions, question
