"""A full disk (ENOSPC) during a class, in one process with the app's composition root.

The settings are the defaults of a laptop: the instructor key generated into the data
directory, the database a SQLite file beside it. Then the disk fills: every write of a
file under the data directory fails with ENOSPC, and every database write with SQLite's
"database or disk is full" (what SQLite says when its journal cannot grow).

* The instructor stays logged in: checking a session reads the database and writes
  nothing. (It used to resolve the key again on every check, writing a probe file into
  the data directory, so a full disk logged the instructor out of the dashboard.)
* A phone's report fails with a sentence that says the disk is full, keeps nothing, and
  the same report sent again once there is room is stored once.

The real thing, a full tmpfs under a running server, is in test_failures_storage.py.
"""

from __future__ import annotations

import builtins
import errno
import os
import pathlib
import sqlite3

import pytest
import sqlalchemy as sa
from starlette.applications import Starlette
from starlette.testclient import TestClient
from streamlit.testing.v1 import AppTest

import web
from classroom import config
from classroom.domain import CLASS_EXERCISE, DiskFull
from phone.routes import PhoneApi, make_routes
from tests.support.db import count_reports
from tests.support.web import local_edge, local_middleware

DIE = dict(CLASS_EXERCISE)
ORIGIN = "http://testserver"
DASHBOARD = "from views import dashboard\ndashboard.render()"


class FullDisk:
    """While :attr:`full`, writes under ``path`` fail with ENOSPC and database writes with
    SQLITE_FULL, as they do when the disk holding the data directory is full."""

    _WRITES = ("INSERT", "UPDATE", "DELETE")

    def __init__(self, monkeypatch: pytest.MonkeyPatch, path: pathlib.Path,
                 engine: sa.Engine) -> None:
        self.path = str(path)
        self.full = False
        self.refused: list[str] = []
        real_os_open, real_open = os.open, builtins.open
        real_write_bytes, real_write_text = pathlib.Path.write_bytes, pathlib.Path.write_text

        def os_open(file, flags, *args, **kwargs):
            if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
                self._check(file)
            return real_os_open(file, flags, *args, **kwargs)

        def open_(file, mode="r", *args, **kwargs):
            if isinstance(file, (str, os.PathLike)) and set(str(mode)) & set("wax+"):
                self._check(file)
            return real_open(file, mode, *args, **kwargs)

        def write_bytes(p, *args, **kwargs):
            self._check(p)
            return real_write_bytes(p, *args, **kwargs)

        def write_text(p, *args, **kwargs):
            self._check(p)
            return real_write_text(p, *args, **kwargs)

        monkeypatch.setattr(os, "open", os_open)
        monkeypatch.setattr(builtins, "open", open_)
        monkeypatch.setattr(pathlib.Path, "write_bytes", write_bytes)
        monkeypatch.setattr(pathlib.Path, "write_text", write_text)
        sa.event.listen(engine, "before_cursor_execute", self._database_write)

    def _check(self, file: object) -> None:
        where = os.path.abspath(os.fspath(file))  # type: ignore[arg-type]
        if self.full and where.startswith(self.path):
            self.refused.append(where)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), where)

    def _database_write(self, conn, cursor, statement, parameters, context, executemany):
        if self.full and statement.lstrip().upper().startswith(self._WRITES):
            self.refused.append(statement.split()[0])
            error = sqlite3.OperationalError("database or disk is full")
            error.sqlite_errorcode = sqlite3.SQLITE_FULL
            raise error


