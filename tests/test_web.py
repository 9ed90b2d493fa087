"""web: the device cookie and the start-up banner (the login routes and the
instructor key are in test_auth.py, the data files' modes in test_store_config.py)."""

from __future__ import annotations

import socket

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

import web
from tests.support.web import local_edge, local_middleware


def _page(request):
    if request.headers.get("if-none-match") == "v1":
        return Response(status_code=304)
    return HTMLResponse("<html>app</html>", headers={"etag": "v1"})


def _health(request):
    return Response("ok", media_type="text/plain")


def _broken(request):
    raise RuntimeError("a bug in a route")


def _own_csp(request):
    return HTMLResponse("<p>x</p>", headers={"content-security-policy": "default-src 'self'"})


def _framing_csp(request):
    return HTMLResponse("<p>x</p>", headers={
        "content-security-policy": "default-src 'none'; frame-ancestors 'none'"})


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def edge(clock):
    return local_edge(clock=clock)


def _routes():
    return [Route("/", _page), Route("/_stcore/health", _health), Route("/broken", _broken),
            Route("/own-csp", _own_csp), Route("/framing-csp", _framing_csp)]


@pytest.fixture
def client(edge):
    app = Starlette(routes=_routes(), middleware=local_middleware(edge))
    return TestClient(app, follow_redirects=False, raise_server_exceptions=False)


def _refuses_framing(response) -> None:
    assert response.headers["x-frame-options"] == "DENY"
    policies = response.headers.get_list("content-security-policy")
    assert any("frame-ancestors 'none'" in p for p in policies), policies
    assert response.headers["referrer-policy"] == "same-origin"
    assert response.headers["x-content-type-options"] == "nosniff"


def test_every_answer_carries_the_security_headers_redirects_and_errors_included(client):
    """A page, a revalidation, an endpoint, the old join link's redirect, a 404, a 405 and
    a route that raises: each refuses framing and carries the other security headers."""
    answers = {"page": client.get("/", headers={"accept": "text/html"}),
               "304": client.get("/", headers={"if-none-match": "v1"}),
               "health": client.get("/_stcore/health"),
               "redirect": client.get("/?poll=K7QM2P"),
               "404": client.get("/nowhere"),
               "405": client.post("/_stcore/health"),
               "500": client.get("/broken")}
    assert answers["redirect"].status_code == 303
    assert [answers[k].status_code for k in ("304", "404", "405", "500")] == [304, 404, 405, 500]
    for name, response in answers.items():
        try:
            _refuses_framing(response)
        except (AssertionError, KeyError) as exc:
            raise AssertionError(f"{name}: {exc!r}") from None


def test_a_deployment_that_frames_the_app_itself_may_allow_its_own_origin(tmp_path):
    """Streamlit Community Cloud shows the app in a frame of the app's own origin:
    LDP_CLASSROOM_FRAME_ANCESTORS=self allows that, and still no other site."""
    from classroom import config
    from classroom.domain import ConfigError

    env = {"LDP_CLASSROOM_DATA_DIR": str(tmp_path), config.KEY_ENV: "k" * 20,
           config.FRAME_ANCESTORS_ENV: "self"}
    assert config.Settings.read(environ=env, root=tmp_path).frame_ancestors == "'self'"
    with pytest.raises(ConfigError, match="must be none"):
        config.frame_ancestors(environ={config.FRAME_ANCESTORS_ENV: "https://evil.example"})
    edge = local_edge(framing="'self'")
    app = Starlette(routes=_routes(), middleware=local_middleware(edge))
    framed = TestClient(app)
    for path in ("/", "/framing-csp", "/own-csp"):
        r = framed.get(path)
        assert r.headers["x-frame-options"] == "SAMEORIGIN", path
        policies = r.headers.get_list("content-security-policy")
        assert any("frame-ancestors 'self'" in p for p in policies), (path, policies)
        assert not any("frame-ancestors 'none'" in p for p in policies), (path, policies)


