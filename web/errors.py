"""Domain errors as HTTP answers: one table, looked up along the exception's class
hierarchy.

Each :class:`ErrorTable` maps an exception class to an :class:`HttpError` (status, a
short machine code, and the sentence a person reads). :meth:`ErrorTable.resolve` walks
``type(exc).__mro__`` and takes the first class the table names, as Starlette's
exception handlers do, so a subclass without an entry of its own (``UnknownPoll`` under
``NotFound``) answers as its parent, and one with an entry (``Conflict`` and ``DiskFull``
under ``StoreUnavailable``) answers for itself.

:data:`ERRORS` is the common table; a family of routes (the phone's reads, its reports,
the login pages) derives its own with :meth:`ErrorTable.but`, which replaces the entries
it names and keeps the rest. A request refused before it reaches the service (a foreign
origin, a body too large, too many guesses) raises :class:`Refusal`, which carries its
own answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from starlette.requests import Request

from classroom.domain import (
    AddressLimit,
    BadInput,
    BadReport,
    ClassroomError,
    ConfigError,
    Conflict,
    DiskFull,
    NotFound,
    OverBudget,
    QuestionClosed,
    StoreUnavailable,
    UnknownPoll,
    UnknownQuestion,
    sentence,
)

__all__ = ["ERRORS", "ErrorTable", "HttpError", "Refusal"]

#: The sentence of an answer: fixed text, or written from the request and the error.
Message = str | Callable[[Request, Exception], str] | None


@dataclass(frozen=True)
class HttpError:
    """One answer: ``status``, a machine-readable ``code`` and the ``message`` a person
    reads (None: the error's own message, as a sentence)."""

    status: int
    code: str
    message: Message = None
    headers: Mapping[str, str] = field(default_factory=dict)

    def text(self, request: Request, exc: Exception) -> str:
        if self.message is None:
            return sentence(exc)
        if isinstance(self.message, str):
            return self.message
        return self.message(request, exc)


class Refusal(Exception):
    """A request refused before it reaches the service, with its own answer."""

    def __init__(self, status: int, code: str, message: str,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.answer = HttpError(status, code, message, dict(headers or {}))


class ErrorTable:
    """Exception classes to answers, resolved along the class hierarchy."""

    def __init__(self, entries: Mapping[type[Exception], HttpError]) -> None:
        self._entries = MappingProxyType(dict(entries))

    def but(self, entries: Mapping[type[Exception], HttpError]) -> ErrorTable:
        """This table with ``entries`` replacing (or adding to) its own."""
        return ErrorTable({**self._entries, **entries})

    def resolve(self, exc: Exception) -> HttpError:
        """The answer of the nearest class of ``exc`` the table names (a :class:`Refusal`
        carries its own); an exception no class of which is named is a bug: re-raised."""
        if isinstance(exc, Refusal):
            return exc.answer
        for cls in type(exc).__mro__:
            found = self._entries.get(cls)
            if found is not None:
                return found
        raise exc


_DATABASE_DOWN = ("The class server cannot reach its database right now. Wait a moment, "
                  "then try again.")

#: The common table: every domain error, with the sentence a student or an instructor
#: reads when no route family says it better.
ERRORS = ErrorTable({
    ClassroomError: HttpError(400, "bad_request"),
    ConfigError: HttpError(500, "misconfigured"),
    StoreUnavailable: HttpError(503, "unavailable", _DATABASE_DOWN),
    Conflict: HttpError(409, "conflict", "The class changed while this was being saved (a "
                        "question or poll was changed or deleted at the same moment), so "
                        "nothing was saved. Reload the page and try again."),
    DiskFull: HttpError(503, "disk_full", "Nothing was saved: the class server's disk is "
                        "full. Once there is room on it, try again."),
    BadInput: HttpError(400, "bad_request"),
    NotFound: HttpError(404, "not_found"),
    UnknownPoll: HttpError(404, "unknown_poll"),
    UnknownQuestion: HttpError(404, "unknown_question"),
    QuestionClosed: HttpError(409, "closed", "Voting closed: voting on this question ended "
                              "before your answer arrived, so nothing was saved."),
    OverBudget: HttpError(409, "over_budget"),
    BadReport: HttpError(422, "rejected"),
    AddressLimit: HttpError(429, "address_limit"),
})
