"""Load harness: a lecture hall of simulated phones on Streamlit's own websocket protocol.

    python bench/load.py --students 300 --arrival burst

Each simulated student is a fresh device: it loads ``/?poll=CODE`` (the app's
middleware sets its ``ldp_device`` cookie), opens ``/_stcore/stream`` with that
cookie, runs the page, finds the vote component and "taps": it sends the
component's trigger value (a randomized 0/1, the design's parameters echoed and
a fresh submission id), exactly as the component's JavaScript does, and waits
for the receipt ("Answer received"). Then it stays connected and, like a phone,
reruns the page's waiting fragment every 5 s until the last student has voted.
The client is ``tests/support/protocol.py``; no browser is involved.

Arrival models (``--arrival``):

* ``burst`` (the realistic one): students arrive uniformly over 20 s
  (``--spread``) and each taps 2 to 10 s after its page has loaded;
* ``once``: everyone loads the page at the same moment and taps as soon as
  the page is there.

Unless given ``--url``, the harness starts its own server(s) on a fresh
database: one ``streamlit run app.py`` on SQLite by default;
``--processes N`` runs ``deploy/run-cluster.sh`` (N processes behind nginx,
sticky on the device cookie) on PostgreSQL; ``--database postgresql`` uses a
throw-away schema in database ``ldp_load`` of ``LDP_TEST_POSTGRES_URL``
(default ``postgresql+psycopg://postgres@127.0.0.1:5432/test``).
``--streamlit-defaults`` undoes the tuned ``.streamlit/config.toml``
(``runner.postScriptGC``, ``server.fileWatcherType``) for comparison.

Reported: time to join and tap-to-receipt (p50, p95, max), errors, the
server's CPU time and peak RSS (``/proc``), and a check of the database
made as part of the run: one stored report per simulated student, the
randomized answer it sent, no acknowledged report lost, none duplicated.
The run ends with ``TARGET`` lines.

``--suite`` runs the measurements behind docs/benchmarks.md (the 300-student
target, the largest class one process serves, the config settings, 1 vs 2
processes, a py-spy profile) and rewrites this script's section there. Parts
can be re-run alone (``--suite sweep``); results are kept in
``bench/results/load.json``.

Use as a library: :func:`run_load` (``tests/test_load_smoke.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import resource
import secrets
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._report import update_doc  # noqa: E402
from bench.cluster import (  # noqa: E402
    STREAMLIT_DEFAULTS,
    Cluster,
    Server,
    running_cluster,
    running_server,
)
from tests.support.protocol import ProtocolError, Student  # noqa: E402

__all__ = ["LoadConfig", "LoadReport", "Outcome", "Target", "pg_scratch_url", "run_load",
           "target", "main"]

DIE = {"design": "die", "faces": 4, "truthful": 3}
DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
LOAD_DATABASE = "ldp_load"
RECEIPT = "Answer received"
GOAL_P95_S = 1.0
BENCH_DOC = ROOT / "docs" / "benchmarks.md"
RESULTS = ROOT / "bench" / "results" / "load.json"


# -- configuration and results ---------------------------------------------------------------
@dataclass(frozen=True)
class LoadConfig:
    """One load run. Times in seconds."""

    students: int = 300
    arrival: str = "burst"  # "burst" | "once"
    spread_s: float = 20.0
    vote_delay_s: tuple[float, float] = (2.0, 10.0)
    fragment_reruns: bool = True
    #: Rerun the waiting fragment this often instead of the interval the page asks for
    #: (to measure what another ``run_every`` would cost, without changing the page).
    fragment_interval_s: float | None = None
    seed: int | None = None
    step_timeout_s: float = 60.0
    max_run_s: float = 600.0

    def __post_init__(self) -> None:
        if not 1 <= self.students <= 5000:
            raise ValueError(f"students must be 1..5000, got {self.students}")
        if self.arrival not in ("burst", "once"):
            raise ValueError(f"arrival must be 'burst' or 'once', got {self.arrival!r}")
        lo, hi = self.vote_delay_s
        if not 0 <= lo <= hi or self.spread_s < 0:
            raise ValueError("spread and vote delays must be >= 0 with min <= max")

    def describe(self) -> str:
        if self.arrival == "once":
            return "all at once (everyone loads the page at t = 0 and taps when it is there)"
        lo, hi = self.vote_delay_s
        return (f"burst (arrive uniformly over {self.spread_s:g} s, tap {lo:g}-{hi:g} s "
                "after the page loaded)")


@dataclass
class Outcome:
    """One simulated student."""

    index: int
    device_id: str | None = None
    join_s: float | None = None
    tap_s: float | None = None
    answer: int | None = None
    submission_id: str | None = None
    receipt: bool = False
    error: str | None = None
    fragment_runs: int = 0
    fragment_errors: int = 0
    join_at: float | None = None  # seconds after the run's start
    tap_at: float | None = None


def nearest_rank(values: Sequence[float], q: float) -> float | None:
    """The q-quantile by the nearest-rank rule (p95 of 300 is the 285th smallest)."""
    if not values:
        return None
    ordered = sorted(values)
    k = max(1, min(len(ordered), -(-int(q * 1000) * len(ordered) // 1000)))
    return ordered[k - 1]


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
    server_main_thread_cpu_s: float | None = None
    server_cpu_peak_cores: float | None = None  # busiest 2 s of the run
    stored: int = 0
    students_with_report: int = 0
    lost: int = 0
    duplicated: int = 0
    wrong_answer: int = 0
    stored_without_receipt: int = 0
    load_avg: tuple[float, float] = (0.0, 0.0)

    # -- latency --------------------------------------------------------------------------
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

    def error_kinds(self) -> Counter:
        return Counter((o.error or "").split(":")[0] for o in self.outcomes if o.error)

    @property
    def fragment_runs(self) -> int:
        return sum(o.fragment_runs for o in self.outcomes)

    @property
    def fragment_errors(self) -> int:
        return sum(o.fragment_errors for o in self.outcomes)

    @property
    def exactly_one_each(self) -> bool:
        n = self.config.students
        return self.stored == n and self.students_with_report == n and self.duplicated == 0

    @property
    def cpu_ms_per_student(self) -> float | None:
        if self.server_cpu_s is None:
            return None
        return 1000 * self.server_cpu_s / self.config.students

    def passes(self, goal_p95_s: float = GOAL_P95_S) -> bool:
        p95 = self.stat("tap", 0.95)
        return (p95 is not None and p95 <= goal_p95_s and self.errors == 0
                and self.lost == 0 and self.duplicated == 0 and self.exactly_one_each)

    def summary(self) -> dict:
        out = {
            "label": self.label, "students": self.config.students,
            "arrival": self.config.arrival, "wall_s": round(self.wall_s, 2),
            "server_cpu_s": None if self.server_cpu_s is None else round(self.server_cpu_s, 2),
            "cpu_ms_per_student": None if self.cpu_ms_per_student is None
            else round(self.cpu_ms_per_student, 1),
            "peak_rss_mb": None if self.peak_rss_mb is None else round(self.peak_rss_mb, 1),
            "harness_cpu_s": round(self.harness_cpu_s, 2),
            "nginx_cpu_s": None if self.nginx_cpu_s is None else round(self.nginx_cpu_s, 2),
            "server_main_thread_cpu_s": None if self.server_main_thread_cpu_s is None
            else round(self.server_main_thread_cpu_s, 2),
            "server_cpu_peak_cores": None if self.server_cpu_peak_cores is None
            else round(self.server_cpu_peak_cores, 2),
            "errors": self.errors, "error_kinds": dict(self.error_kinds()),
            "stored": self.stored, "students_with_report": self.students_with_report,
            "lost": self.lost, "duplicated": self.duplicated, "wrong_answer": self.wrong_answer,
            "stored_without_receipt": self.stored_without_receipt,
            "fragment_runs": self.fragment_runs, "fragment_errors": self.fragment_errors,
            "load_avg": [round(x, 1) for x in self.load_avg],
            "pass": self.passes(),
        }
        for which in ("join", "tap"):
            for q, name in ((0.5, "p50"), (0.95, "p95"), ("max", "max")):
                v = self.stat(which, q)
                out[f"{which}_{name}_s"] = None if v is None else round(v, 3)
        return out


TABLE_HEAD = ("| run | students | join p50 / p95 / max | tap→receipt p50 / p95 / max | errors "
              "| stored (lost, dup.) | server CPU in wall time (per student) | busiest 2 s "
              "| peak RSS | load avg |")
TABLE_RULE = "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"


def _s(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}"


def table_row(s: dict) -> str:
    cpu = "—" if s["server_cpu_s"] is None else \
        f"{s['server_cpu_s']:.1f} s in {s['wall_s']:.0f} s ({s['cpu_ms_per_student']:.0f} ms)"
    if s.get("server_cpu_peak_cores") is not None:
        cpu += f" | {s['server_cpu_peak_cores']:.2f}"
    else:
        cpu += " | —"
    rss = "—" if s["peak_rss_mb"] is None else f"{s['peak_rss_mb']:.0f} MB"
    return (f"| {s['label']} | {s['students']} | {_s(s['join_p50_s'])} / {_s(s['join_p95_s'])} / "
            f"{_s(s['join_max_s'])} s | {_s(s['tap_p50_s'])} / {_s(s['tap_p95_s'])} / "
            f"{_s(s['tap_max_s'])} s | {s['errors']} | {s['stored']} ({s['lost']}, "
            f"{s['duplicated']}) | {cpu} | {rss} | {s['load_avg'][0]:.1f}→{s['load_avg'][1]:.1f} |")


# -- the simulated students --------------------------------------------------------------------
async def _student(o: Outcome, url: str, code: str, cfg: LoadConfig, start_at: float,
                   vote_after: float, answer: int, t0: float, done: asyncio.Event,
                   finished: Callable[[], None]) -> None:
    s = Student(url, code, timeout=cfg.step_timeout_s)
    counted = False
    try:
        await asyncio.sleep(max(0.0, t0 + start_at - time.perf_counter()))
        began = time.perf_counter()
        o.join_at = began - t0
        page = await s.join()
        o.device_id = s.device_id
        o.join_s = time.perf_counter() - began
        if page.component() is None:
            o.error = "no vote component: " + " | ".join(page.texts())[:200]
            return
        await asyncio.sleep(vote_after)
        o.answer = answer
        began = time.perf_counter()
        o.tap_at = began - t0
        run = await s.tap(answer)
        o.tap_s = time.perf_counter() - began
        o.submission_id = s.submission_id
        o.receipt = run.has_text(RECEIPT)
        if run.exceptions():
            o.error = "traceback: " + run.exceptions()[0][:200]
        elif not o.receipt:
            o.error = "no receipt: " + " | ".join(run.alerts())[:200]
        finished()
        counted = True
        # A phone stays on the receipt page, whose fragment polls for the next question.
        while cfg.fragment_reruns and s.auto_reruns and not done.is_set():
            fid, interval = next(iter(s.auto_reruns.items()))
            interval = cfg.fragment_interval_s or interval
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(done.wait(), interval)
            if done.is_set():
                break
            try:
                await s.run(fragment_id=fid, auto=True)
                o.fragment_runs += 1
            except ProtocolError:
                o.fragment_errors += 1
                break
    except (ProtocolError, OSError, asyncio.TimeoutError) as exc:
        if o.error is None:
            o.error = f"{'join' if o.join_s is None else 'tap'} failed: {type(exc).__name__}: {exc}"[:300]
    finally:
        if not counted:
            finished()
        await s.close()


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
    """Run ``cfg.students`` students against ``url``; return their outcomes and the wall time.

    With ``cpu_probe``, the server's CPU seconds are sampled twice a second into
    ``cpu_samples``."""
    rng = random.Random(cfg.seed)
    outcomes = [Outcome(i) for i in range(cfg.students)]
    done = asyncio.Event()
    remaining = [cfg.students]

    def finished() -> None:
        remaining[0] -= 1
        if remaining[0] <= 0:
            done.set()

    t0 = time.perf_counter() + 0.2
    stop_sampling = asyncio.Event()
    sampler = None
    if cpu_probe is not None and cpu_samples is not None:
        sampler = asyncio.create_task(_sample_cpu(cpu_probe, cpu_samples, stop_sampling))
    tasks = []
    for o in outcomes:
        start = 0.0 if cfg.arrival == "once" else rng.uniform(0, cfg.spread_s)
        after = 0.0 if cfg.arrival == "once" else rng.uniform(*cfg.vote_delay_s)
        # The phone randomizes the true answer; to the server any report is 0 or 1.
        answer = rng.randrange(2)
        tasks.append(asyncio.create_task(
            _student(o, url, code, cfg, start, after, answer, t0, done, finished)))
    try:
        await asyncio.wait_for(asyncio.gather(*tasks), cfg.max_run_s)
    except asyncio.TimeoutError:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for o in outcomes:
            if o.error is None and not o.receipt:
                o.error = f"run limit: not done within {cfg.max_run_s:g} s"
    finally:
        stop_sampling.set()
        if sampler is not None:
            await sampler
    return outcomes, time.perf_counter() - t0


# -- servers and databases -------------------------------------------------------------------
@dataclass
class Target:
    """Where the students go, how to read the server's CPU, and the database behind it."""

    url: str
    database_url: str
    label: str
    servers: list[Server] = field(default_factory=list)
    cluster: Cluster | None = None

    def cpu_seconds(self) -> float | None:
        if not self.servers:
            return None
        total = 0.0
        for s in self.servers:
            with contextlib.suppress(OSError, ValueError, IndexError):
                total += s.cpu_seconds()
        return total

    def main_thread_cpu_seconds(self) -> float | None:
        if not self.servers:
            return None
        total = 0.0
        for s in self.servers:
            with contextlib.suppress(OSError, ValueError, IndexError):
                total += s.main_thread_cpu_seconds()
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
def target(*, processes: int = 1, database: str = "sqlite", nginx: bool | None = None,
           streamlit_defaults: bool = False, url: str | None = None,
           database_url: str | None = None, server_pids: Sequence[int] = (),
           env: dict[str, str] | None = None) -> Iterator[Target]:
    """Start what a run needs (or describe an existing server given by ``url``)."""
    if url:
        if not database_url:
            raise SystemExit("--url needs --database-url (the server's database, to set up "
                             "the poll and check the stored reports)")
        servers = [Server(url, pid, Path("/dev/null")) for pid in server_pids]
        yield Target(url, database_url, f"{url}", servers)
        return
    extra = STREAMLIT_DEFAULTS if streamlit_defaults else ()
    cfg_label = "Streamlit defaults" if streamlit_defaults else "tuned config"
    with contextlib.ExitStack() as stack:
        data = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ldp-load-")))
        if database == "sqlite":
            db_url, db_label = f"sqlite:///{data / 'classroom.db'}", "SQLite"
        elif database == "postgresql":
            db_url, db_label = stack.enter_context(pg_scratch_url()), "PostgreSQL"
        else:
            db_url, db_label = database, "given database"
        child_env = {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_DATABASE_URL": db_url,
                     "LDP_CLASSROOM_INSTRUCTOR_KEY": "load-test-key", **(env or {})}
        use_nginx = processes > 1 if nginx is None else nginx
        if use_nginx:
            cluster = stack.enter_context(running_cluster(processes, child_env, extra_args=extra))
            label = f"{processes} process{'es' if processes > 1 else ''} behind nginx, " \
                    f"{db_label}, {cfg_label}"
            yield Target(cluster.url, db_url, label, cluster.servers, cluster)
        else:
            if processes != 1:
                raise SystemExit("several processes need nginx")
            server = stack.enter_context(running_server(child_env, extra_args=extra,
                                                        log_path=data / "server.log"))
            yield Target(server.url, db_url, f"1 process, {db_label}, {cfg_label}", [server])


