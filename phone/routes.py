"""The student's path over plain HTTP: one small page and a JSON API, no Streamlit session.

URLs (registered through ``st.App(routes=...)`` on the app's own port):

* ``GET /join``, ``GET /join/{code}``: the phone page (one self-contained
  document, the same bytes for every code; its script reads the code from the
  address). ``GET /join?code=...`` redirects to ``/join/CODE``.
* ``GET /api/poll/{code}``: the poll's current question, shared by every phone,
  from :class:`phone.state.PollStates`. ETag = version; a matching
  ``If-None-Match`` gets 304 without a database read. ``?wait=N`` (N <= 55)
  holds the request until the version changes (200) or N seconds pass (304).
  A 200 carries ``now``, the server's time (ms since 1970) as it answers: a phone
  counts a countdown down from it, whatever its own clock says. With ``?me=1`` a 200
  also carries ``me``, what ``/me`` answers (or that answer's ``{"error", "message"}``):
  the page asks so on its first load and for every new question, one request instead
  of two; except a held long-poll from a browser that had not answered in the poll
  when it asked (it may have answered since: the page then asks ``/me``).
* ``GET /api/poll/{code}/me``: this device's receipt for the current question
  and the ε it has spent in the poll (needs the ``ldp_device`` cookie); without
  the poll's :data:`ANSWERED_COOKIE` from memory, else one read transaction.
* ``POST /api/poll/{code}/report``: one randomized report, through
  ``Reports.submit_report`` (same validation, dedup and idempotent
  submission id as every report), in one transaction; the receipt carries the
  device's spent ε, and the response sets :data:`ANSWERED_COOKIE`.

Every error is JSON ``{"error": code, "message": one sentence}`` and writes
nothing; :data:`READ_ERRORS` and :data:`REPORT_ERRORS` (over :data:`web.errors.ERRORS`,
resolved along the error's class hierarchy) say which. A POST must come from the app's
own origin, be ``application/json``, at most :data:`MAX_BODY_BYTES` and at most
:data:`MAX_JSON_DEPTH` deep.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import math
from collections.abc import Callable
from typing import Any, TypeGuard

from starlette.concurrency import run_in_threadpool
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route, Router
from starlette.types import ASGIApp

from classroom.domain import (
    AddressLimit,
    BadInput,
    BadReport,
    ClassroomError,
    Conflict,
    DiskFull,
    NotFound,
    StoreUnavailable,
    UnknownPoll,
    UnknownQuestion,
    normalize_join_code,
)
from classroom.service import PollService
from web import (
    MAX_ROW_ID,
    Guesses,
    GuessRule,
    Wait,
    client_address,
    is_secure,
    json_depth,
    parse_json,
    same_origin,
    visitor,
)
from web.errors import ERRORS, ErrorTable, HttpError, Refusal

from . import page
from .present import epoch_ms, join_error, privacy_note, receipt_view
from .state import PollStates, Snapshot

_LOG = logging.getLogger(__name__)

__all__ = ["ANSWERED_COOKIE", "JOIN_GUESSES", "JOIN_MISSES_PER_ADDRESS",
           "JOIN_MISSES_PER_MINUTE", "MAX_BODY_BYTES", "MAX_JSON_DEPTH", "MAX_WAIT_S",
           "PhoneApi", "direct", "is_phone_path", "make_routes"]

#: A report is a few hundred bytes; anything far larger is not from the page.
MAX_BODY_BYTES = 4096
MAX_JSON_DEPTH = 6
#: The longest a long-poll is held (s): the page asks 50 (``LONG_POLL_S`` in flow.js), and a
#: proxy in front must allow a request to wait this long (deploy/nginx-site.conf.template:
#: ``proxy_read_timeout 60s``). Each long-poll costs a waiting phone a request; longer ones
#: mean fewer of them, and a change still reaches every phone at once.
MAX_WAIT_S = 55.0
#: Wrong join codes one phone (its device cookie, else its address) may try per minute
#: before it is asked to slow down. Not per address alone: a lecture hall behind one NAT
#: shares an address, and one student's typos must not lock out the class.
JOIN_MISSES_PER_MINUTE = 10
#: Wrong join codes per minute from one network address, all its phones together, that
#: put it under attack: then only phones that did not guess (or that are already in the
#: poll) are let through (web.limits.Guesses). A lecture hall of 1,500 phones behind one
#: NAT where one student in three mistypes the code in the same minute stays below it.
JOIN_MISSES_PER_ADDRESS = 600
JOIN_GUESSES = GuessRule("join", JOIN_MISSES_PER_MINUTE, JOIN_MISSES_PER_ADDRESS)

#: Set, scoped to ``/api/poll/CODE``, on every receipt: "this browser has answered in this
#: poll". Without it ``/me`` needs no database read. It holds no id and no answer, and the
#: server keeps nothing: the browser already knows what it sent. It need not be signed:
#: the server believes only its absence, which a browser can always produce by deleting it,
#: and that only hides its own receipt from its own page until it answers (the service
#: still enforces the budget and returns the first receipt); a forged one costs a read.
ANSWERED_COOKIE = "ldp_answered"
ANSWERED_MAX_AGE_S = 365 * 24 * 3600

_PAGE_VERSION = hashlib.sha256(page.PAGE_HTML).hexdigest()[:20]
#: The page compressed once, at the highest level, instead of once per phone.
_PAGE_GZIP = gzip.compress(page.PAGE_HTML, compresslevel=9, mtime=0)
_REPORT_FIELDS = {"question_id", "answer", "params", "submission_id"}
_NO_COOKIE = ("This browser did not keep the class cookie, so your vote could be counted "
              "twice. Allow cookies for this site (or leave private browsing) and reload.")
_FOREIGN_COOKIE = ("This page's class cookie was not made by this class server (or the "
                   "server has a new key since), so your vote could not be counted. Reload "
                   "the page.")


def _join_error(request: Request, exc: Exception) -> str:
    return join_error(exc, request.path_params["code"])


#: Reading the poll's state and this device's receipt: the page asks again by itself.
READ_ERRORS = ERRORS.but({
    StoreUnavailable: HttpError(503, "unavailable", "The class server cannot reach its "
                                "database right now. This page tries again by itself."),
    BadInput: HttpError(400, "bad_code", _join_error),
    UnknownPoll: HttpError(404, "unknown_poll", _join_error),
    NotFound: HttpError(404, "unknown_question"),
})

#: Sending a report; nothing is written on any of these.
REPORT_ERRORS = ERRORS.but({
    StoreUnavailable: HttpError(503, "unavailable", "Not saved yet: the class server cannot "
                                "reach its database right now. Wait a moment, then send your "
                                "answer again."),
    DiskFull: HttpError(503, "disk_full", "Not saved: the class server's disk is full. Tell "
                        "the instructor; once there is room, send your answer again."),
    Conflict: HttpError(409, "conflict", "Not saved: the question changed while your answer "
                        "was being saved. Reload the page and answer again."),
    UnknownPoll: HttpError(404, "unknown_poll", _join_error),
    UnknownQuestion: HttpError(404, "unknown_question", "That question is not part of this "
                               "poll any more. Reload the page to get the current question."),
    BadReport: HttpError(422, "rejected", lambda request, exc: f"Your answer was not "
                         f"accepted: {exc}. Reload the page to get the current question."),
    AddressLimit: HttpError(429, "address_limit", "Not saved: the instructor allows only a "
                            "few answers per network to this question, and this network has "
                            "sent them all. Tell the instructor."),
})


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    data = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False,
                                                           allow_nan=False).encode()
    return Response(data, status_code=status, media_type="application/json",
                    headers={"Cache-Control": "no-store", **(headers or {})})


def _refused(table: ErrorTable, request: Request, exc: Exception) -> Response:
    """The JSON answer ``{"error": code, "message": sentence}`` for a refused request."""
    answer = table.resolve(exc)
    return _json(_said(answer, request, exc), answer.status, dict(answer.headers))


def _said(answer: HttpError, request: Request, exc: Exception) -> dict[str, str]:
    return {"error": answer.code, "message": answer.text(request, exc)}


def _etag_matches(request: Request, version: str) -> bool:
    wanted = request.headers.get("if-none-match", "")
    return any(tag.strip().removeprefix("W/").strip('"') == version
               for tag in wanted.split(",") if tag.strip())


class PhoneApi:
    """The handlers, around the process's PollService: ``service_factory()`` gives it on
    first use (the composition root's, :mod:`web.composition`, built at start; tests pass
    their own). With ``follow_changes``, the polls' states follow the database's
    announcements of changes (PostgreSQL), from every process."""

    def __init__(self, service_factory: Callable[[], PollService], *, ttl: float = 1.0,
                 follow_changes: bool = False) -> None:
        self._service_factory = service_factory
        self._ttl = ttl
        self._follow = follow_changes
        self._service: PollService | None = None
        self._states: PollStates | None = None

    @property
    def service(self) -> PollService:
        if self._service is None:
            self._service = self._service_factory()
        return self._service

    @property
    def states(self) -> PollStates:
        if self._states is None:
            self._states = PollStates(
                self.service, ttl=self._ttl,
                changes=self.service.store.poll_changes if self._follow else None)
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
    async def _snapshot(self, request: Request) -> Snapshot:
        """The poll's shared state. A wrong code counts against the phone (its device
        cookie, else its address) and its address; a phone that guessed too often waits
        (:data:`JOIN_GUESSES`), even with the right code."""
        seen, address = visitor(request), client_address(request)
        guesses = Guesses(seen.edge.limits, JOIN_GUESSES)
        code = request.path_params["code"]
        try:
            code = normalize_join_code(code)
        except BadInput:
            pass  # not a code at all: refused below, with its sentence, as a wrong guess
        wait = guesses.refused(seen.device, address, code)
        if wait is not None:
            raise _slow_down(wait)
        try:
            snap = await self.states.get(normalize_join_code(code))
        except (BadInput, UnknownPoll):
            guesses.missed(seen.device, address)
            raise
        if "if-none-match" not in request.headers:  # a page's first look, not a long-poll
            guesses.found(seen.device, snap.code)
        return snap

    async def poll_state(self, request: Request) -> Response:
        try:
            snap = await self._snapshot(request)
        except (Refusal, ClassroomError) as exc:
            return _refused(READ_ERRORS, request, exc)
        try:
            wait = min(MAX_WAIT_S, max(0.0, float(request.query_params.get("wait", 0))))
        except ValueError:
            wait = 0.0
        held = False
        if _etag_matches(request, snap.version):
            if wait > 0:
                held = True
                changed = await self.states.wait_for_change(snap.code, snap.version, wait)
                if changed is not None:
                    snap = changed
            if _etag_matches(request, snap.version):
                return Response(status_code=304, headers={"ETag": f'"{snap.version}"',
                                                          "Cache-Control": "no-cache"})
        body = _with_now(snap.body, epoch_ms(self.service.running.now()))
        # A held request's cookies are as old as the request: a browser that has answered
        # since (its ANSWERED_COOKIE came meanwhile) would get "no receipt" from memory.
        # Then no `me`: the page asks /me, with the cookies it has now.
        if request.query_params.get("me") == "1" and (
                not held or ANSWERED_COOKIE in request.cookies):
            try:
                mine = await self._my_status(request, snap)
            except (Refusal, ClassroomError) as exc:
                mine = _said(READ_ERRORS.resolve(exc), request, exc)
            body = _with_member(body, "me", mine)
        return _json(body, headers={"ETag": f'"{snap.version}"', "Cache-Control": "no-cache"})

    async def me(self, request: Request) -> Response:
        """This device's receipt for the current question and the ε it has spent in the
        poll (the page asks after a send that ended on an older question)."""
        try:
            return _json(await self._my_status(request, await self._snapshot(request)))
        except (Refusal, ClassroomError) as exc:
            return _refused(READ_ERRORS, request, exc)

    async def _my_status(self, request: Request, snap: Snapshot) -> dict[str, Any]:
        """What ``/me`` answers. A browser without the poll's :data:`ANSWERED_COOKIE` has
        sent no answer to this poll: it is answered from memory, with no database read."""
        device = _device(request)
        if ANSWERED_COOKIE not in request.cookies:
            return {"question_id": snap.question_id, "receipt": None, "spent_epsilon": 0.0}
        return await run_in_threadpool(self._mine, snap, device)

    def _mine(self, snap: Snapshot, device: str) -> dict[str, Any]:
        receipt, spent, cost = self.service.reports.device_budget(snap.poll_id,
                                                                  snap.question_id, device)
        mine = {"question_id": snap.question_id,
                "receipt": None if receipt is None else receipt_view(receipt,
                                                                     snap.privacy_note or ""),
                "spent_epsilon": spent if math.isfinite(spent) else None}
        if cost is not None:  # a series: what this question adds to this phone's spending
            mine["cost_epsilon"] = cost
        return mine

    # -- the report ----------------------------------------------------------------------
    async def report(self, request: Request) -> Response:
        try:
            data, device = await _report_body(request)
            snap = await self._cached_state(request)
            body, code = await run_in_threadpool(self._submit, request, data, device, snap)
        except (Refusal, ClassroomError) as exc:
            return _refused(REPORT_ERRORS, request, exc)
        response = _json(body)
        # Marks this browser as one that answered in this poll, for /me (see there).
        response.set_cookie(ANSWERED_COOKIE, "1", max_age=ANSWERED_MAX_AGE_S,
                            path=f"/api/poll/{code}", secure=is_secure(request),
                            httponly=True, samesite="strict")
        return response

    async def _cached_state(self, request: Request) -> Snapshot | None:
        """The poll's state, as :meth:`_snapshot` (a wrong code counts as a guess here too),
        or None when it cannot be read now: submit_report gives the precise refusal."""
        try:
            return await self._snapshot(request)
        except StoreUnavailable:
            return None

    def _submit(self, request: Request, data: dict[str, Any], device: str,
                snap: Snapshot | None) -> tuple[dict[str, Any], str]:
        """The receipt's JSON and the poll's join code: one transaction
        (``submit_report``), whose receipt carries the ε this device has spent."""
        code = normalize_join_code(request.path_params["code"])
        receipt = self.service.reports.submit_report(
            code, data["question_id"], answer=data["answer"], design_params=data["params"],
            submission_id=data["submission_id"], device_id=device,
            address=client_address(request))
        if snap is not None and snap.question_id == receipt.question_id:
            note = snap.privacy_note
        else:  # the cached state is a moment old: word the receipt from the question itself
            note = privacy_note(self.service.polls.question(receipt.question_id))
        return {"receipt": receipt_view(receipt, note or "")}, code


def _with_now(body: bytes, now_ms: int) -> bytes:
    """The shared state's JSON object with the server's time as its first member.

    >>> _with_now(b'{"version": "v1"}', 1700000000000)
    b'{"now": 1700000000000, "version": "v1"}'
    """
    return b'{"now": %d, ' % now_ms + body[1:]


def _with_member(body: bytes, name: str, value: Any) -> bytes:
    """A JSON object's bytes with one more member, first.

    >>> _with_member(b'{"now": 1}', "me", {"receipt": None})
    b'{"me": {"receipt": null}, "now": 1}'
    """
    return (b'{"' + name.encode() + b'": '
            + json.dumps(value, ensure_ascii=False, allow_nan=False).encode() + b", " + body[1:])


def _slow_down(wait: Wait) -> Refusal:
    text = wait.sentence(too_many="Too many codes that did not match", wrong="codes",
                         then="check the code on the projector and try again")
    return Refusal(429, "slow_down", text, {"Retry-After": str(wait.seconds)})


def _device(request: Request) -> str:
    """The id of the device that sent ``request`` (its cookie, signed by this app); else a
    refusal that says why there is none and asks for a reload."""
    seen = visitor(request)
    if seen.device is not None:
        return seen.device.id
    if seen.sent_cookie:
        raise Refusal(400, "no_cookie", _FOREIGN_COOKIE)
    wait = seen.edge.devices.exhausted(client_address(request))
    if wait is not None:
        raise Refusal(400, "no_cookie", f"Many phones on this network joined in the last "
                      f"minute, so this one got no class cookie yet. Wait {wait} s, then "
                      f"reload the page.", {"Retry-After": str(wait)})
    raise Refusal(400, "no_cookie", _NO_COOKIE)


def _is_report(data: object) -> TypeGuard[dict[str, Any]]:
    """Whether parsed JSON has exactly a report's fields, of the right types (a question id
    that no row can have is not one)."""
    return (isinstance(data, dict) and set(data) == _REPORT_FIELDS
            and json_depth(data) <= MAX_JSON_DEPTH and isinstance(data["params"], dict)
            and isinstance(data["submission_id"], str)
            and isinstance(data["question_id"], int) and not isinstance(data["question_id"], bool)
            and 0 < data["question_id"] <= MAX_ROW_ID)


async def _report_body(request: Request) -> tuple[dict[str, Any], str]:
    """The report a phone sent and its device id, checked before the service sees them:
    same origin, JSON, small, shallow, exactly the report's fields; else a :class:`Refusal`."""
    if not same_origin(request):
        raise Refusal(403, "forbidden_origin", "Votes are accepted only from the class page "
                      "itself. Open the join link again and answer there.")
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/json":
        raise Refusal(415, "unsupported_media_type", "A vote must be sent as JSON.")
    try:
        data = parse_json(await _read_body(request))
    except (ValueError, RecursionError):
        data = None
    if not _is_report(data):
        raise Refusal(400, "bad_request", "That vote could not be read, so nothing was saved. "
                      "Reload the page and tap your answer again.")
    return data, _device(request)


