"""A phone in the lecture hall, over plain HTTP: the student's side of the phone path.

The load harness (``bench/harness.py``) runs thousands of these in one asyncio
process; the failure tests drive them one by one. A :class:`PhoneStudent` does
what the phone page's JavaScript does, minus drawing:

1. ``GET /join/CODE`` (``Accept: text/html``, ``Accept-Encoding: gzip``): the
   page, and with it the HttpOnly ``ldp_device`` cookie (its favicon is inline);
2. ``GET /api/poll/CODE?me=1``: the current question (its ETag is the version) with
   this device's receipt and spent ε, as the page's script asks for it
   (:meth:`PhoneStudent.open_page` does both);
3. the tap: randomize the true answer on the device with the round's integer
   sampling weights (``ldp_core``'s ``sampling_weights``: a uniform integer,
   the first branch whose cumulative weight exceeds it: truth, lie, forced
   yes, forced no), exactly as the page's randomizer does;
4. ``POST /api/poll/CODE/report`` with the page's ``Origin``, JSON body
   ``{question_id, answer, params, submission_id}``: the receipt;
5. waiting like a phone: ``GET /api/poll/CODE?wait=50&me=1`` with ``If-None-Match``
   (long-poll), until the next question or the end of the wait.

Every request is timed and its status and transferred body bytes recorded. Cookies are
sent only where their ``Path`` lets a browser send them.
A ``503`` with ``Retry-After`` (a server out of room) is sent again after that many
seconds and a random part more, as the page does: the same request, so a report keeps
its submission id (:meth:`PhoneStudent.request`); with ``resend_503`` (the load
harness's phones), any ``503``, with a growing wait.
The HTTP client is aiohttp: measured here, a request cost the client about
0.1 ms of CPU against 2.5 ms with httpx, and the simulated phones share the
machine's cores with the server they measure. A phone given no ``session`` opens its
own (:func:`new_session`) and so holds its own connections, as a phone does; students
may also share one :class:`aiohttp.ClientSession` (its connection pool), each with its
own cookie: the session keeps no cookies (``DummyCookieJar``) and every student sends
its own ``Cookie`` header.

>>> async def one_vote(base, code):  # doctest: +SKIP
...     async with PhoneStudent(base, code) as s:
...         await s.join()
...         resp = await s.vote(truth=1)
...         return resp.status, resp.json["receipt"]["answer_label"]
"""

from __future__ import annotations

import asyncio
import gzip
import json
import random
import time
import uuid
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp

__all__ = ["DEVICE_COOKIE", "PhoneResponse", "PhoneStudent", "Request", "new_session",
           "randomize"]

DEVICE_COOKIE = "ldp_device"
USER_AGENT = "ldp-classroom-headless-phone"
#: A long-poll asks the server to hold the request this long, as the page does
#: (``LONG_POLL_S`` in phone/assets/flow.js; the server holds at most 55).
LONG_POLL_S = 50
#: A report that could not be delivered is sent again at most this many times, first after
#: this many seconds, then twice as long each time (phone/assets/flow.js: RESENDS, RESEND_MS).
RESENDS = 3
RESEND_S = 1.0
#: A connection closed without an answer, as aiohttp raises it.
CLOSED_ERRORS = (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)


@dataclass
class Request:
    """One HTTP exchange as the phone saw it."""

    method: str
    path: str
    status: int
    seconds: float
    body_bytes: int  # as transferred (compressed when the server compressed it)
    at: float  # time.perf_counter() when it was sent


@dataclass
class PhoneResponse:
    status: int
    headers: Mapping[str, str]
    body: bytes  # decompressed
    json: Any = None
    seconds: float = 0.0


def new_session(limit: int = 0, timeout: float = 60.0) -> aiohttp.ClientSession:
    """A session for many students: no cookie jar (each student sends its own), no limit on
    open connections (``limit=0``: every waiting phone holds one), no transparent
    decompression (so transferred bytes can be counted)."""
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=limit, force_close=False),
        cookie_jar=aiohttp.DummyCookieJar(), auto_decompress=False,
        timeout=aiohttp.ClientTimeout(total=timeout),
        headers={"User-Agent": USER_AGENT})


