"""Headless Debian Chromium through Playwright, for end-to-end tests.

Never downloads a browser: it uses /usr/bin/chromium. Without it (or without
the playwright package) the tests skip with the reason, except under
``CI=true``, where a missing browser is a failure.
"""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = os.environ.get("LDP_TEST_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
PHONE = {"width": 360, "height": 640}


def require_browser() -> None:
    """Skip (locally) or fail (CI) when Chromium or Playwright is missing."""
    problem = None
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        problem = f"Chromium not found at {CHROMIUM} (apt-get install chromium chromium-driver)"
    else:
        try:
            import playwright.sync_api
        except ImportError:
            problem = ("the playwright package is not installed "
                       "(pip install -r requirements-dev.txt)")
    if problem:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"browser tests must run in CI: {problem}")
        pytest.skip(problem)


@pytest.fixture(scope="module")
def chromium():
    """A Playwright Chromium browser for the module's tests."""
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


def log_in(page, base: str, key: str, *, timeout_ms: float = 60_000) -> None:
    """Log this browser in as the instructor the way a person does: the key typed on the
    login form, sent by POST; the server answers with the dashboard."""
    page.goto(f"{base}/auth/login")
    page.fill("#key", key)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/dashboard**", timeout=timeout_ms)


def login_link(base: str) -> str:
    """The one-time login link the server at ``base`` printed when it started."""
    import re

    from tests.support.server import server_log

    found = re.search(r"Instructor login link: (\S+)", server_log(base))
    assert found, "the server printed no login link"
    return found.group(1)


def settle(page, timeout_ms: float = 60_000) -> None:
    """Wait until the page is drawn: a Streamlit page's script has finished and no element
    still shows a loading skeleton; any other page has loaded and its network is idle."""
    if page.locator("[data-testid='stApp']").count():
        page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']"
                               "[data-test-script-state='notRunning']", state="attached",
                               timeout=timeout_ms)
        page.wait_for_function(
            "() => !document.querySelector(\"[data-testid^='stSkeleton'], "
            "[data-testid='stAppSkeleton']\")", timeout=timeout_ms)
    else:
        page.wait_for_load_state("networkidle", timeout=timeout_ms)


def metric(page, label: str) -> str | None:
    """The value a metric labelled ``label`` shows, or None while it is being redrawn."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    box = page.locator("[data-testid='stMetric']").filter(
        has=page.locator("[data-testid='stMetricLabel']", has_text=label))
    try:
        return box.first.locator("[data-testid='stMetricValue']").inner_text(
            timeout=1000).strip()
    except PlaywrightTimeout:
        return None


def wait_metric(page, label: str, want, timeout: float = 60.0) -> str:
    """Wait until the metric ``label`` shows ``want`` (a string, or a predicate on the text):
    the live panel refreshes every 2 s."""
    import time

    ok = want if callable(want) else (lambda seen: seen == want)
    deadline = time.monotonic() + timeout
    seen = None
    while time.monotonic() < deadline:
        seen = metric(page, label)
        if seen is not None and ok(seen):
            return seen
        page.wait_for_timeout(250)
    raise AssertionError(f"{label!r} shows {seen!r}, expected {want!r}")


class SentReruns:
    """The ``rerun_script`` messages a Streamlit page sends on its websocket, decoded as
    they leave (full runs and fragment runs told apart)."""

    def __init__(self, page) -> None:
        self.reruns: list = []
        page.on("websocket", lambda ws: ws.on("framesent", self._sent))

    def _sent(self, payload) -> None:
        from streamlit.proto.BackMsg_pb2 import BackMsg

        if isinstance(payload, str):
            return
        msg = BackMsg()
        msg.ParseFromString(payload)
        if msg.WhichOneof("type") == "rerun_script":
            self.reruns.append(msg.rerun_script)

    def fragment_reruns(self) -> list:
        return [r for r in self.reruns if r.fragment_id]

    @property
    def full(self) -> int:
        """How many full runs (not a fragment's) the page asked for."""
        return sum(1 for r in self.reruns if not r.fragment_id)


#: What the widget guard (ui/widget_guard.py) shows on the page and writes to the log when
#: it ignores a widget state: an ordinary session must never produce either.
GUARD_BANNER = "ignored input that none of its controls could have sent"
GUARD_LOG_LINE = "widget state(s) that no control on the page could have sent"