def test_a_500_is_a_sentence_and_the_traceback_goes_to_the_log(client):
    r = client.get("/broken")
    assert r.status_code == 500 and r.text.startswith("Something went wrong")
    assert "Traceback" not in r.text and "a bug in a route" not in r.text
    strict = TestClient(client.app)  # the exception itself still reaches the server
    with pytest.raises(RuntimeError, match="a bug in a route"):
        strict.get("/broken")


def test_a_pages_own_policy_keeps_its_word_on_framing(client):
    own = client.get("/own-csp").headers.get_list("content-security-policy")
    assert own == ["default-src 'self'", "frame-ancestors 'none'"]  # both enforced
    framing = client.get("/framing-csp").headers.get_list("content-security-policy")
    assert framing == ["default-src 'none'; frame-ancestors 'none'"]  # nothing added


def test_first_page_load_gets_an_httponly_device_cookie(client):
    r = client.get("/", headers={"accept": "text/html"})
    cookie = r.headers["set-cookie"]
    assert cookie.startswith(f"{web.DEVICE_COOKIE}=")
    assert "HttpOnly" in cookie and "samesite=lax" in cookie.lower()
    value = cookie.split(";")[0].split("=", 1)[1]
    assert len(value) >= 32


def test_device_ids_are_random(client):
    ids = set()
    for _ in range(20):
        client.cookies.clear()
        ids.add(client.get("/", headers={"accept": "text/html"}).cookies[web.DEVICE_COOKIE])
    assert len(ids) == 20


def test_revalidated_page_without_cookie_still_gets_one(client):
    # A browser whose cookies were cleared revalidates its cached page: 304, no content type.
    r = client.get("/", headers={"accept": "text/html", "if-none-match": "v1"})
    assert r.status_code == 304
    assert web.DEVICE_COOKIE in r.headers.get("set-cookie", "")


def _cookie_value(response) -> str:
    return response.headers["set-cookie"].split(";")[0].split("=", 1)[1]


def test_a_valid_cookie_is_kept_and_endpoints_get_none(client, edge):
    client.cookies.set(web.DEVICE_COOKIE, edge.devices.sign("a-device-id-0123456789"))
    assert "set-cookie" not in client.get("/", headers={"accept": "text/html"}).headers
    client.cookies.clear()
    assert "set-cookie" not in client.get("/_stcore/health").headers


@pytest.mark.parametrize("made_up", ["abc", "a-device-id-0123456789",
                                     "a-device-id-0123456789.AAAAAA.forged-signature"])
def test_a_made_up_cookie_is_no_cookie(client, edge, made_up):
    """Before, any value was a device: one client invented a device per report (315 stored
    reports a second). Now only a value this app signed names a device; a made-up one
    gets a real cookie at the next page load, and names no device meanwhile."""
    assert edge.devices.read(made_up) is None
    client.cookies.set(web.DEVICE_COOKIE, made_up)
    issued = _cookie_value(client.get("/", headers={"accept": "text/html"}))
    device = edge.devices.read(issued)
    assert device is not None and device.id != made_up and len(device.id) >= 32
    another_key = web.Edge.local("another-instructor-key-0123")
    assert another_key.devices.read(issued) is None  # signed under this app's key only


def test_a_page_load_renews_an_old_cookie_and_keeps_the_device_id(client, edge, clock):
    first = edge.devices.read(_cookie_value(client.get("/", headers={"accept": "text/html"})))
    clock.now += 30
    assert "set-cookie" not in client.get("/", headers={"accept": "text/html"}).headers
    clock.now += 60  # older than a minute: renewed at the next page load, same id
    renewed = edge.devices.read(_cookie_value(client.get("/", headers={"accept": "text/html"})))
    assert renewed.id == first.id and renewed.issued_at == first.issued_at + 90


