"""Storage failures, on a real server: an unwritable or full SQLite directory and a
wrong database URL.

* at start: the server refuses to start and says why, naming the path or the
  setting, with any password masked;
* while phones vote: a full disk gives ``503 disk_full`` with a sentence for
  the student saying so (never a traceback, never a false receipt), the server log names
  the database and the reason, and once there is room a single "Send it again"
  (the same report, the same submission id) stores the vote.

Full and read-only directories are a small tmpfs (``mount -t tmpfs``, needs
root): skipped locally without it, a failure under ``CI=true``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
from pathlib import Path

import pytest

from bench.cluster import ServerDidNotStart, running_server
from classroom.domain import CLASS_EXERCISE
from tests.support.db import count_reports, submission_ids
from tests.support.failures import need
from tests.support.phone_client import PhoneStudent, new_session

pytestmark = pytest.mark.server

DIE = dict(CLASS_EXERCISE)


class SmallDisk:
    """A 4 MB tmpfs at ``path``: ``fill()``, ``free()``, ``read_only()``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._filler = path / "filler"

    def fill(self) -> None:
        with open(self._filler, "ab", buffering=0) as fh:
            with contextlib.suppress(OSError):
                for _ in range(100_000):  # bounded: 400 MB at most, the disk has 4
                    fh.write(b"\0" * 4096)

    def free(self) -> None:
        self._filler.unlink(missing_ok=True)

    def read_only(self) -> None:
        subprocess.run(["mount", "-o", "remount,ro", str(self.path)], check=True,
                       capture_output=True, timeout=30)


@pytest.fixture
def small_disk(tmp_path):
    path = tmp_path / "disk"
    path.mkdir()
    problem = None
    if os.geteuid() != 0:
        problem = "mounting a tmpfs needs root"
    else:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(path)],
                              capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            problem = f"mount -t tmpfs failed: {done.stderr.strip()}"
    need(problem, "a small tmpfs to fill or make read-only")
    try:
        yield SmallDisk(path)
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=30)


def _classroom(url: str):
    from classroom.service import PollService
    from classroom.store import Store

    store = Store(url)
    svc = PollService.on(store)
    poll = svc.polls.create_poll("storage")
    q = svc.running.open_question(svc.polls.add_question(poll.id, "Vanilla (1) or chocolate (0)?",
                                                         options=("Chocolate", "Vanilla"),
                                                         design_params=DIE).id)
    return store, svc, poll, q


def _refused_start(env: dict, log: Path) -> str:
    with pytest.raises(ServerDidNotStart) as info:
        with running_server(env, log_path=log, timeout=60):
            pass
    text = log.read_text(errors="replace")
    assert "LDP classroom cannot start" in text, str(info.value)
    assert "Traceback" not in text, text  # the sentence alone, not the server's traceback
    return text


@pytest.mark.parametrize("damage", ["read-only", "full"])
def test_unusable_sqlite_directory_stops_the_start_naming_the_path(small_disk, tmp_path,
                                                                   damage):
    data = small_disk.path / "data"
    data.mkdir()
    db = data / "classroom.db"
    store, *_ = _classroom(f"sqlite:///{db}")
    store.close()
    small_disk.read_only() if damage == "read-only" else small_disk.fill()
    text = _refused_start({"LDP_CLASSROOM_DATA_DIR": str(tmp_path),
                           "LDP_CLASSROOM_DATABASE_URL": f"sqlite:///{db}",
                           "LDP_CLASSROOM_INSTRUCTOR_KEY": "failure-test-instructor-key"},
                          tmp_path / "server.log")
    assert str(db) in text
    assert "LDP_CLASSROOM_DATABASE_URL" in text


def test_read_only_data_directory_stops_the_start_naming_it(small_disk, tmp_path):
    data = small_disk.path / "data"
    data.mkdir()
    small_disk.read_only()
    env = {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_DATABASE_URL": "",
           "LDP_CLASSROOM_INSTRUCTOR_KEY": ""}
    text = _refused_start(env, tmp_path / "server.log")
    assert str(data) in text
    assert "LDP_CLASSROOM_DATA_DIR" in text


@pytest.mark.parametrize("url, words", [
    ("postgresql://ldp:Sup3rSecretPw@127.0.0.1:1/classroom", "cannot open the classroom database"),
    ("mysql://ldp:Sup3rSecretPw@127.0.0.1/classroom", "only sqlite:/// and postgresql"),
    ("postgresql+asyncpg://ldp:Sup3rSecretPw@127.0.0.1/classroom", "psycopg 3 driver"),
])
def test_wrong_database_url_stops_the_start_with_the_password_masked(tmp_path, url, words):
    text = _refused_start({"LDP_CLASSROOM_DATA_DIR": str(tmp_path),
                           "LDP_CLASSROOM_DATABASE_URL": url,
                           "LDP_CLASSROOM_INSTRUCTOR_KEY": "failure-test-instructor-key"},
                          tmp_path / "server.log")
    assert words in text
    assert "LDP_CLASSROOM_DATABASE_URL" in text
    assert "ldp:***@127.0.0.1" in text
    assert "Sup3rSecretPw" not in text


def test_disk_full_while_voting_says_not_saved_and_a_resend_stores_once(small_disk, tmp_path):
    data = small_disk.path / "data"
    data.mkdir()
    db = data / "classroom.db"
    store, svc, poll, q = _classroom(f"sqlite:///{db}")
    env = {"LDP_CLASSROOM_DATA_DIR": str(tmp_path), "LDP_CLASSROOM_DATABASE_URL": f"sqlite:///{db}",
           "LDP_CLASSROOM_INSTRUCTOR_KEY": "failure-test-instructor-key"}
    try:
        with running_server(env, log_path=tmp_path / "server.log") as server:
            async def scenario():
                async with new_session(timeout=30) as http:
                    phones = [PhoneStudent(server.url, poll.join_code, session=http, timeout=30)
                              for _ in range(4)]
                    for p in phones:
                        assert (await p.join()).status == 200
                    assert (await phones[0].vote(1)).status == 200
                    small_disk.fill()
                    for p in phones[1:]:
                        resp = await p.vote(0)
                        assert resp.status == 503, (resp.status, resp.body[:300])
                        assert resp.json["error"] == "disk_full", resp.json
                        assert "disk is full" in resp.json["message"]
                        assert "receipt" not in resp.json and b"Traceback" not in resp.body
                    assert f"classroom database sqlite:///{db}" in server.log()
                    assert "database or disk is full" in server.log()
                    small_disk.free()
                    for p in phones[1:]:  # "Send it again": the same report, stored once
                        again = await p.resend()
                        assert again.status == 200, (again.status, again.body[:300])
                        assert again.json["receipt"]["already_answered"] is False
                    return phones

            phones = asyncio.run(scenario())
        assert count_reports(svc.store, q.id) == len(phones)
        for p in phones:
            assert svc.reports.receipt_for(q.id, p.device_id) is not None
        assert {p.submission_id for p in phones} <= submission_ids(svc.store, q.id)
    finally:
        store.close()
