"""The lecture-hall load harness: servers, simulated phones, the projector, the database check.

A run (:func:`run_load`) sets up a poll on the target's database, starts a
dashboard session that keeps refreshing (the projector), lets ``students``
phones arrive, vote and wait, samples the server's CPU, then checks the
database. ``bench/load.py`` is its command line and report writer; the smoke
test (``tests/test_load_smoke.py``) uses it as a library.

* **Phones** (:class:`tests.support.phone_client.PhoneStudent`, plain HTTP):
  each arrives at a uniform time in the burst window (``spread_s``), opens the page
  as a browser does (``/join/CODE`` with its device cookie, then the script's
  ``GET /api/poll/CODE?me=1``: the state with this device's receipt), taps
  ``vote_delay_s`` later (randomized on the device from the round's sampling
  weights, POSTed with the page's Origin and a fresh submission id), reads the
  receipt, then waits ``wait_s`` like a phone: long-polls with ``?wait=50&me=1`` and
  ``If-None-Match``. Timed: join (those two requests) and tap -> receipt.
* **The projector** (:class:`Projector`): an instructor's dashboard session on
  Streamlit's own websocket protocol (``tests/support/protocol.py``) showing the
  run's question with results hidden: it reruns the live panel's fragment as
  often as the page asks (``run_every``) and reads the "Reports received"
  count it shows. After the run, each shown count is set against the stored
  reports' ``created_at``: the *trail* of a refresh is how long the oldest report
  it does not count had already been stored when the count appeared.
* **Server cost**: user + system CPU of the server process(es) from
  ``/proc/<pid>/stat``, sampled twice a second (busiest 2 s), and peak RSS.
  The projector's own share is measured before the phones arrive (the server
  serving only the dashboard) and reported apart.
* **Database check**: one stored report per phone that got a receipt, the
  answer it sent, none lost, none duplicated (as the old harness did).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import os
import random
import re
import resource
import secrets
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.cluster import Cluster, Server, running_cluster, running_server
from tests.support.db import count_reports
from tests.support.phone_client import PhoneStudent
from tests.support.protocol import ProtocolError, Tab

__all__ = ["DIE", "INSTRUCTOR_KEY", "FloorPoll", "LoadConfig", "LoadReport", "Outcome",
           "Projector", "Propagation", "Target", "cpu_burner", "floor_target", "nearest_rank",
           "peak_cores", "pg_scratch_url", "pinned", "propagation_probe", "run_load", "simulate",
           "target"]

DIE = {"design": "die", "faces": 4, "truthful": 3}
DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
LOAD_DATABASE = "ldp_load"
INSTRUCTOR_KEY = "load-test-instructor-key"
GOAL_P95_S = 1.0


# -- configuration and results ---------------------------------------------------------------
@dataclass(frozen=True)
class LoadConfig:
    """One load run. Times in seconds."""

    students: int = 1500
    spread_s: float = 20.0
    vote_delay_s: tuple[float, float] = (2.0, 10.0)
    wait_s: float = 60.0  # after the receipt, wait like a phone (long-poll)
    projector: bool = True
    projector_baseline_s: float = 6.0  # the dashboard alone, before the phones arrive
    seed: int | None = None
    step_timeout_s: float = 60.0
    max_run_s: float = 900.0

    def __post_init__(self) -> None:
        if not 1 <= self.students <= 10_000:
            raise ValueError(f"students must be 1..10000, got {self.students}")
        lo, hi = self.vote_delay_s
        if not 0 <= lo <= hi or self.spread_s < 0 or self.wait_s < 0:
            raise ValueError("spread, vote delays and wait must be >= 0 with min <= max")

    def describe(self) -> str:
        lo, hi = self.vote_delay_s
        return (f"arrive uniformly over {self.spread_s:g} s, tap {lo:g}-{hi:g} s after the page "
                f"loaded, then wait {self.wait_s:g} s by long-poll")


@dataclass
class Outcome:
    """One simulated phone."""

    index: int
    device_id: str | None = None
    join_s: float | None = None
    tap_s: float | None = None
    answer: object = None
    submission_id: str | None = None
    receipt: bool = False
    error: str | None = None
    statuses: Counter = field(default_factory=Counter)
    requests: int = 0
    bytes_in: int = 0
    page_bytes: int = 0
    polls: int = 0  # long-polls while waiting
    retries: int = 0  # requests sent again on a new connection (a closed kept-alive one)
    resent_503: int = 0  # requests sent again after a 503 (with a wait)
    resent_reports: int = 0  # reports sent again as the page does (same submission id)
    closed_reports: int = 0  # of those, after a connection closed without an answer
    join_at: float | None = None  # seconds after the run's start
    tap_at: float | None = None


#: The errors of a connection closed without an answer.
_CLOSED = re.compile(r"ServerDisconnected|ClientOSError|Connection reset|Broken pipe")


def nearest_rank(values: Sequence[float], q: float) -> float | None:
    """The q-quantile by the nearest-rank rule (p95 of 300 is the 285th smallest)."""
    if not values:
        return None
    ordered = sorted(values)
    k = max(1, min(len(ordered), -(-int(q * 1000) * len(ordered) // 1000)))
    return ordered[k - 1]


@dataclass
class ProjectorLog:
    """What the dashboard showed: (wall-clock time the count arrived, count) per refresh."""

    shown: list[tuple[float, int]] = field(default_factory=list)
    refresh_s: list[float] = field(default_factory=list)  # time each fragment run took
    interval_s: float | None = None
    errors: list[str] = field(default_factory=list)


@dataclass
class LoadReport:
    config: LoadConfig
    label: str
    outcomes: list[Outcome]
    wall_s: float
    server_cpu_s: float | None
    peak_rss_mb: float | None
    harness_cpu_s: float
    nginx_cpu_s: float | None = None
    server_cpu_peak_cores: float | None = None  # busiest 2 s of the run
    projector_cpu_per_s: float | None = None  # server CPU per second with only the dashboard
    projector: ProjectorLog | None = None
    trails_s: list[float] = field(default_factory=list)
    stored: int = 0
    students_with_report: int = 0
    lost: int = 0
    duplicated: int = 0
    wrong_answer: int = 0
    stored_without_receipt: int = 0
    load_avg: tuple[float, float] = (0.0, 0.0)
    #: The connection guard's closes and 503s over the run, by kind (web.serving.SAID),
    #: summed from the servers' summary lines.
    guard: Counter = field(default_factory=Counter)

    def joins(self) -> list[float]:
        return [o.join_s for o in self.outcomes if o.join_s is not None]

    def taps(self) -> list[float]:
        return [o.tap_s for o in self.outcomes if o.tap_s is not None and o.receipt]

    def stat(self, which: str, q: float | str) -> float | None:
        values = self.joins() if which == "join" else self.taps()
        if q == "max":
            return max(values) if values else None
        return nearest_rank(values, float(q))

    @property
    def errors(self) -> int:
        return sum(1 for o in self.outcomes if o.error)

    @property
    def closed_unanswered(self) -> int:
        """Requests whose connection the server closed without an answer, as the phones
        saw it: sent again on a new connection, a report sent again after one, or the
        phone's last error."""
        return sum(o.retries + o.closed_reports + bool(o.error and _CLOSED.search(o.error))
                   for o in self.outcomes)

    def error_kinds(self) -> Counter:
        return Counter((o.error or "").split(":")[0] for o in self.outcomes if o.error)

    @property
    def exactly_one_each(self) -> bool:
        n = self.config.students
        return self.stored == n and self.students_with_report == n and self.duplicated == 0

    @property
    def cpu_ms_per_student(self) -> float | None:
        if self.server_cpu_s is None:
            return None
        return 1000 * self.server_cpu_s / self.config.students

    @property
    def phone_cpu_ms_per_student(self) -> float | None:
        """Server CPU per student without the projector's share (its rate times the wall)."""
        if self.server_cpu_s is None or self.projector_cpu_per_s is None:
            return None
        return 1000 * max(0.0, self.server_cpu_s - self.projector_cpu_per_s * self.wall_s) \
            / self.config.students

    def passes(self, goal_p95_s: float = GOAL_P95_S) -> bool:
        p95 = self.stat("tap", 0.95)
        return (p95 is not None and p95 <= goal_p95_s and self.errors == 0
                and self.lost == 0 and self.duplicated == 0 and self.exactly_one_each)

    def summary(self) -> dict:
        def r(v: float | None, nd: int = 2) -> float | None:
            return None if v is None else round(v, nd)

        statuses: Counter = Counter()
        for o in self.outcomes:
            statuses.update(o.statuses)
        pages = [o.page_bytes for o in self.outcomes if o.page_bytes]
        out = {
            "label": self.label, "students": self.config.students,
            "wait_s": self.config.wait_s, "wall_s": r(self.wall_s),
            "server_cpu_s": r(self.server_cpu_s),
            "cpu_ms_per_student": r(self.cpu_ms_per_student),
            "phone_cpu_ms_per_student": r(self.phone_cpu_ms_per_student),
            "projector_cpu_per_s": r(self.projector_cpu_per_s, 3),
            "peak_rss_mb": r(self.peak_rss_mb, 1),
            "harness_cpu_s": r(self.harness_cpu_s),
            "nginx_cpu_s": r(self.nginx_cpu_s),
            "server_cpu_peak_cores": r(self.server_cpu_peak_cores),
            "errors": self.errors, "error_kinds": dict(self.error_kinds()),
            "statuses": {str(k): v for k, v in sorted(statuses.items())},
            "requests": sum(o.requests for o in self.outcomes),
            "long_polls": sum(o.polls for o in self.outcomes),
            "retries": sum(o.retries for o in self.outcomes),
            "resent_503": sum(o.resent_503 for o in self.outcomes),
            "resent_reports": sum(o.resent_reports for o in self.outcomes),
            "closed_unanswered": self.closed_unanswered,
            "kb_per_student": r(sum(o.bytes_in for o in self.outcomes) / 1024
                                / max(1, len(self.outcomes)), 1),
            "page_kb": r(statistics_median(pages) / 1024, 1) if pages else None,
            "stored": self.stored, "students_with_report": self.students_with_report,
            "lost": self.lost, "duplicated": self.duplicated, "wrong_answer": self.wrong_answer,
            "stored_without_receipt": self.stored_without_receipt,
            "load_avg": [round(x, 1) for x in self.load_avg],
            "guard": dict(self.guard),
            "pass": self.passes(),
        }
        for which in ("join", "tap"):
            for q, name in ((0.5, "p50"), (0.95, "p95"), ("max", "max")):
                out[f"{which}_{name}_s"] = r(self.stat(which, q), 3)
        pj = self.projector
        if pj is not None:
            gaps = [b[0] - a[0] for a, b in itertools.pairwise(pj.shown)]
            out["projector"] = {
                "refreshes": len(pj.shown), "interval_s": pj.interval_s,
                "errors": len(pj.errors), "first_error": pj.errors[0] if pj.errors else None,
                "trail_max_s": r(max(self.trails_s), 3) if self.trails_s else None,
                "trail_p95_s": r(nearest_rank(self.trails_s, 0.95), 3),
                "gap_p50_s": r(nearest_rank(gaps, 0.5), 3),
                "gap_max_s": r(max(gaps), 3) if gaps else None,
                "refresh_p95_s": r(nearest_rank(pj.refresh_s, 0.95), 3),
                "last_shown": pj.shown[-1][1] if pj.shown else None,
            }
        return out


