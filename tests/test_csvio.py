"""CSV replay for self-study: parsing, validation messages, estimates (no database needed)."""

from __future__ import annotations

import pytest

import ldp_core
from classroom import BadInput
from classroom.csvio import replay_from_csv
from classroom.domain import CLASS_EXERCISE

HEADER = "round,answer,answer_label,design_params,created_at\n"
DIE_JSON = '"{""design"":""die"",""faces"":4,""truthful"":3}"'
EPS_JSON = '"{""design"":""epsilon"",""epsilon"":1.0}"'
GRR_JSON = '"{""d"":3,""design"":""grr"",""epsilon"":1.0}"'


def csv_of(*rows: str) -> str:
    return HEADER + "".join(r + "\n" for r in rows)


def test_replay_of_the_class_exercise():
    rows = [f"1,1,Vanilla,{DIE_JSON},2025-04-07T10:00:00+00:00"] * 30 + \
           [f"1,0,Chocolate,{DIE_JSON},2025-04-07T10:00:01+00:00"] * 10
    est = replay_from_csv(csv_of(*rows))
    assert est.options == ("Chocolate", "Vanilla") and est.question_id is None
    want = ldp_core.BinaryCounts.single(ldp_core.DieRR(4, 3), 30, 40).summary()
    assert est.result.estimate == want


def test_replay_without_optional_columns_and_with_a_bom():
    text = "\ufeffround,answer,design_params\n" + f"1,1,{DIE_JSON}\n2,0,{EPS_JSON}\n"
    est = replay_from_csv(text)
    assert est.rounds == (1, 2) and est.round_number == 2 and est.counts == (1, 0)
    assert est.options == ("No", "Yes")
    assert replay_from_csv(text, round_number=1).counts == (0, 1)


def test_replay_categorical():
    est = replay_from_csv(csv_of(f"1,2,Blue,{GRR_JSON},", f"1,0,Red,{GRR_JSON},"))
    assert est.kind == "categorical" and est.counts == (1, 0, 1)
    assert est.options == ("Red", "option 2", "Blue")


@pytest.mark.parametrize("text, message", [
    ("", "lacks the column"),
    ("round,answer\n1,1\n", "lacks the column\\(s\\) design_params"),
    (HEADER, "has no reports"),
    (csv_of(f"0,1,x,{DIE_JSON},"), "row 2, column 'round'"),
    (csv_of(f"1,1,x,{DIE_JSON},", f"abc,1,x,{DIE_JSON},"), "row 3, column 'round'"),
    (csv_of("1,1,x,not json,"), "row 2, column 'design_params'"),
    (csv_of('1,1,x,"{""design"":""die"",""faces"":4,""truthful"":2}",'),
     "row 2, column 'design_params'"),
    (csv_of(f"1,2,x,{DIE_JSON},"), "row 2, column 'answer'"),
    (csv_of(f"1,1,x,{DIE_JSON},", f"1,1,x,{GRR_JSON},"),
     "row 3, column 'design_params'.*categorical"),
    (csv_of('1,1,x,"{""design"":""gamma"",""gamma"":0}",'), "carries no information"),
    (csv_of(f"1,1,x,{DIE_JSON},,extra"), "row 2: wrong number of fields"),
])
def test_replay_errors_name_the_row_and_column(text, message):
    with pytest.raises(BadInput, match=message):
        replay_from_csv(text)


# -- formula injection (OWASP "CSV Injection") -------------------------------------------------
FORMULAS = ['=HYPERLINK("http://x.invalid","No")', "+1+1", "-2+3", "@SUM(A1)",
            "\t=1+1", "\r=1+1", "  =1+1"]


@pytest.mark.parametrize("label", FORMULAS)
def test_export_neutralises_formula_labels_and_replay_reads_them_back(service, label):
    import csv
    import io

    poll = service.polls.create_poll("t")
    q = service.polls.add_question(poll.id, "Which?", options=("Plain", label),
                                   design_params=dict(CLASS_EXERCISE))
    service.running.open_question(q.id)
    for i, answer in enumerate((1, 1, 0)):
        service.reports.submit_report(poll.join_code, q.id, answer=answer,
                                      design_params=dict(CLASS_EXERCISE),
                                      submission_id=f"f-{i:06d}", device_id=f"dev-{i}")
    text = service.results.export_csv(q.id)
    for row in csv.reader(io.StringIO(text)):
        for cell in row:
            # No cell a spreadsheet would evaluate: none starts with a formula character,
            # even after spaces.
            assert cell.lstrip(" ")[:1] not in "=+-@\t\r", row
    labels = [r["answer_label"] for r in csv.DictReader(io.StringIO(text))]
    assert labels.count("'" + label.strip()) == 2  # labels are stored stripped
    assert replay_from_csv(text).options == ("Plain", label.strip())


@pytest.mark.parametrize("cell", ["=1", "+1", "-1", "@A1", "\t=1", "\r=1", "\t+1", "\r@A1",
                                  "   -1", "\t", "\r"])
def test_csv_safe_prefixes_every_formula_start(cell):
    from classroom.csvio import csv_safe, csv_unsafe

    safe = csv_safe(cell)
    assert safe == "'" + cell and csv_unsafe(safe) == cell


@pytest.mark.parametrize("cell", ["No", "Vanilla", "1", "0101", '{"design":"die"}',
                                  "2025-04-07T10:00:00+00:00", "'quoted'", ""])
def test_csv_safe_leaves_ordinary_cells_alone(cell):
    from classroom.csvio import csv_safe, csv_unsafe

    assert csv_safe(cell) == cell and csv_unsafe(cell) == cell
