"""Every privacy sentence rounds toward privacy (classroom.privacy_numbers).

"At least X% likely" rounds down; "the odds change by at most k×" rounds up; an ε shown
as a guarantee rounds up; the ε left in a budget rounds down. Checked at awkward ε (3.0,
where the floor is 4.7426%, 1.0, 0.01, 7.3, ln 3) and on a grid, on the phone's receipt
(Python) and budget lines (its own JavaScript, which must write what Python writes), the
dashboard and the study pages' formatters. The old rounding (to the nearest) fails the
same checks: their power.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path

import pytest

import ldp_core
from classroom import designs
from classroom.domain import BudgetStatus, Question, canonical_design
from classroom.privacy_numbers import (
    at_least_percent,
    at_most_factor,
    epsilon_down,
    epsilon_up,
    significant_down,
    significant_up,
)
from phone.present import privacy_note
from tests.test_phone_js import _node
from ui.fmt import fmt_eps, fmt_eps_value, fmt_ratio, fmt_up

ROOT = Path(__file__).resolve().parents[1]
AWKWARD = (3.0, 1.0, 0.01, 7.3, math.log(3), 0.5, 2.0, 19.99)
GRID = [round(0.01 * i, 2) for i in range(1, 501)]  # 0.01 .. 5.00


def _floor(eps: float) -> float:
    """The smallest probability of a report under RR_eps: 1 / (1 + e^eps)."""
    return float(ldp_core.EpsilonRR(eps).channel.min())


def _number(text: str) -> float:
    return float(text.replace(",", "").rstrip("%×"))


# -- the rule -----------------------------------------------------------------------------
def test_the_rule_at_awkward_epsilons() -> None:
    expected = {  # eps: (floor, factor, eps shown)
        3.0: ("4.7%", "20.1×", "3.00"),  # the floor is 4.7426%: never "5%"
        1.0: ("26.8%", "2.72×", "1.00"),  # 26.894%: never "27%"
        0.01: ("49.7%", "1.02×", "0.01"),  # e^0.01 = 1.01005: never "1.01×"
        7.3: ("0.067%", "1,481×", "7.30"),  # 0.0675%, e^7.3 = 1480.3
        math.log(3): ("25%", "3×", "1.10"),  # exact values stay exact through float noise
    }
    for eps, (floor, factor, shown) in expected.items():
        assert (at_least_percent(_floor(eps)), at_most_factor(math.exp(eps)),
                epsilon_up(eps)) == (floor, factor, shown), eps


def test_each_number_errs_toward_privacy() -> None:
    """On the grid 0.01..5.00 and the awkward values: each number on the safe side, and no
    more than one shown step from the truth."""
    wrong = []
    for eps in GRID + list(AWKWARD):
        floor, factor = _floor(eps), math.exp(eps)
        shown_floor = _number(at_least_percent(floor))
        checks = {
            "floor down": shown_floor <= 100 * floor * (1 + 1e-12),
            "factor up": _number(at_most_factor(factor)) >= factor * (1 - 1e-12),
            "eps up": _number(epsilon_up(eps)) >= eps * (1 - 1e-12),
            "eps down": _number(epsilon_down(eps)) <= eps * (1 + 1e-12),
            "eps within 0.01": _number(epsilon_up(eps)) - eps < 0.01,
            "floor within 0.1 point": 100 * floor - shown_floor < 0.1,
        }
        wrong += [(eps, name) for name, ok in checks.items() if not ok]
    assert not wrong, wrong[:10]


def test_the_old_rounding_fails_the_same_check() -> None:
    """Power: rounding the floor to the nearest whole percent, as the receipt used to,
    overstates it for about half of the grid (the check above would catch it)."""
    def overstates(eps: float) -> bool:
        return float(f"{100 * _floor(eps):.0f}") > 100 * _floor(eps)

    assert sum(overstates(e) for e in GRID) > 200
    assert overstates(3.0) and overstates(1.0)
    assert float(f"{math.exp(0.01):.3g}") < math.exp(0.01)  # ".3g" understated the factor


def test_float_noise_is_not_rounded_up() -> None:
    assert epsilon_up(math.log(3) * 3) == "3.30"  # 3.2958…
    assert epsilon_up(3 * 1.1) == "3.30"  # 3.3000000000000003
    assert at_most_factor(math.exp(math.log(3))) == "3×"  # 3.0000000000000004
    assert epsilon_down(0.7999999999999998) == "0.80"
    assert significant_up(3.0000000000000004) == "3.00"
    assert significant_down(1 / 3) == "0.333"


def test_bad_numbers_are_refused() -> None:
    with pytest.raises(ValueError):
        at_least_percent(1.5)
    with pytest.raises(ValueError):
        at_most_factor(0.5)
    with pytest.raises(ValueError):
        epsilon_up(math.nan)
    assert epsilon_up(math.inf) == "∞"
    assert at_most_factor(math.exp(30)) == "a huge factor"


# -- the phone ----------------------------------------------------------------------------
def _question(kind: str, params: dict, options=("No", "Yes")) -> Question:
    from datetime import UTC, datetime
    now = datetime.now(UTC)
    return Question(id=1, poll_id=1, position=1, text="Q?", kind=kind, options=tuple(options),
                    design_json=canonical_design(kind, params)[1], mode="device", state="open",
                    revealed=False, created_at=now, updated_at=now, round_number=1)


def _receipt_numbers(note: str) -> tuple[float | None, float, float]:
    floor = re.search(r"at least ([\d.]+)% likely", note)
    factor = re.search(r"at most ([\d.,]+)×", note)
    eps = re.search(r"ε = (\d+\.\d+)", note)
    assert factor and eps, note
    return (float(floor.group(1)) / 100 if floor else None, _number(factor.group(1)),
            float(eps.group(1)))


@pytest.mark.parametrize("eps", AWKWARD)
def test_the_receipt_never_overstates_privacy(eps: float) -> None:
    note = privacy_note(_question("binary", {"design": "epsilon", "epsilon": eps}))
    floor, factor, shown = _receipt_numbers(note)
    design = ldp_core.EpsilonRR(eps)
    assert floor is not None and floor <= float(design.channel.min())
    assert factor >= math.exp(design.epsilon) * (1 - 1e-12)
    assert shown >= design.epsilon * (1 - 1e-12)


def test_the_receipt_at_eps_3_and_the_class_exercise() -> None:
    note = privacy_note(_question("binary", {"design": "epsilon", "epsilon": 3.0}))
    assert "at least 4.7% likely" in note and "at most 20.1×" in note and "ε = 3.00" in note
    die = privacy_note(_question("binary", {"design": "die", "faces": 4, "truthful": 3}))
    assert "at least 25% likely" in die and "at most 3×" in die and "ε = 1.10" in die


@pytest.mark.parametrize("eps", [0.01, 1.0, 3.0, 7.3])
def test_numeric_and_categorical_receipts_round_up(eps: float) -> None:
    numeric = privacy_note(_question(
        "numeric", {"design": "duchi", "epsilon": eps, "lo": 0, "hi": 10}, options=()))
    grr = privacy_note(_question("categorical", {"design": "grr", "d": 3, "epsilon": eps},
                                 options=("a", "b", "c")))
    for note in (numeric, grr):
        _, factor, shown = _receipt_numbers(note)
        assert factor >= math.exp(eps) * (1 - 1e-12) and shown >= eps * (1 - 1e-12)
        assert "almost as likely" not in note  # not true at a large ε


def test_a_design_without_privacy_says_so() -> None:
    note = privacy_note(_question("binary", {"design": "forced", "p_truth": 0.5, "p_yes": 0.0}))
    assert "no guarantee" in note and "ε = ∞" in note


def test_the_phone_script_writes_epsilon_as_python_does() -> None:
    """flow.js's epsilonText against classroom.privacy_numbers, in node, on the awkward
    values, the grid, three times the grid (sums of answers) and float-noise cases."""
    node = _node()
    values = sorted({*AWKWARD, *GRID, *(3 * e for e in GRID), 3 * math.log(3),
                     0.7999999999999998, 1.0000000000000002, 0.0, 2.005, 1e-9})
    script = ("const { load } = require('./tests/js/support.js');"
              "const { epsilonText } = load(['flow.js']);"
              f"const xs = {json.dumps(values)};"
              "console.log(JSON.stringify(xs.map((x) => [epsilonText(x, false), "
              "epsilonText(x, true)])));")
    done = subprocess.run([node, "-e", script], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, check=True)
    got = json.loads(done.stdout)
    want = [[epsilon_up(x), epsilon_down(x)] for x in values]
    mismatches = [(x, g, w) for x, g, w in zip(values, got, want, strict=True) if g != w]
    assert not mismatches, mismatches[:5]


# -- the dashboard, the study pages, the service's texts -----------------------------------
def test_the_formatters_round_toward_privacy() -> None:
    assert fmt_eps(3.0) == "ε = 3.00" and fmt_eps(2.001) == "ε = 2.01"
    assert fmt_eps_value(math.log(3), 4) == "1.0987"  # 1.098612…: a bound, so up
    assert fmt_ratio(math.exp(0.01)) == "×1.02"
    assert fmt_ratio(math.exp(-1.0)) == "×0.367"  # 0.3679: away from 1, so down
    assert fmt_up(math.exp(math.log(3))) == "3.00"


def test_the_budget_line_rounds_spent_up_and_left_down() -> None:
    from ui.dashboard.budget import budget_line

    spent = 2 * math.log(3)  # 2.1972…
    status = BudgetStatus(budget=3.0, committed=spent, rounds=())
    line = budget_line(status)
    assert "ε = 2.20 of 3.00" in line and "0.80 left" in line  # 0.8028 left: down


def test_design_descriptions_round_epsilon_up() -> None:
    assert designs.describe({"design": "epsilon", "epsilon": 1.005}).endswith("ε = 1.01")
    assert designs.describe({"design": "grr", "d": 3, "epsilon": 0.504}).endswith("ε = 0.51")
    assert designs.describe({"design": "epsilon", "epsilon": 3.0}).endswith("ε = 3.00")


def test_no_privacy_sentence_formats_epsilon_by_hand() -> None:
    """An audit: outside classroom.privacy_numbers, no phone, dashboard, study-page or
    service text writes an ε or a factor e^ε with a bare format."""
    pattern = re.compile(
        r"(ε = \{[^}]*(:\.\d+f|:\.\dg)\}|ε = \{fmt_fixed|math\.exp\(eps\):\.|toFixed\(2\))")
    paths = [*ROOT.glob("ui/**/*.py"), *ROOT.glob("views/*.py"), *ROOT.glob("phone/*.py"),
             *ROOT.glob("phone/assets/*.js"), *ROOT.glob("classroom/**/*.py")]
    offenders = []
    for path in paths:
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line) and "scaled" not in line:  # flow.js's copy of the rule
                offenders.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
