"""Multiple-choice questions: 2 to 20 options and a frequency oracle, generalized randomized
response (the report an option number ``"0"``..``str(k-1)``) or unary encoding (the report
``k`` characters ``"0"``/``"1"``, character i the perturbed bit of option i); Wang et al.,
"Locally differentially private protocols for frequency estimation", USENIX Security 2017."""

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
from .binary import _check_option_numbers, _option_index, _target

__all__ = ["CategoricalEstimate", "CategoricalKind", "ue_label"]


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
    #: Do the reports fit the design? Unary encoding: the 1-bits per report; GRR: each
    #: option's count against its band (the least plausible design group's check).
    plausibility: ldp_core.Plausibility | None = None
    #: Each option's exact 95% interval for its true share (the headline CI;
    #: ``ldp_core.CategoricalCounts.exact_intervals``); None when ``n == 0``.
    ci_low: tuple[float, ...] | None = None
    ci_high: tuple[float, ...] | None = None

    @property
    def empty(self) -> bool:
        return self.n == 0

    def shares(self, which: str = "norm_sub") -> tuple[float, ...] | None:
        """``raw`` / ``clipped`` / ``norm_sub`` counts divided by n (None when n == 0)."""
        counts = getattr(self, which)
        if counts is None or not self.n:
            return None
        return tuple(c / self.n for c in counts)


def ue_label(options: tuple[str, ...], bits: str) -> str:
    chosen = [options[i] for i, b in enumerate(bits) if b == "1"]
    return ", ".join(chosen) if chosen else "(none)"


def _unary(design: object) -> bool:
    return isinstance(design, ldp_core.UnaryEncoding)


class CategoricalKind(QuestionKind):
    name: ClassVar[str] = "categorical"
    label: ClassVar[str] = "categorical"
    designs: ClassVar[tuple[str, ...]] = ("grr", "ue")
    example_options: ClassVar[tuple[str, ...]] = ("Red", "Green", "Blue")
    example_params: ClassVar[Mapping[str, Any]] = MappingProxyType(
        {"design": "ue", "d": 3, "p": 0.5, "q": 0.25})
    example_share: ClassVar[object] = (0.5, 0.3, 0.2)

    def _build(self, params: dict[str, Any]) -> Design:
        return ldp_core.categorical_oracle_from_params(params)

    def owns(self, design: object) -> bool:
        return isinstance(design, ldp_core.FrequencyOracle)

    def check(self, design: Design, options: tuple[str, ...]) -> None:
        if isinstance(design, ldp_core.FrequencyOracle) and design.d != len(options):
            raise BadInput(f"the design is for d = {design.d} options but the question has "
                           f"{len(options)}")

    def encode(self, design: Design, options: tuple[str, ...], answer: object) -> str:
        if not _unary(design):
            return _option_index(options, answer, bools=False)
        k = len(options)
        if isinstance(answer, (list, tuple)):
            if all(isinstance(b, int) and not isinstance(b, bool) and b in (0, 1)
                   for b in answer):
                answer = "".join(str(b) for b in answer)
        if isinstance(answer, str) and len(answer) == k and set(answer) <= {"0", "1"}:
            return answer
        raise BadReport(f"answer must be {k} bits, one per option (e.g. {'0' * (k - 1)}1), "
                        f"got {shown(answer)}")

    def answer_label(self, design: Design, options: tuple[str, ...], stored: str) -> str:
        return ue_label(options, stored) if _unary(design) else options[int(stored)]

    def true_class(self, design: Design | None, options: tuple[str, ...], n: int,
                   true_share: object) -> np.ndarray:
        """Each option gets its share of ``n`` by largest remainders."""
        k = len(options)
        shares = np.asarray(true_share, dtype=float).ravel()
        if shares.size != k or not np.all(np.isfinite(shares)) or np.any(shares < 0) \
                or shares.sum() <= 0:
            raise BadInput(f"true_share must be {k} non-negative shares, one per option")
        quota = shares / shares.sum() * n
        counts = np.floor(quota).astype(int)
        rest = n - counts.sum()
        counts[np.argsort(-(quota - counts), kind="stable")[:rest]] += 1  # largest remainders
        return np.repeat(np.arange(k), counts)

    def simulate(self, design: Design, options: tuple[str, ...], truths: np.ndarray,
                 rng: np.random.Generator) -> list[object]:
        assert isinstance(design, ldp_core.FrequencyOracle)
        _check_option_numbers(truths, len(options))
        return _stored(design, design.perturb(truths, rng=rng))

    def stuffed(self, design: Design, options: tuple[str, ...], n: int,
                target: int | None) -> list[object]:
        assert isinstance(design, ldp_core.FrequencyOracle)
        t = _target(target, self.default_target, len(options))
        return _stored(design, np.array([ldp_core.fake_report(design, t)] * n))

    def estimate_round(self, design_of: DesignOf, items: RoundItems, fallback: str | None,
                       options: tuple[str, ...], level: float) -> RoundEstimate:
        cat = _categorical_round(design_of, items, fallback, len(options))
        return RoundEstimate(cat, cat, {"counts": cat.support_counts, "n": cat.n,
                                        "epsilon": cat.epsilon})

    def csv_width(self, design: Design) -> int:
        assert isinstance(design, ldp_core.FrequencyOracle)
        return design.d

    def csv_label_index(self, design: Design, stored: str) -> int | None:
        return None if _unary(design) else int(stored)

    def phone_scheme(self, design: Design, params: dict[str, Any]) -> dict[str, Any]:
        """p and q on the 2**-53 grid a phone's uniforms are compared with, rounded toward
        privacy (its exact ε is then never above the displayed ε)."""
        assert isinstance(design, ldp_core.FrequencyOracle)
        p, q = design.device_pq()
        if _unary(design):
            return {"type": "ue", "d": design.d, "p": p, "q": q}
        return {"type": "grr", "d": design.d, "p": p}

    def privacy_note(self, design: Design, ratio: str, eps_text: str) -> str:
        return (f"Your privacy: whatever your true answer, the chance of the report your phone "
                f"sent changes by at most {ratio} from one answer to another (ε = {eps_text}).")

    def phone_results(self, estimate: Any, options: tuple[str, ...]) -> dict[str, Any]:
        cat = estimate.result
        # The raw unbiased estimates, as the projector's and the desk's first column: the
        # post-processed ones (Norm-Sub) are labelled there and not sent to phones.
        shares = cat.shares("raw") if cat is not None else None
        none: list[float | None] = [None] * len(options)
        lows = list(cat.ci_low) if cat is not None and cat.ci_low is not None else none
        highs = list(cat.ci_high) if cat is not None and cat.ci_high is not None else none
        return {"n": estimate.n, "categorical": [
            {"label": label, "share": None if shares is None else finite(s),
             # each option's exact 95% CI, the dashboard's own
             "ci_low": finite(lo), "ci_high": finite(hi),
             "shown": share_texts(None if shares is None else s, lo, hi)}
            for label, s, lo, hi in zip(options, shares or none, lows, highs, strict=True)]}


