"""A headless browser tab that speaks Streamlit's own websocket protocol.

The load harness (``bench/load.py``) runs hundreds of these on one core; the
failure tests drive them one by one. A :class:`Tab` does what the Streamlit
frontend does, minus rendering:

1. ``GET /?<query>`` with ``Accept: text/html`` (the page load: the
   ``web`` middleware answers it with the ``ldp_device`` cookie);
2. open ``/_stcore/stream`` with the subprotocol ``streamlit`` and the cookies
   in the handshake (``st.context.cookies`` reads them there);
3. send ``BackMsg.rerun_script`` (query string, page hash, widget states,
   the hashes of cached messages) and read ``ForwardMsg`` until the run's
   ``script_finished``.

Like the browser it keeps the cacheable messages it received and tells the
server their hashes, so unchanged elements come back as ``ref_hash``
references (the frontend's forward-message cache). It does not fetch the
JavaScript bundle, run components' JavaScript or send heartbeats.

:class:`Student` adds the classroom's vote: it finds the ``ldp_vote``
component (a ``bidi_component`` element) and "taps" by sending the trigger
widget state ``$$STREAMLIT_INTERNAL_KEY_<element id>__events`` carrying
``[{"event": "vote", "value": {"answer", "params", "submission_id"}}]``,
the exact frame the component's JavaScript sends.

>>> async def one_vote(base, code):  # doctest: +SKIP
...     async with Student(base, code) as s:
...         first = await s.join()
...         receipt = await s.tap(1)
...         return receipt.has_text("Answer received")
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

__all__ = ["DEVICE_COOKIE", "ProtocolError", "RunResult", "Student", "Tab", "VOTE_COMPONENT",
           "events_widget_id", "http_get"]

DEVICE_COOKIE = "ldp_device"
VOTE_COMPONENT = "ldp_vote"
_INTERNAL = "$$STREAMLIT_INTERNAL_KEY"
_END = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR,
        ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}


class ProtocolError(RuntimeError):
    """The server closed the stream, answered something unexpected, or took too long."""


def events_widget_id(element_id: str) -> str:
    """The widget id a v2 component's trigger events travel under."""
    return f"{_INTERNAL}_{element_id}__events"


async def http_get(base_url: str, path_and_query: str, *, cookies: dict[str, str] | None = None,
                   timeout: float = 30.0) -> tuple[int, dict[str, str], bytes]:
    """A minimal HTTP/1.1 GET on a fresh connection: ``(status, Set-Cookie values, body)``.

    Written on asyncio streams so hundreds run at once without a shared
    cookie jar (each simulated phone must get its own device cookie).
    """
    parts = urlsplit(base_url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    lines = [f"GET {path_and_query} HTTP/1.1", f"Host: {parts.netloc}",
             "Accept: text/html,application/xhtml+xml", "Connection: close",
             "User-Agent: ldp-classroom-headless-student"]
    if cookies:
        lines.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in cookies.items()))

    async def fetch() -> tuple[int, dict[str, str], bytes]:
        reader, writer = await asyncio.open_connection(host, port)
        try:
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
            await writer.drain()
            raw = await reader.read()
        finally:
            writer.close()
        head, _, body = raw.partition(b"\r\n\r\n")
        header_lines = head.decode("latin-1").split("\r\n")
        if not header_lines or not header_lines[0].startswith("HTTP/"):
            raise ProtocolError(f"GET {path_and_query}: no HTTP response")
        status = int(header_lines[0].split()[1])
        set_cookies: dict[str, str] = {}
        for line in header_lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "set-cookie":
                pair = value.strip().split(";", 1)[0]
                k, _, v = pair.partition("=")
                set_cookies[k.strip()] = v.strip()
        return status, set_cookies, body

    return await asyncio.wait_for(fetch(), timeout)