def _exercise(service, title: str):
    poll = service.create_poll(title)
    q = service.add_question(poll.id, "Vanilla (1) or chocolate (0)?",
                             options=("Chocolate", "Vanilla"), design_params=DIE)
    return poll, service.open_question(q.id)


async def _warm_up(url: str, code: str) -> None:
    """One student on another poll: the process imports the pages and opens its pool."""
    async with Student(url, code, timeout=60) as s:
        await s.join()
        await s.tap(1)


def run_load(tgt: Target, cfg: LoadConfig, *, label: str | None = None,
             on_started: Callable[[], None] | None = None) -> LoadReport:
    """Set up a poll on the target's database, run the students, check the database."""
    from classroom.service import PollService
    from classroom.store import Store

    store = Store(tgt.database_url)
    try:
        service = PollService(store)
        _, warm_q = _exercise(service, "warm-up")
        warm_code = service.poll(warm_q.poll_id).join_code
        # Every process imports the pages and opens its pool before the clock starts
        # (directly, not through nginx, so none is missed).
        for url in [s.url for s in tgt.servers] or [tgt.url]:
            asyncio.run(_warm_up(url, warm_code))
        poll, question = _exercise(service, f"load {cfg.students} {cfg.arrival}")
        load_start = os.getloadavg()[0]
        cpu0, main0 = tgt.cpu_seconds(), tgt.main_thread_cpu_seconds()
        nginx0 = tgt.nginx_cpu_seconds()
        me0 = resource.getrusage(resource.RUSAGE_SELF)
        if on_started:
            on_started()
        samples: list[tuple[float, float]] = []
        outcomes, wall = asyncio.run(simulate(tgt.url, poll.join_code, cfg,
                                              cpu_probe=tgt.cpu_seconds, cpu_samples=samples))
        me1 = resource.getrusage(resource.RUSAGE_SELF)
        cpu1, main1 = tgt.cpu_seconds(), tgt.main_thread_cpu_seconds()
        nginx1 = tgt.nginx_cpu_seconds()
        report = LoadReport(
            config=cfg, label=label or tgt.label, outcomes=outcomes, wall_s=wall,
            server_cpu_s=None if cpu0 is None or cpu1 is None else cpu1 - cpu0,
            peak_rss_mb=tgt.peak_rss_mb(),
            harness_cpu_s=(me1.ru_utime + me1.ru_stime) - (me0.ru_utime + me0.ru_stime),
            nginx_cpu_s=None if nginx0 is None or nginx1 is None else nginx1 - nginx0,
            server_main_thread_cpu_s=None if main0 is None or main1 is None else main1 - main0,
            server_cpu_peak_cores=peak_cores(samples),
            load_avg=(load_start, os.getloadavg()[0]))
        check_database(service, question.id, report)
        return report
    finally:
        store.close()


