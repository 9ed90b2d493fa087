"""Rate limits kept where every process sees them: Redis (``LDP_CLASSROOM_RATE_LIMIT_STORAGE``)
or, by default, each process's memory.

Before, the limits lived in each process: with N processes a guesser had N times the
tries. These tests run two edges (two processes' worth) on one Redis, and two real
servers on one database and one Redis; a Redis that stops answering mid-class falls
back to memory instead of failing requests; one that does not answer at start stops
the start. With ``CI=true`` a missing Redis fails them (``tests/conftest.py``).
"""

from __future__ import annotations

import asyncio
import logging
import secrets

import pytest

import web
from classroom import config
from classroom.domain import ConfigError
from tests.support.phone_client import PhoneStudent


def _settings(tmp_path, key: str, storage: str | None) -> config.Settings:
    env = {"LDP_CLASSROOM_DATA_DIR": str(tmp_path), config.KEY_ENV: key}
    if storage is not None:
        env[config.RATE_LIMIT_STORAGE_ENV] = storage
    return config.Settings.read(environ=env, root=tmp_path)


def _two_processes(tmp_path, storage: str | None) -> tuple[web.Guesses, web.Guesses]:
    key = f"key-{secrets.token_hex(12)}"  # fresh keys: fresh counters, whatever Redis holds
    return tuple(web.Guesses(web.Edge.build(_settings(tmp_path, key, storage)).limits,
                             web.GuessRule("join", per_device=10, per_address=600))
                 for _ in range(2))


def test_two_processes_on_one_redis_share_a_guessers_count(tmp_path, redis_url):
    one, two = _two_processes(tmp_path, redis_url)
    guesser = web.Device("guesser-device", 0.0)
    for i in range(10):  # alternating between the processes, as nginx's round-robin does
        (one if i % 2 else two).missed(guesser, "203.0.113.5")
    assert one.refused(guesser, "203.0.113.5", "K7QM2P") is not None
    assert two.refused(guesser, "203.0.113.5", "K7QM2P") is not None


def test_in_memory_each_process_counts_alone(tmp_path):
    """What Redis is for: in memory, the same ten guesses spread over two processes leave
    each of them five short of its limit."""
    one, two = _two_processes(tmp_path, None)
    guesser = web.Device("guesser-device", 0.0)
    for i in range(10):
        (one if i % 2 else two).missed(guesser, "203.0.113.5")
    assert one.refused(guesser, "203.0.113.5", "K7QM2P") is None
    assert two.refused(guesser, "203.0.113.5", "K7QM2P") is None


def test_redis_keys_name_no_address_device_or_code(tmp_path, redis_url):
    import redis

    one, _ = _two_processes(tmp_path, redis_url)
    device = web.Device(f"device-{secrets.token_hex(8)}", 0.0)
    one.missed(device, "198.51.100.200")
    one.found(device, "K7QM2P")
    client = redis.Redis.from_url(redis_url)
    try:
        keys = [k.decode() for k in client.scan_iter(count=1000)]
    finally:
        client.close()
    assert keys
    assert not [k for k in keys if device.id in k or "198.51.100.200" in k or "K7QM2P" in k]


def test_a_redis_that_stops_answering_falls_back_to_memory(caplog):
    from limits.storage import storage_from_string

    dead = storage_from_string("redis://127.0.0.1:1", wrap_exceptions=True,
                               socket_timeout=0.2, socket_connect_timeout=0.2)
    limits = web.Limits(dead, secret=b"test")
    guesses = web.Guesses(limits, web.GuessRule("join", per_device=3, per_address=600))
    guesser = web.Device("guesser", 0.0)
    with caplog.at_level(logging.WARNING, logger="web.limits"):
        for _ in range(3):
            assert guesses.refused(guesser, "203.0.113.5", "K7QM2P") is None
            guesses.missed(guesser, "203.0.113.5")
        assert guesses.refused(guesser, "203.0.113.5", "K7QM2P") is not None  # still counted
        guesses.found(guesser, "K7QM2P")
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "counting in this process's memory" in warnings[0]


