"""Limits of the web server itself, for a laptop or VM with no proxy in front.

``streamlit run app.py`` builds a uvicorn server with Streamlit's own settings (TLS,
websocket pings and sizes) and none of uvicorn's HTTP limits, and offers no option to
add them. Out of the box, that server

* waits for a request's headers forever: a client that opens connections and sends a
  header line now and then (slowloris) keeps each one open, and with it a file
  descriptor; with 1,024 open files, 1,100 such connections from one client made every
  phone's request fail;
* keeps an unfinished header in memory however long it gets (httptools, uvicorn's fast
  parser, has no limit): one 300 MB header added 445 MB to the server;
* waits for a request's body forever.

uvicorn's ``limit_concurrency`` does not help here: it answers 503 to every new
request once that many connections are open, so slow clients holding connections would
stop the phones all the more. What this module does instead, measured in
docs/deployment.md:

* :class:`ServerLimits`, the outermost middleware, sees the ASGI lifespan startup before
  the server accepts its first connection. Through the lifespan's ``receive`` it reaches
  the uvicorn ``Config`` the server was built with (the one place ``streamlit run``
  leaves), raises the process's open-file limit to its hard limit, and installs
  :func:`guarded` in place of uvicorn's HTTP protocol, which reads ``Config`` per
  connection. It prints what it applied under the start-up banner, or why it could not.
* The guarded protocol (uvicorn's httptools protocol, plus):
  - a request's headers must arrive within :data:`HEADER_TIMEOUT_S` of the connection
    opening (or of the previous response) and within :data:`MAX_HEADER_BYTES`: else
    ``408`` or ``431``, and the connection is closed;
  - a body must keep arriving: :data:`BODY_IDLE_TIMEOUT_S` without a byte (while the
    app is reading) closes the connection, and the app sees the client gone;
  - at most :func:`connection_cap` connections are open at once, well below the
    open-file limit. A new connection beyond it closes the oldest connection that has
    not sent a whole request yet (a slow client's), else the oldest idle keep-alive
    connection, and only when every connection is busy with a request, itself. No
    address may hold more than :data:`PENDING_PER_ADDRESS` connections that have not
    sent a whole request: beyond that its oldest such connection is closed. A phone's
    connection sends its request within milliseconds, so it is never the oldest.
"""

from __future__ import annotations

import asyncio
import resource
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn import Config

__all__ = ["BODY_IDLE_TIMEOUT_S", "HEADER_TIMEOUT_S", "MAX_CONNECTIONS", "MAX_HEADER_BYTES",
           "PENDING_PER_ADDRESS", "ServerLimits", "connection_cap", "guarded",
           "raise_open_files"]

#: A request's headers must be complete within this long (Apache's mod_reqtimeout starts
#: at 20 s; a phone on a weak Wi-Fi sends its few hundred bytes in well under a second).
HEADER_TIMEOUT_S = 20.0
#: Headers larger than this are refused (h11's default, uvicorn's other parser; the
#: app's own requests, cookies included, send about 1 KB).
MAX_HEADER_BYTES = 16 * 1024
#: A body that stops arriving for this long (while the app waits for it) is given up.
BODY_IDLE_TIMEOUT_S = 20.0
#: Connections open at once, at most (each waiting phone holds one; a lecture hall of
#: 1,500 and its dashboards need about 2,000).
MAX_CONNECTIONS = 10_000
#: Open files kept for everything else: the database's connections, Streamlit's files,
#: logs, the listening socket.
RESERVED_FILES = 256
#: Connections one address may hold that have not sent a whole request yet.
PENDING_PER_ADDRESS = 256


def raise_open_files() -> tuple[int, int]:
    """Raise this process's open-file limit to its hard limit (allowed without
    privileges); return the (soft, hard) limits now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1_048_576)
    if soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            pass  # some platforms refuse; the cap below follows what is in force
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def connection_cap(open_files: int) -> int:
    """Connections allowed at once under an open-file limit of ``open_files``."""
    return max(64, min(MAX_CONNECTIONS, open_files - RESERVED_FILES))


@dataclass
class _Registry:
    """The connections of one server that have not sent a whole request: strangers
    (nothing yet) and idle keep-alive ones, oldest first, and per address."""

    cap: int
    strangers: dict[Any, None] = field(default_factory=dict)
    idle: dict[Any, None] = field(default_factory=dict)
    by_address: dict[str, dict[Any, None]] = field(default_factory=dict)

    def waiting(self, conn: Any, *, stranger: bool) -> None:
        (self.strangers if stranger else self.idle)[conn] = None
        if stranger:
            self.by_address.setdefault(conn.address, {})[conn] = None

    def busy(self, conn: Any) -> None:
        self.strangers.pop(conn, None)
        self.idle.pop(conn, None)
        mine = self.by_address.get(conn.address)
        if mine is not None:
            mine.pop(conn, None)
            if not mine:
                del self.by_address[conn.address]

    def make_room(self, conn: Any, open_now: int) -> None:
        """Room for ``conn``, new: within its address's share, and within the cap."""
        mine = self.by_address.get(conn.address, {})
        if len(mine) > PENDING_PER_ADDRESS:
            _oldest(mine, but=conn).evict()
        if open_now > self.cap:
            for pool in (self.strangers, self.idle):
                if len(pool) > (conn in pool):
                    _oldest(pool, but=conn).evict()
                    return
            conn.evict()  # every other connection is busy with a request


