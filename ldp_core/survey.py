"""Several yes/no questions under one budget ε: split it, or sample one question.

A survey asks each phone d yes/no questions and may spend ε per phone in all. Three
ways, each with ε-randomized response (RR_ε: keep the answer w.p. e^ε / (1 + e^ε)):

* ``"split"``: the phone answers every question at ε / d (sequential composition:
  d × ε/d = ε);
* ``"sample"``: the phone draws one question uniformly (on the phone, from its CSPRNG)
  and answers only that one, at the full ε; the server learns which question it was,
  which depends on no answer (Wang et al., "Collecting and analyzing multidimensional
  data with local differential privacy", ICDE 2019, sample k of d attributes);
* ``"fake"``: as ``"sample"``, and for each other question the phone sends a fake
  answer, a fair coin, so the server cannot tell which answer is real ("random sampling
  plus fake data", RS+FD: Arcolezi, Couchot, Al Bouna & Xiao, CIKM 2021).

The variance of one question's estimate, as ``n Var`` for n phones drawn from a
population with true share π (the CS208 notes' population model, in which every
report is an independent draw), uses one formula for a report channel ``(a, b)``:
``n Var = λ (1 − λ) / (a − b)^2`` with ``λ = b + (a − b) π``. For RR_ε it is
``π (1 − π) + e^ε / (e^ε − 1)^2``, so

* split: ``π (1 − π) + e^(ε/d) / (e^(ε/d) − 1)^2``;
* sample: each question gets about n/d reports (exactly ``Binomial(n, 1/d)``), so
  ``n Var = d (π (1 − π) + e^ε / (e^ε − 1)^2)`` to first order; the exact
  ``n E[1 / n_j | n_j >= 1] (π (1 − π) + e^ε / (e^ε − 1)^2)`` with ``n`` given;
* fake: every phone sends a report for every question, real w.p. 1/d: the channel is
  ``a' = a/d + (d − 1)/(2d)``, ``b' = b/d + (d − 1)/(2d)`` (the same formula; RS+FD's
  ``d^2 δ (1 − δ) / (p − q)^2`` with ``δ = λ'``).

At ε = ln 3 and π = ½: d = 3, split 7.62, sample 3.00, fake 9.00; d = 5, split 20.88,
sample 5.00, fake 25.00.

Privacy. The loss of the whole set of answers (the budget's ε) and of any one answer
(two answer sets that differ in one question) differ: split spends ε on the set and
ε/d on each answer; sample spends ε on both; fake spends the randomizer's ε_r on the
set and ``ln((e^(ε_r) + d − 1) / d)`` on each answer. RS+FD as published sets
``ε_r = ln(d (e^ε − 1) + 1)`` so that each answer costs ε (:func:`rs_fd_epsilon`);
the whole set then costs ε_r, more than ε. The classroom charges what the whole set
costs, so its fake mode randomizes at ε_r = ε: the set costs ε, each answer less.
:func:`survey_channel` gives the exact joint channel, from which both are computed
in the tests.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from . import _checks
from ._checks import RNGLike
from .binary import BinaryDesign, EpsilonRR, ForcedResponse, report_probability
from .intervals import _binom_logpmf

__all__ = [
    "SURVEY_MODES",
    "SurveyDesign",
    "SurveyPrivacy",
    "fake_channel",
    "rr_variance_unit",
    "rs_fd_epsilon",
    "simulate_survey",
    "split_wins_above",
    "survey_channel",
    "survey_estimates",
    "survey_design_from_params",
    "survey_privacy",
    "survey_variance_unit",
]

#: The ways a survey spends its budget.
SURVEY_MODES = ("split", "sample", "fake")
#: Most questions in one survey.
MAX_QUESTIONS = 20


def _mode(mode: object) -> str:
    if mode not in SURVEY_MODES:
        raise ValueError(f"mode must be one of {SURVEY_MODES}, got {mode!r}")
    return str(mode)


def _d(d: object) -> int:
    return _checks.integer("d", d, 1, MAX_QUESTIONS)


def _shares(share: object) -> Any:
    """A share in [0, 1] as a float, or an array of them."""
    arr = np.asarray(share, dtype=float)
    if np.any(~np.isfinite(arr)) or np.any((arr < 0) | (arr > 1)):
        raise ValueError(f"share must be in [0, 1], got {share!r}")
    return float(arr) if arr.ndim == 0 else arr


def _unit(a: float, b: float, share: Any) -> Any:
    """``n Var = λ (1 − λ) / (a − b)^2`` of the share estimated from n reports."""
    lam = report_probability(a, b, share)
    return lam * (1 - lam) / (a - b) ** 2


def rr_variance_unit(epsilon: float, share: Any = 0.5) -> Any:
    """``n Var`` of the share estimated from n RR_ε reports, population model:
    ``π (1 − π) + e^ε / (e^ε − 1)^2`` (Wang, Blocki, Li & Jha 2017).

    >>> round(rr_variance_unit(math.log(3)), 12)
    1.0
    >>> eps, pi = 0.8, 0.3
    >>> bool(np.isclose(rr_variance_unit(eps, pi),
    ...                 pi * (1 - pi) + math.exp(eps) / math.expm1(eps) ** 2))
    True
    """
    rr = EpsilonRR(epsilon)
    return _unit(rr.a, rr.b, _shares(share))


def fake_channel(a: float, b: float, d: int) -> tuple[float, float]:
    """The channel of one question's reports when each phone answers it for real w.p.
    1/d and sends a fair coin otherwise: ``(a/d + (d − 1)/(2d), b/d + (d − 1)/(2d))``.

    >>> [round(x, 12) for x in fake_channel(0.75, 0.25, 3)]  # 7/12, 5/12
    [0.583333333333, 0.416666666667]
    """
    k = _d(d)
    coin = (k - 1) / (2 * k)
    return a / k + coin, b / k + coin


def _expected_inverse(n: int, d: int) -> float:
    """``E[1 / n_j | n_j >= 1]`` for ``n_j ~ Binomial(n, 1/d)``."""
    j = np.arange(1, n + 1)
    pmf = np.exp(_binom_logpmf(j, n, 1 / d))
    return float((pmf / j).sum() / pmf.sum())


def survey_variance_unit(mode: str, epsilon: float, d: int, share: Any = 0.5,
                         n: int | None = None) -> Any:
    """``n Var`` of one question's estimated share in a survey of ``d`` questions with
    budget ``epsilon`` per phone, ``n`` phones (population model). For ``"sample"``,
    ``n`` None gives the first-order ``d × rr_variance_unit(ε)``; a class size gives
    the exact value given that the question got at least one report.

    >>> [round(survey_variance_unit(m, math.log(3), 3), 2) for m in SURVEY_MODES]
    [7.62, 3.0, 9.0]
    >>> [round(survey_variance_unit(m, math.log(3), 5), 2) for m in SURVEY_MODES]
    [20.88, 5.0, 25.0]
    >>> round(survey_variance_unit("sample", math.log(3), 3, n=300), 3)
    3.02
    """
    how, k = _mode(mode), _d(d)
    eps = _checks.positive("epsilon", epsilon)
    if how == "split":
        return rr_variance_unit(eps / k, share)
    if how == "fake":
        rr = EpsilonRR(eps)
        return _unit(*fake_channel(rr.a, rr.b, k), _shares(share))
    scale = k if n is None else _checks.integer("n", n, 1) * _expected_inverse(int(n), k)
    return scale * rr_variance_unit(eps, share)


@dataclass(frozen=True)
class SurveyPrivacy:
    """What one phone spends in a survey: ``spent`` on its whole set of answers (what a
    budget counts) and ``per_answer`` on any one answer."""

    spent: float
    per_answer: float


def rs_fd_epsilon(epsilon: float, d: int) -> float:
    """RS+FD's randomizer ε for a per-answer ε (Arcolezi et al., CIKM 2021):
    ``ln(d (e^ε − 1) + 1)``; the whole set of answers then costs this much.

    >>> round(rs_fd_epsilon(math.log(3), 3), 6) == round(math.log(7), 6)
    True
    """
    k = _d(d)
    eps = _checks.positive("epsilon", epsilon)
    return math.log1p(k * math.expm1(eps))


def survey_privacy(mode: str, epsilon: float, d: int) -> SurveyPrivacy:
    """The exact loss of a phone's survey reports: on the whole set of answers, and on
    one answer. ``epsilon`` is the survey's budget (for ``"fake"``: its randomizer's ε).

    >>> survey_privacy("split", 1.5, 3)
    SurveyPrivacy(spent=1.5, per_answer=0.5)
    >>> p = survey_privacy("fake", math.log(3), 3)
    >>> round(p.spent, 6) == round(math.log(3), 6), round(p.per_answer, 4)
    (True, 0.5108)
    """
    how, k = _mode(mode), _d(d)
    eps = _checks.positive("epsilon", epsilon)
    if how == "split":
        return SurveyPrivacy(spent=eps, per_answer=eps / k)
    if how == "sample":
        return SurveyPrivacy(spent=eps, per_answer=eps)
    return SurveyPrivacy(spent=eps, per_answer=math.log1p(math.expm1(eps) / k))


@dataclass(frozen=True)
class SurveyDesign:
    """A survey of ``d`` yes/no questions under one budget ``budget`` per phone, spent by
    ``mode`` (:data:`SURVEY_MODES`). Its :attr:`epsilon` is what a phone's whole set of
    reports costs (the budget's ε); :meth:`question_design` is the binary design one
    question's reports follow, so that every yes/no estimator and interval applies.

    >>> s = SurveyDesign("fake", math.log(3), 3)
    >>> round(s.epsilon, 4), round(s.per_answer, 4)
    (1.0986, 0.5108)
    >>> round(s.question_design().a, 12), round(s.question_design().b, 12)  # 7/12, 5/12
    (0.583333333333, 0.416666666667)
    >>> design_again = survey_design_from_params(s.params())
    >>> design_again == s
    True
    """

    mode: str
    budget: float
    d: int

    kind: ClassVar[str] = "survey"

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", _mode(self.mode))
        k = _checks.integer("d", self.d, 2, MAX_QUESTIONS)
        eps = _checks.positive("budget", self.budget)
        EpsilonRR(eps / k if self.mode == "split" else eps)  # in RR's range, else ValueError
        object.__setattr__(self, "d", k)
        object.__setattr__(self, "budget", eps)

    @property
    def epsilon(self) -> float:
        """What a phone's reports of the whole survey cost together."""
        return survey_privacy(self.mode, self.budget, self.d).spent

    @property
    def per_answer(self) -> float:
        """What they reveal about any one answer."""
        return survey_privacy(self.mode, self.budget, self.d).per_answer

    @property
    def randomizer(self) -> EpsilonRR:
        """The randomized response a real answer goes through on the phone."""
        return EpsilonRR(self.budget / self.d if self.mode == "split" else self.budget)

    def question_design(self) -> BinaryDesign:
        """The channel of one question's reports: RR at ε/d (split) or ε (sample, over the
        phones that answered it), or with fake answers the mixture ``1/d`` real, else a
        fair coin: a forced response, truthful w.p. ``(a − b)/d``, "yes" w.p.
        ``b/d + (d − 1)/(2d)``."""
        rr = self.randomizer
        if self.mode != "fake":
            return rr
        a, b = fake_channel(rr.a, rr.b, self.d)
        return ForcedResponse(a - b, b)

    def variance_unit(self, share: Any = 0.5, n: int | None = None) -> Any:
        """``n Var`` of one question's estimate (:func:`survey_variance_unit`)."""
        return survey_variance_unit(self.mode, self.budget, self.d, share, n)

    def params(self) -> dict[str, Any]:
        return {"design": self.kind, "mode": self.mode, "budget": self.budget, "d": self.d}


def survey_design_from_params(params: dict[str, Any]) -> SurveyDesign:
    """Rebuild a survey's design from its ``params()`` (checked again)."""
    if not isinstance(params, dict) or params.get("design") != SurveyDesign.kind:
        raise ValueError(f"survey parameters must name the design 'survey', got {params!r}")
    rest = {k: v for k, v in params.items() if k != "design"}
    try:
        return SurveyDesign(**rest)
    except TypeError as exc:
        raise ValueError(f"bad parameters for a survey: {rest!r}") from exc


def survey_channel(mode: str, epsilon: float, d: int) -> tuple[list[tuple[int, ...]],
                                                                 list[tuple[Any, ...]],
                                                                 np.ndarray]:
    """The exact channel of one phone's survey reports: ``(answer sets, outputs, P)``
    with ``P[i, j] = P(output j | answer set i)``. An output is a tuple of d reports,
    0/1, or None for a question not answered (``"sample"``). For d up to 8.

    >>> sets, outs, p = survey_channel("sample", math.log(3), 2)
    >>> len(sets), len(outs), bool(np.allclose(p.sum(axis=1), 1))
    (4, 4, True)
    """
    how, k = _mode(mode), _checks.integer("d", d, 1, 8)
    eps = _checks.positive("epsilon", epsilon)
    sets = list(itertools.product((0, 1), repeat=k))
    if how == "sample":
        outs: list[tuple[Any, ...]] = [tuple(r if i == j else None for i in range(k))
                                       for j in range(k) for r in (0, 1)]
    else:
        outs = list(itertools.product((0, 1), repeat=k))
    rr = EpsilonRR(eps / k if how == "split" else eps)
    p = np.array([[_output_probability(how, rr, x, y) for y in outs] for x in sets])
    return sets, outs, p


def _bit(rr: EpsilonRR, truth: int, report: int) -> float:
    one = rr.a if truth else rr.b
    return one if report else 1 - one


def _output_probability(how: str, rr: EpsilonRR, x: tuple[int, ...],
                        y: tuple[Any, ...]) -> float:
    k = len(x)
    if how == "split":
        return math.prod(_bit(rr, t, r) for t, r in zip(x, y, strict=True))
    if how == "sample":
        j = next(i for i, r in enumerate(y) if r is not None)
        return _bit(rr, x[j], y[j]) / k
    return sum(_bit(rr, x[j], y[j]) * 0.5 ** (k - 1) for j in range(k)) / k


def survey_estimates(mode: str, epsilon: float, d: int, reports: object, yes: object
                     ) -> np.ndarray:
    """The unbiased estimate of each question's share from its ``reports`` and ``yes``
    counts (arrays, broadcast together): ``(yes / reports − b) / (a − b)`` with the
    channel of the mode's reports; NaN where a question has no report.

    >>> survey_estimates("split", math.log(3), 1, [100], [50]).tolist()
    [0.5]
    """
    how, k = _mode(mode), _d(d)
    eps = _checks.positive("epsilon", epsilon)
    rr = EpsilonRR(eps / k if how == "split" else eps)
    a, b = (rr.a, rr.b) if how != "fake" else fake_channel(rr.a, rr.b, k)
    m = _checks.count_array("reports", reports).astype(float)
    y = _checks.count_array("yes", yes, m).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.where(m > 0, (y / np.where(m > 0, m, 1) - b) / (a - b), np.nan),
                          dtype=float)


