"""Who can reach the dashboard: no key, a wrong key, a student session, a direct URL.

AppTest part: the teach page's login form and the dashboard's own guard, with the
navigation built by ``app.py`` itself. ``AppTest.switch_page`` only finds
file-based pages, and every page here is a callable ``st.Page``, so
:func:`open_page` asks for a page the way a browser does, by the hash of its
URL path (``AppTest._page_hash``; ``_registered_pages`` lists what the
navigation registered for that session).

Browser part (``browser``, ``server`` marks): each URL is loaded as the FIRST
session of a freshly started server, before any session has set up the
navigation, and again on a server whose navigation is up. No dashboard control
and no exception box may appear.
"""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor

import pytest
from streamlit.testing.v1 import AppTest

from tests.support.apptest import APP, ROOT, app_env, log_in
from tests.support.browser import chromium, login_link, require_browser
from tests.support.browser import log_in as browser_log_in
from tests.support.server import running_server
from tests.test_dashboard import DIE, dashboard, seed

KEY = "test-instructor-key"  # set by the app_env fixture
#: Text that only the dashboard shows (besides the join code itself).
MARKERS = ("Close voting", "Open voting", "Reveal results", "Hide results", "Projection mode",
           "Reports received", "Start the class exercise", "Export CSV")

TEACH_OR_DASHBOARD = """
import streamlit as st
from views import dashboard, teach
(dashboard.render if st.query_params.get("page") == "dashboard" else teach.render)()
"""


def dashboard_hash() -> str:
    """The page hash a browser asks for at /dashboard (``st.Page`` hashes its url_path)."""
    from streamlit.util import calc_hash

    return calc_hash("dashboard")


def open_page(at: AppTest, script_hash: str) -> AppTest:
    """Request the page with this hash in the running session, as a browser's URL does."""
    assert hasattr(at, "_page_hash"), "AppTest changed: update open_page()"
    at._page_hash = script_hash
    return at.run()


def registered_paths(at: AppTest) -> set[str]:
    return {str(info.get("url_pathname")) for info in at._registered_pages.values()}


def page_text(at: AppTest) -> str:
    parts = [str(e.value) for kind in ("markdown", "caption", "info", "warning", "error",
                                       "success", "title", "code") for e in at.get(kind)]
    parts += [b.label for b in at.button] + [m.label for m in at.metric]
    return "\n".join(parts)


def assert_no_dashboard(at: AppTest, code: str | None = None) -> None:
    assert not at.exception, [e.value for e in at.exception]
    text = page_text(at)
    for marker in MARKERS:
        assert marker not in text, f"dashboard control {marker!r} shown"
    if code:
        assert code not in text
    assert not at.metric and not at.get("vega_lite_chart") and not at.get("image")


# -- the dashboard's own guard --------------------------------------------------------------


@pytest.mark.parametrize("query", [{}, {"projector": "1"}, {"key": KEY}, {"poll": "X"},
                                   {"_ldp_session_id": "x" * 43}])
def test_render_without_login_shows_only_the_login_message(app_env, query):
    poll, q = seed(app_env, DIE, 30, 40)
    query = {**query, "pid": str(poll.id), "qid": str(q.id)}
    at = dashboard(instructor=False, query=query)
    assert_no_dashboard(at, poll.join_code)
    assert [i.value for i in at.info] == [
        "The dashboard is for the instructor. Log in on the **I'm teaching** page "
        "([open it](/teach)) with the instructor key."]
    assert not at.selectbox and not at.button and not at.text_input
    assert app_env.polls.question(q.id).is_open  # nothing happened


@pytest.mark.parametrize("forged", [True, "True", "x" * 43, "", 1])
def test_a_forged_session_id_is_not_a_login(app_env, forged):
    poll, _ = seed(app_env, DIE, 3, 4)
    at = AppTest.from_string(TEACH_OR_DASHBOARD, default_timeout=60)
    at.session_state["_ldp_session_id"] = forged  # not a session the server started
    at.query_params["page"] = "dashboard"
    at.run()
    assert_no_dashboard(at, poll.join_code)


