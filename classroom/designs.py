"""Every design described once: its name, a one-line summary with its numbers, how a
student randomizes by hand (physical mode), and what the phone shows while it
randomizes.

The dashboard, the phone page and the self-study pages ask :func:`describe`,
:func:`physical_instructions` and :func:`phone_animation` instead of switching on the
design's kind themselves. The mathematics of each design is in ``ldp_core``; the
wording follows the course (CS208 lecture notes; Warner 1965 for the spinner; Dwork
& Roth 2014 and Near & Abuah for the two coins).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .privacy_numbers import epsilon_up

__all__ = ["DESIGNS", "DesignText", "describe", "name", "phone_animation",
           "physical_instructions"]

Params = Mapping[str, Any]


@dataclass(frozen=True)
class DesignText:
    """What the app says about one design (``params["design"]`` is its key)."""

    name: str
    #: One line with the design's numbers, e.g. "die 1–4: truthful on 1–3, lie on 4".
    summary: Callable[[Params], str]
    #: By-hand instructions given (params, the "yes" option, the "no" option); None for
    #: designs a student cannot run by hand.
    by_hand: Callable[[Params, str, str], str] | None = None
    #: What the phone animates while it randomizes: "die", "coins", "spinner" or "none".
    animation: str = "none"


def _die_summary(p: Params) -> str:
    f, t = p["faces"], p["truthful"]
    lie = f"{t + 1}" if t + 1 == f else f"{t + 1}–{f}"
    return f"die 1–{f}: truthful on 1–{t}, lie on {lie}"


def _die_by_hand(p: Params, yes: str, no: str) -> str:
    k, t = p["faces"], p["truthful"]
    return (f"Privately roll a {k}-sided die (or pick a random number from 1 to {k}). "
            f"On 1–{t} report your true answer; on {t + 1}–{k} report the opposite. Do not "
            "tell anyone what you rolled.")


def _coins_by_hand(p: Params, yes: str, no: str) -> str:
    return (f"Privately flip a coin. Heads: report your true answer. Tails: flip again and "
            f"report {yes} on heads, {no} on tails.")


def _spinner_by_hand(p: Params, yes: str, no: str) -> str:
    return (f"Privately spin a spinner that lands on A with probability {p['p']:g}. On A, "
            f"answer “do you prefer {yes}?”; otherwise answer “do you NOT prefer {yes}?”. "
            "Then tap what that answer means.")


DESIGNS: Mapping[str, DesignText] = MappingProxyType({
    "die": DesignText("Die (class exercise)", _die_summary, _die_by_hand, "die"),
    "two_coin": DesignText(
        "Two coins", lambda p: "two coins: heads → truth; tails → second coin answers",
        _coins_by_hand, "coins"),
    "warner": DesignText(
        "Warner's spinner", lambda p: f"Warner's spinner, p = {p['p']:.2f}",
        _spinner_by_hand, "spinner"),
    "gamma": DesignText(
        "Keep the truth w.p. ½ + γ",
        lambda p: f"keep the true answer w.p. ½ + γ, γ = {p['gamma']:.3f}",
        animation="spinner"),
    "epsilon": DesignText(
        "ε-randomized response",
        lambda p: f"ε-randomized response, ε = {epsilon_up(p['epsilon'])}", animation="spinner"),
    "forced": DesignText(
        "Forced response",
        lambda p: f"forced response: truth {p['p_truth']:.2f}, forced yes {p['p_yes']:.2f}",
        animation="spinner"),
    "memo": DesignText(
        "Memoized randomized response (RAPPOR), for a series",
        lambda p: f"a memo kept on the phone for the series “{p['series']}”: "
                  f"f = {p['f']:.3g}, then p = {p['p']:.3g}, q = {p['q']:.3g} on every report"),
    "grr": DesignText(
        "Generalized randomized response (GRR)",
        lambda p: f"GRR over {p['d']} options, ε = {epsilon_up(p['epsilon'])}"),
    "ue": DesignText(
        "Unary encoding",
        lambda p: f"unary encoding over {p['d']} options, p = {p['p']:.3f}, q = {p['q']:.3f}"),
    "olh": DesignText(
        "Optimized local hashing (OLH)",
        lambda p: f"OLH over {p['d']} options, ε = {epsilon_up(p['epsilon'])}"),
    "duchi": DesignText(
        "Duchi et al.'s one-bit mechanism",
        lambda p: f"Duchi et al. (one bit) on [{p['lo']:g}, {p['hi']:g}], "
                  f"ε = {epsilon_up(p['epsilon'])}"),
    "piecewise": DesignText(
        "Piecewise Mechanism (Wang et al.)",
        lambda p: f"Piecewise Mechanism on [{p['lo']:g}, {p['hi']:g}], "
                  f"ε = {epsilon_up(p['epsilon'])}"),
    "hybrid": DesignText(
        "Hybrid Mechanism (Wang et al.)",
        lambda p: f"Hybrid Mechanism on [{p['lo']:g}, {p['hi']:g}], "
                  f"ε = {epsilon_up(p['epsilon'])}"),
    "survey": DesignText(
        "A set of boxes, one yes/no bit each",
        lambda p: {"split": f"each of {p['d']} boxes its own bit at ε/{p['d']}",
                   "sample": f"one of {p['d']} boxes drawn, answered at the full ε",
                   "fake": f"one of {p['d']} boxes drawn, fair coins for the rest",
                   }.get(p["mode"], "a survey") + f", ε = {epsilon_up(p['budget'])} in all"),
    "laplace": DesignText(
        "Laplace mechanism on the phone",
        lambda p: f"local Laplace on [{p['lo']:g}, {p['hi']:g}], "
                  f"ε = {epsilon_up(p['epsilon'])}"),
})

_UNKNOWN = DesignText("Another design", lambda p: str(p.get("design", "another design")))


def _text(params: Params) -> DesignText:
    return DESIGNS.get(str(params.get("design", "")), _UNKNOWN)


def name(params: Params) -> str:
    """The design's name, e.g. "Two coins"."""
    return _text(params).name


def describe(params: Params) -> str:
    """One line with the design's numbers.

    >>> describe({"design": "die", "faces": 4, "truthful": 3})
    'die 1–4: truthful on 1–3, lie on 4'
    >>> describe({"design": "epsilon", "epsilon": 1.0986})
    'ε-randomized response, ε = 1.10'
    """
    return _text(params).summary(params)


def physical_instructions(params: Params, yes: str, no: str) -> str:
    """How a student randomizes by hand with this design (physical mode)."""
    by_hand = _text(params).by_hand
    if by_hand is None:
        return ("Privately use the randomizer your instructor describes, then tap the "
                "answer it tells you to report.")
    return by_hand(params, yes, no)


def phone_animation(params: Params) -> str:
    """What the phone animates while it randomizes ("die", "coins", "spinner", "none")."""
    return _text(params).animation
