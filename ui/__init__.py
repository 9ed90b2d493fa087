"""Streamlit glue shared by the views: session helpers, charts, formatting, text.

Only the app (``app.py`` and ``views/``) imports this package; ``ldp_core`` and
``classroom`` never import Streamlit.
"""
