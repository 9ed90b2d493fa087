"""Database transactions and server time per dashboard refresh and per tap.

    python bench/bench_read_model.py            # measure, rewrite its docs section
    python bench/bench_read_model.py --smoke    # 200 reports, a few calls, no doc update

A yes/no question with 10,000 reports (the class exercise's design). Side by side,
in one run, on SQLite (a temp file) and PostgreSQL (when ``LDP_TEST_POSTGRES_URL``
answers, in a throw-away schema):

* **one refresh before**: what the dashboard's live panel called every 2 s until
  the read model: ``question``, ``estimate``, ``rounds`` and the arrival trajectory
  in a transaction of its own (the reports in arrival order);
* **one refresh now**: ``Results.dashboard_snapshot``, one read transaction;
* **one tap**: ``POST /api/poll/CODE/report`` through the phone routes (a new
  device each time), counting what the route makes the service do.

Transactions are counted by wrapping ``Store.transaction``; times are medians of
repeated calls, wall and process CPU.
"""

from __future__ import annotations

import argparse
import os
import platform
import secrets
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import sqlalchemy as sa

from bench._report import cpu_model, update_doc
from bench.bench_store import median_ms as store_median_ms
from bench.bench_store import pg_base, pg_db, sqlite_db
from classroom import PollService, Store
from classroom.domain import CLASS_EXERCISE, TrajectoryPoint
from classroom.estimates import trajectory
from classroom.store import reports, rounds

N_REPORTS = 10_000
GOAL_REFRESH_TX = 1
GOAL_REFRESH_MS = 50.0  # one refresh at 10,000 reports, SQLite
GOAL_TAP_TX = 1


class Counter:
    """Counts the transactions a store opens."""

    def __init__(self, store: Store) -> None:
        self.n = 0
        original = store.transaction

        @contextmanager
        def counted(*, write: bool) -> Iterator[Any]:
            self.n += 1
            with original(write=write) as conn:
                yield conn

        store.transaction = counted  # type: ignore[method-assign]  # instrumenting one store

    def during(self, fn: Callable[[], object]) -> int:
        before = self.n
        fn()
        return self.n - before


def median_ms(fn: Callable[[], object], calls: int) -> tuple[float, float]:
    """(median wall ms, median process CPU ms), as bench_store measures them."""
    wall, cpu, _best = store_median_ms(fn, calls)
    return wall, cpu


def trajectory_before(svc: PollService, qid: int) -> tuple[TrajectoryPoint, ...]:
    """The arrival trajectory as it was read before the read model: its own transaction,
    the current round's reports in arrival order."""
    number = svc.polls.question(qid).round_number
    stmt = (sa.select(reports.c.design_params, reports.c.answer)
            .select_from(reports.join(rounds, reports.c.round_id == rounds.c.id))
            .where(rounds.c.question_id == qid, rounds.c.number == number)
            .order_by(reports.c.id))
    with svc.store.transaction(write=False) as conn:
        answers = [(r.design_params, r.answer) for r in conn.execute(stmt)]
    return trajectory(answers)


def refresh_before(svc: PollService, qid: int) -> None:
    svc.polls.question(qid)
    svc.results.estimate(qid)
    svc.running.rounds(qid)
    trajectory_before(svc, qid)


def refresh_now(svc: PollService, qid: int) -> None:
    svc.results.dashboard_snapshot(qid)


