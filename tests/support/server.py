"""Start the app with ``streamlit run`` in a subprocess, for tests that need a real server.

Usage::

    with running_server({"LDP_CLASSROOM_DATA_DIR": str(tmp)}) as base_url:
        urllib.request.urlopen(base_url + "/_stcore/health").read()  # b"ok"

The child inherits ``os.environ`` updated with ``env``. Its stdout and stderr
go to a log file (``server.log`` in the data directory when
``LDP_CLASSROOM_DATA_DIR`` is given, else a temporary file); a server that
does not answer ``/_stcore/health`` in time raises :class:`ServerDidNotStart`
quoting the end of that log. On exit the process group is terminated, and
killed if it does not stop within a few seconds.

Also: :func:`free_port`, and :func:`server_log` to read what a running
server printed (the start-up banner with the instructor login URL, say).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path

__all__ = ["APP_ROOT", "ServerDidNotStart", "free_port", "running_server", "server_log"]

#: The directory holding app.py.
APP_ROOT = Path(__file__).resolve().parents[2]

_LOGS: dict[str, Path] = {}


class ServerDidNotStart(RuntimeError):
    """The server exited or did not answer /_stcore/health in time."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_log(base_url: str) -> str:
    """Everything the server at ``base_url`` has printed so far (stdout and stderr)."""
    path = _LOGS.get(base_url)
    return path.read_text(encoding="utf-8", errors="replace") if path else ""


def _healthy(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(base_url + "/_stcore/health", timeout=2) as resp:
            return resp.status == 200 and resp.read().strip() == b"ok"
    except (urllib.error.URLError, OSError):
        return False


def _stop(proc: subprocess.Popen, grace: float = 5.0) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=grace)


@contextlib.contextmanager
def running_server(env: Mapping[str, str] | None = None, port: int | None = None, *,
                   timeout: float = 30.0, app: str = "app.py",
                   extra_args: tuple[str, ...] = ()) -> Iterator[str]:
    """Run ``streamlit run app.py`` until the block ends; yield its base URL.

    ``env`` is added to the inherited environment (use it for
    ``LDP_CLASSROOM_DATA_DIR``, ``LDP_CLASSROOM_DATABASE_URL``,
    ``LDP_CLASSROOM_INSTRUCTOR_KEY``). ``port`` defaults to a free one.
    """
    env = dict(env or {})
    port = port or free_port()
    base_url = f"http://127.0.0.1:{port}"
    data_dir = env.get("LDP_CLASSROOM_DATA_DIR")
    if data_dir:
        log_path = Path(data_dir) / "server.log"
    else:
        fd, name = tempfile.mkstemp(prefix="streamlit-server-", suffix=".log")
        os.close(fd)
        log_path = Path(name)
    child_env = {**os.environ, **env, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "streamlit", "run", app,
           "--server.headless", "true",
           "--server.port", str(port),
           "--server.address", "127.0.0.1",
           "--server.fileWatcherType", "none",
           "--browser.gatherUsageStats", "false",
           *extra_args]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, cwd=APP_ROOT, env=child_env, stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    _LOGS[base_url] = log_path
    try:
        deadline = time.monotonic() + timeout
        while not _healthy(base_url):
            if proc.poll() is not None:
                raise ServerDidNotStart(
                    f"streamlit exited with code {proc.returncode}; log {log_path}:\n"
                    + log_path.read_text(errors="replace")[-3000:])
            if time.monotonic() > deadline:
                raise ServerDidNotStart(
                    f"no answer from {base_url}/_stcore/health within {timeout:.0f} s; "
                    f"log {log_path}:\n" + log_path.read_text(errors="replace")[-3000:])
            time.sleep(0.1)
        yield base_url
    finally:
        _stop(proc)
        _LOGS.pop(base_url, None)
