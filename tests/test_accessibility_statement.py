"""docs/accessibility.md names every WCAG 2.2 A and AA success criterion once, with a
result, and the tests it says check the claims exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "accessibility.md").read_text(encoding="utf-8")

#: WCAG 2.2's success criteria of levels A and AA (4.1.1 Parsing is obsolete in 2.2).
WCAG22_A_AA = """1.1.1 1.2.1 1.2.2 1.2.3 1.2.4 1.2.5 1.3.1 1.3.2 1.3.3 1.3.4 1.3.5 1.4.1 1.4.2
1.4.3 1.4.4 1.4.5 1.4.10 1.4.11 1.4.12 1.4.13 2.1.1 2.1.2 2.1.4 2.2.1 2.2.2 2.3.1 2.4.1
2.4.2 2.4.3 2.4.4 2.4.5 2.4.6 2.4.7 2.4.11 2.5.1 2.5.2 2.5.3 2.5.4 2.5.7 2.5.8 3.1.1
3.1.2 3.2.1 3.2.2 3.2.3 3.2.4 3.2.6 3.3.1 3.3.2 3.3.3 3.3.4 3.3.7 3.3.8 4.1.2
4.1.3""".split()
RESULTS = {"Supports", "Partially", "Not applicable"}


def _rows() -> dict[str, str]:
    """Each criterion the table names (a range such as 1.2.1–1.2.5 names each) → result."""
    rows = {}
    for line in DOC.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        found = re.match(r"(\d\.\d\.\d+)(?:–(\d\.\d\.\d+))? ", cells[0]) if cells else None
        if not found or len(cells) < 4:
            continue
        first, last = found.group(1), found.group(2) or found.group(1)
        start, end = WCAG22_A_AA.index(first), WCAG22_A_AA.index(last)
        for sc in WCAG22_A_AA[start:end + 1]:
            assert sc not in rows, f"{sc} is in the table twice"
            rows[sc] = cells[2]
    return rows


def test_every_criterion_has_one_row_with_a_result():
    rows = _rows()
    assert sorted(rows, key=WCAG22_A_AA.index) == WCAG22_A_AA
    assert set(rows.values()) <= RESULTS, set(rows.values()) - RESULTS


def test_every_partial_criterion_is_a_known_exception_with_a_workaround():
    partial = [sc for sc, result in _rows().items() if result == "Partially"]
    exceptions = DOC.split("## Known exceptions", 1)[1].split("##", 1)[0]
    assert partial
    for sc in partial:
        assert f"({sc})" in exceptions, f"{sc} is partial but not among the known exceptions"
    assert exceptions.count("\n1. ") + exceptions.count("\n2. ") >= 2


def test_the_tests_it_names_exist():
    for name in re.findall(r"`(tests/[\w/]+\.(?:py|js))`", DOC):
        assert (ROOT / name).exists(), name
