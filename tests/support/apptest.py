"""AppTest helpers: a temporary classroom database, a student session, a component tap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetStates
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


@pytest.fixture
def app_env(tmp_path, monkeypatch):
    """A fresh SQLite classroom for the app under test; yields its PollService."""
    from classroom.service import PollService
    from classroom.store import Store
    from ui import session

    url = f"sqlite:///{tmp_path / 'classroom.db'}"
    monkeypatch.setenv("LDP_CLASSROOM_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("LDP_CLASSROOM_DATABASE_URL", url)
    monkeypatch.setenv("LDP_CLASSROOM_INSTRUCTOR_KEY", "test-instructor-key")
    session.service.clear()
    svc = PollService(Store(url))
    yield svc
    session.service.clear()


def student_app(code: str, device: str | None, *, timeout: float = 20) -> AppTest:
    """A new browser session opening ``/?poll=code`` with device cookie ``device``."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.query_params["poll"] = code
    if device is not None:
        at.session_state["_ldp_device_id"] = device
    return at.run()


def tap_vote(at: AppTest, *, answer: object = None, params: dict | None = None,
             submission_id: str | None = None, raw: object = None) -> AppTest:
    """Send the vote component's trigger, as the browser does after a tap."""
    comps = at.get("bidi_component")
    assert comps, "no vote component on the page"
    value = raw if raw is not None else {"answer": answer, "params": params,
                                         "submission_id": submission_id}
    states: WidgetStates = at._tree.get_widget_states()
    w = states.widgets.add()
    w.id = f"$$STREAMLIT_INTERNAL_KEY_{comps[0].proto.id}__events"
    w.json_trigger_value = json.dumps([{"event": "vote", "value": value}])
    return at._run(states)
