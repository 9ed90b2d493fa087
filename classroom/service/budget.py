"""The poll's privacy budget: what its rounds have committed, and the one check every
opening, new round, new question and design change passes (inside the transaction that
holds the poll's row, :class:`~classroom.store.PollUnit`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..domain import BudgetStatus, OverBudget, Poll, Question, design_epsilon, finite_or_inf
from ..estimates import parse_design
from ..kinds.binary import series_charges as charges_of
from ..kinds.binary import series_of
from ..privacy_numbers import epsilon_up
from ..store import PollUnit, RoundUse

__all__ = ["budget_status", "check_budget", "check_opening", "round_cost", "series_charges",
           "spent_charges"]


def _designs(texts: Iterable[str]) -> list[object]:
    return [parse_design(t) for t in texts]


def series_charges(items: Sequence[tuple[Iterable[str], float]]) -> list[float]:
    """:func:`classroom.kinds.binary.series_charges` of design JSONs: what each round or
    report adds to what a device spends, a series costing ``min(Σ ε₁, ε∞)`` in all."""
    return charges_of([(_designs(texts), cost) for texts, cost in items])


def spent_charges(design_jsons: Sequence[str]) -> list[float]:
    """What each of one device's reports (its design JSON) adds to what it has spent."""
    return series_charges([((text,), design_epsilon(parse_design(text)))
                           for text in design_jsons])


def round_cost(use: RoundUse) -> float:
    """The most ε a device can have spent in this round: its design's, or that of any
    report made under an earlier design of the same round."""
    texts = {use.design_json, *use.report_designs}
    return max(design_epsilon(parse_design(t)) for t in texts)


def budget_status(poll: Poll, uses: list[RoundUse], *,
                  leave_out: tuple[int, int] | None = None,
                  open_counts: bool = True) -> BudgetStatus:
    """The poll's budget and what its rounds committed: every round with real reports, and
    (``open_counts``) the one open now; ``leave_out`` (question id, round) is not counted."""
    kept = [u for u in uses
            if (u.question_id, u.number) != leave_out
            and (u.reports > 0 or (open_counts and u.current and u.question_state == "open"))]
    charges = series_charges([({u.design_json, *u.report_designs}, round_cost(u))
                              for u in kept])
    counted = tuple((u.question_id, u.number, c) for u, c in zip(kept, charges, strict=True))
    return BudgetStatus(budget=poll.epsilon_budget,
                        committed=finite_or_inf([c for _, _, c in counted]),
                        rounds=counted)


def check_opening(unit: PollUnit, question: Question, epsilon: float) -> None:
    """Refuse (OverBudget) to open the current round of ``question`` at ``epsilon`` when
    a student who answered every answered round and this one would pass the poll's
    budget."""
    check_budget(unit, epsilon, question=question, same_round=True,
                 refused=f"opening “{question.text[:60]}” would let")


def check_budget(unit: PollUnit, epsilon: float, *, question: Question | None,
                 same_round: bool, refused: str, stays_closed: bool = False,
                 design_json: str | None = None) -> None:
    """Refuse (OverBudget) a round at ``epsilon`` (of ``question``, or of a question not
    yet added) that could not open under the poll's budget now. Answered rounds only
    add up, so one that cannot open now never can, unless the budget is raised.
    ``refused`` starts the message: what was asked and that it "would let".
    ``stays_closed``: the round does not open (a closed question's design changed), so
    a question open elsewhere stays open and counts too. ``design_json``: the round's
    design (the question's own when None); a round of a series adds only what it adds
    to the series' cost (:func:`series_charges`).

    Decided inside ``unit``, the transaction that holds the poll's row: no other
    opening, budget change or budgeted report of the poll can slip in between.
    """
    poll = unit.poll
    if poll is None or poll.epsilon_budget is None:
        return
    uses = unit.rounds_use()
    # Open rounds elsewhere close when this one opens; those with reports still count.
    leave_out = ((question.id, question.round_number) if question is not None and same_round
                 else None)
    status = budget_status(poll, uses, leave_out=leave_out, open_counts=stays_closed)
    earlier: tuple[str, ...] = ()
    if question is not None and same_round:
        current = next((u for u in uses if u.question_id == question.id and u.current),
                       None)
        if current is not None and current.reports:
            epsilon = max(epsilon, round_cost(current))
            earlier = (current.design_json, *current.report_designs)
    text = design_json if design_json is not None else (
        question.design_json if question is not None else None)
    if text is not None and series_of(parse_design(text)) is not None:
        new = RoundUse(question_id=-1, number=-1, design_json=text, current=True,
                       question_state="open", reports=1, report_designs=earlier)
        epsilon = budget_status(poll, [*uses, new], leave_out=leave_out,
                                open_counts=stays_closed).committed - status.committed
    if not status.allows(epsilon):
        raise OverBudget(
            f"{refused} a student spend ε = {epsilon_up(status.committed + epsilon)} in "
            f"this poll, over its budget of ε = {epsilon_up(poll.epsilon_budget)} (the "
            f"questions answered so far already cost ε = {epsilon_up(status.committed)}). "
            "Give it a "
            "smaller ε, or raise the budget")
