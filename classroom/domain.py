"""Domain objects and errors of the classroom: polls, questions, rounds, reports.

Everything here is a frozen dataclass or a pure function; nothing touches the
database (that is :mod:`classroom.store`) and nothing holds mutable state.

Answer encoding (``Question.options`` index = encoded answer):

* binary: ``options[0]`` is answer 0 ("no"), ``options[1]`` is answer 1
  ("yes"); the class exercise is ``("Chocolate", "Vanilla")``;
* categorical GRR: the option index ``"0"..str(k-1)``;
* categorical UE: ``k`` characters ``"0"``/``"1"``, character i the perturbed
  bit of option i;
* numeric: Duchi et al.'s mechanism, the randomized bit ``"0"``/``"1"`` (the report
  is ``-c_eps``/``+c_eps``); the Piecewise and Laplace mechanisms, the report on the
  [-1, 1] scale as the shortest decimal that reads back as the same float.
  ``options`` is ``(unit,)``, the unit of the answers ("hours"; may be empty).

Stored answers are always these canonical strings.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

import ldp_core
from ldp_core import (
    BinaryCounts,
    BinaryDesign,
    BinaryEstimate,
    DuchiMechanism,
    FrequencyOracle,
    NumericDesign,
    NumericEstimate,
    Plausibility,
    binary_plausibility,
)

__all__ = [
    "BINARY_DESIGNS",
    "CATEGORICAL_DESIGNS",
    "NUMERIC_DESIGNS",
    "MAX_UNIT_CHARS",
    "CLASS_EXERCISE",
    "JOIN_CODE_ALPHABET",
    "JOIN_CODE_LENGTH",
    "KINDS",
    "MAX_OPTION_CHARS",
    "MAX_OPTIONS",
    "MAX_QUESTION_CHARS",
    "MAX_TITLE_CHARS",
    "MIN_OPTIONS",
    "MODES",
    "STATES",
    "AddressLimit",
    "BadInput",
    "BadReport",
    "BudgetStatus",
    "CategoricalEstimate",
    "DashboardSnapshot",
    "ClassroomError",
    "Conflict",
    "ConfigError",
    "NotFound",
    "OverBudget",
    "Poll",
    "Question",
    "QuestionClosed",
    "QuestionEstimate",
    "Receipt",
    "Round",
    "StoreUnavailable",
    "TrajectoryPoint",
    "UnknownPoll",
    "UnknownQuestion",
    "answer_label",
    "canonical_design",
    "design_from_json",
    "display_order",
    "encode_answer",
    "format_value",
    "numeric_report",
    "normalize_join_code",
]

# -- errors -------------------------------------------------------------------------------


class ClassroomError(Exception):
    """Base of every domain error; ``str(err)`` can be shown to a user as it is."""


class ConfigError(ClassroomError):
    """A setting (data directory, database URL) is unusable."""


class StoreUnavailable(ClassroomError):
    """The database cannot be reached or is busy; the action did not happen."""


class Conflict(StoreUnavailable):
    """A write collided with a concurrent change (e.g. the poll was deleted)."""


class BadInput(ClassroomError):
    """Text or a typed value is outside its limits."""


class NotFound(ClassroomError):
    """Something addressed by id or code does not exist."""


class UnknownPoll(NotFound):
    """No poll with that id or join code."""


class UnknownQuestion(NotFound):
    """No question with that id (in that poll)."""


class QuestionClosed(ClassroomError):
    """A report arrived for a question that is not open."""


class BadReport(ClassroomError):
    """A report's answer, design parameters or ids are not acceptable."""


class OverBudget(ClassroomError):
    """Opening a round, or one more report, would pass the poll's privacy budget."""


class AddressLimit(ClassroomError):
    """The optional per-address limit of a round is reached (nothing was written)."""


# -- vocabulary and limits ----------------------------------------------------------------

#: The course's class exercise (CS208): roll a die 1-4, report the truth on 1-3 and the
#: opposite on 4, so a = 3/4, b = 1/4 and epsilon = ln 3. ``dict(CLASS_EXERCISE)`` for a copy.
CLASS_EXERCISE: Mapping[str, Any] = MappingProxyType(
    {"design": "die", "faces": 4, "truthful": 3})

KINDS = ("binary", "categorical", "numeric")
MODES = ("device", "physical")
STATES = ("draft", "open", "closed")
BINARY_DESIGNS = ("epsilon", "gamma", "die", "two_coin", "warner", "forced")
CATEGORICAL_DESIGNS = ("grr", "ue")
NUMERIC_DESIGNS = ldp_core.NUMERIC_NAMES

