"""The student's path over plain HTTP: one small page and a JSON API, no Streamlit session.

URLs (registered through ``st.App(routes=...)`` on the app's own port):

* ``GET /join``, ``GET /join/{code}``: the phone page (one self-contained
  document, the same bytes for every code; its script reads the code from the
  address). ``GET /join?code=...`` redirects to ``/join/CODE``.
* ``GET /api/poll/{code}``: the poll's current question, shared by every phone,
  from :class:`phone.state.PollStates`. ETag = version; a matching
  ``If-None-Match`` gets 304 without a database read. ``?wait=N`` (N <= 30)
  holds the request until the version changes (200) or N seconds pass (304).
* ``GET /api/poll/{code}/me``: this device's receipt for the current question
  and the ε it has spent in the poll (needs the ``ldp_device`` cookie).
* ``POST /api/poll/{code}/report``: one randomized report, through
  ``PollService.submit_report`` (same validation, dedup and idempotent
  submission id as every report).

Every error is JSON ``{"error": code, "message": one sentence}`` and writes
nothing. A POST must come from the app's own origin, be ``application/json``,
at most :data:`MAX_BODY_BYTES` and at most :data:`MAX_JSON_DEPTH` deep.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import time
from typing import Any

from limits import RateLimitItemPerMinute
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from classroom.domain import (
    AddressLimit,
    BadInput,
    BadReport,
    ClassroomError,
    DiskFull,
    NotFound,
    OverBudget,
    QuestionClosed,
    StoreUnavailable,
    UnknownPoll,
    UnknownQuestion,
    normalize_join_code,
)
from classroom.service import PollService
from web import DEVICE_COOKIE, client_address, json_depth, same_origin

from . import page
from .present import join_error, privacy_note, receipt_view
from .state import PollStates, Snapshot

__all__ = ["MAX_BODY_BYTES", "MAX_JSON_DEPTH", "MAX_WAIT_S", "PhoneApi", "make_routes"]

#: A report is a few hundred bytes; anything far larger is not from the page.
MAX_BODY_BYTES = 4096
MAX_JSON_DEPTH = 6
MAX_WAIT_S = 30.0
#: Wrong join codes one phone (its device cookie, else its address) may try per minute
#: before it is asked to slow down. Not per address alone: a lecture hall behind one NAT
#: shares an address, and one student's typos must not lock out the class.
JOIN_MISSES_PER_MINUTE = 10
#: Wrong join codes per minute from one network address, whatever the cookies.
JOIN_MISSES_PER_ADDRESS = 300

_PAGE_VERSION = hashlib.sha256(page.PAGE_HTML).hexdigest()[:20]
#: The page compressed once, at the highest level, instead of once per phone.
_PAGE_GZIP = gzip.compress(page.PAGE_HTML, compresslevel=9, mtime=0)
_REPORT_FIELDS = {"question_id", "answer", "params", "submission_id"}
_UNAVAILABLE = ("Not saved yet: the class server cannot reach its database right now. "
                "Wait a moment, then send your answer again.")
_NO_COOKIE = ("This browser did not keep the class cookie, so your vote could be counted "
              "twice. Allow cookies for this site (or leave private browsing) and reload.")


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    data = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False,
                                                           allow_nan=False).encode()
    return Response(data, status_code=status, media_type="application/json",
                    headers={"Cache-Control": "no-store", **(headers or {})})


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None
           ) -> Response:
    return _json({"error": code, "message": message}, status, headers)


def _etag_matches(request: Request, version: str) -> bool:
    wanted = request.headers.get("if-none-match", "")
    return any(tag.strip().removeprefix("W/").strip('"') == version
               for tag in wanted.split(",") if tag.strip())


class PhoneApi:
    """The handlers, around the process's PollService: ``service_factory()`` gives it on
    first use (the composition root's, :mod:`web.root`, built at start; tests pass their
    own)."""

    def __init__(self, service_factory: Any, *, ttl: float = 1.0) -> None:
        self._service_factory = service_factory
        self._ttl = ttl
        self._service: PollService | None = None
        self._states: PollStates | None = None
        self._misses = MovingWindowRateLimiter(MemoryStorage())
        self._miss_rate = RateLimitItemPerMinute(JOIN_MISSES_PER_MINUTE)
        self._address_miss_rate = RateLimitItemPerMinute(JOIN_MISSES_PER_ADDRESS)

    @property
    def service(self) -> PollService:
        if self._service is None:
            self._service = self._service_factory()
        return self._service

    @property
    def states(self) -> PollStates:
        if self._states is None:
            self._states = PollStates(self.service, ttl=self._ttl)
        return self._states

    # -- the page ------------------------------------------------------------------------
    async def page(self, request: Request) -> Response:
        code = request.query_params.get("code")
        if request.url.path.rstrip("/") == "/join" and code is not None:
            try:
                return RedirectResponse(f"/join/{normalize_join_code(code)}", status_code=303)
            except BadInput:
                pass  # the page shows the code box, and its script explains the error
        etag = f'"{_PAGE_VERSION}"'
        headers = {"ETag": etag, "Cache-Control": "no-cache", "Vary": "Accept-Encoding",
                   "Content-Security-Policy": page.CSP}
        if _etag_matches(request, _PAGE_VERSION):
            return Response(status_code=304, headers=headers)
        if "gzip" in request.headers.get("accept-encoding", "").lower():
            return Response(_PAGE_GZIP, media_type="text/html; charset=utf-8",
                            headers={**headers, "Content-Encoding": "gzip"})
        return Response(page.PAGE_HTML, media_type="text/html; charset=utf-8", headers=headers)

    async def favicon(self, request: Request) -> Response:
        return Response(page.FAVICON_SVG, media_type="image/svg+xml",
                        headers={"Cache-Control": "public, max-age=86400"})

    # -- the poll ------------------------------------------------------------------------
    async def _snapshot(self, request: Request) -> Snapshot | Response:
        raw = request.path_params["code"]
        address = f"address:{client_address(request)}"
        device = request.cookies.get(DEVICE_COOKIE)
        phone = f"device:{device}" if device else address
        for rate, key in ((self._miss_rate, phone), (self._address_miss_rate, address)):
            if not self._misses.test(rate, key):
                reset = self._misses.get_window_stats(rate, key).reset_time
                wait = max(1, math.ceil(reset - time.time()))
                return _error(429, "slow_down",
                              f"Too many codes that did not match: wait {wait} s, then check "
                              "the code on the projector and try again.",
                              {"Retry-After": str(wait)})
        try:
            code = normalize_join_code(raw)
            return await self.states.get(code)
        except (BadInput, UnknownPoll) as exc:
            self._misses.hit(self._miss_rate, phone)
            self._misses.hit(self._address_miss_rate, address)
            status, kind = (404, "unknown_poll") if isinstance(exc, UnknownPoll) else \
                (400, "bad_code")
            return _error(status, kind, join_error(exc, raw))
        except StoreUnavailable:
            return _error(503, "unavailable", "The class server cannot reach its database "
                          "right now. This page tries again by itself.")

    async def poll_state(self, request: Request) -> Response:
        found = await self._snapshot(request)
        if isinstance(found, Response):
            return found
        snap = found
        try:
            wait = min(MAX_WAIT_S, max(0.0, float(request.query_params.get("wait", 0))))
        except ValueError:
            wait = 0.0
        if _etag_matches(request, snap.version):
            if wait > 0:
                changed = await self.states.wait_for_change(snap.code, snap.version, wait)
                if changed is not None:
                    snap = changed
            if _etag_matches(request, snap.version):
                return Response(status_code=304, headers={"ETag": f'"{snap.version}"',
                                                          "Cache-Control": "no-cache"})
        return _json(snap.body, headers={"ETag": f'"{snap.version}"', "Cache-Control": "no-cache"})

    async def me(self, request: Request) -> Response:
        found = await self._snapshot(request)
        if isinstance(found, Response):
            return found
        device = request.cookies.get(DEVICE_COOKIE)
        if not device:
            return _error(400, "no_cookie", _NO_COOKIE)
        snap = found

        def read() -> dict[str, Any]:
            spent = self.service.spent_epsilon(snap.poll_id, device)
            receipt = None
            if snap.question_id is not None:
                got = self.service.receipt_for(snap.question_id, device)
                if got is not None:
                    receipt = receipt_view(got, snap.privacy_note or "", spent)
            return {"question_id": snap.question_id, "receipt": receipt,
                    "spent_epsilon": spent if math.isfinite(spent) else None}

        try:
            return _json(await run_in_threadpool(read))
        except StoreUnavailable:
            return _error(503, "unavailable", "The class server cannot reach its database "
                          "right now. This page tries again by itself.")
        except NotFound as exc:
            return _error(404, "unknown_question", f"{str(exc)[:1].upper()}{str(exc)[1:]}.")

    async def report(self, request: Request) -> Response:
        if not same_origin(request):
            return _error(403, "forbidden_origin", "Votes are accepted only from the class "
                          "page itself. Open the join link again and answer there.")
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "application/json":
            return _error(415, "unsupported_media_type", "A vote must be sent as JSON.")
        body = await self._read_body(request)
        if isinstance(body, Response):
            return body
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            return _error(400, "bad_request", "That vote could not be read, so nothing was "
                          "saved. Reload the page and tap your answer again.")
        if (not isinstance(data, dict) or set(data) != _REPORT_FIELDS
                or json_depth(data) > MAX_JSON_DEPTH or not isinstance(data["params"], dict)
                or not isinstance(data["submission_id"], str)
                or isinstance(data["question_id"], bool)
                or not isinstance(data["question_id"], int)):
            return _error(400, "bad_request", "That vote could not be read, so nothing was "
                          "saved. Reload the page and tap your answer again.")
        device = request.cookies.get(DEVICE_COOKIE)
        if not device:
            return _error(400, "no_cookie", _NO_COOKIE)
        raw = request.path_params["code"]

        try:
            snap: Snapshot | None = await self.states.get(normalize_join_code(raw))
        except ClassroomError:
            snap = None  # submit_report below gives the precise refusal

        def submit() -> dict[str, Any]:
            receipt = self.service.submit_report(
                raw, data["question_id"], answer=data["answer"], design_params=data["params"],
                submission_id=data["submission_id"], device_id=device,
                address=client_address(request))
            if snap is not None and snap.question_id == receipt.question_id:
                poll_id, note = snap.poll_id, snap.privacy_note
            else:  # the cached state is a moment old: read the question itself
                question = self.service.question(receipt.question_id)
                poll_id, note = question.poll_id, privacy_note(question)
            try:
                spent = self.service.spent_epsilon(poll_id, device)
            except StoreUnavailable:
                spent = math.nan  # stored; only the running total is unknown for now
            return {"receipt": receipt_view(receipt, note or "", spent)}

        try:
            return _json(await run_in_threadpool(submit))
        except AddressLimit:
            return _error(429, "address_limit", "Not saved: the instructor allows only a few "
                          "answers per network to this question, and this network has sent "
                          "them all. Tell the instructor.")
        except OverBudget as exc:
            return _error(409, "over_budget", f"{str(exc)[:1].upper()}{str(exc)[1:]}.")
        except QuestionClosed:
            return _error(409, "closed", "Voting closed: the instructor closed this question "
                          "before your answer arrived, so nothing was saved.")
        except DiskFull:
            return _error(503, "disk_full", "Not saved: the class server's disk is full. Tell "
                          "the instructor; once there is room, send your answer again.")
        except StoreUnavailable:
            return _error(503, "unavailable", _UNAVAILABLE)
        except UnknownPoll as exc:
            return _error(404, "unknown_poll", join_error(exc, raw))
        except UnknownQuestion:
            return _error(404, "unknown_question", "That question is not part of this poll "
                          "any more. Reload the page to get the current question.")
        except BadInput as exc:
            return _error(400, "bad_request", f"{str(exc)[:1].upper()}{str(exc)[1:]}.")
        except BadReport as exc:
            return _error(422, "rejected", f"Your answer was not accepted: {exc}. Reload the "
                          "page to get the current question.")
        except ClassroomError as exc:
            return _error(400, "bad_request", f"{str(exc)[:1].upper()}{str(exc)[1:]}.")

    async def _read_body(self, request: Request) -> bytes | Response:
        too_large = _error(413, "too_large", "That vote is far larger than a vote can be, so "
                           "nothing was saved.")
        declared = request.headers.get("content-length")
        if declared is not None:
            try:
                if int(declared) > MAX_BODY_BYTES:
                    return too_large
            except ValueError:
                return _error(400, "bad_request", "That vote could not be read.")
        chunks, size = [], 0
        try:
            async for chunk in request.stream():
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    return too_large
                chunks.append(chunk)
        except ClientDisconnect:
            return _error(400, "bad_request", "The connection closed before the vote arrived.")
        return b"".join(chunks)


def make_routes(api: PhoneApi) -> list[Route]:
    return [
        Route("/join", api.page, methods=["GET", "HEAD"]),
        Route("/join/{code}", api.page, methods=["GET", "HEAD"]),
        Route("/favicon.svg", api.favicon, methods=["GET", "HEAD"]),
        Route("/favicon.ico", api.favicon, methods=["GET", "HEAD"]),
        Route("/api/poll/{code}", api.poll_state, methods=["GET"]),
        Route("/api/poll/{code}/me", api.me, methods=["GET"]),
        Route("/api/poll/{code}/report", api.report, methods=["POST"]),
    ]
