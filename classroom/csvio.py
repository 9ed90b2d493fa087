"""CSV export and replay of a question's reports, safe in a spreadsheet.

Cells that a spreadsheet would read as a formula are neutralized on the way out
and restored on the way back in (OWASP, "CSV Injection").
"""


import csv
import io
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence

from . import kinds
from .domain import (
    BadInput,
    BadReport,
    Design,
    QuestionEstimate,
    canonical_design,
    kind_of_params,
)
from .estimates import estimate_from_groups

__all__ = ["CSV_COLUMNS", "MAX_CSV_ROWS", "csv_safe", "csv_unsafe", "replay_from_csv",
           "write_csv"]

#: Columns of an exported question, in order. No tokens, no submission ids.
CSV_COLUMNS = ("round", "answer", "answer_label", "design_params", "created_at")


MAX_CSV_ROWS = 1_000_000


#: A spreadsheet reads a cell starting with these as a formula (OWASP, "CSV Injection").
_FORMULA_START = frozenset("=+-@\t\r")


def csv_safe(cell: object) -> object:
    """Neutralise a text cell a spreadsheet would run as a formula (OWASP CSV injection).

    A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
    return, also after leading spaces, is prefixed with a single quote; other
    values pass unchanged. :func:`csv_unsafe` undoes it when the app reads its
    own export back.

    >>> csv_safe("=SUM(A1:A9)"), csv_safe(" +1"), csv_safe("No"), csv_safe(3)
    ("'=SUM(A1:A9)", "' +1", 'No', 3)
    """
    if isinstance(cell, str) and cell and (cell[0] in _FORMULA_START
                                           or cell.lstrip(" ")[:1] in _FORMULA_START):
        return "'" + cell
    return cell


def csv_unsafe(cell: str) -> str:
    """The text :func:`csv_safe` was given.

    >>> csv_unsafe(csv_safe("=1+1")), csv_unsafe("'quoted'")
    ('=1+1', "'quoted'")
    """
    rest = cell[1:]
    if cell.startswith("'") and rest and csv_safe(rest) != rest:
        return rest
    return cell


def replay_from_csv(text: str, *, round_number: int | None = None,
                    level: float = 0.95) -> QuestionEstimate:
    """Parse an exported question CSV back into grouped counts and estimate it.

    Errors are :class:`BadInput` naming the row (1 = header) and the column.
    """
    if not isinstance(text, str):
        raise BadInput("the CSV must be text")
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    header = reader.fieldnames or []
    missing = [c for c in ("round", "answer", "design_params") if c not in header]
    if missing:
        raise BadInput(f"the CSV lacks the column(s) {', '.join(missing)}; expected "
                       f"{','.join(CSV_COLUMNS)}")
    strategy: kinds.QuestionKind | None = None
    k: int | None = None
    labels: dict[int, str] = {}
    counts: dict[tuple[int, str, str], int] = defaultdict(int)
    round_designs: dict[int, str] = {}
    canon_cache: dict[str, tuple[Design, str]] = {}
    for i, row in enumerate(reader, start=2):
        if i - 1 > MAX_CSV_ROWS:
            raise BadInput(f"the CSV has more than {MAX_CSV_ROWS} reports")
        if None in row or any(row.get(c) is None for c in ("round", "answer", "design_params")):
            raise BadInput(f"row {i}: wrong number of fields")
        raw_round = (row["round"] or "").strip()
        if not raw_round.isdigit() or int(raw_round) < 1:
            raise BadInput(f"row {i}, column 'round': expected a round number >= 1, "
                           f"got {raw_round[:24]!r}")
        number = int(raw_round)
        raw_params = row["design_params"] or ""
        try:
            cached = canon_cache.get(raw_params)
            if cached is None:
                params = json.loads(raw_params)
                cached = canon_cache[raw_params] = canonical_design(kind_of_params(params),
                                                                    params)
            design, design_json = cached
        except (ValueError, TypeError) as exc:
            raise BadInput(f"row {i}, column 'design_params': {exc}") from exc
        row_kind = kinds.kind_of_design(design)
        if strategy is None:
            strategy = row_kind
        elif row_kind is not strategy:
            raise BadInput(f"row {i}, column 'design_params': a {row_kind.name} design in a "
                           f"{strategy.name} question")
        unusable = strategy.csv_check(design)
        if unusable:
            raise BadInput(f"row {i}, column 'design_params': {unusable}")
        row_k = strategy.csv_width(design)
        if k is None:
            k = row_k
        elif row_k != k:
            raise BadInput(f"row {i}, column 'design_params': d = {row_k}, earlier rows "
                           f"have {k} options")
        placeholder = tuple(str(j) for j in range(k))
        try:
            stored = strategy.encode(design, placeholder,
                                     csv_unsafe((row["answer"] or "").strip()))
        except BadReport as exc:
            raise BadInput(f"row {i}, column 'answer': {exc}") from exc
        label = csv_unsafe((row.get("answer_label") or "").strip())
        index = strategy.csv_label_index(design, stored) if label else None
        if index is not None and index not in labels:
            labels[index] = label[:60]
        counts[(number, design_json, stored)] += 1
        round_designs.setdefault(number, design_json)
    if strategy is None or k is None:
        raise BadInput("the CSV has no reports")
    default = strategy.csv_options(k)
    options = tuple(labels.get(j, default[j]) for j in range(k))
    if len(set(options)) != k:
        options = default
    groups = [(number, dj, ans, False, c) for (number, dj, ans), c in counts.items()]
    return estimate_from_groups(
        question_id=None, kind=strategy.name, options=options, groups=groups,
        round_designs=round_designs,
        round_number=max(round_designs) if round_number is None else round_number,
        level=level)


def write_csv(rows: Iterable[Sequence[object]]) -> str:
    """The export: a header of :data:`CSV_COLUMNS`, then one row per report, every cell
    made safe for a spreadsheet with :func:`csv_safe`."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        writer.writerow([csv_safe(cell) for cell in row])
    return out.getvalue()