def check_database(service, question_id: int, report: LoadReport) -> None:
    """Exactly one stored report per student, holding the answer it sent; none lost."""
    report.stored = service.store.count_reports(question_id)
    with_report = 0
    for o in report.outcomes:
        if not o.device_id:
            continue
        receipt = service.receipt_for(question_id, o.device_id)
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


# -- output ----------------------------------------------------------------------------------
def machine() -> str:
    cpu = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    import streamlit

    return (f"{os.cpu_count()} cores ({cpu or platform.machine()}), Python "
            f"{platform.python_version()}, Streamlit {streamlit.__version__}")


def target_line(name: str, measured: float, unit: str, goal: float, ok: bool,
                fmt: str = "{:.2f}") -> str:
    return (f"TARGET {name} measured={fmt.format(measured)}{unit} goal={fmt.format(goal)}{unit} "
            f"{'PASS' if ok else 'MISS'}")


def targets_for(s: dict) -> list[str]:
    """The issue's targets for a run: p95 tap-to-receipt <= 1 s, 0 lost, 0 duplicated."""
    n, arrival = s["students"], s["arrival"]
    p95 = s["tap_p95_s"]
    ok95 = p95 is not None and p95 <= GOAL_P95_S and s["errors"] == 0
    missing = n - s["students_with_report"]
    return [
        target_line(f"tap_to_receipt_p95_{n}_{arrival}", float("inf") if p95 is None else p95,
                    "s", GOAL_P95_S, ok95),
        target_line(f"lost_reports_{n}_{arrival}", s["lost"] + missing, "reports", 0,
                    s["lost"] + missing == 0, "{:.0f}"),
        target_line(f"duplicated_reports_{n}_{arrival}", s["duplicated"], "reports", 0,
                    s["duplicated"] == 0, "{:.0f}"),
    ]


