"""The app shell: which pages exist for a visitor, and the links each page gets.

``app.py`` asks :func:`sections` for the navigation of this visitor and runs the
chosen page. Views never import each other or this module: a page that links to
another page receives that page here, as an argument of its ``render``.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from views import (
    dashboard,
    home,
    study_asymptotics,
    study_audit,
    study_averaging,
    study_exercise,
    study_histogram,
    study_likelihood,
    study_manipulation,
    study_models,
    study_rr,
    teach,
)

__all__ = ["sections", "sidebar"]


def _bound(render: Callable[..., None], name: str, **links: object) -> Callable[[], None]:
    """``render`` with its links filled in, named after its page (st.Page needs a name)."""
    def page() -> None:
        render(**links)

    page.__name__ = name
    return page


def _study_pages() -> list[st.Page]:
    return [
        st.Page(study_rr.render, title="Randomized response", icon=":material/casino:",
                url_path="randomized-response"),
        st.Page(study_exercise.render, title="The class exercise",
                icon=":material/icecream:", url_path="class-exercise"),
        st.Page(study_likelihood.render, title="Likelihood lab",
                icon=":material/show_chart:", url_path="likelihood"),
        st.Page(study_asymptotics.render, title="Local vs central",
                icon=":material/compare_arrows:", url_path="local-vs-central"),
        st.Page(study_models.render, title="Local, shuffle, federated, central",
                icon=":material/shuffle:", url_path="trust-models"),
        st.Page(study_histogram.render, title="Histogram lab", icon=":material/bar_chart:",
                url_path="histograms"),
        st.Page(study_averaging.render, title="The averaging attack",
                icon=":material/stacks:", url_path="averaging-attack"),
        st.Page(study_manipulation.render, title="Manipulation lab",
                icon=":material/how_to_vote:", url_path="manipulation"),
        st.Page(study_audit.render, title="Audit lab", icon=":material/fact_check:",
                url_path="audit-lab"),
    ]


def sections(instructor: bool) -> dict[str, list[st.Page]]:
    """Navigation for one visitor: the dashboard exists only for the instructor."""
    board = st.Page(dashboard.render, title="Dashboard", icon=":material/co_present:",
                    url_path="dashboard") if instructor else None
    door = st.Page(_bound(teach.render, "teach", dashboard=board), title="I'm teaching",
                   icon=":material/key:", url_path="teach")
    study = _study_pages()
    start = st.Page(_bound(home.render, "home", teach=door, study=study), title="Home",
                    icon=":material/home:", default=True)
    return {"": [start], "Learn on your own": study,
            "Teach": [door] + ([board] if board is not None else [])}


def sidebar(sections: dict[str, list[st.Page]]) -> None:
    """The navigation menu, drawn with page links (plain, accessible markup)."""
    with st.sidebar:
        for title, pages in sections.items():
            if title:
                st.caption(title)
            for page in pages:
                st.page_link(page)
