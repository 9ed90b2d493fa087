"""The HTTP layer: device cookie, start-up banner, instructor key and data files (the login
routes and sessions are in test_auth.py)."""

from __future__ import annotations

import os
import stat

import pytest
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from classroom import auth, web
from classroom.domain import CLASS_EXERCISE


def _page(request):
    if request.headers.get("if-none-match") == "v1":
        return Response(status_code=304)
    return HTMLResponse("<html>app</html>", headers={"etag": "v1"})


def _health(request):
    return Response("ok", media_type="text/plain")


@pytest.fixture
def client(tmp_path, monkeypatch):
    monkeypatch.setenv("LDP_CLASSROOM_DATA_DIR", str(tmp_path))
    monkeypatch.setenv(auth.KEY_ENV, "the-right-key-0123456")
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


def test_generated_key_is_kept_private_and_stable(tmp_path, monkeypatch):
    monkeypatch.setenv("LDP_CLASSROOM_DATA_DIR", str(tmp_path))
    monkeypatch.delenv(auth.KEY_ENV, raising=False)
    monkeypatch.setattr("classroom.config.secret", lambda name, **kw: None)
    key = auth.instructor_key()
    assert len(key) >= 20 and auth.instructor_key() == key
    mode = stat.S_IMODE(os.stat(tmp_path / "instructor_key").st_mode)
    assert mode == 0o600
    assert auth.check_key(key) and not auth.check_key(key[:-1]) and not auth.check_key(None)


@pytest.mark.parametrize("key", ["short", "fifteen-chars-x"])
def test_a_short_configured_key_stops_the_start_with_a_clear_message(monkeypatch, tmp_path,
                                                                     key):
    from classroom.domain import ConfigError

    monkeypatch.setenv("LDP_CLASSROOM_DATA_DIR", str(tmp_path))
    monkeypatch.setenv(auth.KEY_ENV, key)
    with pytest.raises(ConfigError, match=f"has {len(key)} characters; use at least 16"):
        auth.instructor_key()
    monkeypatch.setenv(auth.KEY_ENV, key + "y")  # 16 and more are fine
    if len(key) + 1 >= auth.MIN_KEY_CHARS:
        assert auth.instructor_key() == key + "y"


def test_data_files_are_private(tmp_path, monkeypatch):
    """The data directory is 0700; the database, its WAL and SHM files and the key 0600."""
    from classroom import config
    from classroom.service import PollService
    from classroom.store import Store

    data = tmp_path / "data"
    monkeypatch.setenv("LDP_CLASSROOM_DATA_DIR", str(data))
    monkeypatch.delenv(auth.KEY_ENV, raising=False)
    monkeypatch.setattr("classroom.config.secret", lambda name, **kw: None)
    assert stat.S_IMODE(os.stat(config.data_dir()).st_mode) == 0o700
    auth.instructor_key()
    store = Store(f"sqlite:///{data / 'classroom.db'}")
    try:
        svc = PollService(store)
        poll = svc.create_poll("t")
        q = svc.open_question(svc.add_question(
            poll.id, "Q?", design_params=dict(CLASS_EXERCISE)).id)
        svc.submit_report(poll.join_code, q.id, answer=1, submission_id="perm-000001",
                          design_params=dict(CLASS_EXERCISE),
                          device_id="d")
        names = ["classroom.db", "classroom.db-wal", "classroom.db-shm", "instructor_key"]
        assert all((data / n).exists() for n in names)
        modes = {n: oct(stat.S_IMODE(os.stat(data / n).st_mode)) for n in names}
        assert modes == {n: "0o600" for n in names}
    finally:
        store.close()


def test_files_left_readable_by_an_older_version_are_tightened(tmp_path, monkeypatch):
    from classroom.store import Store

    db = tmp_path / "old.db"
    Store(f"sqlite:///{db}").close()
    db.chmod(0o644)
    (tmp_path / "instructor_key").write_text("x" * 24 + "\n")
    (tmp_path / "instructor_key").chmod(0o644)
    monkeypatch.setenv("LDP_CLASSROOM_DATA_DIR", str(tmp_path))
    monkeypatch.delenv(auth.KEY_ENV, raising=False)
    monkeypatch.setattr("classroom.config.secret", lambda name, **kw: None)
    Store(f"sqlite:///{db}").close()
    assert auth.instructor_key() == "x" * 24
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "instructor_key").stat().st_mode) == 0o600


def test_banner_prints_a_one_time_link_and_never_the_key():
    text = web.banner("0.0.0.0", 8501, None, "t0ken", "/data/instructor_key")
    assert "Students join at:" in text and ":8501/join" in text
    assert ":8501/auth/login?token=t0ken" in text and "?key=" not in text
    assert "works once, for 15 minutes" in text and "/data/instructor_key" in text
    local = web.banner("localhost", 8501, None, "t0ken", "x")
    assert "--server.address 0.0.0.0" in local
    public = web.banner("0.0.0.0", 8501, "https://class.example.org/", "t0ken", "x")
    assert "https://class.example.org/auth/login?token=t0ken" in public
