"""One line beside ε: what the same reports would guarantee through a shuffler.

The number comes from the read model (``QuestionEstimate.shuffle``, computed by
ldp_core and cached there); this module only words it.
"""

from __future__ import annotations

import math

import streamlit as st

from ui.fmt import fmt_count, fmt_power, fmt_up

__all__ = ["shuffle_caption", "shuffle_line"]

_WHY = (
    "A shuffler (a mix-net, or a trusted party between the phones and the server) must "
    "strip identity and timing from every report and pass the reports on in random order; "
    "then each report hides among the others. This server is not one: it knows which "
    "device cookie sent each report, even if it stores only a per-round HMAC of it. So "
    "this line shows what the same reports would guarantee through one.")
_EXACT = ("Exact for this yes/no design: the shuffled count of 1-reports, in the worst case "
          "over every class the other students could form.")
_BOUND = ("An upper bound that holds for any randomizer with this ε (Feldman, McMillan & "
          "Talwar, “Hiding Among the Clones”, 2021); the true value may be smaller.")
_MIXED = ("This round mixes designs: a report hides only among reports of its own design, "
          "so the line shows the worst of them.")


def shuffle_line(est, *, short: bool = False) -> tuple[str, str] | None:
    """``(line, help)`` for an estimate, or None while the round has no report.

    The ε is rounded up: a guarantee errs toward privacy. ``short`` is the projector's
    form, which fits under the ε it sits beside; its help carries the whole sentence.
    """
    g = est.shuffle
    if g is None:
        return None
    reports = f"these {fmt_count(est.n)} report{'s' if est.n != 1 else ''}"
    relation = "=" if g.exact or math.isinf(g.epsilon) else "≤"
    if math.isinf(g.epsilon):
        sentence = (f"Even anonymised by a shuffler, {reports} could reveal answers outright: "
                    "this design has no finite ε.")
    else:
        dp = f"(ε, {fmt_power(g.delta)})\u2011DP"  # a non-breaking hyphen keeps "-DP" on its line
        sentence = (f"Anonymised by a shuffler, {reports} would be {dp} with ε {relation} "
                    f"{fmt_up(g.epsilon)} ({'exact' if g.exact else 'bound'})")
    parts = [_WHY, _EXACT if g.exact else _BOUND, "Rounded up."]
    if g.n != est.n:
        parts.append(_MIXED)
    if short:
        return f"Shuffled: ε {relation} {fmt_up(g.epsilon)}", " ".join([f"{sentence}.", *parts])
    return sentence, " ".join(parts)


def shuffle_caption(est, *, short: bool = False) -> None:
    """Draw the line (the short form on the projector), nothing while there is no report."""
    found = shuffle_line(est, short=short)
    if found is not None:
        st.caption(found[0], help=found[1])