def statistics_median(values: Sequence[float]) -> float:
    import statistics

    return statistics.median(values)


# -- the simulated phones ----------------------------------------------------------------------
async def _phone(o: Outcome, s: PhoneStudent, cfg: LoadConfig, start_at: float, vote_after: float,
                 truth: int, t0: float) -> None:
    try:
        await asyncio.sleep(max(0.0, t0 + start_at - time.perf_counter()))
        began = time.perf_counter()
        o.join_at = began - t0
        page, state = await s.open_page()  # the page, then the state with /me's answer
        o.page_bytes = s.requests[0].body_bytes if s.requests else 0
        o.device_id = s.device_id
        if page.status != 200:
            o.error = f"page: HTTP {page.status}"
            return
        o.join_s = time.perf_counter() - began
        if state.status != 200 or s.question is None or s.question.get("state") != "open":
            o.error = f"state: HTTP {state.status} {state.body[:120]!r}"
            return
        await asyncio.sleep(vote_after)
        began = time.perf_counter()
        o.tap_at = began - t0
        resp = await s.vote_like_a_phone(truth)
        o.tap_s = time.perf_counter() - began
        o.answer = s.body["answer"] if s.body else None
        o.submission_id = s.submission_id
        o.receipt = resp.status == 200 and bool(s.receipt)
        if not o.receipt:
            o.error = f"report: HTTP {resp.status} {resp.body[:160]!r}"
            return
        before = len(s.requests)
        await s.wait_like_a_phone(cfg.wait_s)
        o.polls = len(s.requests) - before
    except (aiohttp_errors() + (OSError, asyncio.TimeoutError)) as exc:
        if o.error is None:
            step = "join" if o.join_s is None else "tap" if not o.receipt else "wait"
            o.error = f"{step} failed: {type(exc).__name__}: {exc}"[:300]
    finally:
        o.statuses.update(s.statuses())
        o.requests = len(s.requests)
        o.bytes_in = s.bytes_in
        o.retries = s.retries
        o.resent_503 = s.resent_503
        o.resent_reports = s.resent_reports
        o.closed_reports = s.closed_reports
        await s.aclose()