def print_report(report: LoadReport) -> dict:
    s = report.summary()
    print()
    print(f"{report.label}: {report.config.students} students, {report.config.describe()}")
    print(TABLE_HEAD)
    print(TABLE_RULE)
    print(table_row(s))
    main_cpu = s["server_main_thread_cpu_s"]
    print(f"wall {s['wall_s']:.1f} s; harness CPU {s['harness_cpu_s']:.1f} s"
          + ("" if main_cpu is None else f"; server event-loop thread {main_cpu:.1f} s of "
             f"{s['server_cpu_s']:.1f} s")
          + ("" if s["nginx_cpu_s"] is None else f"; nginx CPU {s['nginx_cpu_s']:.1f} s")
          + f"; fragment reruns {s['fragment_runs']} ({s['fragment_errors']} failed)")
    print(f"database: {s['stored']} reports for {report.config.students} students; "
          f"{s['students_with_report']} students have exactly one; lost {s['lost']}, "
          f"duplicated {s['duplicated']}, stored without a receipt "
          f"{s['stored_without_receipt']}, answer differs from the one sent "
          f"{s['wrong_answer']}: "
          + ("EXACTLY ONE REPORT PER STUDENT" if report.exactly_one_each else "MISMATCH"))
    if s["errors"]:
        print("errors: " + "; ".join(f"{k} ×{v}" for k, v in s["error_kinds"].items()))
        for o in report.outcomes:
            if o.error:
                print(f"  first error: {o.error}")
                break
    return s


# -- the suite behind docs/benchmarks.md -----------------------------------------------------
SUITE_PARTS = ("target", "sweep", "config", "scaleout", "profile", "fragments")



def _load_results() -> dict:
    try:
        return json.loads(RESULTS.read_text())
    except (OSError, ValueError):
        return {}


def _save_results(results: dict) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    tmp = RESULTS.with_suffix(".tmp")
    tmp.write_text(json.dumps(results, indent=1) + "\n")
    tmp.replace(RESULTS)


