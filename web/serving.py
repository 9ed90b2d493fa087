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
docs/deployment.md and docs/benchmarks.md:

* :class:`ServerLimits`, the outermost middleware, sees the ASGI lifespan startup before
  the server accepts its first connection. Through the lifespan's ``receive`` it reaches
  the uvicorn ``Config`` the server was built with (the one place ``streamlit run``
  leaves), raises the process's open-file limit to its hard limit, and installs
  :func:`guarded` in place of uvicorn's HTTP protocol, which reads ``Config`` per
  connection. It prints what it applied under the start-up banner, or why it could not.
* The guarded protocol is uvicorn's httptools protocol plus :class:`Guard`, which walks
  each connection through the states of :class:`Phase`:
  - a request's headers must arrive within :data:`HEADER_TIMEOUT_S` of the connection
    opening (or of the previous response) and within :data:`MAX_HEADER_BYTES`: else
    ``408`` or ``431``, and the connection is closed;
  - a body must keep arriving: :data:`BODY_IDLE_TIMEOUT_S` without a byte (while the
    app is reading) closes the connection, and the app sees the client gone;
  - :class:`Door` keeps at most :func:`connection_cap` connections open, well below the
    open-file limit. Under the cap no connection is closed before its timeouts, however
    many one address holds. At the cap, a new connection makes room by closing the
    oldest *slow* one: a connection whose request's headers are still unfinished
    :data:`SLOW_S` after it became ready for them, with not one byte waiting unread in
    the kernel (``FIONREAD``: a request already in the socket buffer has been sent,
    however late a busy event loop reads it); else the longest idle kept-alive one. (Before,
    an address's connections that had not yet sent a whole request were capped at 256
    whether or not the server was full, the oldest closed as each new one opened: a
    burst from one address whose requests came a moment after their connections, 1,000
    phones in 2 s on a busy machine, lost 476 without an answer.)
  - At the cap with nothing to close, the process is out of room: a new connection is
    still read, and its request is answered ``503`` with ``Retry-After`` as soon as its
    headers arrive (:func:`shed_answer`: JSON ``{"error": "busy", "message"}`` on the
    phone's API, a page that loads again by itself elsewhere). Beyond :data:`SHED_ROOM`
    more, the oldest connection waiting for its 503 with nothing sent is closed (a
    request's headers arrive at once: one still silent is a slow client's), else the new
    one.
  - An idle kept-alive connection is closed after :data:`KEEP_ALIVE_S` (uvicorn's 5 s
    otherwise).
  - Every close and every 503 of the guard is counted, and the counts of each second are
    logged as one line (:meth:`Door.summary`), with no address in it.
"""

from __future__ import annotations

import asyncio
import enum
import fcntl
import json
import logging
import random
import resource
import sys
import termios
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn import Config

__all__ = ["BODY_IDLE_TIMEOUT_S", "HEADER_TIMEOUT_S", "KEEP_ALIVE_S", "MAX_CONNECTIONS",
           "MAX_HEADER_BYTES", "RETRY_AFTER_S", "SAID", "SHED_ROOM", "SLOW_S", "Door", "Guard",
           "Phase",
           "ServerLimits", "connection_cap", "guarded", "raise_open_files", "shed_answer",
           "unread_bytes"]

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
#: An idle kept-alive connection is closed after this long (uvicorn's default is 5 s). A
#: phone's connection idles while its student reads the question (2-10 s, often more):
#: kept, the tap needs no new connection, and it does not cross the server's close (a
#: request sent as the server closes an idle connection is lost, and a browser sends it
#: again). The idle ones are what the cap closes first, after the slow ones.
KEEP_ALIVE_S = int(HEADER_TIMEOUT_S)
#: Open files kept for everything else: the database's connections, Streamlit's files,
#: logs, the listening socket; and the connections beyond the cap that wait for their
#: 503 (:data:`SHED_ROOM`).
RESERVED_FILES = 256
#: Connections beyond the cap kept open until their request can be answered 503 (half of
#: the reserve above).
SHED_ROOM = RESERVED_FILES // 2
#: A request's headers still unfinished this long after its connection became ready for
#: them (opened, or its previous answer sent), with nothing unread in the kernel, make the
#: connection slow: the first kind closed to make room. A browser sends its headers,
#: about 1 KB, at once; TCP resends a lost first segment within 1 s (RFC 6298's initial
#: retransmission timeout), so 2 s leaves a lost segment room to arrive.
SLOW_S = 2.0
#: A 503's ``Retry-After`` (s) is drawn between these, so that the phones told to wait do
#: not all come back in the same second.
RETRY_AFTER_S = (2, 6)
#: The summary line's period (s).
SUMMARY_S = 1.0
#: Candidates looked at per decision, at most (each found with unread bytes goes to the
#: back of the line).
_LOOK_AT = 16
_LOG = logging.getLogger(__name__)


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


def unread_bytes(transport: asyncio.BaseTransport) -> int:
    """Bytes the client sent that wait unread in the kernel's socket buffer (0 if
    unknown)."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return 0
    try:
        raw = fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0")
    except (OSError, ValueError):  # closed meanwhile, or not a socket
        return 0
    return int.from_bytes(raw, sys.byteorder, signed=True)


