"""The students' path: one small page and a JSON API, served by the app's own server
without a Streamlit session per phone (see routes.py)."""
