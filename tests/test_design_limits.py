"""No question can take down its poll: every design is finite and within the documented limits
(``EPSILON_RANGE``, ``MAX_NUMERIC_BOUND``, ``MIN_NUMERIC_SPAN``) at each entry (the service,
the store), and a question stored before those checks, which cannot be drawn, leaves the
rest of the poll's phone API answering (the instructor sees why on the dashboard).

Hypothesis feeds design parameters through the service and the phone API: no answer is a
500, and no body holds a float JSON does not have (NaN, ±Infinity)."""

from __future__ import annotations

import json
import logging
import math
import secrets

import numpy as np
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.testclient import TestClient

from classroom import kinds
from classroom.domain import (
    EPSILON_RANGE,
    MAX_NUMERIC_BOUND,
    BadInput,
    check_stored_design,
    design_problem,
)
from classroom.service import PollService
from classroom.store import Store, questions, rounds
from phone.routes import PhoneApi, make_routes
from tests.conftest import DIE
from tests.support.apptest import app_env, log_in
from tests.support.web import local_middleware

ORIGIN = "http://testserver"
SLEEP = {"design": "hybrid", "epsilon": 1.0, "lo": 0, "hi": 12}

#: Designs ldp_core accepts that no question may have, each with the words of its refusal.
OUTSIDE = [
    ("numeric", {"design": "laplace", "epsilon": 1.0, "lo": -1e308, "hi": 1e308},
     "lo must be within ±1,000,000,000"),
    ("numeric", {"design": "hybrid", "epsilon": 1.0, "lo": -1e300, "hi": 1e300},
     "lo must be within ±1,000,000,000"),
    ("numeric", {"design": "hybrid", "epsilon": 1.0, "lo": 0, "hi": 1e-300},
     "hi must exceed lo by at least 0.001"),
    ("numeric", {"design": "piecewise", "epsilon": 10.0, "lo": 0, "hi": 12},
     "epsilon must be in [0.01, 5]"),
    ("numeric", {"design": "duchi", "epsilon": 0.005, "lo": 0, "hi": 12},
     "epsilon must be in [0.01, 5]"),
    ("binary", {"design": "warner", "p": 1.0}, "this design gives ε = ∞"),
    ("binary", {"design": "forced", "p_truth": 0.5, "p_yes": 0.0}, "this design gives ε = ∞"),
    ("binary", {"design": "epsilon", "epsilon": 20.0}, "epsilon must be in [0.01, 5]"),
    # ε = ln 2, but the phone's integer weights cannot hold a subnormal probability.
    ("binary", {"design": "forced", "p_truth": 2.2e-311, "p_yes": 2.2e-311},
     "p_truth must be 0, 1 or between 1e-09"),
    ("binary", {"design": "gamma", "gamma": 0.499}, "this design gives ε = 6.9"),
    ("categorical", {"design": "grr", "d": 3, "epsilon": 50.0}, "epsilon must be in [0.01, 5]"),
    ("categorical", {"design": "ue", "d": 3, "p": 0.99, "q": 0.01}, "this design gives ε = 9.1"),
    ("multiselect", {"design": "survey", "mode": "split", "budget": 10.0, "d": 3},
     "this design gives ε = 10"),
]
OPTIONS = {"numeric": ("hours",), "binary": ("No", "Yes"), "categorical": ("a", "b", "c"),
           "multiselect": ("Python", "R", "Julia")}


@pytest.fixture
def svc(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'c.db'}")
    yield PollService.on(store)
    store.close()


@pytest.fixture
def client(svc):
    app = Starlette(routes=make_routes(PhoneApi(lambda: svc, ttl=0.0)),
                    middleware=local_middleware())
    with TestClient(app, follow_redirects=False, raise_server_exceptions=False) as c:
        c.get("/join", headers={"accept": "text/html"})  # the device cookie
        yield c