def test_new_cookies_per_address_are_limited(clock):
    """A client that loads pages to collect devices gets NEW_DEVICES_PER_MINUTE of them a
    minute from one address; then pages load without one (the phone asks to wait)."""
    edge = local_edge(clock=clock)
    few = web.DeviceCookies("key-0123456789abcdef", edge.limits, per_minute=5, clock=clock)
    edge = web.Edge(edge.hosts, edge.limits, few, edge.forwarded)
    app = Starlette(routes=_routes(), middleware=local_middleware(edge))
    hall = TestClient(app, client=("203.0.113.50", 4000))
    got = []
    for _ in range(7):
        hall.cookies.clear()
        got.append("set-cookie" in hall.get("/", headers={"accept": "text/html"}).headers)
    assert got == [True] * 5 + [False] * 2
    assert few.exhausted("203.0.113.50") >= 1 and few.exhausted("198.51.100.1") is None
    other = TestClient(app, client=("198.51.100.1", 4000))  # another network is not limited
    assert "set-cookie" in other.get("/", headers={"accept": "text/html"}).headers
    assert web.NEW_DEVICES_PER_MINUTE >= 4 * 1500  # a hall of 1,500 phones, reloads and all


def test_one_vary_header_with_each_value_once(tmp_path, monkeypatch):
    """Streamlit adds its own gzip layer inside the app's middleware, and a route that
    compresses itself names Accept-Encoding too: each once, in one header (before, an
    uncompressed page said ``vary: Accept-Encoding, Accept-Encoding, Accept-Encoding``)."""
    monkeypatch.setenv("LDP_CLASSROOM_DATA_DIR", str(tmp_path))

    def page(request):
        return HTMLResponse("<p>" + "x" * 2000 + "</p>",
                            headers={"Vary": "Accept-Encoding, Cookie"})

    app = Starlette(routes=[Route("/", page), Route("/_stcore/health", _health)],
                    middleware=[*local_middleware(), Middleware(GZipMiddleware, minimum_size=500)])
    client = TestClient(app)
    for encoding in ("gzip", "identity"):
        r = client.get("/", headers={"accept-encoding": encoding})
        assert r.headers.get_list("vary") == ["Accept-Encoding, Cookie"], encoding
    assert "vary" not in client.get("/_stcore/health").headers  # nothing added where none was


def test_banner_prints_a_one_time_link_and_never_the_key():
    text = web.banner("0.0.0.0", 8501, None, "t0ken", "/data/instructor_key")
    assert "Students join at:" in text and ":8501/join" in text
    assert ":8501/auth/login?token=t0ken" in text and "?key=" not in text
    assert "works once, for 15 minutes" in text and "/data/instructor_key" in text
    local = web.banner("localhost", 8501, None, "t0ken", "x")
    assert "--server.address 0.0.0.0" in local
    public = web.banner("0.0.0.0", 8501, "https://class.example.org/", "t0ken", "x")
    assert "https://class.example.org/auth/login?token=t0ken" in public


# -- the error table ----------------------------------------------------------------------------

def test_errors_resolve_along_the_class_hierarchy():
    from classroom.domain import (
        BadReport,
        ClassroomError,
        Conflict,
        DiskFull,
        NotFound,
        StoreUnavailable,
        UnknownPoll,
    )

    class Deeper(UnknownPoll):
        pass

    class Unnamed(NotFound):
        pass

    table = web.ERRORS
    assert table.resolve(Conflict("x")).code == "conflict"  # its own, not its parent's
    assert table.resolve(DiskFull("x")).code == "disk_full"
    assert table.resolve(StoreUnavailable("x")).code == "unavailable"
    assert table.resolve(Deeper("x")).code == "unknown_poll"  # the nearest named class
    assert table.resolve(Unnamed("x")).code == "not_found"
    assert table.resolve(ClassroomError("x")).status == 400
    assert table.resolve(BadReport("x")).status == 422
    with pytest.raises(KeyError):  # not a domain error: a bug, raised again
        table.resolve(KeyError("x"))


def test_a_route_family_replaces_entries_and_keeps_the_rest():
    from classroom.domain import Conflict, StoreUnavailable

    family = web.ERRORS.but({StoreUnavailable: web.HttpError(503, "away", "Try later.")})
    assert family.resolve(StoreUnavailable("x")).code == "away"
    assert family.resolve(Conflict("x")).code == "conflict"  # its own entry still wins
    assert web.ERRORS.resolve(StoreUnavailable("x")).code == "unavailable"  # unchanged


