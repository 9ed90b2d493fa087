"""The student page under AppTest: join, vote through the component, receipts, refusals.

The v2 vote component appears to AppTest as a ``bidi_component`` element; a tap
is simulated by sending its trigger widget state, exactly what the browser
sends (see ``tests/support/apptest.py``).
"""

from __future__ import annotations

import pytest

from tests.support.apptest import app_env, student_app, tap_vote  # noqa: F401 (fixture)

EXERCISE = {"design": "die", "faces": 4, "truthful": 3}


def _poll(svc, *, mode="device", text="Vanilla (1) or chocolate (0)?", open_=True):
    poll = svc.create_poll("CS208")
    q = svc.add_question(poll.id, text, options=("Chocolate", "Vanilla"),
                         design_params=EXERCISE, mode=mode)
    if open_:
        svc.open_question(q.id)
    return poll, q


def _texts(at) -> str:
    parts = []
    for kind in ("markdown", "success", "error", "warning", "info", "caption", "title"):
        parts += [str(e.value) for e in at.get(kind)]
    return "\n".join(parts)


def _rows(svc, qid) -> int:
    return svc.estimate(qid).n


def test_join_by_link_shows_the_randomizer(app_env):
    poll, q = _poll(app_env)
    at = student_app(poll.join_code, "device-1")
    assert not at.exception
    comps = at.get("bidi_component")
    assert len(comps) == 1
    assert "Vanilla (1) or chocolate (0)?" in comps[0].proto.json
    # The browser gets integer weights for exact sampling: truth 3, lie 1 of 4.
    assert '"weights": [3, 1, 0, 0]' in comps[0].proto.json


def test_vote_gives_receipt_and_refresh_shows_same_receipt(app_env):
    poll, q = _poll(app_env)
    at = student_app(poll.join_code, "device-1")
    tap_vote(at, answer=1, params=EXERCISE, submission_id="sub-0001-aaaa")
    assert not at.exception
    text = _texts(at)
    assert "Answer received" in text
    assert "You reported:** Vanilla" in text
    assert "ε = 1.10" in text and "25%" in text and "3×" in text
    assert _rows(app_env, q.id) == 1
    # A refresh (a new session, same cookie) shows the receipt and stores nothing.
    again = student_app(poll.join_code, "device-1")
    assert "Your answer was received" in _texts(again)
    assert not again.get("bidi_component")
    assert _rows(app_env, q.id) == 1


def test_double_tap_and_second_tab_store_one_report(app_env):
    poll, q = _poll(app_env)
    first = student_app(poll.join_code, "device-1")
    second = student_app(poll.join_code, "device-1")  # a second tab, same cookie
    tap_vote(first, answer=0, params=EXERCISE, submission_id="sub-0001-aaaa")
    tap_vote(second, answer=1, params=EXERCISE, submission_id="sub-0002-bbbb")
    assert "Your answer was received" in _texts(second)  # the receipt, not a second vote
    assert _rows(app_env, q.id) == 1
    assert app_env.estimate(q.id).counts == (1, 0)  # the first report stands


@pytest.mark.parametrize("code, words", [
    ("ZZZZZZ", "check the code on the projector"),
    ("no such code!", "check the code on the projector"),
    ("", "check the code on the projector"),
])
def test_unknown_or_malformed_code_is_friendly(app_env, code, words):
    at = student_app(code, "device-1")
    assert not at.exception
    assert words in _texts(at).lower()
    assert at.get("text_input")  # the join form is offered again


def test_code_typed_loosely_still_joins(app_env):
    poll, _ = _poll(app_env)
    loose = " " + poll.join_code.lower()[:3] + " " + poll.join_code.lower()[3:] + " "
    at = student_app(loose, "device-1")
    assert not at.exception
    assert at.get("bidi_component")


def test_guessing_codes_is_slowed_down(app_env):
    at = student_app("ZZZZZ2", "device-1")
    for _ in range(6):
        at.query_params["poll"] = "ZZZZZ2"
        at.run()
    assert "Too many codes" in _texts(at)


