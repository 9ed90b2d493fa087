"""web: the HTTP layer around the Streamlit app and the phone routes.

Plain Starlette, no Streamlit: the composition root of a process (one settings
object, store, service, instructor sessions and edge, :mod:`web.composition`), the table that
turns domain errors into HTTP answers (:mod:`web.errors`), the edge every request
passes (allowed hosts, signed device cookies, rate limits: :mod:`web.edge`,
:mod:`web.hosts`, :mod:`web.devices`, :mod:`web.limits`), the middleware that applies
it (gzip, security headers, old join links), the instructor's login and logout pages,
the facts of one request (address, origin, JSON), the server's own limits
(:mod:`web.serving`) and the start-up banner. It sits above :mod:`classroom`, which knows
nothing of HTTP; ``ui`` and ``phone`` use it.
"""

from .composition import PROCESS, ProcessRoot, Root, root
from .devices import DEVICE_COOKIE, NEW_DEVICES_PER_MINUTE, DeviceCookies
from .edge import Edge, Visitor, visitor
from .errors import ERRORS, ErrorTable, HttpError, Refusal
from .hosts import AllowedHosts
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
from .limits import Device, Guesses, GuessRule, Limits, Wait
from .login import (
    INSTRUCTOR_COOKIE,
    LOGIN_CSP,
    LOGIN_FAILURES_PER_ADDRESS,
    LOGIN_FAILURES_PER_MINUTE,
    LOGIN_FRESH_PER_ADDRESS,
    AuthApi,
    make_routes,
)
from .middleware import NO_FRAMING, SECURITY_HEADERS, AppMiddleware, middleware
from .startup import banner, make_lifespan

__all__ = [
    "DEVICE_COOKIE",
    "ERRORS",
    "INSTRUCTOR_COOKIE",
    "LOGIN_CSP",
    "LOGIN_FAILURES_PER_ADDRESS",
    "LOGIN_FAILURES_PER_MINUTE",
    "LOGIN_FRESH_PER_ADDRESS",
    "MAX_ROW_ID",
    "MAX_SAFE_INTEGER",
    "NEW_DEVICES_PER_MINUTE",
    "NO_FRAMING",
    "PROCESS",
    "SECURITY_HEADERS",
    "AllowedHosts",
    "AppMiddleware",
    "AuthApi",
    "Device",
    "DeviceCookies",
    "Edge",
    "ErrorTable",
    "GuessRule",
    "Guesses",
    "HttpError",
    "Limits",
    "ProcessRoot",
    "Refusal",
    "Root",
    "Visitor",
    "Wait",
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
    "visitor",
]
