"""What the dashboard's buttons do: one callback per action, each through the service,
a refusal shown as a message (never a traceback), and the rehearsal's simulated
students arriving batch by batch."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import streamlit as st

from classroom.domain import ClassroomError, sentence
from ui import session
from ui.dashboard.kinds import view
from ui.dashboard.selection import (
    EXERCISE_OPTIONS,
    EXERCISE_TEXT,
    FLASH,
    QID,
    exercise_design,
    select,
)
from ui.fmt import fmt_count, fmt_eps


def flash(kind: str, text: str) -> None:
    st.session_state.setdefault(FLASH, []).append((kind, text))


def show_flash(projector: bool = False) -> None:
    """Messages from the last action; on the projector a success is a passing toast.

    Always one container, messages or not: everything below keeps its place on the page,
    so an open expander stays open after an action.
    """
    box = st.container()
    for kind, text in st.session_state.pop(FLASH, []):
        if projector and kind == "success":
            st.toast(text)
        else:
            getattr(box, kind)(text)


T = TypeVar("T")


def run_action(action: Callable[[], T], ok: str | None = None) -> T | None:
    """Run a service action for the instructor; a refusal becomes a message, never a traceback."""
    if not session.is_instructor():
        flash("error", "Only the instructor can do that. Log in on the I'm teaching page.")
        return None
    try:
        result = action()
    except (ClassroomError, ValueError) as exc:
        flash("error", sentence(exc))
        return None
    if ok:
        flash("success", ok)
    return result


def cb_start_exercise(poll_id: int | None) -> None:
    def go() -> tuple[int, int]:
        svc = session.service()
        pid = poll_id if poll_id is not None else svc.polls.create_poll("Class exercise").id
        q = svc.polls.add_question(pid, EXERCISE_TEXT, options=EXERCISE_OPTIONS,
                                   design_params=exercise_design(), kind="binary", mode="device",
                                   open_now=True)
        return pid, q.id

    done = run_action(go, "Voting is open for the class exercise. Show the join code.")
    if done:
        select(*done)


def cb_create_poll() -> None:
    title = st.session_state.get("dash_new_poll_title", "")
    rehearsal = bool(st.session_state.get("dash_new_poll_rehearsal", False))
    poll = run_action(lambda: session.service().polls.create_poll(title, rehearsal=rehearsal))
    if poll is not None:
        select(poll.id)
        flash("success", f"Poll {poll.join_code} created. Add a question below.")


def cb_delete_poll(poll_id: int, code: str) -> None:
    if not st.session_state.get(f"dash_confirm_delete_{poll_id}"):
        flash("warning", "Tick the box to confirm, then delete.")
        return
    if run_action(lambda: session.service().polls.delete_poll(poll_id),
           f"Poll {code} deleted with its questions, rounds and reports.") is not None:
        select(None)
        for key in ("pid", "qid"):
            if key in st.query_params:
                del st.query_params[key]


def cb_pick_poll() -> None:
    select(st.session_state.get("dash_poll_select"))


def cb_pick_question() -> None:
    st.session_state[QID] = st.session_state.get("dash_question_select")


def cb_open(qid: int) -> None:
    run_action(lambda: session.service().running.open_question(qid), "Voting is open.")


def cb_close(qid: int) -> None:
    run_action(lambda: session.service().running.close_question(qid), "Voting is closed.")


def cb_reveal(qid: int, revealed: bool) -> None:
    run_action(lambda: session.service().running.set_revealed(qid, revealed),
        "Results are shown." if revealed else "Results are hidden: only the count shows.")


def cb_next(qid: int) -> None:
    """Next question: close this one and open the next of the poll (one transaction);
    the dashboard follows to the question now open."""
    done = run_action(lambda: session.service().running.next_question(qid))
    if done is not None:
        _left, opened = done
        select(opened.poll_id, opened.id)
        flash("success", f"Voting is open for Q{opened.position}.")


def cb_new_round(qid: int, params: dict[str, Any] | None, open_key: str | None = None
                 ) -> None:
    open_now = bool(st.session_state.get(open_key)) if open_key else False
    r = run_action(lambda: session.service().running.new_round(qid, params, open_now=open_now))
    if r is not None:
        flash("success", f"Round {r.number} started"
               + (" and voting is open." if open_now else ". Open voting when ready.")
               + " Earlier rounds stay in the history.")


def cb_add_question(poll_id: int, spec: dict[str, Any], open_key: str) -> None:
    open_now = bool(st.session_state.get(open_key))
    # One call: a question refused (over the privacy budget, say) is not added at all.
    q = run_action(lambda: session.service().polls.add_question(poll_id, **spec, open_now=open_now))
    if q is not None:
        select(poll_id, q.id)
        flash("success", "Question added" + (" and voting is open." if open_now else
                                               ". Open voting when ready."))


def cb_delete_question(qid: int) -> None:
    if not st.session_state.get(f"dash_confirm_delete_q_{qid}"):
        flash("warning", "Tick the box to confirm, then delete.")
        return
    if run_action(lambda: session.service().polls.delete_question(qid),
                  "Question deleted.") is not None:
        st.session_state.pop(QID, None)


def cb_projector(on: bool) -> None:
    if on:
        st.query_params["projector"] = "1"
    elif "projector" in st.query_params:
        del st.query_params["projector"]


#: Simulated students arrive over this many live-panel refreshes (2 s each).
_ARRIVAL_TICKS = 5


_REHEARSAL = "dash_rehearsal_plan"


#: The simulated class's true answers, counted per option (only simulated students).
_SIM_CLASS = "dash_simulated_class"


def cb_simulate(qid: int, shares: float | Sequence[float]) -> None:
    """Plan a rehearsal class; the live panel lets it arrive batch by batch."""
    if not session.is_instructor():
        flash("error", "Only the instructor can do that. Log in on the I'm teaching page.")
        return
    n = int(st.session_state.get("dash_sim_n", 40))
    truths = run_action(lambda: session.service().results.rehearsal_class(qid, n, shares))
    if truths is None:
        return
    st.session_state[_REHEARSAL] = {"qid": qid, "truths": list(truths),
                                    "batch": max(1, -(-n // _ARRIVAL_TICKS))}
    tally = st.session_state.get(_SIM_CLASS)
    if not tally or tally["qid"] != qid:
        tally = {"qid": qid, "counts": [], "value_sum": 0.0}
    counts, value_sum = list(tally["counts"]), float(tally.get("value_sum", 0.0))
    for v in truths:
        if isinstance(v, float):  # a numeric question: its values, summed for their mean
            counts = counts or [0]
            counts[0] += 1
            value_sum += v
        else:
            counts += [0] * (v + 1 - len(counts))
            counts[v] += 1
    st.session_state[_SIM_CLASS] = {"qid": qid, "counts": counts, "value_sum": value_sum}
    flash("info", f"{n} simulated students are arriving over the next few seconds.")


def rehearsal_tick(question_id: int) -> None:
    """Let the next batch of a planned rehearsal class answer (same path as real reports)."""
    plan = st.session_state.get(_REHEARSAL)
    if not plan or plan["qid"] != question_id:
        return
    batch, rest = plan["truths"][:plan["batch"]], plan["truths"][plan["batch"]:]
    try:
        session.service().results.add_simulated_answers(question_id, batch)
    except ClassroomError as exc:
        st.session_state.pop(_REHEARSAL, None)
        st.warning(f"Rehearsal stopped: {exc}")
        return
    plan["truths"] = rest
    if not rest:
        st.session_state.pop(_REHEARSAL, None)


def simulated_class_note(question, n_simulated: int) -> str | None:
    """"Simulated class: 24 of 40 truly Vanilla (60%)": what the rehearsal's CI is about."""
    tally = st.session_state.get(_SIM_CLASS)
    if not tally or tally["qid"] != question.id or not n_simulated:
        return None
    counts = tally["counts"]
    total = sum(counts)
    if total != n_simulated:  # still arriving, or cleared elsewhere
        return None
    return view(question.kind).class_note(question, tally, total)