# -- the answer of a process out of room ----------------------------------------------------
_BUSY_READ = ("The class server is busy right now. This page tries again by itself in a "
              "moment.")
_BUSY_REPORT = ("Not saved yet: the class server is busy right now. This page sends your "
                "answer again by itself in a moment.")
_BUSY_PAGE = ('<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" '
              'content="width=device-width, initial-scale=1"><meta http-equiv="refresh" '
              'content="{s}"><title>LDP classroom</title><p>The class server is busy right '
              'now. This page loads again by itself in {s} seconds.</p></html>')


def shed_answer(method: str, path: str, retry_after: int) -> tuple[str, bytes]:
    """The content type and body of a 503 for ``method path``: what the phone page reads
    on its API (``{"error": "busy", "message": ...}``), a page that reloads itself for
    anything else.

    >>> shed_answer("POST", "/api/poll/K7QM2P/report", 3)[1][:40]
    b'{"error": "busy", "message": "Not saved '
    >>> shed_answer("GET", "/join/K7QM2P", 3)[0]
    'text/html; charset=utf-8'
    """
    if path.startswith("/api/"):
        text = _BUSY_REPORT if method == "POST" else _BUSY_READ
        return "application/json", json.dumps({"error": "busy", "message": text}).encode()
    return "text/html; charset=utf-8", _BUSY_PAGE.format(s=retry_after).encode()


def _retry_after() -> int:
    return random.randint(*RETRY_AFTER_S)


