"""The instructor dashboard's panels, each with one job; ``views/dashboard.py`` composes
them."""
