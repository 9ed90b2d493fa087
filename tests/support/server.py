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
from collections.abc import Iterator, Mapping
from pathlib import Path

from bench.cluster import APP_ROOT, ServerDidNotStart, free_port
from bench.cluster import running_server as _running_server

__all__ = ["APP_ROOT", "ServerDidNotStart", "free_port", "running_server", "server_log"]

_LOGS: dict[str, Path] = {}


def server_log(base_url: str) -> str:
    """Everything the server at ``base_url`` has printed so far (stdout and stderr)."""
    path = _LOGS.get(base_url)
    return path.read_text(encoding="utf-8", errors="replace") if path else ""


@contextlib.contextmanager
def running_server(env: Mapping[str, str] | None = None, *, timeout: float = 60.0,
                   extra_args: tuple[str, ...] = ()) -> Iterator[str]:
    """Run the app until the block ends; yield its base URL."""
    data_dir = (env or {}).get("LDP_CLASSROOM_DATA_DIR")
    log_path = Path(data_dir) / "server.log" if data_dir else None
    with _running_server(env, extra_args=extra_args, log_path=log_path,
                         timeout=timeout) as server:
        _LOGS[server.url] = server.log_path
        try:
            yield server.url
        finally:
            _LOGS.pop(server.url, None)
