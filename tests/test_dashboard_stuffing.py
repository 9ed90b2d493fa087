"""The words of the stuffing check on the dashboard: a sentence for every way ldp_core's
checks can fire, and, at the desk, what the check can and cannot see for each kind of
question (never on the projector)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import ldp_core
from classroom.domain import CLASS_EXERCISE
from tests.support.apptest import app_env
from tests.test_dashboard import assert_clean, dashboard, seed
from ui.dashboard.stuffing import implausible_reports_warning, stuffing_check_help

__all__ = ["app_env"]

#: Every direction a check in ldp_core reports (ldp_core.plausibility's own table for numbers).
DIRECTIONS = ["too_many_yes", "too_few_yes", "too_many_ones", "too_few_ones",
              "option_too_often", "option_too_rarely",
              *ldp_core.plausibility._DIRECTIONS.values()]


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_every_alarm_has_its_own_words(direction):
    q = SimpleNamespace(options=("No", "Yes"))
    check = ldp_core.Plausibility(False, 1e-6, 0.0, ldp_core.ALPHA, direction)
    text = implausible_reports_warning(q, SimpleNamespace(plausibility=check))
    assert text and "a pattern the design cannot produce" not in text
    assert ("a forged report" in text) == direction.startswith("extreme")


@pytest.mark.parametrize(("kind", "params", "says"), [
    ("binary", dict(CLASS_EXERCISE), "everyone truly answering “yes”"),
    ("numeric", {"design": "hybrid", "epsilon": 1.0, "lo": 0, "hi": 12}, "one report further out"),
    ("categorical", {"design": "grr", "d": 3, "epsilon": 1.0}, "each option's count"),
    ("categorical", {"design": "ue", "d": 3, "p": 0.5, "q": 0.25}, "about 3 times in 10,000"),
])
def test_the_help_says_what_each_check_compares_and_what_none_can_see(kind, params, says):
    options = ("hours",) if kind == "numeric" else ("a", "b", "c")[: 2 if kind == "binary" else 3]
    q = SimpleNamespace(kind=kind, design=_design(kind, params), options=options)
    text = stuffing_check_help(q)
    assert says in text and "stealthy stuffing" in text


def _design(kind, params):
    if kind == "numeric":
        return ldp_core.numeric_design_from_params(params)
    if kind == "binary":
        return ldp_core.binary_design_from_params(params)
    return ldp_core.categorical_oracle_from_params(params)


def test_the_desk_shows_the_help_and_the_projector_does_not(app_env):
    poll, q = seed(app_env, dict(CLASS_EXERCISE), 20, 40)
    desk = dashboard(query={"pid": str(poll.id), "qid": str(q.id)})
    assert_clean(desk)
    (help_box,) = [e for e in desk.expander
                   if e.label == "What the stuffing check can and cannot see"]
    assert "everyone truly answering “yes”" in help_box.markdown[0].value
    projector = dashboard(query={"projector": "1", "pid": str(poll.id), "qid": str(q.id)})
    assert_clean(projector)
    assert not [e for e in projector.expander
                if e.label == "What the stuffing check can and cannot see"]
