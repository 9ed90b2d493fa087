"""Benchmark of ldp_core.shuffle: the exact shuffled ε of yes/no designs and the clones bound.

    python bench/bench_shuffle.py

* Exact ε(δ = 1e-6) of n shuffled reports (``shuffle_epsilon``), cache cleared
  before every run, for the class exercise's die (a symmetric design: one
  direction) and forced response with a = 0.7, b = 0.2 (asymmetric: both
  directions), n = 100 to 2,000; then the same call again (a cache hit).
* Side by side, the direct way: for every m, the two binomials convolved
  (``np.convolve`` of their exact pmfs) and both hockey-stick divergences at a
  fixed ε, one m at a time, at n = 250 and 500 (at n = 2,000 it would take
  minutes); the ratio compares it with ``shuffle_delta`` at the same n.
* Feldman, McMillan & Talwar's numerical bound (``clones_epsilon``) at
  ε0 = ln 3, n = 2,000, and their README's example (ε0 = 4, n = 10^5).
* The inverse (``shuffle_local_epsilon``, exact RR) at n = 100 and 2,000.

Every time is the median of repeated runs (wall clock, with the process's CPU
time beside it). Results go to stdout and to the ``bench_shuffle`` section of
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np

from bench._report import BENCH_DOC, machine, update_doc
from ldp_core import (
    DieRR,
    ForcedResponse,
    clones_epsilon,
    shuffle_delta,
    shuffle_epsilon,
    shuffle_local_epsilon,
)
from ldp_core import shuffle as shuffle_module

GOAL_EXACT_MS = 50.0
GOAL_CLONES_MS = 50.0
GOAL_CACHED_MS = 0.05
DELTA = 1e-6


def _clear() -> None:
    shuffle_module._exact_epsilon.cache_clear()
    shuffle_module._exact_delta.cache_clear()
    shuffle_module._clones_epsilon.cache_clear()
    shuffle_module._local_epsilon.cache_clear()


def timed(fn: Callable[[], object], repeats: int, *, clear: bool = True) -> tuple[float, float]:
    """Median wall and CPU milliseconds of ``fn`` (caches cleared before each run)."""
    walls, cpus = [], []
    for _ in range(repeats):
        if clear:
            _clear()
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append((time.perf_counter() - w) * 1e3)
        cpus.append((time.process_time() - c) * 1e3)
    return statistics.median(walls), statistics.median(cpus)


def direct_delta(a: float, b: float, n: int, epsilon: float) -> float:
    """δ(ε) the direct way: every m, two binomials convolved, both divergences."""
    lg = [math.lgamma(k + 1) for k in range(n + 1)]

    def pmf(count: int, p: float) -> np.ndarray:
        k = np.arange(count + 1)
        return np.exp(np.array(lg)[count] - np.array(lg)[k] - np.array(lg)[count - k]
                      + k * math.log(p) + (count - k) * math.log1p(-p))

    x, worst = math.exp(epsilon), 0.0
    for m in range(n):
        s = np.convolve(pmf(m, a), pmf(n - 1 - m, b))
        up, down = np.r_[0.0, s], np.r_[s, 0.0]
        p, q = a * up + (1 - a) * down, b * up + (1 - b) * down
        worst = max(worst, np.clip(p - x * q, 0, None).sum(), np.clip(q - x * p, 0, None).sum())
    return worst


def run(args: argparse.Namespace) -> dict:
    designs = {"die (3/4, 1/4)": DieRR(4, 3), "forced (7/10, 2/10)": ForcedResponse(0.5, 0.2)}
    res: dict = {"exact": [], "direct": [], "other": [], "clones_n": args.clones_n}
    for n in args.sizes:
        for name, design in designs.items():
            wall, cpu = timed(lambda d=design, n=n: shuffle_epsilon(d, n, DELTA), args.repeats)
            shuffle_epsilon(design, n, DELTA)
            hit = timed(lambda d=design, n=n: shuffle_epsilon(d, n, DELTA), args.repeats * 20,
                        clear=False)
            res["exact"].append((name, n, shuffle_epsilon(design, n, DELTA), wall, cpu, hit[0]))
            print(f"exact {name} n={n}: {wall:.1f} ms", flush=True)
    for n in args.direct_sizes:
        eps = shuffle_epsilon(DieRR(4, 3), n, DELTA)
        slow = timed(lambda n=n, e=eps: direct_delta(0.75, 0.25, n, e), args.slow_repeats)
        fast = timed(lambda n=n, e=eps: shuffle_delta(DieRR(4, 3), n, e), args.repeats)
        agree = shuffle_delta(DieRR(4, 3), n, eps) / direct_delta(0.75, 0.25, n, eps)
        res["direct"].append((n, slow, fast, agree))
        print(f"direct n={n}: {slow[0]:.0f} ms against {fast[0]:.1f} ms", flush=True)
    cases = [
        (f"clones_epsilon(ln 3, {args.clones_n}, 1e-6)",
         lambda: clones_epsilon(math.log(3), args.clones_n, DELTA)),
        (f"clones_epsilon(4, {args.readme_n}, 1e-6)",
         lambda: clones_epsilon(4.0, args.readme_n, DELTA)),
        ("shuffle_local_epsilon(100, 0.55, 1e-6)", lambda: shuffle_local_epsilon(100, 0.55, DELTA)),
        (f"shuffle_local_epsilon({args.clones_n}, 0.2, 1e-6)",
         lambda: shuffle_local_epsilon(args.clones_n, 0.2, DELTA)),
    ]
    for label, fn in cases:
        wall, cpu = timed(fn, args.repeats)
        res["other"].append((label, float(fn()), wall, cpu))  # type: ignore[arg-type]
        print(f"{label}: {wall:.1f} ms", flush=True)
    return res


def table(res: dict) -> list[str]:
    lines = ["| design | n | ε at δ = 1e-6 | first call, ms (CPU) | cached, ms |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for name, n, eps, wall, cpu, hit in res["exact"]:
        lines.append(f"| {name} | {n:,} | {eps:.5f} | {wall:.1f} ({cpu:.1f}) | {hit:.4f} |")
    lines += ["", "| n | direct (every m convolved), ms | `shuffle_delta`, ms | ratio | "
              "δ agrees to |", "| ---: | ---: | ---: | ---: | ---: |"]
    for n, slow, fast, agree in res["direct"]:
        lines.append(f"| {n:,} | {slow[0]:.0f} | {fast[0]:.1f} | {slow[0] / fast[0]:.0f}× | "
                     f"{abs(agree - 1):.0e} |")
    lines += ["", "| call | value | ms (CPU) |", "| --- | ---: | ---: |"]
    for label, value, wall, cpu in res["other"]:
        lines.append(f"| `{label}` | {value:.5f} | {wall:.1f} ({cpu:.1f}) |")
    return lines


def targets(res: dict) -> list[str]:
    largest = max(n for _, n, *_ in res["exact"])
    exact = max(wall for _, n, _, wall, _, _ in res["exact"] if n == largest)
    hit = max(h for *_, h in res["exact"])
    clones = res["other"][0][2]
    out = []
    for name, measured, goal, unit in (
            (f"exact_epsilon_n{largest}", exact, GOAL_EXACT_MS, "ms"),
            (f"clones_epsilon_n{res['clones_n']}", clones, GOAL_CLONES_MS, "ms"),
            ("cached_lookup", hit, GOAL_CACHED_MS, "ms")):
        verdict = "PASS" if measured <= goal else "MISS"
        out.append(f"TARGET {name} measured={measured:.3g}{unit} goal={goal:g}{unit} {verdict}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=9, help="runs per median")
    ap.add_argument("--no-doc", action="store_true", help="do not update docs/benchmarks.md")
    ap.add_argument("--smoke", action="store_true",
                    help="small sizes, one run each, in seconds; no doc update")
    args = ap.parse_args()
    args.sizes, args.direct_sizes = (100, 500, 1000, 2000), (250, 500)
    args.slow_repeats, args.clones_n, args.readme_n = 3, 2000, 100_000
    if args.smoke:
        args.sizes, args.direct_sizes = (100, 300), (60,)
        args.repeats, args.slow_repeats, args.no_doc = 1, 1, True
        args.clones_n, args.readme_n = 300, 3000
    load = os.getloadavg()
    machine_text = machine()
    print(f"machine: {machine_text}; load average at start {load[0]:.1f}", flush=True)
    res = run(args)
    load_end = os.getloadavg()
    lines, target_lines = table(res), targets(res)
    print("\n" + "\n".join(lines) + "\n")
    if not args.no_doc:
        when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        update_doc("bench_shuffle", [
            "## Shuffle amplification (`python bench/bench_shuffle.py`)",
            "",
            f"Machine: {machine_text}. Load average {load[0]:.1f} at start, {load_end[0]:.1f} at "
            f"the end (other jobs share the cores, so times are upper bounds). Run {when}.",
            f"Medians of {args.repeats} runs ({args.slow_repeats} for the direct way), "
            "measured side by side in one run: wall-clock time, the process's CPU time in "
            "brackets. Every first call starts from an empty cache. The targets are judged "
            "on wall-clock time.",
            "",
            *lines,
            "",
            "```",
            *target_lines,
            "```",
        ])
        print(f"updated {BENCH_DOC.relative_to(ROOT)}")
    print("\n".join(target_lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
