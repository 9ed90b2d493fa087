"""Serve the app with every script run profiled by pyinstrument.

    python bench/profile_server.py OUT_DIR [streamlit run options ...]

Starts ``streamlit run app.py`` in this process after wrapping
``ScriptRunner._run_script`` (the body of every rerun, on its script thread)
with a pyinstrument profiler. When the server stops (SIGTERM or Ctrl-C) the
runs are combined into ``OUT_DIR/script_runs.json`` (a pyinstrument session:
``pyinstrument --load OUT_DIR/script_runs.json``) and ``OUT_DIR/script_runs.txt``;
SIGUSR1 writes them at once and starts a new collection.
``bench/load.py --suite profile`` drives it with students one after another, so that
pyinstrument's wall-clock samples are CPU time and not waits for the GIL.

Only the script threads are profiled; the event loop (websocket frames,
protobuf serialisation, the static page) shows up as the difference between
the process's CPU and its script threads' (``bench/load.py`` reads both).
"""

from __future__ import annotations

import atexit
import signal
import sys
import threading
from pathlib import Path

INTERVAL_S = 0.0005


def install(out_dir: Path) -> None:
    from pyinstrument import Profiler
    from pyinstrument.session import Session
    from streamlit.runtime.scriptrunner import script_runner

    original = script_runner.ScriptRunner._run_script
    sessions: list[Session] = []
    lock = threading.Lock()

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

    def dump() -> None:
        with lock:
            taken = list(sessions)
            sessions.clear()
        if not taken:
            return
        first = min(taken, key=lambda s: s.start_time)
        combined = Session(
            frame_records=[r for s in taken for r in s.frame_records],
            start_time=first.start_time, duration=sum(s.duration for s in taken),
            min_interval=min(s.min_interval for s in taken),
            max_interval=max(s.max_interval for s in taken),
            sample_count=sum(s.sample_count for s in taken),
            start_call_stack=first.start_call_stack, target_description="script runs",
            cpu_time=sum(s.cpu_time for s in taken), sys_path=first.sys_path,
            sys_prefixes=first.sys_prefixes)
        out_dir.mkdir(parents=True, exist_ok=True)
        combined.save(str(out_dir / "script_runs.json"))
        from pyinstrument.renderers import ConsoleRenderer

        text = ConsoleRenderer(unicode=True, color=False, show_all=False,
                               time="seconds").render(combined)
        (out_dir / "script_runs.txt").write_text(f"{len(taken)} script runs\n{text}")
        (out_dir / "done").write_text(str(len(taken)))

    atexit.register(dump)
    signal.signal(signal.SIGUSR1,
                  lambda *_: threading.Thread(target=dump, name="profile-dump").start())


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    out_dir = Path(sys.argv[1]).resolve()
    install(out_dir)
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", "app.py", *sys.argv[2:]]
    cli.main()


if __name__ == "__main__":
    main()
