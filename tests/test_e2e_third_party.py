"""No page of the app asks any other host for anything: checked in real Chromium.

Every request of the phone page, the home page, each self-study page and the
instructor's dashboard is recorded while the page renders; one that leaves the
test server (a font, a favicon, analytics) fails the test. A privacy app must
not tell a third party who is in the class.
"""

from __future__ import annotations

import time

import pytest

from classroom.domain import CLASS_EXERCISE
from tests.support.browser import PHONE, chromium, login_link, require_browser
from tests.support.server import running_server

pytestmark = [pytest.mark.browser, pytest.mark.server]

KEY = "third-party-instructor-key"
DESKTOP = {"width": 1280, "height": 800}
#: url path -> a text the rendered page shows
STUDY_PAGES = {"randomized-response": "Randomized response", "class-exercise": "class exercise",
               "likelihood": "Likelihood", "local-vs-central": "Local", "histograms": "Histogram",
               "averaging-attack": "averaging attack", "manipulation": "Manipulation lab",
               "trust-models": "What each model trusts", "audit-lab": "Audit lab"}


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    require_browser()
    from classroom.service import PollService
    from classroom.store import Store

    data = tmp_path_factory.mktemp("third-party")
    url = f"sqlite:///{data / 'classroom.db'}"
    store = Store(url)
    svc = PollService.on(store)
    poll = svc.polls.create_poll("Hosts")
    q = svc.polls.add_question(poll.id, "Vanilla (1) or chocolate (0)?",
                               options=("Chocolate", "Vanilla"),
                               design_params=dict(CLASS_EXERCISE))
    svc.running.open_question(q.id)
    env = {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_DATABASE_URL": url,
           "LDP_CLASSROOM_INSTRUCTOR_KEY": KEY}
    with running_server(env) as base:
        yield base, poll
    store.close()


def _visit(chromium, base: str, path: str, ready: str, viewport=DESKTOP) -> list[str]:
    """Every URL the page requested until it showed ``ready`` and went quiet for a moment."""
    ctx = chromium.new_context(viewport=viewport)
    page = ctx.new_page()
    urls: list[str] = []
    page.on("request", lambda r: urls.append(r.url))
    page.goto(base + path)
    page.get_by_text(ready).filter(visible=True).first.wait_for(timeout=60_000)
    # Late requests (fonts, icons) follow the first paint: wait until none came for 1 s.
    seen, quiet_since = len(urls), time.monotonic()
    while time.monotonic() - quiet_since < 1.0:
        page.wait_for_timeout(200)
        if len(urls) != seen:
            seen, quiet_since = len(urls), time.monotonic()
    ctx.close()
    return urls


def _others(base: str, urls: list[str]) -> list[str]:
    return [u for u in urls if not u.startswith((base + "/", "data:", "blob:"))]


def test_phone_page_asks_no_other_host(classroom, chromium):
    base, poll = classroom
    urls = _visit(chromium, base, f"/join/{poll.join_code}", "Vanilla", PHONE)
    assert urls and _others(base, urls) == []


def test_home_page_asks_no_other_host(classroom, chromium):
    base, _ = classroom
    urls = _visit(chromium, base, "/", "I'm a student")
    assert any("/static/" in u for u in urls)  # Streamlit's own assets, from this server
    assert _others(base, urls) == []


@pytest.mark.parametrize("path", list(STUDY_PAGES))
def test_study_page_asks_no_other_host(classroom, chromium, path):
    base, _ = classroom
    assert _others(base, _visit(chromium, base, f"/{path}", STUDY_PAGES[path])) == []


def test_dashboard_asks_no_other_host(classroom, chromium):
    base, _ = classroom
    urls = _visit(chromium, base, login_link(base).removeprefix(base), "Reports received")
    assert _others(base, urls) == []


def test_login_page_asks_no_other_host(classroom, chromium):
    base, _ = classroom
    urls = _visit(chromium, base, "/auth/login", "Instructor key")
    assert urls and _others(base, urls) == []
