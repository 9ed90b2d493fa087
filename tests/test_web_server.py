"""The HTTP edge of a real server, started as the README says (``streamlit run app.py``,
every interface): no page can be framed, only the app's own host names are answered, a
phone on the LAN address votes, and requests cut off mid-body leave no traceback.

Before: Streamlit's pages sent no ``X-Frame-Options`` and no ``frame-ancestors`` (a
page on another port of the same host framed the dashboard, and a click in the frame
changed the database); the old join link's 303 and the 500s lacked ``Referrer-Policy``
and ``nosniff``; a DNS-rebinding page (another site's name in ``Host``) voted and logged
in; a login POST cut off mid-body was a 500 with a traceback.
"""

from __future__ import annotations

import asyncio
import re
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from bench.cluster import running_server
from classroom.domain import CLASS_EXERCISE
from tests.support.phone_client import PhoneStudent
from web.startup import _lan_address

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parents[1]
KEY = "web-server-test-key-0123"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from classroom.service import PollService
    from classroom.store import Store

    data = tmp_path_factory.mktemp("edge")
    url = f"sqlite:///{data / 'classroom.db'}"
    env = {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_DATABASE_URL": url,
           "LDP_CLASSROOM_INSTRUCTOR_KEY": KEY}
    store = Store(url)
    try:
        svc = PollService.on(store)
        poll = svc.polls.create_poll("edge")
        q = svc.polls.add_question(poll.id, "Vanilla?", options=("Chocolate", "Vanilla"),
                                   design_params=dict(CLASS_EXERCISE))
        q = svc.running.open_question(q.id)
        with running_server(env, address=None, log_path=data / "server.log",
                            timeout=120) as srv:
            yield srv, svc, poll, q
    finally:
        store.close()


def _get(url: str, *, method: str = "GET", headers: dict | None = None,
         data: bytes | None = None):
    """(status, headers, body) of one request, following no redirect."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    request = urllib.request.Request(url, method=method, headers=headers or {}, data=data)
    try:
        with opener.open(request, timeout=60) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def _page_paths() -> list[str]:
    """Every page of the navigation, as views/shell.py names them (the home page is /)."""
    shell = (ROOT / "views" / "shell.py").read_text()
    return ["/", *(f"/{p}" for p in re.findall(r'url_path="([^"]+)"', shell))]


def test_no_page_can_be_framed_and_every_answer_carries_the_security_headers(server):
    srv, _, poll, _ = server
    status, _, index = _get(srv.url + "/", headers={"Accept": "text/html"})
    assert status == 200
    assets = re.findall(rb'(?:src|href)="\.?(/static/[^"]+)"', index)
    assert assets, index[:500]
    answers = {f"page {p}": _get(srv.url + p, headers={"Accept": "text/html"})
               for p in _page_paths()}
    assert len(answers) >= 10 and "page /dashboard" in answers
    answers |= {f"static {a.decode()}": _get(srv.url + a.decode()) for a in assets}
    answers |= {
        "old join link (303)": _get(srv.url + f"/?poll={poll.join_code}"),
        "missing static file (404)": _get(srv.url + "/static/js/nothing-here.js"),
        "phone page": _get(srv.url + f"/join/{poll.join_code}",
                           headers={"Accept": "text/html"}),
        "poll state": _get(srv.url + f"/api/poll/{poll.join_code}"),
        "unknown poll (404)": _get(srv.url + "/api/poll/ZZZZZZ"),
        "login page": _get(srv.url + "/auth/login"),
        "favicon": _get(srv.url + "/favicon.svg"),
        "health": _get(srv.url + "/_stcore/health"),
        "wrong method (405)": _get(srv.url + "/_stcore/health", method="DELETE"),
    }
    assert answers["old join link (303)"][0] == 303
    for name, (status, headers, _) in answers.items():
        policies = headers.get_all("Content-Security-Policy") or []
        assert any("frame-ancestors 'none'" in p for p in policies), (name, status, policies)
        assert headers["X-Frame-Options"] == "DENY", name
        assert headers["Referrer-Policy"] == "same-origin", name
        assert headers["X-Content-Type-Options"] == "nosniff", name


def test_a_rebinding_page_can_neither_vote_nor_log_in(server):
    """A page at evil.example whose name now resolves to this server: its requests are
    same-origin for the browser (Origin and Host both evil.example), so only the Host
    check can tell them from the app's own."""
    srv, svc, poll, q = server
    port = srv.url.rsplit(":", 1)[1]
    evil = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
    page = _get(srv.url + f"/join/{poll.join_code}", headers={**evil, "Accept": "text/html"})
    assert page[0] == 421 and b"does not answer to the name evil.example" in page[2]
    assert "set-cookie" not in {k.lower() for k in page[1].keys()}
    state = _get(srv.url + f"/api/poll/{poll.join_code}", headers=evil)
    assert state[0] == 421 and poll.join_code.encode() not in state[2]
    vote = _get(srv.url + f"/api/poll/{poll.join_code}/report", method="POST",
                headers={**evil, "Content-Type": "application/json"},
                data=b'{"question_id": %d, "answer": 1, "params": {}, '
                     b'"submission_id": "rebinding-0001"}' % q.id)
    login = _get(srv.url + "/auth/login", method="POST", data=f"key={KEY}".encode(),
                 headers={**evil, "Content-Type": "application/x-www-form-urlencoded"})
    assert vote[0] == 421 and login[0] == 421
    assert "set-cookie" not in {k.lower() for k in login[1].keys()}
    assert svc.results.estimate(q.id).n == 0