def _oldest(pool: Iterable[Any], *, but: Any) -> Any:
    return next(c for c in pool if c is not but)


def guarded(base: type, cap: int) -> type:
    """uvicorn's httptools protocol ``base`` with the limits of this module."""
    registry = _Registry(cap)

    class Guarded(base):  # type: ignore[misc]  # a class chosen at run time
        _registry = registry

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            self.address = self.client[0] if self.client else ""
            self._timer: asyncio.TimerHandle | None = None
            self._reading_body = False
            self._answered_early = False
            self._await_headers(stranger=True)
            registry.make_room(self, len(self.connections))

        # -- the states a connection goes through --------------------------------------
        def _await_headers(self, *, stranger: bool) -> None:
            self._awaiting = True
            self._header_bytes = 0
            registry.waiting(self, stranger=stranger)
            self._arm(HEADER_TIMEOUT_S, self._headers_too_slow)

        def on_headers_complete(self) -> None:
            self._awaiting = False
            registry.busy(self)
            self._disarm()
            super().on_headers_complete()
            if _declares_body(self.headers) and not self.transport.is_closing():
                self._reading_body = True
                self._arm(BODY_IDLE_TIMEOUT_S, self._body_too_slow)

        def on_message_complete(self) -> None:
            if self._reading_body:
                self._reading_body = False
                self._disarm()
            super().on_message_complete()
            if self._answered_early:
                # The answer went out before the body ended (a 413 on the declared length):
                # the next request's headers start only now.
                self._answered_early = False
                self._next_request()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self._reading_body:
                self._answered_early = True  # the rest of this body is not the next headers
            else:
                self._next_request()

        def _next_request(self) -> None:
            if not self.transport.is_closing() and not self.pipeline and not self._awaiting:
                self._await_headers(stranger=False)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            registry.busy(self)
            super().connection_lost(exc)

        # -- reading -------------------------------------------------------------------
        def data_received(self, data: bytes) -> None:
            if self._awaiting:
                room = max(0, MAX_HEADER_BYTES - self._header_bytes)
                head, data = data[:room], data[room:]
                self._header_bytes += len(head)
                if head:
                    super().data_received(head)
                if not data:
                    return
                if self._awaiting:  # no end of the headers within the limit
                    self._refuse(b"431 Request Header Fields Too Large")
                    return
            elif self._reading_body:
                self._arm(BODY_IDLE_TIMEOUT_S, self._body_too_slow)
            super().data_received(data)

        # -- timers and refusals ---------------------------------------------------------
        def _arm(self, seconds: float, then: Any) -> None:
            self._disarm()
            self._timer = self.loop.call_later(seconds, then)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _headers_too_slow(self) -> None:
            self._timer = None
            if self._awaiting:
                self._refuse(b"408 Request Timeout")

        def _body_too_slow(self) -> None:
            self._timer = None
            if not self._reading_body:
                return
            if self.flow.read_paused:  # the app is not reading: not the client's fault
                self._arm(BODY_IDLE_TIMEOUT_S, self._body_too_slow)
            else:
                self.transport.close()  # the app sees the client gone

        def _refuse(self, status: bytes) -> None:
            """Close, answering ``status`` first to a request begun and not yet answered (an
            idle connection, or one that sent nothing, is just closed)."""
            if self.transport.is_closing():
                return
            if self._awaiting and self._header_bytes:
                self.transport.write(b"HTTP/1.1 " + status + b"\r\ncontent-length: 0\r\n"
                                     b"connection: close\r\n\r\n")
            self.transport.close()

        def evict(self) -> None:
            """Closed to make room for a new connection."""
            registry.busy(self)
            self._refuse(b"503 Service Unavailable")

    Guarded.__name__ = Guarded.__qualname__ = f"Guarded{base.__name__}"
    return Guarded


def _declares_body(headers: list[tuple[bytes, bytes]]) -> bool:
    for name, value in headers:
        if name == b"content-length":
            return value.strip() not in (b"", b"0")
        if name == b"transfer-encoding":
            return True
    return False


class ServerLimits:
    """Pure ASGI middleware, outermost: applies this module's limits to the uvicorn
    server when the lifespan starts, then passes every message through untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            print(apply(getattr(getattr(receive, "__self__", None), "config", None)),
                  file=sys.stderr, flush=True)
        await self.app(scope, receive, send)


def _httptools_protocol() -> type:
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # httptools not installed: uvicorn falls back to h11
        return type(None)
    return HttpToolsProtocol


def apply(config: Any) -> str:
    """Apply the limits to a uvicorn ``Config`` not yet serving; say what was done."""
    if not isinstance(config, Config):
        return ("  Server limits not applied (not served by uvicorn): put a proxy with "
                "header and body timeouts in front.")
    soft, _ = raise_open_files()
    cap = connection_cap(soft)
    protocol = getattr(config, "http_protocol_class", None)
    if not (isinstance(protocol, type) and issubclass(protocol, _httptools_protocol())):
        return (f"  Server limits not applied: uvicorn uses {getattr(protocol, '__name__', '?')}"
                ", not httptools (pip install -r requirements.txt); put a proxy in front.")
    config.http_protocol_class = guarded(protocol, cap)
    return (f"  Server limits: headers within {HEADER_TIMEOUT_S:.0f} s and "
            f"{MAX_HEADER_BYTES // 1024} KB, bodies idle at most {BODY_IDLE_TIMEOUT_S:.0f} s, "
            f"{cap:,} connections at once (open files: {soft:,}).")
