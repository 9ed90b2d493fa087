"""A small lecture hall against the real server: 50 phones on the HTTP phone path through the
load harness (``bench/harness.py`` as a library), checked for correctness, not speed.

Every phone loads the page, reads the question, votes and gets its receipt, then waits
a few seconds by long-poll; a dashboard session refreshes meanwhile and ends up
showing every stored report. The database holds exactly one report per phone with
the answer it sent. The timed runs (1,500 students and more) stay in
``python bench/load.py``; this only prints the latencies.
"""

from __future__ import annotations

import pytest

from bench.harness import LoadConfig, run_load, target
from bench.load import print_report

pytestmark = pytest.mark.server


def test_fifty_phones_each_store_exactly_one_report():
    cfg = LoadConfig(students=50, spread_s=5.0, vote_delay_s=(0.5, 2.0), wait_s=4.0,
                     projector_baseline_s=1.0, seed=50, step_timeout_s=60.0, max_run_s=180.0)
    with target() as tgt:
        report = run_load(tgt, cfg, label="smoke")
    summary = print_report(report)
    assert summary["errors"] == 0, summary["error_kinds"]
    assert all(o.receipt for o in report.outcomes)
    assert report.exactly_one_each
    assert report.lost == 0 and report.duplicated == 0 and report.wrong_answer == 0
    assert report.stored_without_receipt == 0
    # Phones waited by long-poll and got 304s, not errors.
    assert summary["long_polls"] >= 50
    assert set(summary["statuses"]) <= {"200", "304"}, summary["statuses"]
    # The projector kept refreshing and its last count is the database's.
    pj = summary["projector"]
    assert pj["errors"] == 0, pj["first_error"]
    assert pj["refreshes"] >= 2
    assert pj["last_shown"] == report.stored == 50
