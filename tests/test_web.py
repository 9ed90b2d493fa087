"""The HTTP layer: device cookie, instructor login route, start-up banner, instructor key."""

from __future__ import annotations

import os
import stat

import pytest
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from classroom import auth, web


def _page(request):
    if request.headers.get("if-none-match") == "v1":
        return Response(status_code=304)
    return HTMLResponse("<html>app</html>", headers={"etag": "v1"})


def _health(request):
    return Response("ok", media_type="text/plain")


@pytest.fixture
def client(tmp_path, monkeypatch):
    monkeypatch.setenv("LDP_CLASSROOM_DATA_DIR", str(tmp_path))
    monkeypatch.setenv(auth.KEY_ENV, "the-right-key")
    app = Starlette(routes=[Route("/", _page), Route("/_stcore/health", _health), *web.routes],
                    middleware=web.middleware())
    return TestClient(app, follow_redirects=False)


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


def test_login_with_right_key_sets_token_and_drops_key_from_url(client):
    r = client.get("/auth/login", params={"key": "the-right-key"})
    assert r.status_code == 303
    assert r.headers["location"] == "/dashboard"  # the key is gone from the address
    cookie = r.headers["set-cookie"]
    assert cookie.startswith(f"{auth.INSTRUCTOR_COOKIE}=") and "HttpOnly" in cookie
    token = cookie.split(";")[0].split("=", 1)[1]
    assert "the-right-key" not in token
    assert auth.check_session_token(token)


@pytest.mark.parametrize("key", ["", "wrong", "the-right-key ", "THE-RIGHT-KEY"])
def test_login_with_wrong_key_is_refused(client, key):
    r = client.get("/auth/login", params={"key": key} if key else None)
    if key == "the-right-key ":  # surrounding whitespace from a copy-paste is forgiven
        assert r.status_code == 303
        return
    assert r.status_code == 403
    assert "set-cookie" not in r.headers
    assert "not right" in r.text


def test_logout_clears_the_instructor_cookie(client):
    r = client.get("/auth/logout")
    assert r.status_code == 303 and auth.INSTRUCTOR_COOKIE in r.headers["set-cookie"]


def test_generated_key_is_kept_private_and_stable(tmp_path, monkeypatch):
    monkeypatch.setenv("LDP_CLASSROOM_DATA_DIR", str(tmp_path))
    monkeypatch.delenv(auth.KEY_ENV, raising=False)
    monkeypatch.setattr("classroom.config.secret", lambda name, **kw: None)
    key = auth.instructor_key()
    assert len(key) >= 20 and auth.instructor_key() == key
    mode = stat.S_IMODE(os.stat(tmp_path / "instructor_key").st_mode)
    assert mode == 0o600
    assert auth.check_key(key) and not auth.check_key(key[:-1]) and not auth.check_key(None)


def test_changing_the_key_logs_browsers_out(monkeypatch, tmp_path):
    monkeypatch.setenv("LDP_CLASSROOM_DATA_DIR", str(tmp_path))
    monkeypatch.setenv(auth.KEY_ENV, "old")
    token = auth.session_token()
    monkeypatch.setenv(auth.KEY_ENV, "new")
    assert not auth.check_session_token(token)


def test_banner_names_lan_address_and_login_url():
    text = web.banner("0.0.0.0", 8501, None, "k3y")
    assert "Students join at:" in text and ":8501/" in text
    assert "/auth/login?key=k3y" in text
    local = web.banner("localhost", 8501, None, "k3y")
    assert "--server.address 0.0.0.0" in local
    public = web.banner("0.0.0.0", 8501, "https://class.example.org/", "k3y")
    assert "https://class.example.org/auth/login?key=k3y" in public
