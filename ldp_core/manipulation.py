"""How far fake users can move an LDP estimate, and when the plausibility check sees them.

Seen from one target answer, every design here is a binary channel: a report either
supports the target or not, with ``a = P(supports | truly the target)`` and
``b = P(supports | truly something else)`` (a yes/no design's a and b; a frequency
oracle's p and q). The estimated share of the target is ``(S/N - b) / (a - b)`` for S
supporting reports out of N.

A coalition of fake users who skip the randomizer and **always send a supporting
report** adds 1 to S each, where an honest report adds b + (a - b) pi on average. With a
fraction beta of fakes among the N reports the estimate moves by

    ``beta ((1 - b) / (a - b) - pi)``

(Cao, Jia & Gong, "Data poisoning attacks to local differential privacy protocols",
USENIX Security 2021; Cheu, Smith & Ullman, "Manipulation attacks in local differential
privacy", IEEE S&P 2021). Each fake report moves the estimated count by
``(1 - b) / (a - b)``: 1.5 for the class exercise's die, 3 for OUE's bit at ε = ln 3,
``(e^eps + d - 2) / (e^eps - 1)`` for GRR over d options. The stronger the privacy, the
more a fake report weighs.

**The blind zone.** The supporting share of an honest class lies in the band [b, a]
whatever the class believes; the plausibility check flags only shares beyond it. While
the manipulated estimate stays at most 1 (the reports still inside the band), no check
of the reports can tell the stuffing from a class that truly leans to the target: that
holds up to a fraction ``(1 - pi) / ((1 - b) / (a - b) - pi)`` of fakes, however large
the class.

**The stealthy variant.** Fakes who run the honest randomizer on the target as if it
were their answer send reports no check can ever tell from real ones, and move the
estimate by ``beta (1 - pi)``: less per fake, never seen.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from . import _checks
from ._checks import RNGLike
from .binary import BinaryDesign, ForcedResponse
from .categorical import GRR, FrequencyOracle, UnaryEncoding
from .estimate import BinaryCounts
from .numeric import NumericMechanism
from .plausibility import (
    ALPHA,
    Plausibility,
    binary_plausibility,
    grr_plausibility,
    ue_plausibility,
)
from .repeated import yes_count_distribution

__all__ = ["StuffedClass", "blind_zone", "fake_report", "fake_report_gain", "fakes_until_alarm",
           "simulate_stuffing", "stuffing_alarm_probability", "stuffing_shift",
           "target_channel"]

Design = BinaryDesign | FrequencyOracle


def target_channel(design: Design, target: int = 1) -> tuple[float, float]:
    """``(a, b)``: the chance that a report supports ``target`` when the student's true
    answer is the target, and when it is not. For a yes/no design the supporting report
    is the one sent more often by the target's holders (report 1 for target 1 when
    a > b); for a frequency oracle, a report that supports the option (GRR: names it;
    unary encoding: has its bit set).

    >>> import math
    >>> from ldp_core import DieRR, oracle
    >>> target_channel(DieRR(4, 3)), target_channel(DieRR(4, 3), target=0)
    ((0.75, 0.25), (0.75, 0.25))
    >>> [round(x, 12) for x in target_channel(oracle("oue", 4, math.log(3)))]
    [0.5, 0.25]
    """
    a, b, _ = _channel(design, target)
    return a, b


def _channel(design: Design, target: int) -> tuple[float, float, int]:
    """``(a, b, the raw report a fake sends)``; for a yes/no design the raw report is the
    answer 0 or 1, for a frequency oracle the target itself."""
    if isinstance(design, BinaryDesign):
        if target not in (0, 1):
            raise ValueError(f"target must be 0 or 1 for a yes/no design, got {target!r}")
        a, b = float(design.a), float(design.b)  # a != b: every design carries information
        if target == 0:  # the channel of report 0 for the share answering 0
            a, b = 1 - b, 1 - a
        sends = target
        if a < b:  # the design reports the target's answer less often: the other supports
            a, b, sends = 1 - a, 1 - b, 1 - target
        return a, b, sends
    if isinstance(design, FrequencyOracle):
        t = _checks.integer("target", target, 0, design.d - 1)
        return float(design.p), float(design.q), t
    raise ValueError(f"design must be a yes/no design or a frequency oracle, got {design!r}")


def fake_report(design: Design | NumericMechanism, target: int = 1) -> int | np.ndarray | float:
    """The raw report a fake user who always supports ``target`` sends: the answer 0 or 1
    for a yes/no design (the one the target's holders send more often), the option for
    GRR, the one-hot bits of the option for unary encoding. For a numeric mechanism,
    whose estimate is a mean, the largest report the server accepts (target 1) or the
    smallest (target 0): the end of its device grid, or Duchi et al.'s ``±c_eps``.

    >>> from ldp_core import DieRR, WarnerRR, oracle, PiecewiseMechanism
    >>> fake_report(DieRR(4, 3)), fake_report(WarnerRR(0.3)), fake_report(oracle("grr", 5, 1.0), 3)
    (1, 0, 3)
    >>> fake_report(oracle("oue", 4, 1.0), 2).tolist()
    [0, 0, 1, 0]
    >>> fake_report(PiecewiseMechanism(2.0)) == PiecewiseMechanism(2.0).big_c
    True
    """
    if isinstance(design, NumericMechanism):
        if target not in (0, 1):
            raise ValueError(f"target must be 1 (the top) or 0 (the bottom), got {target!r}")
        low, high = design.device_grid() or design.output_bounds
        return high if target else low
    _, _, sends = _channel(design, target)
    if isinstance(design, UnaryEncoding):
        bits = np.zeros(design.d, dtype=np.int64)
        bits[sends] = 1
        return bits
    return sends


def fake_report_gain(design: Design, target: int = 1) -> float:
    """``(1 - b) / (a - b)``: how much one report that always supports the target moves
    the target's estimated count.

    >>> import math
    >>> from ldp_core import DieRR, oracle
    >>> fake_report_gain(DieRR(4, 3)), round(fake_report_gain(oracle("oue", 4, math.log(3))), 12)
    (1.5, 3.0)
    """
    a, b = target_channel(design, target)
    return (1 - b) / (a - b)


def _share(name: str, value: object) -> float:
    return _checks.in_range(name, value, 0.0, 1.0)


def stuffing_shift(design: Design, honest_share: float, fake_fraction: float, *,
                   stealthy: bool = False, target: int = 1) -> float:
    """The expected change of the target's estimated share when a fraction
    ``fake_fraction`` (beta) of the reports comes from fakes and the honest students'
    true share of the target is ``honest_share`` (pi): ``beta (gain - pi)``, with
    :func:`fake_report_gain` for fakes that always support the target and 1 for stealthy
    ones, who randomize the target as if it were their answer.

    >>> from ldp_core import DieRR
    >>> stuffing_shift(DieRR(4, 3), 0.3, 0.1), round(stuffing_shift(DieRR(4, 3), 0.3, 0.1,
    ...                                                               stealthy=True), 12)
    (0.12, 0.07)
    """
    pi, beta = _share("honest_share", honest_share), _share("fake_fraction", fake_fraction)
    gain = 1.0 if stealthy else fake_report_gain(design, target)
    return beta * (gain - pi)


def blind_zone(design: Design, honest_share: float, *, stealthy: bool = False,
               target: int = 1) -> float:
    """The largest fraction of fakes whose expected reports stay inside the design's band
    [b, a], so that the manipulated estimate is at most 1 and no check of the reports can
    tell them from a class that truly leans to the target:
    ``(1 - pi) / (gain - pi)`` (1 for stealthy fakes, whom nothing tells apart).

    >>> from ldp_core import DieRR
    >>> round(blind_zone(DieRR(4, 3), 0.3), 12), blind_zone(DieRR(4, 3), 0.3, stealthy=True)
    (0.583333333333, 1.0)
    """
    pi = _share("honest_share", honest_share)
    gain = 1.0 if stealthy else fake_report_gain(design, target)
    if gain <= 1:  # a fake report weighs no more than a true believer's: always hidden
        return 1.0
    return (1 - pi) / (gain - pi)


def _channel_design(a: float, b: float) -> ForcedResponse:
    """The yes/no design with channel (a, b), a > b: forced response, truthful with
    a - b, forced "yes" with b. GRR seen from one option is exactly this."""
    return ForcedResponse(a - b, b)


def _honest_truths(design: Design, n: int, pi: float, target: int) -> np.ndarray:
    """A class of n with exactly round(pi n) holders of the target; the others hold the
    other answer (yes/no) or are spread over the other options in turn."""
    m = int(round(pi * n))
    if isinstance(design, BinaryDesign):
        others = np.full(n - m, 1 - target)
    else:
        rest = np.array([v for v in range(design.d) if v != target])
        others = rest[np.arange(n - m) % rest.size]
    return np.concatenate((np.full(m, target), others)).astype(int)


@lru_cache(maxsize=512)
def _binomials(a: float, b: float, holders: int, others: int) -> np.ndarray:
    """The distribution of the supporting count of ``holders`` students holding the target
    and ``others`` not: ``Bin(holders, a)`` convolved with ``Bin(others, b)`` (cached, read
    only: the page asks for the same class with many numbers of fakes)."""
    channel = _channel_design(a, b)

    def binomial(k: int, truth: int) -> np.ndarray:
        return yes_count_distribution(channel, k, truth) if k else np.ones(1)

    pmf = np.convolve(binomial(holders, 1), binomial(others, 0))
    pmf.flags.writeable = False
    return pmf


def _count_pmf(design: Design, n_honest: int, n_fakes: int, pi: float, stealthy: bool,
               target: int) -> np.ndarray:
    """The exact distribution of the number of supporting reports among the honest class
    (round(pi n) holders of the target) and the fakes."""
    a, b, _ = _channel(design, target)
    m = int(round(pi * n_honest))
    pmf = _binomials(a, b, m, n_honest - m)
    if stealthy:
        return np.convolve(pmf, _binomials(a, b, n_fakes, 0))
    return np.concatenate((np.zeros(n_fakes), pmf))


@lru_cache(maxsize=4096)
def _alarm_region(a: float, b: float, total: int, level: float) -> tuple[int, int]:
    """``(hi, lo)``: the check of the target's count alarms for counts >= hi and <= lo
    (``total + 1`` and -1 when it never does on that side). Its p-value falls away from the
    band [N b, N a], so each edge is found by bisection."""
    channel = _channel_design(a, b)

    def alarm(count: int) -> bool:
        return binary_plausibility(BinaryCounts.single(channel, count, total)).p_value < level

    above, below = total + 1, -1
    lo, hi = int(np.floor(total * a)), total  # lo never alarms: its share is inside
    if alarm(hi):
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if alarm(mid) else (mid, hi)
        above = hi
    lo, hi = 0, int(np.ceil(total * b))
    if alarm(lo):
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if alarm(mid) else (lo, mid)
        below = lo
    return above, below


def stuffing_alarm_probability(design: Design, n_honest: int, n_fakes: int,
                               honest_share: float, *, stealthy: bool = False,
                               target: int = 1, alpha: float = ALPHA) -> float:
    """The exact probability that the band check of the target's count raises the alarm:
    that :func:`binary_plausibility` of the target's channel finds the supporting count of
    ``n_honest`` honest students (``round(pi n)`` of them holding the target) and
    ``n_fakes`` fakes implausible. For a yes/no design that is the dashboard's own check.
    For GRR it is the target's part of :func:`grr_plausibility` (its count, at ``alpha /
    d``), a lower bound of the whole check's alarm probability, which also watches the
    other options' counts fall. For unary encoding it checks the target's bit, which the
    dashboard does not: it counts 1-bits per report (:func:`simulate_stuffing` shows it).

    The check's alarm region is the counts far enough above ``N a`` or below ``N b``
    (its p-value falls away from the band), found by bisection; the count's distribution
    is the convolution of the binomials of the class and the fakes.

    >>> from ldp_core import DieRR
    >>> stuffing_alarm_probability(DieRR(4, 3), 100, 0, 0.3) < 1e-4
    True
    >>> stuffing_alarm_probability(DieRR(4, 3), 100, 400, 0.3) > 0.99
    True
    """
    n_h = _checks.integer("n_honest", n_honest, 1)
    n_f = _checks.integer("n_fakes", n_fakes, 0)
    pi = _share("honest_share", honest_share)
    a, b, _ = _channel(design, target)
    level = alpha / design.d if isinstance(design, GRR) else alpha
    pmf = _count_pmf(design, n_h, n_f, pi, stealthy, target)
    above, below = _alarm_region(a, b, n_h + n_f, level)
    return min(1.0, float(pmf[above:].sum()) + float(pmf[:below + 1].sum()))


def fakes_until_alarm(design: Design, n_honest: int, honest_share: float, *,
                      probability: float = 0.5, target: int = 1, alpha: float = ALPHA,
                      limit: int = 1_000_000) -> int | None:
    """The fewest fakes that always support the target for which
    :func:`stuffing_alarm_probability` reaches ``probability``: how many it takes before
    the check sees them that often (None if not within ``limit`` fakes). The alarm
    probability grows with the number of fakes, so a bisection finds it.

    >>> from ldp_core import DieRR
    >>> fakes_until_alarm(DieRR(4, 3), 100, 0.3)
    266
    """
    n_h = _checks.integer("n_honest", n_honest, 1)
    level = _checks.in_range("probability", probability, 0.0, 1.0, lo_open=True,
                             hi_open=True)

    def reached(k: int) -> bool:
        return stuffing_alarm_probability(design, n_h, k, honest_share, target=target,
                                          alpha=alpha) >= level

    if reached(0):
        return 0
    hi = max(1, min(n_h, limit))
    while not reached(hi):
        if hi >= limit:
            return None
        hi = min(limit, 2 * hi)
    lo = 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if reached(mid) else (mid, hi)
    return hi


@dataclass(frozen=True)
class StuffedClass:
    """One simulated class with fakes: the target's estimated share from the honest
    reports alone and from all of them, and the dashboard's plausibility check on all of
    them (:func:`binary_plausibility`, :func:`grr_plausibility` or
    :func:`ue_plausibility`)."""

    honest: float
    manipulated: float
    check: Plausibility


def simulate_stuffing(design: Design, n_honest: int, n_fakes: int, honest_share: float, *,
                      stealthy: bool = False, target: int = 1,
                      rng: RNGLike = None) -> StuffedClass:
    """Randomize a class of ``n_honest`` students (``round(pi n)`` of them holding the
    target) with the design, add ``n_fakes`` fakes, and estimate and check as the
    dashboard does. Yes/no designs, GRR and unary encoding.

    >>> from ldp_core import DieRR
    >>> out = simulate_stuffing(DieRR(4, 3), 100, 400, 0.3, rng=1)
    >>> out.manipulated > 0.9, out.check.fits
    (True, False)
    """
    n_h = _checks.integer("n_honest", n_honest, 1)
    n_f = _checks.integer("n_fakes", n_fakes, 0)
    pi = _share("honest_share", honest_share)
    if not isinstance(design, (BinaryDesign, GRR, UnaryEncoding)):
        raise ValueError(f"simulate_stuffing takes a yes/no design, GRR or unary encoding, "
                         f"got {design!r}")
    a, b, sends = _channel(design, target)
    gen = np.random.default_rng(rng)
    truths = _honest_truths(design, n_h, pi, target)
    honest = np.asarray(design.perturb(truths, rng=gen))
    if stealthy:
        fakes = np.asarray(design.perturb(np.full(n_f, target), rng=gen))
    else:
        fakes = np.tile(fake_report(design, target), (n_f, 1) if honest.ndim == 2 else n_f
                        ).astype(honest.dtype)
    reports = np.concatenate((honest, fakes))

    def share(rep: np.ndarray) -> float:
        supporting = (rep[:, target] if isinstance(design, UnaryEncoding)
                      else rep == sends).sum()
        return float((supporting / len(rep) - b) / (a - b))

    if isinstance(design, UnaryEncoding):
        ones = np.bincount(reports.sum(axis=1).astype(int), minlength=design.d + 1)
        check = ue_plausibility(design, ones)
    elif isinstance(design, GRR):
        check = grr_plausibility(design, np.bincount(reports, minlength=design.d))
    else:
        check = binary_plausibility(BinaryCounts.single(design, int(reports.sum()),
                                                        len(reports)))
    return StuffedClass(share(honest), share(reports), check)
