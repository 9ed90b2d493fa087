"""The instructor's login and logout pages (plain HTML, no script, no Streamlit session).

* ``/auth/login`` is the instructor's login form (the key goes by POST, never in
  a URL); ``/auth/login?token=...`` spends a one-time login link. Either starts
  a server-side session (:mod:`classroom.auth`) held in an HttpOnly cookie.
  Wrong keys count against the browser that types them (its device cookie, else its
  network address), and a network address only far above what anyone but a guesser
  sends (:data:`LOGIN_GUESSES`); then the address's new browsers share a small allowance
  that fresh cookies do not reset. Each is logged, without the address. A valid one-time
  link is never refused: it cannot be guessed.
* ``/auth/logout`` ends this browser's session, or every session.
* The network address is the connection's, or the one forwarded by a proxy
  uvicorn trusts: ``FORWARDED_ALLOW_IPS`` in the server's environment (uvicorn's
  own setting; by default only 127.0.0.1 and ::1, a proxy on the same machine).
"""

from __future__ import annotations

import base64
import hashlib
import html
import logging
from collections.abc import Callable
from urllib.parse import parse_qsl

from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from classroom import auth
from classroom.domain import ClassroomError, DiskFull, StoreUnavailable

from .edge import visitor
from .errors import ERRORS, ErrorTable, HttpError
from .http import client_address, is_secure, same_origin
from .limits import Device, Guesses, GuessRule, Wait

__all__ = ["INSTRUCTOR_COOKIE", "LOGIN_CSP", "LOGIN_ERRORS", "LOGIN_FAILURES_PER_ADDRESS",
           "LOGIN_FAILURES_PER_MINUTE", "LOGIN_FRESH_PER_ADDRESS", "LOGIN_GUESSES",
           "LOGOUT_ERRORS", "AuthApi", "make_routes"]

#: The cookie holding an instructor's session id (HttpOnly, SameSite=Strict).
INSTRUCTOR_COOKIE = "ldp_instructor"

#: Wrong keys (or spent links) one browser (its device cookie, else its network address)
#: may try per minute.
LOGIN_FAILURES_PER_MINUTE = 10
#: Wrong keys per minute from one network address, all its browsers together, that put it
#: under attack: then only browsers that did not guess (or that logged in before) may try
#: (web.limits.Guesses). Nobody in a lecture hall but the instructor logs in.
LOGIN_FAILURES_PER_ADDRESS = 30
#: Under attack, the wrong keys a minute that all new browsers of the address may send
#: together: a fresh cookie resets nothing, so a guesser gets about 32 keys a minute per
#: address, not one per cookie. A browser that logged in before, and the one-time link,
#: are let through.
LOGIN_FRESH_PER_ADDRESS = 2
LOGIN_GUESSES = GuessRule("login", LOGIN_FAILURES_PER_MINUTE, LOGIN_FAILURES_PER_ADDRESS,
                          fresh_per_address=LOGIN_FRESH_PER_ADDRESS)
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
             ".ok{background:#ecfdf3;border-color:#15803d}a{color:#1d4ed8}"
             # The focus ring, as on the phone page: amber, 5:1 on white (WCAG 2.4.7).
             ":focus-visible{outline:3px solid #b45309;outline-offset:2px}")
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


#: Logging in stores a session (or spends a link): what the form says when it cannot.
LOGIN_ERRORS = ERRORS.but({
    StoreUnavailable: HttpError(503, "unavailable", "The class server cannot reach its "
                                "database right now, so nobody can log in. Try again in a "
                                "moment."),
    DiskFull: HttpError(503, "disk_full", "The class server's disk is full, so no new login "
                        "can be saved. Free some space on it, then log in again; a browser "
                        "already logged in stays logged in."),
})
#: Logging out deletes sessions: the browser forgets its own in any case.
LOGOUT_ERRORS = ERRORS.but({
    StoreUnavailable: HttpError(503, "unavailable", "The class server cannot reach its "
                                "database, so the login could not be ended there; this "
                                "browser forgot it. Try again in a moment."),
    DiskFull: HttpError(503, "disk_full", "The class server's disk is full, so the login "
                        "could not be ended there; this browser forgot it. Free some space "
                        "on the server, then log out again."),
})


def _refused(table: ErrorTable, request: Request, exc: Exception) -> HTMLResponse:
    """The login form with the table's sentence for ``exc``, under its status."""
    answer = table.resolve(exc)
    return _login_form(answer.text(request, exc), status=answer.status)


_CUT_OFF = ("The form did not arrive whole (the connection closed while it was being "
            "sent), so nothing was done. Try again.")


async def _form(request: Request) -> dict[str, str] | None:
    """The posted form's fields (an oversized or unreadable form reads as none), or None
    when the connection closed before the whole form arrived."""
    body = b""
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > _MAX_FORM_BYTES:
                return {}
    except ClientDisconnect:
        _LOG.warning("a login form's connection closed before its body arrived; nothing "
                     "was done")
        return None
    try:
        return dict(parse_qsl(body.decode("utf-8"), max_num_fields=4))
    except (UnicodeDecodeError, ValueError):
        return {}