def cb_stuff(qid: int) -> None:
    """Add the rehearsal's stuffers: fake users who always send the report that pushes the
    chosen target (simulated reports, removed by Clear rehearsal)."""
    n = int(st.session_state.get("dash_stuff_n", 10))
    target = st.session_state.get(f"dash_stuff_target_{qid}")
    done = run_action(lambda: session.service().results.add_stuffed_reports(qid, n, target=target))
    if done is not None:
        flash("warning", f"{fmt_count(done)} stuffed reports added (simulated): each one "
               "pushes the target as far as a report can. Watch the estimate, and the "
               "warning once the reports leave what the design can produce.")


def cb_clear_simulated(qid: int) -> None:
    st.session_state.pop(_REHEARSAL, None)
    st.session_state.pop(_SIM_CLASS, None)
    removed = run_action(lambda: session.service().results.clear_simulated(qid))
    if removed is not None:
        flash("success", f"{removed} simulated reports removed; real reports are untouched.")


def cb_set_budget(poll_id: int) -> None:
    """Save the poll's budget from the budget panel (none when its box is unticked)."""
    on = bool(st.session_state.get(f"dash_budget_on_{poll_id}"))
    value = st.session_state.get(f"dash_budget_value_{poll_id}") if on else None
    ok = (f"Budget set: a student can spend at most {fmt_eps(float(value))} in this poll."
          if value is not None else "No budget: the poll's ε is not capped.")
    run_action(lambda: session.service().polls.set_budget(poll_id, value), ok)