def test_a_refusal_carries_its_own_answer_and_a_message_its_sentence():
    from classroom.domain import BadInput

    refusal = web.Refusal(429, "slow_down", "Wait 3 s.", {"Retry-After": "3"})
    answer = web.ERRORS.resolve(refusal)
    assert (answer.status, answer.code, dict(answer.headers)) == \
        (429, "slow_down", {"Retry-After": "3"})
    assert answer.text(None, refusal) == "Wait 3 s."
    bad = BadInput("join code 'X' has 1 characters; join codes have 6")
    assert web.ERRORS.resolve(bad).text(None, bad) == \
        "Join code 'X' has 1 characters; join codes have 6."


# -- allowed hosts ------------------------------------------------------------------------------

def _seen_by_route(request):
    host = request.client.host if request.client else None
    return Response(f"{host}", media_type="text/plain")


@pytest.fixture
def hosts_app():
    edge = web.Edge.local(hosts=("class.example.org", "*.uni.example"),
                          trusted_proxies="127.0.0.1,::1")
    return Starlette(routes=[Route("/", _seen_by_route)], middleware=web.middleware(edge))


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8501", "class.example.org.evil",
                                  "uni.example.evil.example", "a/b", "user@127.0.0.1",
                                  "127.0.0.1:notaport"])
def test_a_foreign_host_is_refused_with_the_security_headers(hosts_app, host):
    """DNS rebinding: another site's name resolves to this server, and its page's requests
    carry its own name in Host. Before, such a page voted and logged in."""
    r = TestClient(hosts_app).get("/", headers={"host": host})
    assert r.status_code == 421 and "does not answer to the name" in r.text
    _refuses_framing(r)


@pytest.mark.parametrize("host", ["localhost", "localhost:8501", "app.localhost",
                                  "127.0.0.1:8501", "192.168.1.20:8501", "[::1]:8501",
                                  "[fe80::1]", "10.0.0.7", "class.example.org",
                                  "CLASS.Example.org.:443", "lab.uni.example",
                                  socket.gethostname(), f"{socket.gethostname()}:8501"])
def test_the_apps_own_hosts_are_served(hosts_app, host):
    assert TestClient(hosts_app).get("/", headers={"host": host}).status_code == 200


def test_two_host_headers_are_refused(hosts_app):
    """A browser never sends two; a proxy or a server could read either one."""
    r = TestClient(hosts_app).get("/", headers=[("host", "127.0.0.1"), ("host", "localhost")])
    assert r.status_code == 421  # each is the app's own, but which did the client mean?


def test_the_public_urls_host_and_any_name_when_asked():
    public = web.AllowedHosts(public_url="https://class.example.org:8443/")
    assert public.allows("class.example.org") and not public.allows("evil.example")
    assert web.AllowedHosts(["*"]).allows("anything.example")
    assert web.AllowedHosts().allows(None)  # no Host: not a browser, so not rebinding


def test_a_websocket_to_a_foreign_host_is_closed_before_it_opens(hosts_app):
    from starlette.websockets import WebSocketDisconnect

    async def stream(websocket):
        await websocket.accept()
        await websocket.send_text("open")
        await websocket.close()

    from starlette.routing import WebSocketRoute

    hosts_app.router.routes.append(WebSocketRoute("/_stcore/stream", stream))
    client = TestClient(hosts_app)
    with client.websocket_connect("/_stcore/stream", headers={"host": "127.0.0.1"}) as ws:
        assert ws.receive_text() == "open"
    with pytest.raises(WebSocketDisconnect) as refused, \
            client.websocket_connect("/_stcore/stream", headers={"host": "evil.example"}):
        pass
    assert refused.value.code == 1008


# -- trusted proxies on a dual-stack socket --------------------------------------------------------

