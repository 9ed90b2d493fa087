"""The tables of docs/numeric-checks.md: how often a numeric question's 95% interval covers
the class mean, and how often the stuffing check fires on honest and on stuffed classes.

    python docs/numeric_checks.py            # the tables in the doc (about half an hour)
    python docs/numeric_checks.py --quick    # a few minutes, fewer re-runs per cell
    python docs/numeric_checks.py --every-n  # only the table of every n up to 60

Fixed seeds. Exact where the reports are counts (Duchi et al.'s bit, yes/no designs, one
Laplace report); simulated otherwise, with the number of re-runs printed beside each rate.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ldp_core
from ldp_core.intervals import _binom_logpmf
from ldp_core.plausibility import (
    _numeric_p_values,
    _ue_total_sf,
    binom_sf,
    ones_distribution,
    ue_thresholds,
)
from tests.support.numeric_classes import (
    CLASSES,
    class_values,
    coverage,
    one_report_alarm_rate,
    phone_reports,
    previous_one_report_rate,
    simulated_alarms,
    spread_coverage,
    two_valued_alarm_rate,
)

FORM_EPS = (0.1, 0.5, 1.1, 2.0, 3.0, 5.0)
SIZES = (1, 2, 3, 5, 10, 30, 100, 1000)
Z = 1.959963984540054


def _binom_pmf(n: int, p: float) -> np.ndarray:
    """Bin(n, p)'s probabilities of 0..n."""
    with np.errstate(divide="ignore"):
        return np.exp(_binom_logpmf(np.arange(n + 1), n, p))


def design(name: str, eps: float) -> ldp_core.NumericDesign:
    return ldp_core.numeric_design_from_params({"design": name, "epsilon": eps, "lo": 0,
                                                "hi": 12})


def _alternatives(d: ldp_core.NumericDesign, xs: np.ndarray, reps: int,
                  rng: np.random.Generator) -> dict[str, float]:
    """Coverage of the intervals compared with the chosen one (same re-runs)."""
    mech, n = d.mechanism, xs.size
    truth = float(d.value_of(xs.mean()))
    sd = d.worst_sd(n)
    halves = {"1.96 SD": Z * sd, "t SD": ldp_core.t_quantile(0.95, n - 1) * sd}
    if mech.device_grid() is None:
        c = float(mech.output_bounds[1])
        pmf = np.array([1.0])
        for p in np.asarray(mech.survival(c, xs), dtype=float):
            pmf = np.convolve(pmf, [1 - p, p])
        means = d.value_of(c * (2 * np.arange(n + 1) / n - 1))
        return {k: float(pmf[np.abs(means - truth) <= h].sum()) for k, h in halves.items()}
    means = d.value_of(phone_reports(mech, xs, (reps, n), rng).mean(axis=1))
    return {k: float(np.mean(np.abs(means - truth) <= h)) for k, h in halves.items()}


