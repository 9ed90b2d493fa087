"""The dashboard's CSS at the desk and on the projector."""

from __future__ import annotations

import streamlit as st

_DESK_CSS = """
<style>
[data-testid="stMainBlockContainer"], .block-container { padding-top: 2.5rem !important; }
.ldp-join { container-type: inline-size; }
.ldp-join-label { font-size: 1.05rem; }
.ldp-join-code { font: 800 min(21cqi, 5rem)/1.1 ui-monospace, SFMono-Regular, Menlo,
  Consolas, monospace; letter-spacing: .06em; color: #111827; margin: .2rem 0 .6rem;
  white-space: nowrap; }
</style>
"""


_PROJECTOR_CSS = """
<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stSidebarNav"], header[data-testid="stHeader"], [data-testid="stToolbar"],
[data-testid="stDecoration"] { display: none !important; }
.stApp, [data-testid="stAppViewContainer"], [data-testid="stMain"] { background: #ffffff; }
[data-testid="stMainBlockContainer"], .block-container { max-width: 100% !important;
  padding: 1rem 2.5rem 2rem !important; }
.stApp, .stApp p, .stApp li, .stApp span { color: #000000; }
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li {
  font-size: 1.55rem; line-height: 1.35; }
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p {
  font-size: 1.5rem !important; }
[data-testid="stCaptionContainer"] { opacity: 1 !important; }
[data-testid="stCaptionContainer"] * { color: #111111 !important; }
[data-testid="stTable"] th, [data-testid="stTable"] td { font-size: 1.5rem !important;
  color: #000000 !important; }
[data-testid="stMetricLabel"] p {
  font-size: 1.5rem !important; font-weight: 700; color: #000000 !important; }
[data-testid="stMetricValue"], [data-testid="stMetricValue"] p {
  font-size: clamp(2.2rem, 3vw, 3.6rem) !important; font-weight: 800; line-height: 1.1;
  color: #000000 !important; overflow: visible; text-overflow: clip; white-space: nowrap; }
.katex { color: #000000; }
[data-testid="stAlert"] p { font-size: 1.5rem; }
.ldp-question { font-size: clamp(2rem, 3.2vw, 3.4rem); font-weight: 800; line-height: 1.15;
  margin: 0 0 .6rem; color: #000000; }
.ldp-join { container-type: inline-size; }
.ldp-join-label { font-size: 1.6rem; }
.ldp-join-code { font: 900 min(21cqi, 9rem)/1 ui-monospace, SFMono-Regular, Menlo,
  Consolas, monospace; letter-spacing: .06em; color: #000000; margin: .2rem 0 .8rem;
  white-space: nowrap; }
[data-testid="stCode"] code { font-size: 1.5rem !important; }
.stButton button p, [data-testid="stCheckbox"] p { font-size: 1.5rem; }
.stButton button [data-testid="stIconMaterial"] { font-size: 1.5rem !important; }
[data-testid="stMetric"] { gap: 0; }
[data-testid="stMetricLabel"], [data-testid="stMetricLabel"] * { white-space: normal !important;
  overflow: visible !important; text-overflow: clip !important; }
[data-testid="stVerticalBlock"] { gap: .6rem; }
</style>
"""


def css(projector: bool) -> None:
    st.html(_PROJECTOR_CSS if projector else _DESK_CSS)