def aiohttp_errors() -> tuple[type[BaseException], ...]:
    import aiohttp

    return (aiohttp.ClientError,)


async def _sample_cpu(probe: Callable[[], float | None], samples: list[tuple[float, float]],
                      stop: asyncio.Event, every: float = 0.5) -> None:
    while not stop.is_set():
        value = probe()
        if value is not None:
            samples.append((time.perf_counter(), value))
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), every)


def peak_cores(samples: Sequence[tuple[float, float]], window: float = 2.0) -> float | None:
    """The largest CPU use over any ``window`` seconds, in cores (1.0 = one core busy)."""
    best, j = None, 0
    for i in range(len(samples)):
        while j < len(samples) and samples[j][0] - samples[i][0] < window:
            j += 1
        if j == len(samples):
            break
        (t0, c0), (t1, c1) = samples[i], samples[j]
        use = (c1 - c0) / (t1 - t0)
        best = use if best is None else max(best, use)
    return best


async def simulate(url: str, code: str, cfg: LoadConfig,
                   cpu_probe: Callable[[], float | None] | None = None,
                   cpu_samples: list[tuple[float, float]] | None = None
                   ) -> tuple[list[Outcome], float]:
    """Run ``cfg.students`` phones against ``url``; return their outcomes and the wall time."""
    rng = random.Random(cfg.seed)
    outcomes = [Outcome(i) for i in range(cfg.students)]
    t0 = time.perf_counter() + 0.2
    stop_sampling = asyncio.Event()
    sampler = None
    if cpu_probe is not None and cpu_samples is not None:
        sampler = asyncio.create_task(_sample_cpu(cpu_probe, cpu_samples, stop_sampling))
    tasks = []
    for o in outcomes:
        start = rng.uniform(0, cfg.spread_s)
        after = rng.uniform(*cfg.vote_delay_s)
        truth = rng.randrange(2)
        phone = PhoneStudent(url, code, timeout=cfg.step_timeout_s,
                             rng=random.Random(rng.getrandbits(64)), resend_503=True)
        tasks.append(asyncio.create_task(_phone(o, phone, cfg, start, after, truth, t0)))
    try:
        await asyncio.wait_for(asyncio.gather(*tasks), cfg.max_run_s)
    except TimeoutError:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for o in outcomes:
            if o.error is None and not o.receipt:
                o.error = f"run limit: not done within {cfg.max_run_s:g} s"
    finally:
        wall = time.perf_counter() - t0
        stop_sampling.set()
        if sampler is not None:
            await sampler
    return outcomes, wall