def strict_json(text: str) -> object:
    """JSON as the standard has it: NaN and ±Infinity are refused."""
    def refuse(name: str) -> object:
        raise AssertionError(f"non-JSON number {name} in {text[:200]}")
    return json.loads(text, parse_constant=refuse)


def test_the_limits_are_documented_where_plans_are():
    assert EPSILON_RANGE == (0.01, 5.0) and MAX_NUMERIC_BOUND == 1e9
    for kind in kinds.REGISTRY.values():  # every kind's example is within them
        assert kind.out_of_limits(kind.build(dict(kind.example_params))) is None


@pytest.mark.parametrize(("kind", "params", "message"), OUTSIDE)
def test_the_service_refuses_a_design_outside_the_limits(svc, kind, params, message):
    poll = svc.polls.create_poll("t")
    with pytest.raises(BadInput, match=message.replace("[", r"\[").replace("(", r"\(")):
        svc.polls.add_question(poll.id, "Q?", kind=kind, options=OPTIONS[kind],
                               design_params=params)
    good = dict(kinds.kind(kind).example_params)
    q = svc.polls.add_question(poll.id, "Q?", kind=kind, options=OPTIONS[kind],
                               design_params=good)
    with pytest.raises(BadInput, match="design parameters"):
        svc.polls.set_design(q.id, params)
    with pytest.raises(BadInput, match="design parameters"):
        svc.running.new_round(q.id, params)
    assert svc.polls.question(q.id).design_params == svc.polls.question(q.id).design.params()


@pytest.mark.parametrize(("kind", "params", "message"), OUTSIDE)
def test_the_store_refuses_a_design_outside_the_limits(kind, params, message):
    text = json.dumps({**params, "kind": kind})
    assert message in (design_problem(text) or "")
    with pytest.raises(BadInput, match="design parameters"):
        check_stored_design(text)


def test_the_store_itself_refuses_to_write_one(svc):
    poll = svc.polls.create_poll("t")
    bad = json.dumps({"design": "warner", "p": 1.0, "kind": "binary"})
    with pytest.raises(BadInput, match="ε = ∞"), svc.store.poll_unit(poll_id=poll.id) as unit:
        unit.add_question(position=None, text="Q?", kind="binary", options_json='["a","b"]',
                          design_json=bad, mode="device", salt=b"\0" * 16,
                          now=svc.running.now())
    assert svc.polls.questions(poll.id) == []


def _store_as_before_the_checks(svc, question_id: int, kind: str, params: dict) -> None:
    """Write a design no entry accepts any more, as a database from before the checks
    holds it."""
    text = json.dumps({**params, "kind": kind}, sort_keys=True)
    with svc.store.transaction(write=True) as conn:
        conn.execute(sa.update(questions).where(questions.c.id == question_id)
                     .values(design_params=text))
        conn.execute(sa.update(rounds).where(rounds.c.question_id == question_id)
                     .values(design_params=text))


@pytest.mark.parametrize(("kind", "params"), [(k, p) for k, p, _ in OUTSIDE[:3]]
                         + [("binary", {"design": "warner", "p": 1.0})])
