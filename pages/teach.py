"""The instructor's door: log in with the key, then go to the dashboard."""

from __future__ import annotations

import streamlit as st

from ui import nav, session


def _try_key(key: str) -> None:
    wait = session.wait_before_try("instructor_key")
    if wait > 0:
        st.error(f"Too many wrong keys. Wait {wait:.0f} s before trying again.")
        return
    ok = session.log_in(key)
    session.record_try("instructor_key", ok)
    if ok:
        st.rerun()  # the navigation now includes the dashboard
    st.error("That key is not right. The key is printed in the terminal where the app "
             "was started, in the line that begins with \"Instructor login URL\".")


def render() -> None:
    st.title("I'm teaching")
    linked_key = st.query_params.get("key")
    if linked_key is not None:
        del st.query_params["key"]  # never leave the key in the address bar
        if not session.is_instructor():
            _try_key(linked_key)
    if session.is_instructor():
        st.success("You are logged in as the instructor on this browser.")
        st.page_link(nav.dashboard_page(), label="Open the dashboard",
                     icon=":material/co_present:")
        st.markdown("[Log out on this browser](/auth/logout)")
        if st.button("Log out of this tab"):
            session.log_out()
            st.rerun()
        return
    st.write("The dashboard runs the class exercise live: create a question, show the "
             "join code and QR code, watch the estimate converge as students vote.")
    with st.form("login"):
        key = st.text_input("Instructor key", type="password",
                            help="Printed in the terminal when the app starts, or set with "
                                 "LDP_CLASSROOM_INSTRUCTOR_KEY.")
        if st.form_submit_button("Log in", type="primary"):
            _try_key(key)
    st.caption("Tip: the login URL printed in the terminal logs this browser in for 30 days.")