# -- the projector -----------------------------------------------------------------------------
def instructor_session(base_url: str, key: str = INSTRUCTOR_KEY) -> str:
    """Log in on the app's form (a POST, as a browser does) and return the session cookie."""
    import http.client
    from urllib.parse import urlencode, urlsplit

    import web

    url = urlsplit(base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    try:
        conn.request("POST", "/auth/login", body=urlencode({"key": key}),
                     headers={"Origin": base_url.rstrip("/"),
                              "Content-Type": "application/x-www-form-urlencoded"})
        response = conn.getresponse()
        response.read()
        for name, value in response.getheaders():
            if name.lower() == "set-cookie" and value.startswith(f"{web.INSTRUCTOR_COOKIE}="):
                return value.split(";")[0].split("=", 1)[1]
        raise RuntimeError(f"instructor login at {base_url} failed: HTTP {response.status}")
    finally:
        conn.close()


class Projector(Tab):
    """The instructor's dashboard in projection mode, as a headless Streamlit session."""

    COUNT_LABEL = "Reports received"

    def __init__(self, base_url: str, poll_id: int, question_id: int, *,
                 key: str = INSTRUCTOR_KEY, timeout: float = 60.0) -> None:
        import web

        super().__init__(base_url, f"projector=1&pid={poll_id}&qid={question_id}",
                         cookies={web.INSTRUCTOR_COOKIE: instructor_session(base_url, key)},
                         timeout=timeout)

    def rerun_message(self, *args, **kwargs):
        msg = super().rerun_message(*args, **kwargs)
        msg.rerun_script.page_name = "dashboard"
        msg.rerun_script.context_info.url = f"{self.base_url}/dashboard?{self.query_string}"
        return msg

    async def load_page(self) -> int:
        from tests.support.protocol import http_get

        status, set_cookies, _ = await http_get(
            self.base_url, f"/dashboard?{self.query_string}", cookies=self.cookies,
            timeout=self.timeout)
        self.cookies.update(set_cookies)
        return status

    @classmethod
    def count(cls, run) -> int | None:
        """The "Reports received" count the run showed, or None."""
        for el in run.elements:
            if el.WhichOneof("type") == "metric" and el.metric.label == cls.COUNT_LABEL:
                return int(el.metric.body.replace(",", "").replace("\u2009", "") or 0)
        return None

    async def watch(self, log: ProjectorLog, stop: asyncio.Event) -> None:
        """Open the dashboard, then rerun its live fragment as the page asks until ``stop``."""
        try:
            await self.open()
            first = await self.run()
            n = self.count(first)
            if n is None:
                log.errors.append("no 'Reports received' count on the dashboard: "
                                  + " | ".join(first.texts())[:300])
                return
            log.shown.append((time.time(), n))
            if not self.auto_reruns:
                log.errors.append("the dashboard asked for no automatic refresh")
                return
            # Each fragment that asks for it reruns on its own timer, as the browser's do:
            # the live panel (it shows the count) and the window's check that it still
            # shows the lecture (it draws nothing).
            timers = dict(self.auto_reruns)
            counting: set[str] = set()
            for fid in timers:
                if self.count(await self.run(fragment_id=fid, auto=True)) is not None:
                    counting.add(fid)
            if not counting:
                log.errors.append("no automatic refresh shows the count")
                return
            log.interval_s = min(timers[fid] for fid in counting)
            await self._follow(log, stop, timers, counting)
        except (TimeoutError, ProtocolError, OSError) as exc:
            log.errors.append(f"{type(exc).__name__}: {exc}"[:300])
        finally:
            await self.close()

    async def _follow(self, log: ProjectorLog, stop: asyncio.Event, timers: dict[str, float],
                      counting: set[str]) -> None:
        """Rerun each fragment on its own timer until ``stop``; log what the counting ones
        show and how long each refresh took."""
        due = {fid: time.perf_counter() + interval for fid, interval in timers.items()}
        while not stop.is_set():
            fid = min(due, key=due.__getitem__)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), max(0.0, due[fid] - time.perf_counter()))
            if stop.is_set():
                break
            began = time.perf_counter()
            # The browser's timer: every ``interval`` after the previous tick was sent.
            due[fid] = began + timers[fid]
            run = await self.run(fragment_id=fid, auto=True)
            if fid not in counting:
                continue
            log.refresh_s.append(time.perf_counter() - began)
            n = self.count(run)
            if n is None:
                log.errors.append("a refresh showed no count: " + " | ".join(run.texts())[:200])
            else:
                log.shown.append((time.time(), n))