def test_a_poll_with_a_question_that_cannot_be_drawn_still_answers_its_phones(
        svc, client, caplog, kind, params):
    poll = svc.polls.create_poll("t")
    good = svc.polls.add_question(poll.id, "Good?", options=("No", "Yes"), design_params=DIE)
    bad = svc.polls.add_question(poll.id, "Bad?", kind=kind, options=OPTIONS[kind],
                                 design_params=SLEEP if kind == "numeric" else DIE)
    _store_as_before_the_checks(svc, bad.id, kind, params)
    svc.running.open_question(bad.id)
    with caplog.at_level(logging.ERROR, logger="phone.state"):
        r = client.get(f"/api/poll/{poll.join_code}")
    assert r.status_code == 200, r.text
    body = strict_json(r.text)
    assert isinstance(body, dict) and body["question"] is None  # the phones wait
    assert f"question {bad.id} cannot be shown on the phones" in caplog.text
    assert client.get(f"/api/poll/{poll.join_code}/me").status_code == 200
    report = client.post(f"/api/poll/{poll.join_code}/report", headers={"origin": ORIGIN},
                         json={"question_id": bad.id, "answer": 1, "params": params,
                               "submission_id": "sid-00000001"})
    assert report.status_code < 500, report.text
    strict_json(report.text)
    # The next question is drawn again.
    opened = svc.running.open_question(good.id)
    r = client.get(f"/api/poll/{poll.join_code}")
    assert r.status_code == 200 and strict_json(r.text)["question"]["id"] == opened.id
    assert design_problem(svc.polls.question(bad.id).design_json) is not None


# -- fuzzing ----------------------------------------------------------------------------------

_numbers = (st.floats(allow_nan=True, allow_infinity=True)
            | st.sampled_from([0.0, -0.0, 5e-324, 1e-300, 0.01, 5.0, 5.000001, 1e9, 1e9 + 1,
                               -1e9, 1e300, 1e308, math.inf, math.nan])
            | st.integers(-10**12, 10**12))


@st.composite
def designs(draw) -> tuple[str, dict]:
    kind = draw(st.sampled_from(("numeric", "binary", "categorical", "multiselect")))
    if kind == "multiselect":
        return kind, {"design": "survey", "mode": draw(st.sampled_from(("split", "sample"))),
                      "budget": draw(_numbers | st.floats(0.0, 12.0)), "d": 3}
    if kind == "numeric":
        lo = draw(_numbers)
        hi = draw(_numbers | st.builds(lambda a, w: a + w, st.just(lo) if isinstance(lo, int)
                                       else st.integers(-100, 100), st.floats(1e-6, 1e4)))
        return kind, {"design": draw(st.sampled_from(kinds.NUMERIC_DESIGNS)),
                      "epsilon": draw(_numbers | st.floats(0.0, 6.0)), "lo": lo, "hi": hi}
    if kind == "binary":
        return kind, draw(st.sampled_from([
            {"design": "warner", "p": draw(_numbers | st.floats(0.0, 1.0))},
            {"design": "epsilon", "epsilon": draw(_numbers | st.floats(0.0, 25.0))},
            {"design": "gamma", "gamma": draw(_numbers | st.floats(0.0, 0.5))},
            {"design": "forced", "p_truth": draw(st.floats(0.0, 1.0)),
             "p_yes": draw(st.floats(0.0, 1.0))}]))
    if draw(st.booleans()):
        return kind, {"design": "grr", "d": 3, "epsilon": draw(_numbers | st.floats(0.0, 60.0))}
    return kind, {"design": "ue", "d": 3, "p": draw(st.floats(0.0, 1.0)),
                  "q": draw(st.floats(0.0, 1.0))}


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(design=designs())
def test_no_design_parameter_makes_the_phone_api_answer_500(svc, client, design):
    kind, params = design
    poll = svc.polls.create_poll("t")
    try:
        q = svc.polls.add_question(poll.id, "Q?", kind=kind, options=OPTIONS[kind],
                                   design_params=params)
    except BadInput as exc:
        assert str(exc) and "Traceback" not in str(exc)
        return
    assert kinds.kind(kind).out_of_limits(q.design) is None
    assert EPSILON_RANGE[0] * 0.999 <= q.epsilon <= EPSILON_RANGE[1] * 1.001
    q = svc.running.open_question(q.id)
    r = client.get(f"/api/poll/{poll.join_code}")
    assert r.status_code == 200, r.text
    shown = strict_json(r.text)["question"]  # type: ignore[index]
    assert shown is not None and shown["id"] == q.id
    qk = kinds.kind(kind)
    truth = q.design.range.mid if kind == "numeric" else qk.example_share
    stored = qk.simulate(q.design, q.options, qk.true_class(q.design, q.options, 3, truth),
                         np.random.default_rng(1))
    stored += qk.stuffed(q.design, q.options, 1, None)
    for answer in stored:
        report = client.post(f"/api/poll/{poll.join_code}/report", headers={"origin": ORIGIN},
                             json={"question_id": q.id, "answer": answer,
                                   "params": q.design_params,
                                   "submission_id": f"sid-{secrets.token_hex(8)}"})
        assert report.status_code < 500, report.text
        strict_json(report.text)
    svc.running.set_revealed(q.id, True)
    r = client.get(f"/api/poll/{poll.join_code}")
    assert r.status_code == 200
    assert strict_json(r.text)["question"]["results"] is not None  # type: ignore[index]


