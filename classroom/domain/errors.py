"""The names of :mod:`classroom.basics.errors`, where they live (below the domain and the
kinds of question, which both use them)."""

from classroom.basics.errors import *  # noqa: F403
from classroom.basics.errors import __all__  # noqa: F401
