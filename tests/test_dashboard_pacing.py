"""Pacing from the keyboard in projection mode (``ui/dashboard/pacing.py``).

The step logic is a pure function of where the question stands: PageDown goes draft →
open → closed → revealed → the next question (opened by the service's Next), PageUp
undoes a reveal or a close. Under AppTest a key's command arrives as the component's
trigger value, exactly as the page's script sends it, and the database must show the
step; the countdown's text follows the phone's rounding-up rule.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from streamlit.testing.v1 import AppTest

from classroom.domain import CLASS_EXERCISE
from tests.support.apptest import app_env, log_in
from ui.dashboard.pacing import (
    COMMANDS,
    Stage,
    action_for,
    countdown_text,
    next_step,
    stage_of,
    step_back,
)

SCRIPT = """
from views import dashboard
dashboard.render()
"""


# -- the step logic -------------------------------------------------------------------

@pytest.mark.parametrize("stage, forward, back", [
    (Stage("draft", False, True), "open", None),
    (Stage("open", False, True), "close", None),
    (Stage("open", True, True), "close", "hide"),
    (Stage("closed", False, True), "reveal", "open"),
    (Stage("closed", True, True), "next", "hide"),
    (Stage("closed", True, False), None, "hide"),
    (Stage("draft", False, False), "open", None),
    (Stage("draft", True, True), "open", "hide"),
])
def test_pagedown_and_pageup_at_every_stage(stage, forward, back):
    assert next_step(stage) == forward
    assert step_back(stage) == back
    assert action_for("forward", stage) == forward
    assert action_for("back", stage) == back


def test_a_clicker_walks_a_question_in_four_presses():
    """PageDown from a draft: open, close, reveal, next; each press one step."""
    stage = Stage("draft", False, True)
    seen = []
    for _ in range(4):
        action = next_step(stage)
        seen.append(action)
        stage = {"open": Stage("open", False, True), "close": Stage("closed", False, True),
                 "reveal": Stage("closed", True, True), "next": None}[action] or stage
    assert seen == ["open", "close", "reveal", "next"]


def test_pageup_undoes_what_pagedown_did_where_it_can():
    """Back after a reveal hides; back after a close reopens (and forward closes again)."""
    revealed = Stage("closed", True, True)
    assert step_back(revealed) == "hide"
    closed = Stage("closed", False, True)
    assert step_back(closed) == "open"
    assert next_step(Stage("open", False, True)) == "close"


@pytest.mark.parametrize("command, stage, action", [
    ("voting", Stage("draft", False, True), "open"),
    ("voting", Stage("open", False, True), "close"),
    ("voting", Stage("closed", True, True), "open"),
    ("reveal", Stage("open", False, True), "reveal"),
    ("reveal", Stage("closed", True, True), "hide"),
    ("next", Stage("open", False, True), "next"),
    ("next", Stage("open", False, False), None),
    ("leave", Stage("open", False, False), "leave"),
    ("expired", Stage("open", False, False), None),
    ("rm -rf", Stage("open", False, False), None),
])
def test_single_keys(command, stage, action):
    assert action_for(command, stage) == action


@pytest.mark.parametrize("ms, text", [
    (60_000, "1:00"), (59_001, "1:00"), (59_000, "0:59"), (1, "0:01"), (1000, "0:01"),
    (1001, "0:02"), (0, "0:00"), (-500, "0:00"), (90_000, "1:30"), (3_600_000, "60:00"),
    (9_999, "0:10"),
])
def test_countdown_text_rounds_up_like_the_phone(ms, text):
    assert countdown_text(ms) == text


# -- the dashboard under AppTest ------------------------------------------------------

def _projector(svc, poll, q) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=60)
    log_in(at)
    for key, value in {"projector": "1", "pid": str(poll.id), "qid": str(q.id)}.items():
        at.query_params[key] = value
    return at.run()


def _component(at):
    found = at.get("bidi_component")
    assert len(found) == 1, "projection mode mounts the pacing component once"
    return found[0].proto


def press(at: AppTest, command: str, seq: int = 1) -> AppTest:
    """Send ``command`` as the page's script does: the component's trigger value (a JSON
    list of events) with every other control's state, and rerun."""
    from streamlit.components.v2.bidi_component.main import _make_trigger_id

    states = at._tree.get_widget_states()
    trigger = states.widgets.add()
    trigger.id = _make_trigger_id(_component(at).id, "events")
    trigger.json_trigger_value = json.dumps(
        [{"event": "command", "value": {"command": command, "seq": seq}}])
    return at._run(states)


def _poll(svc, *, countdown_s=None, n=2):
    poll = svc.polls.create_poll("CS208")
    qs = [svc.polls.add_question(poll.id, f"Question {i + 1}?", options=("No", "Yes"),
                                 design_params=dict(CLASS_EXERCISE),
                                 countdown_s=countdown_s if i == 0 else None) for i in range(n)]
    return poll, qs


