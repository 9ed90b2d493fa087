"""Every benchmark script in bench/ runs to its end in its smoke mode (``--smoke``: tiny
sizes, seconds), prints its ``TARGET`` lines and leaves docs/benchmarks.md alone.

The figures themselves are not judged here (they come from ``python bench/<script>.py``
on a known machine); a benchmark that crashes before its report, as one once did at its
last line, fails this test.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH_DOC = ROOT / "docs" / "benchmarks.md"
TARGET = re.compile(r"^TARGET \S+ measured=\S+ goal=\S+ (PASS|MISS)$", re.M)

SCRIPTS = [
    pytest.param("bench_ldp_core.py", id="ldp_core"),
    pytest.param("bench_store.py", id="store"),
    pytest.param("bench_read_model.py", id="read_model"),
    pytest.param("bench_study_pages.py", id="study_pages"),
    pytest.param("bench_shuffle.py", id="shuffle"),
    pytest.param("bench_plan_import.py", id="plan_import"),
    pytest.param("load.py", id="load", marks=pytest.mark.server),
    pytest.param("profile_server.py", id="profile_server", marks=pytest.mark.server),
    pytest.param("bench_phone_weight.py", id="phone_weight", marks=pytest.mark.server),
    pytest.param("bench_ws_messages.py", id="ws_messages", marks=pytest.mark.server),
    pytest.param("bench_slow_clients.py", id="slow_clients", marks=pytest.mark.server),
    pytest.param("bench_follow.py", id="follow", marks=[pytest.mark.server, pytest.mark.browser]),
    pytest.param("bench_late_taps.py", id="late_taps",
                 marks=[pytest.mark.server, pytest.mark.browser]),
]


def test_every_script_in_bench_has_a_smoke_run_here():
    scripts = {p.name for p in (ROOT / "bench").glob("*.py")
               if "__main__" in p.read_text(encoding="utf-8")}
    assert scripts == {p.values[0] for p in SCRIPTS}


@pytest.mark.parametrize("script", SCRIPTS)
def test_smoke_mode_runs_to_its_targets(script):
    if script in ("bench_phone_weight.py", "bench_ws_messages.py", "bench_follow.py",
                  "bench_late_taps.py"):
        from tests.support.browser import require_browser

        require_browser()
    before = BENCH_DOC.read_bytes()
    done = subprocess.run([sys.executable, str(ROOT / "bench" / script), "--smoke"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    assert "Traceback" not in out, out[-4000:]
    assert TARGET.search(done.stdout), out[-4000:]
    assert BENCH_DOC.read_bytes() == before, "a smoke run rewrote docs/benchmarks.md"


@pytest.mark.server
def test_the_floor_mode_of_the_load_bench_runs_to_its_five_targets():
    """``load.py --floor --quick``: the pinned (taskset) and unpinned placements with a few
    phones each, on the app and on the floor app, and the transactions counted in process,
    which must already be at the floor: 0 on a first load, 1 per tap."""
    before = BENCH_DOC.read_bytes()
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "load.py"), "--floor",
                           "--quick"], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    names = [m.group(0).split()[1] for m in TARGET.finditer(done.stdout)]
    assert names == ["cpu_per_phone", "cpu_per_phone_vs_floor_app", "largest_class",
                     "transactions_per_tap", "transactions_first_load"], out[-4000:]
    assert "TARGET transactions_per_tap measured=1 goal=1 PASS" in done.stdout
    assert "TARGET transactions_first_load measured=0 goal=0 PASS" in done.stdout
    assert BENCH_DOC.read_bytes() == before, "a quick run rewrote docs/benchmarks.md"


@pytest.mark.server
def test_the_one_address_burst_of_the_load_bench_runs_to_its_targets():
    """``load.py --burst --quick``: a few phones from one address with a core busy, on the
    app and on the floor app; every phone answered and stored once."""
    before = BENCH_DOC.read_bytes()
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "load.py"), "--burst",
                           "--quick"], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    names = [m.group(0).split()[1] for m in TARGET.finditer(done.stdout)]
    assert names == ["burst_closed_unanswered_60", "burst_tap_to_receipt_p95_60",
                     "burst_lost_or_duplicated_60", "burst_cpu_per_phone_vs_floor_app"]
    assert BENCH_DOC.read_bytes() == before, "a quick run rewrote docs/benchmarks.md"
