"""The instructor dashboard: run the class exercise live and project it.

Layout and widgets only. Every number comes from ``PollService`` (storage and
estimates) or ``ldp_core`` (what-if designs, formula coefficients); charts are
in :mod:`ui.live_charts`. The module only defines functions: ``app.py``
registers :func:`render` for instructors, and :func:`render` checks access
again itself, so running this file directly shows nothing and a non-instructor
sees only a login hint.

Two modes:

* at the desk: pick or create a poll and questions, control voting, explore
  what-if designs, export;
* projection (``?projector=1``): no navigation and no sidebar, large
  high-contrast type, the join code, the QR code and the live panel, and a
  compact row of controls.

Which poll and question is shown lives in this session (``_dash_pid``,
``_dash_qid``) and is mirrored in the URL (``?pid=..&qid=..``) so a reload,
or projection mode, keeps it.
"""

from __future__ import annotations

import html
import io
import math
from collections.abc import Callable
from fractions import Fraction
from urllib.parse import urlsplit

import numpy as np
import streamlit as st

import ldp_core
from classroom import config
from classroom.domain import CLASS_EXERCISE, ClassroomError
from ldp_core.formulas import privacy_ratio, unbiased_coefficients, worst_variance_unit
from ui import live_charts, session
from ui.fmt import fmt_count, fmt_fixed, fmt_interval
from ui.text import html_text, plain

__all__ = ["render"]

EXERCISE_TEXT = "Vanilla (1) or chocolate (0)?"
EXERCISE_OPTIONS = ("Chocolate", "Vanilla")

# Session-state keys that no widget uses.
_PID = "_dash_pid"
_QID = "_dash_qid"
_FLASH = "_dash_flash"

_EPS_RANGE = (0.01, 5.0)
#: The two ranges map onto each other (ε = ln((1+2γ)/(1−2γ)) at the shown precision), so
#: neither slider is ever clamped and the labels always agree with both.
_GAMMA_RANGE = (0.002, 0.493)


def _exercise_design() -> dict:
    """The class exercise (CS208): a die 1-4, tell the truth on 1-3, lie on 4."""
    return dict(CLASS_EXERCISE)


# -- entry point ----------------------------------------------------------------------------


def render() -> None:
    """The dashboard page; for anyone but the instructor, only a login hint."""
    if not session.is_instructor():
        st.title("Dashboard")
        st.info("The dashboard is for the instructor. Log in on the **I'm teaching** page "
                "([open it](/teach)) with the instructor key.")
        return
    projector = "projector" in st.query_params
    _css(projector)
    try:
        svc = session.service()
        polls = svc.list_polls()
    except ClassroomError as exc:
        st.error(f"The dashboard cannot reach its database: {exc}")
        return
    if projector:
        _render_projector(svc, polls)
    else:
        _render_desk(svc, polls)


# -- actions (button callbacks) -------------------------------------------------------------


def _flash(kind: str, text: str) -> None:
    st.session_state.setdefault(_FLASH, []).append((kind, text))


def _show_flash(projector: bool = False) -> None:
    """Messages from the last action; on the projector a success is a passing toast.

    Always one container, messages or not: everything below keeps its place on the page,
    so an open expander stays open after an action.
    """
    box = st.container()
    for kind, text in st.session_state.pop(_FLASH, []):
        if projector and kind == "success":
            st.toast(text)
        else:
            getattr(box, kind)(text)


def _do(action: Callable[[], object], ok: str | None = None) -> object | None:
    """Run a service action for the instructor; a refusal becomes a message, never a traceback."""
    if not session.is_instructor():
        _flash("error", "Only the instructor can do that. Log in on the I'm teaching page.")
        return None
    try:
        result = action()
    except (ClassroomError, ValueError) as exc:
        _flash("error", str(exc))
        return None
    if ok:
        _flash("success", ok)
    return result


def _select(pid: int | None, qid: int | None = None) -> None:
    if pid is None:
        st.session_state.pop(_PID, None)
    else:
        st.session_state[_PID] = pid
    if qid is None:
        st.session_state.pop(_QID, None)
    else:
        st.session_state[_QID] = qid


def _cb_start_exercise(poll_id: int | None) -> None:
    def go():
        svc = session.service()
        pid = poll_id if poll_id is not None else svc.create_poll("Class exercise").id
        q = svc.add_question(pid, EXERCISE_TEXT, options=EXERCISE_OPTIONS,
                             design_params=_exercise_design(), kind="binary", mode="device")
        svc.open_question(q.id)
        return pid, q.id

    done = _do(go, "Voting is open for the class exercise. Show the join code.")
    if done:
        _select(*done)


def _cb_create_poll() -> None:
    title = st.session_state.get("dash_new_poll_title", "")
    rehearsal = bool(st.session_state.get("dash_new_poll_rehearsal", False))
    poll = _do(lambda: session.service().create_poll(title, rehearsal=rehearsal))
    if poll is not None:
        _select(poll.id)
        _flash("success", f"Poll {poll.join_code} created. Add a question below.")


def _cb_delete_poll(poll_id: int, code: str) -> None:
    if not st.session_state.get(f"dash_confirm_delete_{poll_id}"):
        _flash("warning", "Tick the box to confirm, then delete.")
        return
    if _do(lambda: session.service().delete_poll(poll_id),
           f"Poll {code} deleted with its questions, rounds and reports.") is not None:
        _select(None)
        for key in ("pid", "qid"):
            if key in st.query_params:
                del st.query_params[key]


def _cb_pick_poll() -> None:
    _select(st.session_state.get("dash_poll_select"))


def _cb_pick_question() -> None:
    st.session_state[_QID] = st.session_state.get("dash_question_select")


def _cb_open(qid: int) -> None:
    _do(lambda: session.service().open_question(qid), "Voting is open.")


def _cb_close(qid: int) -> None:
    _do(lambda: session.service().close_question(qid), "Voting is closed.")


def _cb_reveal(qid: int, revealed: bool) -> None:
    _do(lambda: session.service().set_revealed(qid, revealed),
        "Results are shown." if revealed else "Results are hidden: only the count shows.")


def _cb_new_round(qid: int, params: dict | None, open_key: str | None = None) -> None:
    open_now = bool(st.session_state.get(open_key)) if open_key else False
    r = _do(lambda: session.service().new_round(qid, params, open_now=open_now))
    if r is not None:
        _flash("success", f"Round {r.number} started"
               + (" and voting is open." if open_now else ". Open voting when ready.")
               + " Earlier rounds stay in the history.")


