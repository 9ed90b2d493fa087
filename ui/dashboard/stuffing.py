"""The words of the check against ballot stuffing (ldp_core's plausibility checks): the
warning when the reports fit no class, and what the check can and cannot see."""

from __future__ import annotations

from ui.dashboard.kinds import view
from ui.text import plain

__all__ = ["implausible_reports_warning", "stuffing_check_help"]


def implausible_reports_warning(q, est) -> str | None:
    """Plain words when the reports fit the design for no class at all (ballot stuffing?)."""
    check = est.plausibility
    if check is None or check.fits:
        return None
    yes = plain(q.options[1]) if len(q.options) > 1 else ""
    what = {
        "too_many_yes": f"more “{yes}” than even a class where everyone truly prefers "
                        f"“{yes}” would report",
        "too_few_yes": f"fewer “{yes}” than even a class where nobody truly prefers "
                       f"“{yes}” would report",
        "too_many_ones": "more 1s per report than the phones' randomizer produces "
                         "(reports like “11111”)",
        "too_few_ones": "fewer 1s per report than the phones' randomizer produces",
        "option_too_often": "one option named more often than even a class where everyone "
                            "truly chose it would name it",
        "option_too_rarely": "one option named more rarely than even a class where nobody "
                             "chose it would name it",
        "above_range": "a mean above the largest possible answer, further than the noise "
                       "can carry it",
        "below_range": "a mean below the smallest possible answer, further than the noise "
                       "can carry it",
        "too_many_high": "more reports near the top than even a class where everyone gave "
                         "the largest answer would send",
        "too_many_low": "more reports near the bottom than even a class where everyone "
                        "gave the smallest answer would send",
        "extreme_high": "a report so far above the range that no honest phone sends one "
                        "like it, whatever its student's answer",
        "extreme_low": "a report so far below the range that no honest phone sends one "
                       "like it, whatever its student's answer",
    }.get(check.direction or "", "a pattern the design cannot produce")
    cause = ("a forged report (one is enough to move the mean)"
             if (check.direction or "").startswith("extreme") else
             "repeated votes from one device (ballot stuffing), or students not following "
             "the randomizer")
    return (f"**These reports do not fit the design**: {what} "
            f"(p = {check.p_value:.1g}, below {check.alpha:g}). This is not randomization "
            f"noise. Likely cause: {cause}. The estimate below is not reliable.")


_ERRS = ("**How often it errs.** An honest class raises it at most once in 10,000 "
         "questions (significance 10⁻⁴), at any class size from one report on: each p-value "
         "is computed against that most extreme honest class.")
_STEALTHY = ("**What it cannot see.** Stuffing that stays within what some class could send: a "
             "forged client that randomizes its reports as a phone would for some true answer "
             "(stealthy stuffing) sends reports no test can tell from a student's. Compare "
             "*Reports received* with the number of students in the room, and read the line "
             "on network addresses.")


def stuffing_check_help(q) -> str:
    """What the check on this question's reports compares, how often it errs on honest
    classes, and what it cannot see (markdown)."""
    sees, errs = view(q.kind).check_help(q)
    return f"{sees}\n\n{errs or _ERRS}\n\n{_STEALTHY}"
