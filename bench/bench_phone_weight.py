"""What a phone downloads: the phone page's first load in headless Chromium.

    python bench/bench_phone_weight.py            # measure, rewrite its docs section
    python bench/bench_phone_weight.py --smoke    # the same once, no doc update

Starts the app on a scratch SQLite database with an open question, opens
``/join/CODE`` in a fresh browser context at a phone's viewport (360 × 640, no
cache), waits until the answer buttons are there, then taps one and waits for
the receipt. Counted from Chromium's own network events: requests, bytes
transferred (headers and encoded bodies, as on the Wi-Fi), and requests to any
host other than the app's. Targets: first load <= 60 KB in <= 5 requests,
0 requests to another host.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._report import cpu_model, update_doc
from bench.cluster import running_server
from bench.harness import INSTRUCTOR_KEY, exercise

GOAL_KB, GOAL_REQUESTS, GOAL_OTHER_HOSTS = 60.0, 5, 0
CHROMIUM = os.environ.get("LDP_TEST_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def measure(browser, base_url: str, code: str) -> dict:
    """One first load and tap in a fresh context."""
    host = urlsplit(base_url).netloc
    ctx = browser.new_context(viewport={"width": 360, "height": 640}, is_mobile=True,
                              has_touch=True)
    page = ctx.new_page()
    log: list[dict] = []
    phase = ["load"]

    def finished(request) -> None:
        sizes = request.sizes()
        log.append({"phase": phase[0], "url": request.url,
                    "host": urlsplit(request.url).netloc,
                    "bytes": sizes["responseHeadersSize"] + sizes["responseBodySize"]})

    def failed(request) -> None:
        log.append({"phase": phase[0], "url": request.url, "host": urlsplit(request.url).netloc,
                    "bytes": 0})

    page.on("requestfinished", finished)
    page.on("requestfailed", failed)
    began = time.perf_counter()
    page.goto(f"{base_url}/join/{code}")
    buttons = page.get_by_role("button", name="Vanilla")
    buttons.first.wait_for(state="visible", timeout=30_000)
    load_s = time.perf_counter() - began
    phase[0] = "tap"
    began = time.perf_counter()
    buttons.first.click()
    page.get_by_text("received", exact=False).first.wait_for(state="visible", timeout=30_000)
    tap_s = time.perf_counter() - began
    ctx.close()
    first = [r for r in log if r["phase"] == "load"]
    return {
        "load_requests": len(first),
        "load_kb": sum(r["bytes"] for r in first) / 1024,
        "tap_requests": len(log) - len(first),
        "tap_kb": sum(r["bytes"] for r in log if r["phase"] == "tap") / 1024,
        "other_hosts": sorted({r["host"] for r in log if r["host"] != host}),
        "load_s": load_s, "tap_s": tap_s,
        "urls": [r["url"].replace(base_url, "") for r in first],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--smoke", action="store_true", help="one load, no doc update")
    ap.add_argument("--no-doc", action="store_true")
    args = ap.parse_args()
    if args.smoke:
        args.repeats, args.no_doc = 1, True
    from playwright.sync_api import sync_playwright

    from classroom.service import PollService
    from classroom.store import Store

    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="ldp-weight-") as tmp:
        data = Path(tmp)
        db = f"sqlite:///{data / 'classroom.db'}"
        store = Store(db)
        svc = PollService.on(store)
        poll, _ = exercise(svc, "weight")
        env = {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_DATABASE_URL": db,
               "LDP_CLASSROOM_INSTRUCTOR_KEY": INSTRUCTOR_KEY}
        try:
            with running_server(env, log_path=data / "server.log") as server, \
                    sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                runs = [measure(browser, server.url, poll.join_code)
                        for _ in range(args.repeats)]
                browser.close()
        finally:
            store.close()
    med = {k: statistics.median(r[k] for r in runs)
           for k in ("load_requests", "load_kb", "tap_requests", "tap_kb", "load_s", "tap_s")}
    others = sorted({h for r in runs for h in r["other_hosts"]})
    print(f"first load: {med['load_requests']:.0f} requests, {med['load_kb']:.1f} KB "
          f"({', '.join(runs[0]['urls'])}); page ready in {med['load_s']:.2f} s")
    print(f"tap to receipt: {med['tap_requests']:.0f} requests, {med['tap_kb']:.1f} KB, "
          f"{med['tap_s']:.2f} s; other hosts: {others or 'none'}")
    targets = [
        f"TARGET phone_first_load_kb measured={med['load_kb']:.1f}KB goal={GOAL_KB:.1f}KB "
        f"{'PASS' if med['load_kb'] <= GOAL_KB else 'MISS'}",
        f"TARGET phone_first_load_requests measured={med['load_requests']:.0f}requests "
        f"goal={GOAL_REQUESTS}requests "
        f"{'PASS' if med['load_requests'] <= GOAL_REQUESTS else 'MISS'}",
        f"TARGET phone_other_hosts measured={len(others)}hosts goal={GOAL_OTHER_HOSTS}hosts "
        f"{'PASS' if len(others) <= GOAL_OTHER_HOSTS else 'MISS'}",
    ]
    # The section is built in every run, --smoke included, so a mistake in it cannot hide.
    pw_version = importlib.metadata.version("playwright")
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = [
        "## Phone page weight (`python bench/bench_phone_weight.py`)", "",
        f"Machine: {os.cpu_count()} cores, {cpu_model()}, Python "
        f"{platform.python_version()}, Debian Chromium through Playwright "
        f"{pw_version}. Run {when}, load average {load0:.1f} at start. "
        f"Medians of {args.repeats} first loads of `/join/CODE`, each in a fresh browser "
        "context (no cache, no cookie) at 360 × 640; bytes are headers plus encoded "
        "bodies as Chromium received them.", "",
        "| | requests | transferred | time |", "| --- | ---: | ---: | ---: |",
        f"| first load, until the answer buttons show | {med['load_requests']:.0f} | "
        f"{med['load_kb']:.1f} KB | {med['load_s']:.2f} s |",
        f"| tap → receipt | {med['tap_requests']:.0f} | {med['tap_kb']:.1f} KB | "
        f"{med['tap_s']:.2f} s |", "",
        f"Requests of the first load: {', '.join(f'`{u}`' for u in runs[0]['urls'])}. "
        f"Requests to any other host: {len(others)}.", "",
        "```", *targets, "```"]
    if not args.no_doc:
        update_doc("bench_phone_weight", section)
    print("\n".join(targets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