class AuthApi:
    """The login, logout and session routes, around the process's
    :class:`~classroom.auth.InstructorAuth`: ``auth_factory()`` gives it on first use (the
    composition root's, built at start; tests pass their own)."""

    def __init__(self, auth_factory: Callable[[], auth.InstructorAuth]) -> None:
        self._factory = auth_factory
        self._auth: auth.InstructorAuth | None = None

    @property
    def auth(self) -> auth.InstructorAuth:
        if self._auth is None:
            self._auth = self._factory()
        return self._auth

    def _logged_in(self, request: Request, session_id: str) -> Response:
        response = RedirectResponse("/dashboard", status_code=303)
        response.set_cookie(INSTRUCTOR_COOKIE, session_id, max_age=auth.SESSION_TTL_S,
                            httponly=True, samesite="strict", secure=is_secure(request))
        response.headers["Cache-Control"] = "no-store"
        return response

    @staticmethod
    def _guesser(request: Request) -> tuple[Guesses, Device | None, str]:
        """The login guesses of this request's browser, its device and its address."""
        seen = visitor(request)
        return Guesses(seen.edge.limits, LOGIN_GUESSES), seen.device, client_address(request)

    @staticmethod
    def _slow_down(wait: Wait) -> Response:
        form = _login_form(wait.sentence(too_many="Too many failed logins from here",
                                         wrong="keys", then="type the key again")
                           + " A browser that logged in here before, and the one-time login "
                           "link printed when the app started, still work.", status=429)
        form.headers["Retry-After"] = str(wait.seconds)
        return form

    async def login_page(self, request: Request) -> Response:
        if "key" in request.query_params:  # an old link: the key must not travel in URLs
            return _login_form("Login links no longer carry the key. Type the key here, "
                               "or use the one-time link printed when the app started.")
        token = request.query_params.get("token")
        if token is None:
            return _login_form()
        guesses, device, address = self._guesser(request)
        wait = guesses.refused(device, address, "")
        try:  # a valid link is signed with the key: it cannot be guessed, so never refused
            session_id = await run_in_threadpool(self.auth.redeem_link, token)
        except ClassroomError as exc:
            return _refused(LOGIN_ERRORS, request, exc)
        if session_id is None:
            guesses.missed(device, address)
            _LOG.warning("instructor login refused: a login link that is invalid, expired or "
                         "already used")
            if wait is not None:
                return self._slow_down(wait)
            return _login_form("This login link has already been used or has expired (a "
                               "link works once, for 15 minutes). Type the key instead.",
                               status=403)
        guesses.found(device, "")
        return self._logged_in(request, session_id)

    async def login(self, request: Request) -> Response:
        if not same_origin(request):
            return _login_form("Log in from this page itself.", status=403)
        guesses, device, address = self._guesser(request)
        wait = guesses.refused(device, address, "")
        if wait is not None:
            return self._slow_down(wait)
        form = await _form(request)
        if form is None:  # not a guess: nothing was typed that arrived
            return _login_form(_CUT_OFF, status=400)
        try:
            session_id = await run_in_threadpool(self.auth.log_in, form.get("key", ""))
        except ClassroomError as exc:
            return _refused(LOGIN_ERRORS, request, exc)
        if session_id is None:
            guesses.missed(device, address)
            _LOG.warning("instructor login refused: wrong instructor key")
            return _login_form("That key is not right. The key is printed in the terminal "
                               "where the app was started.", status=403)
        guesses.found(device, "")
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
        if not same_origin(request):
            return _page("Log out", '<p class="msg" role="alert">Log out from the app\'s own '
                         'page: <a href="/auth/logout">Log out</a>.</p>', status=403)
        form = await _form(request)
        if form is None:
            return _page("Log out", f'<p class="msg" role="alert">{_CUT_OFF}</p>', status=400)
        session_id = request.cookies.get(INSTRUCTOR_COOKIE)
        message = "You are logged out on this browser."
        try:
            if form.get("everywhere") == "1" and await run_in_threadpool(self.auth.is_valid,
                                                                         session_id):
                ended = await run_in_threadpool(self.auth.end_all)
                message = f"Every instructor login has ended ({ended} in all)."
                _LOG.warning("instructor: every session was ended (%d)", ended)
            else:
                await run_in_threadpool(self.auth.end, session_id)
        except ClassroomError as exc:
            response: Response = _refused(LOGOUT_ERRORS, request, exc)
        else:
            response = _login_form(message, ok=True)
        response.delete_cookie(INSTRUCTOR_COOKIE, httponly=True, samesite="strict",
                               secure=is_secure(request))
        return response


def make_routes(api: AuthApi) -> list[Route]:
    return [Route("/auth/login", api.login_page, methods=["GET", "HEAD"]),
            Route("/auth/login", api.login, methods=["POST"]),
            Route("/auth/logout", api.logout_page, methods=["GET", "HEAD"]),
            Route("/auth/logout", api.logout, methods=["POST"])]