def _median_run(runs: list[dict]) -> dict:
    """The run with the median p95 tap-to-receipt (runs that failed count as slowest)."""
    key = lambda s: (s["tap_p95_s"] if s["tap_p95_s"] is not None else float("inf"))  # noqa: E731
    ordered = sorted(runs, key=key)
    return ordered[(len(ordered) - 1) // 2]


def _run(cfg: LoadConfig, **target_kw) -> dict:
    with target(**target_kw) as tgt:
        report = run_load(tgt, cfg)
    return print_report(report)


def suite_target(args) -> dict:
    runs = [_run(LoadConfig(students=300, arrival="burst", seed=i)) for i in range(args.repeats)]
    once = _run(LoadConfig(students=300, arrival="once", seed=0))
    return {"runs": runs, "median": _median_run(runs), "once": once}


def suite_sweep(args) -> dict:
    """Grow the class (burst arrival) until the p95 goal or the database check fails."""
    sizes = [int(x) for x in args.sweep_sizes.split(",")]
    rows, largest = [], None
    for n in sizes:
        runs = [_run(LoadConfig(students=n, arrival="burst", seed=100 + i))
                for i in range(args.sweep_repeats)]
        med = _median_run(runs)
        rows.append(med)
        if med["pass"]:
            largest = n
        else:
            break
    return {"rows": rows, "largest": largest, "sizes": sizes}


def suite_config(args) -> dict:
    """Server CPU per student (join + vote) with the shipped settings and with defaults."""
    variants = {
        "shipped: postScriptGC = false, fileWatcherType = none": (),
        "postScriptGC = true (default), fileWatcherType = none": ("--runner.postScriptGC", "true"),
        "postScriptGC = false, fileWatcherType = auto (default)":
            ("--server.fileWatcherType", "auto"),
        "Streamlit defaults (both)": STREAMLIT_DEFAULTS,
    }
    n = args.config_students
    out = {}
    for name, extra in variants.items():
        values = []
        for i in range(args.repeats):
            cfg = LoadConfig(students=n, arrival="once", fragment_reruns=False, seed=200 + i)
            with contextlib.ExitStack() as stack:
                data = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ldp-load-")))
                db = f"sqlite:///{data / 'classroom.db'}"
                server = stack.enter_context(running_server(
                    {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_DATABASE_URL": db,
                     "LDP_CLASSROOM_INSTRUCTOR_KEY": "load-test-key"},
                    extra_args=extra, log_path=data / "server.log"))
                tgt = Target(server.url, db, name, [server])
                values.append(print_report(run_load(tgt, cfg, label=name)))
        cpu = statistics.median(v["cpu_ms_per_student"] for v in values)
        out[name] = {"cpu_ms_per_student": round(cpu, 1), "runs": values}
    return {"students": n, "variants": out}


def suite_fragments(args) -> dict:
    """The same burst with and without the receipt page's 5-second fragment checks."""
    n = args.fragments_students
    out = {}
    variants = (("every 5 s (the page's run_every)", True, None),
                ("every 10 s (what-if)", True, 10.0), ("none", False, None))
    for i in range(args.repeats):  # interleaved, so each variant meets the same machine
        for label, reruns, every in variants:
            s = _run(LoadConfig(students=n, arrival="burst", fragment_reruns=reruns,
                                fragment_interval_s=every, seed=500 + i))
            out.setdefault(label, {"runs": []})["runs"].append(s)
    for v in out.values():
        v["median"] = _median_run(v["runs"])
    return {"students": n, "variants": out}


def suite_scaleout(args) -> dict:
    n = args.scaleout_students
    out = {}
    for procs in (1, 2):
        runs = [_run(LoadConfig(students=n, arrival="burst", seed=300 + i), processes=procs,
                     database="postgresql", nginx=True) for i in range(args.repeats)]
        out[str(procs)] = {"runs": runs, "median": _median_run(runs)}
    one, two = out["1"]["median"], out["2"]["median"]
    ratio = {}
    for key in ("tap_p50_s", "tap_p95_s", "join_p95_s"):
        if one[key] and two[key]:
            ratio[key] = round(one[key] / two[key], 2)
    return {"students": n, "processes": out, "ratio_1_over_2": ratio}


async def step_costs(server: Server, code: str, n: int) -> dict[str, dict[str, float]]:
    """Server CPU per step, students one after another: ms per student (all threads, and
    the main thread, which runs the event loop: HTTP, websocket frames)."""
    def now() -> tuple[float, float]:
        return server.cpu_seconds(), server.main_thread_cpu_seconds()

    students = [Student(server.url, code) for _ in range(n)]
    steps: dict[str, dict[str, float]] = {}

    async def step(name: str, action) -> None:
        before = now()
        for s in students:
            await action(s)
        after = now()
        steps[name] = {"all_ms": round(1000 * (after[0] - before[0]) / n, 1),
                       "event_loop_ms": round(1000 * (after[1] - before[1]) / n, 1)}

    async def first_run(s: Student) -> None:
        s.remember(await s.run())

    async def fragment(s: Student) -> None:
        fid = next(iter(s.auto_reruns))
        await s.run(fragment_id=fid, auto=True)

    async def rerun(s: Student) -> None:
        await s.run()

    await step("page load (GET /?poll=CODE)", lambda s: s.load_page())
    await step("websocket handshake", lambda s: s.connect())
    await step("first script run (vote page)", first_run)
    await step("tap → receipt (submit + receipt page)", lambda s: s.tap(1))
    await step("waiting fragment (every 5 s)", fragment)
    await step("full rerun of the receipt page", rerun)
    await step("close", lambda s: s.close())
    return steps


STEP_ORDER = ("page load (GET /?poll=CODE)", "websocket handshake",
              "first script run (vote page)", "tap → receipt (submit + receipt page)",
              "waiting fragment (every 5 s)", "full rerun of the receipt page", "close")

#: Buckets for the script-thread profile: a sample goes to the innermost matching frame.
PROFILE_BUCKETS = (
    ("database (SQLAlchemy, sqlite3, psycopg)", ("sqlalchemy/", "sqlite3/", "psycopg/",
                                                  "psycopg_binary/")),
    ("Streamlit v2 component (bidi_component)", ("streamlit/components/v2/",)),
    ("Streamlit elements, session state, runner", ("streamlit/",)),
    ("classroom + ldp_core (service, domain, estimates)", ("/classroom/", "/ldp_core/")),
    ("student page (pages/, ui/)", ("/pages/", "/ui/")),
)
PAGE_FUNCTIONS = ("render_poll", "_find_poll", "poll_by_code", "_render_question",
                  "current_question", "receipt_for", "_collect_vote", "vote_component",
                  "device_scheme", "_submit", "submit_report", "_show_receipt", "spent_epsilon",
                  "_privacy_note", "_show_results", "_wait_for_question", "poll_for_change",
                  "_phone_css", "_local_time")


def summarize_pyinstrument(path: Path) -> dict:
    """Script-thread time by bucket and the page functions' inclusive time (ms per run)."""
    from pyinstrument.session import Session

    session = Session.load(str(path))
    root = session.root_frame()
    buckets: Counter = Counter()
    functions: Counter = Counter()
    if root is None:
        return {"script_s": 0.0, "buckets_pct": {}, "functions_s": {}}

    def walk(frame, owner: str, active: frozenset) -> None:
        file_path = frame.file_path or ""
        for name, patterns in PROFILE_BUCKETS:
            if any(p in file_path for p in patterns):
                owner = name
                break
        fn = frame.function or ""
        if fn in PAGE_FUNCTIONS and fn not in active:
            functions[fn] += frame.time
            active = active | {fn}
        own = frame.time - sum(c.time for c in frame.children)
        buckets[owner] += max(0.0, own)
        for child in frame.children:
            walk(child, owner, active)

    import sys as _sys

    limit = _sys.getrecursionlimit()
    _sys.setrecursionlimit(max(limit, 10_000))
    try:
        walk(root, "other (Python standard library, threading)", frozenset())
    finally:
        _sys.setrecursionlimit(limit)
    total = sum(buckets.values()) or 1.0
    return {"script_s": round(root.time, 3),
            "buckets_pct": {k: round(100 * v / total, 1) for k, v in buckets.most_common()},
            "functions_s": {k: round(v, 4) for k, v in functions.most_common()}}


def suite_profile(args) -> dict:
    """Server CPU per step, and where a script run's time goes (pyinstrument)."""
    n = args.profile_students
    out: dict = {"students": n}
    with target() as tgt:
        from classroom.service import PollService
        from classroom.store import Store

        store = Store(tgt.database_url)
        try:
            svc = PollService(store)
            _, warm = _exercise(svc, "warm-up")
            asyncio.run(_warm_up(tgt.url, svc.poll(warm.poll_id).join_code))
            poll, _ = _exercise(svc, "steps")
            out["steps"] = asyncio.run(step_costs(tgt.servers[0], poll.join_code, n))
        finally:
            store.close()
    for name, v in out["steps"].items():
        print(f"{name:42s} {v['all_ms']:6.1f} ms  (event loop {v['event_loop_ms']:5.1f} ms)")
    prof_dir = Path(tempfile.mkdtemp(prefix="ldp-profile-"))
    with contextlib.ExitStack() as stack:
        data = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ldp-load-")))
        db = f"sqlite:///{data / 'classroom.db'}"
        server = stack.enter_context(running_server(
            {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_DATABASE_URL": db,
             "LDP_CLASSROOM_INSTRUCTOR_KEY": "load-test-key"},
            launcher=[sys.executable, str(ROOT / "bench" / "profile_server.py"), str(prof_dir)],
            log_path=data / "server.log"))
        from classroom.service import PollService
        from classroom.store import Store

        store = stack.enter_context(contextlib.closing(Store(db)))
        svc = PollService(store)
        _, warm = _exercise(svc, "warm-up")
        asyncio.run(_warm_up(server.url, svc.poll(warm.poll_id).join_code))
        os.kill(server.pid, signal.SIGUSR1)  # drop the warm-up's runs
        deadline = time.monotonic() + 60
        while not (prof_dir / "done").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        (prof_dir / "done").unlink(missing_ok=True)
        poll, _ = _exercise(svc, "profile")
        asyncio.run(step_costs(server, poll.join_code, n))
        os.kill(server.pid, signal.SIGUSR1)
        deadline = time.monotonic() + 300
        while not (prof_dir / "done").exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        runs = int((prof_dir / "done").read_text()) if (prof_dir / "done").exists() else 0
    if not runs:
        out["error"] = "the profiled server wrote no profile"
        return out
    out.update(summarize_pyinstrument(prof_dir / "script_runs.json"))
    out["runs"] = runs
    out["profile_dir"] = str(prof_dir)
    print(f"profiled {runs} script runs: {prof_dir / 'script_runs.txt'}")
    for k, v in out["buckets_pct"].items():
        print(f"  {v:5.1f} %  {k}")
    for k, v in out["functions_s"].items():
        print(f"  {1000 * v / n:6.2f} ms per student  {k}")
    return out


def render_doc(results: dict, cmd_prefix: str = "python bench/load.py") -> list[str]:
    lines = ["## Lecture-hall load (`python bench/load.py`)", ""]
    meta = results.get("meta", {})
    lines += [
        f"Machine: {meta.get('machine', '?')}. The simulated students run in one asyncio "
        "process on the same 2 cores as the server (its CPU is listed apart), and other jobs "
        "share the cores: read medians and ratios, not single numbers. Each student is a "
        "headless client of Streamlit's own websocket protocol (`tests/support/protocol.py`): "
        "page load (device cookie), `/_stcore/stream`, the page's script run, the vote "
        "component's trigger value as the tap, the receipt; then, like a phone, the receipt "
        "page's fragment every 5 s until the last student has voted. Every run checks the "
        "database: one report per student, the answer it sent, none lost, none duplicated.",
        "",
        "Columns: times in seconds (nearest-rank percentiles); *stored (lost, dup.)*: reports "
        "in the database for the run's question, acknowledged reports missing, rows beyond "
        "one per student; *server CPU*: user + system time of the server process(es) from "
        "the first arrival to the last receipt (`/proc/<pid>/stat`), in the run's wall time "
        "(one process can use at most one core of it), per student in brackets; *busiest 2 s*: "
        "the server's CPU use in the busiest 2 seconds of the run, in cores (sampled twice "
        "a second; one process tops out at 1.0); "
        "*peak RSS*: `VmHWM`; *load avg*: 1-minute load average at start → end.",
        "",
    ]
    if results.get("summary"):
        lines += [results["summary"], ""]
    tg = results.get("target")
    if tg:
        lines += [f"### 300 students, one process, SQLite ({tg['stamp']})", "",
                  f"Command: `{cmd_prefix} --suite target --repeats {len(tg['runs'])}` "
                  f"(each run is `{cmd_prefix} --students 300 --arrival burst --seed i`; "
                  f"then `--arrival once`).", "", TABLE_HEAD, TABLE_RULE]
        for i, r in enumerate(tg["runs"]):
            lines.append(table_row({**r, "label": f"burst, seed {i}"}))
        lines.append(table_row({**tg["once"], "label": "all at once"}))
        lines += ["", "The target is judged on the median run (by p95) of the burst runs.", ""]
        if tg.get("note"):
            lines += [tg["note"], ""]
    sw = results.get("sweep")
    if sw:
        lines += [f"### Largest class one process serves ({sw['stamp']})", "",
                  f"Command: `{cmd_prefix} --suite sweep --sweep-sizes {','.join(map(str, sw['sizes']))}"
                  f" --sweep-repeats {sw.get('repeats', 1)}` (burst arrival; growing until a "
                  "median run misses p95 ≤ 1 s or the database check).", "",
                  TABLE_HEAD, TABLE_RULE]
        for r in sw["rows"]:
            lines.append(table_row({**r, "label": "burst" + (" ✔" if r["pass"] else " ✘")}))
        lines += ["", f"Largest class within p95 ≤ 1 s, 0 lost, 0 duplicated: "
                  f"**{sw['largest'] or 'none of the sizes'}** students.", ""]
        if sw.get("note"):
            lines += [sw["note"], ""]
    fr = results.get("fragments")
    if fr:
        lines += [f"### The waiting page's 5-second check ({fr['stamp']})", "",
                  f"Command: `{cmd_prefix} --suite fragments --fragments-students "
                  f"{fr['students']}` (burst; the phones that have voted rerun the waiting "
                  "page's fragment every 5 s as the page asks, as in every other run; every "
                  "10 s, what a `run_every=10` would cost; or never; the variants interleaved, "
                  "same seeds).", "", TABLE_HEAD, TABLE_RULE]
        for label, v in fr["variants"].items():
            for i, r in enumerate(v["runs"]):
                lines.append(table_row({**r, "label": f"checks {label}, run {i + 1}"}))
        lines.append("")
        if fr.get("note"):
            lines += [fr["note"], ""]
    pr = results.get("profile")
    if pr and pr.get("steps"):
        lines += [f"### Server CPU per step of one student ({pr['stamp']})", "",
                  f"Command: `{cmd_prefix} --suite profile --profile-students "
                  f"{pr['students']}` ({pr['students']} students one after another, so each "
                  "step is measured without queueing; CPU of the whole process from "
                  "`/proc/<pid>/stat`, and of its main thread, which runs the event loop: "
                  "HTTP, websocket frames).", "",
                  "| step | server CPU per student | of which event loop |",
                  "| --- | ---: | ---: |"]
        for name in sorted(pr["steps"], key=lambda k: STEP_ORDER.index(k)
                           if k in STEP_ORDER else len(STEP_ORDER)):
            v = pr["steps"][name]
            lines.append(f"| {name} | {v['all_ms']:.1f} ms | {v['event_loop_ms']:.1f} ms |")
        lines.append("")
    if pr and "buckets_pct" in pr:
        lines += [f"### Where a script run's time goes ({pr['stamp']})", "",
                  "Same command: the same steps again on a server started by "
                  "`bench/profile_server.py`, which profiles every script run with "
                  f"pyinstrument ({pr['runs']} runs). Wall-clock samples of the script "
                  "threads, charged to the innermost matching frame; waits for the GIL are "
                  "included, so read shares, not milliseconds.", "",
                  "| where | share of script-thread time |", "| --- | ---: |"]
        for k, v in sorted(pr["buckets_pct"].items(), key=lambda kv: -kv[1]):
            lines.append(f"| {k} | {v:.1f} % |")
        total = pr["functions_s"].get("render_poll") or 1.0
        lines += ["", "The student page's functions, inclusive, as a share of `render_poll`: "
                  + ", ".join(f"`{k}` {100 * v / total:.0f} %"
                              for k, v in sorted(pr["functions_s"].items(),
                                                 key=lambda kv: -kv[1])
                              if k != "render_poll" and v / total >= 0.005)
                  + ".", ""]
        if pr.get("note"):
            lines += [pr["note"], ""]
    cf = results.get("config")
    if cf:
        lines += [f"### `.streamlit/config.toml` runner and watcher settings ({cf['stamp']})", "",
                  f"Command: `{cmd_prefix} --suite config --config-students {cf['students']}` "
                  f"({cf['students']} students all at once, fragment reruns off, so the CPU is "
                  "one join plus one vote per student; median of "
                  f"{len(next(iter(cf['variants'].values()))['runs'])} runs).", "",
                  "| settings | server CPU per student (join + vote) | p95 tap→receipt | "
                  "p95 join |", "| --- | ---: | ---: | ---: |"]
        for name, v in sorted(cf["variants"].items(),
                              key=lambda kv: kv[1]["cpu_ms_per_student"]):
            med = _median_run(v["runs"])
            lines.append(f"| {name} | {v['cpu_ms_per_student']:.1f} ms | "
                         f"{_s(med['tap_p95_s'])} s | {_s(med['join_p95_s'])} s |")
        lines.append("")
        if cf.get("note"):
            lines += [cf["note"], ""]
    so = results.get("scaleout")
    if so:
        lines += [f"### 1 process against 2 behind nginx, PostgreSQL, {so['students']} students "
                  f"({so['stamp']})", "",
                  f"Command: `{cmd_prefix} --suite scaleout --scaleout-students {so['students']}`"
                  f" (each run: `{cmd_prefix} --students {so['students']} --arrival burst "
                  "--processes N --nginx --database postgresql`; `deploy/run-cluster.sh` with "
                  "nginx hashing on the device cookie).", "", TABLE_HEAD, TABLE_RULE]
        for procs, v in so["processes"].items():
            for i, r in enumerate(v["runs"]):
                lines.append(table_row({**r, "label": f"{procs} process{'es' if procs != '1' else ''}"
                                        f", run {i + 1}"}))
        rt = so["ratio_1_over_2"]
        lines += ["", "Ratio 1 process / 2 processes (medians by p95): "
                  + ", ".join(f"{k.replace('_s', '')} {v:.2f}×" for k, v in rt.items()) + ".", ""]
        if so.get("note"):
            lines += [so["note"], ""]
    notes = results.get("notes")
    if notes:
        lines += [*notes, ""]
    tlines = suite_targets(results)
    if tlines:
        lines += ["```", *tlines, "```"]
    return lines


def suite_targets(results: dict) -> list[str]:
    """The TARGET lines of the documented runs (the 300-student target on the median run)."""
    tlines = []
    tg, sw = results.get("target"), results.get("sweep")
    if tg:
        tlines += targets_for(tg["median"])
    if sw:
        largest = sw.get("largest") or 0
        tlines.append(target_line("largest_class_one_process_p95_1s", largest, "students",
                                  300, largest >= 300, "{:.0f}"))
    return tlines


def run_suite(args) -> int:
    if args.suite == "render":  # only rewrite the section from bench/results/load.json
        results = _load_results()
        section = render_doc(results)
        update_doc("bench_load", section)
        tlines = suite_targets(results)
        print("\n".join(section[:-(len(tlines) + 2)] if tlines else section))
        print(f"\nmachine: {results.get('meta', {}).get('machine', machine())}")
        print("\n".join(tlines))
        return 0
    parts = SUITE_PARTS if args.suite == "all" else tuple(args.suite.split(","))
    unknown = set(parts) - set(SUITE_PARTS)
    if unknown:
        raise SystemExit(f"--suite: unknown part(s) {', '.join(sorted(unknown))}; "
                         f"choose from {', '.join(SUITE_PARTS)} or all")
    results = _load_results()
    results.setdefault("meta", {})["machine"] = machine()
    runners = {"target": suite_target, "sweep": suite_sweep, "config": suite_config,
               "scaleout": suite_scaleout, "profile": suite_profile,
               "fragments": suite_fragments}
    for part in parts:
        print(f"\n=== {part} ===", flush=True)
        res = runners[part](args)
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        res["stamp"] = f"{stamp}, load average {os.getloadavg()[0]:.1f} at the end"
        if part == "sweep":
            res["repeats"] = args.sweep_repeats
        old = results.get(part, {})
        for keep in ("note", "notes"):
            if keep in old and keep not in res:
                res[keep] = old[keep]
        results[part] = res
        _save_results(results)
    section = render_doc(results)
    update_doc("bench_load", section)
    tlines = suite_targets(results)
    print("\n".join(section[:-(len(tlines) + 2)] if tlines else section))
    print(f"\nmachine: {results['meta']['machine']}")
    print("\n".join(tlines))
    return 0


# -- command line ----------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--students", type=int, default=300)
    ap.add_argument("--arrival", choices=("burst", "once"), default="burst")
    ap.add_argument("--spread", type=float, default=20.0, help="burst: arrival window (s)")
    ap.add_argument("--vote-delay", type=float, nargs=2, default=(2.0, 10.0),
                    metavar=("MIN", "MAX"), help="burst: tap this long after joining (s)")
    ap.add_argument("--no-fragment-reruns", action="store_true",
                    help="phones do not rerun the receipt page's 5 s fragment")
    ap.add_argument("--fragment-interval", type=float, default=None, metavar="S",
                    help="phones rerun the waiting fragment every S seconds instead of the "
                         "page's run_every (what-if)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--processes", type=int, default=1,
                    help="Streamlit processes (more than 1: behind nginx, deploy/run-cluster.sh)")
    ap.add_argument("--nginx", action="store_true", help="put nginx in front even of 1 process")
    ap.add_argument("--database", default=None,
                    help="sqlite (default for 1 process), postgresql (a throw-away schema in "
                         "database ldp_load; default for several processes) or a URL")
    ap.add_argument("--streamlit-defaults", action="store_true",
                    help="undo .streamlit/config.toml's runner.postScriptGC and "
                         "server.fileWatcherType")
    ap.add_argument("--url", help="an already running server (needs --database-url)")
    ap.add_argument("--database-url", help="with --url: that server's database")
    ap.add_argument("--server-pid", type=int, action="append", default=[],
                    help="with --url: pid(s) of the server process(es), for CPU and memory")
    ap.add_argument("--max-run", type=float, default=600.0, help="hard limit of a run (s)")
    ap.add_argument("--suite", nargs="?", const="all", default=None,
                    help="run the documented measurements (all, or a comma list of "
                         f"{', '.join(SUITE_PARTS)}) and rewrite docs/benchmarks.md's section; "
                         "'render' only rewrites the section from bench/results/load.json")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sweep-sizes", default="300,450,600,750,900,1050,1200")
    ap.add_argument("--sweep-repeats", type=int, default=1)
    ap.add_argument("--config-students", type=int, default=100)
    ap.add_argument("--scaleout-students", type=int, default=600)
    ap.add_argument("--profile-students", type=int, default=300)
    ap.add_argument("--fragments-students", type=int, default=300)
    args = ap.parse_args(argv)

    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.1f} at start", flush=True)
    if args.suite:
        return run_suite(args)
    database = args.database or ("postgresql" if args.processes > 1 else "sqlite")
    cfg = LoadConfig(students=args.students, arrival=args.arrival, spread_s=args.spread,
                     vote_delay_s=tuple(args.vote_delay),
                     fragment_reruns=not args.no_fragment_reruns,
                     fragment_interval_s=args.fragment_interval, seed=args.seed,
                     max_run_s=args.max_run)
    with target(processes=args.processes, database=database,
                nginx=True if args.nginx else None, streamlit_defaults=args.streamlit_defaults,
                url=args.url, database_url=args.database_url,
                server_pids=args.server_pid) as tgt:
        report = run_load(tgt, cfg)
    s = print_report(report)
    print()
    print("\n".join(targets_for(s)))
    return 0 if report.passes() else 1


if __name__ == "__main__":
    sys.exit(main())