def trails(shown: Sequence[tuple[float, int]], stored_at: Sequence[float]) -> list[float]:
    """For each refresh: how long the oldest stored report the count leaves out had been
    stored when the count appeared (0 when it left out none)."""
    ordered = sorted(stored_at)
    out = []
    for t, n in shown:
        missing_since = ordered[n] if n < len(ordered) else None
        out.append(max(0.0, t - missing_since) if missing_since is not None
                   and missing_since < t else 0.0)
    return out


# -- servers and databases -------------------------------------------------------------------
@dataclass(frozen=True)
class FloorPoll:
    """What the floor app serves: the poll's join code, and the SQLite file it stores
    reports in."""

    code: str
    db_path: Path


@dataclass
class Target:
    """Where the phones go, how to read the server's CPU, and the database behind it."""

    url: str
    database_url: str
    label: str
    servers: list[Server] = field(default_factory=list)
    cluster: Cluster | None = None
    #: Set for the floor app (bench/floor_app.py): its poll's code and its reports' file.
    floor: FloorPoll | None = None

    def cpu_seconds(self) -> float | None:
        if not self.servers:
            return None
        total = 0.0
        for s in self.servers:
            with contextlib.suppress(OSError, ValueError, IndexError):
                total += s.cpu_seconds()
        return total

    def peak_rss_mb(self) -> float | None:
        values = []
        for s in self.servers:
            with contextlib.suppress(OSError, ValueError):
                values.append(s.peak_rss_bytes() / 2 ** 20)
        return max(values) if values else None

    def nginx_cpu_seconds(self) -> float | None:
        return None if self.cluster is None else self.cluster.nginx_cpu_seconds()


def pg_base_url() -> str:
    from classroom.config import normalize_url

    return normalize_url(os.environ.get("LDP_TEST_POSTGRES_URL", "").strip() or DEFAULT_PG)


@contextlib.contextmanager
def pg_scratch_url(base_url: str | None = None, database: str = LOAD_DATABASE) -> Iterator[str]:
    """A fresh schema in database ``ldp_load`` (created if missing), dropped afterwards."""
    import sqlalchemy as sa
    from sqlalchemy.engine import make_url

    base = make_url(base_url or pg_base_url())
    admin = sa.create_engine(base, poolclass=sa.NullPool, isolation_level="AUTOCOMMIT",
                             connect_args={"connect_timeout": 5})
    try:
        with admin.connect() as conn:
            exists = conn.execute(sa.text("SELECT 1 FROM pg_database WHERE datname = :d"),
                                  {"d": database}).first()
            if not exists:
                with contextlib.suppress(sa.exc.ProgrammingError):  # created concurrently
                    conn.execute(sa.text(f'CREATE DATABASE "{database}"'))
    finally:
        admin.dispose()
    db_url = base.set(database=database)
    schema = f"load_{secrets.token_hex(5)}"
    engine = sa.create_engine(db_url, poolclass=sa.NullPool, connect_args={"connect_timeout": 5})
    try:
        with engine.begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        yield db_url.update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(
            hide_password=False)
    finally:
        with contextlib.suppress(Exception), engine.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        engine.dispose()


@contextlib.contextmanager
def cpu_burner(processes: int = 1) -> Iterator[list[int]]:
    """``processes`` processes that each keep a core busy (other work on the machine)
    while the block runs; yields their pids."""
    import subprocess

    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                              stdin=subprocess.DEVNULL) for _ in range(processes)]
    try:
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            p.kill()
            p.wait()


def _set_affinity(cpus: set[int]) -> None:
    """Every thread of this process on ``cpus`` (``sched_setaffinity`` is per thread on
    Linux; threads started later inherit it from the thread that starts them)."""
    for tid in os.listdir("/proc/self/task"):
        with contextlib.suppress(OSError):
            os.sched_setaffinity(int(tid), cpus)


@contextlib.contextmanager
def pinned(cpus: set[int] | None) -> Iterator[None]:
    """This process (the simulated phones, the projector) on ``cpus`` while the block
    runs, then back where it was; None leaves it alone."""
    if cpus is None:
        yield
        return
    before = os.sched_getaffinity(0)
    _set_affinity(cpus)
    try:
        yield
    finally:
        _set_affinity(before)