def test_pagedown_drives_a_question_through_the_database(app_env):
    svc = app_env
    poll, (q1, q2) = _poll(svc)
    at = _projector(svc, poll, q1)
    assert not at.exception
    press(at, "forward")
    assert svc.polls.question(q1.id).state == "open"
    press(at, "forward", 2)
    assert svc.polls.question(q1.id).state == "closed"
    assert not svc.polls.question(q1.id).revealed
    press(at, "forward", 3)
    assert svc.polls.question(q1.id).revealed
    press(at, "forward", 4)
    assert svc.polls.question(q1.id).state == "closed"
    assert svc.polls.question(q2.id).state == "open"
    # The projector follows to the question now open.
    assert at.query_params["qid"] == [str(q2.id)] or at.query_params["qid"] == str(q2.id)
    assert any("Question 2?" in m.value for m in at.markdown)
    assert not at.exception


def test_pageup_hides_then_reopens(app_env):
    svc = app_env
    poll, (q1, _q2) = _poll(svc)
    svc.running.open_question(q1.id)
    svc.running.close_question(q1.id)
    svc.running.set_revealed(q1.id, True)
    at = _projector(svc, poll, q1)
    press(at, "back")
    assert not svc.polls.question(q1.id).revealed
    press(at, "back", 2)
    assert svc.polls.question(q1.id).state == "open"
    press(at, "back", 3)  # nothing to undo: voting cannot be un-opened
    assert svc.polls.question(q1.id).state == "open"
    assert any("cannot be taken back" in t.value for t in at.toast)


def test_single_keys_through_the_buttons_callbacks(app_env):
    svc = app_env
    poll, (q1, q2) = _poll(svc)
    at = _projector(svc, poll, q1)
    press(at, "voting")
    assert svc.polls.question(q1.id).state == "open"
    press(at, "reveal", 2)
    assert svc.polls.question(q1.id).revealed
    press(at, "reveal", 3)
    assert not svc.polls.question(q1.id).revealed
    press(at, "next", 4)
    assert svc.polls.question(q2.id).state == "open"
    assert svc.polls.question(q1.id).state == "closed"
    press(at, "next", 5)  # the last question: nothing changes, and the page says so
    assert svc.polls.question(q2.id).state == "open"
    assert any("last question" in t.value for t in at.toast)
    press(at, "leave", 6)
    assert "projector" not in at.query_params
    assert not at.exception


def test_the_last_question_revealed_has_no_next_step(app_env):
    svc = app_env
    poll, (q1,) = _poll(svc, n=1)
    svc.running.open_question(q1.id)
    svc.running.close_question(q1.id)
    svc.running.set_revealed(q1.id, True)
    at = _projector(svc, poll, q1)
    press(at, "forward")
    q = svc.polls.question(q1.id)
    assert (q.state, q.revealed) == ("closed", True)
    assert any("last question" in t.value for t in at.toast)


def test_a_key_reads_the_question_afresh(app_env):
    """The screen said "open", but another tab closed the question meanwhile: PageDown
    takes the next step from where the question really stands (reveal), not a second
    close."""
    svc = app_env
    poll, (q1, _q2) = _poll(svc)
    svc.running.open_question(q1.id)
    at = _projector(svc, poll, q1)
    svc.running.close_question(q1.id)
    press(at, "forward")
    q = svc.polls.question(q1.id)
    assert (q.state, q.revealed) == ("closed", True)


def test_a_refused_step_says_why_and_changes_nothing(app_env):
    """Next into a question the budget cannot pay for: the service's refusal is shown."""
    svc = app_env
    poll, (q1, q2) = _poll(svc)
    svc.polls.set_budget(poll.id, 1.2)  # ln 3 ≈ 1.10 fits once, not twice
    svc.running.open_question(q1.id)
    svc.reports.submit_report(poll.join_code, q1.id, answer=1, design_params=dict(CLASS_EXERCISE),
                              submission_id="budget-1", device_id="device-1")
    at = _projector(svc, poll, q1)
    press(at, "next")
    assert svc.polls.question(q1.id).state == "open"
    assert svc.polls.question(q2.id).state == "draft"
    assert any("budget" in e.value for e in at.error)


def test_the_countdown_is_sent_to_the_page(app_env):
    svc = app_env
    poll, (q1, _q2) = _poll(svc, countdown_s=60)
    at = _projector(svc, poll, q1)
    data = json.loads(_component(at).json)
    assert data["left_ms"] is None  # a draft: no countdown runs
    press(at, "forward")
    data = json.loads(_component(at).json)
    q = svc.polls.question(q1.id)
    assert q.closes_at is not None
    assert 55_000 <= data["left_ms"] <= 60_000
    assert data["left_text"] in ("1:00", "0:59", "0:58", "0:57", "0:56")
    assert [tuple(k) for k in data["keys"]][0][0].startswith("PageDown")