def test_a_redis_that_does_not_answer_at_start_stops_the_start(tmp_path):
    settings = _settings(tmp_path, "a-key-of-twenty-chars", "redis://:hunter2@127.0.0.1:1/0")
    with pytest.raises(ConfigError, match="does not answer") as refused:
        web.Edge.build(settings)
    assert "hunter2" not in str(refused.value) and "127.0.0.1:1" in str(refused.value)


@pytest.mark.parametrize("value", ["mongodb://host/db", "127.0.0.1:6379", "redis"])
def test_a_storage_that_is_not_redis_is_a_clear_setting_error(tmp_path, value):
    with pytest.raises(ConfigError, match="must be a Redis URL"):
        _settings(tmp_path, "a-key-of-twenty-chars", value)


# -- two real servers ------------------------------------------------------------------------------

@pytest.mark.server
@pytest.mark.parametrize("shared", [True, False], ids=["redis", "memory"])
def test_two_servers_on_one_redis_slow_a_guesser_down_together(tmp_path, redis_url, shared):
    """Two processes (as behind nginx) on one database: a phone guessing codes on both in
    turn is slowed down after ten in all with Redis, and only after ten on each without."""
    from bench.cluster import running_server
    from classroom.service import PollService
    from classroom.store import Store

    url = f"sqlite:///{tmp_path / 'classroom.db'}"
    env = {"LDP_CLASSROOM_DATA_DIR": str(tmp_path), "LDP_CLASSROOM_DATABASE_URL": url,
           config.KEY_ENV: f"key-{secrets.token_hex(12)}"}
    if shared:
        env[config.RATE_LIMIT_STORAGE_ENV] = redis_url
    store = Store(url)
    try:
        poll = PollService.on(store).polls.create_poll("two servers")
        with running_server(env) as first, running_server(env) as second:
            statuses = asyncio.run(_guess_in_turn(first.url, second.url, 24))
    finally:
        store.close()
    from phone.routes import JOIN_MISSES_PER_MINUTE as LIMIT

    assert poll.join_code not in _WRONG[:24]
    if shared:
        assert statuses == [404] * LIMIT + [429] * (24 - LIMIT)
    else:  # each process lets its own ten through
        assert statuses == [404] * (2 * LIMIT) + [429] * (24 - 2 * LIMIT)


_WRONG = [c * 6 for c in "ZYXWVUTSRQPNMKJHGFEDCBA98"]  # letters of join codes


async def _guess_in_turn(first: str, second: str, n: int) -> list[int]:
    """One phone (one cookie, from the first server's page) asks both servers in turn."""
    async with PhoneStudent(first, "ZZZZZZ", timeout=30) as phone:
        await phone.load_page("/join")
        statuses = []
        for i in range(n):
            phone.base_url = (first, second)[i % 2]
            phone.code = _WRONG[i]
            statuses.append((await phone.poll()).status)
        return statuses


def test_counting_in_memory_sweeps_once_a_second_and_never_shows_an_expired_entry(
        monkeypatch):
    """MemoryCounts: a burst of writes starts one sweeping thread, not one per 10 ms, and a
    read sees an entry expire at its time, whether or not a sweep has run."""
    import limits.storage.memory as memory

    from web.limits import MemoryCounts

    now = [1_000.0]
    monkeypatch.setattr(memory.time, "time", lambda: now[0])
    store = MemoryCounts()
    store.timer.join()  # the library's own first sweep, 10 ms after it is made
    store.incr("found", 30)
    sweeper = store.timer
    assert sweeper.is_alive() and sweeper.interval == MemoryCounts.SWEEP_S
    for i in range(200):
        store.incr(f"phone-{i}", 60)
    assert store.timer is sweeper  # still the one sweep
    assert store.get("found") == 1
    now[0] += 30
    assert store.get("found") == 0 and store.get("phone-7") == 1
    sweeper.cancel()


def test_rate_limit_keys_are_hashed_once_and_stay_the_same():
    limits = web.Limits(web.limits.MemoryCounts(), secret=b"a secret")
    first = limits.key("join", "device", "abc")
    assert limits.key("join", "device", "abc") == first
    assert limits.key("join", "device", "abd") != first
    assert "abc" not in first and len(first) == 32
    other = web.Limits(web.limits.MemoryCounts(), secret=b"another secret")
    assert other.key("join", "device", "abc") != first