@contextlib.contextmanager
def target(*, processes: int = 1, database: str = "sqlite", nginx: bool | None = None,
           url: str | None = None, database_url: str | None = None,
           server_pids: Sequence[int] = (), env: dict[str, str] | None = None,
           server_cpus: str | None = None) -> Iterator[Target]:
    """Start what a run needs (or describe an existing server given by ``url``).
    ``server_cpus`` (one process, no nginx): start it under ``taskset -c server_cpus``."""
    if url:
        if not database_url:
            raise SystemExit("--url needs --database-url (the server's database, to set up "
                             "the poll and check the stored reports)")
        servers = [Server(url, pid, Path("/dev/null")) for pid in server_pids]
        yield Target(url, database_url, f"{url}", servers)
        return
    with contextlib.ExitStack() as stack:
        data = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ldp-load-")))
        if database == "sqlite":
            db_url, db_label = f"sqlite:///{data / 'classroom.db'}", "SQLite"
        elif database == "postgresql":
            db_url, db_label = stack.enter_context(pg_scratch_url()), "PostgreSQL"
        else:
            db_url, db_label = database, "given database"
        child_env = {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_DATABASE_URL": db_url,
                     "LDP_CLASSROOM_INSTRUCTOR_KEY": INSTRUCTOR_KEY, **(env or {})}
        use_nginx = processes > 1 if nginx is None else nginx
        if use_nginx:
            cluster = stack.enter_context(running_cluster(processes, child_env))
            label = f"{processes} process{'es' if processes > 1 else ''} behind nginx, {db_label}"
            yield Target(cluster.url, db_url, label, cluster.servers, cluster)
        else:
            if processes != 1:
                raise SystemExit("several processes need nginx")
            launcher = None if server_cpus is None else [
                "taskset", "-c", server_cpus, sys.executable, "-m", "streamlit", "run", "app.py"]
            server = stack.enter_context(running_server(child_env, log_path=data / "server.log",
                                                        launcher=launcher))
            where = "" if server_cpus is None else \
                " on core " + ",".join(map(str, sorted(os.sched_getaffinity(server.pid))))
            yield Target(server.url, db_url, f"1 process{where}, {db_label}", [server])


