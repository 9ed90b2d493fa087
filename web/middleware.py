"""The middleware around every request, Streamlit's own (pages, static files, the
websocket) included.

* A request whose ``Host`` is not the app's own is refused (:mod:`web.hosts`).
* An IPv4 client seen on a dual-stack socket is read as its IPv4 address, so a proxy
  on this machine is believed as FORWARDED_ALLOW_IPS says (:meth:`Edge.unmap_client`).
* The device cookie is checked once (:mod:`web.devices`) and the result left for the
  routes (:func:`web.edge.visitor`).
* Every response is gzip-compressed when large enough and carries
  :data:`SECURITY_HEADERS` (``Referrer-Policy: same-origin``,
  ``X-Content-Type-Options: nosniff``, and no framing by any page:
  ``X-Frame-Options: DENY`` and ``Content-Security-Policy: frame-ancestors 'none'``)
  and at most one ``Vary`` header: Streamlit's pages and static files, redirects and
  errors included. An exception that escapes a route becomes a 500 with a sentence
  and the same headers (the traceback still goes to the log: it is a bug).
* Old join links ``/?poll=CODE`` redirect to the phone page ``/join/CODE``.
* The student's phone path (``direct``: the phone page, its favicon and its JSON API)
  goes from here straight to its own routes, past the layers below that it does not
  use (the gzip layers, Streamlit's path check, its session cookie and its router, which
  lists Streamlit's own routes after the app's): each of those costs every phone request
  CPU, and a lecture hall sends thousands at once. The phone routes compress the one
  large thing they send (the page) themselves, once.
* A page load (``Accept: text/html``) without a valid ``ldp_device`` cookie gets one,
  HttpOnly, signed by the app, holding a random device id; one older than a minute is
  renewed (same id). The websocket's opening request carries it back. The id never
  reaches the database: the store keeps only a per-round salted HMAC of it, so a
  device's reports cannot be linked across questions.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote

from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import PlainTextResponse, RedirectResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .devices import DEVICE_COOKIE
from .edge import Edge, Visitor
from .hosts import host_name
from .http import client_address, is_secure
from .limits import Device
from .serving import ServerLimits

__all__ = ["DEVICE_COOKIE", "NO_FRAMING", "SAME_ORIGIN_FRAMING", "SECURITY_HEADERS",
           "AppMiddleware", "middleware"]

#: Sent with every HTTP response of the app, Streamlit's pages, redirects and errors
#: included, with the framing headers below.
SECURITY_HEADERS = ((b"referrer-policy", b"same-origin"),
                    (b"x-content-type-options", b"nosniff"))
#: No page may be framed: a page on another origin (even another port of the same host)
#: that frames the dashboard could make the instructor click its buttons. Added beside a
#: response's own Content-Security-Policy when that one does not say who may frame it
#: (browsers enforce every CSP header a response carries).
NO_FRAMING = ((b"x-frame-options", b"DENY"),
              (b"content-security-policy", b"frame-ancestors 'none'"))
#: The same for a deployment that frames the app from its own origin (Streamlit
#: Community Cloud's page does; LDP_CLASSROOM_FRAME_ANCESTORS=self).
SAME_ORIGIN_FRAMING = ((b"x-frame-options", b"SAMEORIGIN"),
                       (b"content-security-policy", b"frame-ancestors 'self'"))
_ERROR_500 = (b"Something went wrong on the class server. Reload the page; if it happens "
              b"again, tell the instructor.")


class AppMiddleware:
    """Pure ASGI middleware (no per-response stream wrapping) for every request:

    * a ``Host`` that is not the app's own gets ``421`` (a websocket is closed before it
      opens), before anything else runs;
    * ``GET /?poll=CODE`` (printed links and QR codes) answers 303 to ``/join/CODE``,
      the phone page;
    * a browser loading a page without a valid device cookie gets one (keyed on the
      request's ``Accept``, not the response: a revalidated page comes back as 304
      without a content type), within the rate per address of :mod:`web.devices`;
    * every response carries :data:`SECURITY_HEADERS` and refuses framing
      (:data:`NO_FRAMING`), the redirect above, a refused host and a 500 included;
    * every response has at most one ``Vary`` header, each value once: Streamlit's own
      gzip layer and the app's (:func:`middleware`) each add ``Accept-Encoding``, and a
      route may name it too. This middleware is the outermost, so it sees them all.

    ``edge`` is the process's :class:`~web.edge.Edge`, or a function giving it on first
    use (the composition root's, built when the server starts). ``direct``, if given, is
    ``(wants, app)``: an HTTP request whose path ``wants`` accepts goes to ``app`` (with
    everything above: host check, device cookie, headers) instead of the inner layers.
    """

    def __init__(self, app: ASGIApp, edge: Edge | Callable[[], Edge],
                 direct: tuple[Callable[[str], bool], ASGIApp] | None = None) -> None:
        self.app = app
        self._edge = edge if callable(edge) else (lambda: edge)
        self._direct = direct

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        edge = self._edge()
        await edge.unmap_client(scope)
        connection = HTTPConnection(scope)
        hosts = connection.headers.getlist("host")
        host = hosts[0] if hosts else None
        if len(hosts) > 1 or not edge.hosts.allows(host):  # two Host headers: never a browser
            await _refuse_host(scope, receive, send, host)
            return
        raw = connection.cookies.get(DEVICE_COOKIE)
        device = edge.devices.read(raw)
        Visitor(edge, device, raw is not None).place(scope)
        if scope["type"] == "websocket":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        cookie: str | None = None
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                _add_headers(MutableHeaders(scope=message), cookie, edge.framing)
            await send(message)

        if scope["path"] == "/" and "poll" in request.query_params:
            code = quote(request.query_params["poll"].strip()[:32], safe="")
            await RedirectResponse(f"/join/{code}", status_code=303)(scope, receive,
                                                                     send_with_headers)
            return
        cookie = _device_cookie(edge, device, request)
        inner = self.app
        if self._direct is not None and self._direct[0](scope["path"]):
            inner = self._direct[1]
        try:
            await inner(scope, receive, send_with_headers)
        except Exception:
            if not started:  # the browser gets a sentence, with the headers of every answer
                await PlainTextResponse(_ERROR_500, status_code=500)(scope, receive,
                                                                     send_with_headers)
            raise  # logged by the server: an exception that reaches here is a bug


def _device_cookie(edge: Edge, device: Device | None, request: Request) -> str | None:
    """A fresh device cookie when a page (not Streamlit's own paths) is loaded and the
    device's is due; None otherwise."""
    scope = request.scope
    if (scope["method"] in ("GET", "HEAD") and edge.devices.due(device)
            and "text/html" in request.headers.get("accept", "")
            and not scope["path"].startswith("/_stcore/")):
        return edge.devices.issue(device, client_address(request), secure=is_secure(request))
    return None


async def _refuse_host(scope: Scope, receive: Receive, send: Send, host: str | None) -> None:
    """Another site's name in ``Host``: a DNS-rebinding page, or a wrong address."""
    if scope["type"] == "websocket":
        await receive()  # the opening handshake (websocket.connect), then the refusal
        await send({"type": "websocket.close", "code": 1008})
        return
    name = host_name(host) or "that name"

    async def with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            _add_headers(MutableHeaders(scope=message), None)
        await send(message)

    text = (f"This class server does not answer to the name {name[:100]}. Open the class "
            "at the address on the projector (or scan its QR code).")
    await PlainTextResponse(text, status_code=421)(scope, receive, with_headers)


def _add_headers(headers: MutableHeaders, cookie: str | None, framing: str = "'none'") -> None:
    """What every response carries: one ``Vary``, the security headers, the framing rule
    (``'none'``; ``'self'`` where the settings allow it, which then also stands in the
    pages' own policies; a CSP of the response's own that says nothing of framing gets a
    second one that does), and a new device cookie where one is due."""
    _merge_vary(headers)
    (frame_options, frame_policy) = NO_FRAMING if framing == "'none'" else SAME_ORIGIN_FRAMING
    for name, value in (*SECURITY_HEADERS, frame_options):
        if name.decode() not in headers:
            headers.raw.append((name, value))
    policies = headers.raw
    said = False
    for i, (name, value) in enumerate(policies):
        if name.lower() == b"content-security-policy" and b"frame-ancestors" in value:
            said = True
            if framing != "'none'":
                policies[i] = (name, value.replace(b"frame-ancestors 'none'",
                                                   b"frame-ancestors " + framing.encode()))
    if not said:
        policies.append(frame_policy)
    if cookie is not None:
        headers.raw.append((b"set-cookie", cookie.encode("latin-1")))


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


def middleware(edge: Edge | Callable[[], Edge],
               direct: tuple[Callable[[str], bool], ASGIApp] | None = None
               ) -> list[Middleware]:
    """The app's middleware, outermost first: :class:`~web.serving.ServerLimits` (the web
    server's own limits, applied when it starts), :class:`AppMiddleware` on ``edge`` (it
    sees every header, so it can merge the ``Vary`` headers the gzip layers add; the
    paths of ``direct`` go from there to its app), then gzip for every response
    (Streamlit's static JS included, which Streamlit's own gzip layer skips)."""
    return [Middleware(ServerLimits), Middleware(AppMiddleware, edge=edge, direct=direct),
            Middleware(GZipMiddleware, minimum_size=500)]
