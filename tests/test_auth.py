"""Instructor login: the POST form, one-time links, server-side sessions, logout, rate limits.

The routes run in a Starlette app with the app's middleware; sessions and used links are
stored in a real database (SQLite in a temporary directory).
"""

from __future__ import annotations

import logging
import os
import re
import stat
import urllib.error
import urllib.request

import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

import web
from classroom import auth, config
from classroom.store import Store
from tests.support.web import local_edge, local_middleware

KEY = "the-right-key-0123456"
ORIGIN = {"origin": "http://testserver"}


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store(tmp_path):
    s = Store(f"sqlite:///{tmp_path / 'auth.db'}")
    yield s
    s.close()


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def instructor(store, clock):
    return auth.InstructorAuth(store, key=KEY, cache_s=0.0, clock=clock)


def _app(instructor) -> Starlette:
    async def dashboard(request):
        return PlainTextResponse("dashboard")

    return Starlette(routes=[Route("/dashboard", dashboard),
                             *web.make_routes(web.AuthApi(lambda: instructor))],
                     middleware=local_middleware())


@pytest.fixture
def client(instructor):
    return TestClient(_app(instructor), follow_redirects=False)


def _session_cookie(response) -> str:
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{web.INSTRUCTOR_COOKIE}=")
    return cookie.split(";")[0].split("=", 1)[1]


def _post_key(client, key: str, **kw):
    return client.post("/auth/login", data={"key": key}, headers=ORIGIN, **kw)


# -- the login form ---------------------------------------------------------------------------

def test_the_login_page_is_a_post_form_that_is_not_cached(client):
    r = client.get("/auth/login")
    assert r.status_code == 200
    assert re.search(r'<form method="post" action="/auth/login">', r.text)
    assert 'type="password"' in r.text
    assert r.headers["cache-control"] == "no-store"
    assert r.headers["referrer-policy"] == "same-origin"
    assert "script-src" not in r.headers["content-security-policy"]  # no script at all


def test_the_right_key_starts_a_random_server_side_session(client, instructor):
    r = _post_key(client, KEY)
    assert r.status_code == 303 and r.headers["location"] == "/dashboard"
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    assert f"max-age={auth.SESSION_TTL_S}" in cookie
    first = _session_cookie(r)
    assert KEY not in first and len(first) >= 40
    assert instructor.is_valid(first)
    client.cookies.clear()
    second = _session_cookie(_post_key(client, KEY))
    assert second != first  # one session per login, not one value per key


@pytest.mark.parametrize("key", ["", "wrong", KEY.upper(), KEY[:-1]])
def test_a_wrong_key_is_refused_and_sets_nothing(client, key):
    r = _post_key(client, key)
    assert r.status_code == 403
    assert "set-cookie" not in r.headers
    assert "not right" in r.text


def test_surrounding_whitespace_from_a_paste_is_forgiven(client):
    assert _post_key(client, f"  {KEY}\n").status_code == 303


def test_a_post_from_another_site_is_refused(client, instructor):
    r = client.post("/auth/login", data={"key": KEY}, headers={"origin": "http://evil.example"})
    assert r.status_code == 403 and "set-cookie" not in r.headers
    assert client.post("/auth/login", data={"key": KEY}).status_code == 403  # no Origin


def test_an_old_link_with_the_key_logs_nobody_in(client):
    r = client.get("/auth/login", params={"key": KEY})
    assert r.status_code == 200 and "set-cookie" not in r.headers
    assert "no longer carry the key" in r.text


