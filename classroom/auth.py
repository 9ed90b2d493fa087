"""Instructor access: one secret key, compared in constant time.

The key comes from, in order: the environment variable
``LDP_CLASSROOM_INSTRUCTOR_KEY``; ``instructor_key`` in ``.streamlit/secrets.toml``;
otherwise a random key generated on first start and kept in
``<data dir>/instructor_key`` (readable by its owner only).

A logged-in browser holds an HttpOnly cookie whose value is an HMAC of a fixed
label under the key: it proves knowledge of the key without containing it, and
changing the key logs every browser out.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from . import config
from .domain import ConfigError

__all__ = [
    "INSTRUCTOR_COOKIE",
    "KEY_ENV",
    "MIN_KEY_CHARS",
    "check_key",
    "check_session_token",
    "instructor_key",
    "session_token",
]

KEY_ENV = "LDP_CLASSROOM_INSTRUCTOR_KEY"
#: A configured key shorter than this stops the start: it could be guessed.
MIN_KEY_CHARS = 16
INSTRUCTOR_COOKIE = "ldp_instructor"
_TOKEN_LABEL = b"ldp-classroom instructor session v1"


def _key_file() -> Path:
    return config.data_dir() / "instructor_key"


def instructor_key() -> str:
    """The configured instructor key, generating and storing one on first use."""
    key, source = os.environ.get(KEY_ENV, "").strip(), KEY_ENV
    if not key:
        key, source = str(config.secret("instructor_key") or "").strip(), \
            "instructor_key in .streamlit/secrets.toml"
    if key:
        if len(key) < MIN_KEY_CHARS:
            raise ConfigError(
                f"the instructor key set in {source} has {len(key)} characters; use at "
                f"least {MIN_KEY_CHARS}, for example the output of "
                "python -c \"import secrets; print(secrets.token_urlsafe(18))\"")
        return key
    path = _key_file()
    try:
        if path.stat().st_mode & 0o077:  # left readable by an older version
            path.chmod(0o600)
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        pass
    key = secrets.token_urlsafe(18)
    # O_EXCL: when two processes start at once, the first writer wins.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text(encoding="utf-8").strip()
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(key + "\n")
    return key


def check_key(candidate: object) -> bool:
    """Constant-time comparison of a typed or linked key with the instructor key."""
    if not isinstance(candidate, str) or not candidate:
        return False
    return hmac.compare_digest(candidate.strip().encode(), instructor_key().encode())


def session_token(key: str | None = None) -> str:
    """The cookie value that marks a logged-in instructor browser."""
    k = (key or instructor_key()).encode()
    return hmac.new(k, _TOKEN_LABEL, hashlib.sha256).hexdigest()


def check_session_token(token: object) -> bool:
    if not isinstance(token, str) or not token:
        return False
    return hmac.compare_digest(token.encode(), session_token().encode())