def coverage_tables(reps: int) -> None:
    print("## Coverage of the 95% interval, worst over the form's ε "
          f"({', '.join(map(str, FORM_EPS))}) and the five classes\n")
    print(f"Simulated cells: {reps:,} re-runs each (SE {math.sqrt(0.95 * 0.05 / reps):.4f} "
          "at 95%); Duchi et al.'s exactly. Lengths in hours on a 0-12 h question at ε = 1.1: "
          "the interval shown now for a mid-range class and for one at the maximum, and "
          "2 × 1.96 SD (worst case) beside them.\n")
    print("| mechanism | n | before: mean ± 1.96 × reports' SD | mean ± 1.96 SD (worst case) "
          "| mean ± t SD (worst case) | shown now | length now: mid / max | 2 × 1.96 SD |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    rng = np.random.default_rng(2024)
    for name in ldp_core.NUMERIC_NAMES:
        for n in (10, 30, 100):
            worst = {"before": 1.0, "1.96 SD": 1.0, "t SD": 1.0, "now": 1.0}
            where = {}
            lengths = {}
            for eps in FORM_EPS:
                d = design(name, eps)
                for kind in CLASSES:
                    xs = class_values(kind, n)
                    now, width = coverage(d, xs, reps=reps, rng=rng)
                    got = {"before": spread_coverage(d, xs, reps=reps, rng=rng), "now": now,
                           **_alternatives(d, xs, reps, rng)}
                    for k, v in got.items():
                        if v < worst[k]:
                            worst[k], where[k] = v, f"ε {eps:g}, {kind}"
                    if eps == 1.1:
                        lengths[kind] = width
            cells = " | ".join(f"{100 * worst[k]:.1f}% ({where[k]})"
                               for k in ("before", "1.96 SD", "t SD", "now"))
            normal = 2 * Z * design(name, 1.1).worst_sd(n)
            print(f"| {name} | {n} | {cells} | {lengths['mid-range']:.2f} / "
                  f"{lengths['all at the maximum']:.2f} | {normal:.2f} |", flush=True)
    print()


def duchi_fine_grid() -> None:
    """The normal and t intervals on Duchi et al.'s lattice: exact, ε on a 0.1 grid, n from
    10 to 300, classes whose students share one value on a 0.025 grid."""
    print("## Duchi et al., exactly, every ε in 0.1..5.0 (step 0.1), n = 10..300, "
          "one-value classes on a 0.025 grid\n")
    xs = np.linspace(-1, 1, 81)
    worst = {"1.96 SD": (1.0, ""), "t SD": (1.0, ""), "exact": (1.0, "")}
    for eps in np.round(np.arange(0.1, 5.01, 0.1), 1):
        d = design("duchi", float(eps))
        c = d.mechanism.c_epsilon
        for n in range(10, 301):
            k = np.arange(n + 1)
            pmf = np.array([_binom_pmf(n, float(p)) for p in d.mechanism.p_plus(xs)])
            mean = c * (2 * k / n - 1)
            # the interval NumericEstimate.interval gives (tests/test_ldp_core_numeric.py):
            # the bit's exact interval, mapped from [0, 1] to [-1, 1]
            a = float(d.mechanism.survival(c, 1.0))
            bit_low, bit_high = ldp_core.exact_interval(a, 1 - a, n, k)
            low, high = 2 * np.asarray(bit_low) - 1, 2 * np.asarray(bit_high) - 1
            for label, ok in (
                    ("1.96 SD", np.abs(mean[None, :] - xs[:, None]) <= Z * c / math.sqrt(n)),
                    ("t SD", np.abs(mean[None, :] - xs[:, None])
                     <= ldp_core.t_quantile(0.95, n - 1) * c / math.sqrt(n)),
                    ("exact", (low[None, :] <= xs[:, None] + 1e-12)
                     & (xs[:, None] <= high[None, :] + 1e-12))):
                cov = (pmf * ok).sum(axis=1)
                i = int(cov.argmin())
                if cov[i] < worst[label][0]:
                    worst[label] = (float(cov[i]), f"ε {eps:g}, n = {n}, x = {xs[i]:+.3f}")
    for label, (v, at) in worst.items():
        print(f"- {label}: {100 * v:.2f}% at worst ({at})")
    print(flush=True)


def size_tables(classes: int) -> None:
    print("## How often an honest class raises the alarm (α = 10⁻⁴)\n")
    print("At the class most likely to raise it (every student at the top of the range); "
          "Duchi et al. exactly (worst of the top, middle and bottom class), the others "
          f"simulated: alarms / classes, with up to {classes:,} classes (fewer at large n).\n")
    header = " | ".join(f"n = {n}" for n in SIZES)
    print(f"| mechanism | ε | {header} |")
    print("| --- | --- |" + " --- |" * len(SIZES))
    for name in ldp_core.NUMERIC_NAMES:
        for eps in (0.5, 1.1, 3.0):
            mech = ldp_core.numeric_mechanism(name, eps)
            cells = []
            for n in SIZES:
                if mech.device_grid() is None:
                    worst = max(two_valued_alarm_rate(mech, np.full(n, x))
                                for x in (-1.0, 0.0, 1.0))
                    cells.append(f"{worst:.1e} (exact)")
                else:
                    m = min(classes, 40_000_000 // n)
                    cells.append(f"{simulated_alarms(mech, n, m, seed=n)} / {m:,}")
            print(f"| {name} | {eps:g} | " + " | ".join(cells) + " |", flush=True)
    print()
    print("One Laplace report, exactly (the alarm region is y ≥ t or y ≤ −t): ", end="")
    parts = []
    for eps in FORM_EPS:
        rate = one_report_alarm_rate(ldp_core.LaplaceMechanism(eps))
        before = previous_one_report_rate(eps)
        parts.append(f"ε {eps:g}: {rate:.2e} (before {before:.2e})")
    print("; ".join(parts) + ".\n", flush=True)


def yes_no_sizes() -> None:
    print("## Yes/no and unary encoding, α = 10⁻⁴\n")
    designs = {"die (class exercise)": ldp_core.DieRR(4, 3), "Warner p = 0.7":
               ldp_core.WarnerRR(0.7), "RR ε = 0.5": ldp_core.EpsilonRR(0.5),
               "RR ε = 3": ldp_core.EpsilonRR(3.0), "RR ε = 5": ldp_core.EpsilonRR(5.0)}
    print("| design | " + " | ".join(f"n = {n}" for n in SIZES) + " |")
    print("| --- |" + " --- |" * len(SIZES))
    for label, d in designs.items():
        cells = []
        for n in SIZES:
            alarm = np.array([not ldp_core.binary_plausibility(
                ldp_core.BinaryCounts.single(d, y, n)).fits for y in range(n + 1)])
            rate = max(_binom_pmf(n, d.a)[alarm].sum(), _binom_pmf(n, d.b)[alarm].sum())
            cells.append(f"{rate:.1e}")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print("\nExact (the count of yes of the all-yes or all-no class).\n")
    rng = np.random.default_rng(5)
    oracles = {"OUE d = 5, ε = ln 3": ldp_core.UnaryEncoding.optimized(5, math.log(3)),
               "UE d = 14, p = 0.75, q = 0.25": ldp_core.UnaryEncoding(14, 0.75, 0.25),
               "OUE d = 3, ε = 1": ldp_core.UnaryEncoding.optimized(3, 1.0)}
    print("| unary encoding | " + " | ".join(f"n = {n}" for n in SIZES) + " |")
    print("| --- |" + " --- |" * len(SIZES))
    for label, o in oracles.items():
        cells = []
        for n in SIZES:
            hists = rng.multinomial(n, ones_distribution(o), size=400_000)
            rows, inverse = np.unique(hists, axis=0, return_inverse=True)
            alarm = np.array([not ldp_core.ue_plausibility(o, h).fits for h in rows])
            cells.append(f"{int(alarm[inverse.ravel()].sum())} / 400,000")
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)
    print("\nSimulated (the histogram of 1s per report has one law for every class).\n")


EVERY_N = range(1, 61)


def _ue_size_bound(oracle: ldp_core.UnaryEncoding, n: int) -> float:
    """The sum of the exact sizes of the unary-encoding alarm's tests (a bound on its rate)."""
    law = ones_distribution(oracle)
    high, low = ue_thresholds(oracle)
    size = 0.0
    total = np.convolve(_binom_pmf(n, oracle.p), _binom_pmf(n * (oracle.d - 1), oracle.q))
    t = np.arange(total.size)
    upper = np.array([_ue_total_sf(oracle, n, int(v)) for v in t])
    lower = 1.0 - np.append(upper[1:], 0.0)
    size += total[upper <= ldp_core.ALPHA / 4].sum() + total[lower <= ldp_core.ALPHA / 4].sum()
    for ks, tail in ((high, lambda k: law[k:].sum()), (low, lambda k: law[:k + 1].sum())):
        share = 0.25 / len(ks)
        for k in ks:
            q = float(min(1.0, tail(k)))
            pmf = _binom_pmf(n, q)
            size += pmf[binom_sf(np.arange(n + 1), n, q) <= ldp_core.ALPHA * share].sum()
    return float(size)


def _grr_size_bound(oracle: ldp_core.GRR, n: int) -> float:
    """GRR's check is each option's count against its binomial at α/d (Bonferroni): d
    times the worse exact size of one option's test, at a share of 0 or 1."""
    channel = ldp_core.ForcedResponse(oracle.p - oracle.q, oracle.q)
    alarm = np.array([ldp_core.binary_plausibility(ldp_core.BinaryCounts.single(
        channel, y, n)).p_value * oracle.d < ldp_core.ALPHA for y in range(n + 1)])
    worst = max(_binom_pmf(n, oracle.p)[alarm].sum(), _binom_pmf(n, oracle.q)[alarm].sum())
    return float(min(1.0, oracle.d * worst))


def every_n_tables(classes: int) -> None:
    """Every n from 1 to 60, each design family: where a chi-squared or normal
    approximation would be worst (n about 10 to 30), no size is left unmeasured."""
    print("## Every class size up to 60 (α = 10⁻⁴)\n")
    print("Yes/no: exact, the worse of the all-yes and all-no class. Unary encoding: exact, "
          "the sum of its tests' sizes (a bound on the alarm's rate); GRR the same, d "
          "times its worse option's. Duchi et al.: exact, "
          "the worst of the top, middle and bottom class. Piecewise, Hybrid, Laplace: "
          f"alarms among {classes:,} simulated classes at the top of the range.\n")
    binary = {"die": ldp_core.DieRR(4, 3), "Warner 0.7": ldp_core.WarnerRR(0.7),
              "RR ε 0.5": ldp_core.EpsilonRR(0.5), "RR ε 5": ldp_core.EpsilonRR(5.0)}
    unary = {"SUE d 5 ε 1": ldp_core.UnaryEncoding(5, math.exp(0.5) / (1 + math.exp(0.5)),
                                                   1 / (1 + math.exp(0.5))),
             "OUE d 5 ε ln 3": ldp_core.UnaryEncoding.optimized(5, math.log(3)),
             "OUE d 20 ε 5": ldp_core.UnaryEncoding.optimized(20, 5.0)}
    grr = {"GRR d 4 ε 1": ldp_core.GRR(4, 1.0), "GRR d 20 ε 5": ldp_core.GRR(20, 5.0)}
    duchi = {f"Duchi ε {e:g}": ldp_core.numeric_mechanism("duchi", e) for e in (0.5, 5.0)}
    simulated = {f"{name} ε {e:g}": ldp_core.numeric_mechanism(name, e)
                 for name in ("piecewise", "hybrid", "laplace") for e in (1.1, 5.0)}
    names = [*binary, *unary, *grr, *duchi, *simulated]
    print("| n | " + " | ".join(names) + " |")
    print("| ---: |" + " ---: |" * len(names))
    for n in EVERY_N:
        cells = []
        for d in binary.values():
            alarm = np.array([not ldp_core.binary_plausibility(
                ldp_core.BinaryCounts.single(d, y, n)).fits for y in range(n + 1)])
            rate = max(_binom_pmf(n, d.a)[alarm].sum(), _binom_pmf(n, d.b)[alarm].sum())
            cells.append(f"{rate:.1e}")
        cells += [f"{_ue_size_bound(o, n):.1e}" for o in unary.values()]
        cells += [f"{_grr_size_bound(o, n):.1e}" for o in grr.values()]
        cells += [f"{max(two_valued_alarm_rate(m, np.full(n, x)) for x in (-1.0, 0.0, 1.0)):.1e}"
                  for m in duchi.values()]
        cells += [str(simulated_alarms(m, n, classes, seed=n)) for m in simulated.values()]
        print(f"| {n} | " + " | ".join(cells) + " |", flush=True)
    print()


def _caught(mech: ldp_core.NumericMechanism, x: float, extra: np.ndarray, runs: int,
            rng: np.random.Generator) -> float:
    honest = phone_reports(mech, x, (runs, 100), rng)
    p, _, _ = _numeric_p_values(mech, np.hstack([honest, np.broadcast_to(extra,
                                                                         (runs, extra.size))]))
    return float(np.mean(p < ldp_core.ALPHA))


def power_table(runs: int) -> None:
    print("## Power: 100 honest students, and extra reports from one device\n")
    print(f"Share of {runs:,} runs flagged. *Largest × k*: the largest report a phone can "
          "send, k times. *Stealthy × 150*: 150 reports randomized as a phone would for a "
          "student at the top. Classes: every student at the top, or at mid-range.\n")
    print("| mechanism | ε | class | largest × 1 | largest × 10 | largest × 30 "
          "| largest × 150 | stealthy × 150 |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    rng = np.random.default_rng(11)
    for name in ldp_core.NUMERIC_NAMES:
        for eps in (0.5, math.log(3), 2.0, 3.0):
            mech = ldp_core.numeric_mechanism(name, eps)
            grid = mech.device_grid()
            top = float(mech.output_bounds[1]) if grid is None else float(mech.snap(grid[1]))
            for label, x in (("top", 1.0), ("mid-range", 0.0)):
                cells = [_caught(mech, x, np.full(k, top), runs, rng) for k in (1, 10, 30, 150)]
                stealthy = np.hstack([phone_reports(mech, x, (runs, 100), rng),
                                      phone_reports(mech, 1.0, (runs, 150), rng)])
                p, _, _ = _numeric_p_values(mech, stealthy)
                cells.append(float(np.mean(p < ldp_core.ALPHA)))
                shown = " | ".join(f"{100 * v:.1f}%" for v in cells)
                eps_text = "ln 3" if abs(eps - math.log(3)) < 1e-12 else f"{eps:g}"
                print(f"| {name} | {eps_text} | {label} | {shown} |", flush=True)
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer re-runs, a few minutes")
    parser.add_argument("--every-n", action="store_true",
                        help="only the table of every class size up to 60 (minutes)")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.every_n:
        every_n_tables(2_000 if args.quick else 50_000)
        print(f"({time.perf_counter() - started:.0f} s)")
        return
    coverage_tables(2_000 if args.quick else 20_000)
    if not args.quick:
        duchi_fine_grid()
    size_tables(20_000 if args.quick else 1_000_000)
    yes_no_sizes()
    every_n_tables(2_000 if args.quick else 50_000)
    power_table(100 if args.quick else 1_000)
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
