"""Domain objects and errors of the classroom: polls, questions, rounds, reports.

Everything here is a frozen dataclass or a pure function; nothing touches the
database (that is :mod:`classroom.store`) and nothing holds mutable state. One
module per concern, every public name re-exported here (``from classroom.domain
import Question`` is the way to import them):

* :mod:`classroom.basics.errors`: the error tree and :func:`sentence`;
* :mod:`classroom.basics.vocabulary`: modes, states, design names, join codes, text limits
  and the checks of what people type;
* :mod:`.design`: a question's design, checked, canonical, rebuilt;
* :mod:`classroom.kinds` (beside this package): one module per kind of question, with
  everything that differs between kinds; ``KINDS``, ``clean_options`` and
  ``check_kind_and_mode`` are re-exported here;
* :mod:`.answers`: a report's canonical stored string and its label;
* :mod:`.entities`: polls, questions, rounds, receipts, a poll's budget, UTC times;
* :mod:`.results`: what the dashboard reads (estimates, trajectories, snapshots).

Answer encoding (``Question.options`` index = encoded answer):

* binary: ``options[0]`` is answer 0 ("no"), ``options[1]`` is answer 1
  ("yes"); the class exercise is ``("Chocolate", "Vanilla")``;
* categorical GRR: the option index ``"0"..str(k-1)``;
* categorical UE: ``k`` characters ``"0"``/``"1"``, character i the perturbed
  bit of option i;
* numeric: Duchi et al.'s mechanism, the randomized bit ``"0"``/``"1"`` (the report
  is ``-c_eps``/``+c_eps``); the Piecewise, Hybrid and Laplace mechanisms, the report on
  the [-1, 1] scale as the shortest decimal that reads back as the same float (the Hybrid
  Mechanism's Duchi part sends its value ``±c_eps``).
  ``options`` is ``(unit,)``, the unit of the answers ("hours"; may be empty).

Stored answers are always these canonical strings.
"""

from classroom.kinds import (
    BINARY_DESIGNS,
    CATEGORICAL_DESIGNS,
    KINDS,
    NUMERIC_DESIGNS,
    check_kind_and_mode,
    clean_options,
)

from .answers import (
    answer_label,
    encode_answer,
    format_value,
    numeric_report,
    ue_label,
)
from .design import (
    Design,
    Designed,
    canonical_design,
    check_stored_design,
    design_epsilon,
    design_from_json,
    design_params_of,
    design_problem,
    kind_of_json,
    question_design,
)
from .entities import (
    BudgetStatus,
    Poll,
    Question,
    Receipt,
    Round,
    as_utc,
    current_of,
    state_at,
    utcnow,
)
from .errors import (
    AddressLimit,
    BadInput,
    BadReport,
    ClassroomError,
    ConfigError,
    Conflict,
    DiskFull,
    NotFound,
    OverBudget,
    QuestionClosed,
    StoreUnavailable,
    UnknownPlan,
    UnknownPoll,
    UnknownQuestion,
    sentence,
)
from .results import (
    SHUFFLE_DELTA,
    CategoricalEstimate,
    DashboardSnapshot,
    QuestionEstimate,
    TrajectoryPoint,
    finite_or_inf,
)
from .vocabulary import (
    CLASS_EXERCISE,
    EPSILON_RANGE,
    JOIN_CODE_ALPHABET,
    JOIN_CODE_LENGTH,
    MAX_COUNTDOWN_S,
    MAX_NUMERIC_BOUND,
    MAX_OPTION_CHARS,
    MAX_OPTIONS,
    MAX_QUESTION_CHARS,
    MAX_ROW_ID,
    MAX_TITLE_CHARS,
    MAX_UNIT_CHARS,
    MIN_COUNTDOWN_S,
    MIN_NUMERIC_SPAN,
    MIN_OPTIONS,
    MODES,
    STATES,
    clean_countdown,
    clean_text,
    display_order,
    normalize_join_code,
)

__all__ = [
    "AddressLimit",
    "BINARY_DESIGNS",
    "BadInput",
    "BadReport",
    "BudgetStatus",
    "CATEGORICAL_DESIGNS",
    "CLASS_EXERCISE",
    "EPSILON_RANGE",
    "CategoricalEstimate",
    "ClassroomError",
    "ConfigError",
    "Conflict",
    "DashboardSnapshot",
    "Design",
    "Designed",
    "DiskFull",
    "JOIN_CODE_ALPHABET",
    "JOIN_CODE_LENGTH",
    "KINDS",
    "MAX_COUNTDOWN_S",
    "MAX_NUMERIC_BOUND",
    "MAX_OPTIONS",
    "MAX_OPTION_CHARS",
    "MAX_QUESTION_CHARS",
    "MAX_ROW_ID",
    "MAX_TITLE_CHARS",
    "MAX_UNIT_CHARS",
    "MIN_COUNTDOWN_S",
    "MIN_NUMERIC_SPAN",
    "MIN_OPTIONS",
    "MODES",
    "NUMERIC_DESIGNS",
    "NotFound",
    "OverBudget",
    "Poll",
    "Question",
    "QuestionClosed",
    "QuestionEstimate",
    "Receipt",
    "Round",
    "SHUFFLE_DELTA",
    "STATES",
    "StoreUnavailable",
    "TrajectoryPoint",
    "UnknownPoll",
    "UnknownPlan",
    "UnknownQuestion",
    "answer_label",
    "as_utc",
    "canonical_design",
    "check_stored_design",
    "design_problem",
    "check_kind_and_mode",
    "clean_countdown",
    "clean_options",
    "clean_text",
    "current_of",
    "design_epsilon",
    "design_from_json",
    "design_params_of",
    "display_order",
    "encode_answer",
    "finite_or_inf",
    "format_value",
    "kind_of_json",
    "normalize_join_code",
    "numeric_report",
    "question_design",
    "sentence",
    "state_at",
    "ue_label",
    "utcnow",
]