@dataclass
class RunResult:
    """What one script run sent: its elements (references resolved) and how it ended.

    Deltas are placed by their ``delta_path`` as the frontend does: a delta at a
    path replaces what was there, with everything inside it (``st.empty()``
    cleared after drawing a container removes the container's widgets).
    """

    status: int = 0
    tree: dict[tuple[int, ...], Any] = field(default_factory=dict)  # path -> Element | None
    auto_reruns: dict[str, float] = field(default_factory=dict)  # fragment id -> interval
    messages: int = 0
    seconds: float = 0.0

    def place(self, path: Sequence[int], element: Any) -> None:
        """Put ``element`` (None for a block) at ``path``, replacing that subtree."""
        key = tuple(path)
        n = len(key)
        for old in [k for k in self.tree if k[:n] == key]:
            del self.tree[old]
        self.tree[key] = element

    @property
    def elements(self) -> list[Any]:
        """The run's elements in page order (streamlit.proto Element)."""
        return [self.tree[k] for k in sorted(self.tree) if self.tree[k] is not None]

    def texts(self) -> list[str]:
        """Every markdown, caption, alert, heading and exception text of the run."""
        out: list[str] = []
        for el in self.elements:
            kind = el.WhichOneof("type")
            if kind == "markdown":
                out.append(el.markdown.body)
            elif kind == "alert":
                out.append(el.alert.body)
            elif kind == "heading":
                out.append(el.heading.body)
            elif kind == "exception":
                out.append(f"{el.exception.type}: {el.exception.message}")
            elif kind == "text":
                out.append(el.text.body)
        return out

    def has_text(self, needle: str) -> bool:
        return any(needle in t for t in self.texts())

    def alerts(self, fmt: str | None = None) -> list[str]:
        """Bodies of ``st.error/warning/info/success`` (``fmt`` e.g. ``"ERROR"``)."""
        from streamlit.proto.Alert_pb2 import Alert

        return [el.alert.body for el in self.elements if el.WhichOneof("type") == "alert"
                and (fmt is None or Alert.Format.Name(el.alert.format) == fmt)]

    def exceptions(self) -> list[str]:
        """Tracebacks the page showed (``st.exception`` or an uncaught error)."""
        return [f"{el.exception.type}: {el.exception.message}" for el in self.elements
                if el.WhichOneof("type") == "exception"]

    def component(self, name: str = VOTE_COMPONENT):
        """The first ``bidi_component`` named ``name``, or None."""
        for el in self.elements:
            if el.WhichOneof("type") == "bidi_component" and \
                    el.bidi_component.component_name == name:
                return el.bidi_component
        return None

    def button(self, label: str):
        """The first button with this label, or None."""
        for el in self.elements:
            if el.WhichOneof("type") == "button" and el.button.label == label:
                return el.button
        return None

    def text_inputs(self) -> list[Any]:
        return [el.text_input for el in self.elements if el.WhichOneof("type") == "text_input"]


