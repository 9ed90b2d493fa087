"""A question's design: its parameters checked by ldp_core, stored as canonical JSON, and
built back into the ldp_core object."""

from __future__ import annotations

import json
from typing import Any

import ldp_core
from ldp_core import (
    BinaryDesign,
    FrequencyOracle,
    NumericDesign,
)

from .errors import BadInput
from .vocabulary import CATEGORICAL_DESIGNS, KINDS, NUMERIC_DESIGNS

__all__ = [
    "Design",
    "Designed",
    "canonical_design",
    "design_epsilon",
    "design_from_json",
    "kind_of_params",
    "question_design",
]


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


def question_design(kind: str, params: object, options: tuple[str, ...]
                    ) -> tuple[Design, str]:
    """A question's design, checked as every question's is: valid for ldp_core, carrying
    information about the answer, and over as many options as the question has.
    Returns ``(design, canonical JSON)``; raises :class:`BadInput`."""
    try:
        design, text = canonical_design(kind, params)
    except ValueError as exc:
        raise BadInput(f"design parameters: {exc}") from exc
    if isinstance(design, BinaryDesign) and not design.informative:
        raise BadInput("this design's report carries no information about the answer "
                       "(a == b); no estimate would be possible — choose another design")
    if isinstance(design, FrequencyOracle) and design.d != len(options):
        raise BadInput(f"the design is for d = {design.d} options but the question has "
                       f"{len(options)}")
    return design, text


def design_from_json(kind: str, text: str) -> Design:
    return _design(kind, json.loads(text))


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
