"""Streamlit glue shared by the pages: session helpers, components, charts, formatting.

Only the app (``app.py`` and ``pages/``) imports this package; ``ldp_core`` and
``classroom`` never import Streamlit.
"""
