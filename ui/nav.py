"""The app's pages, defined once: `app.py` registers them, pages link to them."""

from __future__ import annotations

import streamlit as st

__all__ = ["dashboard_page", "home_page", "sections", "sidebar", "study_pages", "teach_page"]


def home_page() -> st.Page:
    from pages import home

    return st.Page(home.render, title="Home", icon=":material/home:", default=True)


def study_pages() -> list[st.Page]:
    from pages import (
        study_asymptotics,
        study_exercise,
        study_histogram,
        study_likelihood,
        study_rr,
    )

    return [
        st.Page(study_rr.render, title="Randomized response", icon=":material/casino:",
                url_path="randomized-response"),
        st.Page(study_exercise.render, title="The class exercise",
                icon=":material/icecream:",
                url_path="class-exercise"),
        st.Page(study_likelihood.render, title="Likelihood lab",
                icon=":material/show_chart:",
                url_path="likelihood"),
        st.Page(study_asymptotics.render, title="Local vs central",
                icon=":material/compare_arrows:",
                url_path="local-vs-central"),
        st.Page(study_histogram.render, title="Histogram lab", icon=":material/bar_chart:",
                url_path="histograms"),
    ]


def teach_page() -> st.Page:
    from pages import teach

    return st.Page(teach.render, title="I'm teaching", icon=":material/key:", url_path="teach")


def dashboard_page() -> st.Page:
    from pages import dashboard

    return st.Page(dashboard.render, title="Dashboard", icon=":material/co_present:",
                   url_path="dashboard")


def sections(instructor: bool) -> dict[str, list[st.Page]]:
    """Navigation for one visitor: the dashboard exists only for the instructor."""
    teach = [teach_page()] + ([dashboard_page()] if instructor else [])
    return {"": [home_page()], "Learn on your own": study_pages(), "Teach": teach}


def sidebar(sections: dict[str, list[st.Page]]) -> None:
    """The navigation menu, drawn with page links (plain, accessible markup)."""
    with st.sidebar:
        for title, pages in sections.items():
            if title:
                st.caption(title)
            for page in pages:
                st.page_link(page)
