"""The dashboard's CSS at the desk and on the projector."""

from __future__ import annotations

import streamlit as st

#: The desk's CSS. A metric's value wraps instead of being cut short with "…": every number
#: is whole at 1280×720 and 1920×1080 (tests/test_e2e_projector.py checks the desk too).
_DESK_CSS = """
<style>
[data-testid="stMainBlockContainer"], .block-container { padding-top: 2.5rem !important; }
.ldp-join { container-type: inline-size; }
.ldp-join-label { font-size: 1.05rem; }
.ldp-join-code { font: 800 min(21cqi, 5rem)/1.1 ui-monospace, SFMono-Regular, Menlo,
  Consolas, monospace; letter-spacing: .06em; color: #111827; margin: .2rem 0 .6rem;
  white-space: nowrap; }
[data-testid="stMetricValue"], [data-testid="stMetricValue"] * {
  overflow: visible !important; text-overflow: clip !important; white-space: normal !important;
  overflow-wrap: anywhere; }
</style>
"""


#: The projector's CSS. Made for 1280×720 and larger: the question, the join panel, the
#: key numbers, the main chart and the control bar (fixed at the bottom of the screen)
#: fit one screen without scrolling; every text is at least 24 px. Sizes that grow with
#: the screen use ``vw`` (width) and ``vh`` (height) with a floor of 1.5rem = 24 px.
#: While a countdown runs, its clock (``.ldp-pacing-clock`` in ui/dashboard/pacing.js,
#: top right) sits beside the question: the question is at least as tall as the clock,
#: so the status line below starts under it.
_PROJECTOR_CSS = """
<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stSidebarNav"], header[data-testid="stHeader"], [data-testid="stToolbar"],
[data-testid="stDecoration"] { display: none !important; }
.stApp, [data-testid="stAppViewContainer"], [data-testid="stMain"] { background: #ffffff; }
[data-testid="stMainBlockContainer"], .block-container { max-width: 100% !important;
  padding: .6rem 2rem 5.5rem !important; }
.stApp, .stApp p, .stApp li, .stApp span { color: #000000; }
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li {
  font-size: 1.5rem; line-height: 1.3; }
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p {
  font-size: 1.5rem !important; }
[data-testid="stCaptionContainer"] { opacity: 1 !important; }
[data-testid="stCaptionContainer"] * { color: #111111 !important; }
[data-testid="stTable"] th, [data-testid="stTable"] td { font-size: 1.5rem !important;
  color: #000000 !important; }
[data-testid="stMetricLabel"] p {
  font-size: 1.5rem !important; font-weight: 700; color: #000000 !important; }
[data-testid="stMetricValue"], [data-testid="stMetricValue"] p {
  font-size: clamp(1.75rem, 2.5vw, 3.4rem) !important; font-weight: 800; line-height: 1.1;
  color: #000000 !important; }
[data-testid="stMetricValue"], [data-testid="stMetricValue"] * {
  overflow: visible !important; text-overflow: clip !important; white-space: normal !important; }
.katex { color: #000000; }
[data-testid="stAlert"] p { font-size: 1.5rem; }
.ldp-question { font-size: clamp(1.75rem, 2.6vw, 3.4rem); font-weight: 800; line-height: 1.15;
  margin: 0 0 .35rem; color: #000000; }
.ldp-join { container-type: inline-size; }
.ldp-join-label { font-size: 1.5rem; line-height: 1.25; }
.ldp-join-code { font: 900 min(21cqi, 9rem)/1 ui-monospace, SFMono-Regular, Menlo,
  Consolas, monospace; letter-spacing: .06em; color: #000000; margin: .2rem 0 .4rem;
  white-space: nowrap; }
[data-testid="stImage"] img[alt^="QR code of"] { width: min(100%, 34vh) !important;
  height: auto !important; image-rendering: pixelated; }
[data-testid="stCode"] code { font-size: 1.5rem !important; }
.stButton button p, [data-testid="stCheckbox"] p { font-size: 1.5rem; }
.stButton button [data-testid="stIconMaterial"] { font-size: 1.5rem !important; }
[data-testid="stMetric"] { gap: 0; }
[data-testid="stMetricLabel"], [data-testid="stMetricLabel"] * { white-space: normal !important;
  overflow: visible !important; text-overflow: clip !important; }
[data-testid="stVerticalBlock"] { gap: .5rem; }
body.ldp-pacing-timed .ldp-question { min-height: calc(clamp(2.2rem, 3.6vw, 3.8rem) * 1.24); }
.st-key-ldp_projector_controls { position: fixed; left: 0; right: 0; bottom: 0;
  z-index: 999; background: #ffffff; border-top: 2px solid #000000;
  padding: .45rem 2rem .5rem; }
.st-key-ldp_projector_controls [data-testid="stMarkdownContainer"] { margin-bottom: 0; }
.st-key-ldp_projector_controls .ldp-notice { font-size: 1.5rem; line-height: 1.2;
  font-weight: 700; color: #7f1d1d; }
.st-key-ldp_projector_controls [data-testid="stVerticalBlock"],
.st-key-ldp_projector_controls { gap: .25rem; }
.stButton button:disabled, .stButton button:disabled p,
.stButton button:disabled [data-testid="stIconMaterial"] { color: #6b7280 !important; }
</style>
"""


def css(projector: bool) -> None:
    st.html(_PROJECTOR_CSS if projector else _DESK_CSS)