def split_wins_above(d: int, share: float = 0.5) -> float | None:
    """The ε above which splitting it over ``d`` questions gives a smaller variance than
    sampling one question (first order); None when sampling always wins (a share of 0 or
    1: then the only error is the noise, and splitting multiplies it).

    At small ε a question's noise, about 1/ε², dominates: split pays d²/ε², sample d/ε².
    At large ε the noise vanishes and what is left is the population's spread
    π(1 − π), which sampling pays d times over.

    >>> round(split_wins_above(3), 2), round(split_wins_above(5), 2)
    (3.71, 4.71)
    """
    k = _d(d)
    pi = _checks.in_range("share", share, 0.0, 1.0)
    if k == 1 or pi * (1 - pi) == 0:
        return None

    def gap(eps: float) -> float:
        return float(survey_variance_unit("split", eps, k, pi)
                     - survey_variance_unit("sample", eps, k, pi))

    low, high = EpsilonRR.MIN_EPSILON * k, 1.0
    while gap(high) > 0:
        if high >= EpsilonRR.MAX_EPSILON:
            return None
        low, high = high, min(2 * high, EpsilonRR.MAX_EPSILON)
    for _ in range(100):
        mid = (low + high) / 2
        low, high = (mid, high) if gap(mid) > 0 else (low, mid)
    return high


