"""LDP classroom: local differential privacy, taught by doing it.

`streamlit run app.py` serves this file in two roles:

* imported as the module ``app``, it builds the ASGI application: the device
  cookie middleware, the instructor login route and the start-up banner;
* executed by Streamlit as ``__main__`` on every rerun, it is the script: it
  registers the pages for this visitor's role and runs the chosen one.

Page modules in ``pages/`` only define functions, so executing one of them
directly (Streamlit's legacy ``pages/`` mode) shows nothing, and every
instructor page checks access again itself.
"""

import streamlit as st

if __name__ == "__main__":
    from ui import nav, session

    st.set_page_config(page_title="LDP classroom", page_icon=":material/casino:", layout="wide")
    sections = nav.sections(session.is_instructor())
    page = st.navigation(sections, position="hidden")
    # Students (arriving with ?poll=CODE) and the projector see no navigation.
    if "poll" not in st.query_params and "projector" not in st.query_params:
        nav.sidebar(sections)
    page.run()
else:
    from pathlib import Path

    from starlette.middleware import Middleware

    from classroom.web import DeviceCookieMiddleware, lifespan, routes

    app = st.App(Path(__file__).with_name("app.py"),
                 middleware=[Middleware(DeviceCookieMiddleware)], routes=routes,
                 lifespan=lifespan)
