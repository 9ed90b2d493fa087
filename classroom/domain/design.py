"""A question's design: its parameters checked by ldp_core (through the question's kind,
:mod:`classroom.kinds`), stored as canonical JSON, and built back into the ldp_core object."""

from __future__ import annotations

import json

from classroom.kinds import Design, kind, kind_of_params

from .errors import BadInput

__all__ = [
    "Design",
    "Designed",
    "canonical_design",
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
    try:
        design, text = canonical_design(kind_name, params)
    except ValueError as exc:
        raise BadInput(f"design parameters: {exc}") from exc
    kind(kind_name).check(design, options)
    return design, text


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