def simulate_survey(mode: str, epsilon: float, shares: object, n: int, *,
                    size: int | None = None, rng: RNGLike = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Exact aggregate sampling of a survey of ``n`` phones drawn from a population with
    the true ``shares`` (one per question): ``(reports, yes)``, the number of reports of
    each question and how many said "yes"; shape ``(d,)``, or ``(size, d)``.

    >>> reports, yes = simulate_survey("sample", math.log(3), [0.5, 0.2, 0.9], 300, rng=1)
    >>> int(reports.sum()), reports.shape
    (300, (3,))
    """
    how = _mode(mode)
    eps = _checks.positive("epsilon", epsilon)
    pis = np.atleast_1d(_shares(shares))
    k = _d(pis.size)
    if pis.ndim != 1:
        raise ValueError("shares must be one share per question")
    m = _checks.integer("n", n, 0)
    gen = np.random.default_rng(rng)
    shape = (k,) if size is None else (_checks.integer("size", size, 1), k)
    rr = EpsilonRR(eps / k if how == "split" else eps)
    a, b = (rr.a, rr.b) if how != "fake" else fake_channel(rr.a, rr.b, k)
    lam = np.broadcast_to(report_probability(a, b, pis), shape)
    if how == "sample":
        reports = gen.multinomial(m, np.full(k, 1 / k), size=size)
    else:
        reports = np.full(shape, m, dtype=np.int64)
    return reports, gen.binomial(reports, lam)
