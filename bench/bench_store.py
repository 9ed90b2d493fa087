"""Benchmark of the classroom store: submit throughput and the dashboard's aggregate query.

    python bench/bench_store.py

* submit throughput: 16 writer threads (Streamlit runs every session as a
  thread of one process) each submitting through ``Reports.submit_report``
  with its own device ids, on SQLite (a temp file) and PostgreSQL;
* ``Results.estimate`` at 10,000 reports (median of repeated calls): the
  grouped query plus the ldp_core estimate the dashboard draws.

PostgreSQL runs when ``LDP_TEST_POSTGRES_URL`` (default
``postgresql+psycopg://postgres@127.0.0.1:5432/test``) answers; the benchmark
works in a throw-away schema and drops it. Results go to stdout and to the
``bench_store`` section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import secrets
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from bench._report import update_doc
from classroom import PollService, Store
from tests.support.db import count_reports

DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
DIE = {"design": "die", "faces": 4, "truthful": 3}
EPS = {"design": "epsilon", "epsilon": 1.0}
WRITERS = 16
GOAL_SUBMIT = 500.0  # reports/s on SQLite
GOAL_ESTIMATE_MS = 20.0  # at 10,000 reports


# -- databases ----------------------------------------------------------------------------------


@contextmanager
def sqlite_db():
    with tempfile.TemporaryDirectory(prefix="bench-store-") as d:
        yield f"sqlite:///{Path(d) / 'classroom.db'}"


def pg_base() -> tuple[str | None, str]:
    raw = os.environ.get("LDP_TEST_POSTGRES_URL", "").strip() or DEFAULT_PG
    url = make_url(raw)
    if url.drivername in ("postgres", "postgresql"):
        url = url.set(drivername="postgresql+psycopg")
    engine = sa.create_engine(url, connect_args={"connect_timeout": 3}, poolclass=sa.NullPool)
    try:
        with engine.connect() as conn:
            version = conn.execute(sa.text("SHOW server_version")).scalar()
        return url.render_as_string(hide_password=False), f"PostgreSQL {version}"
    except sa.exc.SQLAlchemyError as exc:
        return None, f"PostgreSQL unreachable at {url.render_as_string(hide_password=True)}: " \
                     f"{str(getattr(exc, 'orig', exc)).strip().splitlines()[0]}"
    finally:
        engine.dispose()


@contextmanager
def pg_db(base: str):
    schema = f"bench_store_{secrets.token_hex(5)}"
    admin = sa.create_engine(base, poolclass=sa.NullPool)
    with admin.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield make_url(base).update_query_dict(
            {"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


# -- measurements -------------------------------------------------------------------------------


def open_question(service: PollService, design=DIE):
    poll = service.polls.create_poll("bench")
    q = service.polls.add_question(poll.id, "Vanilla or chocolate?",
                                   options=("Chocolate", "Vanilla"),
                                   design_params=design)
    return poll, service.running.open_question(q.id)


def submit_throughput(service: PollService, reports: int) -> tuple[float, float]:
    """(reports per second, process CPU ms per report) with WRITERS threads."""
    poll, q = open_question(service)
    params = q.design_params
    barrier = threading.Barrier(WRITERS + 1)
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        barrier.wait()
        try:
            for i in range(w, reports, WRITERS):
                service.reports.submit_report(poll.join_code, q.id, answer=i % 2,
                                              design_params=params,
                                              submission_id=f"bench-{secrets.token_hex(8)}",
                                              device_id=f"device-{i}")
        except BaseException as exc:  # noqa: BLE001 - collected and re-raised by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    for t in threads:
        t.start()
    barrier.wait()
    t0, c0 = time.perf_counter(), time.process_time()
    for t in threads:
        t.join()
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    if errors:
        raise RuntimeError(f"{len(errors)} writer errors, first: {errors[0]!r}")
    stored = count_reports(service.store, q.id)
    if stored != reports:
        raise RuntimeError(f"expected {reports} rows, found {stored}")
    return reports / elapsed, cpu / reports * 1000


def median_ms(fn, calls: int) -> tuple[float, float, float]:
    """(median wall ms, median process CPU ms, best wall ms) of ``fn()``."""
    wall, cpu = [], []
    for _ in range(calls):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - t0) * 1000)
    return statistics.median(wall), statistics.median(cpu), min(wall)


def estimate_ms(service: PollService, n: int, calls: int, *, mixed: bool,
                analyze_url: str | None = None) -> dict[str, tuple[float, float]]:
    """Median wall time of ``estimate`` (and of its database read alone) with n reports.

    ``mixed``: half the reports under a second design. ``analyze_url``
    (PostgreSQL): measure again after ``ANALYZE reports``, the state autovacuum
    reaches within about a minute of a burst; before it the planner has no
    statistics for the fresh rows and sorts them.
    """
    _, q = open_question(service)
    if mixed:
        service.results.add_simulated_reports(q.id, n // 2, 0.6, seed=1)
        service.polls.set_design(q.id, EPS)
        service.results.add_simulated_reports(q.id, n - n // 2, 0.6, seed=2)
    else:
        service.results.add_simulated_reports(q.id, n, 0.6, seed=1)
    est = service.results.estimate(q.id)
    assert est.n == n, est.n
    out = {"estimate": median_ms(lambda: service.results.estimate(q.id), calls),
           "read": median_ms(lambda: service.store.estimate_inputs(q.id), calls)}
    if analyze_url:
        engine = sa.create_engine(analyze_url, poolclass=sa.NullPool)
        try:
            with engine.begin() as conn:
                conn.execute(sa.text("ANALYZE reports"))
        finally:
            engine.dispose()
        out["estimate_analyzed"] = median_ms(lambda: service.results.estimate(q.id), calls)
        out["read_analyzed"] = median_ms(lambda: service.store.estimate_inputs(q.id), calls)
    return out


def run_backend(url: str, args) -> dict[str, tuple[float, float]]:
    store = Store(url)
    service = PollService.on(store)
    pg = store.backend == "postgresql"
    try:
        submit_runs = [submit_throughput(service, args.reports) for _ in range(args.repeats)]
        one = estimate_ms(service, args.estimate_n, args.calls, mixed=False,
                          analyze_url=url if pg else None)
        mixed = estimate_ms(service, args.estimate_n, args.calls, mixed=True)
        rates = sorted(submit_runs)[len(submit_runs) // 2]  # the median run
        return {"submit": rates, **one, "estimate_mixed": mixed["estimate"]}
    finally:
        store.close()


# -- output -------------------------------------------------------------------------------------


def table(results: dict[str, dict[str, tuple[float, float]]], args) -> list[str]:
    n = f"{args.estimate_n:,}"
    rows = [
        ("submit", f"submit throughput, {WRITERS} writer threads, median of {args.repeats} runs "
                   f"× {args.reports} (reports/s; CPU ms per report)", "{:.0f}", "{:.2f}"),
        ("estimate", f"`estimate` at {n} reports, one design (median ms of {args.calls})",
         "{:.1f}", "{:.1f}"),
        ("read", "… of which the database read, `Store.estimate_inputs` (ms)",
         "{:.1f}", "{:.1f}"),
        ("estimate_mixed", f"`estimate` at {n} reports, two designs (ms)", "{:.1f}",
         "{:.1f}"),
        ("estimate_analyzed", f"`estimate` at {n} reports after `ANALYZE` (ms)",
         "{:.1f}", "{:.1f}"),
        ("read_analyzed", "… of which the database read after `ANALYZE` (ms)",
         "{:.1f}", "{:.1f}"),
    ]
    pg = results.get("postgresql")

    def cell(value, fmt, cfmt) -> str:
        if value is None:
            return "–"
        best = f", best {fmt.format(value[2])}" if len(value) > 2 else ""
        return f"{fmt.format(value[0])} (CPU {cfmt.format(value[1])}{best})"

    lines = ["| measurement | SQLite wall (CPU, best) | PostgreSQL wall (CPU, best) "
             "| SQLite / PG wall |",
             "| --- | ---: | ---: | ---: |"]
    for key, label, fmt, cfmt in rows:
        s = results["sqlite"].get(key)
        p = pg.get(key) if pg else None
        ratio = f"{s[0] / p[0]:.2f}" if s and p else "–"
        lines.append(f"| {label} | {cell(s, fmt, cfmt)} | "
                     f"{cell(p, fmt, cfmt) if pg else 'not run'} | {ratio} |")
    return lines


def targets(results: dict[str, dict[str, tuple[float, float]]], n: int) -> list[str]:
    out = []
    size = f"{n // 1000}k" if n % 1000 == 0 else str(n)

    def line(name: str, measured: float, goal: float, unit: str, higher_better: bool,
             fmt: str) -> None:
        ok = measured >= goal if higher_better else measured <= goal
        out.append(f"TARGET {name} measured={fmt.format(measured)}{unit} "
                   f"goal={fmt.format(goal)}{unit} {'PASS' if ok else 'MISS'}")

    sq = results["sqlite"]
    line("sqlite_submit_16_writers", sq["submit"][0], GOAL_SUBMIT, "reports/s", True, "{:.0f}")
    line(f"sqlite_estimate_{size}", sq["estimate"][0], GOAL_ESTIMATE_MS, "ms", False, "{:.1f}")
    if "postgresql" in results:
        pg = results["postgresql"]
        line(f"postgresql_estimate_{size}_fresh", pg["estimate"][0], GOAL_ESTIMATE_MS, "ms",
             False, "{:.1f}")
        line(f"postgresql_estimate_{size}_analyzed", pg["estimate_analyzed"][0], GOAL_ESTIMATE_MS,
             "ms", False, "{:.1f}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reports", type=int, default=3000, help="reports per throughput run")
    ap.add_argument("--repeats", type=int, default=3, help="throughput runs per backend")
    ap.add_argument("--estimate-n", type=int, default=10_000)
    ap.add_argument("--calls", type=int, default=30, help="estimate calls per median")
    ap.add_argument("--no-doc", action="store_true", help="do not update docs/benchmarks.md")
    ap.add_argument("--smoke", action="store_true",
                    help="every measurement at a tiny size, in seconds; no doc update")
    args = ap.parse_args()
    if args.smoke:
        args.reports, args.repeats, args.estimate_n, args.calls = 200, 1, 500, 3
        args.no_doc = True

    cores = os.cpu_count()
    load = os.getloadavg()
    machine = (f"{cores} cores, {platform.machine()}, Python {platform.python_version()}, "
               f"SQLite {sqlite3.sqlite_version}, SQLAlchemy {sa.__version__}")
    print(f"machine: {machine}; load average at start {load[0]:.1f}")
    results: dict[str, dict[str, float]] = {}
    with sqlite_db() as url:
        print("running SQLite ...", flush=True)
        results["sqlite"] = run_backend(url, args)
    base, pg_note = pg_base()
    if base:
        print(f"running {pg_note} ...", flush=True)
        with pg_db(base) as url:
            results["postgresql"] = run_backend(url, args)
    else:
        print(f"skipping PostgreSQL: {pg_note}")
    end_load = os.getloadavg()[0]
    lines = table(results, args)
    target_lines = targets(results, args.estimate_n)
    print()
    print("\n".join(lines))
    print()
    cmd = "python bench/bench_store.py" + (" " + " ".join(sys.argv[1:]) if sys.argv[1:] else "")
    if not args.no_doc:
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        update_doc("bench_store", [
            "## Store: submit throughput and the dashboard's aggregate query",
            "",
            f"Command: `{cmd}` ({stamp}). Machine: {machine}; {pg_note}. "
            f"Load average {load[0]:.1f} at start, {end_load:.1f} at the end: other jobs "
            "share the cores, so wall-clock times are upper bounds. CPU is this process's "
            "CPU time (PostgreSQL's server work is not in it); best is the fastest of the "
            "calls, the closest to an idle machine. Targets are judged on the median "
            "wall-clock time.",
            "",
            "Writers are threads of one process, as Streamlit runs sessions; each submit is "
            "the full `Reports.submit_report` path (validation, HMAC token, one read "
            "and one `INSERT … ON CONFLICT DO NOTHING` transaction). `estimate` is what the "
            "dashboard calls: one read transaction plus ldp_core's summary (MLE, "
            "likelihood-ratio interval). On PostgreSQL the first `estimate` rows are "
            "measured on freshly inserted rows (no planner statistics yet: a sort), the "
            "second after `ANALYZE` (autovacuum's steady state: an index-only scan).",
            "",
            *lines,
            "",
            "```",
            *target_lines,
            "```",
        ])
    print("\n".join(target_lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
