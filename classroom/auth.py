"""Instructor access: one-time login links and server-side sessions under the key.

The key is a setting (:func:`classroom.config.instructor_key`, read once at start
into :class:`classroom.config.Settings`). It never appears in a URL:

* the start-up banner prints a **one-time login link**: a random nonce signed
  with the key and timed by ``itsdangerous``, good for one use within
  :data:`LOGIN_LINK_TTL_S`; the database remembers used nonces;
* otherwise the instructor types the key on the login form (sent by POST).

Either way the browser gets a random **session id** in an HttpOnly cookie. The
database keeps only an HMAC of it under the key, and its expiry
(:data:`SESSION_TTL_S`): logging out revokes it, "log out everywhere" revokes them
all, changing the key ends every session, and a copy of the database logs nobody in.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from itsdangerous import BadSignature, URLSafeTimedSerializer

from .domain import ClassroomError

if TYPE_CHECKING:
    from .store import Store

__all__ = [
    "LOGIN_LINK_TTL_S",
    "SESSION_TTL_S",
    "InstructorAuth",
    "check_key",
    "login_link_token",
]

#: A login link works once, within this many seconds of being printed.
LOGIN_LINK_TTL_S = 15 * 60
#: A logged-in browser stays logged in this long (a day of teaching), then logs in again.
SESSION_TTL_S = 12 * 3600
_LINK_SALT = "ldp-classroom one-time login link"


def check_key(candidate: object, key: str) -> bool:
    """Constant-time comparison of a typed key with the instructor key."""
    if not isinstance(candidate, str) or not candidate:
        return False
    return hmac.compare_digest(candidate.strip().encode(), key.encode())


def login_link_token(key: str) -> str:
    """A fresh one-time login token for ``/auth/login?token=...``: a random nonce, signed
    with the instructor key and timed (``itsdangerous``). Spent by
    :meth:`InstructorAuth.redeem_link`."""
    return str(URLSafeTimedSerializer(key, salt=_LINK_SALT).dumps(secrets.token_urlsafe(18)))


def _digest(value: str, key: str) -> str:
    """What the database keeps of a session id or a link's nonce: an HMAC under the
    instructor key, so changing the key ends every session."""
    return hmac.new(key.encode("utf-8"), value.encode("utf-8"), hashlib.sha256).hexdigest()


class InstructorAuth:
    """Login links and sessions on one store, under one key (thread-safe).

    One instance per process serves the login routes and the Streamlit pages alike
    (the composition root, :mod:`web.composition`, builds it). A session's validity is
    remembered for :attr:`cache_s` seconds, so a dashboard refreshing every 2 s does not
    read the database each time. A logout takes effect at once in this process, and in
    another process sharing the database within ``cache_s``.
    """

    def __init__(self, store: Store, *, key: str, cache_s: float = 5.0,
                 clock: Callable[[], float] = time.time) -> None:
        self._store = store
        self._key = key
        self.cache_s = cache_s
        self._clock = clock
        # session digest -> checked until (clock time)
        self._valid: dict[str, float] = {}
        self._lock = threading.Lock()

    @property
    def key(self) -> str:
        return self._key

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self._clock(), tz=UTC)

    # -- logging in -----------------------------------------------------------------------
    def redeem_link(self, token: object) -> str | None:
        """A new session id for a valid, unused, unexpired login token; else None.

        A token is spent by its first use, even by another process sharing the database.
        """
        if not isinstance(token, str) or not token or len(token) > 200:
            return None
        try:
            nonce = URLSafeTimedSerializer(self.key, salt=_LINK_SALT).loads(
                token, max_age=LOGIN_LINK_TTL_S)
        except BadSignature:  # includes SignatureExpired
            return None
        if not isinstance(nonce, str):
            return None
        expires = self._now() + timedelta(seconds=LOGIN_LINK_TTL_S)
        if not self._store.use_login_link(_digest(nonce, self.key), expires):
            return None
        return self.start_session()

    def log_in(self, candidate: object) -> str | None:
        """A new session id if ``candidate`` is the instructor key, else None."""
        return self.start_session() if check_key(candidate, self.key) else None

    def start_session(self) -> str:
        session_id = secrets.token_urlsafe(32)
        now = self._now()
        self._store.add_session(_digest(session_id, self.key), now,
                                now + timedelta(seconds=SESSION_TTL_S))
        return session_id

    # -- checking and ending sessions -----------------------------------------------------
    def is_valid(self, session_id: object) -> bool:
        """True for the id of a stored, unexpired session. A dead database counts as no."""
        if not isinstance(session_id, str) or not session_id or len(session_id) > 100:
            return False
        digest = _digest(session_id, self.key)
        now = self._clock()
        with self._lock:
            if self._valid.get(digest, 0.0) > now:
                return True
        try:
            expires = self._store.session_expiry(digest)
        except ClassroomError:
            return False
        if expires is None or expires.timestamp() <= now:
            return False
        with self._lock:
            self._valid[digest] = min(now + self.cache_s, expires.timestamp())
        return True

    def end(self, session_id: object) -> None:
        """Log this session out (an unknown id is ignored)."""
        if isinstance(session_id, str) and session_id and len(session_id) <= 100:
            digest = _digest(session_id, self.key)
            with self._lock:
                self._valid.pop(digest, None)
            self._store.delete_session(digest)

    def end_all(self) -> int:
        """Log every instructor browser out; the number of sessions ended."""
        with self._lock:
            self._valid.clear()
        return self._store.delete_all_sessions()