def measure(url: str, n_reports: int, calls: int, taps: int) -> dict[str, Any]:
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    import web
    from phone.routes import PhoneApi, make_routes

    store = Store(url)
    try:
        svc = PollService.on(store)
        poll = svc.polls.create_poll("read model")
        q = svc.running.open_question(svc.polls.add_question(poll.id, "Vanilla or chocolate?",
                                                             options=("Chocolate", "Vanilla"),
                                                             design_params=dict(CLASS_EXERCISE)).id)
        svc.results.add_simulated_answers(
            q.id, svc.results.rehearsal_class(q.id, n_reports, 0.6, seed=1),
                                          seed=2)
        counter = Counter(store)
        before_tx = counter.during(lambda: refresh_before(svc, q.id))
        now_tx = counter.during(lambda: refresh_now(svc, q.id))
        same = svc.results.dashboard_snapshot(q.id)
        assert same.estimate == svc.results.estimate(q.id) and \
            same.trajectory == trajectory_before(svc, q.id), "the two paths disagree"
        before_ms = median_ms(lambda: refresh_before(svc, q.id), calls)
        now_ms = median_ms(lambda: refresh_now(svc, q.id), calls)

        edge = web.Edge.local(hosts=("testserver",))  # the test client's host name
        app = Starlette(routes=make_routes(PhoneApi(lambda: svc)), middleware=web.middleware(edge))
        tap_tx, tap_ms = [], []
        with TestClient(app) as client:
            client.get(f"/api/poll/{poll.join_code}")  # the poll's state is cached from here
            for i in range(taps):
                client.cookies.set(web.DEVICE_COOKIE, edge.devices.sign(f"bench-device-{i:05d}"))
                body = {"question_id": q.id, "answer": i % 2, "params": q.design_params,
                        "submission_id": f"bench-{secrets.token_hex(8)}"}
                t0 = time.perf_counter()
                tap_tx.append(counter.during(lambda body=body: client.post(
                    f"/api/poll/{poll.join_code}/report", json=body,
                    headers={"origin": "http://testserver"}).raise_for_status()))
                tap_ms.append((time.perf_counter() - t0) * 1000)
        return {"before_tx": before_tx, "now_tx": now_tx, "before_ms": before_ms,
                "now_ms": now_ms, "tap_tx": statistics.median(tap_tx),
                "tap_ms": statistics.median(tap_ms)}
    finally:
        store.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--smoke", action="store_true", help="small and quick, no doc update")
    ap.add_argument("--no-doc", action="store_true")
    args = ap.parse_args()
    n_reports, calls, taps = N_REPORTS, args.calls, 50
    if args.smoke:
        n_reports, calls, taps, args.no_doc = 200, 3, 3, True
    load0 = os.getloadavg()[0]
    results: dict[str, dict[str, Any]] = {}
    with sqlite_db() as url:
        results["SQLite"] = measure(url, n_reports, calls, taps)
    pg_url, pg_name = pg_base()
    if pg_url is not None:
        with pg_db(pg_url) as url:
            results[pg_name] = measure(url, n_reports, calls, taps)
    else:
        print(pg_name)
    lines = ["| database | transactions per refresh, before → now | refresh before, wall / CPU "
             "| refresh now, wall / CPU | ratio | transactions per tap | tap, wall |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, r in results.items():
        ratio = r["before_ms"][0] / r["now_ms"][0]
        lines.append(f"| {name} | {r['before_tx']} → {r['now_tx']} | "
                     f"{r['before_ms'][0]:.1f} / {r['before_ms'][1]:.1f} ms | "
                     f"{r['now_ms'][0]:.1f} / {r['now_ms'][1]:.1f} ms | {ratio:.2f}× | "
                     f"{r['tap_tx']:.0f} | {r['tap_ms']:.1f} ms |")
    print("\n".join(lines))
    lite = results["SQLite"]
    targets = [
        f"TARGET refresh_transactions measured={lite['now_tx']}tx goal={GOAL_REFRESH_TX}tx "
        f"{'PASS' if lite['now_tx'] <= GOAL_REFRESH_TX else 'MISS'}",
        f"TARGET refresh_ms_10k_sqlite measured={lite['now_ms'][0]:.1f}ms "
        f"goal={GOAL_REFRESH_MS:.0f}ms "
        f"{'PASS' if lite['now_ms'][0] <= GOAL_REFRESH_MS else 'MISS'}",
        f"TARGET tap_transactions measured={lite['tap_tx']:.0f}tx goal={GOAL_TAP_TX}tx "
        f"{'PASS' if lite['tap_tx'] <= GOAL_TAP_TX else 'MISS'}",
    ]
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = [
        "## Dashboard read model (`python bench/bench_read_model.py`)", "",
        f"Machine: {os.cpu_count()} cores, {cpu_model()}, Python "
        f"{platform.python_version()}. Run {when}, load average {load0:.1f} at start. "
        f"A yes/no question with {n_reports:,} reports; medians of {calls} refreshes and "
        f"{taps} taps (each tap a new device through the phone routes). \"Before\" is what "
        "the live panel called until the read model (question, estimate, rounds, "
        "trajectory); \"now\" is `Results.dashboard_snapshot`, one read transaction.", "",
        *lines, "", "```", *targets, "```"]
    if not args.no_doc:
        update_doc("bench_read_model", section)
    print("\n".join(targets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
