"""Settings: URL order, refused URLs, masking, the data directory and its file modes,
start-up failures.

No database backend is needed: these run once, not per backend.
"""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path

import pytest

import classroom
import ldp_core
from classroom import ConfigError, PollService, Store, StoreUnavailable, config
from classroom.domain import CLASS_EXERCISE, answer_label, encode_answer
from classroom.service import dedup_token, new_join_code


def write_secrets(root: Path, body: str) -> None:
    (root / ".streamlit").mkdir(parents=True, exist_ok=True)
    (root / ".streamlit" / "secrets.toml").write_text(body)


def test_url_order_env_then_secrets_then_sqlite_file(tmp_path):
    env = {"LDP_CLASSROOM_DATA_DIR": str(tmp_path / "d")}
    default = config.database_url(environ=env, root=tmp_path)
    assert default == f"sqlite:///{tmp_path / 'd' / 'classroom.db'}"
    assert (tmp_path / "d").is_dir()
    write_secrets(tmp_path, 'database_url = "postgresql://u:pw@db.example/classes"\n')
    assert config.database_url(environ=env, root=tmp_path) == \
        "postgresql+psycopg://u:pw@db.example/classes"
    env["LDP_CLASSROOM_DATABASE_URL"] = f"sqlite:///{tmp_path / 'env.db'}"
    assert config.database_url(environ=env, root=tmp_path) == f"sqlite:///{tmp_path / 'env.db'}"


def test_default_data_dir_is_under_the_app_root(tmp_path):
    assert config.data_dir(environ={}, root=tmp_path) == (tmp_path / "data").resolve()
    assert config.APP_ROOT == Path(classroom.__file__).resolve().parent.parent


def test_secrets_without_the_key_fall_through(tmp_path):
    write_secrets(tmp_path, '[other]\nx = 1\n')
    url = config.database_url(environ={"LDP_CLASSROOM_DATA_DIR": str(tmp_path)}, root=tmp_path)
    assert url.startswith("sqlite:///")


def test_broken_secrets_file_is_named(tmp_path):
    write_secrets(tmp_path, "database_url = \n")
    with pytest.raises(ConfigError, match="secrets.toml cannot be read as TOML"):
        config.database_url(environ={}, root=tmp_path)


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:", "sqlite+pysqlite://",
                                 "sqlite:///file::memory:?cache=shared",
                                 "sqlite:///x.db?mode=memory"])
def test_in_memory_sqlite_is_refused(url):
    with pytest.raises(ConfigError, match="in-memory SQLite"):
        config.database_url(environ={"LDP_CLASSROOM_DATABASE_URL": url})
    with pytest.raises(ConfigError, match="in-memory SQLite"):
        Store(url)


@pytest.mark.parametrize("url, message", [
    ("mysql://u@h/db", "only sqlite"), ("not a url", "not a database URL"),
    ("postgresql+psycopg2://u:pw@h/db", "psycopg 3")])
def test_unsupported_urls_are_refused(url, message):
    with pytest.raises(ConfigError, match=message) as info:
        config.normalize_url(url)
    assert "pw" not in str(info.value)


def test_masked_url_hides_the_password():
    assert config.masked_url("postgresql+psycopg://teacher:hunter2@db:5432/c") == \
        "postgresql+psycopg://teacher:***@db:5432/c"
    assert "hunter2" not in config.masked_url("weird://teacher:hunter2@@host/x y")
    assert config.masked_url("sqlite:////tmp/c.db") == "sqlite:////tmp/c.db"


