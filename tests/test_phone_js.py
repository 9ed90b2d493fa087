"""The phone's JavaScript under ``node --test`` (``tests/js/``), run by the test suite.

``randomizer.test.js`` draws 200,000 reports per design and true answer from the page's
own samplers and compares them with ldp_core's exact probabilities (and rejects a
deliberately wrong sampler); ``flow.test.js`` drives the page's state machine against a
fake server; ``pacing.test.js`` checks projection mode's keys and countdown
(``ui/dashboard/pacing.js``) against the phone's countdown text. Node 20 needs no
package. Without node the test skips locally with the reason; under ``CI=true`` it fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
JS_TESTS = sorted((ROOT / "tests" / "js").glob("*.test.js"))


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        reason = "node is not installed (apt-get install nodejs): the phone's JS tests need it"
        if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
            pytest.fail(f"CI=true requires node: {reason}", pytrace=False)
        pytest.skip(reason)
    return node


def test_there_are_js_tests_for_the_samplers_and_the_state_machine():
    assert {p.name for p in JS_TESTS} >= {"randomizer.test.js", "flow.test.js"}


def test_the_sampler_table_has_a_row_for_every_numeric_mechanism():
    """A mechanism added to ldp_core (and so to the phone) needs its row in the table."""
    import ldp_core
    from tests.support.js_cases import rows

    numeric = {row["scheme"]["mechanism"] for row in rows() if row["sampler"] == "numeric"}
    assert numeric == set(ldp_core.NUMERIC_NAMES)


@pytest.mark.parametrize("script", JS_TESTS, ids=lambda p: p.name)
def test_node_test(script: Path):
    node = _node()
    # The sampler table comes from ldp_core through this very interpreter.
    env = {**os.environ, "PYTHON": sys.executable}
    done = subprocess.run([node, "--test", "--test-reporter=tap", str(script)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        failing = [line for line in done.stdout.splitlines()
                   if line.lstrip().startswith(("not ok", "error:", "# fail"))]
        pytest.fail(f"node --test {script.name} failed:\n" + "\n".join(failing)
                    + f"\n\n--- full output ---\n{done.stdout[-20000:]}\n{done.stderr[-5000:]}",
                    pytrace=False)
