"""Serve the app under pyinstrument: its event loop (HTTP, the phone routes) and its script runs.

    python bench/profile_server.py OUT_DIR [streamlit run options ...]
    python bench/profile_server.py --smoke

Starts ``streamlit run app.py`` in this process with two profilers:

* ``event_loop``: the main thread, which runs uvicorn's event loop: every HTTP
  request, the phone page and its JSON routes, middleware, websocket frames.
  Wall-clock samples, so time the loop spends waiting for the next event shows
  up under the selector (``select``/``poll``): read the shares of the rest.
* ``script_runs``: the body of every Streamlit rerun (``ScriptRunner._run_script``,
  on its script thread): the dashboard and the self-study pages.

When the server stops (SIGTERM or Ctrl-C) each profile is written as
``OUT_DIR/<name>.json`` (a pyinstrument session: ``pyinstrument --load ...``) and
``OUT_DIR/<name>.txt``; SIGUSR1 writes them at once and starts a new collection,
and ``OUT_DIR/done`` then holds the number of script runs profiled.
Work the routes hand to worker threads (database calls in a thread pool) is
not sampled; the process's CPU (``/proc``, as ``bench/load.py`` reads it) covers it.

``--smoke`` starts this script as a server on a scratch database, sends a few phones
and a dashboard session through it (``bench/harness.py``), and checks that both
profiles were written.
"""

from __future__ import annotations

import atexit
import signal
import sys
import threading
from pathlib import Path

INTERVAL_S = 0.0005


def _combine(taken: list, description: str):
    from pyinstrument.session import Session

    first = min(taken, key=lambda s: s.start_time)
    return Session(
        frame_records=[r for s in taken for r in s.frame_records],
        start_time=first.start_time, duration=sum(s.duration for s in taken),
        min_interval=min(s.min_interval for s in taken),
        max_interval=max(s.max_interval for s in taken),
        sample_count=sum(s.sample_count for s in taken),
        start_call_stack=first.start_call_stack, target_description=description,
        cpu_time=sum(s.cpu_time for s in taken), sys_path=first.sys_path,
        sys_prefixes=first.sys_prefixes)


def _write(session, out_dir: Path, name: str, header: str) -> None:
    from pyinstrument.renderers import ConsoleRenderer

    out_dir.mkdir(parents=True, exist_ok=True)
    session.save(str(out_dir / f"{name}.json"))
    text = ConsoleRenderer(unicode=True, color=False, show_all=False,
                           time="seconds").render(session)
    (out_dir / f"{name}.txt").write_text(f"{header}\n{text}")


def install(out_dir: Path) -> None:
    from pyinstrument import Profiler
    from streamlit.runtime.scriptrunner import script_runner

    original = script_runner.ScriptRunner._run_script
    sessions: list = []
    lock = threading.Lock()
    loop_profiler = [Profiler(interval=INTERVAL_S, async_mode="disabled")]
    loop_profiler[0].start()  # this (the main) thread runs the event loop

    def profiled(self, *args, **kwargs):
        profiler = Profiler(interval=INTERVAL_S, async_mode="disabled")
        profiler.start()
        try:
            return original(self, *args, **kwargs)
        finally:
            session = profiler.stop()
            with lock:
                sessions.append(session)

    script_runner.ScriptRunner._run_script = profiled

    def dump(restart: bool) -> None:
        # The loop profiler belongs to the main thread: stop and restart it there.
        loop = loop_profiler[0].stop()
        if restart:
            loop_profiler[0] = Profiler(interval=INTERVAL_S, async_mode="disabled")
            loop_profiler[0].start()
        _write(loop, out_dir, "event_loop", "the main thread (event loop)")
        with lock:
            taken = list(sessions)
            sessions.clear()
        if taken:
            _write(_combine(taken, "script runs"), out_dir, "script_runs",
                   f"{len(taken)} script runs")
        (out_dir / "done").write_text(str(len(taken)))

    atexit.register(lambda: dump(False))
    # Signal handlers run in the main thread, between bytecodes of the event loop.
    signal.signal(signal.SIGUSR1, lambda *_: dump(True))


def smoke() -> int:
    """Profile a few phones and a dashboard; fail unless both profiles are written."""
    import tempfile
    import time

    root = Path(__file__).resolve().parent.parent
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from bench.cluster import running_server
    from bench.harness import INSTRUCTOR_KEY, LoadConfig, Target, run_load

    with tempfile.TemporaryDirectory(prefix="ldp-profile-") as tmp:
        data, out = Path(tmp), Path(tmp) / "profile"
        db = f"sqlite:///{data / 'classroom.db'}"
        env = {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_DATABASE_URL": db,
               "LDP_CLASSROOM_INSTRUCTOR_KEY": INSTRUCTOR_KEY}
        with running_server(env, log_path=data / "server.log",
                            launcher=[sys.executable, __file__, str(out)]) as server:
            cfg = LoadConfig(students=5, spread_s=1.0, vote_delay_s=(0.2, 0.5), wait_s=2.0,
                             projector_baseline_s=0.5, seed=1, max_run_s=120)
            report = run_load(Target(server.url, db, "profiled", [server]), cfg)
            server.kill(signal.SIGUSR1)
            deadline = time.monotonic() + 60
            while not (out / "done").exists() and time.monotonic() < deadline:
                time.sleep(0.2)
        ok = report.passes() and (out / "event_loop.txt").exists() \
            and (out / "script_runs.txt").exists()
        print(f"phones: {len(report.taps())} receipts of {cfg.students}; profiles: "
              + ", ".join(sorted(p.name for p in out.glob("*.txt"))))
        print(f"TARGET profile_server_smoke measured={int(ok)}ok goal=1ok "
              f"{'PASS' if ok else 'MISS'}")
        return 0 if ok else 1


def main() -> int:
    if len(sys.argv) >= 2 and sys.argv[1] == "--smoke":
        return smoke()
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        raise SystemExit(__doc__)
    out_dir = Path(sys.argv[1]).resolve()
    install(out_dir)
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", "app.py", *sys.argv[2:]]
    cli.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
