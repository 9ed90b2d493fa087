"""The default page: three doors, and the student's view when the link carries ?poll=CODE."""

from __future__ import annotations

import streamlit as st

from ui import nav


def render() -> None:
    if "poll" in st.query_params:
        from pages import student

        student.render_poll(st.query_params["poll"])
        return
    st.title("LDP classroom")
    st.markdown("**Local differential privacy, learned by doing it.**")
    st.write("Answer a sensitive question with randomized response: your phone adds the "
             "noise, so your true answer never leaves your hands. The class still learns "
             "what it wanted to know.")
    student_door, teacher_door, study_door = st.columns(3, gap="medium")
    with student_door.container(border=True):
        st.header("I'm a student", anchor=False)
        from pages import student

        student.join_form()
    with teacher_door.container(border=True):
        st.header("I'm teaching", anchor=False)
        st.write("Run the vanilla-or-chocolate exercise live and project the results.")
        st.page_link(nav.teach_page(), label="Instructor login", icon=":material/key:")
    with study_door.container(border=True):
        st.header("Learn on my own", anchor=False)
        st.write("Explore the ideas at your own pace: no class needed.")
        for page in nav.study_pages():
            st.page_link(page)
