"""The numbers of one round: reports, μ̂, its SDs and CI, ε, charts and the rounds
table, for yes/no and histogram questions.

Each question kind registers its panel and its rounds rows in its
:class:`~ui.dashboard.kinds.KindView`; :func:`rounds_table` draws any kind's rows."""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

import ldp_core
from ui import live_charts
from ui.dashboard.formulas import (
    channel_text,
    design_text,
    eps_formula,
    mu_formula,
    sd_formula,
)
from ui.dashboard.shuffle import shuffle_caption
from ui.fmt import fmt_count, fmt_eps, fmt_eps_value, fmt_fixed, fmt_interval, fmt_share
from ui.text import plain


def central_sd_note(n: int, epsilon: float, local_sd: float | None) -> str | None:
    """What the central model would have given at the same ε and n: the Laplace mechanism
    on the count, SD √2/(εn) for the share (Dwork, McSherry, Nissim & Smith 2006)."""
    if n < 1 or not math.isfinite(epsilon) or epsilon <= 0:
        return None
    sd = ldp_core.central_mean_sd(n, epsilon)
    ratio = (f", {local_sd / sd:,.0f}× smaller than the local SD" if local_sd and sd > 0
             else "")
    return (f"A central curator with the same {fmt_eps(epsilon)}, who saw the true "
            f"answers and added Laplace noise to the count, would have had SD "
            f"{fmt_fixed(sd, 4)} (√2/(εn)){ratio}: the price of never trusting the server.")


def _stat(col, label: str, value: str, formula: str | None, help: str | None = None) -> None:
    with col:
        st.metric(label, value, help=help)
        if formula:
            st.caption(formula)


#: The two SDs on screen answer two questions; each says which.
SD_FIXED_CLASS_HELP = (
    "Fixed class: the class's true answers are what they are, and the only randomness is "
    "the die. For the class exercise this is exactly √(3/(4n)) whatever the class's share; "
    "for other designs it is the largest over the class's possible shares.")


SD_POPULATION_HELP = (
    "Students drawn from a population: adds the luck of who is in the class. Estimated from "
    "these reports (Warner's variance estimate); for the class exercise at a true share of "
    "½ it is about √(1/n).")


#: The headline interval says what it guarantees.
CI_HELP = (
    "Exact interval (Clopper–Pearson on the reported share, mapped through the design): "
    "it covers the true share in at least 95% of classes, whatever the share and however "
    "few the reports, and never leaves [0, 1]. μ̂ ± 1.96 SD is its large-n approximation, "
    "which covers less often in small classes.")


def normal_caption(b, z: float) -> str:
    """The normal interval, labelled as what it is: the large-n approximation."""
    return (rf"large-n approximation $\hat\mu \pm {z:.2f}\,\mathrm{{SD}}$ = "
            f"{fmt_interval(b.ci_low, b.ci_high, 3)}")


