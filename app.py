"""LDP classroom: local differential privacy, taught by doing it.

`streamlit run app.py` serves this file in two roles:

* imported as the module ``app``, it builds the ASGI application: the middleware
  (gzip, device cookie, security headers), the instructor login routes, the
  students' phone page and its JSON API (``phone/``), the lifespan that builds the
  process's composition root (``web/composition.py``: one settings object, store and
  service) and prints the start-up banner, and the check that drops widget states no
  control could have sent (``ui/widget_guard.py``);
* executed by Streamlit as ``__main__`` on every rerun, it is the script: it
  registers the pages for this visitor's role (``views/shell.py``) and runs the
  chosen one.

Views in ``views/`` only define functions, and every instructor view checks
access again itself. (The folder is not called ``pages/``: Streamlit would treat
that name as its older multipage mode and serve each file as a page.)
"""

import streamlit as st

if __name__ == "__main__":
    from pathlib import Path

    from ui import session, widget_guard
    from views import shell

    # The favicon is the app's own file: a ":material/..." icon would make every browser
    # fetch it from a third party.
    icon = Path(__file__).parent / "phone" / "assets" / "favicon.svg"
    st.set_page_config(page_title="LDP classroom", page_icon=str(icon), layout="wide")
    if widget_guard.take_refused():
        st.warning("This page ignored input that none of its controls could have sent. "
                   "If the page looks wrong, reload it.")
    sections = shell.sections(session.is_instructor())
    page = st.navigation(sections, position="hidden")
    # The projector sees no navigation.
    if "projector" not in st.query_params:
        shell.sidebar(sections)
    page.run()
else:
    import os
    from pathlib import Path

    import web
    from phone.routes import PhoneApi, direct
    from phone.routes import make_routes as phone_routes
    from ui import widget_guard

    widget_guard.install()  # before any session runs: malformed widget states never parse
    from streamlit import config as st_config

    def _listening() -> tuple[str | None, int]:
        return st_config.get_option("server.address"), st_config.get_option("server.port")

    # The composition root: the lifespan builds the process's one settings object, store,
    # service and instructor sessions before the first request; the login routes, the
    # phone routes and the pages (ui/session.py) all use that one.
    # The phone's requests go from the app's middleware straight to the phone routes
    # (web.middleware's ``direct``); Streamlit's router lists them too (same handlers).
    process = web.PROCESS
    phones = PhoneApi(lambda: process.get().service, follow_changes=True)
    app = st.App(Path(__file__).with_name("app.py"),
                 middleware=web.middleware(lambda: process.get().edge, direct=direct(phones)),
                 routes=[*web.make_routes(web.AuthApi(lambda: process.get().auth)),
                         *phone_routes(phones)],
                 lifespan=web.make_lifespan(_listening, process, freeze_heap=True,
                                            abort=os._exit))
