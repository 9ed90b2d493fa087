"""HTTP layer around the Streamlit app: middleware, instructor login, start-up banner.

* Every response is gzip-compressed when large enough and carries
  ``Referrer-Policy: same-origin`` and ``X-Content-Type-Options: nosniff``.
* Old join links ``/?poll=CODE`` redirect to the phone page ``/join/CODE``.
* Every HTML response to a browser without one gets an HttpOnly
  ``ldp_device`` cookie holding a random device id. The websocket's opening
  request carries it back, so pages read it through ``st.context.cookies``.
  The id never reaches the database: the store keeps only a per-round salted
  HMAC of it, so a device's reports cannot be linked across questions.
* ``/auth/login`` is the instructor's login form (the key goes by POST, never in
  a URL); ``/auth/login?token=...`` spends a one-time login link. Either starts
  a server-side session (:mod:`classroom.auth`) held in an HttpOnly cookie.
  Failed attempts are limited per network address and logged (without it).
  ``/auth/logout`` ends this browser's session, or every session.
* The network address is the connection's, or the one forwarded by a proxy
  uvicorn trusts: ``FORWARDED_ALLOW_IPS`` in the server's environment (uvicorn's
  own setting; by default only 127.0.0.1 and ::1, a proxy on the same machine).
* At start the server prints the student join address and a one-time login link.
"""

from __future__ import annotations

import base64
import hashlib
import html
import logging
import math
import secrets
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qsl, quote

from limits import RateLimitItemPerMinute
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from . import auth
from .domain import ClassroomError

