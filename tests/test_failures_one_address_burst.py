"""A lecture hall behind one address (a campus NAT) joins in a burst while the machine
is busy: every phone gets an answer.

Before, the server closed an address's connections that had not yet sent a whole request
beyond 256, as the later ones opened. A burst from one address on a busy machine has
many such connections for a moment (the phones' requests come a little after their
connections open): 1,000 phones from 127.0.0.1 in 2 s while another process kept a core
busy, 476 of them got no answer (``ServerDisconnectedError``) and nothing was logged.
Now a connection is closed to make room only when the server is at its connection cap,
and only a slow one (``web/serving.py``).

Each simulated phone holds its own connections (its own aiohttp session), as a phone
does. The test asserts answers, not speed: a loaded machine makes the burst slow, never
lossy.
"""

from __future__ import annotations

import pytest

from bench.harness import LoadConfig, cpu_burner, run_load, target
from bench.load import print_report

pytestmark = pytest.mark.server


def test_1000_phones_from_one_address_in_2_s_with_a_busy_core_all_get_an_answer():
    cfg = LoadConfig(students=1000, spread_s=2.0, vote_delay_s=(0.5, 2.0), wait_s=2.0,
                     projector=False, seed=1000, step_timeout_s=300.0, max_run_s=900.0)
    with target() as tgt, cpu_burner(1):
        report = run_load(tgt, cfg, label="one-address burst")
        server_log = tgt.servers[0].log()
    summary = print_report(report)
    assert summary["closed_unanswered"] == 0, summary["error_kinds"]
    assert summary["errors"] == 0, summary["error_kinds"]
    assert all(o.receipt for o in report.outcomes)
    assert report.exactly_one_each and report.wrong_answer == 0
    assert "Traceback" not in server_log
