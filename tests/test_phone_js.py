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
import re
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


def test_the_phone_has_a_randomizer_for_every_scheme_type_the_kinds_emit():
    """The page randomizes through randomize(), which looks the scheme's type up in
    randomizer.js's RANDOMIZERS: every type a registered kind hands the phone has its
    entry there, and no entry is left for a type no kind sends. The sampler table has
    rows for every kind, which randomizer.test.js draws through randomize()."""
    from classroom import kinds
    from phone.present import device_scheme
    from tests.support.js_cases import rows

    table = rows()
    assert {row["sampler"] for row in table} == set(kinds.KINDS), \
        "tests/support/js_cases.py needs rows for every kind"
    emitted = {row[which]["type"] for row in table for which in ("scheme", "wrong")}
    emitted |= {device_scheme(k.name, dict(k.example_params))["type"]
                for k in kinds.REGISTRY.values()}
    # a series question's memo (tests/js/memo.test.js draws it with its own storage)
    emitted.add(device_scheme("binary", {"design": "memo", "f": 0.5, "p": 0.25, "q": 0.75,
                                         "series": "weekly"})["type"])
    source = (ROOT / "phone" / "assets" / "randomizer.js").read_text(encoding="utf-8")
    block = re.search(r"^const RANDOMIZERS = \{\n(.*?)^\};", source, re.M | re.S)
    assert block, "phone/assets/randomizer.js lost its RANDOMIZERS table"
    entries = set(re.findall(r"^  (\w+): ", block[1], re.M))
    assert emitted <= entries, f"no randomizer for {sorted(emitted - entries)}"
    assert entries <= emitted, f"randomizers for no kind's scheme: {sorted(entries - emitted)}"


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
