"""The classroom's errors: one tree under :class:`ClassroomError`, each message a fragment a
person can read (:func:`sentence` makes it a sentence)."""

from __future__ import annotations

__all__ = [
    "AddressLimit",
    "BadInput",
    "BadReport",
    "ClassroomError",
    "ConfigError",
    "Conflict",
    "DiskFull",
    "NotFound",
    "OverBudget",
    "QuestionClosed",
    "StoreUnavailable",
    "UnknownPoll",
    "UnknownPlan",
    "UnknownQuestion",
    "sentence",
]


class ClassroomError(Exception):
    """Base of every domain error; ``str(err)`` can be shown to a user as it is."""


class ConfigError(ClassroomError):
    """A setting (data directory, database URL) is unusable."""


class StoreUnavailable(ClassroomError):
    """The database cannot be reached or is busy; the action did not happen."""


class Conflict(StoreUnavailable):
    """A write collided with a concurrent change (e.g. the poll was deleted)."""


class DiskFull(StoreUnavailable):
    """The database's disk is full: the write did not happen (reads still work)."""


class BadInput(ClassroomError):
    """Text or a typed value is outside its limits."""


class NotFound(ClassroomError):
    """Something addressed by id or code does not exist."""


class UnknownPoll(NotFound):
    """No poll with that id or join code."""


class UnknownQuestion(NotFound):
    """No question with that id (in that poll)."""


class UnknownPlan(NotFound):
    """No saved lesson plan with that id."""


class QuestionClosed(ClassroomError):
    """A report arrived for a question that is not open."""


class BadReport(ClassroomError):
    """A report's answer, design parameters or ids are not acceptable."""


class OverBudget(ClassroomError):
    """Opening a round, or one more report, would pass the poll's privacy budget."""


class AddressLimit(ClassroomError):
    """The optional per-address limit of a round is reached (nothing was written)."""


def sentence(message: object) -> str:
    """A message (an error's fragment, say) as a sentence: capitalised, with a full stop.

    >>> sentence("no poll with id 3"), sentence("Saved!"), sentence(" ")
    ('No poll with id 3.', 'Saved!', '')
    """
    text = str(message).strip()
    if not text:
        return ""
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "!", "?")) else ".")