def test_unwritable_data_dir_is_named(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    target = blocker / "data"
    with pytest.raises(ConfigError, match=str(target)):
        config.data_dir(environ={"LDP_CLASSROOM_DATA_DIR": str(target)})


def test_unreachable_postgres_fails_at_start_naming_the_setting():
    with pytest.raises(StoreUnavailable) as info:
        Store("postgresql+psycopg://teacher:hunter2@127.0.0.1:1/classes")
    msg = str(info.value)
    assert "LDP_CLASSROOM_DATABASE_URL" in msg and "teacher:***@127.0.0.1:1" in msg
    assert "hunter2" not in msg


def test_sqlite_file_in_a_missing_directory_fails_at_start(tmp_path):
    with pytest.raises(StoreUnavailable, match="LDP_CLASSROOM_DATABASE_URL"):
        Store(f"sqlite:///{tmp_path / 'missing' / 'c.db'}")


def test_store_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("LDP_CLASSROOM_DATABASE_URL", f"sqlite:///{tmp_path / 'env.db'}")
    s = Store()
    try:
        assert s.url.endswith("env.db") and s.backend == "sqlite"
        assert PollService.on(s).polls.list_polls() == []
    finally:
        s.close()


def test_sqlite_pragmas_are_set(tmp_path):
    s = Store(f"sqlite:///{tmp_path / 'p.db'}")
    try:
        with s.engine.connect() as conn:
            q = conn.exec_driver_sql
            assert q("PRAGMA journal_mode").scalar() == "wal"
            assert q("PRAGMA busy_timeout").scalar() == 10_000
            assert q("PRAGMA synchronous").scalar() == 1  # NORMAL
            assert q("PRAGMA foreign_keys").scalar() == 1
    finally:
        s.close()


# -- pure helpers ------------------------------------------------------------------------------


def test_join_codes_use_the_unambiguous_alphabet():
    codes = {new_join_code() for _ in range(2000)}
    assert len(codes) == 2000
    assert set("".join(codes)) <= set("23456789ABCDEFGHJKMNPQRSTUVWXYZ")
    assert not set("".join(codes)) & set("01ILO")


def test_dedup_token_is_hmac_sha256_of_the_device_under_the_round_salt():
    import hashlib
    import hmac

    salt = bytes(range(32))
    assert dedup_token(salt, "dev") == hmac.new(salt, b"dev", hashlib.sha256).hexdigest()
    assert dedup_token(salt, "dev") != dedup_token(bytes(32), "dev")
    assert len(dedup_token(salt, "dev")) == 64


def test_answer_encoding_and_labels():
    die = ldp_core.DieRR(4, 3)
    opts = ("Chocolate", "Vanilla")
    assert encode_answer("binary", die, opts, 1) == "1"
    assert encode_answer("binary", die, opts, "0") == "0"
    assert encode_answer("binary", die, opts, True) == "1"
    assert answer_label("binary", die, opts, "1") == "Vanilla"
    ue = ldp_core.UnaryEncoding(3, 0.75, 0.25)
    assert encode_answer("categorical", ue, ("A", "B", "C"), [0, 1, 1]) == "011"
    assert answer_label("categorical", ue, ("A", "B", "C"), "011") == "B, C"
    assert answer_label("categorical", ue, ("A", "B", "C"), "000") == "(none)"
    assert answer_label("categorical", ldp_core.GRR(3, 1.0), ("A", "B", "C"), "2") == "C"
    duchi = ldp_core.numeric_design_from_params(
        {"design": "duchi", "epsilon": 1.0, "lo": 0.0, "hi": 10.0})
    assert answer_label("numeric", duchi, ("km",), "0") == \
        f"\u2212{5 / math.tanh(0.5) - 5:.3g} km"  # a true minus sign


def test_public_surface():
    assert classroom.__all__ == sorted(classroom.__all__)
    for name in classroom.__all__:
        assert hasattr(classroom, name)
    assert {"PollService", "Store", "ClassroomError", "QuestionEstimate"} <= \
        set(classroom.__all__)


def test_epsilon_of_every_design_is_finite_or_inf_never_nan():
    from classroom.domain import finite_or_inf

    assert finite_or_inf([]) == 0.0
    assert finite_or_inf([math.log(3), 1.0]) == pytest.approx(math.log(3) + 1)
    assert finite_or_inf([1.0, math.inf]) == math.inf


@pytest.mark.parametrize("raw, expected", [("", None), ("1", 1), (" 40 ", 40)])
def test_the_per_address_limit_is_off_unless_set(raw, expected, tmp_path):
    from classroom import config

    env = {config.MAX_PER_ADDRESS_ENV: raw}
    assert config.max_reports_per_address(environ=env, root=tmp_path) == expected


@pytest.mark.parametrize("raw", ["0", "-3", "ten", "2.5"])
def test_a_bad_per_address_limit_names_the_setting(raw, tmp_path):
    from classroom import config
    from classroom.domain import ConfigError

    with pytest.raises(ConfigError, match="LDP_CLASSROOM_MAX_REPORTS_PER_ADDRESS must be a "
                                          "whole number of at least 1"):
        config.max_reports_per_address(environ={config.MAX_PER_ADDRESS_ENV: raw}, root=tmp_path)


# -- file modes ------------------------------------------------------------------------------


def test_data_files_are_private(tmp_path, monkeypatch):
    """The data directory is 0700; the database, its WAL and SHM files and the key 0600."""
    from classroom import config
    from classroom.service import PollService
    from classroom.store import Store

    data = tmp_path / "data"
    monkeypatch.setenv("LDP_CLASSROOM_DATA_DIR", str(data))
    monkeypatch.delenv(config.KEY_ENV, raising=False)
    monkeypatch.setattr("classroom.config.secret", lambda name, **kw: None)
    assert stat.S_IMODE(os.stat(config.data_dir()).st_mode) == 0o700
    config.instructor_key()
    store = Store(f"sqlite:///{data / 'classroom.db'}")
    try:
        svc = PollService.on(store)
        poll = svc.polls.create_poll("t")
        q = svc.running.open_question(svc.polls.add_question(
            poll.id, "Q?", design_params=dict(CLASS_EXERCISE)).id)
        svc.reports.submit_report(poll.join_code, q.id, answer=1, submission_id="perm-000001",
                                  design_params=dict(CLASS_EXERCISE),
                                  device_id="d")
        names = ["classroom.db", "classroom.db-wal", "classroom.db-shm", "instructor_key"]
        assert all((data / n).exists() for n in names)
        modes = {n: oct(stat.S_IMODE(os.stat(data / n).st_mode)) for n in names}
        assert modes == {n: "0o600" for n in names}
    finally:
        store.close()


def test_files_left_readable_by_an_older_version_are_tightened(tmp_path, monkeypatch):
    from classroom.store import Store

    db = tmp_path / "old.db"
    Store(f"sqlite:///{db}").close()
    db.chmod(0o644)
    (tmp_path / "instructor_key").write_text("x" * 24 + "\n")
    (tmp_path / "instructor_key").chmod(0o644)
    monkeypatch.setenv("LDP_CLASSROOM_DATA_DIR", str(tmp_path))
    monkeypatch.delenv(config.KEY_ENV, raising=False)
    monkeypatch.setattr("classroom.config.secret", lambda name, **kw: None)
    Store(f"sqlite:///{db}").close()
    assert config.instructor_key()[0] == "x" * 24
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "instructor_key").stat().st_mode) == 0o600


