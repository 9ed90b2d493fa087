"""The dashboard's lesson plans under AppTest: the CS208 lecture beside the class exercise,
the plan editor (add, edit, reorder, remove, name, budget), save, export, import (good and
bad) and starting a class, each checked against the database."""

from __future__ import annotations

import math
import re

import pytest
import tomli_w
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from classroom.plans import CS208_PLAN, LessonPlan, PlanQuestion, dumps, loads, shipped_plan
from tests.support.apptest import app_env, log_in

SCRIPT = """
from views import dashboard
dashboard.render()
"""
LN3 = math.log(3)


def dashboard(*, instructor: bool = True) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=60)
    if instructor:
        log_in(at)
    return at.run()


def clean(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def unescaped(markdown: str) -> str:
    """Markdown as the reader sees it: without the escapes of ui.text.plain."""
    return re.sub(r"\\(.)", r"\1", markdown)


def errors(at: AppTest) -> list[str]:
    return [unescaped(e.value) for e in at.error]


def successes(at: AppTest) -> list[str]:
    return [s.value for s in at.success]


def row_texts(at: AppTest) -> list[str]:
    """The question rows of the plan on screen, their texts only."""
    return [m.value.split("  \n")[0].split("** ", 1)[1].replace("\\", "")
            for m in at.markdown if m.value.startswith("**") and "** " in m.value
            and m.value.split("**")[1].rstrip(".").isdigit()]


@pytest.fixture
def downloads(monkeypatch):
    """Every file the page offers for download, by its media URL's id."""
    files: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def keep(self, data, mimetype, kind, filename=None):
        file_id = original(self, data, mimetype, kind, filename)
        files[file_id] = data if isinstance(data, bytes) else data.encode()
        return file_id

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", keep)
    return files


def downloaded(at: AppTest, files: dict[str, bytes], key: str) -> str:
    button = at.get("download_button")
    url = next(b.proto.url for b in button if b.proto.id.endswith(key))
    return files[url.rsplit("/", 1)[1].split(".")[0]].decode()


# -- one click -----------------------------------------------------------------------------


def test_the_cs208_lecture_starts_in_one_click_beside_the_class_exercise(app_env):
    at = clean(dashboard())
    assert at.button(key="dash_start_exercise").label == "Start the class exercise"
    listed = " ".join(m.value for m in at.markdown)
    assert "The local model \\(CS208\\)" in listed and "Is your occupation Sales?" in listed
    at.button(key="dash_start_cs208").click().run()
    clean(at)
    (poll,) = app_env.polls.list_polls()
    assert poll.title == "The local model (CS208)" and poll.epsilon_budget == 7.7
    questions = app_env.polls.questions(poll.id)
    assert [q.text for q in questions] == [q.text for q in shipped_plan(CS208_PLAN).questions]
    assert all(q.state == "draft" for q in questions)
    assert any(f"Poll {poll.join_code} is ready" in s and "6 questions as drafts" in s
               and "ε = 7.70" in s for s in successes(at))
    assert at.selectbox(key="dash_question_select").value == questions[0].id
    assert not at.button(key="dash_voting").disabled  # Open voting, on Q1


def test_a_student_cannot_start_a_lecture(app_env):
    at = clean(dashboard(instructor=False))
    assert not [b for b in at.button if b.key in ("dash_start_cs208", "dash_plan_start")]
    assert app_env.polls.list_polls() == []


def test_start_a_rehearsal_class_from_the_panel(app_env):
    at = clean(dashboard())
    assert at.selectbox(key="dash_plan_pick").value == f"shipped:{CS208_PLAN}"
    at.checkbox(key="dash_plan_rehearsal").check().run()
    at.button(key="dash_plan_start").click().run()
    clean(at)
    (poll,) = app_env.polls.list_polls()
    assert poll.rehearsal and len(app_env.polls.questions(poll.id)) == 6


# -- the editor ----------------------------------------------------------------------------


def test_edit_reorder_remove_and_save_a_copy(app_env):
    at = clean(dashboard())
    cs208 = [q.text for q in shipped_plan(CS208_PLAN).questions]
    assert row_texts(at) == cs208
    at.button(key="dash_plan_down_0").click().run()
    assert row_texts(clean(at))[:2] == [cs208[1], cs208[0]]
    at.button(key="dash_plan_up_5").click().run()
    assert row_texts(clean(at))[4:] == [cs208[5], cs208[4]]
    at.button(key="dash_plan_remove_5").click().run()
    assert len(row_texts(clean(at))) == 5
    # Edit question 1: its text and a countdown.
    at.button(key="dash_plan_edit_0").click().run()
    assert at.text_area(key="dash_plan_ed_text").value == cs208[1]
    at.text_area(key="dash_plan_ed_text").set_value("Chocolate or vanilla, with coins?")
    at.checkbox(key="dash_plan_ed_countdown_on").check()
    at.number_input(key="dash_plan_ed_countdown").set_value(45)
    at.run()
    at.button(key="dash_plan_apply").click().run()
    clean(at)
    assert row_texts(at)[0] == "Chocolate or vanilla, with coins?"
    assert any("Unsaved changes" in c.value for c in at.caption)
    at.button(key="dash_plan_save").click().run()
    clean(at)
    (saved,) = app_env.plans.list_plans()
    plan = saved.plan()
    assert [q.text for q in plan.questions] == \
        ["Chocolate or vanilla, with coins?", cs208[0], cs208[2], cs208[3], cs208[5]]
    assert plan.questions[0].countdown_s == 45 and plan.budget == 7.7
    assert at.selectbox(key="dash_plan_pick").value == f"saved:{saved.id}"
    assert any("saved" in s for s in successes(at))
    # The shipped plan itself is untouched.
    assert shipped_plan(CS208_PLAN).questions[0].text == cs208[0]


def test_a_button_of_a_question_removed_in_the_same_run_changes_nothing_and_says_so(app_env):
    """Two clicks in one run (as a crafted browser message can send): the first removes
    question 5, the buttons of question 6 then point past the end of the plan."""
    at = clean(dashboard())
    cs208 = [q.text for q in shipped_plan(CS208_PLAN).questions]
    for second in ("dash_plan_up_5", "dash_plan_remove_5"):
        at.button(key="dash_plan_remove_4").click()
        at.button(key=second).click()
        at.run()
        clean(at)
        assert row_texts(at) == cs208[:4] + cs208[5:6], second
        assert any("no longer in the plan" in w.value for w in at.warning), second
        at.button(key="dash_plan_revert").click().run()
        assert row_texts(clean(at)) == cs208


def test_add_a_categorical_question_and_fix_the_budget(app_env):
    at = clean(dashboard())
    at.selectbox(key="dash_plan_pick").set_value("new").run()
    assert "a plan needs at least one question" in " ".join(w.value for w in clean(at).warning)
    assert at.button(key="dash_plan_start").disabled
    at.button(key="dash_plan_add").click().run()
    at.text_area(key="dash_plan_ed_text").set_value("Tea, coffee or water?")
    at.radio(key="dash_plan_ed_kind").set_value("categorical").run()
    at.text_area(key="dash_plan_ed_options").set_value("Tea\nCoffee\nWater")
    at.selectbox(key="dash_plan_ed_design").set_value("grr").run()
    at.number_input(key="dash_plan_ed_p_epsilon").set_value(2.0).run()
    clean(at)
    assert any("GRR over 3 options, ε = 2.00" in c.value for c in at.caption)
    at.button(key="dash_plan_apply").click().run()
    assert row_texts(clean(at)) == ["Tea, coffee or water?"]
    # A budget too small for it blocks starting and saving, and says why.
    at.checkbox(key="dash_plan_f_new_budget_on").check().run()
    at.number_input(key="dash_plan_f_new_budget").set_value(1.5).run()
    clean(at)
    warning = " ".join(w.value for w in at.warning)
    assert "budget: ε = 1.5 does not cover the plan" in warning and "at least 2.00" in warning
    assert at.button(key="dash_plan_start").disabled and at.button(key="dash_plan_save").disabled
    at.number_input(key="dash_plan_f_new_budget").set_value(2.0).run()
    at.text_input(key="dash_plan_f_new_title").set_value("Drinks").run()
    assert not clean(at).button(key="dash_plan_start").disabled
    at.button(key="dash_plan_start").click().run()
    clean(at)
    (poll,) = app_env.polls.list_polls()
    (q,) = app_env.polls.questions(poll.id)
    assert (poll.title, poll.epsilon_budget) == ("Drinks", 2.0)
    assert (q.kind, q.options, q.design_params) == \
        ("categorical", ("Tea", "Coffee", "Water"), {"design": "grr", "d": 3, "epsilon": 2.0})


def test_the_editor_names_what_is_wrong_and_adds_nothing(app_env):
    at = clean(dashboard())
    at.button(key="dash_plan_add").click().run()
    at.text_area(key="dash_plan_ed_text").set_value("")
    at.selectbox(key="dash_plan_ed_design").set_value("warner").run()
    at.number_input(key="dash_plan_ed_p_p").set_value(0.5).run()
    clean(at)
    shown = " ".join(errors(at))
    assert "text: must not be empty" in shown and "design.p: must differ from 1/2" in shown
    assert at.button(key="dash_plan_apply").disabled
    assert len(row_texts(at)) == 6


def test_a_numeric_question_shows_the_recommended_mechanism(app_env):
    at = clean(dashboard())
    at.button(key="dash_plan_add").click().run()
    at.radio(key="dash_plan_ed_kind").set_value("numeric").run()
    at.selectbox(key="dash_plan_ed_design").set_value("laplace").run()
    at.number_input(key="dash_plan_ed_p_epsilon").set_value(LN3).run()
    clean(at)
    caption = " ".join(c.value for c in at.caption)
    assert "local Laplace on [0, 10], ε = 1.10" in caption
    assert "local Laplace on [0, 10], ε = 1.10 · ε" not in caption
    assert "ldp_core recommends the Hybrid Mechanism (Wang et al.) at this ε" in caption


def test_undo_edits_goes_back_to_the_plan_as_it_was(app_env):
    at = clean(dashboard())
    at.button(key="dash_plan_remove_0").click().run()
    assert len(row_texts(clean(at))) == 5
    at.button(key="dash_plan_revert").click().run()
    assert len(row_texts(clean(at))) == 6


# -- export and import ---------------------------------------------------------------------


def test_export_downloads_the_plan_file(app_env, downloads):
    at = clean(dashboard())
    text = downloaded(at, downloads, "dash_plan_export")
    assert text == dumps(shipped_plan(CS208_PLAN))
    assert loads(text) == shipped_plan(CS208_PLAN)


def test_import_a_good_file(app_env):
    plan = LessonPlan(title="Shared by a colleague", budget=3.0, questions=(
        PlanQuestion.build(text="Tea or coffee?", kind="binary", options=("Tea", "Coffee"),
                           design_params={"design": "two_coin"}, countdown_s=30),))
    at = clean(dashboard())
    at.file_uploader(key="dash_plan_upload_0").upload(
        "colleague.toml", dumps(plan).encode(), "application/toml").run()
    clean(at)
    (saved,) = app_env.plans.list_plans()
    assert saved.plan() == plan
    assert at.selectbox(key="dash_plan_pick").value == f"saved:{saved.id}"
    assert row_texts(at) == ["Tea or coffee?"]
    assert "Imported “Shared by a colleague” (1 question) from colleague.toml." in \
        successes(at)


def test_a_plan_with_a_large_budget_shows_it(app_env):
    """No input bound of its own refuses what a plan file may say (ε = 150 here)."""
    plan = LessonPlan(title="Generous", budget=150.0, questions=(
        PlanQuestion.build(text="Tea or coffee?", kind="binary", options=("Tea", "Coffee"),
                           design_params={"design": "two_coin"}),))
    saved = app_env.plans.save_plan(plan)
    at = clean(dashboard())
    at.selectbox(key="dash_plan_pick").set_value(f"saved:{saved.id}").run()
    clean(at)
    assert at.number_input(key=f"dash_plan_f_saved:{saved.id}_budget").value == 150.0


@pytest.mark.parametrize(("content", "expected"), [
    (b"title = \n", "the file is not valid TOML: Invalid value (at line 1, column 9)"),
    (tomli_w.dumps({"title": "X", "questions": [{"text": "Q?", "kind": "binary",
                                                 "options": ["No", "Yes"],
                                                 "design": {"design": "coin"}}]}).encode(),
     "line 12, questions[1].design: unknown binary design 'coin'"),
    (dumps(shipped_plan(CS208_PLAN)).replace("budget = 7.7", "budget = 2.0").encode(),
     "line 6, budget: ε = 2 does not cover the plan"),
    (b"#" * (200 * 1024), "the file is 200 KB; a lesson plan may be at most 128 KB"),
], ids=["malformed", "unknown design", "budget", "too large"])
def test_import_a_bad_file_says_why_and_saves_nothing(app_env, content, expected):
    at = clean(dashboard())
    at.file_uploader(key="dash_plan_upload_0").upload("bad.toml", content,
                                                      "application/toml").run()
    clean(at)
    shown = " ".join(errors(at))
    assert "**bad.toml was not imported** (nothing was saved)" in shown
    assert f"- {expected}" in shown
    assert app_env.plans.list_plans() == [] and app_env.polls.list_polls() == []
    # The next action clears the refusal: it does not stay beside what came after.
    at.text_input(key="dash_new_poll_title").set_value("after the refusal").run()
    assert "was not imported" not in " ".join(errors(clean(at)))


def test_delete_a_saved_plan_needs_the_box(app_env):
    saved = app_env.plans.save_plan(shipped_plan(CS208_PLAN))
    at = clean(dashboard())
    at.selectbox(key="dash_plan_pick").set_value(f"saved:{saved.id}").run()
    at.button(key="dash_plan_delete").click().run()
    assert any("Tick the box" in w.value for w in clean(at).warning)
    assert len(app_env.plans.list_plans()) == 1
    at.checkbox(key=f"dash_plan_confirm_delete_saved:{saved.id}").check().run()
    at.button(key="dash_plan_delete").click().run()
    clean(at)
    assert app_env.plans.list_plans() == []
    assert at.selectbox(key="dash_plan_pick").value == f"shipped:{CS208_PLAN}"