@pytest.mark.parametrize("peer, forwarded, seen", [
    ("::ffff:127.0.0.1", "198.51.100.7", "198.51.100.7"),  # nginx on this machine, via IPv4
    ("127.0.0.1", "198.51.100.7", "127.0.0.1"),  # uvicorn already did this one (not here)
    ("::ffff:203.0.113.5", "198.51.100.7", "203.0.113.5"),  # a phone: its header is ignored
    ("::ffff:203.0.113.5", None, "203.0.113.5"),
    ("::1", "198.51.100.7", "::1"),  # uvicorn's own pass handles IPv6 peers
])
def test_an_ipv4_proxy_on_a_dual_stack_socket_is_believed_as_configured(hosts_app, peer,
                                                                        forwarded, seen):
    """``streamlit run app.py`` listens on ``::`` (both families): an IPv4 peer arrives as
    ``::ffff:a.b.c.d``, which FORWARDED_ALLOW_IPS's ``127.0.0.1`` did not match, so a proxy
    on this machine was never believed. (uvicorn's own pass runs before the app and is not
    part of this test: for plain IPv4 and IPv6 peers it is the one that applies.)"""
    headers = {"host": "127.0.0.1"} | ({"x-forwarded-for": forwarded} if forwarded else {})
    r = TestClient(hosts_app, client=(peer, 4000)).get("/", headers=headers)
    assert r.text == seen


# -- wrong guesses --------------------------------------------------------------------------------

def test_under_attack_only_devices_that_did_not_guess_and_loaded_a_page_lately_may_try(clock):
    from limits.storage import MemoryStorage

    limits = web.Limits(MemoryStorage(), secret=b"test", clock=clock)
    guesses = web.Guesses(limits, web.GuessRule("join", per_device=2, per_address=4))

    def device(name: str, age_s: float = 0.0) -> web.Device:
        return web.Device(name, clock.now - age_s)

    seated, once, twice = device("seated"), device("once"), device("twice")
    guesses.found(seated, "K7QM2P")
    for who, misses in ((once, 1), (twice, 2), (device("other"), 1)):
        for _ in range(misses):
            assert guesses.refused(who, "nat", "ZZZZZZ") is None  # not under attack yet
            guesses.missed(who, "nat")
    # Four wrong guesses from the address within a minute: under attack.
    assert guesses.refused(twice, "nat", "K7QM2P").seconds >= 1  # its own minute is spent
    wait = guesses.refused(once, "nat", "K7QM2P")
    assert wait is not None and not wait.reload  # it guessed within the last 10 minutes
    assert guesses.refused(seated, "nat", "K7QM2P") is None  # found it before: never waits
    assert guesses.refused(device("newcomer"), "nat", "K7QM2P") is None
    stale = device("stale", age_s=3600)  # a page loaded an hour ago
    assert guesses.refused(stale, "nat", "K7QM2P") == web.Wait(1, reload=True)
    assert guesses.refused(device("stale", age_s=5), "nat", "K7QM2P") is None  # reloaded
    assert guesses.refused(None, "nat", "K7QM2P").seconds >= 1  # no cookie: waits
    assert guesses.refused(device("elsewhere"), "another-network", "K7QM2P") is None


def test_a_verified_cookie_is_read_from_memory_and_a_forged_one_never(monkeypatch, clock):
    """A phone sends its cookie with every request: a value verified once is answered
    from memory (the same device), bounded by SEEN_MAX; an altered value or one signed
    under another key is still no cookie, however often it comes."""
    from web import devices

    cookies = web.DeviceCookies("key one", local_edge().limits, clock=clock)
    value = cookies.sign("device-a")
    first = cookies.read(value)
    assert first == web.Device("device-a", clock.now)

    def no_check(*args, **kwargs):
        raise AssertionError("the signature was checked again")

    monkeypatch.setattr(cookies._signer, "unsign", no_check)
    assert cookies.read(value) == first
    monkeypatch.undo()
    assert cookies.read(value[:-1] + ("A" if value[-1] != "A" else "B")) is None
    assert web.DeviceCookies("key two", local_edge().limits, clock=clock).read(value) is None
    monkeypatch.setattr(devices, "SEEN_MAX", 3)
    cookies = web.DeviceCookies("key one", local_edge().limits, clock=clock)
    for i in range(5):
        assert cookies.read(cookies.sign(f"device-{i}")) is not None
    assert cookies._verified.cache_info().currsize <= 3