def test_settings_are_read_once_with_the_key_resolved_and_hidden(tmp_path, monkeypatch):
    monkeypatch.setattr("classroom.config.secret", lambda name, **kw: None)
    env = {config.DATA_DIR_ENV: str(tmp_path), config.MAX_PER_ADDRESS_ENV: "40",
           config.PUBLIC_URL_ENV: "https://class.example.org/"}
    settings = config.Settings.read(environ=env)
    assert settings.data_dir == tmp_path.resolve()
    assert settings.database_url == f"sqlite:///{tmp_path.resolve() / 'classroom.db'}"
    assert settings.key_source == str(tmp_path.resolve() / "instructor_key")
    assert settings.instructor_key == (tmp_path / "instructor_key").read_text().strip()
    assert settings.instructor_key not in repr(settings)
    assert (settings.public_url, settings.max_reports_per_address) == \
        ("https://class.example.org", 40)
    assert config.Settings.read(environ=env) == settings  # the same key on every start


def test_the_composition_root_is_built_once_and_shared(tmp_path, monkeypatch):
    import threading

    import web

    monkeypatch.setenv(config.DATA_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(config.MAX_PER_ADDRESS_ENV, "3")
    monkeypatch.delenv(config.DATABASE_URL_ENV, raising=False)
    built = []
    process = web.ProcessRoot(lambda: built.append(1) or web.Root.build(config.Settings.read()))
    roots = []
    threads = [threading.Thread(target=lambda: roots.append(process.get())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert len(built) == 1 and all(r is roots[0] for r in roots)
        root = roots[0]
        assert root.service.store is root.store and root.auth._store is root.store
        service = root.service  # one object per use case, each on the one store
        assert all(use._store is root.store for use in (
            service.polls, service.running, service.reports, service.results, service.plans))
        assert service.reports._max_per_address == 3  # the limit reaches the shared service
    finally:
        process.reset()
