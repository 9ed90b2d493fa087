"""The student's view: join with a code, randomize on the device, get a receipt.

Shown by the home page when the address carries ``?poll=CODE``. The page is
kept light for a lecture hall of phones: no charts, no pandas, no simulation;
each rerun is a couple of indexed reads.
"""

from __future__ import annotations

import json
import math
import uuid

import streamlit as st

from classroom.domain import (
    BadInput,
    BadReport,
    ClassroomError,
    NotFound,
    QuestionClosed,
    StoreUnavailable,
    normalize_join_code,
)
from ui import session
from ui.text import plain
from ui.vote import vote_component

#: A vote payload is a few hundred bytes; anything far larger is not ours.
_MAX_PAYLOAD_CHARS = 4000
_PENDING = "_ldp_pending_vote"
#: (join code, Question) of the vote this session shows, to keep taking a tap while the
#: database cannot be read.
_ON_SCREEN = "_ldp_vote_on_screen"
#: One key for every "Send it again" button, so the click is seen by whichever path draws
#: it on the next run.
_SEND_AGAIN = "send_again"
_NOT_SAVED = ("**Not saved yet.** The class server cannot reach its database right now. "
              "Wait a moment, then send your answer again.")


# -- joining -------------------------------------------------------------------------------------
def join_form() -> None:
    """The code box on the home page; a right code opens the poll at once."""
    with st.form("join", border=False):
        code = st.text_input("Join code", max_chars=16, placeholder="e.g. K7QM2P",
                             help="The code on the projector. Capitals or not, spaces "
                                  "or not: all fine.")
        if st.form_submit_button("Join", type="primary", use_container_width=True):
            poll = _find_poll(code)
            if poll is not None:
                st.query_params["poll"] = poll.join_code
                st.rerun()


def _find_poll(code: str, *, raise_unavailable: bool = False):
    """Resolve a typed or linked code; show a friendly message and return None if it fails.

    ``raise_unavailable``: let ``StoreUnavailable`` through instead of showing it.
    """
    wait = session.wait_before_try("join_code")
    if wait > 0:
        st.error(f"Too many codes that did not match. Wait {wait:.0f} s, then check the code "
                 "on the projector and try again.")
        return None
    try:
        poll = session.service().poll_by_code(code)
    except (BadInput, NotFound) as exc:
        session.record_try("join_code", False)
        st.error(f"{exc} Check the code on the projector (or scan the QR code) and try again.")
        return None
    except StoreUnavailable as exc:
        if raise_unavailable:
            raise
        st.error(f"{exc}")
        return None
    session.record_try("join_code", True)
    return poll


# -- the poll ------------------------------------------------------------------------------------
def render_poll(code: str) -> None:
    _phone_css()
    try:
        poll = _find_poll(code, raise_unavailable=True)
    except StoreUnavailable as exc:
        _database_away(code, exc)
        return
    if poll is None:
        st.divider()
        join_form()
        return
    device = session.device_id()
    if device is None:
        st.error("This browser did not keep the class cookie, so your vote could be counted "
                 "twice. Allow cookies for this site (or leave private browsing) and reload.")
        return
    try:
        _render_question(poll, device)
    except StoreUnavailable as exc:
        st.error(f"{exc}")
        st.button("Try again", type="primary")


def _render_question(poll, device: str) -> None:
    svc = session.service()
    try:
        question = svc.current_question(poll.id)
        receipt = None if question is None else svc.receipt_for(question.id, device)
    except StoreUnavailable as exc:
        _database_away(poll.join_code, exc)
        return
    if question is None:
        _wait_for_question(poll.id, None)
        return
    if receipt is not None:
        _show_receipt(poll, question, receipt, device, fresh=False)
        return
    if not question.is_open:
        st.info(f"**Voting closed** for “{plain(question.text)}”: answers are no longer "
                "accepted, and nothing from this phone was saved.")
        _show_results(question)
        _wait_for_question(poll.id, question)
        return
    st.caption(f"Poll {poll.join_code}" + (f" · {plain(poll.title)}" if poll.title else ""))
    st.session_state[_ON_SCREEN] = (poll.join_code, question)
    payload, notice = _collect_vote(question)
    if payload is not None:
        _submit(poll, question, payload, device, notice)


