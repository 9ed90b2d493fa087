"""The floor: a bare uvicorn + Starlette app that answers the phones' requests with none
of the app's work, for ``bench/load.py`` to set the app's CPU per phone against.

    LDP_FLOOR_STATE=state.json LDP_FLOOR_DB=floor.db \
        python -m uvicorn bench.floor_app:app_from_environment --factory --port 8700 ...

(:func:`command` gives the whole command; ``bench/harness.py`` starts it.)

The same server stack as ``streamlit run app.py`` (uvicorn with httptools and uvloop,
the app's keep-alive of ``web.serving.KEEP_ALIVE_S``) and the same requests, answered
from memory:

* ``GET /join/{code}``: the app's phone page (``phone.page.PAGE_HTML``, gzip-compressed
  once, as the app sends it) and a random device cookie;
* ``GET /api/poll/{code}``: the poll's state as cached JSON (``--state``: the app's own
  body, built once by the harness) with its ETag; a matching ``If-None-Match`` gets 304,
  and with ``?wait=N`` only after N seconds (the state never changes here);
* ``POST /api/poll/{code}/report``: the body read as JSON, one SQLite insert (WAL,
  ``synchronous=NORMAL``, as the app's store; in a worker thread, as the app does it),
  and a receipt.

No host check, no signed cookie, no rate limit, no validation, no service, no middleware,
no connection guard. ``--workers N`` runs N processes on one listening socket (uvicorn's
own supervisor; the kernel shares the connections out): the floor of N processes.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import secrets
import sqlite3
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["SCHEMA", "app_from_environment", "command", "make_app"]

SCHEMA = ("CREATE TABLE IF NOT EXISTS reports (submission_id TEXT PRIMARY KEY, "
          "device TEXT NOT NULL, question_id INTEGER NOT NULL, answer TEXT NOT NULL, "
          "created_at REAL NOT NULL)")
_MAX_WAIT_S = 55.0


class _Floor:
    """The floor app's handlers: the poll's state ``state``, reports into ``db_path``."""

    def __init__(self, state: bytes, db_path: str) -> None:
        from phone.page import PAGE_HTML

        self.page = gzip.compress(PAGE_HTML, compresslevel=9, mtime=0)
        self.state = state
        self.etag = f'"{json.loads(state)["version"]}"'
        self.db_path = db_path
        self.local = threading.local()
        with sqlite3.connect(db_path) as conn:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(SCHEMA)

    def connection(self) -> sqlite3.Connection:
        conn = getattr(self.local, "conn", None)
        if conn is None:
            conn = self.local.conn = sqlite3.connect(self.db_path, timeout=10,
                                                     isolation_level=None)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    def insert(self, data: dict, device: str) -> None:
        self.connection().execute(
            "INSERT OR IGNORE INTO reports VALUES (?, ?, ?, ?, ?)",
            (str(data["submission_id"]), device, int(data["question_id"]),
             str(data["answer"]), time.time()))

    async def join(self, request: Request) -> Response:
        resp = Response(self.page, media_type="text/html; charset=utf-8",
                        headers={"Content-Encoding": "gzip", "Cache-Control": "no-cache"})
        if "ldp_device" not in request.cookies:
            resp.set_cookie("ldp_device", f"{secrets.token_urlsafe(16)}.0.0", httponly=True)
        return resp

    async def poll(self, request: Request) -> Response:
        if request.headers.get("if-none-match") == self.etag:
            wait = min(_MAX_WAIT_S, float(request.query_params.get("wait", 0) or 0))
            if wait > 0:
                await asyncio.sleep(wait)
            return Response(status_code=304, headers={"ETag": self.etag})
        return Response(self.state, media_type="application/json",
                        headers={"ETag": self.etag})

    async def report(self, request: Request) -> Response:
        data = json.loads(await request.body())
        await run_in_threadpool(self.insert, data, request.cookies.get("ldp_device", "")[:22])
        body = {"receipt": {"question_id": data["question_id"], "answer": data["answer"]}}
        resp = Response(json.dumps(body).encode(), media_type="application/json")
        resp.set_cookie("ldp_answered", "1", path=request.url.path.rsplit("/", 1)[0])
        return resp

    async def health(self, request: Request) -> Response:
        return Response(b"ok", media_type="text/plain")


def make_app(state: bytes, db_path: str) -> Starlette:
    """The floor app serving ``state`` (the poll's JSON) and storing reports in
    ``db_path``."""
    floor = _Floor(state, db_path)
    return Starlette(routes=[
        Route("/join/{code}", floor.join), Route("/api/poll/{code}", floor.poll),
        Route("/api/poll/{code}/report", floor.report, methods=["POST"]),
        Route("/_stcore/health", floor.health)])


def app_from_environment() -> Starlette:
    """The app of a worker process (``--workers``): its settings come by environment."""
    return make_app(Path(os.environ["LDP_FLOOR_STATE"]).read_bytes(),
                    os.environ["LDP_FLOOR_DB"])


def command(port: int, *, workers: int = 1) -> list[str]:
    """The command that serves the floor app on ``port`` (its state and database in the
    environment: ``LDP_FLOOR_STATE``, ``LDP_FLOOR_DB``), as the app's server is set up."""
    from web.serving import KEEP_ALIVE_S

    return [sys.executable, "-m", "uvicorn", "bench.floor_app:app_from_environment",
            "--factory", "--host", "127.0.0.1", "--port", str(port), "--workers",
            str(workers), "--loop", "uvloop", "--http", "httptools", "--lifespan", "off",
            "--no-access-log", "--log-level", "warning", "--timeout-keep-alive",
            str(KEEP_ALIVE_S), "--backlog", "2048"]
