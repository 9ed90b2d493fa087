"""The live panel: refreshed every 2 s from one read of the service, with the status
line and the warnings (implausible reports, network addresses); the round's numbers are
its kind's panel (:attr:`ui.dashboard.kinds.KindView.results`)."""

from __future__ import annotations

import streamlit as st

from classroom.domain import ClassroomError
from ui import session
from ui.dashboard.actions import rehearsal_tick, simulated_class_note
from ui.dashboard.estimates import rounds_table
from ui.dashboard.formulas import design_text
from ui.dashboard.kinds import view
from ui.dashboard.stuffing import implausible_reports_warning, stuffing_check_help
from ui.fmt import fmt_count, fmt_eps


def _status_line(q, est) -> str:
    state = {"open": ":green[:material/how_to_vote: **Voting open**]",
             "closed": ":red[:material/block: **Voting closed**]",
             "draft": ":gray[:material/edit_note: **Not open yet**]"}.get(q.state, q.state)
    design = design_text(q.design)
    # Some designs name their ε already ("Hybrid Mechanism on [0, 12], ε = 1.10"): it is
    # said once.
    parts = [state, f"round {q.round_number}", design]
    if "ε =" not in design:
        parts.append(fmt_eps(q.epsilon))
    if est.n_simulated:
        parts.append(f"{fmt_count(est.n_simulated)} simulated")
    return " · ".join(parts)


@st.fragment(run_every=2)
def live_panel(question_id: int, projector: bool) -> None:
    """Reports, estimate, SD, CI and ε of the chosen question, refreshed every 2 s."""
    if not session.is_instructor():
        return
    rehearsal_tick(question_id)
    try:
        snap = session.service().results.dashboard_snapshot(question_id)  # one read transaction
    except ClassroomError as exc:
        st.warning(f"{exc}")
        return
    q, est, rounds = snap.question, snap.estimate, list(snap.rounds)
    st.markdown(_status_line(q, est))
    if not projector and est.n:
        st.caption(distinct_addresses_note(est))
    warning = implausible_reports_warning(q, est)
    if warning and (q.revealed or not projector):
        st.error(warning, icon=":material/report:")
    if not projector:
        with st.expander("What the stuffing check can and cannot see"):
            st.markdown(stuffing_check_help(q))
    if not q.revealed:
        st.markdown(":orange[:material/visibility_off: **Results hidden**]")
        st.metric("Reports received", fmt_count(est.n))
        st.info("Results are hidden so the class is not primed: only the count shows. "
                "Press **Reveal results** when voting is done.")
        return
    if est.n == 0:
        st.metric("Reports received", "0")
        st.info("No reports yet: the estimate appears with the first report. "
                "(With n = 0 there is nothing to estimate.)")
        if len(est.history) > 1:
            rounds_table(view(q.kind).rounds(q, est, rounds))
        return
    view(q.kind).results(q, est, rounds, projector, snap.trajectory,
                         simulated_class_note(q, est.n_simulated))


def distinct_addresses_note(est) -> str:
    """How many network addresses this round's reports came from, in words."""
    real = est.n - est.n_simulated
    if not est.addresses:
        return ("No network addresses were recorded for these reports (simulated or "
                "imported).") if real == 0 else ("Network addresses: not recorded for these "
                                                  "reports.")
    return (f"{fmt_count(real)} report{'s' if real != 1 else ''} from students came from "
            f"{fmt_count(est.addresses)} "
            f"network address{'es' if est.addresses != 1 else ''}. On a lecture-hall "
            "network this is about the number of phones; behind one router (NAT) many "
            "phones share one address. Many reports from few addresses on a network where "
            "each phone has its own address suggest repeated votes.")