class Tab:
    """One browser tab on one websocket: ``open()``, then ``run()`` as often as needed."""

    def __init__(self, base_url: str, query_string: str = "", *,
                 cookies: dict[str, str] | None = None, timeout: float = 60.0,
                 timezone: str = "Europe/Zurich") -> None:
        self.base_url = base_url.rstrip("/")
        self.query_string = query_string
        self.cookies: dict[str, str] = dict(cookies or {})
        self.timeout = timeout
        self.timezone = timezone
        self.page_script_hash = ""
        self.session_id: str | None = None
        self.auto_reruns: dict[str, float] = {}
        self._cache: dict[str, ForwardMsg] = {}
        self._ws = None

    # -- connection -----------------------------------------------------------------------
    async def load_page(self) -> int:
        """GET the page like a browser navigation; keep the cookies it sets."""
        path = "/" + (f"?{self.query_string}" if self.query_string else "")
        status, set_cookies, _ = await http_get(self.base_url, path, cookies=self.cookies,
                                                timeout=self.timeout)
        self.cookies.update(set_cookies)
        return status

    async def connect(self, *, max_size: int | None = 2 ** 24) -> None:
        """Open the websocket as a browser tab of the page does: the subprotocol list
        "streamlit", the cookies, and an ``Origin`` (Streamlit compares it with ``Host``;
        on loopback a mismatch is still allowed, on a real host name it is refused)."""
        from websockets.asyncio.client import connect
        from websockets.typing import Origin

        uri = "ws" + self.base_url[len("http"):] + "/_stcore/stream"
        headers = {}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        self._ws = await asyncio.wait_for(
            connect(uri, subprotocols=["streamlit"], additional_headers=headers,
                    origin=Origin(self.base_url),
                    max_size=max_size, open_timeout=self.timeout, ping_interval=None,
                    proxy=None, user_agent_header="ldp-classroom-headless-student"),
            self.timeout)

    async def open(self) -> None:
        await self.load_page()
        await self.connect()

    async def reconnect(self) -> None:
        """A new websocket with the same cookies, as the frontend does after a drop
        (the server that answers may be another process: a new session)."""
        await self.close()
        await self.connect()

    async def close(self) -> None:
        if self._ws is not None:
            ws, self._ws = self._ws, None
            try:
                await asyncio.wait_for(ws.close(), 5)
            except Exception:  # noqa: BLE001 - closing a dead socket is not an error here
                pass

    @property
    def connected(self) -> bool:
        return self._ws is not None

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    # -- running the script ---------------------------------------------------------------
    def rerun_message(self, widgets: Iterable[WidgetState] = (), *, fragment_id: str = "",
                      auto: bool = False) -> BackMsg:
        msg = BackMsg()
        rs = msg.rerun_script
        rs.query_string = self.query_string
        rs.page_script_hash = self.page_script_hash
        rs.page_name = ""
        rs.widget_states.widgets.extend(list(widgets))
        rs.cached_message_hashes.extend(sorted(self._cache))
        rs.context_info.timezone = self.timezone
        rs.context_info.locale = "en-GB"
        rs.context_info.url = f"{self.base_url}/?{self.query_string}"
        if fragment_id:
            rs.fragment_id = fragment_id
            rs.is_auto_rerun = auto
        return msg

    async def send_raw(self, data: bytes | str) -> None:
        """Send one frame as it is (``str`` makes a text frame)."""
        if self._ws is None:
            raise ProtocolError("not connected")
        try:
            await self._ws.send(data)
        except Exception as exc:  # websockets.ConnectionClosed and friends
            self._ws = None
            raise ProtocolError(f"stream closed: {type(exc).__name__}: {exc}") from exc

    async def run(self, widgets: Iterable[WidgetState] = (), *, fragment_id: str = "",
                  auto: bool = False) -> RunResult:
        """Send one ``rerun_script`` and collect the run up to its ``script_finished``.

        Runs that end early for a rerun (``st.rerun()``) are followed into the
        next run; the result holds the last run's elements.
        """
        started = time.perf_counter()
        await self.send_raw(self.rerun_message(widgets, fragment_id=fragment_id,
                                               auto=auto).SerializeToString())
        return await self.read_run(started)

    async def read_run(self, started: float | None = None) -> RunResult:
        started = time.perf_counter() if started is None else started
        result = RunResult()
        deadline = started + self.timeout
        while True:
            msg = await self._next_message(deadline)
            result.messages += 1
            msg, kind = self._resolved(msg)
            if kind == "script_finished":
                if msg.script_finished in _END:
                    result.status = msg.script_finished
                    result.seconds = time.perf_counter() - started
                    return result
                continue  # FINISHED_EARLY_FOR_RERUN: the next run follows on the same stream
            self._take(msg, kind, result)

    async def _next_message(self, deadline: float) -> ForwardMsg:
        """The next message of the stream, before ``deadline``; ProtocolError otherwise."""
        left = deadline - time.perf_counter()
        if left <= 0:
            raise ProtocolError(f"no script_finished within {self.timeout:.0f} s")
        try:
            raw = await asyncio.wait_for(self._ws.recv(), left)
        except TimeoutError:
            raise ProtocolError(f"no script_finished within {self.timeout:.0f} s") from None
        except Exception as exc:  # websockets.ConnectionClosed and friends
            self._ws = None
            raise ProtocolError(f"stream closed: {type(exc).__name__}: {exc}") from exc
        if isinstance(raw, str):
            raise ProtocolError("text frame on the stream")
        msg = ForwardMsg()
        msg.ParseFromString(raw)
        return msg

    def _resolved(self, msg: ForwardMsg) -> tuple[ForwardMsg, str | None]:
        """A message and its type, a reference to a cached message replaced by it (and a
        cacheable one kept)."""
        kind = msg.WhichOneof("type")
        if kind == "ref_hash":
            cached = self._cache.get(msg.ref_hash)
            if cached is None:
                raise ProtocolError(f"reference to a message never received: {msg.ref_hash}")
            cached = ForwardMsg.FromString(cached.SerializeToString())
            cached.metadata.CopyFrom(msg.metadata)
            return cached, cached.WhichOneof("type")
        if msg.metadata.cacheable and msg.hash:
            self._cache[msg.hash] = msg
        return msg, kind

    def _take(self, msg: ForwardMsg, kind: str | None, result: RunResult) -> None:
        """What one message of a run changes: the session, the page, the element tree or
        the fragments' timers."""
        if kind == "new_session":
            result.tree.clear()
            if msg.new_session.page_script_hash:
                self.page_script_hash = msg.new_session.page_script_hash
            self.session_id = msg.new_session.initialize.session_id or self.session_id
        elif kind == "navigation" and msg.navigation.page_script_hash:
            self.page_script_hash = msg.navigation.page_script_hash
        elif kind == "delta":
            delta_kind = msg.delta.WhichOneof("type")
            if delta_kind in ("new_element", "add_block"):
                result.place(msg.metadata.delta_path, msg.delta.new_element
                             if delta_kind == "new_element" else None)
        elif kind == "auto_rerun":
            result.auto_reruns[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
            self.auto_reruns[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
        elif kind == "stop_auto_rerun":
            for fid in msg.stop_auto_rerun.fragment_ids:
                self.auto_reruns.pop(fid, None)

    async def click(self, button) -> RunResult:
        """Click a ``st.button`` (its element proto, from :meth:`RunResult.button`)."""
        return await self.run([WidgetState(id=button.id, trigger_value=True)])

    async def type_text(self, text_input, value: str, submit_button=None) -> RunResult:
        """Type into a text input (and press a form's submit button, if given)."""
        widgets = [WidgetState(id=text_input.id, string_value=value)]
        if submit_button is not None:
            widgets.append(WidgetState(id=submit_button.id, trigger_value=True))
        return await self.run(widgets)


def vote_event(answer: Any, params: Any, submission_id: str) -> str:
    """The JSON the component's ``setTriggerValue('vote', ...)`` produces."""
    return json.dumps([{"event": "vote", "value": {"answer": answer, "params": params,
                                                   "submission_id": submission_id}}])


class Student(Tab):
    """A phone in the lecture hall: join ``/?poll=CODE``, tap, read the receipt."""

    def __init__(self, base_url: str, code: str, **kwargs: Any) -> None:
        super().__init__(base_url, f"poll={code}", **kwargs)
        self.code = code
        self.vote_element = None  # the last ldp_vote component seen
        self.submission_id: str | None = None

    @property
    def device_id(self) -> str | None:
        """The device id the service sees: the app's signed cookie holds it before its
        timestamp and signature (``id.timestamp.signature``, itsdangerous)."""
        cookie = self.cookies.get(DEVICE_COOKIE)
        return cookie.rsplit(".", 2)[0] if cookie else None

    async def join(self) -> RunResult:
        """Load the page, open the stream and run the script once."""
        await self.open()
        return self.remember(await self.run())

    def remember(self, result: RunResult) -> RunResult:
        comp = result.component()
        if comp is not None:
            self.vote_element = comp
        return result

    def design_params(self) -> dict:
        if self.vote_element is None:
            raise ProtocolError("no vote component on the page")
        return json.loads(self.vote_element.json)["params"]

    def tap_widgets(self, answer: Any, *, params: Any = None, submission_id: str | None = None,
                    raw_events: str | None = None) -> Sequence[WidgetState]:
        """The widget states of a tap (``raw_events`` replaces the JSON, for abuse tests)."""
        if self.vote_element is None:
            raise ProtocolError("no vote component on the page")
        if raw_events is None:
            self.submission_id = submission_id or str(uuid.uuid4())
            raw_events = vote_event(answer, self.design_params() if params is None else params,
                                    self.submission_id)
        return [WidgetState(id=events_widget_id(self.vote_element.id),
                            json_trigger_value=raw_events)]

    async def tap(self, answer: Any, **kwargs: Any) -> RunResult:
        """Send the randomized ``answer`` as the component would; return the run."""
        return self.remember(await self.run(self.tap_widgets(answer, **kwargs)))