def test_an_oversized_form_is_read_as_no_key(client):
    r = client.post("/auth/login", content=b"key=" + b"x" * 10_000, headers={
        **ORIGIN, "content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 403 and "set-cookie" not in r.headers


async def _cut_off_post(app, path: str, first_part: bytes) -> tuple[int, bytes]:
    """POST ``path`` declaring 100 bytes, of which ``first_part`` arrives before the
    connection closes: the ASGI messages a server sends for a client that went away."""
    import asyncio

    arriving = [{"type": "http.request", "body": first_part, "more_body": True}]
    sent: list[dict] = []

    async def receive():
        if arriving:
            return arriving.pop(0)
        await asyncio.sleep(0)
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "client": ("203.0.113.9", 4000),
             "server": ("testserver", 80),
             "headers": [(b"host", b"testserver"), (b"origin", b"http://testserver"),
                         (b"content-type", b"application/x-www-form-urlencoded"),
                         (b"content-length", b"100")]}
    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start["status"], b"".join(m.get("body", b"") for m in sent
                                      if m["type"] == "http.response.body")


@pytest.mark.parametrize("path", ["/auth/login", "/auth/logout"])
def test_a_form_cut_off_mid_body_is_a_400_with_a_sentence(instructor, caplog, path):
    """Before, the disconnect escaped the route: a 500 and a traceback in the log."""
    import asyncio

    with caplog.at_level(logging.WARNING):
        status, body = asyncio.run(_cut_off_post(_app(instructor), path, b"key=the-ri"))
    assert status == 400 and b"did not arrive whole" in body
    # no traceback, and not counted as a wrong key: one line that says what happened
    assert [r.getMessage() for r in caplog.records] == [
        "a login form's connection closed before its body arrived; nothing was done"]


# -- one-time login links ----------------------------------------------------------------------

def test_a_login_link_works_once(client, store, instructor):
    token = auth.login_link_token(KEY)
    assert KEY not in token
    r = client.get("/auth/login", params={"token": token})
    assert r.status_code == 303 and instructor.is_valid(_session_cookie(r))
    client.cookies.clear()
    again = client.get("/auth/login", params={"token": token})
    assert again.status_code == 403 and "already been used" in again.text
    assert "set-cookie" not in again.headers
    # Another process on the same database refuses it too.
    other = auth.InstructorAuth(store, key=KEY, cache_s=0.0)
    assert other.redeem_link(token) is None


def test_a_login_link_expires_after_15_minutes(instructor, monkeypatch):
    import itsdangerous.timed

    issued = 1_800_000_000
    monkeypatch.setattr(itsdangerous.timed.time, "time", lambda: issued)
    token = auth.login_link_token(KEY)
    later = auth.login_link_token(KEY)
    monkeypatch.setattr(itsdangerous.timed.time, "time", lambda: issued + 14 * 60)
    assert instructor.redeem_link(later) is not None
    monkeypatch.setattr(itsdangerous.timed.time, "time",
                        lambda: issued + auth.LOGIN_LINK_TTL_S + 1)
    assert instructor.redeem_link(token) is None


@pytest.mark.parametrize("token", ["", "x" * 500, "not-a-token",
                                   auth.login_link_token("another-key-0123456789")])
def test_forged_or_foreign_links_are_refused(instructor, token):
    assert instructor.redeem_link(token) is None


def test_a_tampered_link_is_refused(instructor):
    token = auth.login_link_token(KEY)
    assert instructor.redeem_link(token[:-2] + ("AA" if token[-2:] != "AA" else "BB")) is None


# -- sessions ------------------------------------------------------------------------------------

def test_a_session_expires_after_12_hours(instructor, clock):
    session = instructor.log_in(KEY)
    clock.now += auth.SESSION_TTL_S - 60
    assert instructor.is_valid(session)
    clock.now += 120
    assert not instructor.is_valid(session)


def test_a_logout_ends_the_cached_validity_at_once(store):
    """The login routes and the Streamlit pages share the process's one instance (the
    composition root's): a logout through the routes is seen by the pages at once, even
    with validity cached for an hour."""
    shared = auth.InstructorAuth(store, key=KEY, cache_s=3600.0)
    one, two = shared.log_in(KEY), shared.log_in(KEY)
    assert shared.is_valid(one) and shared.is_valid(two)  # now cached for an hour
    shared.end(one)
    assert not shared.is_valid(one) and shared.is_valid(two)
    shared.end_all()
    assert not shared.is_valid(two)


def test_changing_the_key_ends_every_session(store):
    before = auth.InstructorAuth(store, key=KEY, cache_s=0.0)
    session = before.log_in(KEY)
    after = auth.InstructorAuth(store, key="a-new-key-0123456789", cache_s=0.0)
    assert before.is_valid(session) and not after.is_valid(session)


def test_the_validity_cache_never_outlives_the_session(store, clock):
    cached = auth.InstructorAuth(store, key=KEY, cache_s=10_000.0, clock=clock)
    session = cached.log_in(KEY)
    assert cached.is_valid(session)
    clock.now += auth.SESSION_TTL_S + 1
    assert not cached.is_valid(session)


def test_logout_revokes_the_session_on_the_server(client, instructor):
    session = _session_cookie(_post_key(client, KEY))
    r = client.post("/auth/logout", headers=ORIGIN)
    assert r.status_code == 200 and "logged out" in r.text
    assert f'{web.INSTRUCTOR_COOKIE}=""' in r.headers["set-cookie"]
    assert not instructor.is_valid(session)  # a copied cookie no longer works


def test_log_out_everywhere_ends_every_session(client, instructor):
    other_browser = instructor.log_in(KEY)
    _post_key(client, KEY)
    r = client.post("/auth/logout", data={"everywhere": "1"}, headers=ORIGIN)
    assert r.status_code == 200 and "Every instructor login has ended (2 in all)" in r.text
    assert not instructor.is_valid(other_browser)


def test_only_a_logged_in_instructor_can_log_everyone_out(client, instructor):
    session = instructor.log_in(KEY)
    client.post("/auth/logout", data={"everywhere": "1"}, headers=ORIGIN)
    assert instructor.is_valid(session)
    client.cookies.set(web.INSTRUCTOR_COOKIE, session)
    assert client.post("/auth/logout", data={"everywhere": "1"},
                       headers={"origin": "http://evil.example"}).status_code == 403
    assert instructor.is_valid(session)


def test_the_logout_page_offers_both_choices(client):
    r = client.get("/auth/logout")
    assert r.text.count('method="post" action="/auth/logout"') == 2
    assert 'name="everywhere"' in r.text


def test_a_dead_database_logs_nobody_in_and_says_so(tmp_path):
    dead = Store(f"sqlite:///{tmp_path / 'gone.db'}")
    instructor = auth.InstructorAuth(dead, key=KEY, cache_s=0.0)
    session = instructor.log_in(KEY)
    (tmp_path / "gone.db").unlink()
    dead.close()
    (tmp_path / "gone.db").mkdir()  # the path is now a directory: every open fails
    assert not instructor.is_valid(session)
    r = _post_key(TestClient(_app(instructor), follow_redirects=False), KEY)
    assert r.status_code == 503 and "cannot reach its database" in r.text


def test_a_full_disk_says_so_on_login_and_logout(instructor, monkeypatch):
    from classroom.domain import DiskFull

    def full(*args, **kwargs):
        raise DiskFull("the database's disk is full, so nothing was saved")

    session = instructor.log_in(KEY)
    client = TestClient(_app(instructor), follow_redirects=False)
    monkeypatch.setattr(instructor, "start_session", full)
    monkeypatch.setattr(instructor, "end", full)
    r = _post_key(client, KEY)
    assert r.status_code == 503 and "disk is full, so no new login can be saved" in r.text
    assert "already logged in stays logged in" in r.text
    client.cookies.set(web.INSTRUCTOR_COOKIE, session)
    r = client.post("/auth/logout", headers=ORIGIN)
    assert r.status_code == 503 and "disk is full, so the login could not be ended" in r.text
    assert f'{web.INSTRUCTOR_COOKIE}=""' in r.headers["set-cookie"]  # forgotten here anyway


# -- guessing ------------------------------------------------------------------------------------

def test_failed_keys_of_a_browser_without_cookie_are_limited_and_logged_without_address(
        instructor, caplog):
    app = _app(instructor)
    guesser = TestClient(app, follow_redirects=False, client=("203.0.113.7", 5000))
    with caplog.at_level(logging.WARNING, logger="web.login"):
        for i in range(web.LOGIN_FAILURES_PER_MINUTE):
            assert _post_key(guesser, f"guess-{i:02d}-xxxxxxxxxx").status_code == 403
        blocked = _post_key(guesser, KEY)  # even the right key waits now
    assert blocked.status_code == 429 and "set-cookie" not in blocked.headers
    assert 1 <= int(blocked.headers["retry-after"]) <= 60
    refusals = [r for r in caplog.records if "instructor login refused" in r.getMessage()]
    assert len(refusals) == web.LOGIN_FAILURES_PER_MINUTE
    assert not any("203.0.113.7" in r.getMessage() or "guess-" in r.getMessage()
                   for r in caplog.records)
    # Another address is not slowed down by this one.
    other = TestClient(app, follow_redirects=False, client=("198.51.100.9", 5000))
    assert _post_key(other, KEY).status_code == 303


def test_nat_classmates_and_the_instructor_log_in_after_a_guesser_sent_many_keys(instructor):
    """Behind one NAT, a student sends more wrong keys than the address limit, loading the
    login page for a fresh cookie before every key. Before, each fresh cookie got one try
    (cookies come at thousands a minute: thousands of keys). Now the address's new
    browsers share LOGIN_FRESH_PER_ADDRESS wrong keys a minute, which no cookie resets;
    the browser that logged in before, and the one-time link, still log in."""
    app = _app(instructor)
    nat = ("203.0.113.88", 5000)

    def browser() -> TestClient:
        b = TestClient(app, follow_redirects=False, client=nat)
        b.get("/auth/login", headers={"accept": "text/html"})  # the form, and a device cookie
        return b

    laptop = browser()
    assert _post_key(laptop, KEY).status_code == 303  # logged in before the attack
    guesser, statuses = TestClient(app, follow_redirects=False, client=nat), []
    for i in range(web.LOGIN_FAILURES_PER_ADDRESS + 100):
        if i % web.LOGIN_FAILURES_PER_MINUTE == 0 or i >= web.LOGIN_FAILURES_PER_ADDRESS:
            guesser.cookies.clear()  # a fresh cookie for every key past the address limit
            guesser.get("/auth/login", headers={"accept": "text/html"})
        statuses.append(_post_key(guesser, f"guess-{i:03d}-xxxxxxxxxx").status_code)
    limit = web.LOGIN_FAILURES_PER_ADDRESS
    assert statuses[:limit] == [403] * limit
    assert statuses[limit:].count(403) == web.LOGIN_FRESH_PER_ADDRESS
    assert set(statuses[limit:]) == {403, 429}
    assert _post_key(guesser, KEY).status_code == 429  # his cookie guessed: it waits
    refused = _post_key(browser(), KEY)  # a new browser too, this minute
    assert refused.status_code == 429 and "one-time login link" in refused.text
    assert _post_key(laptop, KEY).status_code == 303
    # A valid one-time link is never refused: it is signed with the key.
    assert browser().get("/auth/login", params={"token": auth.login_link_token(KEY)}
                         ).status_code == 303


def test_spent_links_count_as_failures(instructor):
    guesser = TestClient(_app(instructor), follow_redirects=False, client=("203.0.113.8", 1))
    for _ in range(web.LOGIN_FAILURES_PER_MINUTE):
        assert guesser.get("/auth/login", params={"token": "forged"}).status_code == 403
    assert guesser.get("/auth/login", params={"token": "forged"}).status_code == 429


# -- the running app: trusted proxies ----------------------------------------------------------

def _wrong_keys_until_refused(base: str, forwarded: list[str]) -> list[int]:
    codes = []
    for address in forwarded:
        request = urllib.request.Request(
            f"{base}/auth/login", data=b"key=not-the-key-00000000", method="POST",
            headers={"Origin": base, "X-Forwarded-For": address,
                     "Content-Type": "application/x-www-form-urlencoded"})
        try:
            urllib.request.urlopen(request, timeout=30)
            codes.append(200)
        except urllib.error.HTTPError as exc:
            codes.append(exc.code)
    return codes


@pytest.mark.server
@pytest.mark.parametrize("bound", ["127.0.0.1", None], ids=["loopback", "every-interface"])
@pytest.mark.parametrize("trusted", [None, "", "10.0.0.0/8"])
def test_forwarded_addresses_are_believed_only_from_trusted_proxies(tmp_path, trusted, bound):
    """uvicorn's FORWARDED_ALLOW_IPS names the trusted proxies; by default 127.0.0.1 and
    ::1 (nginx on the same machine). This test's requests come from 127.0.0.1, a proxy on
    this machine. Bound to every interface (the README's ``streamlit run app.py``, a
    dual-stack socket) they arrive as ``::ffff:127.0.0.1``: before, that matched no
    trusted proxy and the forwarded address was never believed."""
    from tests.support.server import running_server

    env = {"LDP_CLASSROOM_DATA_DIR": str(tmp_path), config.KEY_ENV: KEY}
    if trusted is not None:
        env["FORWARDED_ALLOW_IPS"] = trusted
    forwarded = [f"198.51.100.{i}" for i in range(web.LOGIN_FAILURES_PER_MINUTE + 2)]
    with running_server(env, address=bound) as base:
        codes = _wrong_keys_until_refused(base, forwarded)
    if trusted is None:  # a local proxy: each forwarded address is its own client
        assert codes == [403] * len(forwarded)
    else:  # the header is ignored: every try comes from one client, 127.0.0.1
        assert codes == [403] * web.LOGIN_FAILURES_PER_MINUTE + [429, 429]


# -- the instructor key ------------------------------------------------------------------------


def test_generated_key_is_kept_private_and_stable(tmp_path, monkeypatch):
    monkeypatch.setenv("LDP_CLASSROOM_DATA_DIR", str(tmp_path))
    monkeypatch.delenv(config.KEY_ENV, raising=False)
    monkeypatch.setattr("classroom.config.secret", lambda name, **kw: None)
    key, source = config.instructor_key()
    assert len(key) >= 20 and config.instructor_key() == (key, source)
    assert source == str(tmp_path / "instructor_key")
    mode = stat.S_IMODE(os.stat(tmp_path / "instructor_key").st_mode)
    assert mode == 0o600
    assert auth.check_key(key, key) and not auth.check_key(key[:-1], key)
    assert not auth.check_key(None, key)


@pytest.mark.parametrize("key", ["short", "fifteen-chars-x"])
def test_a_short_configured_key_stops_the_start_with_a_clear_message(monkeypatch, tmp_path,
                                                                     key):
    from classroom.domain import ConfigError

    monkeypatch.setenv("LDP_CLASSROOM_DATA_DIR", str(tmp_path))
    monkeypatch.setenv(config.KEY_ENV, key)
    with pytest.raises(ConfigError, match=f"has {len(key)} characters; use at least 16"):
        config.instructor_key()
    monkeypatch.setenv(config.KEY_ENV, key + "y")  # 16 and more are fine
    if len(key) + 1 >= config.MIN_KEY_CHARS:
        assert config.instructor_key() == (key + "y", f"the value of {config.KEY_ENV}")


@pytest.mark.parametrize(("key", "why"), [
    ("passwordpassword", 'it repeats "password"'),
    ("aaaaaaaaaaaaaaaaaaaa", 'it repeats "a"'),
    ("1234567890123456", "runs of neighbouring characters"),
    ("abababababababac", "only 3 different characters"),
    ("instructor-secret", "common words"),
    ("8302917465038291", "bits of guessing at best"),
])
def test_a_weak_configured_key_is_named_at_start(key, why):
    weakness = config.key_weakness(key)
    assert weakness is not None and why in weakness
    text = web.banner("127.0.0.1", 8501, None, "tok", f"the value of {config.KEY_ENV}",
                      weakness)
    assert f"WARNING: the instructor key (the value of {config.KEY_ENV}) is weak: " in text
    assert key not in text  # the key itself is never printed


def test_a_random_key_gets_no_warning():
    import secrets

    assert all(config.key_weakness(secrets.token_urlsafe(18)) is None for _ in range(2000))
    assert config.key_weakness("correct horse battery staple") is None
    assert "WARNING" not in web.banner("127.0.0.1", 8501, None, "tok", "a file", None)


def test_the_start_warns_about_a_weak_key(tmp_path, monkeypatch, capsys):
    import asyncio

    monkeypatch.setenv("LDP_CLASSROOM_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("LDP_CLASSROOM_DATABASE_URL", f"sqlite:///{tmp_path / 'c.db'}")
    monkeypatch.setenv(config.KEY_ENV, "passwordpassword")
    web.PROCESS.reset()

    async def start() -> None:
        async with web.make_lifespan(lambda: ("127.0.0.1", 8501))(None):
            pass

    asyncio.run(start())
    assert 'is weak: it repeats "password"' in capsys.readouterr().err
