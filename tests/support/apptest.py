"""AppTest helpers: a temporary classroom database for the app under test."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


@pytest.fixture
def app_env(tmp_path, monkeypatch):
    """A fresh SQLite classroom for the app under test; yields the app's own PollService
    (the process's composition root, built from these settings on first use)."""
    import web

    url = f"sqlite:///{tmp_path / 'classroom.db'}"
    monkeypatch.setenv("LDP_CLASSROOM_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("LDP_CLASSROOM_DATABASE_URL", url)
    monkeypatch.setenv("LDP_CLASSROOM_INSTRUCTOR_KEY", "test-instructor-key")
    web.PROCESS.reset()
    yield web.root().service
    web.PROCESS.reset()


def log_in(at) -> str:
    """Log this AppTest session in as the instructor, as a browser's session cookie would
    (AppTest has no cookies): a real session, stored in the app's database."""
    from ui import session

    session_id = session.instructor_auth().start_session()
    at.session_state["_ldp_session_id"] = session_id
    return session_id
