"""Benchmark of lesson plan import: every file up to the size cap is read or refused fast.

    python bench/bench_plan_import.py

Each case is a file of at most ``MAX_PLAN_BYTES`` (128 KB) built to cost the reader as
much as its shape allows: one key of 64,000 dotted parts (:mod:`tomllib` alone spends
minutes on it: its time is quadratic in a key's parts), as many short dotted keys as fit, arrays
nested 50,000 deep and inline tables nested 5,000 deep (``RecursionError`` in
:mod:`tomllib`), the deepest nesting and the longest keys the limits allow, thousands of
tables and of ``[[questions]]`` blocks, a string of escapes, and 60 questions with every
field wrong (every problem located in the file). ``classroom.plans.loads`` reads each;
the CPU time of the slowest of ``--repeats`` runs is reported, with what it answered.
:mod:`tomllib` alone is timed beside it where it ends quickly (a quadratic case is timed
at a small size instead, to show the growth the check stops).

Results go to stdout and to the ``bench_plan_import`` section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tomllib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._report import BENCH_DOC, machine, update_doc
from classroom import plans

GOAL_S = 1.0
CAP = plans.MAX_PLAN_BYTES


def _fill(unit: str, size: int, head: str = "", tail: str = "") -> str:
    """``head`` + ``unit`` repeated to ``size`` bytes at most + ``tail``."""
    count = (size - len(head) - len(tail)) // len(unit.encode())
    return head + unit * count + tail


def _numbered(pattern: str, size: int) -> str:
    out, total, i = [], 0, 0
    while True:
        line = pattern.format(i=i)
        if total + len(line) > size:
            return "".join(out)
        out.append(line)
        total, i = total + len(line), i + 1


def _bad_questions(size: int) -> str:
    block = ('[[questions]]\ntext = ""\nkind = "binary"\nmode = "nope"\ncountdown_s = 5\n'
             'options = ["same", "same"]\ndesign = {{ design = "warner", p = 1.0 }}\n'
             'pad = "{pad}"\n')
    pad = "x" * max(0, size // 60 - len(block) - 40)
    return 'version = 1\ntitle = ""\n' + block.format(pad=pad) * 60


def cases(size: int) -> list[tuple[str, str, str]]:
    """(name, what it is, the file's text), each at most ``size`` bytes."""
    deep = plans.MAX_PLAN_NESTING
    parts = plans.MAX_KEY_PARTS
    return [
        ("one_key_64k_parts", "one key of 64,000 dotted parts",
         _fill("a.", size, tail="a = 1\n")),
        ("dotted_keys_many", "dotted keys `a.kN = 1`, as many as fit",
         _numbered("a.k{i}=1\n", size)),
        ("arrays_50k_deep", "arrays nested 50,000 deep",
         "x = " + "[" * (size // 2 - 4) + "]" * (size // 2 - 4) + "\n"),
        ("tables_5k_deep", "inline tables nested 5,000 deep",
         "x = " + "{a=" * min(5000, size // 4) + "1" + "}" * min(5000, size // 4) + "\n"),
        ("nesting_at_limit", f"arrays nested {deep} deep, over and over",
         _numbered("x{i} = " + "[" * deep + "1" + "]" * deep + "\n", size)),
        ("keys_at_limit", f"keys of {parts} dotted parts, over and over",
         _numbered("k{i}" + ".a" * (parts - 1) + " = 1\n", size)),
        ("tables_many", "thousands of `[tN]` tables", _numbered("[t{i}]\nk = 1\n", size)),
        ("questions_blocks_many", "thousands of `[[questions]]` blocks",
         _fill("[[questions]]\n", size, head='version = 1\ntitle = "t"\n')),
        ("string_of_escapes", "a string of 20,000 `\\u00e9` escapes",
         _fill("\\u00e9", size, head='version = 1\ntitle = "', tail='"\n')),
        ("every_field_wrong", "60 questions, every field wrong", _bad_questions(size)),
    ]


def _cpu(fn: Callable[[], object]) -> tuple[float, str]:
    start = time.process_time()
    try:
        fn()
        said = "accepted"
    except plans.PlanError as exc:
        said = str(exc)
    except Exception as exc:  # noqa: BLE001 - a crash is what this bench reports
        said = f"CRASH {type(exc).__name__}: {str(exc)[:80]}"
    return time.process_time() - start, said


def _tomllib_alone(text: str) -> str:
    """tomllib's own CPU time on the text, where it ends quickly; else at a small size."""
    if text.startswith("a.a.a."):
        small = _fill("a.", 8000, tail="a = 1\n")
        seconds, _ = _cpu(lambda: tomllib.loads(small))
        return f"{seconds:.2f} s at 4,000 parts (quadratic)"
    if text.startswith(("x = [[[", "x = {a={a=")):
        try:
            tomllib.loads(text)
        except RecursionError:
            return "RecursionError"
    seconds, _ = _cpu(lambda: tomllib.loads(text))
    return f"{seconds * 1000:.1f} ms"


def run(args: argparse.Namespace) -> list[tuple[str, str, int, float, str, str]]:
    rows = []
    for name, what, text in cases(args.size):
        size = len(text.encode())
        assert size <= CAP, (name, size)
        worst, said = 0.0, ""
        for _ in range(args.repeats):
            seconds, said = _cpu(lambda text=text: plans.loads(text))
            worst = max(worst, seconds)
        rows.append((name, what, size, worst, said, _tomllib_alone(text)))
        print(f"{name}: {size} bytes, {worst * 1000:.1f} ms CPU; {said[:100]}", flush=True)
    return rows


def table(rows: list[tuple[str, str, int, float, str, str]]) -> list[str]:
    lines = ["| file | bytes | `plans.loads`, ms CPU (slowest) | answer | tomllib alone |",
             "| --- | ---: | ---: | --- | --- |"]
    for _, what, size, worst, said, alone in rows:
        short = said if len(said) <= 90 else said[:89] + "…"
        lines.append(f"| {what} | {size:,} | {worst * 1000:.1f} | {short.replace('|', '/')} "
                     f"| {alone} |")
    return lines


def targets(rows: list[tuple[str, str, int, float, str, str]]) -> list[str]:
    out = []
    for name, _, _, worst, said, _ in rows:
        ok = worst <= GOAL_S and not said.startswith("CRASH")
        out.append(f"TARGET plan_import_{name} measured={worst:.3g}s goal={GOAL_S:g}s "
                   f"{'PASS' if ok else 'MISS'}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5, help="runs per file (the slowest counts)")
    ap.add_argument("--no-doc", action="store_true", help="do not update docs/benchmarks.md")
    ap.add_argument("--smoke", action="store_true",
                    help="8 KB files, one run each, in seconds; no doc update")
    args = ap.parse_args()
    args.size = CAP
    if args.smoke:
        args.size, args.repeats, args.no_doc = 8 * 1024, 1, True
    load = os.getloadavg()
    machine_text = machine()
    print(f"machine: {machine_text}; load average at start {load[0]:.1f}", flush=True)
    rows = run(args)
    lines, target_lines = table(rows), targets(rows)
    print("\n" + "\n".join(lines) + "\n")
    if not args.no_doc:
        when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        update_doc("bench_plan_import", [
            "## Lesson plan import (`python bench/bench_plan_import.py`)",
            "",
            f"Machine: {machine_text}. Load average {load[0]:.1f} at start, "
            f"{os.getloadavg()[0]:.1f} at the end. Run {when}.",
            f"Each file is at most {CAP // 1024} KB (the size cap); `classroom.plans.loads` "
            f"reads it {args.repeats} times and the slowest run's CPU time counts. A file "
            f"that nests deeper than {plans.MAX_PLAN_NESTING} levels or has a key of more "
            f"than {plans.MAX_KEY_PARTS} dotted parts is refused before it is parsed.",
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
    sys.exit(main())