def test_closed_question_shows_closed_and_no_randomizer(app_env):
    poll, q = _poll(app_env)
    app_env.close_question(q.id)
    at = student_app(poll.join_code, "device-1")
    assert "Voting closed" in _texts(at)
    assert not at.get("bidi_component")


def test_question_closed_while_on_page_writes_nothing(app_env):
    poll, q = _poll(app_env)
    at = student_app(poll.join_code, "device-1")
    app_env.close_question(q.id)
    tap_vote(at, answer=1, params=EXERCISE, submission_id="sub-0001-aaaa")
    assert "Voting closed" in _texts(at)
    assert _rows(app_env, q.id) == 0


@pytest.mark.parametrize("payload", [
    {"answer": 1, "params": EXERCISE},  # missing submission id
    {"answer": 1, "params": EXERCISE, "submission_id": "sub-0001-aaaa", "truth": 1},
    {"answer": 1, "params": EXERCISE, "submission_id": "x" * 10_000},
    {"answer": 7, "params": EXERCISE, "submission_id": "sub-0001-aaaa"},
    {"answer": 1, "params": {"design": "die", "faces": 4, "truthful": 2},
     "submission_id": "sub-0001-aaaa"},
    "not a dict",
])
def test_malformed_or_foreign_payloads_write_nothing(app_env, payload):
    poll, q = _poll(app_env)
    at = student_app(poll.join_code, "device-1")
    tap_vote(at, raw=payload)
    assert not at.exception
    assert at.get("error"), "a refusal must say what went wrong"
    assert _rows(app_env, q.id) == 0


def test_physical_mode_asks_only_for_the_report(app_env):
    poll, q = _poll(app_env, mode="physical")
    at = student_app(poll.join_code, "device-1")
    labels = [b.label for b in at.button]
    assert labels == ["I report: Vanilla", "I report: Chocolate"]
    assert "roll a 4-sided die" in _texts(at)
    assert "true" not in " ".join(labels).lower()
    next(b for b in at.button if b.label == "I report: Chocolate").click().run()
    assert "Answer received" in _texts(at)
    assert app_env.estimate(q.id).counts == (1, 0)


def test_no_cookie_means_no_vote(app_env):
    poll, _ = _poll(app_env)
    at = student_app(poll.join_code, None)
    assert "cookie" in _texts(at).lower()
    assert not at.get("bidi_component")


def test_waiting_page_before_any_question(app_env):
    poll = app_env.create_poll("empty")
    at = student_app(poll.join_code, "device-1")
    assert "No question is open yet" in _texts(at)


def test_results_appear_on_the_phone_only_after_reveal(app_env):
    poll, q = _poll(app_env)
    at = student_app(poll.join_code, "device-1")
    tap_vote(at, answer=1, params=EXERCISE, submission_id="sub-0001-aaaa")
    assert "Class results" not in _texts(at)
    app_env.set_revealed(q.id, True)
    at = student_app(poll.join_code, "device-1")
    assert "Class results" in _texts(at)
    assert "nan" not in _texts(at).lower()


def test_question_text_is_shown_as_text_not_markup(app_env):
    poll, q = _poll(app_env, mode="physical", text="**Bold** <b>tag</b> [link](http://x)")
    at = student_app(poll.join_code, "device-1")
    shown = [m.value for m in at.markdown if "Bold" in m.value][0]
    assert shown.startswith("### \\*\\*Bold\\*\\* \\<b\\>tag")


def test_spent_epsilon_adds_up_over_questions(app_env):
    poll, q1 = _poll(app_env)
    at = student_app(poll.join_code, "device-1")
    tap_vote(at, answer=1, params=EXERCISE, submission_id="sub-0001-aaaa")
    assert "ε = 1.10 (the ε" in _texts(at)
    q2 = app_env.add_question(poll.id, "Coffee or tea?", options=("Tea", "Coffee"),
                              design_params=EXERCISE)
    app_env.open_question(q2.id)
    at = student_app(poll.join_code, "device-1")
    tap_vote(at, answer=0, params=EXERCISE, submission_id="sub-0002-bbbb")
    assert "ε = 2.20 (the ε" in _texts(at)
