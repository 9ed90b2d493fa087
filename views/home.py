"""The default page: three doors. Students go on to the phone page (``/join``)."""

from __future__ import annotations

import streamlit as st

from classroom.domain import ClassroomError
from classroom.plans import CS208_PLAN, shipped_plan
from ui.text import plain

#: A plain HTML form: the code goes to the phone page, which is not a Streamlit page.
_JOIN_FORM = """
<form action="/join" method="get" class="ldp-join">
  <label for="ldp-join-code">Join code</label>
  <input id="ldp-join-code" name="code" maxlength="16" placeholder="e.g. K7QM2P"
         autocomplete="off" autocapitalize="characters" required>
  <button type="submit">Join</button>
</form>
<style>
  .ldp-join { display: grid; gap: .4rem; }
  .ldp-join input { font-size: 1.1rem; padding: .5rem .6rem; border: 1px solid #94a3b8;
                    border-radius: .5rem; }
  .ldp-join button { font-size: 1.1rem; padding: .55rem; border: 0; border-radius: .5rem;
                     background: #1f3a8a; color: #fff; cursor: pointer; }
  .ldp-join button:focus-visible, .ldp-join input:focus-visible { outline: 3px solid #f59e0b; }
</style>
"""


def _lecture() -> str:
    """": **The local model (CS208)**, from …": the lecture the app ships as a plan."""
    try:
        title = shipped_plan(CS208_PLAN).title
    except ClassroomError:  # the page stays up; the dashboard says what is wrong
        return ""
    return f": **{plain(title)}**, from the class exercise to unary encoding"


def render(*, teach: st.Page, study: list[st.Page]) -> None:
    """The home page; ``teach`` and ``study`` are the pages its doors link to."""
    st.title("LDP classroom")
    st.markdown("**Local differential privacy, learned by doing it.**")
    st.write("Answer a sensitive question with randomized response: your phone adds the "
             "noise, so your true answer never leaves your hands. The class still learns "
             "what it wanted to know.")
    student_door, teacher_door, study_door = st.columns(3, gap="medium")
    with student_door.container(border=True):
        st.header("I'm a student", anchor=False)
        st.write("Type the code on the projector, or scan its QR code with your phone.")
        st.html(_JOIN_FORM)
    with teacher_door.container(border=True):
        st.header("I'm teaching", anchor=False)
        st.write("Run the vanilla-or-chocolate exercise live in one click and project the "
                 f"results, or a whole lecture from its lesson plan{_lecture()}, ready to "
                 "open question by question.")
        st.page_link(teach, label="Instructor login", icon=":material/key:")
    with study_door.container(border=True):
        st.header("Learn on my own", anchor=False)
        st.write("Explore the ideas at your own pace: no class needed.")
        for page in study:
            st.page_link(page)
