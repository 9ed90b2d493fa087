"""The names of :mod:`classroom.basics.vocabulary`, where they live (below the domain and the
kinds of question, which both use them)."""

from classroom.basics.vocabulary import *  # noqa: F403
from classroom.basics.vocabulary import __all__  # noqa: F401
