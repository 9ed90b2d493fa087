"""web: the device cookie and the start-up banner (the login routes and the
instructor key are in test_auth.py, the data files' modes in test_store_config.py)."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

import web


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


@pytest.fixture
def client(tmp_path):
    app = Starlette(routes=[Route("/", _page), Route("/_stcore/health", _health),
                            Route("/broken", _broken), Route("/own-csp", _own_csp),
                            Route("/framing-csp", _framing_csp)],
                    middleware=web.middleware())
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


def test_existing_cookie_is_kept_and_endpoints_get_none(client):
    r = client.get("/", headers={"accept": "text/html"}, cookies={web.DEVICE_COOKIE: "abc"})
    assert "set-cookie" not in r.headers
    client.cookies.clear()
    assert "set-cookie" not in client.get("/_stcore/health").headers


def test_one_vary_header_with_each_value_once(tmp_path, monkeypatch):
    """Streamlit adds its own gzip layer inside the app's middleware, and a route that
    compresses itself names Accept-Encoding too: each once, in one header (before, an
    uncompressed page said ``vary: Accept-Encoding, Accept-Encoding, Accept-Encoding``)."""
    monkeypatch.setenv("LDP_CLASSROOM_DATA_DIR", str(tmp_path))

    def page(request):
        return HTMLResponse("<p>" + "x" * 2000 + "</p>",
                            headers={"Vary": "Accept-Encoding, Cookie"})

    app = Starlette(routes=[Route("/", page), Route("/_stcore/health", _health)],
                    middleware=[*web.middleware(), Middleware(GZipMiddleware, minimum_size=500)])
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