def binary_panel(q, est, rounds, projector: bool, points, note: str | None) -> None:
    """A yes/no question's round: its numbers, reports, trace, likelihood and rounds
    (``points``: the arrival trajectory; ``note``: the simulated class, or None)."""
    b, counts = est.result.estimate, est.result.counts
    n, v = est.n, est.counts[1]
    one_design = len(counts.groups) == 1
    design = counts.groups[0][0] if one_design else q.design
    yes_label = q.options[1]
    level = b.level
    z = ldp_core.z_quantile(level)

    # On the projector the shuffled ε gets a column of its own, so the row stays one
    # metric high and the numbers below it stay on the first screen.
    top = st.columns(4 if projector else 3)
    _stat(top[0], "Reports received", fmt_count(n), None if projector else "$n$")
    _stat(top[1], f"Reported “{plain(yes_label)}”", f"{fmt_count(v)} of {fmt_count(n)}",
          None if projector else
          rf"$V = {v}$, reported share $V/n = {v}/{n} = {fmt_fixed(b.reported_share, 3)}$")
    _stat(top[2], "Privacy loss ε", fmt_eps_value(est.epsilon),
          None if projector else eps_formula(design, est.epsilon) if one_design else
          "largest ε of the designs used in this round")
    with top[3] if projector else st.container():
        shuffle_caption(est, short=projector)

    mu_help = (f"The estimated share of the class whose true answer is “{plain(yes_label)}”. "
               "Unbiased: on average over the randomization it equals the true share. "
               "It corrects the reported share for the known lies.")
    if projector:  # one row, no formulas: everything on one screen, readable from the back
        row = st.columns([1, 1, 1, 1.5])
        _stat(row[0], "Estimate μ̂", fmt_share(b.mu_hat), None, help=mu_help)
        _stat(row[1], "SD, fixed class", fmt_fixed(b.sd_worst, 3), None,
              help=SD_FIXED_CLASS_HELP)
        _stat(row[2], "SD, population", fmt_fixed(b.sd_plugin, 3), None,
              help=SD_POPULATION_HELP)
        _stat(row[3], f"{level:.0%} CI", fmt_interval(b.exact_low, b.exact_high, 3), None,
              help=CI_HELP)
    else:
        st.markdown(f"**The share whose true answer is “{plain(yes_label)}”**, "
                    "estimated from the randomized reports:")
        row = st.columns([1, 1, 1.45])
        _stat(row[0], "Estimate μ̂", fmt_share(b.mu_hat),
              mu_formula(design, n, v, b.mu_hat) if one_design else
              r"$\hat\mu = \frac{1}{n}\sum_i \frac{y_i - b_i}{a_i - b_i}$ (each report with "
              "its own design)", help=mu_help)
        _stat(row[1], "SD, fixed class", fmt_fixed(b.sd_worst, 3),
              sd_formula(design, n, b.sd_worst) if one_design else "largest over class shares",
              help=SD_FIXED_CLASS_HELP)
        _stat(row[2], f"{level:.0%} CI", fmt_interval(b.exact_low, b.exact_high, 3),
              "exact (Clopper–Pearson), at least 95% at any n; " + normal_caption(b, z),
              help=CI_HELP)
        with row[1]:
            if b.sd_plugin is None:
                st.caption("SD, population (plug-in): needs at least 2 reports.")
            else:
                st.metric("SD, population (plug-in)", fmt_fixed(b.sd_plugin, 3),
                          help=SD_POPULATION_HELP)
                st.caption(r"$\sqrt{\frac{\bar y(1-\bar y)}{(n-1)(a-b)^2}}$ with "
                           r"$\bar y = V/n$" if one_design else
                           "sample SD of the per-report estimates over √n")
    central = None if projector else central_sd_note(n, est.epsilon, b.sd_worst)
    if central:  # at the desk: the projector keeps everything on one screen
        st.caption(central)
    if note:
        st.caption(note)
    if one_design and not projector:
        st.caption(f"Design: {design_text(design)}; " + channel_text(design)
                   + r"; in general $\hat\mu = (V/n - b)/(a - b)$.")
    if n == 1:
        st.info("Only one report so far: the estimate rests on a single randomized answer, "
                "so it can only be one of two values, both possibly outside [0, 1]. The "
                "plug-in SD needs at least two reports.")
    if b.outside_unit_interval and (est.plausibility is None or est.plausibility.fits):
        side = "above 1" if b.mu_hat > 1 else "below 0"
        st.warning(
            f"μ̂ = {fmt_share(b.mu_hat)} is {side}. A share cannot be, but the unbiased "
            "estimator does not know that: it subtracts the expected lies, and with "
            f"n = {n} the randomization noise (SD {fmt_fixed(b.sd_worst, 3)}) can push it past "
            "the edge. Averaged over many classes it is still exactly right, so it is shown "
            f"as it is. The maximum-likelihood estimate, which stays in [0, 1], is "
            f"{fmt_fixed(b.mle, 3)}.")

    left, right = st.columns(2, gap="large")
    with left:
        st.markdown("**Reports received** (randomized answers)")
        live_charts.show(live_charts.reported_counts(q.options, est.counts), big=projector,
                         max_height=live_charts.PROJECTOR_MAIN_HEIGHT)
    with right:
        st.markdown(f"**μ̂ and its {level:.0%} CI as reports arrive**")
        rows = [{"n": p.n, "mu": p.mu_hat, "lo": p.ci_low, "hi": p.ci_high} for p in points]
        live_charts.show(live_charts.estimate_trace(rows, level=level), big=projector,
                         max_height=live_charts.PROJECTOR_MAIN_HEIGHT)
        st.caption("After the first n reports of this round, in the order they arrived.")

    left, right = st.columns(2, gap="large")
    with left:
        st.markdown("**Log-likelihood of the true share μ**")
        grid = np.linspace(0.0, 1.0, 201)
        crit = ldp_core.chi2_1_quantile(level)
        live_charts.show(live_charts.log_likelihood(
            grid, counts.log_likelihood(grid), top=counts.log_likelihood(b.mle), mle=b.mle,
            lr_low=b.lr_low, lr_high=b.lr_high, critical=crit, level=level), big=projector)
        st.caption(
            f"MLE = {fmt_fixed(b.mle, 3)}: the share in [0, 1] that makes these reports most "
            f"likely. {level:.0%} likelihood-ratio interval "
            f"{fmt_interval(b.lr_low, b.lr_high, 3)}: every μ whose log-likelihood is within "
            f"{fmt_fixed(crit / 2, 2)} of the maximum (the horizontal line).")
    with right:
        if not _rounds_chart(q, est, rounds, projector):
            st.markdown("**Reading the numbers**")
            st.markdown(
                "- **μ̂** corrects the reported share for the lies the design adds; it is "
                "unbiased, so it may leave [0, 1] when n is small.\n"
                "- **SD, fixed class**: how far μ̂ would move if this same class answered "
                "again with fresh dice. **SD, population**: how far it would move with "
                "another class drawn from the same population; larger, because it also "
                "counts who happens to be in the class.\n"
                "- **95% CI**: the exact interval; it covers the true share in at least "
                "95% of classes at any n and stays inside [0, 1]. μ̂ ± 1.96 SD is its "
                "large-n approximation (it covers less in small classes); the "
                "**likelihood-ratio interval** (left) stays inside [0, 1] too.\n"
                "- **ε** bounds how much one report can reveal: the odds between the two "
                "true answers change by at most e^ε.")
    rounds_table(binary_rounds(q, est, rounds))


