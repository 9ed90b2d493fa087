"""A small lecture hall against the real server: 50 headless students through the load
harness (``bench/load.py`` as a library), checked for correctness, not speed.

Every student joins, taps and gets its receipt; the database holds exactly one
report per student with the answer it sent. The timed runs (300 and more
students) stay in ``python bench/load.py``; this only prints the latencies.
"""

from __future__ import annotations

import pytest

from bench.load import LoadConfig, print_report, run_load, target

pytestmark = pytest.mark.server


def test_fifty_students_each_store_exactly_one_report():
    cfg = LoadConfig(students=50, arrival="burst", spread_s=5.0, vote_delay_s=(0.5, 2.0),
                     seed=50, step_timeout_s=60.0, max_run_s=180.0)
    with target() as tgt:
        report = run_load(tgt, cfg, label="smoke")
    summary = print_report(report)
    assert summary["errors"] == 0, summary["error_kinds"]
    assert all(o.receipt for o in report.outcomes)
    assert report.exactly_one_each
    assert report.lost == 0 and report.duplicated == 0 and report.wrong_answer == 0
    assert report.stored_without_receipt == 0
    assert summary["fragment_errors"] == 0