def _wait_for_question(poll_id: int, shown) -> None:
    """Check every few seconds for a newly opened question (only while waiting)."""
    if shown is None:
        st.info("No question is open yet. This page updates by itself when the "
                "instructor opens one.")

    # The body runs once within this full run, right after the page read the question:
    # nothing can have changed yet, so only the timed fragment reruns read it again.
    in_full_run = [True]

    @st.fragment(run_every=5)
    def poll_for_change() -> None:
        if in_full_run[0]:
            in_full_run[0] = False
            return
        try:
            current = session.service().current_question(poll_id)
        except StoreUnavailable:
            return  # the database is away for now; look again at the next tick
        was = None if shown is None else (shown.id, shown.round_number, shown.state,
                                          shown.revealed)
        now = None if current is None else (current.id, current.round_number, current.state,
                                            current.revealed)
        if now != was:
            st.rerun(scope="app")

    poll_for_change()


def _collect_vote(question):
    """Either the device randomizer or, in physical mode, the reported answer's buttons.

    Returns ``(payload or None, notice)``: ``notice`` is the placeholder holding the
    "not saved yet" note and its "Send it again" button when they are drawn, else None.
    """
    options = list(enumerate(question.options))
    if question.mode == "physical":
        st.markdown(f"### {plain(question.text)}")
        st.markdown(_physical_instructions(question))
        sid_key = f"_ldp_sid_{question.id}_{question.round_number}"
        sid = st.session_state.setdefault(sid_key, uuid.uuid4().hex)
        for value, label in reversed(options):
            if st.button(f"I report: {label}", key=f"phys_{question.id}_{value}",
                         type="primary", use_container_width=True):
                return ({"answer": value, "params": question.design_params,
                         "submission_id": sid}, None)
        return None, None
    hint = ("Tap your TRUE answer. Your phone randomizes it before sending: only the "
            "randomized answer leaves this page.")
    payload = vote_component(key=f"vote_{question.id}_{question.round_number}",
                             question=question.text, options=options,
                             design_params=question.design_params, hint=hint)
    pending = st.session_state.get(_PENDING)
    if payload is None and pending and pending.get("question_id") == question.id:
        notice = st.empty()
        with notice.container():
            st.warning("Your last answer was **not saved yet**. Your phone already randomized "
                       "it; sending it again cannot count twice.")
            if _send_again_button():
                return pending["payload"], notice
        return None, notice
    return payload, None


def _send_again_button() -> bool:
    return st.button("Send it again", type="primary", use_container_width=True,
                     key=_SEND_AGAIN)


def _not_saved(notice) -> None:
    """The database is away: say so; the "Send it again" button is drawn once per run."""
    st.error(_NOT_SAVED)
    if notice is None:
        _send_again_button()


def _database_away(code: str, exc: StoreUnavailable) -> None:
    """The database cannot be read. The vote this page showed stays usable: a tap becomes
    the pending vote, sent again (the same randomized answer) once the database is back."""
    try:
        wanted = normalize_join_code(code)
    except BadInput:
        wanted = None
    shown = st.session_state.get(_ON_SCREEN)
    if not shown or shown[0] != wanted:
        st.error(f"{exc}")
        st.button("Try again", type="primary")
        return
    question = shown[1]
    payload, notice = _collect_vote(question)
    if payload is None:
        st.error(f"{exc}")
        return
    vote = _valid_payload(payload)
    if vote is None:
        st.error("That vote could not be read, so nothing was saved. Reload the page and "
                 "tap your answer again.")
        return
    st.session_state[_PENDING] = {"question_id": question.id, "payload": vote}
    _not_saved(notice)


def _physical_instructions(question) -> str:
    p = question.design_params
    yes, no = plain(question.options[1]), plain(question.options[0])
    kind = p.get("design")
    if kind == "die":
        k, t = p["faces"], p["truthful"]
        return (f"Privately roll a {k}-sided die (or pick a random number from 1 to {k}). "
                f"On **1–{t}** report your true answer; on **{t + 1}–{k}** report the "
                "opposite. Do not tell anyone what you rolled.")
    if kind == "two_coin":
        return (f"Privately flip a coin. **Heads:** report your true answer. **Tails:** flip "
                f"again and report **{yes}** on heads, **{no}** on tails.")
    if kind == "warner":
        return (f"Privately spin a spinner that lands on A with probability {p['p']:g}. "
                f"On **A**, answer “do you prefer {yes}?”; otherwise answer “do you NOT "
                f"prefer {yes}?”. Then tap what that answer means.")
    return ("Privately use the randomizer your instructor describes, then tap the answer it "
            "tells you to report.")


def _valid_payload(payload: object) -> dict | None:
    if not isinstance(payload, dict) or set(payload) != {"answer", "params", "submission_id"}:
        return None
    try:
        size = len(json.dumps(payload))
    except (TypeError, ValueError):
        return None
    if size > _MAX_PAYLOAD_CHARS or not isinstance(payload["params"], dict):
        return None
    return payload


