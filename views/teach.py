"""The instructor's door: log in, then go to the dashboard.

The forms are plain HTML posting to the server's ``/auth/login`` and
``/auth/logout`` routes (``web.login``): the key travels in a POST body, never
in a URL, and the session lives in an HttpOnly cookie the page cannot read.
"""

from __future__ import annotations

import streamlit as st

from ui import session

_STYLE = """
<style>
  .ldp-auth { display: grid; gap: .4rem; max-width: 24rem; }
  .ldp-auth input { font-size: 1.1rem; padding: .5rem .6rem; border: 1px solid #94a3b8;
                    border-radius: .5rem; }
  .ldp-auth button { font-size: 1.05rem; padding: .5rem; border: 0; border-radius: .5rem;
                     background: #1f3a8a; color: #fff; cursor: pointer; }
  .ldp-auth button.plain { background: #fff; color: #1f3a8a; border: 1px solid #1f3a8a; }
  .ldp-auth button:focus-visible, .ldp-auth input:focus-visible { outline: 3px solid #f59e0b; }
</style>
"""

_LOGIN_FORM = """
<form action="/auth/login" method="post" class="ldp-auth">
  <label for="ldp-key">Instructor key</label>
  <input id="ldp-key" name="key" type="password" autocomplete="current-password" required>
  <button type="submit">Log in</button>
</form>
""" + _STYLE

_LOGOUT_FORMS = """
<div class="ldp-auth">
  <form action="/auth/logout" method="post" class="ldp-auth">
    <button type="submit">Log out on this browser</button>
  </form>
  <form action="/auth/logout" method="post" class="ldp-auth">
    <input type="hidden" name="everywhere" value="1">
    <button type="submit" class="plain">Log out everywhere</button>
  </form>
</div>
""" + _STYLE


def render(*, dashboard: st.Page | None = None) -> None:
    """The login door; ``dashboard`` is the page it links to once logged in."""
    st.title("I'm teaching")
    if "key" in st.query_params:  # an old login link: never leave the key in the address bar
        del st.query_params["key"]
        st.warning("Links with the instructor key no longer log in, and a key in an address "
                   "stays in the browser's history. Type the key below instead.")
    problem = session.database_problem()
    if problem:
        st.error(f"The app cannot use its settings or its database, so nobody can log in: "
                 f"{problem}")
        return
    if session.is_instructor():
        st.success("You are logged in as the instructor on this browser.")
        if dashboard is not None:
            st.page_link(dashboard, label="Open the dashboard", icon=":material/co_present:")
        st.html(_LOGOUT_FORMS)
        st.caption("\"Log out everywhere\" ends the instructor's login on every browser, "
                   "for example one left open on a lecture-hall computer. A login lasts "
                   "12 hours.")
        return
    st.write("The dashboard runs the class exercise live: create a question, show the "
             "join code and QR code, watch the estimate converge as students vote.")
    st.html(_LOGIN_FORM)
    st.caption("The key is printed in the terminal when the app starts (or set with "
               "LDP_CLASSROOM_INSTRUCTOR_KEY), with a login link that works once, for "
               "15 minutes.")
