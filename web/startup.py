"""Start-up: read the settings and open the database (the composition root), then print
where students join and a one-time login link for the instructor."""

from __future__ import annotations

import gc
import socket
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from classroom import auth, config

from .composition import PROCESS, ProcessRoot
from .deadlines import closing_deadlines

__all__ = ["banner", "make_lifespan"]


def _lan_address() -> str | None:
    """This machine's address on the local network (no packet is sent)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: routing lookup only
            return str(s.getsockname()[0])
    except OSError:
        return None


def banner(address: str | None, port: int, public_url: str | None, login_token: str,
           key_source: str, weakness: str | None = None) -> str:
    """The start-up message: where students join and how the instructor logs in (a
    one-time link, and where the key is; never the key itself), and, when the configured
    key looks guessable (``weakness``, :func:`classroom.config.key_weakness`), a warning."""
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
    if weakness is not None:
        lines.append(f"  WARNING: the instructor key ({key_source}) is weak: {weakness}. "
                     "Whoever guesses it runs the class. Use a random one, for example "
                     "python -c \"import secrets; print(secrets.token_urlsafe(18))\".")
    lines.append("")
    return "\n".join(lines)


def make_lifespan(listening: Callable[[], tuple[str | None, int]],
                  process: ProcessRoot = PROCESS, *, freeze_heap: bool = False,
                  abort: Callable[[int], Any] | None = None) -> Callable[[Any], Any]:
    """The app's lifespan: read the settings and open the database once (the process's
    composition root), print the banner, and close countdowns at their deadlines
    (:mod:`web.deadlines`) while the app runs; at shutdown close the connection pool.

    A bad setting, a wrong URL, an unreachable server or an unwritable SQLite directory
    stops the start with a message naming the setting (password masked) and the path,
    instead of surfacing on the first student's phone. ``listening()`` gives the address
    and port the server listens on (the web server's own settings, read at start).

    ``freeze_heap`` (the server's own process, not tests): once started, collect, then
    move every object alive (the imported modules of Streamlit, numpy, pandas and the
    app: some 150,000) out of the garbage collector's reach with :func:`gc.freeze`. A
    full collection then walks only what was made since, instead of about 65 ms of CPU
    each (measured in a 1,000-phone run: three of them took 0.2 s of its 7 s).

    ``abort`` (the server's own process: :func:`os._exit`): called with the exit status
    after the sentence that says why the app cannot start, so that the sentence is all
    the person starting it reads. Without it the lifespan raises ``SystemExit(2)``, and
    the web server prints its traceback after the sentence.
    """

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        try:
            settings = process.get().settings
            address, port = listening()
            print(banner(address, port, settings.public_url,
                         auth.login_link_token(settings.instructor_key), settings.key_source,
                         config.key_weakness(settings.instructor_key)),
                  file=sys.stderr, flush=True)
            if freeze_heap:
                gc.collect()
                gc.freeze()
        except Exception as exc:
            print(f"\n  LDP classroom cannot start: {exc}\n", file=sys.stderr, flush=True)
            if abort is not None:
                abort(2)
            raise SystemExit(2) from exc
        try:
            async with closing_deadlines(lambda: process.get().service):
                yield None
        finally:
            process.reset()

    return lifespan
