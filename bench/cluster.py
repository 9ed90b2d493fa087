"""Start LDP classroom servers for the load harness and the failure tests.

* :func:`running_server`: one ``streamlit run app.py`` process on a free
  port, yielding a :class:`Server` (its URL and pid, for CPU and memory).
* :func:`running_cluster`: ``deploy/run-cluster.sh`` (N processes behind
  nginx with sticky sessions), yielding a :class:`Cluster` whose ``url`` is
  nginx and whose ``servers`` are the processes behind it.
* :func:`proc_cpu_seconds` / :func:`proc_peak_rss_bytes`: read from
  ``/proc/<pid>/stat`` and ``/proc/<pid>/status`` (Linux).

Every child runs in its own process group and is stopped (then killed) when
the block ends, also on errors.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["APP_ROOT", "Cluster", "NGINX", "Server", "ServerDidNotStart", "free_port",
           "free_ports", "healthy", "proc_cpu_seconds", "proc_peak_rss_bytes",
           "running_cluster", "running_server"]

APP_ROOT = Path(__file__).resolve().parent.parent
RUN_CLUSTER = APP_ROOT / "deploy" / "run-cluster.sh"
NGINX = os.environ.get("NGINX", "/usr/sbin/nginx")
_TICK = os.sysconf("SC_CLK_TCK")

class ServerDidNotStart(RuntimeError):
    """A process exited or did not answer /_stcore/health in time."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_ports(n: int) -> int:
    """The first of ``n`` consecutive free ports on 127.0.0.1."""
    for _ in range(200):
        base = random.randrange(20000, 40000 - n)
        try:
            with contextlib.ExitStack() as stack:
                for port in range(base, base + n):
                    s = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
                    s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
    raise RuntimeError(f"no {n} consecutive free ports found")


