"""The middleware around every request, Streamlit's own included.

* Every response is gzip-compressed when large enough and carries
  ``Referrer-Policy: same-origin``, ``X-Content-Type-Options: nosniff`` and at
  most one ``Vary`` header.
* Old join links ``/?poll=CODE`` redirect to the phone page ``/join/CODE``.
* Every HTML response to a browser without one gets an HttpOnly
  ``ldp_device`` cookie holding a random device id. The websocket's opening
  request carries it back, so pages read it through ``st.context.cookies``.
  The id never reaches the database: the store keeps only a per-round salted
  HMAC of it, so a device's reports cannot be linked across questions.
"""

from __future__ import annotations

import secrets
from urllib.parse import quote

from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .http import is_secure

__all__ = ["DEVICE_COOKIE", "SECURITY_HEADERS", "AppMiddleware", "middleware"]

DEVICE_COOKIE = "ldp_device"
_YEAR = 365 * 24 * 3600

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
            cookie = _device_cookie(secure=is_secure(request))

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