@pytest.fixture
def classroom(tmp_path, monkeypatch):
    """The app's composition root on the default settings in a fresh data directory."""
    monkeypatch.setenv(config.DATA_DIR_ENV, str(tmp_path))
    for name in (config.DATABASE_URL_ENV, config.KEY_ENV, config.PUBLIC_URL_ENV,
                 config.MAX_PER_ADDRESS_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("classroom.config.secret", lambda name, **kw: None)
    web.PROCESS.reset()
    root = web.root()
    assert root.settings.key_source == str(tmp_path / "instructor_key")
    try:
        yield root
    finally:
        web.PROCESS.reset()


@pytest.fixture
def disk(classroom, tmp_path, monkeypatch):
    return FullDisk(monkeypatch, tmp_path, classroom.store.engine)


def _open_question(service):
    poll = service.polls.create_poll("CS208")
    q = service.polls.add_question(poll.id, "Vanilla (1) or chocolate (0)?",
                                   options=("Chocolate", "Vanilla"), design_params=DIE)
    return poll, service.running.open_question(q.id)


def test_on_a_full_disk_the_instructor_stays_logged_in(classroom, disk):
    poll, q = _open_question(classroom.service)
    session_id = classroom.auth.start_session()
    disk.full = True
    for _ in range(3):  # the dashboard's live panel checks the session on every refresh
        at = AppTest.from_string(DASHBOARD, default_timeout=60)
        at.session_state["_ldp_session_id"] = session_id
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        shown = " ".join(str(e.value) for e in [*at.markdown, *at.info, *at.caption])
        assert "for the instructor" not in shown  # not sent back to the login page
        assert any(m.label == "Reports received" for m in at.metric)
    assert classroom.auth.is_valid(session_id)


def test_on_a_full_disk_a_report_says_so_and_a_resend_stores_it_once(classroom, disk):
    poll, q = _open_question(classroom.service)
    edge = local_edge()
    app = Starlette(routes=make_routes(PhoneApi(lambda: classroom.service)),
                    middleware=local_middleware(edge))
    body = {"question_id": q.id, "answer": 1, "params": DIE, "submission_id": "full-disk-0001"}
    with TestClient(app, follow_redirects=False) as phone:
        phone.cookies.set(web.DEVICE_COOKIE, edge.devices.sign("a-phone-on-a-full-disk-0001"))
        disk.full = True
        refused = phone.post(f"/api/poll/{poll.join_code}/report", json=body,
                             headers={"origin": ORIGIN})
        assert refused.status_code == 503
        assert refused.json()["error"] == "disk_full"
        assert "disk is full" in refused.json()["message"]
        assert "receipt" not in refused.json()
        assert disk.refused and count_reports(classroom.store) == 0
        with pytest.raises(DiskFull, match="disk is full"):
            classroom.service.polls.create_poll("the dashboard says it too")
        disk.full = False
        stored = phone.post(f"/api/poll/{poll.join_code}/report", json=body,
                            headers={"origin": ORIGIN})
        again = phone.post(f"/api/poll/{poll.join_code}/report", json=body,
                           headers={"origin": ORIGIN})
    assert stored.status_code == 200 and not stored.json()["receipt"]["already_answered"]
    assert again.status_code == 200 and again.json()["receipt"]["already_answered"]
    assert count_reports(classroom.store) == 1


def _wal(classroom) -> pathlib.Path:
    db = pathlib.Path(classroom.store.engine.url.database)
    return db.with_name(db.name + "-wal")


def test_after_a_full_disk_the_write_ahead_log_is_checkpointed(classroom, disk, monkeypatch):
    """The write-ahead log shrinks only at a checkpoint: after SQLITE_FULL the store copies
    it into the database and truncates it, so the space freed goes to new reports. Until a
    checkpoint completes it is tried again, at most once a second, before each write."""
    from classroom.store import storage

    service = classroom.service
    poll, q = _open_question(service)
    for i in range(40):
        service.reports.submit_report(poll.join_code, q.id, answer=i % 2, design_params=DIE,
                                      submission_id=f"wal-{i:04d}", device_id=f"dev-{i:04d}")
    assert _wal(classroom).stat().st_size > 0
    clock = [1000.0]
    monkeypatch.setattr(storage.time, "monotonic", lambda: clock[0])
    real_connect = classroom.store.engine.connect
    refuse = [True]

    def connect():  # the first checkpoint (after the refused write) fails: still full
        conn = real_connect()
        if refuse[0] and disk.refused:
            refuse[0] = False
            conn.close()
            raise sqlite3.OperationalError("database or disk is full")
        return conn

    monkeypatch.setattr(classroom.store.engine, "connect", connect)
    disk.full = True
    with pytest.raises(DiskFull):
        service.polls.create_poll("no room")
    assert _wal(classroom).stat().st_size > 0  # the checkpoint failed; it is still due
    disk.full = False
    service.polls.create_poll("room again, within the second")  # too soon to try again
    assert _wal(classroom).stat().st_size > 0
    clock[0] += 1.5
    service.polls.create_poll("room again")  # the checkpoint runs before this write
    assert classroom.store._checkpoint_due is None
    assert count_reports(classroom.store) == 40
    clock[0] += 5
    wal_after = _wal(classroom).stat().st_size
    assert wal_after < 40 * 4096  # truncated, then one poll's pages written after it
