"""Per-visitor facts every page needs: the service, the settings, the device id, the role.

The service, the settings and the instructor sessions are the process's own, built once
by the composition root (:mod:`web.composition`) and shared with the phone and login routes;
nothing here mutates them. Everything about a visitor comes from their cookies or their
own ``st.session_state``.
"""

from __future__ import annotations

import streamlit as st

from classroom.auth import InstructorAuth
from classroom.config import Settings
from classroom.domain import ClassroomError
from classroom.service import PollService
from web import INSTRUCTOR_COOKIE, root

__all__ = ["database_problem", "instructor_auth", "is_instructor", "service",
           "settings"]

# A key in st.session_state that no widget uses. Tests put an instructor
# session id there (AppTest has no cookies); it is checked like a cookie's.
_SESSION_FOR_TESTS = "_ldp_session_id"


def service() -> PollService:
    """The process-wide PollService on the configured database."""
    return root().service


def settings() -> Settings:
    """The process's settings, read once at start."""
    return root().settings


def instructor_auth() -> InstructorAuth:
    """The process-wide instructor sessions, on the service's store."""
    return root().auth


def _cookie(name: str) -> str | None:
    try:
        value = st.context.cookies.get(name)
    except Exception:  # noqa: BLE001 - no request context (AppTest, bare mode)
        return None
    return value if isinstance(value, str) and value else None


def is_instructor() -> bool:
    """True for a browser holding a live instructor session (logged in at /auth/login).

    False when the database cannot be used: no session can be checked then
    (:func:`database_problem` says why).
    """
    session_id = _cookie(INSTRUCTOR_COOKIE) or st.session_state.get(_SESSION_FOR_TESTS)
    if session_id is None:
        return False
    try:
        return instructor_auth().is_valid(session_id)
    except ClassroomError:
        return False


def database_problem() -> str | None:
    """Why the app cannot use its settings or database, or None."""
    try:
        root()
    except ClassroomError as exc:
        return str(exc)
    return None
