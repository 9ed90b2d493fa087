"""Helpers shared by the test modules: a real Streamlit server, a headless browser."""