def test_an_ended_session_is_no_longer_a_login(app_env):
    from ui import session

    poll, _ = seed(app_env, DIE, 3, 4)
    at = AppTest.from_string(TEACH_OR_DASHBOARD, default_timeout=60)
    log_in(at)
    at.query_params["page"] = "dashboard"
    at.run()
    assert "Close voting" in page_text(at)
    session.instructor_auth().end_all()
    at.run()
    assert_no_dashboard(at, poll.join_code)


# -- the teach page -------------------------------------------------------------------------


def test_the_teach_page_has_a_post_form_and_no_key_widget(app_env):
    at = AppTest.from_string(TEACH_OR_DASHBOARD, default_timeout=60).run()
    assert not at.exception and not at.text_input
    html = " ".join(str(h.proto.body) for h in at.get("html"))
    assert '<form action="/auth/login" method="post"' in html
    assert 'name="key" type="password"' in html


def test_a_key_in_the_teach_link_logs_nobody_in_and_leaves_the_address(app_env):
    poll, _ = seed(app_env, DIE, 3, 4)
    at = AppTest.from_string(TEACH_OR_DASHBOARD, default_timeout=60)
    at.query_params["key"] = KEY  # even the right key
    at.run()
    assert "key" not in at.query_params
    assert any("no longer log in" in w.value for w in at.warning)
    at.query_params["page"] = "dashboard"
    at.run()
    assert_no_dashboard(at, poll.join_code)


def test_a_logged_in_instructor_sees_the_dashboard_link_and_logout_forms(app_env):
    poll, _ = seed(app_env, DIE, 3, 4)
    at = AppTest.from_string(TEACH_OR_DASHBOARD, default_timeout=60)
    log_in(at)
    at.run()
    assert any("logged in as the instructor" in s.value for s in at.success)
    html = " ".join(str(h.proto.body) for h in at.get("html"))
    assert html.count('<form action="/auth/logout" method="post"') == 2
    at.query_params["page"] = "dashboard"
    at.run()
    text = page_text(at)
    assert "Close voting" in text and poll.join_code in text


# -- the navigation of app.py ---------------------------------------------------------------


def test_navigation_has_the_dashboard_only_for_the_instructor(app_env):
    visitor = AppTest.from_file(APP, default_timeout=60).run()
    assert not visitor.exception
    assert "dashboard" not in registered_paths(visitor)
    assert "teach" in registered_paths(visitor)
    instructor = AppTest.from_file(APP, default_timeout=60)
    log_in(instructor)
    instructor.run()
    assert "dashboard" in registered_paths(instructor)


#: Every self-study page: open to visitors, students and the instructor alike.
STUDY_PATHS = ["randomized-response", "class-exercise", "likelihood", "local-vs-central",
               "trust-models", "histograms", "averaging-attack", "manipulation", "audit-lab"]


def test_visitors_students_and_the_instructor_may_open_every_study_page(app_env):
    from streamlit.util import calc_hash

    poll, _ = seed(app_env, DIE, 3, 4)
    visitor = AppTest.from_file(APP, default_timeout=60).run()
    student = AppTest.from_file(APP, default_timeout=60)
    student.query_params["poll"] = poll.join_code
    student.session_state["_ldp_device_id"] = "student-device-2"
    student.run()
    instructor = AppTest.from_file(APP, default_timeout=60)
    log_in(instructor)
    instructor.run()
    for at in (visitor, student, instructor):
        assert not at.exception
        assert set(STUDY_PATHS) <= registered_paths(at)
    for at in (visitor, student):  # the newest page opens for both, with no dashboard in it
        open_page(at, calc_hash("trust-models"))
        assert "What each model trusts" in page_text(at) + " ".join(
            h.value for h in at.subheader)
        assert "Close voting" not in page_text(at) and poll.join_code not in page_text(at)


def test_student_session_cannot_open_the_dashboard(app_env):
    poll, q = seed(app_env, DIE, 3, 4)
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["poll"] = poll.join_code
    at.session_state["_ldp_device_id"] = "student-device-1"
    at.run()
    assert not at.exception
    assert "dashboard" not in registered_paths(at)
    open_page(at, dashboard_hash())  # the URL /dashboard?poll=CODE in this session
    assert_no_dashboard(at, None)
    # Nor any instructor action: the question is as it was.
    assert app_env.polls.question(q.id).is_open and app_env.polls.question(q.id).revealed


