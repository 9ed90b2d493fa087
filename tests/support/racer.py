"""Two app processes that act at the same instant, for race tests.

A :class:`Racer` is a separate Python process with its own :class:`~classroom.store.Store`
(its own engine and connections) and :class:`~classroom.service.PollService`, as one app
process behind a proxy has. The test sends it an action and a wall-clock instant; each
racer waits for that instant, then acts, and answers what happened (the result, or the
domain error's class and message). Two racers given the same instant act together.

``delay_s`` makes every SQL statement of the racer take that much longer (a sleep after
it, as on a loaded database server), which widens any window between a decision's read
and its write to several milliseconds, so a race the code leaves open shows up in a few
tries instead of one in a hundred.

Run as ``python -m tests.support.racer DB_URL DELAY_S LIMIT``; it reads one JSON command
per line on stdin and writes one JSON answer per line on stdout.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["Racer", "race"]


class Racer:
    """One racing process (a context manager); :meth:`send` gives it an action."""

    def __init__(self, db_url: str, *, delay_s: float = 0.0,
                 max_reports_per_address: int | None = None) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.racer", db_url, str(delay_s),
             str(max_reports_per_address or 0)],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, bufsize=1)
        ready = self._read()
        if ready.get("ready") is not True:
            raise RuntimeError(f"racer did not start: {ready}")

    def _read(self) -> dict[str, Any]:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            err = self._proc.stderr.read() if self._proc.stderr else ""
            raise RuntimeError(f"racer exited: {err[-3000:]}")
        return dict(json.loads(line))

    def send(self, **command: Any) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(command) + "\n")
        self._proc.stdin.flush()

    def answer(self) -> dict[str, Any]:
        return self._read()

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()

    def __enter__(self) -> Racer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def race(racers: list[Racer], commands: list[dict[str, Any]], *,
         lead_s: float = 0.3) -> list[dict[str, Any]]:
    """Give racer i command i, all to run at the same instant ``lead_s`` from now; their
    answers in the same order."""
    at = time.time() + lead_s
    for racer, command in zip(racers, commands, strict=True):
        racer.send(at=at, **command)
    return [racer.answer() for racer in racers]


# -- the racing process --------------------------------------------------------------------------
def _outcome(fn: Any) -> dict[str, Any]:
    from classroom.domain import ClassroomError

    try:
        return {"ok": True, "value": fn()}
    except ClassroomError as exc:
        return {"ok": False, "error": type(exc).__name__, "message": str(exc)}


def _report(service: Any, r: dict[str, Any]) -> Any:
    receipt = service.reports.submit_report(
        r["code"], r["question_id"], answer=r["answer"], design_params=r["params"],
        submission_id=r["sid"], device_id=r["device"], address=r.get("address"))
    return {"already_answered": receipt.already_answered}


def _serve(db_url: str, delay_s: float, limit: int) -> None:
    import sqlalchemy as sa

    from classroom.service import PollService
    from classroom.store import Store

    store = Store(db_url)
    if delay_s > 0:
        sa.event.listen(store.engine, "after_cursor_execute",
                        lambda *_args: time.sleep(delay_s))
    service = PollService.on(store, max_reports_per_address=limit or None)
    pool = ThreadPoolExecutor(max_workers=16)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        while (left := cmd["at"] - time.time()) > 0:
            time.sleep(min(left, 0.001) if left < 0.01 else left - 0.005)
        op = cmd["op"]
        if op == "open":
            out = _outcome(lambda c=cmd: service.running.open_question(c["question_id"]).state)
        elif op == "design":  # raise (or lower) an open question's epsilon
            out = _outcome(lambda c=cmd: service.polls.set_design(c["question_id"],
                                                                  c["params"]).design_params)
        elif op == "report":
            out = _outcome(lambda c=cmd: _report(service, c))
        elif op == "reports":  # many reports at once, on the process's threads
            futures = [pool.submit(_outcome, lambda r=r: _report(service, r))
                       for r in cmd["reports"]]
            out = {"ok": True, "value": [f.result() for f in futures]}
        else:
            out = {"ok": False, "error": "unknown op", "message": op}
        print(json.dumps(out), flush=True)
    pool.shutdown()
    store.close()


if __name__ == "__main__":
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    _serve(sys.argv[1], float(sys.argv[2]), int(sys.argv[3]))