async def _read_body(request: Request) -> bytes:
    too_large = Refusal(413, "too_large", "That vote is far larger than a vote can be, so "
                        "nothing was saved.")
    declared = request.headers.get("content-length", "0")
    if not declared.isdigit():
        raise Refusal(400, "bad_request", "That vote could not be read.")
    if int(declared) > MAX_BODY_BYTES:
        raise too_large
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise too_large
            chunks.append(chunk)
    except ClientDisconnect:
        _LOG.warning("a vote's connection closed before its body arrived; nothing was saved")
        raise Refusal(400, "bad_request", "The connection closed before the vote "
                      "arrived.") from None
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


def is_phone_path(path: str) -> bool:
    """Whether ``path`` is one of :func:`make_routes`' (the page, its favicon, the API).

    >>> [is_phone_path(p) for p in ("/join", "/join/K7QM2P", "/api/poll/K7QM2P/me",
    ...                             "/favicon.svg", "/", "/dashboard", "/joined")]
    [True, True, True, True, False, False, False]
    """
    return (path.startswith(("/api/poll/", "/join/")) or path == "/join"
            or path in ("/favicon.svg", "/favicon.ico"))


def direct(api: PhoneApi) -> tuple[Callable[[str], bool], ASGIApp]:
    """The phone routes as ``web.middleware``'s ``direct`` pair: the paths they serve and
    a router of their own (a wrong method or sub-path gets Starlette's 405 or 404), so
    that phone requests skip the layers of the Streamlit app they do not use."""
    return is_phone_path, ExceptionMiddleware(Router(routes=make_routes(api)))
