"""Per-visitor facts every page needs: the service, the device id, the role.

No module-level mutable state: the service is a ``st.cache_resource``
singleton that nothing mutates; everything about a visitor comes from their
cookies or their own ``st.session_state``.
"""

from __future__ import annotations

import streamlit as st

from classroom import auth
from classroom.web import DEVICE_COOKIE

__all__ = ["device_id", "is_instructor", "log_in", "log_out", "record_try", "service",
           "wait_before_try"]

# Keys in st.session_state. No widget uses them, so a browser cannot set them.
_INSTRUCTOR = "_ldp_instructor"
_DEVICE_FOR_TESTS = "_ldp_device_id"


@st.cache_resource(show_spinner=False)
def service():
    """The process-wide PollService on the configured database (created once)."""
    from classroom import config
    from classroom.service import PollService
    from classroom.store import Store

    return PollService(Store(config.database_url()))


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
    """True for a browser holding the instructor cookie or a session that typed the key."""
    if st.session_state.get(_INSTRUCTOR) is True:
        return True
    return auth.check_session_token(_cookie(auth.INSTRUCTOR_COOKIE))


def log_in(key: str) -> bool:
    """Check a typed key; on success mark this session as the instructor's."""
    ok = auth.check_key(key)
    if ok:
        st.session_state[_INSTRUCTOR] = True
    return ok


def log_out() -> None:
    st.session_state.pop(_INSTRUCTOR, None)


# -- slowing down guessing -------------------------------------------------------------------
_FREE_TRIES = 5
_MAX_WAIT_S = 60.0


def wait_before_try(name: str) -> float:
    """Seconds this session must still wait before another try at ``name`` (0: go ahead).

    The first few wrong tries are free; after that each wrong try doubles the
    wait, up to a minute. Kept per session: guessing a join code or the
    instructor key from one browser tab gets slow quickly.
    """
    import time

    count, last = st.session_state.get(f"_ldp_fail_{name}", (0, 0.0))
    if count < _FREE_TRIES:
        return 0.0
    wait = min(_MAX_WAIT_S, 2.0 ** (count - _FREE_TRIES))
    return max(0.0, last + wait - time.monotonic())


def record_try(name: str, ok: bool) -> None:
    import time

    key = f"_ldp_fail_{name}"
    if ok:
        st.session_state.pop(key, None)
    else:
        count, _ = st.session_state.get(key, (0, 0.0))
        st.session_state[key] = (count + 1, time.monotonic())