def randomize(truth: int, question: Mapping[str, Any], rng: random.Random) -> Any:
    """The report a phone sends for ``truth`` under the question's design.

    Binary designs sample the integer weights ``(truth, lie, yes, no)`` exactly (the
    page's rejection sampling of a uniform integer, here ``rng.randrange``); categorical
    ones use ldp_core's oracle, with the unary encoding as a bit string.
    """
    scheme = question.get("scheme") or {}
    if scheme.get("type", "binary") == "binary":
        weights = scheme.get("weights")
        if not weights:
            import ldp_core

            weights = ldp_core.binary_design_from_params(question["params"]).sampling_weights()
        u = rng.randrange(sum(weights))
        branch, acc = 0, weights[0]
        while u >= acc:
            branch += 1
            acc += weights[branch]
        return (truth, 1 - truth, 1, 0)[branch]
    import numpy as np

    import ldp_core

    oracle = ldp_core.categorical_oracle_from_params(question["params"])
    out = oracle.perturb(np.array([truth]), rng=np.random.default_rng(rng.getrandbits(64)))
    row = np.asarray(out)[0]
    if np.ndim(row) == 0:
        return int(row)
    return "".join(str(int(b)) for b in row)


def _path_matches(cookie_path: str, path: str) -> bool:
    """RFC 6265's path match: a cookie scoped to ``/api/poll/ABC`` goes to that path and
    below it, not to ``/api/poll/ABCD``."""
    return (path == cookie_path
            or (cookie_path.endswith("/") and path.startswith(cookie_path))
            or path.startswith(cookie_path + "/"))


def _retry_after(resp: PhoneResponse, otherwise: float | None) -> float | None:
    """The seconds to wait before sending again what was answered ``resp``: a ``503``'s
    ``Retry-After``, else ``otherwise``; None: not again."""
    if resp.status != 503:
        return None
    value = resp.headers.get("Retry-After", "")
    return float(value) if value.isdigit() else otherwise


def _decode(raw: bytes, encoding: str) -> bytes:
    if encoding == "gzip":
        return gzip.decompress(raw)
    if encoding == "deflate":
        return zlib.decompress(raw)
    return raw


