"""The words of the check against ballot stuffing (ldp_core's plausibility checks): the
warning when the reports fit no class, and what the check can and cannot see."""

from __future__ import annotations

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
    kind = getattr(q.design, "kind", "")
    if q.kind == "numeric":
        sees = (
            "**What it sees.** At every refresh the reports are compared with the honest "
            "class most likely to send them: everyone at the top of the range (or the "
            "bottom). Is the mean beyond the range? Is one report further out than a phone "
            "sends? Are there more reports near an end than that class sends? Many copies of "
            "the largest report, or one report far out, are caught, beside a class at the "
            "top or in the middle. With Duchi et al.'s mechanism each report is one bit: "
            "stuffing shows only when it pushes the share of the larger report beyond what a "
            "class at the top sends, so beside a mid-range class it can hide.")
        errs = _ERRS
    elif q.kind == "binary":
        sees = (
            "**What it sees.** At every refresh the count of “yes” reports is compared with "
            "the honest class most likely to send it: everyone truly answering “yes” (or "
            "everyone “no”). Repeated “yes” votes beyond what even that class reports are "
            "caught; repeated votes that keep the count inside what some class could report "
            "are not.")
        errs = _ERRS
    elif kind == "grr":
        sees = (
            "**What it sees.** At every refresh each option's count is compared with the "
            "class where everyone (or no one) chose that option. An option named far more "
            "often than even that class would name it is caught; votes that keep every "
            "count inside what some class could report are not.")
        errs = _ERRS
    else:
        sees = (
            "**What it sees.** Under unary encoding the number of 1s in a report has the "
            "same law for every true answer: at every refresh the reports' counts of 1s are "
            "compared with it. Reports like “11111” are caught; forged reports with a "
            "typical number of 1s are not.")
        errs = ("**How often it errs.** An honest class raises it about 3 times in 10,000 "
                "questions at most (its chi-squared approximation is a little generous in "
                "small classes; measured).")
    return f"{sees}\n\n{errs}\n\n{_STEALTHY}"
