"""How large the Streamlit websocket's messages really are, both ways, page by page.

    python bench/bench_ws_messages.py            # measure, rewrite its docs section
    python bench/bench_ws_messages.py --smoke    # the home page and the dashboard once

Starts the app on a scratch SQLite database holding a revealed yes/no question with
10,000 reports and a five-option unary-encoding question with 2,000, logs in through
the login form in headless Chromium, then opens every Streamlit page (the home
page, the self-study pages, the dashboard and its projection mode) and records
every websocket frame from Chromium's own events for a few seconds after the page
shows (the dashboard refreshes every 2 s meanwhile).

``server.maxMessageSize`` (MB, ``.streamlit/config.toml``) bounds both directions:
uvicorn refuses a larger frame from a browser, Streamlit replaces a larger message to
a browser by an error. Targets: the configured limit is at least 4 times the largest
message seen in either direction, and at most 1 MB (instead of Streamlit's 200 MB), so
a crafted 15 MB frame is refused before it is parsed.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import sys
import tempfile
import time
import tomllib
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._report import cpu_model, update_doc
from bench.cluster import running_server
from bench.harness import INSTRUCTOR_KEY

CHROMIUM = os.environ.get("LDP_TEST_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
DIE = {"design": "die", "faces": 4, "truthful": 3}
UE5 = {"design": "ue", "d": 5, "p": 0.5, "q": 0.25}
GOAL_MARGIN = 4.0
GOAL_LIMIT_MB = 1
#: (label, path, text that shows the page is drawn)
STUDY = [("home", "/", "Learn on my own"),
         ("randomized response", "/randomized-response", "Randomized response"),
         ("class exercise", "/class-exercise", "class exercise"),
         ("likelihood lab", "/likelihood", "Likelihood"),
         ("local vs central", "/local-vs-central", "Local"),
         ("histogram lab", "/histograms", "Histogram"),
         ("averaging attack", "/averaging-attack", "averaging attack"),
         ("manipulation lab", "/manipulation", "Manipulation lab")]


def configured_limit_mb() -> float:
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    return float(cfg.get("server", {}).get("maxMessageSize", 200))


def seed(svc) -> tuple[int, int, int]:
    poll = svc.polls.create_poll("message sizes")
    q = svc.polls.add_question(poll.id, "Vanilla (1) or chocolate (0)?",
                               options=("Chocolate", "Vanilla"), design_params=DIE)
    svc.running.open_question(q.id)
    svc.results.add_simulated_answers(
        q.id, svc.results.rehearsal_class(q.id, 10_000, 0.6, seed=1), seed=2)
    svc.running.set_revealed(q.id, True)
    h = svc.polls.add_question(poll.id, "Favourite season?", kind="categorical",
                               options=("Winter", "Spring", "Summer", "Autumn", "Rainy"),
                               design_params=UE5)
    svc.running.open_question(h.id)
    svc.results.add_simulated_answers(
        h.id, svc.results.rehearsal_class(h.id, 2_000, [0.1, 0.2, 0.3, 0.3, 0.1], seed=3),
        seed=4)
    svc.running.set_revealed(h.id, True)
    return poll.id, q.id, h.id


def frames_of(page, url: str, ready: str, linger_s: float) -> tuple[list[int], list[int]]:
    """Sizes (bytes) of the frames sent and received on the page's websocket."""
    sent: list[int] = []
    received: list[int] = []

    def on_ws(ws) -> None:
        ws.on("framesent", lambda payload: sent.append(len(payload)))
        ws.on("framereceived", lambda payload: received.append(len(payload)))

    page.on("websocket", on_ws)
    page.goto(url)
    page.get_by_text(ready).first.wait_for(timeout=60_000)
    deadline = time.monotonic() + linger_s
    while time.monotonic() < deadline:  # a measurement window, not a wait for a state
        page.wait_for_timeout(250)
    page.remove_listener("websocket", on_ws)
    return sent, received


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--linger", type=float, default=6.0, help="seconds to record per page")
    ap.add_argument("--smoke", action="store_true", help="two pages, no doc update")
    ap.add_argument("--no-doc", action="store_true")
    args = ap.parse_args()
    if args.smoke:
        args.no_doc, args.linger = True, 1.0
    from playwright.sync_api import sync_playwright

    from classroom.service import PollService
    from classroom.store import Store

    load0 = os.getloadavg()[0]
    rows: list[tuple[str, int, int, int, int]] = []
    with tempfile.TemporaryDirectory(prefix="ldp-ws-") as tmp:
        data = Path(tmp)
        db = f"sqlite:///{data / 'classroom.db'}"
        store = Store(db)
        pid, qid, hid = seed(PollService.on(store))
        env = {"LDP_CLASSROOM_DATA_DIR": str(data), "LDP_CLASSROOM_DATABASE_URL": db,
               "LDP_CLASSROOM_INSTRUCTOR_KEY": INSTRUCTOR_KEY}
        pages = STUDY[:1] if args.smoke else STUDY
        dash = [("dashboard, yes/no question (10,000 reports)",
                 f"/dashboard?pid={pid}&qid={qid}", "SD, fixed class"),
                ("dashboard, histogram question (2,000 reports)",
                 f"/dashboard?pid={pid}&qid={hid}", "Reports received"),
                ("projection mode", f"/dashboard?projector=1&pid={pid}&qid={qid}",
                 "SD, population")]
        if args.smoke:
            dash = dash[:1]
        try:
            with running_server(env, log_path=data / "server.log") as server, \
                    sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
                page = ctx.new_page()
                for label, path, ready in pages:
                    sent, got = frames_of(page, server.url + path, ready, args.linger)
                    rows.append((label, len(sent), max(sent, default=0), len(got),
                                 max(got, default=0)))
                page.goto(f"{server.url}/auth/login")
                page.fill("#key", INSTRUCTOR_KEY)
                page.click("button[type=submit]")
                page.wait_for_url(f"{server.url}/dashboard**")
                for label, path, ready in dash:
                    sent, got = frames_of(page, server.url + path, ready, args.linger)
                    rows.append((label, len(sent), max(sent, default=0), len(got),
                                 max(got, default=0)))
                browser.close()
        finally:
            store.close()

    limit_mb = configured_limit_mb()
    largest = max(max(r[2], r[4]) for r in rows)
    margin = limit_mb * 1e6 / largest
    print(f"{'page':48} {'sent':>6} {'largest sent':>13} {'received':>9} {'largest received':>17}")
    for label, n_sent, big_sent, n_got, big_got in rows:
        print(f"{label:48} {n_sent:6d} {big_sent / 1e3:10.1f} kB {n_got:9d} "
              f"{big_got / 1e3:14.1f} kB")
    print(f"largest message either way: {largest / 1e3:.1f} kB; server.maxMessageSize = "
          f"{limit_mb:g} MB, {margin:.1f}x that")
    targets = [
        f"TARGET ws_limit_margin measured={margin:.1f}x goal={GOAL_MARGIN:.1f}x "
        f"{'PASS' if margin >= GOAL_MARGIN else 'MISS'}",
        f"TARGET ws_limit_mb measured={limit_mb:g}MB goal={GOAL_LIMIT_MB}MB "
        f"{'PASS' if limit_mb <= GOAL_LIMIT_MB else 'MISS'}",
    ]
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = [
        "## Websocket message sizes (`python bench/bench_ws_messages.py`)", "",
        f"Machine: {os.cpu_count()} cores, {cpu_model()}, Python "
        f"{platform.python_version()}, Debian Chromium through Playwright "
        f"{importlib.metadata.version('playwright')}. Run {when}, load average {load0:.1f} "
        f"at start. Every frame of each page's websocket, from Chromium's events, during "
        f"the page's load and {args.linger:g} s after it (the dashboard refreshes every "
        "2 s); the dashboard shows a revealed yes/no question with 10,000 reports and a "
        "five-option unary-encoding question with 2,000.", "",
        "| page | frames sent | largest sent | frames received | largest received |",
        "| --- | ---: | ---: | ---: | ---: |",
        *[f"| {label} | {n_sent} | {big_sent / 1e3:.1f} kB | {n_got} | {big_got / 1e3:.1f} kB |"
          for label, n_sent, big_sent, n_got, big_got in rows], "",
        f"Largest message either way: {largest / 1e3:.1f} kB. `server.maxMessageSize` is "
        f"{limit_mb:g} MB ({margin:.1f}× that; Streamlit's default is 200 MB): uvicorn "
        "closes the stream on a larger frame before anything parses it.", "",
        "```", *targets, "```"]
    if not args.no_doc:
        update_doc("bench_ws_messages", section)
    print("\n".join(targets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