def _cb_add_question(poll_id: int, spec: dict, open_key: str) -> None:
    open_now = bool(st.session_state.get(open_key))

    def go():
        svc = session.service()
        q = svc.add_question(poll_id, **spec)
        if open_now:
            svc.open_question(q.id)
        return q

    q = _do(go)
    if q is not None:
        _select(poll_id, q.id)
        _flash("success", "Question added" + (" and voting is open." if open_now else
                                               ". Open voting when ready."))


def _cb_delete_question(qid: int) -> None:
    if not st.session_state.get(f"dash_confirm_delete_q_{qid}"):
        _flash("warning", "Tick the box to confirm, then delete.")
        return
    if _do(lambda: session.service().delete_question(qid), "Question deleted.") is not None:
        st.session_state.pop(_QID, None)


def _cb_projector(on: bool) -> None:
    if on:
        st.query_params["projector"] = "1"
    elif "projector" in st.query_params:
        del st.query_params["projector"]


#: Simulated students arrive over this many live-panel refreshes (2 s each).
_ARRIVAL_TICKS = 5
_REHEARSAL = "dash_rehearsal_plan"
#: The simulated class's true answers, counted per option (only simulated students).
_SIM_CLASS = "dash_simulated_class"


def _cb_simulate(qid: int, shares: object) -> None:
    """Plan a rehearsal class; the live panel lets it arrive batch by batch."""
    if not session.is_instructor():
        _flash("error", "Only the instructor can do that. Log in on the I'm teaching page.")
        return
    n = int(st.session_state.get("dash_sim_n", 40))
    truths = _do(lambda: session.service().rehearsal_class(qid, n, shares))
    if truths is None:
        return
    st.session_state[_REHEARSAL] = {"qid": qid, "truths": list(truths),
                                    "batch": max(1, -(-n // _ARRIVAL_TICKS))}
    tally = st.session_state.get(_SIM_CLASS)
    if not tally or tally["qid"] != qid:
        tally = {"qid": qid, "counts": [0] * (max(truths) + 1)}
    counts = tally["counts"] + [0] * (max(truths) + 1 - len(tally["counts"]))
    for v in truths:
        counts[v] += 1
    st.session_state[_SIM_CLASS] = {"qid": qid, "counts": counts}
    _flash("info", f"{n} simulated students are arriving over the next few seconds.")


def _rehearsal_tick(question_id: int) -> None:
    """Let the next batch of a planned rehearsal class answer (same path as real reports)."""
    plan = st.session_state.get(_REHEARSAL)
    if not plan or plan["qid"] != question_id:
        return
    batch, rest = plan["truths"][:plan["batch"]], plan["truths"][plan["batch"]:]
    try:
        session.service().add_simulated_answers(question_id, batch)
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
    if question.kind == "binary":
        yes = counts[1] if len(counts) > 1 else 0
        return (f"Simulated class: {fmt_count(yes)} of {fmt_count(total)} truly "
                f"“{plain(question.options[1])}” ({yes / total:.0%}), the share the 95% CI "
                "is about.")
    parts = ", ".join(f"{plain(opt)} {c}" for opt, c in zip(question.options, counts, strict=True))
    return f"Simulated class (true answers): {parts}."


def _cb_clear_simulated(qid: int) -> None:
    st.session_state.pop(_REHEARSAL, None)
    st.session_state.pop(_SIM_CLASS, None)
    removed = _do(lambda: session.service().clear_simulated(qid))
    if removed is not None:
        _flash("success", f"{removed} simulated reports removed; real reports are untouched.")


def _cb_link(source: str, prefix: str) -> None:
    """Keep the γ and ε sliders of one group in step (γ = tanh(ε/2)/2, ε = ln((1+2γ)/(1−2γ)))."""
    g_key, e_key = f"{prefix}_gamma", f"{prefix}_eps"
    try:
        if source == "gamma":
            eps = ldp_core.gamma_to_epsilon(st.session_state[g_key])
            st.session_state[e_key] = min(max(round(eps, 2), _EPS_RANGE[0]), _EPS_RANGE[1])
        else:
            gamma = ldp_core.epsilon_to_gamma(st.session_state[e_key])
            st.session_state[g_key] = min(max(round(gamma, 3), _GAMMA_RANGE[0]),
                                          _GAMMA_RANGE[1])
    except ValueError:
        return
    st.session_state[f"{prefix}_src"] = source


# -- selection ------------------------------------------------------------------------------


def _as_int(value: object) -> int | None:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None


def _chosen(key: str, param: str, ids: list[int], default: int | None) -> int | None:
    """The id kept in this session, else the one in the URL, else ``default``."""
    for candidate in (st.session_state.get(key), _as_int(st.query_params.get(param))):
        if candidate in ids:
            return candidate
    return default


def _sync_url(pid: int | None, qid: int | None) -> None:
    for name, value in (("pid", pid), ("qid", qid)):
        if value is None:
            if name in st.query_params:
                del st.query_params[name]
        elif st.query_params.get(name) != str(value):
            st.query_params[name] = str(value)


def _resolve(svc, polls) -> tuple[object | None, list, object | None]:
    """(poll, its questions, question) for this session; None where there is none."""
    ids = [p.id for p in polls]
    pid = _chosen(_PID, "pid", ids, ids[0] if ids else None)
    if pid is None:
        return None, [], None
    poll = next(p for p in polls if p.id == pid)
    questions = svc.questions(pid)
    qids = [q.id for q in questions]
    default = None
    if questions:
        current = svc.current_question(pid)
        default = current.id if current is not None else questions[-1].id
    qid = _chosen(_QID, "qid", qids, default)
    st.session_state[_PID] = pid
    if qid is None:
        st.session_state.pop(_QID, None)
    else:
        st.session_state[_QID] = qid
    question = next((q for q in questions if q.id == qid), None)
    return poll, questions, question


# -- desk layout ----------------------------------------------------------------------------


def _render_desk(svc, polls) -> None:
    title, to_projector = st.columns([4, 1], vertical_alignment="bottom")
    title.title("Dashboard")
    _show_flash()
    try:
        poll, questions, question = _resolve(svc, polls)
    except ClassroomError as exc:
        st.error(str(exc))
        return
    if poll is None:
        _start_panel()
        return
    _sync_url(poll.id, question.id if question else None)
    to_projector.button("Projection mode", icon=":material/present_to_all:",
                        key="dash_projector_on", on_click=_cb_projector,
                        args=(True,), help="Large type and high contrast for the projector, "
                        "no navigation. Leave it with the button at the bottom.",
                        width="stretch")
    _poll_bar(polls, poll)
    if question is None:
        st.info(f"Poll **{poll.join_code}** has no questions yet. Add one: the class exercise "
                "is one click.")
        _add_question_panel(poll, expanded=True)
        _join_panel(poll, big=False)
        _manage_panel(poll, None)
        return
    _question_bar(questions, question)
    _controls(svc, poll, question)
    join_col, live_col = st.columns([1, 2.2], gap="large")
    with join_col:
        _join_panel(poll, big=False)
    with live_col:
        _live_panel(question.id, False)
    if question.kind == "binary":
        _what_if_panel(svc, question)
    _rehearsal_panel(question)
    _add_question_panel(poll, expanded=False)
    _manage_panel(poll, question)


def _start_panel() -> None:
    st.subheader("Run the class exercise")
    st.write("One click creates a poll with the question **“Vanilla (1) or chocolate (0)?”** "
             "and opens voting. Each phone rolls a die 1–4: on 1–3 it reports the true answer, "
             "on 4 the opposite. The class then estimates the share who prefer vanilla with "
             "μ̂ = 2V/n − ½, whose SD is √(3/(4n)), at privacy loss ε = ln 3 ≈ 1.10.")
    st.button("Start the class exercise", icon=":material/play_arrow:", type="primary",
              key="dash_start_exercise",
              on_click=_cb_start_exercise, args=(None,))
    with st.expander("Or create an empty poll and add your own questions"):
        _new_poll_form()


def _new_poll_form() -> None:
    st.text_input("Title (optional, only you see it)", key="dash_new_poll_title",
                  max_chars=100, placeholder="CS208, April 7")
    st.checkbox("Rehearsal poll: lets you add simulated students to try the dashboard",
                key="dash_new_poll_rehearsal")
    st.button("Create poll", key="dash_create_poll", on_click=_cb_create_poll)


def _poll_label(poll) -> str:
    parts = [poll.join_code]
    if poll.title:
        parts.append(poll.title)
    if poll.rehearsal:
        parts.append("rehearsal")
    return " · ".join(parts) + f" · {poll.created_at:%Y-%m-%d %H:%M}"


def _poll_bar(polls, poll) -> None:
    labels = {p.id: _poll_label(p) for p in polls}
    st.session_state["dash_poll_select"] = poll.id
    pick, new = st.columns([4, 1], vertical_alignment="bottom")
    pick.selectbox("Poll", list(labels), format_func=labels.__getitem__,
                   key="dash_poll_select", on_change=_cb_pick_poll)
    with new.popover("New poll", icon=":material/add:", width="stretch"):
        _new_poll_form()


def _question_label(q) -> str:
    state = {"open": "voting open", "closed": "closed", "draft": "draft"}.get(q.state, q.state)
    text = q.text if len(q.text) <= 70 else q.text[:69] + "…"
    rnd = f", round {q.round_number}" if q.round_number > 1 else ""
    return f"Q{q.position}: {text} ({state}{rnd})"


def _question_bar(questions, question) -> None:
    labels = {q.id: _question_label(q) for q in questions}
    st.session_state["dash_question_select"] = question.id
    st.selectbox("Question", list(labels), format_func=labels.__getitem__,
                 key="dash_question_select", on_change=_cb_pick_question)


def _voting_button(question, *, key: str) -> None:
    if question.is_open:
        st.button("Close voting", icon=":material/stop_circle:", key=key, on_click=_cb_close,
                  args=(question.id,), width="stretch")
    else:
        st.button("Open voting" if question.state == "draft" else "Reopen voting",
                  icon=":material/play_arrow:", key=key, type="primary", on_click=_cb_open,
                  args=(question.id,), width="stretch")


def _reveal_button(question, *, key: str) -> None:
    if question.revealed:
        st.button("Hide results", icon=":material/visibility_off:", key=key,
                  on_click=_cb_reveal, args=(question.id, False), width="stretch")
    else:
        st.button("Reveal results", icon=":material/visibility:", key=key,
                  on_click=_cb_reveal, args=(question.id, True), width="stretch")


def _controls(svc, poll, question) -> None:
    vote, reveal, again, export = st.columns(4)
    with vote:
        _voting_button(question, key="dash_voting")
    with reveal:
        _reveal_button(question, key="dash_reveal")
    with again:
        st.button("New round", icon=":material/replay:", key="dash_new_round",
                  on_click=_cb_new_round,
                  args=(question.id, None), width="stretch",
                  help="Ask the same question again with the same design: a fresh round, "
                  "results hidden, voting not yet open. Earlier rounds stay in the history.")
    with export:
        try:
            data = svc.export_csv(
                question.id, include_simulated=bool(st.session_state.get("dash_export_sim")))
        except ClassroomError as exc:
            st.caption(f"Export unavailable: {exc}")
        else:
            st.download_button("Export CSV", icon=":material/download:", data=data,
                               key="dash_export",
                               file_name=f"ldp-{poll.join_code}-q{question.position}.csv",
                               mime="text/csv", on_click="ignore", width="stretch",
                               help="Every randomized report of this question (all rounds): "
                               "round, answer, label, design, time. No device or "
                               "submission ids.")


# -- projector layout -----------------------------------------------------------------------


def _render_projector(svc, polls) -> None:
    _show_flash(projector=True)
    try:
        poll, _questions, question = _resolve(svc, polls)
    except ClassroomError as exc:
        st.error(str(exc))
        poll = question = None
    if poll is None:
        st.info("No poll to show yet. Leave projection mode to create one.")
        st.button("Leave projection mode", key="dash_projector_off", on_click=_cb_projector,
                  args=(False,))
        return
    _sync_url(poll.id, question.id if question else None)
    show_join = st.session_state.get("dash_show_join", True)
    if question is not None:
        st.markdown(f"<div class='ldp-question'>{html_text(question.text)}</div>",
                    unsafe_allow_html=True)
    if question is None:
        _join_panel(poll, big=True)
    elif show_join:
        join_col, live_col = st.columns([1, 2.3], gap="large")
        with join_col:
            _join_panel(poll, big=True)
        with live_col:
            _live_panel(question.id, True)
    else:
        _live_panel(question.id, True)
    st.divider()
    cols = st.columns([1, 1, 1, 1], vertical_alignment="center")
    if question is not None:
        with cols[0]:
            _voting_button(question, key="dash_p_voting")
        with cols[1]:
            _reveal_button(question, key="dash_p_reveal")
    cols[2].checkbox("Show join panel", value=True, key="dash_show_join")
    cols[3].button("Leave projection mode", key="dash_projector_off", on_click=_cb_projector,
                   args=(False,), width="stretch")


# -- join panel -----------------------------------------------------------------------------


def _request_base_url() -> str | None:
    """``scheme://host[:port][/base path]`` as the browser sees this app, if known."""
    try:
        url = st.context.url
    except Exception:  # noqa: BLE001 - no browser context (AppTest, bare mode)
        url = None
    prefix = str(st.get_option("server.baseUrlPath") or "").strip("/")
    suffix = f"/{prefix}" if prefix else ""
    if isinstance(url, str) and url.startswith(("http://", "https://")):
        parts = urlsplit(url)
        if parts.netloc:
            return f"{parts.scheme}://{parts.netloc}{suffix}"
    try:
        headers = st.context.headers
        host = headers.get("x-forwarded-host") or headers.get("host")
        proto = headers.get("x-forwarded-proto") or "http"
    except Exception:  # noqa: BLE001 - no request context (bare mode, AppTest): no address
        return None
    if isinstance(host, str) and host and isinstance(proto, str):
        return f"{proto.split(',')[0].strip()}://{host.split(',')[0].strip()}{suffix}"
    return None


def _join_url(code: str) -> tuple[str, str | None]:
    """The student join link and, when phones may not reach it, a warning."""
    note = None
    try:
        base = config.public_base_url()
    except ClassroomError as exc:
        base, note = None, f"The configured public URL is ignored: {exc}"
    if not base:
        base = _request_base_url()
        if base is None:
            base = "http://localhost:8501"
            note = ("This server's address is unknown here; set LDP_CLASSROOM_PUBLIC_URL to "
                    "the address students can reach.")
        elif (urlsplit(base).hostname or "") in ("localhost", "127.0.0.1", "::1"):
            note = ("This address works only on this computer. For phones, open the dashboard "
                    "through the network address printed in the terminal, or set "
                    "LDP_CLASSROOM_PUBLIC_URL.")
    return f"{base.rstrip('/')}/join/{code}", note


def _qr_png(url: str) -> bytes:
    import segno

    buf = io.BytesIO()
    segno.make(url, error="m").save(buf, kind="png", scale=10, border=2, dark="#000000",
                                    light="#ffffff")
    return buf.getvalue()


def _join_panel(poll, *, big: bool) -> None:
    url, note = _join_url(poll.join_code)
    host = urlsplit(url).netloc
    st.markdown(
        f"<div class='ldp-join'><div class='ldp-join-label'>Join at "
        f"<b>{html.escape(host)}</b> with the code</div>"
        f"<div class='ldp-join-code' data-testid='ldp-join-code'>"
        f"{html.escape(poll.join_code)}</div></div>", unsafe_allow_html=True)
    st.image(_qr_png(url), width=260 if big else 170,
             caption=None if big else "Scan to join", alt=f"QR code of {url}")
    st.code(url, language=None, wrap_lines=True)
    if not big:
        st.caption("The copy icon on the link copies it.")
    if note:
        st.caption(f"⚠️ {note}")


# -- live panel -----------------------------------------------------------------------------


def _design_text(design) -> str:
    params = design.params()
    kind = params.get("design")
    if kind == "die":
        f, t = params["faces"], params["truthful"]
        return (f"die 1–{f}: truthful on 1–{t}, lie on {t + 1}" if t + 1 == f else
                f"die 1–{f}: truthful on 1–{t}, lie on {t + 1}–{f}")
    if kind == "two_coin":
        return "two coins: heads → truth; tails → second coin answers"
    if kind == "warner":
        return f"Warner's spinner, p = {fmt_fixed(params['p'], 2)}"
    if kind == "gamma":
        return f"keep the true answer w.p. ½ + γ, γ = {fmt_fixed(params['gamma'], 3)}"
    if kind == "epsilon":
        return f"ε-randomized response, ε = {fmt_fixed(params['epsilon'], 2)}"
    if kind == "forced":
        return (f"forced response: truth {fmt_fixed(params['p_truth'], 2)}, "
                f"forced yes {fmt_fixed(params['p_yes'], 2)}")
    if kind == "grr":
        return f"GRR over {params['d']} options, ε = {fmt_fixed(params['epsilon'], 2)}"
    if kind == "ue":
        return (f"unary encoding over {params['d']} options, p = {fmt_fixed(params['p'], 3)}, "
                f"q = {fmt_fixed(params['q'], 3)}")
    return str(design.label or kind)


def _nice(x: object, max_den: int = 100) -> Fraction | None:
    """``x`` as a small fraction when it is one (exactly, or to 1e-9), else None."""
    if isinstance(x, Fraction) and x.denominator <= max_den:
        return x
    try:
        fx = float(x)  # type: ignore[arg-type]  # any object: float() raises, caught below
    except (TypeError, ValueError):
        return None
    if not math.isfinite(fx):
        return None
    fr = Fraction(fx).limit_denominator(max_den)
    return fr if abs(float(fr) - fx) < 1e-9 else None


def _tex(x: object, digits: int = 3) -> str:
    """A coefficient in LaTeX: an integer, a small fraction, or a short decimal."""
    fr = _nice(x)
    if fr is None:
        return f"{float(x):.{digits}g}"  # type: ignore[arg-type]  # a coefficient: a number
    sign = "-" if fr < 0 else ""
    fr = abs(fr)
    if fr.denominator == 1:
        return f"{sign}{fr.numerator}"
    return rf"{sign}\tfrac{{{fr.numerator}}}{{{fr.denominator}}}"


def _times(coef: str, sep: str) -> str:
    """``coef`` as a factor in front of a fraction: nothing for 1, a bare minus for -1."""
    return {"1": "", "-1": "-"}.get(coef, coef + sep)


def _mu_formula(design, n: int, v: int, mu: float | None) -> str:
    """``μ̂ = slope·V/n − offset`` (from ldp_core.formulas), with the numbers put in."""
    slope, offset = unbiased_coefficients(design)
    s = _tex(slope)
    tail = "" if offset == 0 else f" {'-' if offset > 0 else '+'} {_tex(abs(offset))}"
    thin, cdot = r"\,", r"\cdot"
    general = rf"\hat\mu = {_times(s, thin)}\frac{{V}}{{n}}{tail}"
    if n <= 0 or mu is None:
        return f"${general}$"
    put = rf"{_times(s, cdot)}\frac{{{v}}}{{{n}}}{tail}"
    value = fmt_fixed(mu, 3).replace("\u2212", "-")
    return rf"${general} = {put} = {value}$"


def _sd_formula(design, n: int, sd: float | None) -> str:
    """``SD = sqrt(unit / n)`` (from ldp_core.formulas), with n put in."""
    unit = worst_variance_unit(design)
    fr = _nice(unit)
    if fr is not None:
        den = "" if fr.denominator == 1 else str(fr.denominator)
        general = rf"\sqrt{{\frac{{{fr.numerator}}}{{{den}n}}}}"
        put = rf"\sqrt{{\frac{{{fr.numerator}}}{{{fr.denominator * n}}}}}"
    else:
        general = rf"\sqrt{{{float(unit):.3g}/n}}"
        put = rf"\sqrt{{{float(unit):.3g}/{n}}}"
    if n <= 0 or sd is None:
        return rf"$\mathrm{{SD}} = {general}$"
    return rf"$\mathrm{{SD}} = {general} = {put} = {fmt_fixed(sd, 3)}$"


def _eps_formula(design, eps: float) -> str:
    ratio = privacy_ratio(design)
    if math.isinf(ratio):
        return r"$\varepsilon = \infty$: some report gives the answer away"
    fr = _nice(ratio)
    inner = (str(fr.numerator) if fr is not None and fr.denominator == 1 else
             rf"\tfrac{{{fr.numerator}}}{{{fr.denominator}}}" if fr is not None else
             f"{float(ratio):.3g}")
    return rf"$\varepsilon = \ln {inner} \approx {fmt_fixed(eps, 2)}$"


def _channel_text(design) -> str:
    a, b = _tex(design.a), _tex(design.b)
    return rf"$a = P(\text{{report 1}} \mid 1) = {a},\ b = P(\text{{report 1}} \mid 0) = {b}$"


def _status_line(q, est) -> str:
    state = {"open": ":green[:material/how_to_vote: **Voting open**]",
             "closed": ":red[:material/block: **Voting closed**]",
             "draft": ":gray[:material/edit_note: **Not open yet**]"}.get(q.state, q.state)
    parts = [state, f"round {q.round_number}", _design_text(q.design),
             f"ε = {fmt_fixed(q.epsilon, 2)}"]
    if est.n_simulated:
        parts.append(f"{fmt_count(est.n_simulated)} simulated")
    return " · ".join(parts)


@st.fragment(run_every=2)
def _live_panel(question_id: int, projector: bool) -> None:
    """Reports, estimate, SD, CI and ε of the chosen question, refreshed every 2 s."""
    if not session.is_instructor():
        return
    _rehearsal_tick(question_id)
    try:
        snap = session.service().dashboard_snapshot(question_id)  # one read transaction
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
            _rounds_table(q, est, rounds, projector)
        return
    if q.kind == "binary":
        _binary_panel(q, est, rounds, projector, snap.trajectory)
    else:
        _categorical_panel(q, est, rounds, projector)


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
    }.get(check.direction or "", "a pattern the design cannot produce")
    return (f"**These reports do not fit the design**: {what} "
            f"(p = {check.p_value:.1g}, below {check.alpha:g}). This is not randomization "
            "noise. Likely causes: repeated votes from one device (ballot stuffing), or "
            "students not following the randomizer. The estimate below is not reliable.")


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


def _binary_panel(q, est, rounds, projector: bool, points) -> None:
    b, counts = est.binary, est.binary_counts
    n, v = est.n, est.counts[1]
    one_design = len(counts.groups) == 1
    design = counts.groups[0][0] if one_design else q.design
    yes_label = q.options[1]
    level = b.level
    z = ldp_core.z_quantile(level)

    top = st.columns(3)
    _stat(top[0], "Reports received", fmt_count(n), None if projector else "$n$")
    _stat(top[1], f"Reported “{plain(yes_label)}”", f"{fmt_count(v)} of {fmt_count(n)}",
          None if projector else
          rf"$V = {v}$, reported share $V/n = {v}/{n} = {fmt_fixed(b.reported_share, 3)}$")
    _stat(top[2], "Privacy loss ε", fmt_fixed(est.epsilon, 2),
          None if projector else _eps_formula(design, est.epsilon) if one_design else
          "largest ε of the designs used in this round")

    mu_help = (f"The estimated share of the class whose true answer is “{plain(yes_label)}”. "
               "Unbiased: on average over the randomization it equals the true share. "
               "It corrects the reported share for the known lies.")
    if projector:  # one row, no formulas: everything on one screen, readable from the back
        row = st.columns([1, 1, 1, 1.35])
        _stat(row[0], "Estimate μ̂", fmt_fixed(b.mu_hat, 3), None, help=mu_help)
        _stat(row[1], "SD, fixed class", fmt_fixed(b.sd_worst, 3), None,
              help=SD_FIXED_CLASS_HELP)
        _stat(row[2], "SD, population", fmt_fixed(b.sd_plugin, 3), None,
              help=SD_POPULATION_HELP)
        _stat(row[3], f"{level:.0%} CI", fmt_interval(b.ci_low, b.ci_high, 3), None,
              help=f"μ̂ ± {z:.2f} × the fixed-class SD")
    else:
        st.markdown(f"**The share whose true answer is “{plain(yes_label)}”**, "
                    "estimated from the randomized reports:")
        row = st.columns([1, 1, 1.45])
        _stat(row[0], "Estimate μ̂", fmt_fixed(b.mu_hat, 3),
              _mu_formula(design, n, v, b.mu_hat) if one_design else
              r"$\hat\mu = \frac{1}{n}\sum_i \frac{y_i - b_i}{a_i - b_i}$ (each report with "
              "its own design)", help=mu_help)
        _stat(row[1], "SD, fixed class", fmt_fixed(b.sd_worst, 3),
              _sd_formula(design, n, b.sd_worst) if one_design else "largest over class shares",
              help=SD_FIXED_CLASS_HELP)
        _stat(row[2], f"{level:.0%} CI", fmt_interval(b.ci_low, b.ci_high, 3),
              rf"$\hat\mu \pm {z:.2f}\,\mathrm{{SD}}$")
        with row[1]:
            if b.sd_plugin is None:
                st.caption("SD, population (plug-in): needs at least 2 reports.")
            else:
                st.metric("SD, population (plug-in)", fmt_fixed(b.sd_plugin, 3),
                          help=SD_POPULATION_HELP)
                st.caption(r"$\sqrt{\frac{\bar y(1-\bar y)}{(n-1)(a-b)^2}}$ with "
                           r"$\bar y = V/n$" if one_design else
                           "sample SD of the per-report estimates over √n")
    note = simulated_class_note(q, est.n_simulated)
    if note:
        st.caption(note)
    if one_design and not projector:
        st.caption(f"Design: {_design_text(design)}; " + _channel_text(design)
                   + r"; in general $\hat\mu = (V/n - b)/(a - b)$.")
    if n == 1:
        st.info("Only one report so far: the estimate rests on a single randomized answer, "
                "so it can only be one of two values, both possibly outside [0, 1]. The "
                "plug-in SD needs at least two reports.")
    if b.outside_unit_interval and (est.plausibility is None or est.plausibility.fits):
        side = "above 1" if b.mu_hat > 1 else "below 0"
        st.warning(
            f"μ̂ = {fmt_fixed(b.mu_hat, 3)} is {side}. A share cannot be, but the unbiased "
            "estimator does not know that: it subtracts the expected lies, and with "
            f"n = {n} the randomization noise (SD {fmt_fixed(b.sd_worst, 3)}) can push it past "
            "the edge. Averaged over many classes it is still exactly right, so it is shown "
            f"as it is. The maximum-likelihood estimate, which stays in [0, 1], is "
            f"{fmt_fixed(b.mle, 3)}.")

    left, right = st.columns(2, gap="large")
    with left:
        st.markdown("**Reports received** (randomized answers)")
        live_charts.show(live_charts.reported_counts(q.options, est.counts), big=projector)
    with right:
        st.markdown(f"**μ̂ and its {level:.0%} CI as reports arrive**")
        rows = [{"n": p.n, "mu": p.mu_hat, "lo": p.ci_low, "hi": p.ci_high} for p in points]
        live_charts.show(live_charts.estimate_trace(rows, level=level), big=projector)
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
                "- **95% CI**: μ̂ ± 1.96 SD. The **likelihood-ratio interval** (left) "
                "stays inside [0, 1].\n"
                "- **ε** bounds how much one report can reveal: the odds between the two "
                "true answers change by at most e^ε.")
    _rounds_table(q, est, rounds, projector)


def _rounds(q, est, rounds) -> tuple[list[dict], list[dict]]:
    """(table rows, chart rows) of every round's estimate, round 1 first."""
    designs = {r.number: r for r in rounds}
    rows: list[dict] = []
    chart_rows: list[dict] = []
    for number, e in est.history:
        r = designs.get(number)
        row = {"Round": str(number), "Design": _design_text(r.design) if r else "—",
               "ε": fmt_fixed(r.epsilon, 2) if r else "—", "n": fmt_count(e.n)}
        if q.kind == "binary":
            row.update({"μ̂": fmt_fixed(e.mu_hat, 3), "SD": fmt_fixed(e.sd_worst, 3),
                        f"{e.level:.0%} CI": fmt_interval(e.ci_low, e.ci_high, 3)})
            chart_rows.append({"round": number, "n": e.n, "mu": e.mu_hat, "lo": e.ci_low,
                               "hi": e.ci_high})
        else:
            shares = e.shares("norm_sub")
            for i, opt in enumerate(q.options):
                row[f"{plain(opt)} (Norm-Sub)"] = fmt_fixed(shares[i], 3) if shares else "—"
        rows.append(row)
    return rows, chart_rows


def _rounds_table(q, est, rounds, projector: bool) -> None:
    """Every round's estimate, listed (once there is more than one round)."""
    rows, _ = _rounds(q, est, rounds)
    if len(rows) > 1:
        st.markdown("**Rounds**: each round's estimate (earlier rounds are kept)")
        st.table(rows)


def _rounds_chart(q, est, rounds, projector: bool) -> bool:
    """μ̂ and its CI per round, when there are several rounds; False if nothing was drawn."""
    _, chart_rows = _rounds(q, est, rounds)
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


def _categorical_panel(q, est, rounds, projector: bool) -> None:
    c = est.categorical
    n = est.n
    level = 0.95
    z = ldp_core.z_quantile(level)
    top = st.columns(3)
    _stat(top[0], "Reports received", fmt_count(n), "$n$")
    _stat(top[1], "Privacy loss ε", fmt_fixed(est.epsilon, 2), None)
    _stat(top[2], "Design", _oracle_name(q.design), _design_text(q.design))
    names = ldp_core.POSTPROCESSING
    st.markdown("**Estimated share of each option**: raw unbiased (with "
                f"{level:.0%} error bars, ± {z:.2f} SD), then post-processed")
    live_charts.show(live_charts.histogram(
        q.options, {names["raw"]: c.shares("raw"), names["clip"]: c.shares("clipped"),
                    names["norm_sub"]: c.shares("norm_sub")},
        *live_charts.share_interval(c.raw, c.sd, n, z)), big=projector)
    raw, clipped, normsub = c.shares("raw"), c.shares("clipped"), c.shares("norm_sub")
    lows, highs = live_charts.share_interval(c.raw, c.sd, n, z)
    table = []
    for i, opt in enumerate(q.options):
        table.append({
            "Option": plain(opt),
            "Reports supporting it": fmt_count(c.support_counts[i]),
            names["raw"]: fmt_fixed(raw[i], 3),
            f"{level:.0%} interval": fmt_interval(lows[i], highs[i], 3),
            names["clip"]: fmt_fixed(clipped[i], 3),
            names["norm_sub"]: fmt_fixed(normsub[i], 3),
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
    _rounds_table(q, est, rounds, projector)


# -- what-if and next round -----------------------------------------------------------------


def _linked_sliders(prefix: str, eps0: float) -> object:
    """γ and ε sliders kept in step; returns the design of the one moved last."""
    g_key, e_key, s_key = f"{prefix}_gamma", f"{prefix}_eps", f"{prefix}_src"
    if e_key not in st.session_state or g_key not in st.session_state:
        eps = min(max(round(eps0, 2), _EPS_RANGE[0]), _EPS_RANGE[1])
        st.session_state[e_key] = eps
        st.session_state[g_key] = min(max(round(ldp_core.epsilon_to_gamma(eps), 3),
                                          _GAMMA_RANGE[0]), _GAMMA_RANGE[1])
        st.session_state[s_key] = "gamma" if abs(eps0 - math.log(3)) < 1e-9 else "epsilon"
    left, right = st.columns(2)
    left.slider("γ: keep the true answer with probability ½ + γ", *_GAMMA_RANGE, step=0.001,
                format="%.3f", key=g_key, on_change=_cb_link, args=("gamma", prefix))
    right.slider("ε: privacy loss per student", *_EPS_RANGE, step=0.01, format="%.2f",
                 key=e_key, on_change=_cb_link, args=("epsilon", prefix))
    if st.session_state.get(s_key) == "gamma":
        design = ldp_core.GammaRR(st.session_state[g_key])
    else:
        design = ldp_core.EpsilonRR(st.session_state[e_key])
    st.caption(rf"Keep w.p. {fmt_fixed(design.a, 3)}; "
               rf"$\varepsilon = \ln\frac{{1+2\gamma}}{{1-2\gamma}} = {design.epsilon:.3f}$, "
               rf"$\gamma = \tfrac12\tanh(\varepsilon/2) = "
               rf"{ldp_core.epsilon_to_gamma(design.epsilon):.3f}$ "
               f"(set by the {'γ' if st.session_state.get(s_key) == 'gamma' else 'ε'} slider).")
    return design


def _what_if_panel(svc, question) -> None:
    try:
        est = svc.estimate(question.id)
    except ClassroomError as exc:
        st.warning(str(exc))
        return
    n = est.n if est.n >= 1 else 100
    if st.session_state.get("_dash_wi_qid") != (question.id, question.round_number):
        # Another question or round: start the sliders from its design again.
        for key in ("dash_wi_gamma", "dash_wi_eps", "dash_wi_src"):
            st.session_state.pop(key, None)
        st.session_state["_dash_wi_qid"] = (question.id, question.round_number)
    with st.expander(f"What if: the SD at n = {n} under another design (the data stay as "
                     "they are)", key="dash_open_what_if", on_change="rerun"):
        if est.n < 1:
            st.caption("No reports yet, so the comparison uses n = 100.")
        whatif = _linked_sliders("dash_wi", question.epsilon)
        current = question.design
        sd_now = ldp_core.BinaryCounts.single(current, 0, n).sd_worst()
        sd_new = ldp_core.BinaryCounts.single(whatif, 0, n).sd_worst()
        a, b = st.columns(2)
        a.metric(f"SD now (ε = {fmt_fixed(current.epsilon, 2)})", fmt_fixed(sd_now, 3))
        b.metric(f"SD with this design (ε = {fmt_fixed(whatif.epsilon, 2)})",
                 fmt_fixed(sd_new, 3))
        grid = np.linspace(0.1, 5.0, 60)
        curve = [(float(e), ldp_core.BinaryCounts.single(ldp_core.EpsilonRR(float(e)), 0, n)
                  .sd_worst()) for e in grid]
        live_charts.show(live_charts.sd_vs_epsilon(
            curve, [("current design", current.epsilon, sd_now),
                    ("what-if design", whatif.epsilon, sd_new)]))
        st.caption("More privacy (smaller ε) means more noise: the SD grows like 1/ε for "
                   "small ε. Only sliders move here; no report changes.")
        st.markdown(f"**Next round** (round {question.round_number + 1})")
        left, right = st.columns([2, 1], vertical_alignment="bottom")
        left.checkbox("Open voting right away", key="dash_wi_open")
        right.button("Start next round with this design", key="dash_wi_apply",
                     on_click=_cb_new_round, args=(question.id, whatif.params(), "dash_wi_open"),
                     width="stretch")


# -- adding questions -----------------------------------------------------------------------

_PRESETS = {
    "exercise": "Class exercise: die 1–4",
    "two_coin": "Two coins",
    "warner": "Warner's spinner",
    "custom": "Custom ε or γ",
    "categorical": "Categorical (k options)",
}


def _binary_spec(preset: str) -> tuple[dict | None, str | None]:
    """(design params, error) for the binary preset chosen in the form."""
    try:
        if preset == "exercise":
            design = ldp_core.binary_design_from_params(_exercise_design())
        elif preset == "two_coin":
            design = ldp_core.TwoCoinRR()
        elif preset == "warner":
            p = st.slider("p: chance the spinner points at the statement (else its negation)",
                          0.05, 0.95, 0.7, step=0.05, key="dash_q_warner_p")
            design = ldp_core.WarnerRR(p)
        else:
            design = _linked_sliders("dash_q", math.log(3))
    except ValueError as exc:
        return None, str(exc)
    st.caption(f"Design: {_design_text(design)}; " + _channel_text(design) + "; "
               + _mu_formula(design, 0, 0, None) + "; " + _sd_formula(design, 0, None) + "; "
               + _eps_formula(design, design.epsilon))
    return design.params(), None


def _categorical_spec() -> tuple[dict | None, tuple[str, ...], str | None]:
    raw = st.text_area("Options, one per line (2 to 20)", key="dash_q_cat_options",
                       value="Vanilla\nChocolate\nStrawberry\nPistachio")
    labels = tuple(line.strip() for line in raw.splitlines() if line.strip())
    eps = st.slider("ε: privacy loss per student", 0.1, 5.0, 1.0, step=0.1,
                    key="dash_q_cat_eps")
    k = len(labels)
    if k < 2:
        return None, labels, "Give at least two options."
    try:
        rec = ldp_core.recommend_oracle(k, eps)
    except ValueError as exc:
        return None, labels, str(exc)
    names = {"grr": "GRR (direct encoding)", "sue": "SUE (symmetric unary encoding)",
             "oue": "OUE (optimized unary encoding)"}
    oracle = st.radio("Frequency oracle", list(names),
                      format_func=lambda o: names[o] + (" — recommended" if o == rec else ""),
                      index=list(names).index(rec), key="dash_q_cat_oracle", horizontal=True)
    st.caption(f"ldp_core recommends {rec.upper()} for k = {k}, ε = {eps:.1f}: GRR has the "
               "smaller variance when k < 3e^ε + 2 (Wang et al. 2017).")
    try:
        if oracle == "grr":
            design = ldp_core.GRR(k, eps)
        elif oracle == "sue":
            design = ldp_core.UnaryEncoding.symmetric(k, eps)
        else:
            design = ldp_core.UnaryEncoding.optimized(k, eps)
    except ValueError as exc:
        return None, labels, str(exc)
    st.caption(f"Design: {_design_text(design)}; ε = {design.epsilon:.3f}.")
    return design.params(), labels, None


def _add_question_panel(poll, *, expanded: bool) -> None:
    with st.expander("Add a question", icon=":material/add_circle:", expanded=expanded,
                     key="dash_open_add_question", on_change="rerun"):
        st.button("Add the class exercise and open voting", icon=":material/play_arrow:",
                  type="primary",
                  key="dash_add_exercise", on_click=_cb_start_exercise, args=(poll.id,),
                  help=f"“{EXERCISE_TEXT}”, options Chocolate (0) and Vanilla (1), "
                  "a die 1–4 on each phone.")
        st.markdown("**Or build one:**")
        preset = st.radio("Design", list(_PRESETS), format_func=_PRESETS.__getitem__,
                          key="dash_q_preset", horizontal=True)
        if preset == "categorical":
            text = st.text_input("Question", key="dash_q_cat_text",
                                 value="Which flavour do you like best?")
            params, options, error = _categorical_spec()
            kind = "categorical"
        else:
            text = st.text_input("Question", key="dash_q_text", value=EXERCISE_TEXT)
            zero, one = st.columns(2)
            no = zero.text_input("Option for answer 0", key="dash_q_opt0",
                                 value=EXERCISE_OPTIONS[0])
            yes = one.text_input("Option for answer 1 (the share estimated)",
                                 key="dash_q_opt1", value=EXERCISE_OPTIONS[1])
            options = (no, yes)
            params, error = _binary_spec(preset)
            kind = "binary"
        mode = st.radio("Randomization", ["device", "physical"], key="dash_q_mode",
                        horizontal=True, format_func={
                            "device": "On the phone (device randomness)",
                            "physical": "Physical: students roll / toss themselves and tap "
                                        "what they report"}.__getitem__)
        st.checkbox("Open voting right away", key="dash_q_open")
        if error:
            st.error(error)
        spec = {"text": text, "options": options, "design_params": params, "kind": kind,
                "mode": mode}
        st.button("Add question", key="dash_add_question", disabled=params is None,
                  on_click=_cb_add_question, args=(poll.id, spec, "dash_q_open"))


# -- rehearsal and management ---------------------------------------------------------------


# The dashboard's expanders keep their open/closed state in the session (a key and
# on_change="rerun"): the page above them changes as reports arrive, and an expander
# the browser alone remembered would close on such a rerun.


def _rehearsal_panel(question) -> None:
    with st.expander("Rehearse with simulated students", icon=":material/theater_comedy:",
                     key="dash_open_rehearsal", on_change="rerun"):
        st.caption("Simulated students answer through the same design and the same checks as "
                   "real ones, arriving over a few seconds. Their reports are flagged as "
                   "simulated, left out of exports unless you ask, and removed by "
                   "Clear rehearsal. Voting must be open.")
        st.number_input("Simulated students", 1, 5000, 40, key="dash_sim_n")
        if question.kind == "binary":
            shares: object = st.slider(f"True share of {plain(question.options[1])}", 0.0, 1.0,
                                       0.6, step=0.05, key="dash_sim_share")
        else:
            k = len(question.options)
            shares = tuple(1.0 / k for _ in range(k))
            st.caption("Options are drawn with equal shares.")
        left, right = st.columns(2)
        left.button("Add simulated students", key="dash_sim_add", on_click=_cb_simulate,
                    args=(question.id, shares), disabled=not question.is_open)
        right.button("Clear rehearsal", key="dash_sim_clear",
                     on_click=_cb_clear_simulated, args=(question.id,))
        st.checkbox("Include simulated reports in Export CSV", key="dash_export_sim")


def _manage_panel(poll, question) -> None:
    with st.expander("Delete", icon=":material/delete:", key="dash_open_delete",
                     on_change="rerun"):
        if question is not None:
            st.checkbox(f"Yes, delete question Q{question.position} and all its reports",
                        key=f"dash_confirm_delete_q_{question.id}")
            st.button("Delete this question", key="dash_delete_question",
                      on_click=_cb_delete_question, args=(question.id,))
        st.checkbox(f"Yes, delete poll {poll.join_code} with all its questions, rounds and "
                    "reports (cannot be undone)", key=f"dash_confirm_delete_{poll.id}")
        st.button(f"Delete poll {poll.join_code}", key="dash_delete_poll", type="primary",
                  on_click=_cb_delete_poll, args=(poll.id, poll.join_code))


# -- style ----------------------------------------------------------------------------------

_DESK_CSS = """
<style>
[data-testid="stMainBlockContainer"], .block-container { padding-top: 2.5rem !important; }
.ldp-join { container-type: inline-size; }
.ldp-join-label { font-size: 1.05rem; }
.ldp-join-code { font: 800 min(21cqi, 5rem)/1.1 ui-monospace, SFMono-Regular, Menlo,
  Consolas, monospace; letter-spacing: .06em; color: #111827; margin: .2rem 0 .6rem;
  white-space: nowrap; }
</style>
"""

_PROJECTOR_CSS = """
<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stSidebarNav"], header[data-testid="stHeader"], [data-testid="stToolbar"],
[data-testid="stDecoration"] { display: none !important; }
.stApp, [data-testid="stAppViewContainer"], [data-testid="stMain"] { background: #ffffff; }
[data-testid="stMainBlockContainer"], .block-container { max-width: 100% !important;
  padding: 1rem 2.5rem 2rem !important; }
.stApp, .stApp p, .stApp li, .stApp span { color: #000000; }
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li {
  font-size: 1.55rem; line-height: 1.35; }
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p {
  font-size: 1.5rem !important; }
[data-testid="stCaptionContainer"] { opacity: 1 !important; }
[data-testid="stCaptionContainer"] * { color: #111111 !important; }
[data-testid="stTable"] th, [data-testid="stTable"] td { font-size: 1.5rem !important;
  color: #000000 !important; }
[data-testid="stMetricLabel"] p {
  font-size: 1.5rem !important; font-weight: 700; color: #000000 !important; }
[data-testid="stMetricValue"], [data-testid="stMetricValue"] p {
  font-size: clamp(2.2rem, 3vw, 3.6rem) !important; font-weight: 800; line-height: 1.1;
  color: #000000 !important; overflow: visible; text-overflow: clip; white-space: nowrap; }
.katex { color: #000000; }
[data-testid="stAlert"] p { font-size: 1.5rem; }
.ldp-question { font-size: clamp(2rem, 3.2vw, 3.4rem); font-weight: 800; line-height: 1.15;
  margin: 0 0 .6rem; color: #000000; }
.ldp-join { container-type: inline-size; }
.ldp-join-label { font-size: 1.6rem; }
.ldp-join-code { font: 900 min(21cqi, 9rem)/1 ui-monospace, SFMono-Regular, Menlo,
  Consolas, monospace; letter-spacing: .06em; color: #000000; margin: .2rem 0 .8rem;
  white-space: nowrap; }
[data-testid="stCode"] code { font-size: 1.5rem !important; }
.stButton button p, [data-testid="stCheckbox"] p { font-size: 1.5rem; }
.stButton button [data-testid="stIconMaterial"] { font-size: 1.5rem !important; }
[data-testid="stMetric"] { gap: 0; }
[data-testid="stMetricLabel"], [data-testid="stMetricLabel"] * { white-space: normal !important;
  overflow: visible !important; text-overflow: clip !important; }
[data-testid="stVerticalBlock"] { gap: .6rem; }
</style>
"""


def _css(projector: bool) -> None:
    st.html(_PROJECTOR_CSS if projector else _DESK_CSS)