def _submit(poll, question, payload: object, device: str, notice=None) -> None:
    """Store the vote; ``notice`` is the "not saved yet" placeholder when this is a resend."""
    vote = _valid_payload(payload)
    if vote is None:
        st.error("That vote could not be read, so nothing was saved. Reload the page and "
                 "tap your answer again.")
        return
    st.session_state[_PENDING] = {"question_id": question.id, "payload": vote}
    try:
        receipt = session.service().submit_report(
            poll.join_code, question.id, answer=vote["answer"], design_params=vote["params"],
            submission_id=str(vote["submission_id"]), device_id=device)
    except QuestionClosed:
        st.session_state.pop(_PENDING, None)
        st.error("**Voting closed.** The instructor closed this question before your answer "
                 "arrived, so nothing was saved.")
        return
    except StoreUnavailable:
        _not_saved(notice)
        return
    except BadReport as exc:
        st.session_state.pop(_PENDING, None)
        st.error(f"Your answer was not accepted: {exc} Reload the page to get the current "
                 "question.")
        return
    except ClassroomError as exc:
        st.error(f"{exc}")
        return
    st.session_state.pop(_PENDING, None)
    if notice is not None:  # sent again: the "not saved yet" note is out of date
        notice.empty()
    _show_receipt(poll, question, receipt, device, fresh=True)


# -- after voting -------------------------------------------------------------------------------
def _local_time(moment) -> str:
    """The receipt's server time in the phone's own time zone (UTC if it is unknown)."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    zone = st.context.timezone
    try:
        if isinstance(zone, str) and zone:
            return moment.astimezone(ZoneInfo(zone)).strftime("%H:%M:%S")
    except (ZoneInfoNotFoundError, ValueError):
        pass
    return moment.strftime("%H:%M:%S UTC")


def _show_receipt(poll, question, receipt, device: str, *, fresh: bool) -> None:
    """The receipt: after a tap (``fresh``), or whenever this phone opens the page again."""
    stamp = _local_time(receipt.created_at)
    done = ":material/check_circle:"
    if not fresh:
        st.success(f"**Your answer was received** at {stamp}.", icon=done)
    elif receipt.already_answered:  # a double tap or a second tab
        st.success(f"**You already answered** this question (received at {stamp}). "
                   "Nothing new was stored.", icon=done)
    else:
        st.success(f"**Answer received** at {stamp}", icon=done)
    st.markdown(f"**Question:** {plain(question.text)}  \n"
                f"**You reported:** {plain(receipt.answer_label)}")
    st.markdown(_privacy_note(question))
    spent = session.service().spent_epsilon(poll.id, device)
    st.caption(f"Privacy you have spent in this poll so far: ε = {spent:.2f} "
               "(the ε of each answer adds up: sequential composition).")
    _show_results(question)
    _wait_for_question(poll.id, question)


def _privacy_note(question) -> str:
    design = question.design
    eps = question.epsilon
    ratio = f"{math.exp(eps):.3g}×" if eps < 50 else "a huge factor"
    if question.kind == "binary":
        floor = float(design.channel.min())
        return (f"**Your privacy:** whatever you truly prefer, this report was at least "
                f"{floor:.0%} likely, and the odds between your two possible true answers "
                f"change by at most {ratio}: ε = {eps:.2f}. Nobody, including the "
                "instructor, can be sure from it what you really think.")
    return (f"**Your privacy:** the report your phone sent is almost as likely whatever your "
            f"true answer is: the odds change by at most {ratio} (ε = {eps:.2f}).")


def _show_results(question) -> None:
    if not question.revealed:
        return
    est = session.service().estimate(question.id)
    st.markdown("#### Class results")
    if est.empty:
        st.write("No answers were received.")
        return
    if question.kind == "binary":
        b = est.binary
        share = min(1.0, max(0.0, b.mu_hat))
        st.markdown(f"Estimated share who truly prefer **{plain(question.options[1])}**: "
                    f"**{b.mu_hat:.0%}** ± {b.sd_worst:.0%} (from {est.n} randomized answers)")
        st.progress(share)
        if b.outside_unit_interval:
            st.caption("The unbiased estimate can fall outside 0–100% when few people answer: "
                       "the randomization's noise is larger than the signal.")
    else:
        cat = est.categorical
        shares = cat.shares()
        for label, s in zip(question.options, shares):
            st.markdown(f"{plain(label)}: {s:.0%}")
            st.progress(min(1.0, max(0.0, float(s))))


def _phone_css() -> None:
    st.html("""<style>
      [data-testid="stMainBlockContainer"] { max-width: 34rem; padding-top: 1.5rem; }
      [data-testid="stBaseButton-primary"] p { font-size: 1.15rem; }
    </style>""")