JOIN_CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
JOIN_CODE_LENGTH = 6

MAX_TITLE_CHARS = 100
MAX_QUESTION_CHARS = 300
MAX_OPTION_CHARS = 60
MIN_OPTIONS = 2
MAX_OPTIONS = 20
MAX_UNIT_CHARS = 24

_ALLOWED_CONTROL = {"\n", "\t"}


def _shorten(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clean_text(name: str, value: object, lo: int, hi: int, *, multiline: bool = False) -> str:
    """Strip ``value`` and check its length and characters; raise :class:`BadInput`."""
    if not isinstance(value, str):
        raise BadInput(f"{name} must be text, got {type(value).__name__}")
    text = value.strip()
    for ch in text:
        if unicodedata.category(ch) == "Cc" and not (multiline and ch in _ALLOWED_CONTROL):
            raise BadInput(f"{name} contains a control character (U+{ord(ch):04X}); "
                           "remove it and try again")
    if len(text) < lo:
        raise BadInput(f"{name} must not be empty" if lo == 1 else
                       f"{name} must have at least {lo} characters")
    if len(text) > hi:
        raise BadInput(f"{name} is {len(text)} characters long; the limit is {hi}")
    return text


def clean_options(options: object, kind: str) -> tuple[str, ...]:
    """Validate option labels: 2..20 distinct labels of 1..60 characters (binary: exactly 2)."""
    if isinstance(options, str) or not isinstance(options, (list, tuple)):
        raise BadInput("options must be a list of labels, e.g. ('No', 'Yes')")
    if kind == "numeric":
        if len(options) != 1:
            raise BadInput("a numeric question has one option: the unit of its answers "
                           "(e.g. ('hours',), or ('',) for none)")
        return (clean_text("unit", options[0], 0, MAX_UNIT_CHARS),)
    if kind == "binary" and len(options) != 2:
        raise BadInput(f"a binary question has exactly 2 options (answer 0, answer 1), "
                       f"got {len(options)}")
    if not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
        raise BadInput(f"a question has {MIN_OPTIONS} to {MAX_OPTIONS} options, "
                       f"got {len(options)}")
    labels = tuple(clean_text(f"option {i + 1}", o, 1, MAX_OPTION_CHARS)
                   for i, o in enumerate(options))
    seen: dict[str, int] = {}
    for i, label in enumerate(labels):
        key = label.casefold()
        if key in seen:
            raise BadInput(f"options {seen[key] + 1} and {i + 1} are both {label!r}; "
                           "labels must differ")
        seen[key] = i
    return labels


def normalize_join_code(code: object) -> str:
    """Normalise a typed join code: drop whitespace and dashes, upper-case, check the alphabet.

    >>> normalize_join_code(" abc-234 ")
    'ABC234'
    """
    if not isinstance(code, str):
        raise BadInput("the join code must be text")
    raw = code
    norm = re.sub(r"[\s\-–—_]+", "", raw).upper()
    if not norm:
        raise BadInput("enter the join code shown on the projector")
    bad = sorted({ch for ch in norm if ch not in JOIN_CODE_ALPHABET})
    if bad:
        shown = " ".join(repr(c) for c in bad[:5])
        raise BadInput(f"join code {_shorten(raw.strip())!r} contains {shown}, which never "
                       f"appear in join codes (they use 2-9 and A-Z without I, L, O)")
    if len(norm) != JOIN_CODE_LENGTH:
        raise BadInput(f"join code {_shorten(raw.strip())!r} has {len(norm)} characters; "
                       f"join codes have {JOIN_CODE_LENGTH}")
    return norm


def display_order(text: str, options: tuple[str, ...], kind: str = "binary") -> tuple[int, ...]:
    """The order in which to show the answers: the order the question names them in.

    Each option's position is where its label first appears in ``text``
    (case-insensitive, as a whole word). Labels the text does not name follow,
    "yes" (value 1) before "no" (value 0) for binary questions, in option order
    otherwise. The stored encoding is untouched: this is the buttons' order only.

    >>> display_order("Vanilla (1) or chocolate (0)?", ("Chocolate", "Vanilla"))
    (1, 0)
    >>> display_order("Did you sleep well?", ("No", "Yes"))
    (1, 0)
    >>> display_order("Red, green or blue?", ("Blue", "Green", "Red"), "categorical")
    (2, 1, 0)
    """
    folded = text.casefold()
    unnamed = list(range(len(options)))
    if kind == "binary":
        unnamed.reverse()

    def place(i: int) -> tuple[int, int]:
        found = re.search(rf"(?<!\w){re.escape(options[i].casefold())}(?!\w)", folded)
        return (found.start(), 0) if found else (len(folded) + 1, unnamed.index(i))

    return tuple(sorted(range(len(options)), key=place))


# -- designs ------------------------------------------------------------------------------

Design = BinaryDesign | FrequencyOracle | NumericDesign


def _design(kind: str, params: object) -> Design:
    """Build the ldp_core object; raise ``ValueError`` with ldp_core's message."""
    if not isinstance(params, dict):
        raise ValueError(f"design parameters must be a dict, got {type(params).__name__}")
    if kind == "binary":
        return ldp_core.binary_design_from_params(params)
    if kind == "categorical":
        if params.get("design") not in CATEGORICAL_DESIGNS:
            raise ValueError(f"categorical questions use a design in {list(CATEGORICAL_DESIGNS)}, "
                             f"got {params.get('design')!r}")
        return ldp_core.categorical_oracle_from_params(params)
    if kind == "numeric":
        if params.get("design") not in NUMERIC_DESIGNS:
            raise ValueError(f"numeric questions use a mechanism in {list(NUMERIC_DESIGNS)}, "
                             f"got {params.get('design')!r}")
        return ldp_core.numeric_design_from_params(params)
    raise ValueError(f"kind must be one of {list(KINDS)}, got {kind!r}")


def kind_of_params(params: dict[str, Any]) -> str:
    """``"categorical"`` for a frequency oracle's params, ``"numeric"`` for a numeric
    mechanism's, else ``"binary"``."""
    name = params.get("design") if isinstance(params, dict) else None
    if name in (*CATEGORICAL_DESIGNS, "olh"):
        return "categorical"
    return "numeric" if name in NUMERIC_DESIGNS else "binary"


def canonical_design(kind: str, params: object) -> tuple[Design, str]:
    """Validate ``params`` with ldp_core and return ``(design, canonical JSON)``.

    The canonical JSON is ``design.params()`` with sorted keys: two parameter
    dicts describe the same design exactly when their canonical JSON is equal.
    Raises ``ValueError``.
    """
    design = _design(kind, params)
    text = json.dumps(design.params(), sort_keys=True, separators=(",", ":"), allow_nan=False)
    return design, text


def design_from_json(kind: str, text: str) -> Design:
    return _design(kind, json.loads(text))


def design_epsilon(design: Design) -> float:
    return float(design.epsilon)


# -- answers ------------------------------------------------------------------------------


def _encode_numeric(design: NumericDesign, answer: object) -> str:
    mech = design.mechanism
    if isinstance(mech, DuchiMechanism):
        if not isinstance(answer, bool) and answer in (0, 1, "0", "1"):
            return str(int(answer))  # one of 0, 1, "0", "1"
        raise BadReport(f"answer must be the randomized bit, 0 or 1, got "
                        f"{_shorten(repr(answer))}")
    y = math.nan
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        y = float(answer)
    elif isinstance(answer, str) and 0 < len(answer) <= 32:  # a CSV cell
        try:
            y = float(answer)
        except ValueError:
            pass
    if not math.isfinite(y):
        raise BadReport(f"answer must be the randomized report, a finite number, got "
                        f"{_shorten(repr(answer))}")
    if not mech.plausible(y):
        lo, hi = mech.output_bounds
        grid = mech.device_grid()
        if not math.isfinite(lo) and grid is not None:
            why = (f"a phone clamps its reports to [{grid[0]:.6g}, {grid[1]:.6g}]; whatever the "
                   f"student's value, one further out has probability below "
                   f"{ldp_core.REPORT_TAIL:g}")
        else:
            why = f"its reports lie in [{lo:.6g}, {hi:.6g}]"
        raise BadReport(f"answer {_shorten(repr(answer))} is not a report this mechanism can "
                        f"send ({why})")
    return repr(y + 0.0)  # + 0.0: -0.0 is stored as 0.0


def numeric_report(design: NumericDesign, stored: str) -> float:
    """A stored numeric answer as the report on the [-1, 1] scale."""
    if isinstance(design.mechanism, DuchiMechanism):
        return float(design.mechanism.report_of_bit(int(stored)))
    return float(stored)


def encode_answer(kind: str, design: Design, options: tuple[str, ...], answer: object) -> str:
    """The canonical stored string of ``answer``, or :class:`BadReport` naming what is allowed."""
    if kind == "numeric":
        if not isinstance(design, NumericDesign):
            raise BadReport("a numeric question's report needs a numeric mechanism")
        return _encode_numeric(design, answer)
    k = len(options)
    is_ue = kind == "categorical" and getattr(design, "kind", "") == "ue"
    if is_ue:
        if isinstance(answer, (list, tuple)):
            if all(isinstance(b, int) and not isinstance(b, bool) and b in (0, 1)
                   for b in answer):
                answer = "".join(str(b) for b in answer)
        if isinstance(answer, str) and len(answer) == k and set(answer) <= {"0", "1"}:
            return answer
        raise BadReport(f"answer must be {k} bits, one per option (e.g. {'0' * (k - 1)}1), "
                        f"got {_shorten(repr(answer))}")
    idx: int | None = None
    if isinstance(answer, bool):
        idx = int(answer) if kind == "binary" else None
    elif isinstance(answer, int):
        idx = answer
    elif isinstance(answer, str) and 0 < len(answer) <= 4 and answer.isdigit() \
            and answer == str(int(answer)):
        idx = int(answer)  # canonical decimal only: "1", not "01" or " 1"
    if idx is None or not 0 <= idx < k:
        allowed = " or ".join(f"{i} ({label})" for i, label in enumerate(options)) if k <= 4 \
            else f"0..{k - 1}"
        raise BadReport(f"answer must be {allowed}, got {_shorten(repr(answer))}")
    return str(idx)


def ue_label(options: tuple[str, ...], bits: str) -> str:
    chosen = [options[i] for i, b in enumerate(bits) if b == "1"]
    return ", ".join(chosen) if chosen else "(none)"


def format_value(value: float, unit: str = "") -> str:
    """A numeric value as shown to people: 4 significant digits, with its unit.

    >>> format_value(7.256, "hours"), format_value(-1234.6), format_value(0.5, "%")
    ('7.256 hours', '−1235', '0.5 %')
    """
    text = f"{value:.4g}".replace("-", "−")
    if "e" in text:
        text = f"{value:,.0f}".replace("-", "−")
    return f"{text} {unit}".strip()


def answer_label(design: Design, options: tuple[str, ...], stored: str) -> str:
    """Human label of a stored answer under ``design``: the option, for UE the options
    whose bit is 1, for a numeric question the report in the question's units."""
    if isinstance(design, NumericDesign):
        value = design.value_of(numeric_report(design, stored))
        return format_value(value, options[0] if options else "")
    if getattr(design, "kind", "") == "ue":
        return ue_label(options, stored)
    return options[int(stored)]


# -- time ---------------------------------------------------------------------------------


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """Database times come back naive from SQLite; they are UTC."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else \
        value.astimezone(UTC)


# -- entities -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Poll:
    id: int
    join_code: str
    title: str
    created_at: datetime
    rehearsal: bool = False
    #: The most ε one student may spend in this poll (sequential composition), or None.
    epsilon_budget: float | None = None


@dataclass(frozen=True)
class Question:
    """A question of a poll. ``design_json`` is the current round's design (canonical JSON);
    ``updated_at`` is the time of the last change of state or reveal."""

    id: int
    poll_id: int
    position: int
    text: str
    kind: str
    options: tuple[str, ...]
    design_json: str
    mode: str
    state: str
    revealed: bool
    created_at: datetime
    updated_at: datetime
    round_number: int

    @property
    def design_params(self) -> dict[str, Any]:
        """The current design's parameters (a fresh dict each call)."""
        return json.loads(self.design_json)

    @property
    def design(self) -> Design:
        return design_from_json(self.kind, self.design_json)

    @property
    def design_name(self) -> str:
        return str(self.design_params["design"])

    @property
    def epsilon(self) -> float:
        return design_epsilon(self.design)

    @property
    def is_open(self) -> bool:
        return self.state == "open"

    def label(self, stored_answer: str) -> str:
        """The label of a stored answer string under the current design."""
        return answer_label(self.design, self.options, stored_answer)

    @property
    def unit(self) -> str:
        """A numeric question's unit ("" for other kinds, or none)."""
        return self.options[0] if self.kind == "numeric" and self.options else ""


@dataclass(frozen=True)
class Round:
    """One asking of a question. Its secret salt lives only in the store."""

    id: int
    question_id: int
    number: int
    design_json: str
    opened_at: datetime
    kind: str = "binary"

    @property
    def design_params(self) -> dict[str, Any]:
        return json.loads(self.design_json)

    @property
    def design(self) -> Design:
        return design_from_json(self.kind, self.design_json)

    @property
    def epsilon(self) -> float:
        return design_epsilon(self.design)


@dataclass(frozen=True)
class BudgetStatus:
    """A poll's privacy budget against what its questions can cost one student.

    ``committed`` is the ε a student spends who answers every round that has been
    answered or is open now (sequential composition): the most any device can have
    spent, counted without looking at which device sent what.
    """

    budget: float | None
    committed: float
    #: ``(question id, round number, ε)`` of each round counted in ``committed``.
    rounds: tuple[tuple[int, int, float], ...]

    @property
    def left(self) -> float | None:
        return None if self.budget is None else max(0.0, self.budget - self.committed)

    def allows(self, more: float) -> bool:
        """Whether ``more`` on top of ``committed`` stays within the budget (a relative
        1e-9 of slack absorbs the rounding of sums such as 3 × ln 3 against 3 ln 3)."""
        return self.budget is None or self.committed + more <= self.budget * (1 + 1e-9)


@dataclass(frozen=True)
class TrajectoryPoint:
    """The estimate after the first ``n`` reports of a round, in arrival order."""

    n: int
    mu_hat: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class DashboardSnapshot:
    """One refresh of the dashboard for one question, read in one transaction."""

    question: Question
    rounds: tuple[Round, ...]
    estimate: QuestionEstimate
    #: The current round's estimate as reports arrived (yes/no questions; else empty).
    trajectory: tuple[TrajectoryPoint, ...]


@dataclass(frozen=True)
class Receipt:
    """What a student sees after voting: their RANDOMIZED answer, never a true one."""

    question_id: int
    question_text: str
    round_number: int
    answer: str
    answer_label: str
    created_at: datetime
    epsilon: float
    already_answered: bool
    simulated: bool = False


# -- estimates ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CategoricalEstimate:
    """Histogram estimate for a categorical round.

    ``raw`` is the unbiased estimate of each option's count (may be negative);
    ``clipped`` and ``norm_sub`` are the named post-processing steps of
    ``ldp_core.postprocess``; ``sd`` is the per-option SD of ``raw`` from
    ``count_variance`` (its value at f = 0, summed over the designs in use).
    Every estimate field is None when ``n == 0``.
    """

    n: int
    support_counts: tuple[int, ...]
    raw: tuple[float, ...] | None
    clipped: tuple[float, ...] | None
    norm_sub: tuple[float, ...] | None
    sd: tuple[float, ...] | None
    epsilon: float
    #: Unary encoding: do the 1-bits per report fit the design? (None for GRR.)
    plausibility: Plausibility | None = None

    @property
    def empty(self) -> bool:
        return self.n == 0

    def shares(self, which: str = "norm_sub") -> tuple[float, ...] | None:
        """``raw`` / ``clipped`` / ``norm_sub`` counts divided by n (None when n == 0)."""
        counts = getattr(self, which)
        if counts is None or not self.n:
            return None
        return tuple(c / self.n for c in counts)


@dataclass(frozen=True)
class QuestionEstimate:
    """Everything a dashboard shows for one round of a question."""

    question_id: int | None
    kind: str
    options: tuple[str, ...]
    round_number: int
    rounds: tuple[int, ...]
    n: int
    n_simulated: int
    counts: tuple[int, ...]
    epsilon: float
    binary: BinaryEstimate | None = None
    binary_counts: BinaryCounts | None = None
    categorical: CategoricalEstimate | None = None
    numeric: NumericEstimate | None = None
    #: A numeric round's reports in the question's units: sorted ``(value, count)`` pairs.
    numeric_reports: tuple[tuple[float, int], ...] = ()
    #: Whether a numeric round's reports fit its design (``plausibility`` gives it).
    numeric_check: Plausibility | None = None
    history: tuple[tuple[int, Any], ...] = field(default=())
    #: Distinct network addresses among the round's real reports (each stored only as a
    #: per-round HMAC); None when none of them carried one (imported or simulated).
    addresses: int | None = None

    @property
    def empty(self) -> bool:
        return self.n == 0

    @property
    def plausibility(self) -> Plausibility | None:
        """Whether the reports fit the design for some class at all (ldp_core's check
        against ballot stuffing); None when there is nothing to check."""
        if self.binary_counts is not None and self.n:
            return binary_plausibility(self.binary_counts)
        if self.numeric is not None and self.n:
            return self.numeric_check
        return None if self.categorical is None else self.categorical.plausibility


def finite_or_inf(values: list[float]) -> float:
    """Sequential composition that tolerates designs without a finite epsilon."""
    if any(math.isinf(v) for v in values):
        return math.inf
    return ldp_core.sequential_composition(values)
