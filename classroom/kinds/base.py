"""What every question kind provides: :class:`QuestionKind`, the strategy one module per
kind implements (:mod:`.binary`, :mod:`.categorical`, :mod:`.numeric`), registered in
:mod:`classroom.kinds`.

A kind owns everything that differs between yes/no, multiple-choice and numeric
questions: its options, its designs (built and checked with ldp_core), the canonical
stored string of a report (encode, validate, label), the simulated and stuffed classes of
a rehearsal, the estimate of one round, the CSV columns it fills, and what the phone gets
(the randomizer's scheme, the input, the privacy sentence, the revealed results). The rest
of the house asks the kind instead of testing ``question.kind``.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np

import ldp_core
from classroom.basics.errors import BadInput
from classroom.basics.vocabulary import (
    EPSILON_RANGE,
    MAX_OPTION_CHARS,
    MAX_OPTIONS,
    MIN_OPTIONS,
    clean_text,
    display_order,
)

__all__ = ["Design", "DesignOf", "KindResult", "QuestionKind", "RoundEstimate", "RoundItems",
           "epsilon_problem", "probability_problem"]

class Design(Protocol):
    """The ldp_core object behind a question's design, whatever its kind: what every
    design says alike (its exact ε and its parameters, read back by the kind's builder);
    the rest is the kind's own, which its module narrows to its ldp_core classes."""

    @property
    def epsilon(self) -> float: ...

    def params(self) -> dict[str, Any]: ...

#: A round's grouped reports: ``(design JSON, stored answer, count)``.
RoundItems = list[tuple[str, str, int]]

#: The design of a design JSON (cached by the caller).
DesignOf = Callable[[str], Any]


class KindResult(Protocol):
    """What every kind's result of a round says alike (the rest is the kind's own, read by
    its dashboard view and its phone results): whether the reports fit the design for some
    class at all (ldp_core's check against ballot stuffing), None when there is nothing to
    check."""

    @property
    def plausibility(self) -> ldp_core.Plausibility | None: ...


@dataclass(frozen=True)
class RoundEstimate:
    """One round's estimate as a kind computes it: ``summary`` goes into the question's
    history, ``result`` is the kind's own result object (the
    :class:`~classroom.domain.QuestionEstimate`'s ``result``), ``fields`` the fields every
    kind fills alike (``n``, ``epsilon``, ``counts``)."""

    summary: object
    result: KindResult
    fields: dict[str, Any] = field(default_factory=dict)


class QuestionKind(ABC):
    """One kind of question. Subclasses are stateless; one instance of each is registered."""

    #: The stored name (``questions.kind``), e.g. ``"binary"``.
    name: ClassVar[str]
    #: What people call it, e.g. "yes/no".
    label: ClassVar[str]
    #: The design names (``params["design"]``) this kind accepts.
    designs: ClassVar[tuple[str, ...]]
    #: Whether a student can randomize it by hand (physical mode).
    physical: ClassVar[bool] = True
    #: Whether ``options`` holds the unit of the answers (one entry) instead of labels.
    has_unit: ClassVar[bool] = False
    #: Whether the true answers are numbers in a range (else option numbers).
    continuous: ClassVar[bool] = False
    #: Whether the dashboard draws the estimate as reports arrived (its trajectory).
    trajectory: ClassVar[bool] = False
    #: The option a stuffer pushes when the instructor names none.
    default_target: ClassVar[int] = 0
    #: A question of this kind, for the contract every kind meets (tests/test_kinds.py):
    #: its options, its design's parameters and a class's true shares (or mean).
    example_options: ClassVar[tuple[str, ...]]
    example_params: ClassVar[Mapping[str, Any]]
    example_share: ClassVar[object]
    #: Whether options the question's text does not name are shown last first ("yes",
    #: value 1, before "no").
    yes_first: ClassVar[bool] = False

    # -- the question ---------------------------------------------------------------------
    def clean_options(self, options: Sequence[object]) -> tuple[str, ...]:
        """2..20 distinct labels of 1..60 characters; raise :class:`BadInput`."""
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

    def unit(self, options: tuple[str, ...]) -> str:
        """The unit of the answers ("" for a kind without one)."""
        return ""

    def display_order(self, text: str, options: tuple[str, ...]) -> tuple[int, ...]:
        """The order of the answer buttons (:func:`classroom.domain.display_order`)."""
        return display_order(text, options, yes_first=self.yes_first)

    # -- the design -----------------------------------------------------------------------
    def build(self, params: dict[str, Any]) -> Design:
        """The ldp_core design of ``params``; ``ValueError`` with ldp_core's message."""
        if params.get("design") not in self.designs:
            raise ValueError(self._wrong_design(params.get("design")))
        return self._build(params)

    def _wrong_design(self, name: object) -> str:
        return f"{self.label} questions use a design in {list(self.designs)}, got {name!r}"

    @abstractmethod
    def _build(self, params: dict[str, Any]) -> Design:
        """ldp_core's constructor for this kind's parameters."""

    @abstractmethod
    def owns(self, design: object) -> bool:
        """Whether ``design`` is one of this kind's ldp_core objects."""

    def check(self, design: Design, options: tuple[str, ...]) -> None:
        """Refuse (:class:`BadInput`) a valid design the question cannot use."""
        return None

    def out_of_limits(self, design: Design) -> str | None:
        """Why a design ldp_core accepts is outside the limits every question keeps
        (:data:`~classroom.basics.vocabulary.EPSILON_RANGE`), starting with the parameter
        it is about when one is; None when it is within them. A kind with parameters of its
        own (a numeric range) adds their limits."""
        return (probability_problem(design.params())
                or epsilon_problem(float(design.epsilon), named="epsilon" in design.params()))

    # -- a report -------------------------------------------------------------------------
    @abstractmethod
    def encode(self, design: Design, options: tuple[str, ...], answer: object) -> str:
        """The canonical stored string of ``answer``, or ``BadReport`` naming what is
        allowed."""

    @abstractmethod
    def answer_label(self, design: Design, options: tuple[str, ...], stored: str) -> str:
        """A stored answer as people read it."""

    # -- rehearsal ------------------------------------------------------------------------
    @abstractmethod
    def true_class(self, design: Design | None, options: tuple[str, ...], n: int,
                   true_share: object) -> np.ndarray:
        """True answers (unshuffled) of a simulated class of ``n`` with exactly the chosen
        shares (or mean); raise :class:`BadInput`."""

    @abstractmethod
    def simulate(self, design: Design, options: tuple[str, ...], truths: np.ndarray,
                 rng: np.random.Generator) -> list[object]:
        """The true answers randomized with ldp_core, in their stored form (checked again
        as real reports by the caller); raise :class:`BadInput`."""

    @abstractmethod
    def stuffed(self, design: Design, options: tuple[str, ...], n: int,
                target: int | None) -> list[object]:
        """``n`` reports of fake users who skip the randomizer and push ``target``
        (``ldp_core.fake_report``); raise :class:`BadInput`."""

    # -- estimates ------------------------------------------------------------------------
    @abstractmethod
    def estimate_round(self, design_of: DesignOf, items: RoundItems, fallback: str | None,
                       options: tuple[str, ...], level: float) -> RoundEstimate:
        """One round's estimate from its grouped reports, each group corrected with its own
        design; ``fallback`` is the round's design JSON (it defines ε with n = 0)."""

    # -- CSV ------------------------------------------------------------------------------
    def csv_width(self, design: Design) -> int:
        """How many options a CSV of reports under ``design`` has."""
        return 2

    def csv_label_index(self, design: Design, stored: str) -> int | None:
        """The option whose label a CSV row's ``answer_label`` names (None: none)."""
        return int(stored)

    def csv_options(self, k: int) -> tuple[str, ...]:
        """The options of a replayed CSV whose rows name none."""
        return tuple(f"option {j + 1}" for j in range(k))

    def csv_check(self, design: Design) -> str | None:
        """Why a design read from a CSV cannot be estimated (None: it can)."""
        return None

    # -- the phone ------------------------------------------------------------------------
    @abstractmethod
    def phone_scheme(self, design: Design, params: dict[str, Any]) -> dict[str, Any]:
        """What the browser needs to randomize exactly, from the design in ldp_core."""

    def phone_input(self, text: str, options: tuple[str, ...],
                    params: dict[str, Any]) -> tuple[tuple[int, ...], dict[str, Any]]:
        """The options' order and the input the phone draws, named by its ``type`` (the
        page has one drawer per input type and never asks for the kind): ``"choice"``,
        one button per option (the default); ``"number"``, a slider over a range (with
        ``lo``, ``hi``, ``unit``, ``step``, ``start``); ``"checkboxes"``, one box per
        option and a send button."""
        return self.display_order(text, options), {"type": "choice"}

    @abstractmethod
    def privacy_note(self, design: Design, ratio: str, eps_text: str) -> str:
        """The receipt's privacy sentence for a finite ε: ``ratio`` is the factor on the
        odds and ``eps_text`` ε, both rounded toward privacy."""

    @abstractmethod
    def phone_results(self, estimate: Any, options: tuple[str, ...]) -> dict[str, Any]:
        """The revealed results of a round with reports (:class:`QuestionEstimate`) as
        JSON for the phone: never NaN."""


def epsilon_problem(eps: float, *, named: bool) -> str | None:
    """Why a question cannot have ε = ``eps`` (outside :data:`EPSILON_RANGE`), starting with
    ``epsilon`` when the design names it (``named``); None when it can.

    >>> epsilon_problem(1.0, named=True) is None, epsilon_problem(10.0, named=True)[:28]
    (True, 'epsilon must be in [0.01, 5]')
    """
    lo, hi = EPSILON_RANGE
    if lo * (1 - 1e-9) <= eps <= hi * (1 + 1e-9):  # ε computed from γ or p may round
        return None
    limits = f"must be in [{lo:g}, {hi:g}], where the 95% intervals keep their coverage"
    if named and math.isfinite(eps):
        return f"epsilon {limits}, got {eps:g}"
    shown = "∞: some of its reports reveal the answer" if math.isinf(eps) else f"{eps:.4g}"
    return f"this design gives ε = {shown}; a question's ε {limits}"


#: A design's probabilities (Warner's p, forced response's p_truth and p_yes, unary
#: encoding's p and q) are 0, 1 or at least this far from both: the phone draws with
#: integer weights of at most 2^53, which a subnormal probability (1e-311) overflows.
PROBABILITY_MARGIN = 1e-9
_PROBABILITIES = ("p", "q", "p_truth", "p_yes")


def probability_problem(params: Mapping[str, Any]) -> str | None:
    """Why one of a design's probabilities is too close to 0 or 1 to be drawn on the
    phone (but not 0 or 1 itself), naming it; None when each is fine.

    >>> probability_problem({"p_truth": 2.2e-311, "p_yes": 0.5})[:41]
    'p_truth must be 0, 1 or between 1e-09 and'
    >>> probability_problem({"p": 0.75}) is None
    True
    """
    for name in _PROBABILITIES:
        value = params.get(name)
        if not isinstance(value, float) or value in (0.0, 1.0):
            continue
        if min(value, 1.0 - value) < PROBABILITY_MARGIN:
            return (f"{name} must be 0, 1 or between {PROBABILITY_MARGIN:g} and "
                    f"1 − {PROBABILITY_MARGIN:g}, got {value:g}")
    return None


def finite(x: float | None) -> float | None:
    """``x``, or None for None, NaN and ±inf (JSON has no NaN)."""
    return None if x is None or not math.isfinite(x) else float(x)
