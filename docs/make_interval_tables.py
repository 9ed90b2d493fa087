"""Print the coverage and width tables of docs/intervals.md.

    python docs/make_interval_tables.py

Every number is exact (ldp_core.interval_coverage and ldp_core.expected_width sum
binomial probabilities; nothing is simulated). The lowest coverage of an interval is
looked for on 2,001 evenly spaced shares and on both sides of every end of its intervals
(coverage jumps down just beyond an end, so its minimum sits there). Percentages of
coverage are rounded down, widths to three decimals.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np

from ldp_core import (
    DieRR,
    EpsilonRR,
    TwoCoinRR,
    WarnerRR,
    expected_width,
    interval_coverage,
    share_intervals,
)

METHODS = {"normal": "normal μ̂ ± 1.96 SD", "likelihood_ratio": "likelihood ratio",
           "feldman_cousins": "Feldman–Cousins (2,001 shares)", "exact": "exact (Clopper–Pearson)"}
DESIGNS = {"class exercise (die 1–4)": DieRR(4, 3), "two coins": TwoCoinRR(),
           "Warner p = 0.7": WarnerRR(0.7), "RR ε = 0.5": EpsilonRR(0.5),
           "RR ε = 3": EpsilonRR(3.0)}
SIZES = (1, 2, 5, 10, 20, 30, 40, 100, 300)
WIDTH_SHARES = np.linspace(0.0, 1.0, 201)


def pct_down(x: float) -> str:
    return f"{math.floor(x * 1000 + 1e-9) / 10:.1f}%"


def lowest_coverage(design, n: int, method: str, model: str = "population") -> float:
    """The smallest exact coverage: for students drawn from a population, over the fine
    grid and both sides of every interval end; for a fixed class, over its n + 1 shares."""
    if model == "class":
        shares = np.arange(n + 1) / n
    else:
        low, high = share_intervals(design.a, design.b, n, np.arange(n + 1), method=method)
        ends = np.concatenate([low, high])
        shares = np.concatenate([np.linspace(0.0, 1.0, 2001), ends - 1e-9, ends + 1e-9])
        shares = np.unique(np.clip(shares, 0.0, 1.0))
    return float(interval_coverage(design.a, design.b, n, shares, method=method,
                                   model=model).min())


def mean_width(design, n: int, method: str) -> float:
    """E[width inside [0, 1]], averaged over 201 evenly spaced true shares."""
    return float(expected_width(design.a, design.b, n, WIDTH_SHARES, method=method).mean())


def class_exercise_table() -> list[str]:
    die = DieRR(4, 3)
    lines = ["| n | " + " | ".join(f"{name}: lowest coverage / mean width"
                                    for name in METHODS.values()) + " |",
             "| ---: | " + " | ".join("---:" for _ in METHODS) + " |"]
    for n in SIZES:
        cells = [f"{pct_down(lowest_coverage(die, n, m))} / {mean_width(die, n, m):.3f}"
                 for m in METHODS]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return lines


def designs_table() -> list[str]:
    lines = ["| design | interval | students | " + " | ".join(f"n = {n}" for n in SIZES) + " |",
             "| --- | --- | --- | " + " | ".join("---:" for _ in SIZES) + " |"]
    for label, design in DESIGNS.items():
        for method in ("normal", "exact"):
            for model, who in (("population", "from a population"), ("class", "a fixed class")):
                cells = [pct_down(lowest_coverage(design, n, method, model)) for n in SIZES]
                lines.append(f"| {label} | {METHODS[method]} | {who} | " + " | ".join(cells)
                             + " |")
    return lines


def fixed_class_table() -> list[str]:
    die = DieRR(4, 3)
    lines = ["| n | normal: lowest – highest over the class's shares | exact: lowest – highest |",
             "| ---: | ---: | ---: |"]
    for n in (10, 20, 30, 40, 60, 100):
        shares = np.arange(n + 1) / n
        cells = []
        for method in ("normal", "exact"):
            cover = interval_coverage(die.a, die.b, n, shares, method=method, model="class")
            cells.append(f"{pct_down(float(cover.min()))} – {pct_down(float(cover.max()))}")
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return lines


def rehearsal_line() -> str:
    """The guide's rehearsal class: 24 of 40 truly Vanilla."""
    die = DieRR(4, 3)
    cover = {m: float(interval_coverage(die.a, die.b, 40, [24 / 40], method=m,
                                        model="class")[0]) for m in ("normal", "exact")}
    return (f"rehearsal class, 24 of 40 truly Vanilla: normal {pct_down(cover['normal'])}, "
            f"exact {pct_down(cover['exact'])}")


def main() -> None:
    print("## The class exercise: students drawn from a population\n")
    print("\n".join(class_exercise_table()))
    print("\n## Lowest coverage for each design\n")
    print("\n".join(designs_table()))
    print("\n## A fixed class (only the die varies), the class exercise\n")
    print("\n".join(fixed_class_table()))
    print("\n" + rehearsal_line())


if __name__ == "__main__":
    main()