def test_the_countdown_closes_the_question_on_screen(app_env, monkeypatch):
    """At zero the page sends "expired": the rerun shows the question closed (the server
    reads it closed from its deadline on)."""
    svc = app_env
    poll, (q1, _q2) = _poll(svc, countdown_s=10)
    svc.running.open_question(q1.id)
    at = _projector(svc, poll, q1)
    assert any(b.label == "Close voting" for b in at.button)
    later = svc.running.now() + timedelta(seconds=11)
    monkeypatch.setattr(type(svc.store), "now", lambda self: later)
    press(at, "expired")
    assert svc.polls.question(q1.id).state == "closed"
    assert json.loads(_component(at).json)["left_ms"] is None
    assert not any(b.label == "Close voting" for b in at.button)
    assert any(b.label == "Reopen voting" for b in at.button)


def test_the_desk_has_no_pacing_component_and_a_next_button(app_env):
    svc = app_env
    poll, (q1, q2) = _poll(svc)
    svc.running.open_question(q1.id)
    at = AppTest.from_string(SCRIPT, default_timeout=60)
    log_in(at)
    at.query_params["pid"] = str(poll.id)
    at.query_params["qid"] = str(q1.id)
    at.run()
    assert not at.get("bidi_component")
    at.button(key="dash_next").click().run()
    assert svc.polls.question(q2.id).state == "open"
    assert svc.polls.question(q1.id).state == "closed"
    assert at.button(key="dash_next").disabled  # Q2 is the last


def test_every_command_the_script_can_send_is_known():
    import re
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "ui" / "dashboard" / "pacing.js"
    sent = set(re.findall(r"return '(\w+)';", script.read_text(encoding="utf-8")))
    sent |= set(re.findall(r"send\('(\w+)'\)", script.read_text(encoding="utf-8")))
    assert sent - {"blank", "help"} <= set(COMMANDS)
    assert "expired" in sent


def test_stage_of_follows_position_order():
    from types import SimpleNamespace as NS

    a = NS(id=5, position=2, state="open", revealed=False)
    b = NS(id=3, position=1, state="closed", revealed=True)
    assert stage_of(a, [b, a]) == Stage("open", False, False)
    assert stage_of(b, [b, a]) == Stage("closed", True, True)


def test_the_widget_guard_knows_what_the_keys_send(app_env):
    """The states the page's script sends for a key (its trigger, and the component's
    state) pass the guard exactly as a button's do; any other kind under the same ids is
    refused."""
    from streamlit.components.v2.bidi_component.main import _make_trigger_id
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    from ui.widget_guard import acceptable, sent_type

    svc = app_env
    poll, (q1, _q2) = _poll(svc)
    at = _projector(svc, poll, q1)
    base = _component(at).id
    trigger_id = _make_trigger_id(base, "events")
    metadata = at.session_state._state._state._new_widget_state.widget_metadata
    sent = json.dumps([{"event": "command", "value": {"command": "forward", "seq": 1}}])
    assert acceptable(WidgetState(id=trigger_id, json_trigger_value=sent),
                      sent_type(metadata.get(trigger_id)))
    assert acceptable(WidgetState(id=base, json_value="{}"), sent_type(metadata.get(base)))
    for wrong in (WidgetState(id=trigger_id, string_value=sent),
                  WidgetState(id=trigger_id, trigger_value=True),
                  WidgetState(id=trigger_id, json_trigger_value="[" * 99 + "]" * 99),
                  WidgetState(id=base, json_trigger_value=sent)):
        assert not acceptable(wrong, sent_type(metadata.get(wrong.id)))


@pytest.mark.parametrize("value", [{"command": "drop table"}, {"command": 42}, "forward!",
                                   None, [1, 2], {"seq": 3}])
def test_a_crafted_command_does_nothing(app_env, value):
    from streamlit.components.v2.bidi_component.main import _make_trigger_id

    svc = app_env
    poll, (q1, _q2) = _poll(svc)
    at = _projector(svc, poll, q1)
    states = at._tree.get_widget_states()
    trigger = states.widgets.add()
    trigger.id = _make_trigger_id(_component(at).id, "events")
    trigger.json_trigger_value = json.dumps([{"event": "command", "value": value}])
    at._run(states)
    assert not at.exception
    assert (svc.polls.question(q1.id).state, svc.polls.question(q1.id).revealed) == ("draft", False)
    assert "projector" in at.query_params


def test_a_key_from_a_session_no_longer_the_instructors_does_nothing(app_env):
    """The instructor's session ended (logged out elsewhere, expired) while the projector
    was drawn: a key changes nothing."""
    from ui import session

    svc = app_env
    poll, (q1, _q2) = _poll(svc)
    at = _projector(svc, poll, q1)
    session.instructor_auth().end(at.session_state["_ldp_session_id"])
    press(at, "forward")
    assert svc.polls.question(q1.id).state == "draft"
    assert not at.exception


def test_projection_mode_without_a_poll_still_leaves_on_esc(app_env):
    at = AppTest.from_string(SCRIPT, default_timeout=60)
    log_in(at)
    at.query_params["projector"] = "1"
    at.run()
    press(at, "forward")
    assert not at.exception and "projector" in at.query_params
    press(at, "leave", 2)
    assert "projector" not in at.query_params
    assert not at.exception