def _round_row(number: int, r, e) -> dict:
    """A rounds table's first columns: the round, its design, ε and n."""
    return {"Round": str(number), "Design": design_text(r.design) if r else "—",
            "ε": fmt_eps_value(r.epsilon) if r else "—", "n": fmt_count(e.n)}


def binary_rounds(q, est, rounds) -> list[dict]:
    """A yes/no question's rounds table: every round's μ̂, SD and CI, round 1 first."""
    designs = {r.number: r for r in rounds}
    rows: list[dict] = []
    for number, e in est.history:
        row = _round_row(number, designs.get(number), e)
        row.update({"μ̂": fmt_share(e.mu_hat), "SD": fmt_fixed(e.sd_worst, 3),
                    f"{e.level:.0%} CI": fmt_interval(e.exact_low, e.exact_high, 3)})
        rows.append(row)
    return rows


def categorical_rounds(q, est, rounds) -> list[dict]:
    """A categorical question's rounds table: every round's raw unbiased shares (the
    estimates the phones show), round 1 first."""
    designs = {r.number: r for r in rounds}
    rows: list[dict] = []
    for number, e in est.history:
        row = _round_row(number, designs.get(number), e)
        shares = e.shares("raw")
        for i, opt in enumerate(q.options):
            row[f"{plain(opt)} (raw)"] = fmt_share(shares[i]) if shares else "—"
        rows.append(row)
    return rows


def rounds_table(rows: list[dict]) -> None:
    """Every round's estimate, listed (once there is more than one round): a kind's
    rounds rows (:attr:`~ui.dashboard.kinds.KindView.rounds`)."""
    if len(rows) > 1:
        st.markdown("**Rounds**: each round's estimate (earlier rounds are kept)")
        st.table(rows)


def _rounds_chart(q, est, rounds, projector: bool) -> bool:
    """μ̂ and its CI per round, when there are several rounds; False if nothing was drawn."""
    chart_rows = [{"round": number, "n": e.n, "mu": e.mu_hat, "lo": e.exact_low,
                   "hi": e.exact_high} for number, e in est.history]
    fig = live_charts.estimate_by_round(chart_rows) if len(chart_rows) > 1 else None
    if fig is None:
        return False
    st.markdown("**Each round's estimate** and its 95% CI")
    live_charts.show(fig, big=projector)
    return True


def _oracle_name(design) -> str:
    """GRR, SUE, OUE or unary encoding: the short name of a frequency oracle."""
    params = design.params()
    if params.get("design") == "grr":
        return "GRR"
    if params.get("design") == "ue":
        p, q = params["p"], params["q"]
        if math.isclose(p, 0.5):
            return "OUE"
        if math.isclose(p + q, 1.0):
            return "SUE"
        return "Unary"
    return str(params.get("design", "?")).upper()