def test_the_dashboard_names_the_question_that_cannot_be_run(app_env):
    from streamlit.testing.v1 import AppTest

    svc = app_env
    poll = svc.polls.create_poll("t")
    q = svc.polls.add_question(poll.id, "Warner?", options=("No", "Yes"), design_params=DIE)
    _store_as_before_the_checks(svc, q.id, "binary", {"design": "warner", "p": 1.0})
    svc.running.open_question(q.id)
    at = AppTest.from_string("from views import dashboard\ndashboard.render()\n",
                             default_timeout=60)
    log_in(at)
    at.run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "This question cannot be run: design parameters: this design gives ε = ∞" in errors


# -- text that reorders itself or shows nothing ------------------------------------------------

@pytest.mark.parametrize("control", ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e",
                                     "\u2066", "\u2067", "\u2068", "\u2069"])
def test_text_direction_controls_are_refused_everywhere_text_is_typed(svc, control):
    from classroom import plans

    poll = svc.polls.create_poll("t")
    with pytest.raises(BadInput, match=f"text-direction control \\(U\\+{ord(control):04X}\\)"):
        svc.polls.add_question(poll.id, f"Do you agree? {control}oN", options=("No", "Yes"),
                               design_params=DIE)
    with pytest.raises(BadInput, match="text-direction control"):
        svc.polls.add_question(poll.id, "Q?", options=("No", f"Yes{control}"),
                               design_params=DIE)
    with pytest.raises(BadInput, match="text-direction control"):
        svc.polls.create_poll(f"CS208 {control}")
    text = plans.dumps(plans.shipped_plan(plans.CS208_PLAN)).replace(
        'title = "', f'title = "{control}', 1)
    with pytest.raises(plans.PlanError, match="title: contains a text-direction control"):
        plans.loads(text)


@pytest.mark.parametrize("blank", ["\u200b", "\u200b\u200c\u200d\u2060\ufeff", "\u3164",
                                   " \u00a0\u2800 ", "\u0301"])
def test_text_of_invisible_characters_only_is_refused(svc, blank):
    from classroom import plans

    poll = svc.polls.create_poll("t")
    with pytest.raises(BadInput, match="only invisible characters"):
        svc.polls.add_question(poll.id, blank, options=("No", "Yes"), design_params=DIE)
    with pytest.raises(BadInput, match="only invisible characters"):
        svc.polls.add_question(poll.id, "Q?", options=(blank, "Yes"), design_params=DIE)
    with pytest.raises(BadInput, match="only invisible characters"):
        svc.polls.create_poll(blank + "x"[:0])
    text = plans.dumps(plans.shipped_plan(plans.CS208_PLAN))
    start = text.index('title = "') + len('title = "')
    text = text[:start] + blank + text[text.index('"', start):]
    with pytest.raises(plans.PlanError, match="title: has only invisible characters"):
        plans.loads(text)
    # A visible letter beside them is text like any other.
    assert svc.polls.add_question(poll.id, f"Q{blank}?", options=("No", "Yes"),
                                  design_params=DIE).text.startswith("Q")