def test_visitor_asking_for_the_dashboard_url_gets_no_dashboard(app_env):
    poll, _ = seed(app_env, DIE, 3, 4)
    at = AppTest.from_file(APP, default_timeout=60).run()
    for query in ({}, {"key": "wrong"}, {"projector": "1"}):
        for k, v in query.items():
            at.query_params[k] = v
        open_page(at, dashboard_hash())
        assert_no_dashboard(at, poll.join_code)


@pytest.mark.parametrize("instructor", [False, True])
@pytest.mark.parametrize("name", ["dashboard", "teach", "home", "shell"])
def test_page_file_executed_directly_shows_nothing(app_env, name, instructor):
    """A view file run as a script (as Streamlit's older multipage mode would run a
    ``pages/`` folder) draws nothing: the modules only define functions."""
    seed(app_env, DIE, 3, 4)
    at = AppTest.from_file(str(ROOT / "views" / f"{name}.py"), default_timeout=60)
    if instructor:
        log_in(at)
    at.run()
    assert not at.exception
    assert not page_text(at)
    assert not at.main.children or all(
        not getattr(block, "children", None) for block in at.main.children.values())


# -- a real server, a real browser ----------------------------------------------------------

PAGE_PATHS = ["", "randomized-response", "class-exercise", "likelihood", "local-vs-central",
              "trust-models", "histograms", "averaging-attack", "manipulation", "audit-lab",
              "teach", "dashboard"]
#: Streamlit's older multipage mode named pages after their files, and the entry point "app".
LEGACY_PATHS = ["pages/dashboard", "pages/dashboard.py", "views/dashboard", "home", "student",
                "study_rr", "shell", "app"]
TRICKS = ["dashboard?key=wrong", "dashboard?projector=1&pid=1&qid=1", "?projector=1&pid=1&qid=1",
          "teach?key=wrong", "dashboard?_ldp_session_id=1", "?poll=ZZZZZZ&projector=1"]
URLS = sorted(set(PAGE_PATHS + LEGACY_PATHS + TRICKS))
#: Loaded as the very first session of their own fresh server.
FIRST_SESSION_URLS = ["", "dashboard", "pages/dashboard", "dashboard?key=wrong",
                      "dashboard?projector=1&pid=1&qid=1", "teach", "app", "home", "student"]


@pytest.fixture(scope="module")
def classroom_env(tmp_path_factory):
    """A classroom database with an open, revealed exercise: what a leak would show."""
    require_browser()
    from classroom.service import PollService
    from classroom.store import Store

    data = tmp_path_factory.mktemp("access")
    url = f"sqlite:///{data / 'classroom.db'}"
    svc = PollService.on(Store(url))
    poll, _ = seed(svc, DIE, 30, 40)
    env = {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_DATABASE_URL": url,
           "LDP_CLASSROOM_INSTRUCTOR_KEY": "access-test-key-0123"}
    return env, poll.join_code


@pytest.fixture(scope="module")
def fresh_servers(classroom_env):
    """One freshly started server per URL of FIRST_SESSION_URLS, started side by side; no
    browser has talked to any of them yet."""
    env, _ = classroom_env
    with contextlib.ExitStack() as stack, ThreadPoolExecutor(4) as pool:
        futures = {path: pool.submit(stack.enter_context, running_server(env, timeout=90))
                   for path in FIRST_SESSION_URLS}
        yield {path: f.result() for path, f in futures.items()}