__all__ = ["DEVICE_COOKIE", "LOGIN_FAILURES_PER_MINUTE", "SECURITY_HEADERS", "AppMiddleware",
           "AuthApi", "banner", "json_depth", "make_lifespan", "make_routes", "middleware",
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
    * every response carries :data:`SECURITY_HEADERS`;
    * every response has at most one ``Vary`` header, each value once: Streamlit's own
      gzip layer and the app's (:func:`middleware`) each add ``Accept-Encoding``, and a
      route may name it too. This middleware is the outermost, so it sees them all.
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
                _merge_vary(headers)
                for name, value in SECURITY_HEADERS:
                    if name.decode() not in headers:
                        headers.raw.append((name, value))
                if cookie is not None:
                    headers.raw.append((b"set-cookie", cookie.encode("latin-1")))
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _merge_vary(headers: MutableHeaders) -> None:
    """One ``Vary`` header listing each value once, in the order first named (case
    kept; compared case-insensitively, as header names are).

    >>> h = MutableHeaders(raw=[(b"vary", b"Accept-Encoding"),
    ...                         (b"vary", b"accept-encoding, Cookie")])
    >>> _merge_vary(h); h.getlist("vary")
    ['Accept-Encoding, Cookie']
    """
    values = headers.getlist("vary")
    if len(values) < 2 and not any("," in v for v in values):
        return
    seen: dict[str, str] = {}
    for value in values:
        for item in value.split(","):
            name = item.strip()
            if name:
                seen.setdefault(name.lower(), name)
    del headers["vary"]
    headers["Vary"] = ", ".join(seen.values())


def json_depth(value: object) -> int:
    """Nesting depth of parsed JSON, without recursion (a crafted document cannot
    exhaust the stack).

    >>> json_depth({"a": [1, {"b": []}]}), json_depth(3)
    (4, 1)
    """
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
    return deepest


def _device_cookie(*, secure: bool) -> str:
    response = Response()
    response.set_cookie(DEVICE_COOKIE, secrets.token_urlsafe(24), max_age=_YEAR,
                        httponly=True, samesite="lax", secure=secure)
    return response.headers["set-cookie"]


def middleware() -> list[Middleware]:
    """The app's middleware, outermost first: :class:`AppMiddleware` (it sees every
    header, so it can merge the ``Vary`` headers the gzip layers add), then gzip for every
    response (Streamlit's static JS included, which Streamlit's own gzip layer skips)."""
    return [Middleware(AppMiddleware), Middleware(GZipMiddleware, minimum_size=500)]


# -- instructor login ----------------------------------------------------------------------
#: Wrong keys (or spent links) one network address may try per minute.
LOGIN_FAILURES_PER_MINUTE = 10
_MAX_FORM_BYTES = 2048
_LOG = logging.getLogger(__name__)

_PAGE_CSS = ("body{font:18px/1.5 system-ui,sans-serif;max-width:30rem;margin:3rem auto;"
             "padding:0 1rem;color:#1b1b1f}h1{font-size:1.6rem}label{display:block;"
             "font-weight:600;margin:1rem 0 .3rem}input{font:inherit;width:100%;"
             "box-sizing:border-box;padding:.5rem;border:2px solid #555;border-radius:6px}"
             "button{font:inherit;margin-top:1rem;padding:.5rem 1.2rem;border-radius:6px;"
             "border:2px solid #1d4ed8;background:#1d4ed8;color:#fff;cursor:pointer}"
             "button.plain{background:#fff;color:#1d4ed8}.msg{padding:.6rem .8rem;"
             "border-radius:6px;background:#fff4e5;border:1px solid #b45309}"
             ".ok{background:#ecfdf3;border-color:#15803d}a{color:#1d4ed8}")
#: The login pages run no script; their one style block is allowed by its hash.
LOGIN_CSP = ("default-src 'none'; style-src 'sha256-"
             + base64.b64encode(hashlib.sha256(_PAGE_CSS.encode()).digest()).decode()
             + "'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    doc = (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
           f'<meta name="viewport" content="width=device-width, initial-scale=1">'
           f'<title>{html.escape(title)} · LDP classroom</title>'
           f'<link rel="icon" href="/favicon.svg" type="image/svg+xml">'
           f'<style>{_PAGE_CSS}</style></head><body><main>'
           f'<h1>{html.escape(title)}</h1>{body}</main></body></html>')
    return HTMLResponse(doc, status_code=status,
                        headers={"Cache-Control": "no-store", "Content-Security-Policy": LOGIN_CSP})


def _login_form(message: str = "", *, ok: bool = False, status: int = 200) -> HTMLResponse:
    note = (f'<p class="msg{" ok" if ok else ""}" role="{"status" if ok else "alert"}">'
            f'{html.escape(message)}</p>' if message else "")
    return _page("Instructor login", note + (
        '<form method="post" action="/auth/login">'
        '<label for="key">Instructor key</label>'
        '<input id="key" name="key" type="password" autocomplete="current-password" '
        'required autofocus>'
        '<button type="submit">Log in</button></form>'
        '<p>The key is printed in the terminal where the app was started, or set with '
        '<code>LDP_CLASSROOM_INSTRUCTOR_KEY</code>. The start-up message also has a login '
        'link that works once, for 15 minutes.</p><p><a href="/">Back to the home page</a></p>'),
        status)


def _database_down() -> HTMLResponse:
    return _login_form("The class server cannot reach its database right now, so nobody "
                       "can log in. Try again in a moment.", status=503)


def _same_origin(request: Request) -> bool:
    origin = request.headers.get("origin")
    proto = request.headers.get("x-forwarded-proto", request.url.scheme).split(",")[0].strip()
    return bool(origin) and origin == f"{proto}://{request.headers.get('host', '')}"


async def _form(request: Request) -> dict[str, str]:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > _MAX_FORM_BYTES:
            return {}
    try:
        return dict(parse_qsl(body.decode("utf-8"), max_num_fields=4))
    except (UnicodeDecodeError, ValueError):
        return {}


class AuthApi:
    """The login, logout and session routes, around one :class:`~classroom.auth.InstructorAuth`
    (built on first use from the factory, so tests can pass their own)."""

    def __init__(self, auth_factory: Callable[[], auth.InstructorAuth]) -> None:
        self._factory = auth_factory
        self._auth: auth.InstructorAuth | None = None
        self._failures = MovingWindowRateLimiter(MemoryStorage())
        self._failure_rate = RateLimitItemPerMinute(LOGIN_FAILURES_PER_MINUTE)

    @property
    def auth(self) -> auth.InstructorAuth:
        if self._auth is None:
            self._auth = self._factory()
        return self._auth

    def _logged_in(self, request: Request, session_id: str) -> Response:
        response = RedirectResponse("/dashboard", status_code=303)
        response.set_cookie(auth.INSTRUCTOR_COOKIE, session_id, max_age=auth.SESSION_TTL_S,
                            httponly=True, samesite="strict", secure=_secure(request))
        response.headers["Cache-Control"] = "no-store"
        return response

    def _slow_down(self, address: str) -> Response | None:
        if self._failures.test(self._failure_rate, address):
            return None
        reset = self._failures.get_window_stats(self._failure_rate, address).reset_time
        wait = max(1, math.ceil(reset - time.time()))
        form = _login_form(f"Too many failed logins from this network. Wait {wait} s, then "
                           "type the key again.", status=429)
        form.headers["Retry-After"] = str(wait)
        return form

    def _failed(self, address: str, what: str) -> None:
        self._failures.hit(self._failure_rate, address)
        _LOG.warning("instructor login refused: %s", what)

    async def login_page(self, request: Request) -> Response:
        address = _client(request)
        if "key" in request.query_params:  # an old link: the key must not travel in URLs
            return _login_form("Login links no longer carry the key. Type the key here, "
                               "or use the one-time link printed when the app started.")
        token = request.query_params.get("token")
        if token is None:
            return _login_form()
        refused = self._slow_down(address)
        if refused is not None:
            return refused
        try:
            session_id = await run_in_threadpool(self.auth.redeem_link, token)
        except ClassroomError:
            return _database_down()
        if session_id is None:
            self._failed(address, "a login link that is invalid, expired or already used")
            return _login_form("This login link has already been used or has expired (a "
                               "link works once, for 15 minutes). Type the key instead.",
                               status=403)
        return self._logged_in(request, session_id)

    async def login(self, request: Request) -> Response:
        if not _same_origin(request):
            return _login_form("Log in from this page itself.", status=403)
        address = _client(request)
        refused = self._slow_down(address)
        if refused is not None:
            return refused
        key = (await _form(request)).get("key", "")
        try:
            session_id = await run_in_threadpool(self.auth.log_in, key)
        except ClassroomError:
            return _database_down()
        if session_id is None:
            self._failed(address, "wrong instructor key")
            return _login_form("That key is not right. The key is printed in the terminal "
                               "where the app was started.", status=403)
        return self._logged_in(request, session_id)

    async def logout_page(self, request: Request) -> Response:
        return _page("Log out", (
            '<form method="post" action="/auth/logout">'
            '<button type="submit">Log out on this browser</button></form>'
            '<form method="post" action="/auth/logout">'
            '<input type="hidden" name="everywhere" value="1">'
            '<button type="submit" class="plain">Log out everywhere</button></form>'
            '<p>"Everywhere" ends every instructor login on every browser, for example '
            'one left open on a lecture-hall computer.</p>'
            '<p><a href="/dashboard">Back to the dashboard</a></p>'))

    async def logout(self, request: Request) -> Response:
        if not _same_origin(request):
            return _page("Log out", '<p class="msg" role="alert">Log out from the app\'s own '
                         'page: <a href="/auth/logout">Log out</a>.</p>', status=403)
        form = await _form(request)
        session_id = request.cookies.get(auth.INSTRUCTOR_COOKIE)
        message = "You are logged out on this browser."
        try:
            if form.get("everywhere") == "1" and await run_in_threadpool(self.auth.is_valid,
                                                                         session_id):
                ended = await run_in_threadpool(self.auth.end_all)
                message = f"Every instructor login has ended ({ended} in all)."
                _LOG.warning("instructor: every session was ended (%d)", ended)
            else:
                await run_in_threadpool(self.auth.end, session_id)
        except ClassroomError:
            response: Response = _login_form(
                "The class server cannot reach its database, so the login could not be "
                "ended there; this browser forgot it. Try again in a moment.", status=503)
        else:
            response = _login_form(message, ok=True)
        response.delete_cookie(auth.INSTRUCTOR_COOKIE, httponly=True, samesite="strict",
                               secure=_secure(request))
        return response


def _client(request: Request) -> str:
    """The request's network address: the connection's, or, from a proxy uvicorn trusts
    (``FORWARDED_ALLOW_IPS``), the one it forwarded."""
    return request.client.host if request.client else "unknown"


def _default_auth() -> auth.InstructorAuth:
    from . import config
    from .store import Store

    return auth.InstructorAuth(Store(config.database_url()))


def make_routes(api: AuthApi) -> list[Route]:
    return [Route("/auth/login", api.login_page, methods=["GET", "HEAD"]),
            Route("/auth/login", api.login, methods=["POST"]),
            Route("/auth/logout", api.logout_page, methods=["GET", "HEAD"]),
            Route("/auth/logout", api.logout, methods=["POST"])]


#: The routes app.py registers: one AuthApi per process, on the configured database.
routes = make_routes(AuthApi(_default_auth))


def _lan_address() -> str | None:
    """This machine's address on the local network (no packet is sent)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: routing lookup only
            return s.getsockname()[0]
    except OSError:
        return None


def banner(address: str | None, port: int, public_url: str | None, login_token: str,
           key_source: str) -> str:
    """The start-up message: where students join and how the instructor logs in (a
    one-time link, and where the key is; never the key itself)."""
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
            lines.append("  (only this computer can reach it; for phones in the room start "
                         "without --server.address, or with --server.address 0.0.0.0)")
    lines.append(f"  Instructor login link: {base}/auth/login?token={login_token}")
    lines.append(f"  (works once, for {auth.LOGIN_LINK_TTL_S // 60} minutes; then log in at "
                 f"{base}/auth/login with the instructor key: {key_source})")
    lines.append("")
    return "\n".join(lines)


def _check_database(config: Any) -> None:
    """Open the configured database once, so a wrong URL, an unreachable server or an
    unwritable SQLite directory stops the start with a message naming the setting (password
    masked) and the path, instead of surfacing on the first student's phone."""
    from .store import Store

    Store(config.database_url()).close()


def make_lifespan(listening: Callable[[], tuple[str | None, int]]) -> Callable[[Any], Any]:
    """The app's lifespan: check the settings and the database, then print the banner.

    ``listening()`` gives the address and port the server listens on (the web server's
    own settings, read when the app starts).
    """

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        from . import config

        try:
            key = auth.instructor_key()
            _check_database(config)
            config.max_reports_per_address()  # a malformed setting stops the start, said why
            address, port = listening()
            print(banner(address, port, config.public_base_url(), auth.login_link_token(key),
                         auth.key_source()), file=sys.stderr, flush=True)
        except Exception as exc:
            print(f"\n  LDP classroom cannot start: {exc}\n", file=sys.stderr, flush=True)
            raise SystemExit(2) from exc
        yield None

    return lifespan
