"""Check all that apply: 2 to 8 options, and a student's true answer is the set of options
they check. The set is randomized on the phone as a survey of one yes/no question per
option ("did you check it?"), :class:`ldp_core.SurveyDesign`, whose mode spends the
budget ε one of two honest ways:

* ``"split"``: each option is its own randomized-response bit at ε/d. Two sets that
  differ in every option change every bit, so the whole report costs the sum, d·ε/d = ε
  (sequential composition; each option as its own bit is RAPPOR's basic report,
  Erlingsson, Pihur & Korolova, CCS 2014, and Wang et al., "Locally differentially
  private protocols for frequency estimation", USENIX Security 2017);
* ``"sample"``: the phone draws one option uniformly (its CSPRNG) and answers only that
  one, at the full ε; which option it drew depends on no answer (Wang et al., ICDE 2019,
  sampling one of d attributes). Each option then gets about n/d reports: its variance
  is d times that of one question at ε;
* ``"fake"``: as ``"sample"``, and a fair coin for every other option (Arcolezi et al.,
  CIKM 2021), charged at what the whole set costs.

The report is d characters, one per option: ``"1"``/``"0"`` its randomized bit, ``"-"``
an option not answered (``"sample"``). Each option's share is estimated with the yes/no
estimator of its bit's channel (:meth:`ldp_core.SurveyDesign.question_design`), with the
exact 95% interval; n Var of each, ``ldp_core.survey_variance_unit``. A rehearsal's true
answer is the set as a bit mask (option j: bit j).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

import ldp_core
from classroom.basics.errors import BadInput, BadReport
from classroom.basics.vocabulary import shown
from classroom.display import share_texts

from .base import Design, DesignOf, QuestionKind, RoundEstimate, RoundItems, finite

__all__ = ["MAX_SET_OPTIONS", "MultiSelectKind", "SetResult"]

#: Most options of a check-all-that-apply question (a rehearsal's true sets are bit masks
#: below 2**8).
MAX_SET_OPTIONS = 8
#: The character of an option a ``"sample"`` report does not answer.
NOT_ASKED = "-"


@dataclass(frozen=True)
class SetResult:
    """A check-all-that-apply round: each option's yes/no estimate (its share with the exact
    interval, from the reports that answered it) and its counts."""

    options: tuple[ldp_core.BinaryEstimate, ...]
    counts: tuple[ldp_core.BinaryCounts, ...]

    @property
    def plausibility(self) -> ldp_core.Plausibility | None:
        """The least plausible option's check (ldp_core's yes/no check on its bit)."""
        checks = [ldp_core.binary_plausibility(c) for c in self.counts if c.n]
        return min(checks, key=lambda c: c.p_value) if checks else None

    def shares(self) -> tuple[float | None, ...]:
        return tuple(o.mu_hat for o in self.options)


def _survey(design: object) -> ldp_core.SurveyDesign:
    assert isinstance(design, ldp_core.SurveyDesign)
    return design


class MultiSelectKind(QuestionKind):
    name: ClassVar[str] = "multiselect"
    label: ClassVar[str] = "check all that apply"
    designs: ClassVar[tuple[str, ...]] = ("survey",)
    physical: ClassVar[bool] = False
    example_options: ClassVar[tuple[str, ...]] = ("Python", "R", "Julia")
    example_params: ClassVar[Mapping[str, Any]] = MappingProxyType(
        {"design": "survey", "mode": "split", "budget": 3.0, "d": 3})
    example_share: ClassVar[object] = (0.8, 0.4, 0.1)

    def clean_options(self, options: Sequence[object]) -> tuple[str, ...]:
        labels = super().clean_options(options)
        if len(labels) > MAX_SET_OPTIONS:
            raise BadInput(f"a {self.label} question has at most {MAX_SET_OPTIONS} options, "
                           f"got {len(labels)}")
        return labels

    def display_order(self, text: str, options: tuple[str, ...]) -> tuple[int, ...]:
        return tuple(range(len(options)))  # boxes in the question's order

    def _build(self, params: dict[str, Any]) -> Design:
        return ldp_core.survey_design_from_params(params)

    def owns(self, design: object) -> bool:
        return isinstance(design, ldp_core.SurveyDesign)

    def check(self, design: Design, options: tuple[str, ...]) -> None:
        if _survey(design).d != len(options):
            raise BadInput(f"the design is for d = {_survey(design).d} options but the "
                           f"question has {len(options)}")

    # -- a report -------------------------------------------------------------------------
    def encode(self, design: Design, options: tuple[str, ...], answer: object) -> str:
        survey, k = _survey(design), len(options)
        if isinstance(answer, (list, tuple)) and all(
                isinstance(b, str) or (isinstance(b, int) and not isinstance(b, bool))
                for b in answer):
            answer = "".join(str(b) for b in answer)
        answered = ("0", "1") if survey.mode != "sample" else ("0", "1", NOT_ASKED)
        if isinstance(answer, str) and len(answer) == k and set(answer) <= set(answered):
            if survey.mode != "sample" or sum(c != NOT_ASKED for c in answer) == 1:
                return answer
        example = "01" + "0" * (k - 2) if survey.mode != "sample" else "-1" + "-" * (k - 2)
        what = ("one randomized bit per option" if survey.mode != "sample"
                else "one option's randomized bit and '-' for the others")
        raise BadReport(f"answer must be {k} characters, {what} (e.g. {example}), "
                        f"got {shown(answer)}")

    def answer_label(self, design: Design, options: tuple[str, ...], stored: str) -> str:
        parts = [f"{label}: {'yes' if c == '1' else 'no'}"
                 for label, c in zip(options, stored, strict=True) if c != NOT_ASKED]
        return "; ".join(parts)

    # -- rehearsal ------------------------------------------------------------------------
    def true_class(self, design: Design | None, options: tuple[str, ...], n: int,
                   true_share: object) -> np.ndarray:
        """Option j is in ``round(share_j · n)`` students' sets; each set is a bit mask."""
        k = len(options)
        shares = np.asarray(true_share, dtype=float).ravel()
        if shares.size != k or not np.all(np.isfinite(shares)) or np.any(shares < 0) \
                or np.any(shares > 1):
            raise BadInput(f"true_share must be {k} shares in [0, 1], one per option")
        masks = np.zeros(n, dtype=np.int64)
        for j, share in enumerate(shares):
            masks[:int(np.floor(share * n + 0.5))] |= 1 << j
        return masks

    def simulate(self, design: Design, options: tuple[str, ...], truths: np.ndarray,
                 rng: np.random.Generator) -> list[object]:
        survey, k = _survey(design), len(options)
        if truths.min() < 0 or truths.max() >= 1 << k:
            raise BadInput(f"simulated answers must be sets of options as bit masks "
                           f"0..{(1 << k) - 1}")
        bits = (truths[:, None] >> np.arange(k)) & 1
        rr = survey.randomizer
        if survey.mode == "split":
            sent = np.column_stack([rr.perturb(bits[:, j], rng=rng) for j in range(k)])
            return ["".join(str(int(b)) for b in row) for row in sent]
        asked = rng.integers(k, size=len(truths))
        real = rr.perturb(bits[np.arange(len(truths)), asked], rng=rng)
        coins = rng.integers(2, size=bits.shape)
        rows = []
        for i, j in enumerate(asked):
            cells = [NOT_ASKED if survey.mode == "sample" else str(int(c)) for c in coins[i]]
            cells[j] = str(int(real[i]))
            rows.append("".join(cells))
        return list(rows)

    def stuffed(self, design: Design, options: tuple[str, ...], n: int,
                target: int | None) -> list[object]:
        """Every stuffer checks ``target`` (default option 0) and nothing else, and
        answers every option (``"sample"`` too, which no phone does: one option each)."""
        k = len(options)
        t = self.default_target if target is None else target
        if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < k:
            raise BadInput(f"the stuffers' target must be an option number 0..{k - 1}, "
                           f"got {t!r}")
        rest = "0" if _survey(design).mode != "sample" else NOT_ASKED
        return ["".join("1" if j == t else rest for j in range(k))] * n

    # -- estimates ------------------------------------------------------------------------
    def estimate_round(self, design_of: DesignOf, items: RoundItems, fallback: str | None,
                       options: tuple[str, ...], level: float) -> RoundEstimate:
        k = len(options)
        # design JSON -> per option [reports that answered it, of them "1"]
        per: dict[str, list[list[int]]] = defaultdict(lambda: [[0, 0] for _ in range(k)])
        phones = 0
        for design_json, answer, count in items:
            cells = per[design_json]
            phones += count
            for j, c in enumerate(answer):
                if c != NOT_ASKED:
                    cells[j][0] += count
                    cells[j][1] += count * (c == "1")
        if fallback is not None and fallback not in per:
            per[fallback]
        counts = tuple(ldp_core.BinaryCounts(tuple(
            (_survey(design_of(dj)).question_design(), cells[j][0], cells[j][1])
            for dj, cells in per.items())) for j in range(k)) if per else ()
        result = SetResult(tuple(c.summary(level) for c in counts), counts)
        eps = max((_survey(design_of(dj)).epsilon for dj in per), default=0.0)
        yes = tuple(c.yes for c in counts) if counts else (0,) * k
        return RoundEstimate(result.options, result, {"n": phones, "counts": yes,
                                                       "epsilon": eps})

    # -- CSV ------------------------------------------------------------------------------
    def csv_width(self, design: Design) -> int:
        return _survey(design).d

    def csv_label_index(self, design: Design, stored: str) -> int | None:
        return None

    # -- the phone ------------------------------------------------------------------------
    def phone_scheme(self, design: Design, params: dict[str, Any]) -> dict[str, Any]:
        """The mode, d, and the integer weights of one option's randomized response
        (``sampling_weights``, rounded toward privacy)."""
        survey = _survey(design)
        return {"type": "set", "mode": survey.mode, "d": survey.d,
                "weights": [int(w) for w in survey.randomizer.sampling_weights()]}

    def phone_input(self, text: str, options: tuple[str, ...],
                    params: dict[str, Any]) -> tuple[tuple[int, ...], dict[str, Any]]:
        return self.display_order(text, options), {"type": "checkboxes"}

    def privacy_note(self, design: Design, ratio: str, eps_text: str) -> str:
        survey = _survey(design)
        how = ("each box was randomized on its own, and the whole set counts"
               if survey.mode == "split" else
               "your phone answered one box it drew at random, and only that box")
        return (f"Your privacy: {how}. Whatever set you truly checked, the chance of the "
                f"report your phone sent changes by at most {ratio} from one set to "
                f"another (ε = {eps_text}).")

    def phone_results(self, estimate: Any, options: tuple[str, ...]) -> dict[str, Any]:
        result: SetResult = estimate.result
        return {"n": estimate.n, "shares": [
            {"label": label, "share": finite(o.mu_hat), "ci_low": finite(o.exact_low),
             "ci_high": finite(o.exact_high),
             "shown": share_texts(o.mu_hat, o.exact_low, o.exact_high)}
            for label, o in zip(options, result.options, strict=True)]}