def _stored(oracle: ldp_core.FrequencyOracle, reports: np.ndarray) -> list[object]:
    """Perturbed reports in their stored form (unary encoding: the bits)."""
    if _unary(oracle):
        return ["".join("1" if b else "0" for b in row) for row in reports]
    return list(reports.tolist())


def _categorical_round(design_of: DesignOf, items: RoundItems, fallback: str | None,
                       k: int) -> CategoricalEstimate:
    per: dict[str, np.ndarray] = {}
    ns: dict[str, int] = defaultdict(int)
    ones: dict[str, np.ndarray] = {}  # unary encoding: reports by their number of 1-bits
    for design_json, answer, count in items:
        design = design_of(design_json)
        support = per.setdefault(design_json, np.zeros(k, dtype=np.int64))
        if _unary(design):
            bits = np.frombuffer(answer.encode("ascii"), dtype=np.uint8).astype(np.int64) - 48
            support += count * bits
            ones.setdefault(design_json, np.zeros(k + 1, dtype=np.int64))[int(bits.sum())] += count
        else:
            support[int(answer)] += count
        ns[design_json] += count
    groups: list[tuple[ldp_core.FrequencyOracle, int, Sequence[int]]] = [
        (design_of(dj), ns[dj], support.tolist()) for dj, support in per.items()]
    if fallback is not None and fallback not in per:
        groups.append((design_of(fallback), 0, [0] * k))
    if not groups:
        return CategoricalEstimate(n=0, support_counts=(0,) * k, raw=None, clipped=None,
                                   norm_sub=None, sd=None, epsilon=0.0)
    counts = ldp_core.CategoricalCounts(tuple(groups))
    support_total = tuple(int(c) for c in counts.support_counts())
    raw, clipped, ns_counts, sd = counts.raw(), counts.clipped(), counts.norm_sub(), counts.sd()
    if raw is None or clipped is None or ns_counts is None or sd is None:  # n = 0
        return CategoricalEstimate(n=0, support_counts=support_total, raw=None, clipped=None,
                                   norm_sub=None, sd=None, epsilon=counts.epsilon)
    checks = [ldp_core.ue_plausibility(design_of(dj), hist) for dj, hist in ones.items()]
    checks += [ldp_core.grr_plausibility(oracle, support) for oracle, _, support in groups
               if isinstance(oracle, ldp_core.GRR)]
    ends = counts.exact_intervals()
    return CategoricalEstimate(
        n=counts.n, support_counts=support_total, raw=tuple(float(x) for x in raw),
        clipped=tuple(float(x) for x in clipped), norm_sub=tuple(float(x) for x in ns_counts),
        sd=tuple(float(x) for x in sd), epsilon=counts.epsilon,
        plausibility=min(checks, key=lambda c: c.p_value) if checks else None,
        ci_low=None if ends is None else tuple(float(x) for x in ends[0]),
        ci_high=None if ends is None else tuple(float(x) for x in ends[1]))