@contextlib.contextmanager
def floor_target(*, processes: int = 1, server_cpus: str | None = None) -> Iterator[Target]:
    """The floor app (``bench/floor_app.py``, ``processes`` workers on one port) serving
    the state the app's own code builds for a poll of the class exercise, and storing
    reports in a SQLite file of its own. ``server_cpus``: under ``taskset -c``."""
    import subprocess

    from bench import floor_app
    from bench.cluster import APP_ROOT, ServerDidNotStart, _stop_group, free_port, healthy
    from classroom.service import PollService
    from classroom.store import Store
    from phone.state import build_snapshot

    with tempfile.TemporaryDirectory(prefix="ldp-floor-") as tmp:
        data = Path(tmp)
        store = Store(f"sqlite:///{data / 'classroom.db'}")
        try:
            poll, _ = exercise(PollService.on(store), "floor")
            (data / "state.json").write_bytes(build_snapshot(PollService.on(store),
                                                                poll.join_code).body)
        finally:
            store.close()
        port, log_path = free_port(), data / "floor.log"
        cmd = floor_app.command(port, workers=processes)
        if server_cpus is not None:
            cmd = ["taskset", "-c", server_cpus, *cmd]
        env = {**os.environ, "LDP_FLOOR_STATE": str(data / "state.json"),
               "LDP_FLOOR_DB": str(data / "floor.db"), "PYTHONUNBUFFERED": "1"}
        with log_path.open("wb") as log:
            proc = subprocess.Popen(cmd, cwd=APP_ROOT, env=env, stdout=log,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        try:
            pids = _floor_pids(proc, processes, url, log_path, ServerDidNotStart, healthy)
            label = (f"floor app, {processes} process{'es' if processes > 1 else ''}"
                     + ("" if server_cpus is None else f" on core {server_cpus}"))
            yield Target(url, "", label, [Server(url, pid, log_path) for pid in pids],
                         floor=FloorPoll(poll.join_code, data / "floor.db"))
        finally:
            _stop_group(proc)


def _floor_pids(proc, processes: int, url: str, log_path: Path, error: type[Exception],
                healthy: Callable[[str], bool]) -> list[int]:
    """Wait until the floor app answers (and its workers run); its process ids."""
    deadline = time.monotonic() + 60
    children: list[int] = []
    while not healthy(url) or (processes > 1 and len(children) < processes):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise error("the floor app did not start:\n" + log_path.read_text()[-2000:])
        time.sleep(0.1)
        with contextlib.suppress(OSError, ValueError):
            children = [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
                        .read_text().split()]
    return [proc.pid, *children]


@dataclass
class Propagation:
    """How long a question change took to reach phones long-polling each process: seconds
    from the change's commit to each phone's answer, per process URL."""

    seconds: dict[str, list[float]] = field(default_factory=dict)
    changes: int = 0
    missed: int = 0  # phones that had not seen a change when the next one was made

    def all(self) -> list[float]:
        return [x for xs in self.seconds.values() for x in xs]

    def summary(self) -> dict:
        values = self.all()
        return {"changes": self.changes, "answers": len(values), "missed": self.missed,
                "p50_s": nearest_rank(values, 0.5), "p95_s": nearest_rank(values, 0.95),
                "max_s": max(values) if values else None,
                "per_process_max_s": {u: max(v) if v else None
                                      for u, v in self.seconds.items()}}


def propagation_probe(tgt: Target, *, phones_per_process: int = 10, changes: int = 10,
                      gap_s: tuple[float, float] = (2.0, 4.0), seed: int = 0
                      ) -> tuple[Propagation, Callable[[], Coroutine[Any, Any, None]]]:
    """A poll of its own on the target's database, and a coroutine that, while it runs,
    holds ``phones_per_process`` long-polling phones on each process (directly, not
    through nginx) and makes ``changes`` question changes (the next question opened, by
    a service in this process, as the dashboard's process would), ``gap_s`` apart; the
    latencies land in the returned :class:`Propagation`."""
    from classroom.service import PollService
    from classroom.store import Store

    store = Store(tgt.database_url)
    service = PollService.on(store)
    poll, first = exercise(service, "propagation")
    out = Propagation()

    def change() -> float:
        q = service.polls.add_question(poll.id, f"Change {out.changes + 1}?",
                                       options=("No", "Yes"), design_params=DIE)
        service.running.open_question(q.id)
        return time.perf_counter()

    async def watch(url: str, changed: list[float]) -> None:
        async with PhoneStudent(url, poll.join_code, timeout=120) as phone:
            await phone.poll()
            while True:
                resp = await phone.poll(wait=50)
                if resp.status == 200 and changed:
                    out.seconds.setdefault(url, []).append(time.perf_counter() - changed[-1])

    async def run() -> None:
        rng = random.Random(seed)
        changed: list[float] = []
        urls = [s.url for s in tgt.servers] or [tgt.url]
        tasks = [asyncio.create_task(watch(u, changed)) for u in urls
                 for _ in range(phones_per_process)]
        try:
            await asyncio.sleep(3.0)  # every phone holds its long-poll
            for _ in range(changes):
                before = len(out.all())
                changed.append(await asyncio.to_thread(change))
                out.changes += 1
                await asyncio.sleep(rng.uniform(*gap_s))
                out.missed += len(tasks) - (len(out.all()) - before)
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            store.close()

    return out, run


def exercise(service, title: str):
    """A poll with the class exercise's question, open."""
    poll = service.polls.create_poll(title)
    q = service.polls.add_question(poll.id, "Vanilla (1) or chocolate (0)?",
                                         options=("Chocolate", "Vanilla"), design_params=DIE)
    return poll, service.running.open_question(q.id)


async def _warm_up(url: str, code: str) -> None:
    """One phone on another poll: the process imports the routes and opens its pool."""
    async with PhoneStudent(url, code, timeout=60) as s:
        await s.join()
        resp = await s.vote(1)
        if resp.status != 200:
            raise RuntimeError(f"warm-up vote on {url} failed: HTTP {resp.status} "
                               f"{resp.body[:300]!r}")


def stored_times(store, question_id: int) -> list[float]:
    """When each report of the question was stored (POSIX seconds)."""
    import sqlalchemy as sa

    from classroom import store as st

    q = sa.select(st.reports.c.created_at).join(
        st.rounds, st.rounds.c.id == st.reports.c.round_id).where(
        st.rounds.c.question_id == question_id)
    with store.transaction(write=False) as conn:
        rows = conn.execute(q).scalars().all()
    out = []
    for ts in rows:
        if ts.tzinfo is None:  # SQLite hands back naive UTC

            ts = ts.replace(tzinfo=UTC)
        out.append(ts.timestamp())
    return out


def run_load(tgt: Target, cfg: LoadConfig, *, label: str | None = None,
             alongside: Callable[[], Coroutine[Any, Any, Any]] | None = None) -> LoadReport:
    """Set up a poll on the target's database, run the phones and the projector, check the
    database. ``alongside``: a coroutine run with the phones (and cancelled when they are
    done), e.g. :func:`propagation`'s."""
    from classroom.service import PollService
    from classroom.store import Store

    if tgt.floor is not None:
        return _run_floor(tgt, cfg, label, alongside)
    store = Store(tgt.database_url)
    try:
        service = PollService.on(store)
        _, warm_q = exercise(service, "warm-up")
        warm_code = service.polls.poll(warm_q.poll_id).join_code
        # Every process loads the routes and opens its pool before the clock starts
        # (directly, not through nginx, so none is missed).
        for url in [s.url for s in tgt.servers] or [tgt.url]:
            asyncio.run(_warm_up(url, warm_code))
        poll, question = exercise(service, f"load {cfg.students}")
        report = asyncio.run(_run(tgt, cfg, poll.join_code, (poll.id, question.id),
                                  label or tgt.label, alongside))
        check_database(service, question.id, report)
        report.guard = guard_counts(s.log_path for s in tgt.servers)
        if report.projector is not None and report.projector.shown:
            report.trails_s = trails(report.projector.shown, stored_times(store, question.id))
        return report
    finally:
        store.close()


def _run_floor(tgt: Target, cfg: LoadConfig, label: str | None,
               alongside: Callable[[], Coroutine[Any, Any, Any]] | None) -> LoadReport:
    """The same phones against the floor app (no projector: it has no dashboard)."""
    import sqlite3

    assert tgt.floor is not None
    asyncio.run(_warm_up(tgt.url, tgt.floor.code))
    with contextlib.closing(sqlite3.connect(tgt.floor.db_path)) as conn, conn:
        conn.execute("DELETE FROM reports")  # the warm-up's
    cfg = dataclasses.replace(cfg, projector=False)
    report = asyncio.run(_run(tgt, cfg, tgt.floor.code, None, label or tgt.label, alongside))
    with contextlib.closing(sqlite3.connect(tgt.floor.db_path)) as conn:
        rows = dict(conn.execute("SELECT submission_id, device FROM reports").fetchall())
    report.stored = len(rows)
    report.students_with_report = sum(1 for o in report.outcomes if o.submission_id in rows)
    report.lost = sum(1 for o in report.outcomes if o.receipt and o.submission_id not in rows)
    report.stored_without_receipt = sum(1 for o in report.outcomes
                                        if not o.receipt and o.submission_id in rows)
    report.duplicated = len(rows) - len(set(rows.values()))
    return report


async def _run(tgt: Target, cfg: LoadConfig, code: str, shown: tuple[int, int] | None,
               label: str, alongside: Callable[[], Coroutine[Any, Any, Any]] | None = None
               ) -> LoadReport:
    """The phones on poll ``code``; with ``cfg.projector``, a dashboard showing
    ``shown`` (poll id, question id)."""
    log = ProjectorLog() if cfg.projector and shown is not None else None
    stop = asyncio.Event()
    watcher = None
    projector_rate = None
    if log is not None and shown is not None:
        watcher = asyncio.create_task(
            Projector(tgt.url, *shown, timeout=cfg.step_timeout_s).watch(log, stop))
        # Until its first refresh, then a baseline: the server with only the dashboard.
        deadline = time.perf_counter() + 60
        while not log.shown and not log.errors and time.perf_counter() < deadline:
            await asyncio.sleep(0.1)
        c0, t0 = tgt.cpu_seconds(), time.perf_counter()
        await asyncio.sleep(cfg.projector_baseline_s)
        c1, t1 = tgt.cpu_seconds(), time.perf_counter()
        if c0 is not None and c1 is not None and log.shown:
            projector_rate = (c1 - c0) / (t1 - t0)
    load_start = os.getloadavg()[0]
    cpu0, nginx0 = tgt.cpu_seconds(), tgt.nginx_cpu_seconds()
    me0 = resource.getrusage(resource.RUSAGE_SELF)
    samples: list[tuple[float, float]] = []
    side = None if alongside is None else asyncio.create_task(alongside())
    outcomes, wall = await simulate(tgt.url, code, cfg, cpu_probe=tgt.cpu_seconds,
                                    cpu_samples=samples)
    if side is not None:
        side.cancel()
        await asyncio.gather(side, return_exceptions=True)
    me1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu1, nginx1 = tgt.cpu_seconds(), tgt.nginx_cpu_seconds()
    if watcher is not None and log is not None:
        # One more refresh after the last phone, so the final count is seen.
        if log.interval_s:
            await asyncio.sleep(log.interval_s + 0.5)
        stop.set()
        await watcher
    return LoadReport(
        config=cfg, label=label, outcomes=outcomes, wall_s=wall,
        server_cpu_s=None if cpu0 is None or cpu1 is None else cpu1 - cpu0,
        peak_rss_mb=tgt.peak_rss_mb(),
        harness_cpu_s=(me1.ru_utime + me1.ru_stime) - (me0.ru_utime + me0.ru_stime),
        nginx_cpu_s=None if nginx0 is None or nginx1 is None else nginx1 - nginx0,
        server_cpu_peak_cores=peak_cores(samples), projector_cpu_per_s=projector_rate,
        projector=log, load_avg=(load_start, os.getloadavg()[0]))


def guard_counts(logs: Iterable[Path]) -> Counter:
    """The connection guard's closes and 503s, by kind, summed over the summary lines the
    servers logged (``web.serving.Door.summary``)."""
    from web.serving import SAID

    found: Counter = Counter()
    pattern = re.compile(r"([\d,]+) (" + "|".join(re.escape(v) for v in SAID.values()) + ")")
    kinds = {v: k for k, v in SAID.items()}
    for path in logs:
        with contextlib.suppress(OSError):
            for line in path.read_text(errors="replace").splitlines():
                if "Server connections in the last" in line:
                    for n, said in pattern.findall(line):
                        found[kinds[said]] += int(n.replace(",", ""))
    return found


def check_database(service, question_id: int, report: LoadReport) -> None:
    """Exactly one stored report per student, holding the answer it sent; none lost."""
    report.stored = count_reports(service.store, question_id)
    with_report = 0
    for o in report.outcomes:
        if not o.device_id:
            continue
        receipt = service.reports.receipt_for(question_id, o.device_id)
        if receipt is None:
            if o.receipt:
                report.lost += 1
            continue
        with_report += 1
        if not o.receipt:
            report.stored_without_receipt += 1
        if o.answer is not None and receipt.answer != str(o.answer):
            report.wrong_answer += 1
    report.students_with_report = with_report
    # Rows beyond one per student (the database allows one per device and round).
    report.duplicated = max(0, report.stored - with_report)
