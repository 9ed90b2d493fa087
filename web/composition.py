"""The composition root: the one settings object, store, service, instructor sessions
and edge (allowed hosts, rate limits, device cookies) of a process, shared by the
Streamlit pages, the phone routes, the login routes and the middleware.

The settings are read once (``Settings.read()``: the environment, secrets.toml, the
instructor key); one :class:`~classroom.store.Store` (one engine, one connection pool)
is opened on them, and one :class:`~classroom.service.PollService` (one object per use
case: polls, running a class, reports, results, plans) and one
:class:`~classroom.auth.InstructorAuth` are built on that store. Nothing on a request
path reads a setting again or writes a file.

The app's lifespan builds the root before the first request (:func:`web.make_lifespan`),
so a bad setting or an unreachable database stops the start; pages and routes reach it
through :data:`PROCESS`, a cell written once per process and never changed after (tests
replace its content with :meth:`ProcessRoot.reset`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from classroom.auth import InstructorAuth
from classroom.config import Settings
from classroom.service import PollService
from classroom.store import Store

from .edge import Edge

__all__ = ["PROCESS", "ProcessRoot", "Root", "root"]


@dataclass(frozen=True)
class Root:
    """What one process shares: its settings and the objects built from them."""

    settings: Settings
    store: Store
    service: PollService
    auth: InstructorAuth
    #: The allowed hosts, rate limits and device cookies of every request.
    edge: Edge

    @classmethod
    def build(cls, settings: Settings) -> Root:
        """Open the rate limits' storage and the store (creating or migrating the schema),
        and build the rest on them."""
        edge = Edge.build(settings)
        store = Store(settings.database_url)
        return cls(settings, store,
                   PollService.on(store, max_reports_per_address=settings.max_reports_per_address),
                   InstructorAuth(store, key=settings.instructor_key), edge)

    def close(self) -> None:
        self.store.close()


def _from_environment() -> Root:
    return Root.build(Settings.read())


class ProcessRoot:
    """The process's :class:`Root`, built by ``build`` on first use (thread-safe).

    A failed build is not kept: the next use tries again (a database that comes back,
    a setting corrected before a restart of the pages).
    """

    def __init__(self, build: Callable[[], Root] = _from_environment) -> None:
        self._build = build
        self._root: Root | None = None
        self._lock = threading.Lock()

    def get(self) -> Root:
        found = self._root
        if found is not None:
            return found
        with self._lock:
            if self._root is None:
                self._root = self._build()
            return self._root

    def reset(self) -> None:
        """Close and forget the root; the next use builds a new one (tests; shutdown)."""
        with self._lock:
            found, self._root = self._root, None
        if found is not None:
            found.close()


#: The process's composition root.
PROCESS = ProcessRoot()


def root() -> Root:
    """The process's shared settings, store, service and instructor sessions."""
    return PROCESS.get()
