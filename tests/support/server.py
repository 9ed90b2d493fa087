"""The app's server for tests that need a real one, by its base URL.

Usage::

    with running_server({"LDP_CLASSROOM_DATA_DIR": str(tmp)}) as base_url:
        urllib.request.urlopen(base_url + "/_stcore/health").read()  # b"ok"

A thin adapter over :func:`bench.cluster.running_server`, the one launcher that
tests and benchmarks share (``streamlit run app.py`` in its own process group,
waited for on ``/_stcore/health``, stopped at the end). It yields the base URL
instead of the :class:`bench.cluster.Server`, and keeps the log in
``server.log`` in the data directory when ``LDP_CLASSROOM_DATA_DIR`` is given.
:func:`server_log` reads what a running server printed (the start-up banner
with its one-time login link, say).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from bench.cluster import APP_ROOT, ServerDidNotStart, free_port
from bench.cluster import running_server as _running_server

__all__ = ["APP_ROOT", "ServerDidNotStart", "classroom_server", "free_port", "running_server",
           "server_log", "wait_until"]

_LOGS: dict[str, Path] = {}
T = TypeVar("T")


def server_log(base_url: str) -> str:
    """Everything the server at ``base_url`` has printed so far (stdout and stderr)."""
    path = _LOGS.get(base_url)
    return path.read_text(encoding="utf-8", errors="replace") if path else ""


@contextlib.contextmanager
def running_server(env: Mapping[str, str] | None = None, *, timeout: float = 60.0,
                   extra_args: tuple[str, ...] = (), address: str | None = "127.0.0.1"
                   ) -> Iterator[str]:
    """Run the app until the block ends; yield its base URL (``address``: see
    :func:`bench.cluster.running_server`; None listens on every interface)."""
    data_dir = (env or {}).get("LDP_CLASSROOM_DATA_DIR")
    log_path = Path(data_dir) / "server.log" if data_dir else None
    with _running_server(env, extra_args=extra_args, log_path=log_path,
                         timeout=timeout, address=address) as server:
        _LOGS[server.url] = server.log_path
        try:
            yield server.url
        finally:
            _LOGS.pop(server.url, None)


@contextlib.contextmanager
def classroom_server(data_dir: Path, key: str, *, timeout: float = 60.0
                     ) -> Iterator[tuple[str, Any]]:
    """The app on a fresh SQLite classroom in ``data_dir`` with the instructor key ``key``,
    and a PollService on the same file: yields ``(base URL, service)``."""
    from classroom.service import PollService
    from classroom.store import Store

    url = f"sqlite:///{data_dir / 'classroom.db'}"
    env = {"LDP_CLASSROOM_DATA_DIR": str(data_dir), "LDP_CLASSROOM_DATABASE_URL": url,
           "LDP_CLASSROOM_INSTRUCTOR_KEY": key}
    store = Store(url)
    try:
        with running_server(env, timeout=timeout) as base:
            yield base, PollService.on(store)
    finally:
        store.close()


def wait_until(check: Callable[[], T], what: str, timeout: float = 60.0) -> T:
    """Poll ``check()`` (a database read, say) until it is truthy and return it: the
    pages act asynchronously, and a loaded machine is slow, so never a fixed sleep."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")
