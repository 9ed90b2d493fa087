"""HTTP layer around the Streamlit app: middleware, instructor login, start-up banner.

* Every response is gzip-compressed when large enough and carries
  ``Referrer-Policy: same-origin`` and ``X-Content-Type-Options: nosniff``.
* Old join links ``/?poll=CODE`` redirect to the phone page ``/join/CODE``.
* Every HTML response to a browser without one gets an HttpOnly
  ``ldp_device`` cookie holding a random device id. The websocket's opening
  request carries it back, so pages read it through ``st.context.cookies``.
  The id never reaches the database: the store keeps only a per-round salted
  HMAC of it, so a device's reports cannot be linked across questions.
* ``/auth/login?key=...`` checks the instructor key and, if it matches, sets the
  instructor cookie and redirects to the dashboard, so the key leaves the
  address bar at once. ``/auth/logout`` removes the cookie.
* At start the server prints the student join address and the instructor login
  URL once, the way Jupyter prints its token.
"""

from __future__ import annotations

import secrets
import socket
import sys
from contextlib import asynccontextmanager
from typing import Any

from urllib.parse import quote

from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from . import auth

__all__ = ["DEVICE_COOKIE", "SECURITY_HEADERS", "AppMiddleware", "banner", "lifespan", "middleware",
           "routes"]

DEVICE_COOKIE = "ldp_device"
_YEAR = 365 * 24 * 3600


def _secure(request: Request) -> bool:
    proto = request.headers.get("x-forwarded-proto", request.url.scheme)
    return proto == "https"


#: Sent with every HTTP response of the app, Streamlit's pages included.
SECURITY_HEADERS = ((b"referrer-policy", b"same-origin"),
                    (b"x-content-type-options", b"nosniff"))


class AppMiddleware:
    """Pure ASGI middleware (no per-response stream wrapping) for every request:

    * ``GET /?poll=CODE`` (printed links and QR codes) answers 303 to ``/join/CODE``,
      the phone page;
    * a browser loading a page without a device cookie gets a random, HttpOnly
      ``ldp_device`` id. Keyed on the request's ``Accept``, not the response: a
      revalidated page comes back as 304 without a content type;
    * every response carries :data:`SECURITY_HEADERS`.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        if scope["path"] == "/" and "poll" in request.query_params:
            code = quote(request.query_params["poll"].strip()[:32], safe="")
            await RedirectResponse(f"/join/{code}", status_code=303)(scope, receive, send)
            return
        cookie = None
        if (scope["method"] in ("GET", "HEAD") and DEVICE_COOKIE not in request.cookies
                and "text/html" in request.headers.get("accept", "")
                and not scope["path"].startswith("/_stcore/")):
            cookie = _device_cookie(secure=_secure(request))

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS:
                    if name.decode() not in headers:
                        headers.raw.append((name, value))
                if cookie is not None:
                    headers.raw.append((b"set-cookie", cookie.encode("latin-1")))
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _device_cookie(*, secure: bool) -> str:
    response = Response()
    response.set_cookie(DEVICE_COOKIE, secrets.token_urlsafe(24), max_age=_YEAR,
                        httponly=True, samesite="lax", secure=secure)
    return response.headers["set-cookie"]


def middleware() -> list[Middleware]:
    """The app's middleware, outermost first: gzip for every response (Streamlit's
    static JS included), then :class:`AppMiddleware`."""
    return [Middleware(GZipMiddleware, minimum_size=500), Middleware(AppMiddleware)]


async def _login(request: Request) -> Response:
    if not auth.check_key(request.query_params.get("key")):
        return PlainTextResponse(
            "That instructor key is not right. Use the login URL printed in the terminal "
            "where the app was started, or type the key on the \"I'm teaching\" page.",
            status_code=403)
    response = RedirectResponse("/dashboard", status_code=303)
    response.set_cookie(auth.INSTRUCTOR_COOKIE, auth.session_token(), max_age=30 * 24 * 3600,
                        httponly=True, samesite="strict", secure=_secure(request))
    return response


async def _logout(request: Request) -> Response:
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(auth.INSTRUCTOR_COOKIE)
    return response


routes = [Route("/auth/login", _login), Route("/auth/logout", _logout)]


def _lan_address() -> str | None:
    """This machine's address on the local network (no packet is sent)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: routing lookup only
            return s.getsockname()[0]
    except OSError:
        return None


def banner(address: str | None, port: int, public_url: str | None, key: str) -> str:
    """The start-up message: where students join and how the instructor logs in."""
    lines = ["", "  LDP classroom is running."]
    if public_url:
        base = public_url.rstrip("/")
        lines.append(f"  Students join at:      {base}/join")
    elif address in (None, "", "0.0.0.0", "::"):
        lan = _lan_address() or "localhost"
        base = f"http://{lan}:{port}"
        lines.append(f"  Students join at:      {base}/join   (this machine on the local network)")
    else:
        base = f"http://{address}:{port}"
        lines.append(f"  Students join at:      {base}/join")
        if address in ("localhost", "127.0.0.1", "::1"):
            lines.append("  (only this computer can reach it; for phones in the room start with "
                         "--server.address 0.0.0.0)")
    lines.append(f"  Instructor login URL:  {base}/auth/login?key={key}")
    lines.append("")
    return "\n".join(lines)


def _check_database(config: Any) -> None:
    """Open the configured database once, so a wrong URL, an unreachable server or an
    unwritable SQLite directory stops the start with a message naming the setting (password
    masked) and the path, instead of surfacing on the first student's phone."""
    from .store import Store

    Store(config.database_url()).close()


@asynccontextmanager
async def lifespan(app: Any):
    from streamlit import config as st_config

    from . import config

    try:
        key = auth.instructor_key()
        _check_database(config)
        print(banner(st_config.get_option("server.address"), st_config.get_option("server.port"),
                     config.public_base_url(), key), file=sys.stderr, flush=True)
    except Exception as exc:  # noqa: BLE001 - report any start-up problem in plain words
        print(f"\n  LDP classroom cannot start: {exc}\n", file=sys.stderr, flush=True)
        raise SystemExit(2) from exc
    _leave_legacy_pages_mode()
    yield None


def _leave_legacy_pages_mode() -> None:
    """Start in st.navigation mode, not Streamlit's legacy ``pages/`` folder mode.

    With a ``pages/`` folder beside the entrypoint, a fresh server serves
    ``/<page>`` from ``pages/<page>.py`` until some session calls
    ``st.navigation``; the first visitor of a deep link then sees "Page not
    found". The flag below is what Streamlit checks (class attribute, set only
    while still None). Access control does not rely on it: page modules only
    define functions and instructor pages check access themselves.
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager

        if PagesManager.uses_pages_directory is None:
            PagesManager.uses_pages_directory = False
    except (ImportError, AttributeError):  # a future Streamlit may drop the flag
        pass
