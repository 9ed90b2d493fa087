"""Benchmark of ldp_core's simulators: per respondent and exact aggregate.

    python bench/bench_ldp_core.py

* Per respondent, d = 14, eps = 1: OUE and GRR for n = 10^5 and 10^6, every
  student's report drawn and the support counts taken
  (``simulate_support_counts``, chunked), against a plain per-user Python loop
  written the way the course notebooks do it (``perturb_bit`` per bit with
  ``np.random.random``). The loop is timed at n = 10^5; its n = 10^6 figure is
  that time x 10 and is labelled extrapolated.
* Peak memory of ``simulate_support_counts`` at n = 10^6, d = 14, measured in a
  fresh subprocess (tracemalloc peak of the call and the process's peak RSS).
* Exact aggregate: 10,000 simulated classes of n = 10^6 each, binary RR
  (``sample_yes_counts``) and d = 14 OUE (``sample_support_counts``).
* Numeric values in [-1, 1], eps = 1: Duchi et al.'s one-bit mechanism, the
  Piecewise Mechanism and the local Laplace mechanism per respondent
  (``perturb``) for n = 10^5 and 10^6, against a per-user Python loop of the
  course's ±1 form; and Duchi et al.'s exact aggregate (``sample_plus_counts``)
  for 10,000 classes of n = 10^6 spread over 11 values.

* Yes/no intervals: the exact interval (Clopper-Pearson on the report probability,
  mapped through the die) for one round at n = 40, 2,000 and 100,000 beside the normal
  and likelihood-ratio intervals of the same counts; the 60 points of the dashboard's
  arrival trace in one vectorised call; a round under two designs (the convolution
  route); and the self-study page's coverage picture (three intervals, 401 shares,
  exact binomial sums) at n = 60, 2,000 and 100,000, and for a fixed class of 2,000.

``--part simulators`` or ``--part intervals`` measures one of the two (each rewrites
its own section of docs/benchmarks.md).

Every time is the median of repeated runs (7 for ldp_core, 3 for the slow
loop), measured side by side in one run. Results go to stdout and to the
``bench_ldp_core`` section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np

from bench._report import BENCH_DOC, machine, update_doc
from ldp_core import (
    GRR,
    NUMERIC_NAMES,
    BinaryCounts,
    CategoricalCounts,
    DieRR,
    DuchiMechanism,
    EpsilonRR,
    UnaryEncoding,
    coverage_shares,
    exact_interval,
    interval_coverage,
    numeric_mechanism,
)
from ldp_core.intervals import _exact_interval_groups

D, EPS = 14, 1.0
CLASSES, CLASS_N = 10_000, 1_000_000
GOAL_OUE_1E5_MS = 40.0
GOAL_PEAK_MB = 200.0
GOAL_AGGREGATE_MS = 50.0
GOAL_NUMERIC_1E6_MS = 100.0
#: One round's exact interval, the trace's 60 and a two-design round: a small part of the
#: dashboard's 2-s refresh. The coverage picture: one study-page rerun (cached after).
GOAL_INTERVAL_MS = 20.0
GOAL_TRACE_MS = 50.0
GOAL_MIXED_MS = 200.0
#: A categorical round's 14 exact intervals (one per option), one design and two.
GOAL_OPTIONS_MS = 50.0
GOAL_OPTIONS_MIXED_MS = 300.0
GOAL_COVERAGE_SMALL_MS = 300.0
GOAL_COVERAGE_BIG_MS = 2000.0


# -- the course notebooks' way: one user at a time, one bit at a time -------------------------


def notebook_oue_counts(values: np.ndarray, d: int, p: float, q: float) -> np.ndarray:
    """Unary encoding as in the course book: encode, perturb_bit per bit, sum."""

    def encode(response: int) -> list[int]:
        return [1 if v == response else 0 for v in range(d)]

    def perturb_bit(bit: int) -> int:
        sample = np.random.random()
        if bit == 1:
            return 1 if sample <= p else 0
        return 1 if sample <= q else 0

    def perturb(encoded: list[int]) -> list[int]:
        return [perturb_bit(b) for b in encoded]

    return np.sum([perturb(encode(int(r))) for r in values], axis=0)


def notebook_grr_counts(values: np.ndarray, d: int, p: float) -> np.ndarray:
    """GRR in the same style: keep w.p. p, else a uniform other value, per user."""

    def randomize(response: int) -> int:
        if np.random.random() < p:
            return response
        other = np.random.randint(0, d - 1)
        return other + 1 if other >= response else other

    counts = np.zeros(d, dtype=np.int64)
    for r in values:
        counts[randomize(int(r))] += 1
    return counts


# -- timing -------------------------------------------------------------------------------------


def notebook_duchi_reports(values: np.ndarray, eps: float) -> np.ndarray:
    """The course's ±1 form one user at a time: round to ±1, keep w.p. e^eps/(1+e^eps),
    report c_eps times the result."""
    keep = math.exp(eps) / (1 + math.exp(eps))
    c = (math.exp(eps) + 1) / (math.exp(eps) - 1)
    out = []
    for x in values:
        bit = 1 if np.random.random() < (1 + x) / 2 else -1
        out.append(c * (bit if np.random.random() < keep else -bit))
    return np.array(out)


#: CPU-time medians, keyed like the wall-clock results (filled by median_ms).
CPU: dict[str, float] = {}


def median_ms(fn, repeats: int, key: str | None = None) -> float:
    """Median wall-clock milliseconds of ``repeats`` calls; the median CPU time of the
    same calls goes to ``CPU[key]`` (it shows how much of the wall time was waiting
    for a core that other jobs held)."""
    walls, cpus = [], []
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        walls.append((time.perf_counter() - t0) * 1e3)
        cpus.append((time.process_time() - c0) * 1e3)
    if key:
        CPU[key] = statistics.median(cpus)
    return statistics.median(walls)


MEMORY_PROBE = """
import json, resource, sys, tracemalloc
sys.path.insert(0, {root!r})
import numpy as np
from ldp_core import UnaryEncoding, GRR
oracle = {oracle}
values = np.random.default_rng(1).integers(0, {d}, {n})
tracemalloc.start()
oracle.{method}
_, peak = tracemalloc.get_traced_memory()
rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"traced_mb": peak / 2**20, "rss_mb": rss_kb / 1024}}))
"""


def peak_memory(oracle: str, method: str, n: int) -> dict[str, float]:
    code = MEMORY_PROBE.format(root=str(ROOT), oracle=oracle, d=D, n=n, method=method)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- the benchmark ----------------------------------------------------------------------------


def run(args: argparse.Namespace) -> dict:
    rng = np.random.default_rng(2025)
    oue = UnaryEncoding.optimized(D, EPS)
    grr = GRR(D, EPS)
    res: dict = {"per_respondent": {}, "aggregate": {}, "memory": {}}
    np.random.seed(7)  # the notebook loop uses numpy's global generator, as the book does

    small_n, big_n = args.sizes
    for n in (small_n, big_n):
        values = rng.integers(0, D, n)
        row = {}
        row["oue"] = median_ms(lambda v=values: oue.simulate_support_counts(v, rng=rng),
                               args.repeats, f"oue{n}")
        row["grr"] = median_ms(lambda v=values: grr.simulate_support_counts(v, rng=rng),
                               args.repeats, f"grr{n}")
        if n == small_n:
            row["oue_loop"] = median_ms(lambda v=values: notebook_oue_counts(v, D, oue.p, oue.q),
                                        args.loop_repeats, f"oue_loop{n}")
            row["grr_loop"] = median_ms(lambda v=values: notebook_grr_counts(v, D, grr.p),
                                        args.loop_repeats, f"grr_loop{n}")
            row["loop_measured"] = True
        else:
            small = res["per_respondent"][small_n]
            for key in ("oue_loop", "grr_loop"):
                row[key] = small[key] * n / small_n
                CPU[f"{key}{n}"] = CPU[f"{key}{small_n}"] * n / small_n
            row["loop_measured"] = False
        res["per_respondent"][n] = row
        print(f"  per respondent n={n:,}: OUE {row['oue']:.1f} ms, GRR {row['grr']:.1f} ms",
              flush=True)

    classes, class_n = args.classes
    true_counts = np.bincount(rng.integers(0, D, class_n), minlength=D)
    die = DieRR(4, 3)
    agg = res["aggregate"]
    agg["binary"] = median_ms(
        lambda: die.sample_yes_counts(class_n * 2 // 5, class_n, size=classes, rng=rng),
        args.repeats, "agg_binary")
    agg["oue"] = median_ms(
        lambda: oue.sample_support_counts(true_counts, size=classes, rng=rng), args.repeats,
        "agg_oue")
    agg["grr"] = median_ms(
        lambda: grr.sample_support_counts(true_counts, size=classes, rng=rng), args.repeats,
        "agg_grr")
    # the same 10,000 classes simulated per respondent would cost 10,000 x one class
    one_binary = median_ms(
        lambda: die.perturb(np.r_[np.ones(class_n * 2 // 5, np.uint8),
                                  np.zeros(class_n - class_n * 2 // 5, np.uint8)],
                            rng=rng).sum(), args.repeats)
    agg["binary_per_respondent"] = one_binary * classes
    agg["oue_per_respondent"] = res["per_respondent"][big_n]["oue"] * classes
    agg["grr_per_respondent"] = res["per_respondent"][big_n]["grr"] * classes
    print(f"  aggregate 10,000 x 10^6: binary {agg['binary']:.1f} ms, OUE {agg['oue']:.1f} ms, "
          f"GRR {agg['grr']:.1f} ms", flush=True)

    res["memory"]["oue_chunked"] = peak_memory("UnaryEncoding.optimized(14, 1.0)",
                                               "simulate_support_counts(values, rng=0)", big_n)
    res["memory"]["grr_chunked"] = peak_memory("GRR(14, 1.0)",
                                               "simulate_support_counts(values, rng=0)", big_n)
    res["memory"]["oue_unchunked"] = peak_memory(
        "UnaryEncoding.optimized(14, 1.0)", "support_counts(oracle.perturb(values, rng=0))",
        big_n)
    print("  peak memory n=10^6: " + ", ".join(
        f"{k} {v['rss_mb']:.0f} MB RSS" for k, v in res["memory"].items()), flush=True)
    res["numeric"] = run_numeric(args, rng)
    return res


def run_numeric(args: argparse.Namespace, rng: np.random.Generator) -> dict:
    out: dict = {"per_respondent": {}}
    small_n, big_n = args.sizes
    for n in (small_n, big_n):
        values = rng.uniform(-1, 1, n)
        row: dict = {}
        for name in NUMERIC_NAMES:
            mech = numeric_mechanism(name, EPS)
            row[name] = median_ms(lambda m=mech, v=values: m.perturb(v, rng=rng),
                                  args.repeats, f"num_{name}{n}")
        row["loop_measured"] = n == small_n
        if n == small_n:
            row["loop"] = median_ms(lambda v=values: notebook_duchi_reports(v, EPS),
                                    args.loop_repeats, f"num_loop{n}")
        else:
            small = out["per_respondent"][small_n]
            row["loop"] = small["loop"] * n / small_n
            CPU[f"num_loop{n}"] = CPU[f"num_loop{small_n}"] * n / small_n
        out["per_respondent"][n] = row
        print(f"  numeric per respondent n={n:,}: " + ", ".join(
            f"{name} {row[name]:.1f} ms" for name in NUMERIC_NAMES), flush=True)
    classes, class_n = args.classes
    xs = np.linspace(-1, 1, 11)
    counts = rng.multinomial(class_n, np.full(11, 1 / 11))
    duchi = DuchiMechanism(EPS)
    out["aggregate"] = median_ms(
        lambda: duchi.sample_plus_counts(xs, counts, size=classes, rng=rng), args.repeats,
        "num_agg")
    out["aggregate_per_respondent"] = out["per_respondent"][big_n]["duchi"] * classes \
        * class_n / big_n
    print(f"  numeric aggregate: Duchi {out['aggregate']:.1f} ms", flush=True)
    return out


def run_intervals(args: argparse.Namespace) -> dict:
    """The yes/no intervals: one round, the arrival trace, two designs, the coverage page."""
    die = DieRR(4, 3)
    out: dict = {"round": {}, "coverage": {}}
    for n in args.interval_sizes:
        yes = n * 21 // 40
        counts = BinaryCounts.single(die, yes, n)
        row = {  # the exact interval uncached (BinaryCounts caches it: a refresh with the
            # same counts costs a lookup)
            "exact": median_ms(lambda n=n, y=yes: exact_interval(die.a, die.b, n, y),
                               args.repeats, f"ci_exact{n}"),
            "normal": median_ms(lambda c=counts: c.normal_interval(), args.repeats,
                                f"ci_normal{n}"),
            "lr": median_ms(lambda c=counts: c.lr_interval(), args.repeats, f"ci_lr{n}"),
        }
        out["round"][n] = row
        print(f"  interval n={n:,}: exact {row['exact']:.2f} ms, normal {row['normal']:.3f} ms, "
              f"LR {row['lr']:.2f} ms", flush=True)
    n = args.interval_sizes[1]
    ks = np.unique(np.linspace(1, n, 60).astype(int))
    ys = ks * 21 // 40
    out["trace"] = median_ms(lambda: exact_interval(die.a, die.b, ks, ys), args.repeats,
                             "ci_trace")
    mixed = BinaryCounts(((die, n // 2, n // 4), (EpsilonRR(2.0), n - n // 2, n // 3)))
    def uncached_mixed() -> None:
        _exact_interval_groups.cache_clear()
        mixed.exact_interval()

    out["mixed"] = median_ms(uncached_mixed, args.repeats, "ci_mixed")
    print(f"  trace of 60 at n={n:,}: {out['trace']:.1f} ms; two designs: "
          f"{out['mixed']:.1f} ms", flush=True)
    sue, oue = UnaryEncoding(D, 0.75, 0.25), UnaryEncoding.optimized(D, EPS)
    support = [n * (i + 1) // (3 * D) + n // 5 for i in range(D)]
    one = CategoricalCounts(((sue, n, support),))
    two = CategoricalCounts(((sue, n // 2, [s // 2 for s in support]),
                             (oue, n - n // 2, [s - s // 2 for s in support])))

    def uncached(counts: CategoricalCounts) -> None:
        _exact_interval_groups.cache_clear()
        counts.exact_intervals()

    out["options"] = median_ms(lambda: uncached(one), args.repeats, "ci_options")
    out["options_mixed"] = median_ms(lambda: uncached(two), args.repeats, "ci_options_mixed")
    print(f"  {D} options' exact intervals at n={n:,}: one design {out['options']:.1f} ms, "
          f"two designs {out['options_mixed']:.1f} ms", flush=True)
    for n, model in args.coverage_cases:
        shares = coverage_shares(n, model)

        def picture(n: int = n, model: str = model, shares: np.ndarray = shares) -> None:
            for method in ("normal", "likelihood_ratio", "exact"):
                interval_coverage(die.a, die.b, n, shares, method=method, model=model)

        key = f"{model} {n}"
        out["coverage"][key] = median_ms(picture, max(1, args.repeats // 2), f"cover{key}")
        print(f"  coverage picture, {model}, n={n:,}: {out['coverage'][key]:.0f} ms", flush=True)
    return out


def fmt_ms(x: float) -> str:
    if x >= 10_000:
        return f"{x / 1000:,.0f} s"
    if x >= 1000:
        return f"{x / 1000:.2f} s"
    return f"{x:.1f} ms"


def table(res: dict) -> list[str]:
    lines = ["| measurement (d = 14, ε = 1) | n | ldp_core wall (CPU) | per-user Python loop "
             "wall (CPU) | loop / ldp_core |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for n, row in res["per_respondent"].items():
        tag = "" if row["loop_measured"] else ", extrapolated ×10"
        for key, label in (("oue", "OUE per respondent"), ("grr", "GRR per respondent")):
            lines.append(f"| {label} | {n:,} | {fmt_ms(row[key])} ({fmt_ms(CPU[f'{key}{n}'])}) | "
                         f"{fmt_ms(row[key + '_loop'])} "
                         f"({fmt_ms(CPU[f'{key}_loop{n}'])}{tag}) | "
                         f"{row[key + '_loop'] / row[key]:,.0f}× |")
    agg = res["aggregate"]
    lines += ["", "| exact aggregate: 10,000 classes of n = 10^6 | ldp_core wall (CPU) | "
              "per respondent, 10,000 × one class (extrapolated) | ratio |",
              "| --- | ---: | ---: | ---: |"]
    for key, label in (("binary", "binary RR (die), `sample_yes_counts`"),
                       ("oue", "OUE d = 14, `sample_support_counts`"),
                       ("grr", "GRR d = 14, `sample_support_counts`")):
        per = agg[key + "_per_respondent"]
        lines.append(f"| {label} | {fmt_ms(agg[key])} ({fmt_ms(CPU['agg_' + key])}) | "
                     f"{fmt_ms(per)} | {per / agg[key]:,.0f}× |")
    mem = res["memory"]
    lines += ["", "| peak memory, n = 10^6, d = 14 | traced by the call | process peak RSS |",
              "| --- | ---: | ---: |"]
    for key, label in (("oue_chunked", "OUE `simulate_support_counts` (chunked)"),
                       ("grr_chunked", "GRR `simulate_support_counts` (chunked)"),
                       ("oue_unchunked", "OUE `perturb` all at once (for comparison)")):
        lines.append(f"| {label} | {mem[key]['traced_mb']:.0f} MB | "
                     f"{mem[key]['rss_mb']:.0f} MB |")
    num = res["numeric"]
    lines += ["", "| numeric, values in [-1, 1], ε = 1 | n | ldp_core `perturb` wall (CPU) | "
              "per-user Python loop, ±1 form, wall (CPU) | loop / ldp_core |",
              "| --- | ---: | ---: | ---: | ---: |"]
    for n, row in num["per_respondent"].items():
        tag = "" if row["loop_measured"] else ", extrapolated ×10"
        for name in NUMERIC_NAMES:
            loop = (f"{fmt_ms(row['loop'])} ({fmt_ms(CPU[f'num_loop{n}'])}{tag})"
                    if name == "duchi" else "")
            ratio = f"{row['loop'] / row[name]:,.0f}×" if name == "duchi" else ""
            lines.append(f"| {numeric_mechanism(name, EPS).label} | {n:,} | "
                         f"{fmt_ms(row[name])} ({fmt_ms(CPU[f'num_{name}{n}'])}) | {loop} | "
                         f"{ratio} |")
    per = num["aggregate_per_respondent"]
    lines += ["", "| exact aggregate: 10,000 classes of n = 10^6 over 11 values | ldp_core "
              "wall (CPU) | per respondent (extrapolated) | ratio |",
              "| --- | ---: | ---: | ---: |",
              f"| Duchi et al., `sample_plus_counts` | {fmt_ms(num['aggregate'])} "
              f"({fmt_ms(CPU['num_agg'])}) | {fmt_ms(per)} | {per / num['aggregate']:,.0f}× |"]
    return lines


def _target_line(out: list[str]):
    """A function that appends one ``TARGET name measured=… goal=… PASS|MISS`` line."""
    def line(name: str, measured: float, goal: float, unit: str) -> None:
        out.append(f"TARGET {name} measured={measured:.1f}{unit} goal={goal:.0f}{unit} "
                   f"{'PASS' if measured <= goal else 'MISS'}")
    return line


def targets(res: dict) -> list[str]:
    out: list[str] = []
    line = _target_line(out)

    line("oue_per_respondent_n1e5", res["per_respondent"][min(res["per_respondent"])]["oue"],
         GOAL_OUE_1E5_MS, "ms")
    line("peak_memory_n1e6_d14", max(res["memory"]["oue_chunked"]["rss_mb"],
                                     res["memory"]["grr_chunked"]["rss_mb"]), GOAL_PEAK_MB, "MB")
    line("aggregate_binary_10k_classes_n1e6", res["aggregate"]["binary"], GOAL_AGGREGATE_MS, "ms")
    line("aggregate_oue_d14_10k_classes_n1e6", res["aggregate"]["oue"], GOAL_AGGREGATE_MS, "ms")
    big = res["numeric"]["per_respondent"][max(res["numeric"]["per_respondent"])]
    line("numeric_perturb_1e6_ms", max(big[name] for name in NUMERIC_NAMES),
         GOAL_NUMERIC_1E6_MS, "ms")
    line("aggregate_duchi_10k_classes_n1e6", res["numeric"]["aggregate"], GOAL_AGGREGATE_MS,
         "ms")
    return out


def interval_table(ivs: dict) -> list[str]:
    lines = ["| yes/no intervals (die, V/n = 21/40) | n | exact wall (CPU) | normal | "
              "likelihood ratio | exact / likelihood ratio |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for n, row in ivs["round"].items():
        lines.append(f"| one round | {n:,} | {row['exact']:.2f} ms "
                     f"({CPU[f'ci_exact{n}']:.2f} ms) | {row['normal']:.3f} ms | "
                     f"{row['lr']:.2f} ms | {row['exact'] / row['lr']:.1f}× |")
    lines += ["", "| yes/no intervals, dashboard and study page | wall (CPU) |",
              "| --- | ---: |",
              f"| arrival trace: 60 exact intervals in one call, n = "
              f"{args_sizes(ivs):,} | {fmt_ms(ivs['trace'])} ({fmt_ms(CPU['ci_trace'])}) |",
              f"| a round under two designs (die and RR ε = 2), n = {args_sizes(ivs):,} | "
              f"{fmt_ms(ivs['mixed'])} ({fmt_ms(CPU['ci_mixed'])}) |",
              f"| a categorical round: {D} options' exact intervals, SUE, n = "
              f"{args_sizes(ivs):,} | {fmt_ms(ivs['options'])} ({fmt_ms(CPU['ci_options'])}) |",
              f"| the same under two designs (SUE and OUE ε = {EPS:g}), n = "
              f"{args_sizes(ivs):,} | {fmt_ms(ivs['options_mixed'])} "
              f"({fmt_ms(CPU['ci_options_mixed'])}) |"]
    for key, ms in ivs["coverage"].items():
        model, n = key.split()
        who = "drawn from a population" if model == "population" else "a fixed class"
        lines.append(f"| coverage picture: 3 intervals, 401 shares, students {who}, "
                     f"n = {int(n):,} | {fmt_ms(ms)} ({fmt_ms(CPU['cover' + key])}) |")
    return lines


def interval_targets(ivs: dict) -> list[str]:
    out: list[str] = []
    line = _target_line(out)
    line("exact_interval_round_n2000", ivs["round"][args_sizes(ivs)]["exact"],
         GOAL_INTERVAL_MS, "ms")
    line("exact_interval_trace_60", ivs["trace"], GOAL_TRACE_MS, "ms")
    line("exact_interval_two_designs", ivs["mixed"], GOAL_MIXED_MS, "ms")
    line("exact_intervals_14_options", ivs["options"], GOAL_OPTIONS_MS, "ms")
    line("exact_intervals_14_options_two_designs", ivs["options_mixed"],
         GOAL_OPTIONS_MIXED_MS, "ms")
    covers = sorted(ivs["coverage"].items(), key=lambda kv: int(kv[0].split()[1]))
    line("coverage_picture_small_n", covers[0][1], GOAL_COVERAGE_SMALL_MS, "ms")
    line("coverage_picture_largest_n", max(ms for _, ms in covers), GOAL_COVERAGE_BIG_MS, "ms")
    return out


def args_sizes(ivs: dict) -> int:
    """The n of the trace and the two-design round: the middle round size."""
    return sorted(ivs["round"])[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=7, help="runs per ldp_core median")
    ap.add_argument("--loop-repeats", type=int, default=3, help="runs per Python-loop median")
    ap.add_argument("--no-doc", action="store_true", help="do not update docs/benchmarks.md")
    ap.add_argument("--part", choices=("all", "simulators", "intervals"), default="all",
                    help="measure the simulators, the yes/no intervals, or both (each has "
                         "its own section of docs/benchmarks.md)")
    ap.add_argument("--smoke", action="store_true",
                    help="every measurement once at n = 1,000 / 10,000 and 10 classes, in "
                         "seconds; no doc update (its targets are not the documented ones)")
    args = ap.parse_args()
    args.sizes, args.classes = (100_000, 1_000_000), (CLASSES, CLASS_N)
    args.interval_sizes = (40, 2_000, 100_000)
    args.coverage_cases = ((60, "population"), (2_000, "population"), (100_000, "population"),
                           (2_000, "class"))
    if args.smoke:
        args.sizes, args.classes = (1_000, 10_000), (10, 10_000)
        args.interval_sizes = (10, 100, 1_000)
        args.coverage_cases = ((10, "population"), (100, "class"))
        args.repeats, args.loop_repeats, args.no_doc = 1, 1, True

    load = os.getloadavg()
    machine_text = machine()
    print(f"machine: {machine_text}; load average at start {load[0]:.1f}", flush=True)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    target_lines: list[str] = []
    if args.part in ("all", "simulators"):
        res = run(args)
        load_end = os.getloadavg()
        lines = table(res)
        target_lines += targets(res)
        print("\n" + "\n".join(lines) + "\n")
        if not args.no_doc:
            update_doc("bench_ldp_core", [
                "## ldp_core simulators (`python bench/bench_ldp_core.py`)",
                "",
                f"Machine: {machine_text}. Load average {load[0]:.1f} at start, "
                f"{load_end[0]:.1f} at the end (other jobs share the cores, so times are "
                f"upper bounds). Run {when}.",
                f"Medians of {args.repeats} runs ({args.loop_repeats} for the Python loop), "
                "measured side by side in one run: wall-clock time, with the process's CPU "
                "time in brackets (wall above CPU means the process waited for a core). The "
                "targets are judged on wall-clock time. The loop is the course notebooks' "
                "per-user `perturb_bit` with `np.random.random`.",
                "", *lines, "", "```", *targets(res), "```"])
            print(f"updated {BENCH_DOC.relative_to(ROOT)}")
    if args.part in ("all", "intervals"):
        load = os.getloadavg()
        ivs = run_intervals(args)
        load_end = os.getloadavg()
        lines = interval_table(ivs)
        target_lines += interval_targets(ivs)
        print("\n" + "\n".join(lines) + "\n")
        if not args.no_doc:
            update_doc("bench_ldp_core_intervals", [
                "## Yes/no intervals (`python bench/bench_ldp_core.py --part intervals`)",
                "",
                f"Machine: {machine_text}. Load average {load[0]:.1f} at start, "
                f"{load_end[0]:.1f} at the end. Run {when}.",
                f"Medians of {args.repeats} runs (the coverage pictures: "
                f"{max(1, args.repeats // 2)}): wall-clock time, with the process's CPU time "
                "in brackets. The exact interval is Clopper-Pearson on the report probability "
                "(two beta quantiles by Newton's method on the incomplete beta function); the "
                "normal and likelihood-ratio intervals of the same counts beside it; the "
                "coverage picture is the likelihood lab's (docs/intervals.md). The targets "
                "are judged on wall-clock time: one round and the trace are part of the "
                "dashboard's 2-s refresh, the coverage picture one study-page rerun.",
                "", *lines, "", "```", *interval_targets(ivs), "```"])
            print(f"updated {BENCH_DOC.relative_to(ROOT)}")
    print("\n".join(target_lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