def test_a_websocket_to_a_foreign_host_is_refused(server):
    import websockets

    srv, *_ = server
    port = int(srv.url.rsplit(":", 1)[1])

    async def connect(name: str) -> str:
        """The handshake names ``name`` in Host; the connection goes to this server."""
        try:
            async with websockets.connect(f"ws://{name}:{port}/_stcore/stream",
                                          host="127.0.0.1", port=port,
                                          subprotocols=["streamlit"], open_timeout=30):
                return "open"
        except websockets.exceptions.InvalidStatus as exc:
            return str(exc.response.status_code)

    assert asyncio.run(connect("evil.example")) == "403"
    assert asyncio.run(connect("127.0.0.1")) == "open"


def test_the_apps_own_hosts_are_answered_and_a_phone_on_the_lan_address_votes(server):
    srv, svc, poll, q = server
    port = int(srv.url.rsplit(":", 1)[1])
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}",
                 f"{socket.gethostname()}:{port}"):
        status, _, _ = _get(srv.url + "/_stcore/health", headers={"Host": host})
        assert status == 200, host
    lan = _lan_address()
    if lan is None:
        pytest.skip("this machine has no address on a local network")
    before = svc.results.estimate(q.id).n

    async def vote():
        async with PhoneStudent(f"http://{lan}:{port}", poll.join_code, timeout=60) as phone:
            assert (await phone.join()).status == 200
            return await phone.vote(1)

    assert asyncio.run(vote()).status == 200
    assert svc.results.estimate(q.id).n == before + 1


@pytest.mark.parametrize("path", ["/auth/login", "/api/poll/{code}/report"])
def test_a_request_cut_off_mid_body_leaves_no_traceback(server, path):
    """The client declares 200 bytes, sends 20 and goes away."""
    srv, _, poll, _ = server
    host, port = srv.url.split("//", 1)[1].split(":")
    before = srv.log()
    target = path.format(code=poll.join_code)
    kind = ("application/json" if "report" in path else "application/x-www-form-urlencoded")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(f"POST {target} HTTP/1.1\r\nHost: {host}:{port}\r\n"
                     f"Origin: http://{host}:{port}\r\nContent-Type: {kind}\r\n"
                     "Content-Length: 200\r\n\r\n".encode() + b"key=not-the-whole-f")
    assert _get(srv.url + "/_stcore/health")[0] == 200  # and the server is fine
    # The server notices the closed connection on its own schedule, and says so in one
    # line: wait for that line (a deadline, not a fixed pause), then look at what it wrote.
    deadline = time.monotonic() + 60
    while "closed before its body arrived" not in srv.log()[len(before):]:
        assert time.monotonic() < deadline, "the server never noted the cut-off request"
        time.sleep(0.1)
    new = srv.log()[len(before):]
    assert new.strip() and "Traceback" not in new and "Exception" not in new, new


def _read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response with a Content-Length, read off ``sock``."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        assert chunk, f"closed before a whole response: {buf!r}"
        buf += chunk
    head, body = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (h.split(":", 1) for h in lines[1:])}
    while len(body) < int(headers.get("content-length", "0")):
        body += sock.recv(65536)
    return int(lines[0].split()[1]), headers, body


def test_a_report_refused_for_its_size_before_its_body_ends_keeps_the_connection_usable(server):
    """The 413 goes out on the declared length, before the body arrives; the rest of that
    body is still that request's, not the next request's headers. (Before: the server
    counted it against the next request's 16 KB of headers and answered that one 431.)"""
    srv, _, poll, _ = server
    host, port = srv.url.split("//", 1)[1].split(":")
    size = 200_000
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(f"POST /api/poll/{poll.join_code}/report HTTP/1.1\r\nHost: {host}:{port}\r\n"
                     f"Origin: http://{host}:{port}\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {size}\r\n\r\n".encode() + b"{")
        status, headers, _ = _read_response(sock)
        assert status == 413
        if headers.get("connection", "").lower() == "close":
            return  # closing is a clean answer too
        sock.sendall(b"x" * (size - 1) + f"GET /_stcore/health HTTP/1.1\r\nHost: {host}:{port}"
                     "\r\n\r\n".encode())
        status, _, body = _read_response(sock)
        assert (status, body) == (200, b"ok")
