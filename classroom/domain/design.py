"""A question's design: its parameters checked by ldp_core (through the question's kind,
:mod:`classroom.kinds`), stored as canonical JSON, and built back into the ldp_core object."""

from __future__ import annotations

import json

from classroom.kinds import Design, kind, kind_of_params
from classroom.kinds.base import epsilon_problem

from .errors import BadInput

__all__ = [
    "Design",
    "Designed",
    "canonical_design",
    "check_stored_design",
    "design_problem",
    "design_epsilon",
    "design_from_json",
    "kind_of_params",
    "question_design",
]


def _design(kind_name: str, params: object) -> Design:
    """Build the ldp_core object; raise ``ValueError`` with ldp_core's message."""
    if not isinstance(params, dict):
        raise ValueError(f"design parameters must be a dict, got {type(params).__name__}")
    return kind(kind_name).build(params)


def canonical_design(kind_name: str, params: object) -> tuple[Design, str]:
    """Validate ``params`` with ldp_core and return ``(design, canonical JSON)``.

    The canonical JSON is ``design.params()`` with sorted keys: two parameter
    dicts describe the same design exactly when their canonical JSON is equal.
    Raises ``ValueError``.
    """
    design = _design(kind_name, params)
    text = json.dumps(design.params(), sort_keys=True, separators=(",", ":"), allow_nan=False)
    return design, text


def question_design(kind_name: str, params: object, options: tuple[str, ...]
                    ) -> tuple[Design, str]:
    """A question's design, checked as every question's is: valid for ldp_core, carrying
    information about the answer, and over as many options as the question has (the
    kind's :meth:`~classroom.kinds.QuestionKind.check`).
    Returns ``(design, canonical JSON)``; raises :class:`BadInput`."""
    eps = params.get("epsilon") if isinstance(params, dict) else None
    if isinstance(eps, (int, float)) and not isinstance(eps, bool) and abs(eps) < 1e300 \
            and (problem := epsilon_problem(float(eps), named=True)) is not None:
        raise BadInput(f"design parameters: {problem}")  # the question's range, not ldp_core's
    try:
        design, text = canonical_design(kind_name, params)
    except ValueError as exc:
        raise BadInput(f"design parameters: {exc}") from exc
    kind(kind_name).check(design, options)
    problem = kind(kind_name).out_of_limits(design)
    if problem is not None:
        raise BadInput(f"design parameters: {problem}")
    return design, text


def design_problem(kind_name: str, text: str) -> str | None:
    """Why a stored design JSON cannot be a question's (ldp_core refuses it, or it is
    outside the limits every question keeps: :meth:`~classroom.kinds.QuestionKind.out_of_limits`),
    as ``design parameters: …``; None when it can."""
    try:
        problem = kind(kind_name).out_of_limits(design_from_json(kind_name, text))
    except ValueError as exc:  # json.JSONDecodeError is one
        problem = str(exc)
    return None if problem is None else f"design parameters: {problem}"


def check_stored_design(kind_name: str, text: str) -> None:
    """Refuse (:class:`BadInput`) a design JSON about to be stored that no question may
    have (:func:`design_problem`)."""
    problem = design_problem(kind_name, text)
    if problem is not None:
        raise BadInput(problem)


def design_from_json(kind_name: str, text: str) -> Design:
    return _design(kind_name, json.loads(text))


def design_epsilon(design: Design) -> float:
    return float(design.epsilon)


class Designed:
    """What a question, a round and a plan's question share: from their ``kind`` and
    canonical ``design_json``, the ldp_core design and its ε (each built when asked)."""

    kind: str
    design_json: str

    @property
    def design(self) -> Design:
        return design_from_json(self.kind, self.design_json)

    @property
    def epsilon(self) -> float:
        return design_epsilon(self.design)