def healthy(base_url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(base_url + "/_stcore/health", timeout=timeout) as resp:
            return resp.status == 200 and resp.read().strip() == b"ok"
    except (urllib.error.URLError, OSError):
        return False


def proc_cpu_seconds(pid: int, tid: int | None = None) -> float:
    """User + system CPU seconds the process has used (all its threads, or thread ``tid``)."""
    path = f"/proc/{pid}/stat" if tid is None else f"/proc/{pid}/task/{tid}/stat"
    with open(path, "rb") as fh:
        fields = fh.read().rsplit(b")", 1)[1].split()
    # After "pid (comm)": state is field 3; utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / _TICK


def proc_peak_rss_bytes(pid: int) -> int:
    """The process's peak resident set size (VmHWM)."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _stop_group(proc: subprocess.Popen, grace: float = 8.0) -> None:
    if proc.poll() is not None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # stray children of an exited leader
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=grace)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


@dataclass
class Server:
    """One streamlit process: where it listens and its pid."""

    url: str
    pid: int
    log_path: Path

    def cpu_seconds(self) -> float:
        return proc_cpu_seconds(self.pid)

    def peak_rss_bytes(self) -> int:
        return proc_peak_rss_bytes(self.pid)

    def alive(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        try:  # a killed child stays a zombie until its parent reaps it
            with open(f"/proc/{self.pid}/stat", "rb") as fh:
                return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
        except OSError:
            return False

    def kill(self, sig: int = signal.SIGKILL) -> None:
        os.kill(self.pid, sig)

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


def _streamlit_cmd(port: int, extra_args: Sequence[str],
                   launcher: Sequence[str] | None = None,
                   address: str | None = "127.0.0.1") -> list[str]:
    start = list(launcher) if launcher else [sys.executable, "-m", "streamlit", "run", "app.py"]
    where = ["--server.address", address] if address is not None else []
    return [*start, "--server.headless", "true", *where, "--server.port", str(port),
            "--browser.gatherUsageStats", "false", *extra_args]


@contextlib.contextmanager
def running_server(env: Mapping[str, str] | None = None, *, extra_args: Sequence[str] = (),
                   log_path: Path | None = None, timeout: float = 60.0,
                   launcher: Sequence[str] | None = None,
                   address: str | None = "127.0.0.1") -> Iterator[Server]:
    """One ``streamlit run app.py`` with ``env`` added to the environment.

    ``launcher`` replaces ``python -m streamlit run app.py`` (the options follow it),
    e.g. ``[python, "bench/profile_server.py", out_dir]``. ``address`` is
    ``--server.address``; None leaves it out, as the README's ``streamlit run app.py``
    does: Streamlit then listens on every interface, IPv4 and IPv6 (``::``).
    """
    port = free_port()
    if log_path is None:
        fd, name = tempfile.mkstemp(prefix="ldp-server-", suffix=".log")
        os.close(fd)
        log_path = Path(name)
    child_env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
    with log_path.open("wb") as log:
        proc = subprocess.Popen(_streamlit_cmd(port, extra_args, launcher, address), cwd=APP_ROOT,
                                env=child_env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    server = Server(f"http://127.0.0.1:{port}", proc.pid, log_path)
    try:
        deadline = time.monotonic() + timeout
        while not healthy(server.url):
            if proc.poll() is not None:
                raise ServerDidNotStart(f"streamlit exited with code {proc.returncode}:\n"
                                        + server.log()[-3000:])
            if time.monotonic() > deadline:
                raise ServerDidNotStart(f"no answer from {server.url} within {timeout:.0f} s:\n"
                                        + server.log()[-3000:])
            time.sleep(0.1)
        yield server
    finally:
        _stop_group(proc)


@dataclass
class Cluster:
    """nginx (``url``) in front of ``servers``, as started by deploy/run-cluster.sh."""

    url: str
    servers: list[Server]
    run_dir: Path
    nginx_pid: int | None = None
    script_log: Path | None = None
    _extra: dict = field(default_factory=dict)

    def cpu_seconds(self) -> float:
        """CPU of the Streamlit processes still alive (nginx not included)."""
        total = 0.0
        for s in self.servers:
            with contextlib.suppress(OSError, ValueError, IndexError):
                total += s.cpu_seconds()
        return total

    def nginx_cpu_seconds(self) -> float:
        total = 0.0
        if self.nginx_pid:
            pids = [self.nginx_pid]
            with contextlib.suppress(OSError):
                children = Path(f"/proc/{self.nginx_pid}/task/{self.nginx_pid}/children")
                pids += [int(p) for p in children.read_text().split()]
            for pid in pids:
                with contextlib.suppress(OSError, ValueError, IndexError):
                    total += proc_cpu_seconds(pid)
        return total


def require_nginx() -> str | None:
    """None if nginx can be used, else the reason it cannot."""
    if not (os.path.exists(NGINX) and os.access(NGINX, os.X_OK)):
        return f"nginx not found at {NGINX} (apt-get install nginx)"
    return None


@contextlib.contextmanager
def running_cluster(n: int, env: Mapping[str, str], *, extra_args: Sequence[str] = (),
                    run_dir: Path | None = None, timeout: float = 120.0) -> Iterator[Cluster]:
    """``deploy/run-cluster.sh -n N`` on free ports; ``env`` must name a PostgreSQL URL."""
    problem = require_nginx()
    if problem:
        raise ServerDidNotStart(problem)
    own_dir = run_dir is None
    run_dir = Path(tempfile.mkdtemp(prefix="ldp-cluster-")) if own_dir else run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    listen_port, base = free_port(), free_ports(n)
    script_log = run_dir / "run-cluster.log"
    child_env = {**os.environ, **env, "PYTHONUNBUFFERED": "1", "PYTHON": sys.executable,
                 "NGINX": NGINX}
    cmd = ["bash", str(RUN_CLUSTER), "-n", str(n), "-l", f"127.0.0.1:{listen_port}",
           "-b", str(base), "-d", str(run_dir)]
    if extra_args:
        cmd += ["--", *extra_args]
    with script_log.open("wb") as log:
        proc = subprocess.Popen(cmd, cwd=APP_ROOT, env=child_env, stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    url = f"http://127.0.0.1:{listen_port}"
    try:
        deadline = time.monotonic() + timeout
        while b"cluster ready" not in script_log.read_bytes():
            if proc.poll() is not None:
                raise ServerDidNotStart(f"run-cluster.sh exited with code {proc.returncode}:\n"
                                        + script_log.read_text(errors="replace")[-3000:])
            if time.monotonic() > deadline:
                raise ServerDidNotStart(f"the cluster was not ready within {timeout:.0f} s:\n"
                                        + script_log.read_text(errors="replace")[-3000:])
            time.sleep(0.1)
        servers = [Server(f"http://127.0.0.1:{base + i}",
                          int((run_dir / f"server-{i}.pid").read_text()),
                          run_dir / f"server-{i}.log") for i in range(n)]
        nginx_pid = int((run_dir / "nginx.pid").read_text().split()[0])
        yield Cluster(url, servers, run_dir, nginx_pid, script_log)
    finally:
        _stop_group(proc, grace=15.0)
        if own_dir:
            import shutil

            shutil.rmtree(run_dir, ignore_errors=True)
