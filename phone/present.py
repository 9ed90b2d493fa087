"""What a phone is shown, computed below the views: JSON-ready, no Streamlit.

The numbers come from ldp_core through the question's design; the texts are the
ones the Streamlit student page used to draw.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from classroom import designs, kinds
from classroom.domain import (
    Question,
    QuestionEstimate,
    Receipt,
    UnknownPoll,
    sentence,
)
from classroom.privacy_numbers import at_most_factor, epsilon_up

__all__ = ["device_scheme", "epoch_ms", "join_error", "physical_instructions",
           "privacy_note", "question_view", "receipt_view", "results_view"]


def device_scheme(kind_name: str, design_params: dict[str, Any]) -> dict[str, Any]:
    """What the browser needs to randomize exactly, derived from the design in ldp_core by
    the question's kind (:meth:`classroom.kinds.QuestionKind.phone_scheme`): integer branch
    weights for binary designs (``sampling_weights``) and Duchi et al.'s bit, probabilities
    on the 2**-53 grid for categorical ones (``device_pq``) and the Piecewise Mechanism's
    window, all rounded toward privacy, the Hybrid Mechanism's coin (which does not enter
    ε), and the cells a continuous numeric report is snapped to (``device_grid``)."""
    kind = kinds.kind(kind_name)
    return kind.phone_scheme(kind.build(design_params), design_params)


def privacy_note(question: Question) -> str:
    """The receipt's privacy guarantee in plain words, with the design's numbers rounded
    toward privacy (:mod:`classroom.privacy_numbers`): the floor on the report's chance
    down, the factor on the odds and ε up."""
    eps = question.epsilon
    if math.isinf(eps):
        return ("Your privacy: this design gives no guarantee (ε = ∞): some of its reports "
                "can only come from one true answer.")
    return kinds.kind(question.kind).privacy_note(
        question.design, at_most_factor(math.exp(eps)), epsilon_up(eps))


def physical_instructions(question: Question) -> str | None:
    """How to randomize by hand in physical mode (None in device mode)."""
    if question.mode != "physical":
        return None
    p = question.design_params
    yes, no = question.options[1] if len(question.options) > 1 else "", question.options[0]
    return designs.physical_instructions(p, yes, no)


def results_view(question: Question, est: QuestionEstimate) -> dict[str, Any]:
    """The revealed class results: the estimate with its 95% interval (never NaN)."""
    if est.empty:
        return {"n": 0}
    return kinds.kind(question.kind).phone_results(est, question.options)


def epoch_ms(when: datetime) -> int:
    """A time as whole milliseconds since 1970 (UTC), as JavaScript counts time."""
    return int(when.timestamp() * 1000)


def question_view(question: Question, est: QuestionEstimate | None) -> dict[str, Any]:
    """The shared, device-independent state of the current question.

    ``closes_at`` is the deadline of a running countdown (ms since 1970 by the server's
    clock; the phone counts down against the server's time sent with the state, never
    its own clock); ``timed_out`` says the countdown closed the question."""
    params = question.design_params
    order, shown = kinds.kind(question.kind).phone_input(question.text, question.options,
                                                        params)
    return {
        "id": question.id, "round": question.round_number, "text": question.text,
        "kind": question.kind, "state": question.state, "revealed": question.revealed,
        "mode": question.mode,
        "options": [{"value": i, "label": question.options[i]} for i in order],
        "input": shown,
        "labels": {str(i): label for i, label in enumerate(question.options)},
        "params": params, "scheme": device_scheme(question.kind, params),
        "epsilon": question.epsilon, "privacy_note": privacy_note(question),
        "physical_instructions": physical_instructions(question),
        "results": None if est is None else results_view(question, est),
        "closes_at": (epoch_ms(question.closes_at)
                      if question.is_open and question.closes_at is not None else None),
        "timed_out": question.timed_out,
    }


def receipt_view(receipt: Receipt, note: str) -> dict[str, Any]:
    """A receipt as the phone shows it; ``note`` is the question's :func:`privacy_note`."""
    spent = receipt.spent_epsilon
    return {
        "question_id": receipt.question_id, "round": receipt.round_number,
        "answer_label": receipt.answer_label,
        "received_at": receipt.created_at.isoformat().replace("+00:00", "Z"),
        "already_answered": receipt.already_answered, "epsilon": receipt.epsilon,
        "spent_epsilon": spent if spent is not None and math.isfinite(spent) else None,
        "privacy_note": note,
    }


def join_error(exc: Exception, code: str) -> str:
    """One clear sentence for a join code that did not work."""
    if isinstance(exc, UnknownPoll):
        return (f"No class uses the code {code.strip().upper()[:16]}: check the code on the "
                "projector, or scan the QR code.")
    return sentence(exc)
