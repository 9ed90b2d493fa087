"""Many writers, killed writers, and a database that is busy: on every backend."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from classroom import PollService, Store, StoreUnavailable
from classroom.domain import CLASS_EXERCISE
from tests.support.db import count_reports, submission_ids

ROOT = Path(__file__).resolve().parent.parent
DIE = dict(CLASS_EXERCISE)

THREADS = 32
TOTAL_REPORTS = 2_000
ACKS_BEFORE_KILL = 100


def test_32_threads_submitting_2000_reports_store_exactly_2000(service, store, open_question):
    poll, q = open_question()
    params = q.design_params
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []
    fresh = [0] * THREADS

    def student_batch(t: int) -> None:
        barrier.wait()
        try:
            for i in range(t, TOTAL_REPORTS, THREADS):
                r = service.reports.submit_report(poll.join_code, q.id, answer=i % 2,
                                                  design_params=params,
                                                  submission_id=f"conc-{i:06d}",
                                                  device_id=f"student-{i}")
                fresh[t] += not r.already_answered
                if i % 10 == 0:  # a double tap now and then
                    again = service.reports.submit_report(
                        poll.join_code, q.id, answer=1 - i % 2, design_params=params,
                        submission_id=f"conc-{i:06d}", device_id=f"student-{i}")
                    assert again.already_answered and again.answer == r.answer
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=student_batch, args=(t,)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert sum(fresh) == TOTAL_REPORTS
    assert count_reports(store, q.id) == TOTAL_REPORTS
    assert submission_ids(store, q.id) == {f"conc-{i:06d}" for i in range(TOTAL_REPORTS)}
    est = service.results.estimate(q.id)
    assert est.n == TOTAL_REPORTS and est.counts == (1000, 1000)


WRITER = r"""
import json, os, sys  # noqa: E401 - a child script in a string, kept short
sys.path.insert(0, sys.argv[1])
from classroom import PollService, Store
url, code, qid, params, log, tag = sys.argv[2:8]
service = PollService.on(Store(url))
fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
params = json.loads(params)
i = 0
while True:
    sid = f"{tag}-{i:07d}"
    service.reports.submit_report(code, int(qid), answer=i % 2, design_params=params,
                                  submission_id=sid, device_id=f"{tag}-device-{i}")
    os.write(fd, (sid + "\n").encode())  # acknowledged: logged only after the commit
    i += 1
"""


def _acknowledged(log: Path) -> list[str]:
    if not log.exists():
        return []
    text = log.read_text()
    return [line for line in text.split("\n")[:-1] if line]  # complete lines only


@pytest.mark.parametrize("writers", [2])
def test_sigkilled_writers_lose_no_acknowledged_report(db_url, tmp_path, writers):
    setup = Store(db_url)
    service = PollService.on(setup)
    poll = service.polls.create_poll("crash")
    q = service.running.open_question(
        service.polls.add_question(poll.id, "Crash?", design_params=DIE).id)
    setup.close()

    import json

    logs = [tmp_path / f"ack-{w}.log" for w in range(writers)]
    procs = [subprocess.Popen(
        [sys.executable, "-c", WRITER, str(ROOT), db_url, poll.join_code, str(q.id),
         json.dumps(DIE), str(log), f"w{w}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for w, log in enumerate(logs)]
    try:
        deadline = time.monotonic() + 90
        while min(len(_acknowledged(log)) for log in logs) < ACKS_BEFORE_KILL:
            for p in procs:
                if p.poll() is not None:
                    pytest.fail(f"writer exited early: {p.stderr.read().decode()[-2000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"writers did not acknowledge {ACKS_BEFORE_KILL} reports each in 90 s")
            time.sleep(0.02)
        for p in procs:  # mid-stream: they are still writing
            os.kill(p.pid, signal.SIGKILL)
        for p in procs:
            p.wait(timeout=30)
            assert p.returncode == -signal.SIGKILL
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()

    acked = [sid for log in logs for sid in _acknowledged(log)]
    reopened = Store(db_url)
    try:
        stored = submission_ids(reopened, q.id)
        missing = set(acked) - stored
        assert not missing, f"{len(missing)} acknowledged reports lost, e.g. {sorted(missing)[:3]}"
        # At most one report per writer was committed but not yet logged when it died.
        assert len(acked) <= len(stored) <= len(acked) + writers
        assert PollService.on(reopened).results.estimate(q.id).n == len(stored)
    finally:
        reopened.close()


def test_driver_errors_become_domain_errors(store):
    with pytest.raises(StoreUnavailable, match="database unavailable, not saved — try again"):
        with store.transaction(write=True) as conn:
            conn.execute(sa.text("SELECT * FROM no_such_table"))
    with pytest.raises(StoreUnavailable, match="^database unavailable — try again$"):
        with store.transaction(write=False) as conn:
            conn.execute(sa.text("SELECT * FROM no_such_table"))


def test_a_locked_sqlite_database_refuses_cleanly_and_writes_nothing(tmp_path):
    """SQLite only: its single write lock held by another process."""
    db_url = f"sqlite:///{tmp_path / 'locked.db'}"
    store = Store(db_url, busy_timeout_s=0.2)
    service = PollService.on(store)
    poll = service.polls.create_poll()
    q = service.running.open_question(
        service.polls.add_question(poll.id, "Locked?", design_params=DIE).id)
    blocker = sqlite3.connect(db_url.removeprefix("sqlite:///"), isolation_level=None)
    try:
        blocker.execute("BEGIN EXCLUSIVE")
        with pytest.raises(StoreUnavailable, match="not saved — try again"):
            service.reports.submit_report(poll.join_code, q.id, answer=1, design_params=DIE,
                                          submission_id="locked-sub-1", device_id="d")
        # WAL: reads still work while a writer holds the lock
        assert service.results.estimate(q.id).n == 0
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    r = service.reports.submit_report(poll.join_code, q.id, answer=1, design_params=DIE,
                                      submission_id="locked-sub-1", device_id="d")
    assert not r.already_answered and count_reports(store) == 1
    store.close()
