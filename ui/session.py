"""Per-visitor facts every page needs: the service, the device id, the role.

No module-level mutable state: the service is a ``st.cache_resource``
singleton that nothing mutates; everything about a visitor comes from their
cookies or their own ``st.session_state``.
"""

from __future__ import annotations

import streamlit as st

from classroom import auth
from classroom.domain import ClassroomError
from web import DEVICE_COOKIE

__all__ = ["database_problem", "device_id", "instructor_auth", "is_instructor", "service"]

# Keys in st.session_state that no widget uses. Tests put a device id or an instructor
# session id there (AppTest has no cookies); a session id is checked like a cookie's.
_SESSION_FOR_TESTS = "_ldp_session_id"
_DEVICE_FOR_TESTS = "_ldp_device_id"


@st.cache_resource(show_spinner=False)
def service():
    """The process-wide PollService on the configured database (created once)."""
    from classroom import config
    from classroom.service import PollService
    from classroom.store import Store

    return PollService(Store(config.database_url()))


@st.cache_resource(show_spinner=False)
def instructor_auth() -> auth.InstructorAuth:
    """The process-wide instructor sessions, on the service's store."""
    return auth.InstructorAuth(service().store)


def _cookie(name: str) -> str | None:
    try:
        value = st.context.cookies.get(name)
    except Exception:  # noqa: BLE001 - no request context (AppTest, bare mode)
        return None
    return value if isinstance(value, str) and value else None


def device_id() -> str | None:
    """The browser's random device id from its HttpOnly cookie, or None without one.

    AppTest has no cookies; tests put an id in session state under a key no
    widget uses.
    """
    return _cookie(DEVICE_COOKIE) or st.session_state.get(_DEVICE_FOR_TESTS)


def is_instructor() -> bool:
    """True for a browser holding a live instructor session (logged in at /auth/login).

    False when the database cannot be used: no session can be checked then
    (:func:`database_problem` says why).
    """
    session_id = _cookie(auth.INSTRUCTOR_COOKIE) or st.session_state.get(_SESSION_FOR_TESTS)
    if session_id is None:
        return False
    try:
        return instructor_auth().is_valid(session_id)
    except ClassroomError:
        return False


def database_problem() -> str | None:
    """Why the app cannot use its database (a configuration error), or None."""
    try:
        service()
    except ClassroomError as exc:
        return str(exc)
    return None
