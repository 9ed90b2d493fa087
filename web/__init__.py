"""web: the HTTP layer around the Streamlit app and the phone routes.

Plain Starlette, no Streamlit: the composition root of a process (one settings
object, store, service and instructor sessions, :mod:`web.root`), the table that
turns domain errors into HTTP answers (:mod:`web.errors`), the middleware
every request passes (gzip, device cookie, security headers, old join links), the
instructor's login and logout pages, the facts of one request (address, origin,
JSON depth) and the start-up banner. It sits above :mod:`classroom`, which knows
nothing of HTTP; ``ui`` and ``phone`` use it.
"""

from .errors import ERRORS, ErrorTable, HttpError, Refusal
from .http import (
    MAX_ROW_ID,
    MAX_SAFE_INTEGER,
    client_address,
    is_secure,
    json_depth,
    own_origin,
    parse_json,
    same_origin,
)
from .login import INSTRUCTOR_COOKIE, LOGIN_CSP, LOGIN_FAILURES_PER_MINUTE, AuthApi, make_routes
from .middleware import DEVICE_COOKIE, SECURITY_HEADERS, AppMiddleware, middleware
from .root import PROCESS, ProcessRoot, Root, root
from .startup import banner, make_lifespan

__all__ = [
    "DEVICE_COOKIE",
    "ERRORS",
    "INSTRUCTOR_COOKIE",
    "LOGIN_CSP",
    "LOGIN_FAILURES_PER_MINUTE",
    "MAX_ROW_ID",
    "MAX_SAFE_INTEGER",
    "PROCESS",
    "SECURITY_HEADERS",
    "AppMiddleware",
    "AuthApi",
    "ErrorTable",
    "HttpError",
    "ProcessRoot",
    "Refusal",
    "Root",
    "banner",
    "client_address",
    "is_secure",
    "json_depth",
    "make_lifespan",
    "make_routes",
    "middleware",
    "own_origin",
    "parse_json",
    "root",
    "same_origin",
]