#: What the categorical question's error bars are (its "?" help).
CATEGORICAL_CI_HELP = (
    "Each option is a yes/no question of its own: a report supports the option with "
    "probability a when the student's true answer is that option and b otherwise (unary "
    "encoding: the bit's p and q; GRR: p and (1 − p)/(d − 1)). The CI is the exact "
    "Clopper–Pearson interval for that probability, mapped through a and b and clipped to "
    "[0, 1], as for a yes/no question: it covers the option's true share in at least 95% "
    "of classes at every share and every class size, and is never empty. It holds option "
    "by option, not for all options at once. The normal interval (raw ± 1.96 SD) is only "
    "the large-n approximation: it covers less at classroom sizes.")


def _option_intervals(c) -> tuple[list[float | None], list[float | None]]:
    """Each option's exact 95% CI (None while there are no reports)."""
    if c.ci_low is None or c.ci_high is None:
        return [None] * len(c.support_counts), [None] * len(c.support_counts)
    return list(c.ci_low), list(c.ci_high)


def categorical_panel(q, est, rounds, projector: bool, points, note: str | None) -> None:
    """A categorical question's round: each option's estimated share with its CI, the
    reports and the rounds (``points``, the arrival trajectory, is not drawn; ``note``: the
    simulated class, or None)."""
    c = est.result
    n = est.n
    level = 0.95
    # On the projector the status line above already names the design in full; the row
    # keeps one metric's height, the shuffled ε in a column of its own.
    top = st.columns(4 if projector else 3)
    _stat(top[0], "Reports received", fmt_count(n), None if projector else "$n$")
    _stat(top[1], "Privacy loss ε", fmt_eps_value(est.epsilon), None)
    _stat(top[2], "Design", _oracle_name(q.design), None if projector else
          design_text(q.design))
    with top[3] if projector else st.container():
        shuffle_caption(est, short=projector)
    if note:
        st.caption(note)
    names = ldp_core.POSTPROCESSING
    st.markdown(f"**Estimated share of each option** (exact {level:.0%} CI)" if projector
                else "**Estimated share of each option**: raw unbiased, then post-processed; "
                f"the error bars are each option's exact {level:.0%} CI",
                help=CATEGORICAL_CI_HELP)
    lows, highs = _option_intervals(c)
    # On the projector the legend is one row (Norm-Sub named short: the table below has
    # its full name), so the chart leaves room above the control bar for its notice line.
    legend = dict(names, norm_sub="Norm-Sub (sums to 1)") if projector else names
    live_charts.show(live_charts.histogram(
        q.options, {legend["raw"]: c.shares("raw"), legend["clip"]: c.shares("clipped"),
                    legend["norm_sub"]: c.shares("norm_sub")}, lows, highs,
        every_label=projector), big=projector,
        # Slanted labels of many options take height of their own below the plot.
        max_height=live_charts.PROJECTOR_MAIN_HEIGHT - (40 if len(q.options) > 6 else 0))
    raw, clipped, normsub = c.shares("raw"), c.shares("clipped"), c.shares("norm_sub")
    table = []
    for i, opt in enumerate(q.options):
        table.append({
            "Option": plain(opt),
            "Reports supporting it": fmt_count(c.support_counts[i]),
            names["raw"]: fmt_share(raw[i]),
            f"Exact {level:.0%} CI": fmt_interval(lows[i], highs[i], 3),
            names["clip"]: fmt_share(clipped[i]),
            names["norm_sub"]: fmt_share(normsub[i]),
        })
    st.table(table)
    if any(x < 0 for x in c.raw):
        st.warning("Some raw estimates are negative. The raw estimate is unbiased: it "
                   "subtracts the expected noise, so a rare option can land below 0 at this n. "
                   "Clipping sets negatives to 0 (the total then drifts above n); Norm-Sub "
                   "subtracts one constant from every count and clips, so the shares sum to 1. "
                   "Both are post-processing: no privacy cost, but a little bias.")
    left, right = st.columns(2, gap="large")
    with left:
        st.markdown("**Reports received**: how many reports support each option")
        live_charts.show(live_charts.reported_counts(
            q.options, c.support_counts, value_title="supporting reports"), big=projector)
    with right:
        st.markdown("**Reading the histogram**")
        st.markdown(
            f"- **{names['raw']}**: unbiased for each option; its bars can dip below 0.\n"
            f"- **{names['clip']}**: negatives set to 0.\n"
            f"- **{names['norm_sub']}**: one constant subtracted from every count, then "
            "clipped, so the shares sum to 1.\n"
            "- Post-processing costs no privacy, but adds a little bias.")
    rounds_table(categorical_rounds(q, est, rounds))