def settled(page, url: str) -> str:
    """Load ``url``, wait until the app's script has finished and every element is drawn;
    return the page's text.

    A URL whose page never mounts the app (``/pages/dashboard``: the HTML
    shell's relative asset paths do not resolve there) yields its bare text.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.goto(url, wait_until="load")
    try:
        page.wait_for_selector("[data-testid='stApp']", state="attached", timeout=5_000)
    except PlaywrightTimeout:
        return page.inner_text("body")
    page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']"
                           "[data-test-script-state='notRunning']", state="attached",
                           timeout=30_000)
    # The script has finished, but elements whose code is still loading show skeletons.
    page.wait_for_function(
        "() => !document.querySelector(\"[data-testid^='stSkeleton'], "
        "[data-testid='stAppSkeleton']\")", timeout=30_000)
    return page.inner_text("body")


def assert_page_has_no_dashboard(page, text: str, code: str, url: str) -> None:
    for marker in (*MARKERS, code):
        assert marker not in text, f"{url}: dashboard content {marker!r} visible"
    assert page.locator("[data-testid='stException']").count() == 0, f"{url}: exception box"
    assert page.locator(".ldp-join-code").count() == 0, f"{url}: join code panel"


@pytest.mark.browser
@pytest.mark.server
@pytest.mark.parametrize("path", FIRST_SESSION_URLS)
def test_first_session_on_a_fresh_server_sees_no_dashboard(chromium, classroom_env,
                                                           fresh_servers, path):
    _, code = classroom_env
    ctx = chromium.new_context()
    try:
        page = ctx.new_page()
        url = f"{fresh_servers[path]}/{path}"
        assert_page_has_no_dashboard(page, settled(page, url), code, url)
    finally:
        ctx.close()


@pytest.mark.browser
@pytest.mark.server
def test_every_url_after_startup_and_login_as_control(chromium, classroom_env):
    env, code = classroom_env
    with running_server(env) as base:
        visitor = chromium.new_context()
        try:
            page = visitor.new_page()
            for path in URLS:
                url = f"{base}/{path}"
                assert_page_has_no_dashboard(page, settled(page, url), code, url)
        finally:
            visitor.close()
        # Positive control: the instructor's login URL does show the dashboard.
        instructor = chromium.new_context()
        try:
            page = instructor.new_page()
            browser_log_in(page, base, "access-test-key-0123")
            text = settled(page, page.url)
            assert page.url.startswith(f"{base}/dashboard") and "key=" not in page.url
            assert code in text and "Close voting" in text
        finally:
            instructor.close()


@pytest.mark.browser
@pytest.mark.server
def test_login_url_as_the_first_request_opens_the_dashboard(chromium, classroom_env):
    """The login link printed at start-up is usually the first request a server gets; it
    must land on a working dashboard, not on the bare file of the legacy pages/ mode."""
    env, code = classroom_env
    with running_server(env) as base:
        ctx = chromium.new_context()
        try:
            page = ctx.new_page()
            page.goto(login_link(base))
            text = settled(page, page.url)
            assert page.url.startswith(f"{base}/dashboard") and "token=" not in page.url
            assert code in text and "Close voting" in text
        finally:
            ctx.close()


@pytest.mark.browser
@pytest.mark.server
def test_the_teach_page_logs_in_by_post_and_logs_out_everywhere(chromium, classroom_env):
    """The key typed on "I'm teaching" goes by POST (never into an address); the session
    opens the dashboard; "Log out everywhere" ends it and another browser's session too."""
    env, code = classroom_env
    with running_server(env) as base:
        other = chromium.new_context()
        ctx = chromium.new_context()
        try:
            second = other.new_page()
            browser_log_in(second, base, "access-test-key-0123")
            page = ctx.new_page()
            posts: list[str] = []
            page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
            settled(page, f"{base}/teach")
            page.fill("#ldp-key", "access-test-key-0123")
            page.get_by_role("button", name="Log in").click()
            page.wait_for_url(f"{base}/dashboard**", timeout=60_000)
            assert code in settled(page, page.url)
            assert posts == [f"{base}/auth/login"]
            assert all("access-test-key" not in u for u in posts)
            text = settled(page, f"{base}/teach")
            assert "logged in as the instructor" in text
            page.get_by_role("button", name="Log out everywhere").click()
            page.get_by_text("Every instructor login has ended").wait_for(timeout=60_000)
            for browser_page in (page, second):
                after = settled(browser_page, f"{base}/dashboard")
                assert code not in after and "Close voting" not in after
        finally:
            ctx.close()
            other.close()
