"""Slow clients against a server with no proxy in front: do the phones still vote?

    python bench/bench_slow_clients.py            # measure, rewrite its docs section
    python bench/bench_slow_clients.py --smoke    # a few hundred connections, small header

Starts ``streamlit run app.py`` as the README says (no nginx), side by side: with the
app's server limits (``web/serving.py``) and without them (this script as the launcher,
with ``web.serving.apply`` replaced by a no-op, which is the server as it was); each
under the machine's open-file limit and under a common 1,024 (``prlimit``). Then, on
each:

1. *quiet*: phones join and vote one after another (the baseline);
2. *slowloris*: one client opens N connections that send part of a request header and
   then nothing; while they are held, the phones join and vote again;
3. *huge header*: one connection sends header lines without end (300 MB, or until the
   server closes it); the server's resident memory before and after;
4. *after the header timeout*: the server's open files, polled until they fall back.

The slow client runs in this process (its own open-file limit raised); the phones are
``tests/support/phone_client.PhoneStudent`` (page, state, vote). Targets (server limits
on): every phone votes under both open-file limits; the 300 MB header adds at most
50 MB to the server; the held connections are closed within the header timeout and a
margin.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import resource
import socket
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._report import cpu_model, update_doc
from bench.cluster import Server, running_server
from tests.support.phone_client import PhoneStudent

DIE = {"design": "die", "faces": 4, "truthful": 3}
KEY = "slow-clients-bench-key-0123"
LOW_FILES = 1024
GOAL_RSS_MB = 50.0
#: The start of a request that never ends: the slow client sends this, then nothing.
PARTIAL = b"GET /join HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow-client\r\nX-Wait: "
#: One header line of the huge header (1 KB), sent again and again.
LINE = b"X-Padding: " + b"p" * 1011 + b"\r\n"


@dataclass
class Votes:
    """How the phones fared: one (status, seconds) per phone."""

    outcomes: list[tuple[int, float]] = field(default_factory=list)

    @property
    def ok(self) -> int:
        return sum(1 for status, _ in self.outcomes if status == 200)

    def quantile_ms(self, q: float) -> float:
        times = sorted(s for status, s in self.outcomes if status == 200)
        if not times:
            return float("nan")
        return 1000 * times[min(len(times) - 1, int(q * len(times)))]


@dataclass
class Run:
    """One server under the four scenarios."""

    label: str
    held: int = 0
    quiet: Votes = field(default_factory=Votes)
    attacked: Votes = field(default_factory=Votes)
    files_held: int = 0
    header_sent_mb: float = 0.0
    header_closed: bool = False
    rss_before_mb: float = 0.0
    rss_after_mb: float = 0.0
    files_after: int = 0
    closed_after_s: float = float("nan")


# -- the server's side, from /proc -------------------------------------------------------------
def open_files(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


# -- the slow client ------------------------------------------------------------------------
def raise_own_open_files() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


async def hold_partial_headers(url: str, n: int) -> list[asyncio.StreamWriter]:
    """Open ``n`` connections, each sending the start of a request and then nothing."""
    host, port = url.split("//", 1)[1].split(":")
    gate = asyncio.Semaphore(100)

    async def one() -> asyncio.StreamWriter | None:
        async with gate:
            try:
                _, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), 10)
                writer.write(PARTIAL)
                await writer.drain()
                return writer
            except (TimeoutError, OSError):
                return None

    return [w for w in await asyncio.gather(*(one() for _ in range(n))) if w is not None]


def release(writers: Sequence[asyncio.StreamWriter]) -> None:
    for writer in writers:
        writer.transport.abort()


def huge_header(url: str, total_mb: int, pid: int) -> tuple[float, bool, float]:
    """Send header lines without end, up to ``total_mb``: (MB sent, whether the server
    closed the connection first, the server's resident MB with it still open)."""
    host, port = url.split("//", 1)[1].split(":")
    chunk = LINE * 1024  # 1 MB
    sent, closed = 0, False
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(b"GET /join HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        try:
            while sent < total_mb << 20:
                sock.sendall(chunk)
                sent += len(chunk)
        except OSError:
            closed = True
        # What the server holds while the header is still coming: wait until its memory
        # stops growing (it parses what was sent), then read it.
        last, now, deadline = -1.0, rss_mb(pid), time.monotonic() + 15
        while abs(now - last) >= 1.0 and time.monotonic() < deadline:
            time.sleep(0.5)
            last, now = now, rss_mb(pid)
        return sent / (1 << 20), closed, now


# -- the phones ------------------------------------------------------------------------------
async def phones_vote(url: str, code: str, n: int, *, at_once: int = 5,
                      timeout: float = 15.0) -> Votes:
    """``n`` phones, ``at_once`` at a time, each on its own connections: page, state,
    vote; (status, seconds) each, the status -1 for a phone whose requests failed or
    timed out."""
    votes = Votes()
    gate = asyncio.Semaphore(at_once)

    async def one() -> None:
        async with gate, PhoneStudent(url, code, timeout=timeout) as phone:
            began = time.perf_counter()
            try:
                status = (await phone.join()).status
                if status == 200:
                    status = (await phone.vote(1)).status
            except Exception:  # noqa: BLE001 - a failed phone is what is counted here
                status = -1
            votes.outcomes.append((status, time.perf_counter() - began))

    await asyncio.gather(*(one() for _ in range(n)))
    return votes


def open_question(data: Path) -> str:
    from classroom.service import PollService
    from classroom.store import Store

    store = Store(f"sqlite:///{data / 'classroom.db'}")
    try:
        svc = PollService.on(store)
        poll = svc.polls.create_poll("slow clients")
        svc.running.open_question(svc.polls.add_question(poll.id, "Vanilla (1) or chocolate (0)?",
                                                         options=("Chocolate", "Vanilla"),
                                                         design_params=DIE).id)
        return poll.join_code
    finally:
        store.close()


def launcher(*, guarded: bool, files: int | None) -> list[str]:
    start = ([sys.executable, "-m", "streamlit", "run", "app.py"] if guarded else
             [sys.executable, str(Path(__file__).resolve()), "--unguarded-server", "run",
              "app.py"])
    return (["prlimit", f"--nofile={files}:{files}"] if files else []) + start


def measure(label: str, *, guarded: bool, files: int | None, held: int, phones: int,
            header_mb: int) -> Run:
    """One server through the four scenarios."""
    run = Run(label, held=held)
    with tempfile.TemporaryDirectory(prefix="ldp-slow-") as tmp:
        data = Path(tmp)
        env = {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_INSTRUCTOR_KEY": KEY,
               "LDP_CLASSROOM_DATABASE_URL": f"sqlite:///{data / 'classroom.db'}"}
        code = open_question(data)
        with running_server(env, launcher=launcher(guarded=guarded, files=files),
                            log_path=data / "server.log", timeout=120) as server:
            run.quiet = asyncio.run(phones_vote(server.url, code, phones))
            run.attacked, run.files_held = asyncio.run(_attacked(server, code, held, phones))
            run.rss_before_mb = rss_mb(server.pid)
            run.header_sent_mb, run.header_closed, run.rss_after_mb = huge_header(
                server.url, header_mb, server.pid)
    return run


async def _attacked(server: Server, code: str, held: int, phones: int) -> tuple[Votes, int]:
    writers = await hold_partial_headers(server.url, held)
    try:
        files = open_files(server.pid)
        return await phones_vote(server.url, code, phones), files
    finally:
        release(writers)


def closing_time(*, held: int, timeout_s: float) -> tuple[float, int, int]:
    """Guarded server: hold ``held`` connections and time how long until the server has
    closed them (its open files back near the baseline): (seconds, files before, after)."""
    with tempfile.TemporaryDirectory(prefix="ldp-slow-") as tmp:
        data = Path(tmp)
        env = {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_INSTRUCTOR_KEY": KEY}
        with running_server(env, log_path=data / "server.log", timeout=120) as server:
            baseline = open_files(server.pid)

            async def hold() -> tuple[float, int]:
                writers = await hold_partial_headers(server.url, held)
                began, peak = time.monotonic(), open_files(server.pid)
                try:
                    while time.monotonic() - began < timeout_s:
                        if open_files(server.pid) <= baseline + 16:
                            return time.monotonic() - began, peak
                        await asyncio.sleep(0.5)
                    return float("nan"), peak
                finally:
                    release(writers)

            seconds, peak = asyncio.run(hold())
            return seconds, peak, open_files(server.pid)


# -- report ---------------------------------------------------------------------------------
def _fmt_votes(v: Votes, n: int) -> str:
    if not v.ok:
        return f"0/{n}"
    return f"{v.ok}/{n}, {v.quantile_ms(0.5):.0f} ms, {v.quantile_ms(0.95):.0f} ms"


def report(runs: list[Run], closing: tuple[float, int, int], *, phones: int, held: int,
           header_mb: int, smoke: bool, started: float) -> int:
    from web import serving

    load = os.getloadavg()
    lines = [
        f"Measured {datetime.now(UTC):%Y-%m-%d} on {cpu_model()} ({os.cpu_count()} cores, "
        f"Python {platform.python_version()}), load average {load[0]:.1f} at the end, "
        f"{time.time() - started:.0f} s in all; `python bench/bench_slow_clients.py`.",
        "",
        f"One client holds connections that sent part of a request header ({held:,}; 1,100 "
        f"under 1,024 open files); meanwhile {phones} phones, five at a time, load the page, "
        "read the poll and vote (ok, median and 95th percentile in ms; a phone gives up after "
        "15 s). Then one connection sends header lines without end "
        f"({header_mb} MB, 100 MB without limits, or until the server closes it).",
        "",
        "| server | held | quiet: votes ok, p50, p95 | while held: votes ok, p50, p95 | "
        "server's open files while held | header sent (MB) | closed by server | "
        "RSS before → with it (MB) |",
        "| --- | ---: | --- | --- | ---: | ---: | --- | --- |",
    ]
    for r in runs:
        lines.append(f"| {r.label} | {r.held:,} | {_fmt_votes(r.quiet, phones)} | "
                     f"{_fmt_votes(r.attacked, phones)} | {r.files_held:,} | "
                     f"{r.header_sent_mb:.1f} | {'yes' if r.header_closed else 'no'} | "
                     f"{r.rss_before_mb:.0f} → {r.rss_after_mb:.0f} |")
    seconds, peak, after = closing
    lines += ["", f"With the limits, {held:,} held connections raised the server's open files "
              f"to {peak:,}; they were closed {seconds:.1f} s later (header timeout "
              f"{serving.HEADER_TIMEOUT_S:.0f} s), leaving {after:,} open."]
    for line in lines:
        print(line)
    guarded = [r for r in runs if r.label.startswith("limits")]
    all_ok = min((r.attacked.ok for r in guarded), default=0)
    growth = max((r.rss_after_mb - r.rss_before_mb for r in guarded), default=float("nan"))
    targets = [
        ("slow_clients_phones_voted", f"{100 * all_ok / phones:.0f}%", "100%",
         all_ok == phones),
        ("slow_clients_header_rss_growth", f"{growth:.1f}MB", f"{GOAL_RSS_MB:.0f}MB",
         growth <= GOAL_RSS_MB),
        ("slow_clients_closed_within", f"{seconds:.1f}s", f"{serving.HEADER_TIMEOUT_S + 10:.0f}s",
         seconds <= serving.HEADER_TIMEOUT_S + 10),
    ]
    for name, measured, goal, ok in targets:
        print(f"TARGET {name} measured={measured} goal={goal} {'PASS' if ok else 'MISS'}")
    if not smoke:
        update_doc("slow_clients", ["## Slow clients with no proxy in front", "", *lines, "",
                                    *(f"TARGET {n} measured={m} goal={g} "
                                      f"{'PASS' if ok else 'MISS'}"
                                      for n, m, g, ok in targets)])
    return 0


def serve_unguarded(argv: list[str]) -> int:
    """The launcher for the comparison: ``streamlit run`` with the server limits off."""
    import web.serving

    web.serving.apply = lambda config: "  Server limits: off (bench/bench_slow_clients.py)"
    from streamlit.web import cli

    sys.argv = ["streamlit", *argv]
    return cli.main()


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--unguarded-server":
        return serve_unguarded(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="small sizes; docs left alone")
    ap.add_argument("--held", type=int, default=5000)
    ap.add_argument("--phones", type=int, default=30)
    ap.add_argument("--header-mb", type=int, default=300)
    args = ap.parse_args()
    held, phones, header_mb = ((300, 5, 16) if args.smoke else
                               (args.held, args.phones, args.header_mb))
    started = time.time()
    raise_own_open_files()
    runs = []
    for guarded in (True, False):
        for files in (None, LOW_FILES):
            label = (f"{'limits' if guarded else 'no limits (before)'}, open files "
                     f"{files or 'as the machine gives'}")
            many = held if files is None else LOW_FILES + 76  # 1,100 under 1,024
            # Without limits, a 300 MB header can take the server down with it: 100 MB
            # shows the growth.
            mb = header_mb if guarded else min(header_mb, 100)
            runs.append(measure(label, guarded=guarded, files=files, held=many,
                                phones=phones, header_mb=mb))
            print(f"  done: {label}", file=sys.stderr, flush=True)
    closing = closing_time(held=held, timeout_s=120)
    return report(runs, closing, phones=phones, held=held, header_mb=header_mb,
                  smoke=args.smoke, started=started)


if __name__ == "__main__":
    sys.exit(main())
