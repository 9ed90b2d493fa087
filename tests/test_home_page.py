"""The home page's three doors and the instructor's key form, under AppTest."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.support.apptest import APP, app_env  # noqa: F401 (fixture)


def _home() -> AppTest:
    return AppTest.from_file(APP, default_timeout=20).run()


def test_three_doors(app_env):
    at = _home()
    assert not at.exception
    headers = [h.value for h in at.header]
    assert headers == ["I'm a student", "I'm teaching", "Learn on my own"]
    links = [link.proto.label or link.proto.page for link in at.get("page_link")]
    for title in ("Instructor login", "Randomized response", "The class exercise",
                  "Likelihood lab", "Local vs central", "Histogram lab"):
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


def test_instructor_key_form(app_env):
    form = AppTest.from_string("from pages import teach\nteach.render()",
                               default_timeout=20).run()
    form.text_input[0].input("wrong")
    form.button[0].click().run()
    assert "not right" in form.error[0].value
    assert "_ldp_instructor" not in form.session_state
    form.text_input[0].input("test-instructor-key")
    form.button[0].click().run()
    assert form.session_state["_ldp_instructor"] is True
    assert "logged in as the instructor" in form.success[0].value


def test_key_in_the_address_logs_in_and_leaves_the_address(app_env):
    at = AppTest.from_string("from pages import teach\nteach.render()", default_timeout=20)
    at.query_params["key"] = "test-instructor-key"
    at.run()
    assert "key" not in at.query_params
    assert at.session_state["_ldp_instructor"] is True