class PhoneStudent:
    """One phone: its own device cookie, the question it saw, the report it sent."""

    def __init__(self, base_url: str, code: str, *, session: aiohttp.ClientSession | None = None,
                 timeout: float = 60.0, rng: random.Random | None = None,
                 origin: str | None = None, resend_503: bool = False) -> None:
        self.base_url = base_url.rstrip("/")
        self.code = code
        self.timeout = timeout
        self.rng = rng or random.SystemRandom()
        parts = urlsplit(self.base_url)
        self.origin = origin if origin is not None else f"{parts.scheme}://{parts.netloc}"
        self._session = session
        self._own_session = session is None
        self.cookies: dict[str, str] = {}
        self.cookie_paths: dict[str, str] = {}  # a cookie's Path, when it set one
        self.requests: list[Request] = []
        self.state: dict | None = None  # the last poll state (GET /api/poll/CODE)
        self.etag: str | None = None
        self.body: dict | None = None  # the last report sent, kept to send it again
        self.receipt: dict | None = None
        self.retries = 0  # requests sent again after a closed kept-alive connection
        self.resend_503 = resend_503
        self.resent_503 = 0  # requests sent again after a 503
        self.resent_reports = 0  # reports sent again by vote_like_a_phone
        self.closed_reports = 0  # of those, after the connection closed without an answer
        self._jitter = random.Random()

    # -- plumbing -----------------------------------------------------------------------------
    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = new_session(timeout=self.timeout)
        return self._session

    @property
    def device_id(self) -> str | None:
        """The device id the service sees: the app's signed cookie holds it before its
        timestamp and signature (``id.timestamp.signature``, itsdangerous)."""
        cookie = self.cookies.get(DEVICE_COOKIE)
        return cookie.rsplit(".", 2)[0] if cookie else None

    @property
    def submission_id(self) -> str | None:
        return None if self.body is None else self.body.get("submission_id")

    async def aclose(self) -> None:
        if self._own_session and self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> PhoneStudent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def request(self, method: str, path: str, *, headers: Mapping[str, str] | None = None,
                      data: bytes | str | None = None, timeout: float | None = None,
                      cookies: bool = True) -> PhoneResponse:
        """One request with this phone's cookies; keeps any cookie the response sets. A
        ``503`` with ``Retry-After`` (a server out of room) is sent again, as the page
        does, after that many seconds and a random part more, until ``timeout`` (or
        the phone's) has passed; with ``resend_503``, any ``503`` (a database away), after
        1, 2, 4, then 8 s and a random part more."""
        hdrs = {"Accept-Encoding": "gzip"}
        sent = {k: v for k, v in self.cookies.items()
                if _path_matches(self.cookie_paths.get(k, "/"), path.split("?", 1)[0])}
        if cookies and sent:
            hdrs["Cookie"] = "; ".join(f"{k}={v}" for k, v in sent.items())
        hdrs.update(headers or {})
        kw: dict[str, Any] = {"headers": hdrs, "allow_redirects": False}
        if data is not None:
            kw["data"] = data
        if timeout is not None:
            kw["timeout"] = aiohttp.ClientTimeout(total=timeout)
        give_up = time.perf_counter() + (timeout or self.timeout)
        backoff = 1.0
        while True:
            out = await self._exchange(method, path, kw)
            wait = _retry_after(out, backoff if self.resend_503 else None)
            if wait is None or time.perf_counter() + wait > give_up:
                break
            self.resent_503 += 1
            backoff = min(8.0, 2 * backoff)
            await asyncio.sleep(wait * (1 + self._jitter.random()))
        if out.body and out.headers.get("Content-Type", "").startswith("application/json"):
            try:
                out.json = json.loads(out.body)
            except ValueError:
                out.json = None
        return out

    async def _exchange(self, method: str, path: str, kw: dict[str, Any]) -> PhoneResponse:
        """One request and its response, recorded; sent again once on a new connection
        if a kept-alive one was closed under it, as a browser does."""
        began = time.perf_counter()
        for attempt in (1, 2):
            try:
                async with self.session.request(method, self.base_url + path, **kw) as resp:
                    raw = await resp.read()
                    for morsel in resp.cookies.values():
                        self.cookies[morsel.key] = morsel.value
                        self.cookie_paths[morsel.key] = morsel["path"] or "/"
                    seconds = time.perf_counter() - began
                    body = _decode(raw, resp.headers.get("Content-Encoding", "").lower())
                    out = PhoneResponse(resp.status, dict(resp.headers), body, seconds=seconds)
                break
            except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError):
                # A kept-alive connection the server closed as it was reused: a browser
                # sends the request again on a new connection, once.
                if attempt == 2 or time.perf_counter() - began > 1.0:
                    raise
                self.retries += 1
        self.requests.append(Request(method, path.split("?", 1)[0], out.status, seconds,
                                     len(raw), began))
        return out

    # -- what the page does --------------------------------------------------------------------
    async def load_page(self, path: str | None = None) -> PhoneResponse:
        """The page load (a browser navigation): sets the device cookie."""
        return await self.request("GET", path or f"/join/{self.code}",
                                  headers={"Accept": "text/html,application/xhtml+xml"})

    async def poll(self, *, wait: float | None = None, etag: str | None = None,
                   me: bool = False) -> PhoneResponse:
        """``GET /api/poll/CODE`` (a long-poll with ``wait`` and the ETag; with ``me``, the
        state carries this device's receipt and spent ε, as the page asks for it)."""
        path = f"/api/poll/{self.code}"
        headers = {"Accept": "application/json"}
        tag = etag if etag is not None else (self.etag if wait else None)
        if tag:
            headers["If-None-Match"] = f'"{tag}"' if not tag.startswith(('"', "W/")) else tag
        query = ([f"wait={wait:g}"] if wait else []) + (["me=1"] if me else [])
        if query:
            path += "?" + "&".join(query)
        resp = await self.request("GET", path, headers=headers,
                                  timeout=(wait or 0) + self.timeout)
        if resp.status == 200 and isinstance(resp.json, dict):
            self.state = resp.json
            self.etag = resp.json.get("version") or resp.headers.get("ETag")
        return resp

    async def me(self) -> PhoneResponse:
        return await self.request("GET", f"/api/poll/{self.code}/me",
                                  headers={"Accept": "application/json"})

    async def favicon(self) -> PhoneResponse:
        """What a browser fetches by itself when it shows the page."""
        return await self.request("GET", "/favicon.svg", headers={"Accept": "image/*"})

    async def join(self) -> PhoneResponse:
        """Load the page, then the poll's state (the returned response)."""
        page = await self.load_page()
        if page.status != 200:
            return page
        return await self.poll()

    async def open_page(self) -> tuple[PhoneResponse, PhoneResponse]:
        """Everything a browser asks for when the page opens, in its order: the page (its
        favicon is inline), then the poll's state with this device's receipt and spent ε
        (``?me=1``). Returns the page's and the state's responses."""
        page = await self.load_page()
        if page.status != 200:
            return page, page
        return page, await self.poll(me=True)

    @property
    def question(self) -> dict | None:
        return None if self.state is None else self.state.get("question")

    def make_report(self, truth: int, *, submission_id: str | None = None) -> dict:
        q = self.question
        if q is None:
            raise LookupError("no question on this poll")
        return {"question_id": q["id"], "answer": randomize(truth, q, self.rng),
                "params": q["params"], "submission_id": submission_id or str(uuid.uuid4())}

    async def send(self, body: Any, *, origin: str | None = None,
                   content_type: str = "application/json",
                   headers: Mapping[str, str] | None = None) -> PhoneResponse:
        """POST a report body as it is (a dict is JSON-encoded; bytes/str go raw)."""
        data = body if isinstance(body, (bytes, str)) else json.dumps(body)
        hdrs = {"Content-Type": content_type, "Accept": "application/json"}
        if origin is None:
            origin = self.origin
        if origin:
            hdrs["Origin"] = origin
        hdrs.update(headers or {})
        resp = await self.request("POST", f"/api/poll/{self.code}/report", headers=hdrs,
                                  data=data)
        if resp.status == 200 and isinstance(resp.json, dict):
            self.receipt = resp.json.get("receipt")
        return resp

    async def vote(self, truth: int, *, submission_id: str | None = None) -> PhoneResponse:
        """The tap: randomize ``truth`` on the device and send the report."""
        self.body = self.make_report(truth, submission_id=submission_id)
        return await self.send(self.body)

    async def vote_like_a_phone(self, truth: int) -> PhoneResponse:
        """The tap as the page sends it (phone/assets/flow.js ``post``): a report that
        could not be delivered (the connection closed without an answer, or 502, 503, 504,
        or the database away) is sent again, the same report with the same submission id,
        at most ``RESENDS`` times, after the server's ``Retry-After`` or ``RESEND_S``,
        2 × ``RESEND_S``, …, each wait drawn in [1, 1.5) times that."""
        self.body = self.make_report(truth)
        for attempt in range(RESENDS + 1):
            try:
                resp = await self.send(self.body)
            except CLOSED_ERRORS as exc:
                if attempt == RESENDS:
                    raise
                self.closed_reports += 1
                resp, closed = None, exc
            undelivered = resp is None or resp.status in (502, 503, 504) or (
                isinstance(resp.json, dict) and resp.json.get("error") == "unavailable")
            if not undelivered or attempt == RESENDS:
                assert resp is not None, closed
                return resp
            told = _retry_after(resp, None) if resp is not None else None
            wait = told if told is not None else RESEND_S * 2 ** attempt
            self.resent_reports += 1
            await asyncio.sleep(wait * (1 + 0.5 * self._jitter.random()))
        raise AssertionError("unreachable")

    async def resend(self) -> PhoneResponse:
        """"Send it again": the same randomized report, the same submission id."""
        if self.body is None:
            raise LookupError("nothing was sent yet")
        return await self.send(self.body)

    async def wait_like_a_phone(self, seconds: float, *, stop: asyncio.Event | None = None,
                                long_poll: float = LONG_POLL_S) -> int:
        """Long-poll for the next question for ``seconds`` (or until ``stop``); returns how
        many times the state changed."""
        changes = 0
        end = time.perf_counter() + seconds
        while (left := end - time.perf_counter()) > 0.5 and not (stop and stop.is_set()):
            resp = await self.poll(wait=max(1, min(long_poll, round(left))), me=True)
            if resp.status == 200:
                changes += 1
            elif resp.status != 304:
                # A phone backs off on an error before asking again.
                await asyncio.sleep(min(3.0, max(0.0, end - time.perf_counter())))
        return changes

    # -- figures ----------------------------------------------------------------------------
    @property
    def bytes_in(self) -> int:
        return sum(r.body_bytes for r in self.requests)

    def statuses(self) -> list[int]:
        return [r.status for r in self.requests]

