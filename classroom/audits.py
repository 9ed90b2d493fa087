"""What an audit of the phones' randomizer says, in words: the verdict beside ε_LB.

An audit gives the phones known inputs and bounds their ε from below from the reports
(``ldp_core.audit_epsilon``, Arcolezi & Gambs, PoPETs 2024(4)). The verdict compares the
bound with the ε the design promises:

* ``"waiting"``: one of the two inputs has no reports yet, so there is no bound;
* ``"caught"``: ε_LB is above the promise: the phones leak more than they promise (an
  honest set of phones gets this at most 5% of the time, and the exact rate for this
  design and these counts is :func:`false_alarm_rate`);
* ``"consistent"``: ε_LB is within the promise. An audit can catch a leak; it cannot
  prove privacy, and how much it could have caught is :func:`catch_rate`.

ε_LB is a floor, so it is written rounded down; the promise is a ceiling, written rounded
up (``classroom.privacy_numbers``), with more decimals where two decimals would hide
which is larger.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ldp_core
from classroom.privacy_numbers import epsilon_down, epsilon_up

__all__ = ["AuditVerdict", "audit_verdict", "catch_rate", "false_alarm_rate"]


@dataclass(frozen=True)
class AuditVerdict:
    """``level`` (``"waiting"``, ``"caught"`` or ``"consistent"``), a short ``headline``
    and a ``sentence`` that says why."""

    level: str
    headline: str
    sentence: str


def _shown(lower: float, promised: float) -> tuple[str, str]:
    """ε_LB rounded down and the promise rounded up, with enough decimals (2 to 4) that
    their order reads right."""
    for decimals in (2, 3, 4):
        low, high = epsilon_down(lower, decimals), epsilon_up(promised, decimals)
        if (float(low) > float(high)) == (lower > promised):
            break
    return low, high


def audit_verdict(epsilon_lb: float, promised: float, n1: int, n0: int) -> AuditVerdict:
    """The verdict on an audit with ``n1`` reports for input 1 and ``n0`` for input 0.

    >>> audit_verdict(1.42, math.log(3), 100, 100).headline
    'Caught: these phones leak more than they promise'
    >>> v = audit_verdict(0.68, math.log(3), 100, 100)
    >>> v.level, v.sentence.split(",")[0]
    ('consistent', 'The reports show ε is at least 0.68')
    """
    if n1 < 1 or n0 < 1:
        return AuditVerdict("waiting", "Waiting for reports of both inputs",
                            "The bound needs reports from phones shown 1 and from phones "
                            "shown 0.")
    low, high = _shown(epsilon_lb, promised)
    if epsilon_lb > promised:
        return AuditVerdict(
            "caught", "Caught: these phones leak more than they promise",
            f"With 95% confidence the reports show ε is at least {low}, above the promised "
            f"{high}. An honest set of phones shows this at most 5% of the time.")
    return AuditVerdict(
        "consistent", "Consistent with the promise",
        f"The reports show ε is at least {low}, within the promised {high}. An audit "
        "catches phones that leak more than they promise; passing one does not prove them "
        "private.")


def false_alarm_rate(design: ldp_core.BinaryDesign, n1: int, n0: int) -> float:
    """How often honest phones of ``design`` would be found leaking with these counts:
    ``P(ε_LB > design.epsilon)``, exactly."""
    if n1 < 1 or n0 < 1 or not math.isfinite(design.epsilon):
        return 0.0
    return ldp_core.audit_distribution(design.a, design.b, n1, n0).exceeds(design.epsilon)


def catch_rate(promised: float, n1: int, n0: int, *, factor: float = 2.0) -> float:
    """How often an audit with these counts catches phones that promise ``promised`` but
    randomize at ``factor`` times it (ε-randomized response), exactly.

    >>> round(catch_rate(math.log(3), 100, 100), 3)
    0.999
    """
    if n1 < 1 or n0 < 1:
        return 0.0
    leaky = ldp_core.EpsilonRR(min(factor * promised, ldp_core.EpsilonRR.MAX_EPSILON))
    return ldp_core.audit_distribution(leaky.a, leaky.b, n1, n0).exceeds(promised)
