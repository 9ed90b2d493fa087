"""What the domain and the kinds of question both say: the error tree (:mod:`.errors`) and
the vocabulary (:mod:`.vocabulary`: modes, states, limits, the checks of what people type).

Below :mod:`classroom.domain` and :mod:`classroom.kinds`, so that neither package imports
the other both ways: the domain asks the kinds, and the kinds raise the errors and use the
words from here. ``classroom.domain`` re-exports every name (``from classroom.domain import
BadInput`` is still the way to import them).
"""
