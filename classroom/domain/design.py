"""A question's design: its parameters checked by ldp_core (through the question's kind,
:mod:`classroom.kinds`), stored as canonical JSON that records the kind, and built back
into the ldp_core object from that JSON alone.

A stored design is ``{"kind": ..., **design.params()}`` with sorted keys: the kind is
data, so a design reads back as the kind it was made for (a multiple-choice GRR design
and a rating scale's GRR design differ by their ``kind``), and nothing guesses a kind
from parameters. Schema version 6 wrote the kind into the designs stored before it.
"""

from __future__ import annotations

import json
from typing import Any

from classroom.kinds import Design, kind
from classroom.kinds.base import epsilon_problem

from .errors import BadInput

__all__ = [
    "KIND_KEY",
    "Design",
    "Designed",
    "canonical_design",
    "check_stored_design",
    "design_epsilon",
    "design_from_json",
    "design_params_of",
    "design_problem",
    "kind_of_json",
    "question_design",
]

#: The key of a stored design that names its kind.
KIND_KEY = "kind"


def _params(kind_name: str, params: object) -> dict[str, Any]:
    """The design parameters without their kind; ``ValueError`` if they name another."""
    if not isinstance(params, dict):
        raise ValueError(f"design parameters must be a dict, got {type(params).__name__}")
    named = params.get(KIND_KEY, kind_name)
    if named != kind_name:
        raise ValueError(f"the design is for a {str(named)[:24]!r} question, not {kind_name!r}")
    return {k: v for k, v in params.items() if k != KIND_KEY}


def canonical_design(kind_name: str, params: object) -> tuple[Design, str]:
    """Validate ``params`` with ldp_core and return ``(design, canonical JSON)``.

    The canonical JSON is ``design.params()`` and the kind (``"kind"``) with sorted keys:
    two parameter dicts describe the same design of the same kind exactly when their
    canonical JSON is equal. ``params`` may name the kind too (as a stored design does).
    Raises ``ValueError``.

    >>> canonical_design("binary", {"design": "warner", "p": 0.75})[1]
    '{"design":"warner","kind":"binary","p":0.75}'
    """
    design = kind(kind_name).build(_params(kind_name, params))
    text = json.dumps({**design.params(), KIND_KEY: kind_name}, sort_keys=True,
                      separators=(",", ":"), allow_nan=False)
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


def kind_of_json(text: str) -> str:
    """The kind a stored design records; ``ValueError`` if it records none."""
    params = json.loads(text)
    name = params.get(KIND_KEY) if isinstance(params, dict) else None
    if not isinstance(name, str):
        raise ValueError(f"the design records no kind: {text[:80]}")
    return name


def design_from_json(text: str) -> Design:
    """The ldp_core design of a stored design (canonical JSON), built by its own kind."""
    params = json.loads(text)
    name = kind_of_json(text)
    return kind(name).build(_params(name, params))


def design_problem(text: str) -> str | None:
    """Why a stored design JSON cannot be a question's (ldp_core refuses it, or it is
    outside the limits every question keeps: :meth:`~classroom.kinds.QuestionKind.out_of_limits`),
    as ``design parameters: …``; None when it can."""
    try:
        problem = kind(kind_of_json(text)).out_of_limits(design_from_json(text))
    except ValueError as exc:  # json.JSONDecodeError is one
        problem = str(exc)
    return None if problem is None else f"design parameters: {problem}"


def check_stored_design(text: str) -> None:
    """Refuse (:class:`BadInput`) a design JSON about to be stored that no question may
    have (:func:`design_problem`)."""
    problem = design_problem(text)
    if problem is not None:
        raise BadInput(problem)


def design_params_of(text: str) -> dict[str, Any]:
    """A stored design's ldp_core parameters (without its kind), a fresh dict."""
    params = json.loads(text)
    params.pop(KIND_KEY, None)
    return dict(params)


def design_epsilon(design: Design) -> float:
    return float(design.epsilon)


class Designed:
    """What a question, a round and a plan's question share: from their canonical
    ``design_json`` (which records the kind), the ldp_core design and its ε (each built
    when asked)."""

    kind: str
    design_json: str

    @property
    def design(self) -> Design:
        return design_from_json(self.design_json)

    @property
    def epsilon(self) -> float:
        return design_epsilon(self.design)