async def _busy(scope: Scope, receive: Receive, send: Send) -> None:
    """The ASGI app that answers a request of a process out of room (and closes)."""
    wait = _retry_after()
    kind, body = shed_answer(scope.get("method", "GET"), scope.get("path", ""), wait)
    await send({"type": "http.response.start", "status": 503, "headers": [
        (b"content-type", kind.encode()), (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(wait).encode()), (b"cache-control", b"no-store"),
        (b"referrer-policy", b"same-origin"), (b"x-content-type-options", b"nosniff"),
        (b"content-security-policy", b"default-src 'none'"), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


# -- the door: which connections may stay, and the tally -------------------------------------
class Waiting(Protocol):
    """What the door needs of a connection."""

    #: When it became ready for its current request's headers (the door's clock).
    since: float

    def unread(self) -> int: ...

    def evict(self, why: str) -> None: ...


#: What the summary line says of each count (the guard's closes and answers, by kind).
SAID = {
    "shed": "answered 503 (out of room)",
    "door": "closed unanswered (out of room, and of room to answer 503)",
    "slow": f"slow ones closed (headers unfinished after {SLOW_S:g} s)",
    "idle": "idle kept-alive ones closed to make room",
    "late": f"closed at the header timeout ({HEADER_TIMEOUT_S:g} s; a 408 if a request began)",
    "431": f"answered 431 (headers over {MAX_HEADER_BYTES // 1024} KB)",
    "body": f"closed (a body idle {BODY_IDLE_TIMEOUT_S:g} s)",
}


class Door:
    """The connections of one server that wait for a request's headers, and the rules of
    which may stay.

    ``receiving``: opened, or kept alive and a byte of the next request arrived; in the
    order they became ready. ``idle``: kept alive between requests, in the order they
    became idle. ``shed``: those of ``receiving`` that came beyond the cap, to be answered
    503. A connection busy with a request is in none.
    """

    def __init__(self, cap: int, *, clock: Callable[[], float] = time.monotonic,
                 slow_s: float = SLOW_S, shed_room: int = SHED_ROOM) -> None:
        self.cap = cap
        self.clock = clock
        self.slow_s = slow_s
        self.shed_room = shed_room
        self.receiving: dict[Waiting, None] = {}
        self.idle: dict[Waiting, None] = {}
        #: The connections beyond the cap, to be answered 503, oldest first.
        self.shed: dict[Waiting, None] = {}
        self.tally: Counter[str] = Counter()
        self._since_summary = clock()
        self._ticking = False

    # -- where a connection is -------------------------------------------------------------
    def awaiting(self, conn: Waiting) -> None:
        """``conn`` is new, or has begun a request after being idle: ready for headers
        from now, at the back of the line."""
        self.left(conn)
        conn.since = self.clock()
        self.receiving[conn] = None

    def kept_alive(self, conn: Waiting) -> None:
        """``conn`` was answered and waits for its next request."""
        self.left(conn)
        conn.since = self.clock()
        self.idle[conn] = None

    def left(self, conn: Waiting) -> None:
        """``conn`` is busy with a request, or gone."""
        self.idle.pop(conn, None)
        self.receiving.pop(conn, None)
        self.shed.pop(conn, None)

    # -- the rules -------------------------------------------------------------------------
    def opened(self, conn: Waiting, open_now: int) -> bool:
        """Room for ``conn``, new, with ``open_now`` connections open: True if it is
        served, False if it is to be answered 503 (or was closed at once)."""
        self.awaiting(conn)
        if open_now <= self.cap:
            return True
        victim = self._slow()
        if victim is not None:
            self._evict(victim, "slow")
            return True
        victim = self._idle()
        if victim is not None:
            self._evict(victim, "idle")
            return True
        if open_now > self.cap + self.shed_room:
            # Out of room to answer too. A request's headers come at once: the oldest
            # connection waiting for its 503 with nothing unread goes, else this one.
            victim = self._quiet(self.shed)
            if victim is None:
                self._evict(conn, "door")
                return False
            self._evict(victim, "door")
        self.shed[conn] = None
        return False

    def is_slow(self, conn: Waiting, now: float) -> bool:
        return now - conn.since >= self.slow_s and conn.unread() == 0

    def _slow(self) -> Waiting | None:
        """The oldest slow connection, or None. One old enough but with bytes waiting
        unread is read soon: it goes to the back of the line."""
        now = self.clock()
        for _ in range(_LOOK_AT):
            conn = next(iter(self.receiving), None)
            if conn is None or now - conn.since < self.slow_s:
                return None
            if self.is_slow(conn, now):
                return conn
            self.awaiting(conn)  # to the back, ready again from now
        return None

    def _idle(self) -> Waiting | None:
        """The longest idle kept-alive connection with no next request waiting unread."""
        return self._quiet(self.idle)

    def _quiet(self, pool: dict[Waiting, None]) -> Waiting | None:
        """The first connection of ``pool`` with nothing waiting unread; one with bytes
        waiting goes to the back of ``pool``."""
        for _ in range(_LOOK_AT):
            conn = next(iter(pool), None)
            if conn is None or conn.unread() == 0:
                return conn
            pool.pop(conn)
            pool[conn] = None
        return None

    def _evict(self, conn: Waiting, why: str) -> None:
        self.left(conn)
        self.tally[why] += 1
        conn.evict(why)

    # -- once a second ---------------------------------------------------------------------
    def summary(self) -> str | None:
        now = self.clock()
        counts, self.tally = self.tally, Counter()
        elapsed, self._since_summary = now - self._since_summary, now
        if not counts:
            return None
        return (f"Server connections in the last {elapsed:.1f} s: "
                + ", ".join(f"{counts[k]:,} {SAID[k]}" for k in SAID if counts[k])
                + f"; {len(self.receiving):,} waiting for headers, {len(self.idle):,} idle.")

    def start_ticking(self, loop: asyncio.AbstractEventLoop) -> None:
        """Log :meth:`summary` every :data:`SUMMARY_S` on ``loop`` (when it says
        something)."""
        if self._ticking:
            return
        self._ticking = True

        def tick() -> None:
            line = self.summary()
            if line:
                _LOG.warning("%s", line)
            loop.call_later(SUMMARY_S, tick)

        loop.call_later(SUMMARY_S, tick)


# -- the protocol ------------------------------------------------------------------------------
class Phase(enum.Enum):
    """Where a connection is, as the guard sees it."""

    #: Opened, or kept alive with a byte of its next request in: its headers are awaited.
    HEADERS = "awaiting a request's headers"
    #: Like HEADERS, in a process out of room: its request is answered 503.
    SHED = "to be answered 503 once its headers arrive"
    #: The headers are in and a body is declared: it must keep arriving.
    BODY = "receiving a request's body"
    #: The request is with the app.
    SERVING = "being answered"
    #: Answered and kept alive; nothing of the next request yet.
    IDLE = "kept alive between requests"


class Guard(asyncio.Protocol):
    """The limits, mixed in before uvicorn's ``HttpToolsProtocol`` (:func:`guarded`)."""

    # Set by uvicorn's protocol:
    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop
    connections: set[Any]
    flow: Any
    pipeline: Any
    headers: list[tuple[bytes, bytes]]
    parser: Any
    app: Any
    #: The server's door (one per :func:`guarded` class).
    door: ClassVar[Door]

    # -- uvicorn's hooks -------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self.since = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._answered_early = False
        self.door.start_ticking(self.loop)
        self._await_headers(Phase.HEADERS)
        if not self.door.opened(self, len(self.connections)):
            self.phase = Phase.SHED

    def data_received(self, data: bytes) -> None:
        if self.phase is Phase.IDLE:
            self.door.awaiting(self)  # the next request began
            self._await_headers(Phase.HEADERS)
        if self.phase in (Phase.HEADERS, Phase.SHED):
            self._header_data(data)
            return
        if self.phase is Phase.BODY:
            self._arm(BODY_IDLE_TIMEOUT_S, self._body_too_slow)
        super().data_received(data)

    def on_headers_complete(self) -> None:
        self.door.left(self)
        self._disarm()
        if self.phase is Phase.SHED and not self.parser.should_upgrade():
            self.app = _busy  # this connection only; the answer says connection: close
            self.door.tally["shed"] += 1
        self.phase = Phase.SERVING
        super().on_headers_complete()  # type: ignore[misc]  # uvicorn's parser callback
        if _declares_body(self.headers) and not self.transport.is_closing():
            self.phase = Phase.BODY
            self._arm(BODY_IDLE_TIMEOUT_S, self._body_too_slow)

    def on_message_complete(self) -> None:
        if self.phase is Phase.BODY:
            self.phase = Phase.SERVING
            self._disarm()
        super().on_message_complete()  # type: ignore[misc]  # uvicorn's parser callback
        if self._answered_early:
            # The answer went out before the body ended (a 413 on the declared length):
            # the next request's headers start only now.
            self._answered_early = False
            self._next_request()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]  # uvicorn's cycle callback
        if self.phase is Phase.BODY:
            self._answered_early = True  # the rest of this body is not the next headers
        else:
            self._next_request()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.door.left(self)
        super().connection_lost(exc)

    # -- the states ------------------------------------------------------------------------
    def _await_headers(self, phase: Phase) -> None:
        self.phase = phase
        self._header_bytes = 0
        self._arm(HEADER_TIMEOUT_S, self._headers_due)

    def _next_request(self) -> None:
        if (not self.transport.is_closing() and not self.pipeline
                and self.phase is Phase.SERVING):
            self.phase = Phase.IDLE
            self.door.kept_alive(self)
            self._arm(HEADER_TIMEOUT_S, self._headers_due)

    def _header_data(self, data: bytes) -> None:
        """Feed what fits in the header budget; refuse a header that does not end in it."""
        room = max(0, MAX_HEADER_BYTES - self._header_bytes)
        head, rest = data[:room], data[room:]
        self._header_bytes += len(head)
        if head:
            super().data_received(head)
        if not rest:
            return
        if self.phase in (Phase.HEADERS, Phase.SHED):  # no end of the headers within it
            self.door.tally["431"] += 1
            self._refuse(b"431 Request Header Fields Too Large")
            return
        if self.phase is Phase.BODY:
            self._arm(BODY_IDLE_TIMEOUT_S, self._body_too_slow)
        super().data_received(rest)

    # -- what the door needs -----------------------------------------------------------------
    def unread(self) -> int:
        return unread_bytes(self.transport)

    def evict(self, why: str) -> None:
        """Closed by the door: a slow one, an idle one or, out of room, this new one."""
        self._disarm()
        self._refuse(b"503 Service Unavailable", b"retry-after: %d\r\n" % _retry_after())

    # -- timers and refusals -------------------------------------------------------------------
    def _arm(self, seconds: float, then: Callable[[], None]) -> None:
        self._disarm()
        self._timer = self.loop.call_later(seconds, then)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _headers_due(self) -> None:
        self._timer = None
        if self.phase not in (Phase.HEADERS, Phase.SHED, Phase.IDLE):
            return
        if self.unread():  # sent in time, not read yet by a lagging loop
            self._arm(SUMMARY_S, self._headers_due)
            return
        self.door.left(self)
        self.door.tally["late"] += 1
        self._refuse(b"408 Request Timeout")

    def _body_too_slow(self) -> None:
        self._timer = None
        if self.phase is not Phase.BODY:
            return
        if self.flow.read_paused:  # the app is not reading: not the client's fault
            self._arm(BODY_IDLE_TIMEOUT_S, self._body_too_slow)
            return
        self.door.tally["body"] += 1
        self.transport.close()  # the app sees the client gone

    def _refuse(self, status: bytes, headers: bytes = b"") -> None:
        """Close, answering ``status`` first to a request begun and not yet answered (an
        idle connection, or one that sent nothing, is just closed)."""
        if self.transport.is_closing():
            return
        if self.phase in (Phase.HEADERS, Phase.SHED) and self._header_bytes:
            self.transport.write(b"HTTP/1.1 " + status + b"\r\n" + headers
                                 + b"content-length: 0\r\nconnection: close\r\n\r\n")
        self.transport.close()


def guarded(base: type, cap: int, **door: Any) -> type:
    """uvicorn's httptools protocol ``base`` with the limits of this module, and a
    :class:`Door` of ``cap`` connections for the server (``door``: its other settings)."""
    name = f"Guarded{base.__name__}"
    return type(name, (Guard, base), {"door": Door(cap, **door), "__qualname__": name})


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
    config.timeout_keep_alive = max(config.timeout_keep_alive, KEEP_ALIVE_S)
    return (f"  Server limits: headers within {HEADER_TIMEOUT_S:.0f} s and "
            f"{MAX_HEADER_BYTES // 1024} KB, bodies idle at most {BODY_IDLE_TIMEOUT_S:.0f} s, "
            f"{cap:,} connections at once (open files: {soft:,}).")
