"""Question kinds: one strategy per kind, registered here.

Each kind of question (yes/no, multiple choice, numeric) is one module holding one
:class:`QuestionKind` (its interface and what each method is for are in :mod:`.base`):
options, designs, the stored report (encode, validate, label), rehearsal classes, the
estimate of a round, its CSV and what the phone gets. Everything else asks the registry:

>>> kind("numeric").has_unit, kind("categorical").label
(True, 'categorical')

To add a kind: write its module (a subclass of :class:`QuestionKind`) and add its instance
to :data:`REGISTRY` below. Nothing else names kinds: a stored design records its kind
(:mod:`classroom.domain.design`), the database stores any kind name (its CHECK is not a
list of kinds), and the pages ask the kind for what they draw.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from classroom.basics.errors import BadInput
from classroom.basics.vocabulary import MODES

from .base import Design, DesignOf, KindResult, QuestionKind, RoundEstimate, RoundItems
from .binary import BinaryKind, BinaryResult
from .categorical import CategoricalEstimate, CategoricalKind, ue_label
from .multiselect import MultiSelectKind
from .numeric import (
    NumericKind,
    NumericResult,
    format_value,
    numeric_class,
    numeric_report,
    value_decimals,
)

__all__ = [
    "BINARY_DESIGNS",
    "BinaryResult",
    "CATEGORICAL_DESIGNS",
    "KINDS",
    "NUMERIC_DESIGNS",
    "REGISTRY",
    "CategoricalEstimate",
    "Design",
    "DesignOf",
    "KindResult",
    "NumericResult",
    "QuestionKind",
    "RoundEstimate",
    "RoundItems",
    "check_kind_and_mode",
    "clean_options",
    "format_value",
    "kind",
    "numeric_class",
    "numeric_report",
    "ue_label",
    "value_decimals",
]

#: Every kind of question by its stored name, in the order the app offers them.
REGISTRY: Mapping[str, QuestionKind] = MappingProxyType(
    {k.name: k for k in (BinaryKind(), CategoricalKind(), NumericKind(), MultiSelectKind())})

#: The stored names of the kinds.
KINDS: tuple[str, ...] = tuple(REGISTRY)

#: Each kind's design names (``params["design"]``), as its module lists them.
BINARY_DESIGNS = REGISTRY["binary"].designs
CATEGORICAL_DESIGNS = REGISTRY["categorical"].designs
NUMERIC_DESIGNS = REGISTRY["numeric"].designs


def kind(name: object) -> QuestionKind:
    """The kind called ``name``; ``ValueError`` for an unknown one."""
    found = REGISTRY.get(name) if isinstance(name, str) else None
    if found is None:
        raise ValueError(f"kind must be one of {list(KINDS)}, got {name!r}")
    return found


def clean_options(options: object, kind_name: str) -> tuple[str, ...]:
    """Validate a question's options for its kind; raise :class:`BadInput`."""
    if isinstance(options, str) or not isinstance(options, (list, tuple)):
        raise BadInput("options must be a list of labels, e.g. ('No', 'Yes')")
    return kind(kind_name).clean_options(options)


def check_kind_and_mode(kind_name: object, mode: object) -> None:
    """Refuse (:class:`BadInput`) an unknown kind or mode, and a kind a student cannot
    randomize by hand in physical mode (a number has no by-hand randomizer)."""
    found = REGISTRY.get(kind_name) if isinstance(kind_name, str) else None
    if found is None:
        raise BadInput(f"kind must be one of {', '.join(KINDS)}, got {str(kind_name)[:24]!r}")
    if mode not in MODES:
        raise BadInput(f"mode must be one of {', '.join(MODES)}, got {str(mode)[:24]!r}")
    if mode == "physical" and not found.physical:
        raise BadInput(f"a {found.label} question is randomized on the phone: physical mode "
                       "is for yes/no and multiple-choice questions")
