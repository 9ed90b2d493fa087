"""What a phone is shown, computed below the views: JSON-ready, no Streamlit.

The numbers come from ldp_core through the question's design; the texts are the
ones the Streamlit student page used to draw.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

import ldp_core
from classroom import designs
from classroom.domain import (
    Question,
    QuestionEstimate,
    Receipt,
    UnknownPoll,
    display_order,
    format_value,
    sentence,
)
from classroom.privacy_numbers import at_least_percent, at_most_factor, epsilon_up

__all__ = ["device_scheme", "epoch_ms", "join_error", "physical_instructions",
           "privacy_note", "question_view", "receipt_view", "results_view"]


def _numeric_scheme(design_params: dict[str, Any]) -> dict[str, Any]:
    design = ldp_core.numeric_design_from_params(design_params)
    mech = design.mechanism
    scheme: dict[str, Any] = {"type": "numeric", "mechanism": mech.kind,
                              "lo": design.range.lo, "hi": design.range.hi}
    if isinstance(mech, ldp_core.DuchiMechanism):
        scheme["weights"] = [int(w) for w in mech.device_weights()]
        return scheme
    if isinstance(mech, ldp_core.HybridMechanism):
        # A coin picks the part; Duchi's bit is sent as its value ±c_eps (the Piecewise
        # part's reports lie in the same range), the Piecewise part's report snapped.
        scheme.update(weights=[int(w) for w in mech.duchi.device_weights()],
                      c_duchi=mech.duchi.c_epsilon, p_piecewise=mech.device_p_piecewise())
        if mech.p_piecewise == 0:
            return scheme
        mech = mech.piecewise
    grid = mech.device_grid()
    assert grid is not None  # every mechanism with more than two reports has one
    scheme.update(low=grid[0], high=grid[1], cells=ldp_core.DEVICE_CELLS)
    if isinstance(mech, ldp_core.PiecewiseMechanism):
        scheme.update(c=mech.big_c, p_window=mech.device_p_window())
    elif isinstance(mech, ldp_core.LaplaceMechanism):
        scheme["scale"] = mech.scale
    return scheme


def device_scheme(design_params: dict[str, Any]) -> dict[str, Any]:
    """What the browser needs to randomize exactly, derived from the design in ldp_core:
    integer branch weights for binary designs (``sampling_weights``) and Duchi et al.'s
    bit, probabilities on the 2**-53 grid for categorical ones (``device_pq``) and the
    Piecewise Mechanism's window, all rounded toward privacy, the Hybrid Mechanism's coin
    (which does not enter ε), and the cells a continuous numeric report is snapped to
    (``device_grid``)."""
    kind = design_params.get("design")
    if kind in ldp_core.NUMERIC_NAMES:
        return _numeric_scheme(design_params)
    if kind in ("grr", "ue"):
        oracle = ldp_core.categorical_oracle_from_params(design_params)
        # The phone compares 53-bit uniforms with p and q: give it the values on that
        # grid, rounded toward privacy (its exact ε is then never above the displayed ε).
        p, q = oracle.device_pq()
        if kind == "grr":
            return {"type": "grr", "d": oracle.d, "p": p}
        return {"type": "ue", "d": oracle.d, "p": p, "q": q}
    design = ldp_core.binary_design_from_params(design_params)
    animation = designs.phone_animation(design_params)
    weights = [int(w) for w in design.sampling_weights()]
    scheme: dict[str, Any] = {"type": "binary", "weights": weights, "animation": animation}
    if animation == "die":
        scheme["faces"] = int(design_params["faces"])
    return scheme


def privacy_note(question: Question) -> str:
    """The receipt's privacy guarantee in plain words, with the design's numbers rounded
    toward privacy (:mod:`classroom.privacy_numbers`): the floor on the report's chance
    down, the factor on the odds and ε up."""
    eps = question.epsilon
    if math.isinf(eps):
        return ("Your privacy: this design gives no guarantee (ε = ∞): some of its reports "
                "can only come from one true answer.")
    ratio, shown = at_most_factor(math.exp(eps)), epsilon_up(eps)
    if question.kind == "binary":
        floor = float(question.design.channel.min())  # type: ignore[union-attr]  # a binary question's design is a BinaryDesign
        return (f"Your privacy: whatever you truly prefer, this report was at least "
                f"{at_least_percent(floor)} likely, and the odds between your two possible "
                f"true answers change by at most {ratio}: ε = {shown}. Nobody, including the "
                "instructor, can be sure from it what you really think.")
    if question.kind == "numeric":
        return (f"Your privacy: your phone added noise to your number before sending it. "
                f"Whatever your true value, the chance of the report it sent changes by at "
                f"most {ratio} (ε = {shown}). Nobody, including the instructor, can tell "
                "your number from it; the class average still comes through.")
    return (f"Your privacy: whatever your true answer, the chance of the report your phone "
            f"sent changes by at most {ratio} from one answer to another (ε = {shown}).")


def physical_instructions(question: Question) -> str | None:
    """How to randomize by hand in physical mode (None in device mode)."""
    if question.mode != "physical":
        return None
    p = question.design_params
    yes, no = question.options[1] if len(question.options) > 1 else "", question.options[0]
    return designs.physical_instructions(p, yes, no)


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def results_view(question: Question, est: QuestionEstimate) -> dict[str, Any]:
    """The revealed class results: the estimate with its 95% interval (never NaN)."""
    if est.empty:
        return {"n": 0}
    if question.kind == "numeric" and est.numeric is not None:
        num = est.numeric
        ci = num.interval()
        unit = question.unit
        return {"n": est.n, "numeric": {
            "mean": None if num.mean is None else format_value(num.mean, unit),
            "ci": None if ci is None else [format_value(v, unit) for v in ci],
            "outside": num.mean is not None and not num.lo <= num.mean <= num.hi}}
    if question.kind == "binary" and est.binary is not None:
        b = est.binary
        return {"n": est.n, "binary": {
            "label": question.options[1], "share": _finite(b.mu_hat), "sd": _finite(b.sd_worst),
            "ci_low": _finite(b.exact_low), "ci_high": _finite(b.exact_high)}}
    cat = est.categorical
    shares = cat.shares() if cat is not None else None
    return {"n": est.n, "categorical": [
        {"label": label, "share": None if shares is None else _finite(s)}
        for label, s in zip(question.options, shares or [None] * len(question.options),
                            strict=True)]}


def _nice_step(lo: float, hi: float) -> float:
    """A round slider step giving about 100 to 1000 positions over [lo, hi].

    >>> _nice_step(0, 12), _nice_step(0, 100), _nice_step(-1, 1)
    (0.1, 1.0, 0.01)
    """
    return float(10 ** math.floor(math.log10((hi - lo) / 100)))


def epoch_ms(when: datetime) -> int:
    """A time as whole milliseconds since 1970 (UTC), as JavaScript counts time."""
    return int(when.timestamp() * 1000)


def question_view(question: Question, est: QuestionEstimate | None) -> dict[str, Any]:
    """The shared, device-independent state of the current question.

    ``closes_at`` is the deadline of a running countdown (ms since 1970 by the server's
    clock; the phone counts down against the server's time sent with the state, never
    its own clock); ``timed_out`` says the countdown closed the question."""
    params = question.design_params
    if question.kind == "numeric":
        lo, hi = float(params["lo"]), float(params["hi"])
        step = _nice_step(lo, hi)
        digits = max(0, -math.floor(math.log10(step)))
        numeric: dict[str, Any] | None = {
            "lo": lo, "hi": hi, "unit": question.unit, "step": step,
            "start": round(round((lo + hi) / 2 / step) * step, digits)}  # the slider's start
        order: tuple[int, ...] = ()
    else:
        numeric, order = None, display_order(question.text, question.options, question.kind)
    return {
        "id": question.id, "round": question.round_number, "text": question.text,
        "kind": question.kind, "state": question.state, "revealed": question.revealed,
        "mode": question.mode,
        "options": [{"value": i, "label": question.options[i]} for i in order],
        "numeric": numeric,
        "labels": {str(i): label for i, label in enumerate(question.options)},
        "params": params, "scheme": device_scheme(params),
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
