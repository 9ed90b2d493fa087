"""The home page's three doors and the instructor's key form, under AppTest."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.support.apptest import APP, app_env


def _home() -> AppTest:
    return AppTest.from_file(APP, default_timeout=20).run()


def test_three_doors(app_env):
    at = _home()
    assert not at.exception
    headers = [h.value for h in at.header]
    assert headers == ["I'm a student", "I'm teaching", "Learn on my own"]
    links = [link.proto.label or link.proto.page for link in at.get("page_link")]
    for title in ("Instructor login", "Randomized response", "The class exercise",
                  "Likelihood lab", "Local vs central", "Local, shuffle, federated, central",
                  "Histogram lab", "The averaging attack", "Manipulation lab", "Audit lab"):
        assert any(title in str(link) for link in links), title


def test_the_student_door_is_a_form_to_the_phone_page(app_env):
    """The code box is a plain GET form to /join: the phone page is not a Streamlit page
    (/join?code=... redirects to /join/CODE; tests/test_phone_routes.py checks that)."""
    at = _home()
    html = " ".join(h.proto.body for h in at.get("html"))
    assert '<form action="/join" method="get"' in html
    assert 'name="code"' in html and "Join code" in html


def test_dashboard_is_not_in_the_navigation_without_the_key(app_env):
    at = _home()
    links = " ".join(str(link.proto.page) for link in at.get("page_link"))
    assert "dashboard" not in links


def test_the_teaching_door_offers_the_cs208_lecture_beside_the_exercise(app_env):
    at = _home()
    text = " ".join(m.value for m in at.markdown)
    assert "vanilla-or-chocolate exercise live in one click" in text
    assert "**The local model \\(CS208\\)**" in text and "lesson plan" in text
