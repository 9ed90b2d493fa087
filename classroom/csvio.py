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
    kind_of_json,
)
from .estimates import estimate_from_groups

__all__ = ["CSV_COLUMNS", "MAX_CSV_ROWS", "csv_safe", "csv_unsafe", "replay_from_csv",
           "write_csv"]

#: The kind of a design cell that records none: files exported before schema version 6,
#: when every design name belonged to one kind (multiple choice: GRR, unary encoding and
#: OLH; numeric: the four mechanisms; yes/no: every other name, which ldp_core checks).
#: History, like the migrations' old checks: a design exported since records its kind.
_KIND_BEFORE_6 = {"grr": "categorical", "ue": "categorical", "olh": "categorical",
                  "duchi": "numeric", "piecewise": "numeric", "hybrid": "numeric",
                  "laplace": "numeric"}


def _recorded_kind(params: object) -> str:
    """The kind a design cell records (or, written before designs recorded one, the kind
    its design name then belonged to: :data:`_KIND_BEFORE_6`).

    >>> _recorded_kind({"kind": "binary", "design": "grr"}), _recorded_kind({"design": "ue"})
    ('binary', 'categorical')
    """
    if not isinstance(params, dict):
        raise ValueError(f"design parameters must be a dict, got {type(params).__name__}")
    named = params.get("kind")
    if named is None:
        return _KIND_BEFORE_6.get(str(params.get("design")), "binary")
    if not isinstance(named, str) or named not in kinds.KINDS:
        raise ValueError(f"kind must be one of {list(kinds.KINDS)}, got {str(named)[:24]!r}")
    return named


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


class _Replay:
    """The reports of an exported CSV, read row by row: grouped counts, each round's
    design, the question's kind (fixed by the first row) and its option labels."""

    def __init__(self) -> None:
        self.kind: kinds.QuestionKind | None = None
        self.k: int | None = None
        self.labels: dict[int, str] = {}
        self.counts: dict[tuple[int, str, str], int] = defaultdict(int)
        self.round_designs: dict[int, str] = {}
        self._designs: dict[str, tuple[Design, str]] = {}

    def add(self, i: int, row: dict[str | None, object]) -> None:
        """Row ``i`` (1 = header); :class:`BadInput` naming the row and the column."""
        if None in row or any(row.get(c) is None for c in ("round", "answer", "design_params")):
            raise BadInput(f"row {i}: wrong number of fields")
        raw_round = str(row["round"] or "").strip()
        if not raw_round.isdigit() or int(raw_round) < 1:
            raise BadInput(f"row {i}, column 'round': expected a round number >= 1, "
                           f"got {raw_round[:24]!r}")
        design, design_json = self._design(i, str(row["design_params"] or ""))
        kind = self._kind_of(i, design, kinds.kind(kind_of_json(design_json)))
        placeholder = tuple(str(j) for j in range(self.k or 0))
        try:
            stored = kind.encode(design, placeholder, csv_unsafe(str(row["answer"] or "").strip()))
        except BadReport as exc:
            raise BadInput(f"row {i}, column 'answer': {exc}") from exc
        label = csv_unsafe(str(row.get("answer_label") or "").strip())
        index = kind.csv_label_index(design, stored) if label else None
        if index is not None and index not in self.labels:
            self.labels[index] = label[:60]
        self.counts[(int(raw_round), design_json, stored)] += 1
        self.round_designs.setdefault(int(raw_round), design_json)

    def _design(self, i: int, raw: str) -> tuple[Design, str]:
        """The row's design and its canonical JSON (each distinct cell checked once)."""
        try:
            cached = self._designs.get(raw)
            if cached is None:
                params = json.loads(raw)
                cached = self._designs[raw] = canonical_design(_recorded_kind(params), params)
        except (ValueError, TypeError) as exc:
            raise BadInput(f"row {i}, column 'design_params': {exc}") from exc
        return cached

    def _kind_of(self, i: int, design: Design, row_kind: kinds.QuestionKind
                 ) -> kinds.QuestionKind:
        """The question's kind, the same on every row, as its number of options."""
        if self.kind is None:
            self.kind = row_kind
        elif row_kind is not self.kind:
            raise BadInput(f"row {i}, column 'design_params': a {row_kind.name} design in a "
                           f"{self.kind.name} question")
        unusable = row_kind.csv_check(design)
        if unusable:
            raise BadInput(f"row {i}, column 'design_params': {unusable}")
        row_k = row_kind.csv_width(design)
        if self.k is None:
            self.k = row_k
        elif row_k != self.k:
            raise BadInput(f"row {i}, column 'design_params': d = {row_k}, earlier rows "
                           f"have {self.k} options")
        return row_kind

    def estimate(self, round_number: int | None, level: float) -> QuestionEstimate:
        if self.kind is None or self.k is None:
            raise BadInput("the CSV has no reports")
        k, default = self.k, self.kind.csv_options(self.k)
        options = tuple(self.labels.get(j, default[j]) for j in range(k))
        if len(set(options)) != k:
            options = default
        groups = [(number, dj, ans, False, c) for (number, dj, ans), c in self.counts.items()]
        return estimate_from_groups(
            question_id=None, kind=self.kind.name, options=options, groups=groups,
            round_designs=self.round_designs,
            round_number=max(self.round_designs) if round_number is None else round_number,
            level=level)


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
    replay = _Replay()
    for i, row in enumerate(reader, start=2):
        if i - 1 > MAX_CSV_ROWS:
            raise BadInput(f"the CSV has more than {MAX_CSV_ROWS} reports")
        replay.add(i, row)
    return replay.estimate(round_number, level)


def write_csv(rows: Iterable[Sequence[object]]) -> str:
    """The export: a header of :data:`CSV_COLUMNS`, then one row per report, every cell
    made safe for a spreadsheet with :func:`csv_safe`."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        writer.writerow([csv_safe(cell) for cell in row])
    return out.getvalue()
