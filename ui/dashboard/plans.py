"""Lesson plans at the desk: pick a plan (shipped with the app or saved), edit its
questions, name and budget, save it, export it as a TOML file or import one, and start a
class from it in one click: a poll with the plan's budget and every question as a draft,
ready to open one by one.

The plan being edited lives in this session (one draft per plan, so switching plans
keeps unsaved edits) until it is saved; :mod:`classroom.plans` validates it and the
service stores it. Not shown on the projector.
"""

from __future__ import annotations

import re
from typing import Any

import streamlit as st

from classroom import designs, kinds
from classroom.domain import (
    MAX_COUNTDOWN_S,
    MIN_COUNTDOWN_S,
    NUMERIC_DESIGNS,
    ClassroomError,
)
from classroom.plans import (
    CS208_PLAN,
    MAX_PLAN_BYTES,
    LessonPlan,
    PlanError,
    PlanQuestion,
    dumps,
    shipped_names,
    shipped_plan,
)
from ui import session
from ui.dashboard.actions import flash, run_action
from ui.dashboard.kinds import VIEWS, view
from ui.dashboard.selection import select
from ui.fmt import fmt_eps, fmt_fixed
from ui.text import plain

__all__ = ["lecture_panel", "plan_summary", "plans_panel", "question_summary"]

_PICK = "dash_plan_pick"
_DRAFTS = "_dash_plan_drafts"  # {source: LessonPlan} edited in this session
_DIRTY = "_dash_plan_dirty"  # sources with unsaved edits
_EDITING = "_dash_plan_editing"  # None, or (source, index of the question, or None to add)
_UPLOADS = "_dash_plan_uploads"  # bumps the uploader's key, to clear it after an import
_IMPORT_PROBLEMS = "_dash_plan_import_problems"
_ED = "dash_plan_ed"  # the question editor's widget keys start with this

_NEW = "new"
#: Each design's parameters and where the editor starts them (a categorical design's d
#: is the number of options, a numeric design's lo and hi the range).
_DEFAULTS: dict[str, dict[str, float | int | str]] = {
    "die": {"faces": 4, "truthful": 3}, "two_coin": {}, "warner": {"p": 0.75},
    "memo": {"f": 0.5, "p": 0.25, "q": 0.75, "series": "weekly"},
    "gamma": {"gamma": 0.25}, "epsilon": {"epsilon": 1.0},
    "forced": {"p_truth": 0.5, "p_yes": 0.25},
    "grr": {"epsilon": 1.0}, "ue": {"p": 0.75, "q": 0.25},
    **{name: {"epsilon": 1.0, "lo": 0.0, "hi": 10.0} for name in NUMERIC_DESIGNS},
}
_LABELS = {"faces": "Faces of the die", "truthful": "Faces that tell the truth (1 to …)",
           "gamma": "γ: keep the truth w.p. ½ + γ", "epsilon": "ε: privacy loss",
           "p_truth": "Chance of telling the truth", "p_yes": "Chance of a forced yes",
           "lo": "Smallest answer", "hi": "Largest answer",
           "warner.p": "p: chance the spinner points at the statement",
           "f": "f: the kept answer is a coin flip w.p. f",
           "memo.p": "p: chance of a 1 from a kept 0", "memo.q": "q: chance of a 1 from a kept 1",
           "series": "Series (asked again in later lectures)",
           "ue.p": "p: chance a 1-bit stays 1", "ue.q": "q: chance a 0-bit turns 1"}
_INTEGER_PARAMS = {"faces", "truthful"}
_TEXT_PARAMS = {"series"}


# -- which plan, and its draft -------------------------------------------------------------


@st.cache_resource(show_spinner=False)
def _shipped(name: str) -> LessonPlan:
    """A shipped plan, read and validated once per process (plans are frozen)."""
    return shipped_plan(name)


def _sources(saved) -> dict[str, str]:
    """Every plan the selector offers: the shipped ones, the saved ones, a new one."""
    out: dict[str, str] = {}
    for name in shipped_names():
        try:
            title = _shipped(name).title
        except ClassroomError:
            continue
        out[f"shipped:{name}"] = f"{title} · ships with the app"
    for s in saved:
        out[f"saved:{s.id}"] = f"{s.title} · saved {s.updated_at:%Y-%m-%d %H:%M}"
    out[_NEW] = "A new, empty plan"
    return out


def _load(source: str) -> LessonPlan:
    kind, _, ident = source.partition(":")
    if kind == "shipped":
        return _shipped(ident)
    if kind == "saved":
        return session.service().plans.saved_plan(int(ident)).plan()
    return LessonPlan(title="New lesson plan")


def _draft(source: str) -> LessonPlan:
    drafts = st.session_state.setdefault(_DRAFTS, {})
    if source not in drafts:
        drafts[source] = _load(source)
    return drafts[source]


def _set_draft(source: str, plan: LessonPlan) -> None:
    st.session_state.setdefault(_DRAFTS, {})[source] = plan
    st.session_state.setdefault(_DIRTY, set()).add(source)


def _forget(source: str) -> None:
    st.session_state.setdefault(_DRAFTS, {}).pop(source, None)
    st.session_state.setdefault(_DIRTY, set()).discard(source)
    for key in [k for k in st.session_state if str(k).startswith(f"dash_plan_f_{source}_")]:
        del st.session_state[key]


def _questions(n: int) -> str:
    return f"{n} question" + ("" if n == 1 else "s")


# -- actions -------------------------------------------------------------------------------


def _instructor() -> bool:
    if session.is_instructor():
        return True
    flash("error", "Only the instructor can do that. Log in on the I'm teaching page.")
    return False


def _start(plan: LessonPlan, rehearsal: bool) -> None:
    def go():
        return session.service().plans.start_class(plan, rehearsal=rehearsal)

    started = run_action(go)
    if started is None:
        return
    poll, questions = started
    select(poll.id, questions[0].id)
    budget = (f" and a privacy budget of {fmt_eps(poll.epsilon_budget)}"
              if poll.epsilon_budget is not None else "")
    flash("success", f"Poll {poll.join_code} is ready: “{plan.title}”, "
                     f"{_questions(len(questions))} as drafts{budget}. Open Q1 when the "
                     "class is ready.")
    st.session_state["dash_open_plans"] = False


def cb_start(source: str) -> None:
    if _instructor():
        _start(_draft(source), bool(st.session_state.get("dash_plan_rehearsal")))


def cb_start_shipped(name: str) -> None:
    if not _instructor():
        return
    try:
        plan = _shipped(name)
    except ClassroomError as exc:
        flash("error", str(exc))
        return
    _start(plan, rehearsal=False)


def cb_save(source: str) -> None:
    if not _instructor():
        return
    plan = _draft(source)
    kind, _, ident = source.partition(":")
    plan_id = int(ident) if kind == "saved" else None
    saved = run_action(lambda: session.service().plans.save_plan(plan, plan_id))
    if saved is None:
        return
    new_source = f"saved:{saved.id}"
    if new_source != source:  # a shipped or new plan is saved as a plan of its own
        _forget(source)
    st.session_state.setdefault(_DRAFTS, {})[new_source] = plan
    st.session_state.setdefault(_DIRTY, set()).discard(new_source)
    st.session_state[_PICK] = new_source
    flash("success", f"Lesson plan “{plan.title}” saved.")


def cb_revert(source: str) -> None:
    _forget(source)
    st.session_state[_EDITING] = None


def cb_delete(source: str) -> None:
    if not _instructor():
        return
    if not st.session_state.get(f"dash_plan_confirm_delete_{source}"):
        flash("warning", "Tick the box to confirm, then delete.")
        return
    title = _draft(source).title
    done = run_action(lambda: session.service().plans.delete_plan(int(source.partition(":")[2])),
                      f"Lesson plan “{title}” deleted.")
    if done is not None:
        _forget(source)
        st.session_state[_PICK] = f"shipped:{CS208_PLAN}"


def cb_import(key: str) -> None:
    if not _instructor():
        return
    upload = st.session_state.get(key)
    if upload is None:
        return
    st.session_state.pop(_IMPORT_PROBLEMS, None)
    try:
        saved = session.service().plans.import_plan(upload.getvalue())
    except PlanError as exc:
        st.session_state[_IMPORT_PROBLEMS] = (upload.name, exc.problems)
        return
    except ClassroomError as exc:
        flash("error", f"{upload.name} was not imported: {exc}")
        return
    st.session_state[_UPLOADS] = st.session_state.get(_UPLOADS, 0) + 1
    st.session_state[_PICK] = f"saved:{saved.id}"
    plan = saved.plan()
    flash("success", f"Imported “{plan.title}” ({_questions(len(plan.questions))}) from "
                     f"{upload.name}.")


def cb_details(source: str) -> None:
    """The plan's name, description and budget from their fields."""
    key = f"dash_plan_f_{source}_"
    plan = _draft(source)
    budget = st.session_state.get(key + "budget") \
        if st.session_state.get(key + "budget_on") else None
    _set_draft(source, LessonPlan(title=st.session_state.get(key + "title", plan.title),
                                  questions=plan.questions,
                                  description=st.session_state.get(key + "description", ""),
                                  budget=None if budget is None else float(budget)))


def _still_there(plan: LessonPlan, index: int, then: str = "nothing was changed") -> bool:
    """True when the plan still has a question at ``index``; otherwise say so. A button
    of a question removed since the page was drawn (two clicks in one run, or a crafted
    message) gets this message instead of a traceback."""
    if 0 <= index < len(plan.questions):
        return True
    flash("warning", f"That question is no longer in the plan; {then}.")
    return False


def cb_move(source: str, index: int, offset: int) -> None:
    plan = _draft(source)
    if _still_there(plan, index):
        _set_draft(source, plan.with_question_moved(index, offset))
    st.session_state[_EDITING] = None


def cb_remove(source: str, index: int) -> None:
    plan = _draft(source)
    if _still_there(plan, index):
        _set_draft(source, plan.without_question(index))
    st.session_state[_EDITING] = None


# -- the question editor -------------------------------------------------------------------


def _fill_params(design: str, values: dict[str, Any] | None = None) -> None:
    """Put a design's parameters into the editor's fields (its defaults where not given)."""
    for name, default in _DEFAULTS[design].items():
        value = (values or {}).get(name, default)
        st.session_state[f"{_ED}_p_{name}"] = (
            str(value) if name in _TEXT_PARAMS
            else int(value) if name in _INTEGER_PARAMS else float(value))


def cb_edit(source: str, index: int | None, question: PlanQuestion) -> None:
    """Open the editor on a question of the plan (``index``), or on a new one."""
    st.session_state[_EDITING] = (source, index)
    ss = st.session_state
    ss[f"{_ED}_text"] = question.text
    ss[f"{_ED}_kind"] = question.kind
    ss[f"{_ED}_options"] = "" if kinds.kind(question.kind).has_unit else \
        "\n".join(question.options)
    ss[f"{_ED}_unit"] = question.unit
    ss[f"{_ED}_mode"] = question.mode
    ss[f"{_ED}_countdown_on"] = question.countdown_s is not None
    ss[f"{_ED}_countdown"] = question.countdown_s or 60
    params = question.design_params
    ss[f"{_ED}_design"] = params["design"]
    _fill_params(params["design"], params)


def cb_cancel_edit() -> None:
    st.session_state[_EDITING] = None


def _cb_kind() -> None:
    kind = st.session_state[f"{_ED}_kind"]
    design = view(kind).first_design
    st.session_state[f"{_ED}_design"] = design
    _fill_params(design)
    if not kinds.kind(kind).physical:
        st.session_state[f"{_ED}_mode"] = "device"


def _cb_design() -> None:
    _fill_params(st.session_state[f"{_ED}_design"])


def _edited() -> tuple[PlanQuestion | None, tuple[str, ...]]:
    """The question in the editor's fields, or None with the problems."""
    ss = st.session_state
    kind, design = ss.get(f"{_ED}_kind"), ss.get(f"{_ED}_design")
    labels = [line.strip() for line in str(ss.get(f"{_ED}_options", "")).splitlines()
              if line.strip()]
    params: dict[str, Any] = {"design": design}
    params.update({name: ss.get(f"{_ED}_p_{name}", default)
                   for name, default in _DEFAULTS.get(str(design), {}).items()})
    if isinstance(kind, str) and kind in VIEWS:
        params.update(view(kind).fixed_params(labels))
    try:
        question = PlanQuestion.build(
            text=ss.get(f"{_ED}_text", ""), kind=kind, options=labels,
            unit=ss.get(f"{_ED}_unit", ""), design_params=params,
            mode=ss.get(f"{_ED}_mode", "device"),
            countdown_s=int(ss[f"{_ED}_countdown"]) if ss.get(f"{_ED}_countdown_on") else None)
    except PlanError as exc:
        return None, tuple(p.removeprefix("question.") for p in exc.problems)
    return question, ()


def cb_apply(source: str, index: int | None) -> None:
    question, problems = _edited()
    if question is None:
        flash("error", "The question was not changed: " + "; ".join(problems))
        return
    plan = _draft(source)
    if index is not None and not _still_there(plan, index, "add it as a new one"):
        return
    _set_draft(source, plan.with_question(question) if index is None
               else plan.with_question_replaced(index, question))
    st.session_state[_EDITING] = None


def _param_input(design: str, name: str) -> None:
    label = _LABELS.get(f"{design}.{name}", _LABELS.get(name, name))
    key = f"{_ED}_p_{name}"
    if name in _TEXT_PARAMS:
        st.text_input(label, key=key, max_chars=40)
    elif name in _INTEGER_PARAMS:
        st.number_input(label, min_value=1, max_value=1000, step=1, key=key)
    else:
        st.number_input(label, step=0.05 if name not in ("lo", "hi") else 1.0,
                        format="%g", key=key)


def _recommendation(question: PlanQuestion) -> str:
    """What ldp_core recommends for the question's kind at its ε, when it is not chosen."""
    return view(question.kind).recommendation(question)


def _editor(source: str, index: int | None) -> None:
    with st.container(border=True):
        st.markdown("**Add a question to the plan**" if index is None
                    else f"**Edit question {index + 1}**")
        st.text_area("Question", key=f"{_ED}_text", height=68)
        kind = st.radio("Kind", list(VIEWS), format_func=lambda k: view(k).title,
                        key=f"{_ED}_kind", horizontal=True, on_change=_cb_kind)
        strategy = kinds.kind(kind)
        if strategy.has_unit:
            st.text_input("Unit (optional)", key=f"{_ED}_unit", max_chars=24)
        else:
            st.text_area("Options, one per line" + view(kind).options_hint,
                         key=f"{_ED}_options", height=90)
        names = strategy.designs
        design = st.selectbox("Design", names, key=f"{_ED}_design", on_change=_cb_design,
                              format_func=lambda d: designs.name({"design": d}))
        params = list(_DEFAULTS.get(design, {}))
        for col, name in zip(st.columns(max(len(params), 1)), params, strict=False):
            with col:
                _param_input(design, name)
        mode_col, timer_col, seconds_col = st.columns([2, 1, 1], vertical_alignment="bottom")
        if strategy.physical:
            mode_col.radio("Randomization", ["device", "physical"], key=f"{_ED}_mode",
                           horizontal=True, format_func={
                               "device": "On the phone", "physical": "By hand"}.__getitem__)
        timer_col.checkbox("Countdown", key=f"{_ED}_countdown_on",
                           help="Voting closes by itself after this many seconds.")
        seconds_col.number_input("Seconds", MIN_COUNTDOWN_S, MAX_COUNTDOWN_S, step=10,
                                 key=f"{_ED}_countdown",
                                 disabled=not st.session_state.get(f"{_ED}_countdown_on"))
        question, problems = _edited()
        if question is None:
            st.error("; ".join(problems))
        else:
            st.caption(f"{_design_line(question)}.{_recommendation(question)}")
        apply_col, cancel_col, _ = st.columns([1, 1, 2])
        apply_col.button("Add to the plan" if index is None else "Apply", type="primary",
                         key="dash_plan_apply", disabled=question is None,
                         on_click=cb_apply, args=(source, index), width="stretch")
        cancel_col.button("Cancel", key="dash_plan_cancel", on_click=cb_cancel_edit,
                          width="stretch")


# -- drawing -------------------------------------------------------------------------------


def _kind_line(q: PlanQuestion) -> str:
    return view(q.kind).plan_line(q)


def _design_line(q: PlanQuestion) -> str:
    """The design with its numbers, and its ε when the numbers do not already say it."""
    described = designs.describe(q.design_params)
    return described if "ε =" in described else \
        f"{described} · ε\u00a0=\u00a0{fmt_fixed(q.epsilon, 2)}"


def question_summary(q: PlanQuestion) -> str:
    """One line: the answers, the design with its numbers, ε, and how it is run."""
    parts = [_kind_line(q), _design_line(q)]
    if q.countdown_s is not None:
        parts.append(f"countdown {q.countdown_s} s")
    if q.mode == "physical":
        parts.append("randomized by hand")
    return " · ".join(parts)


def plan_summary(plan: LessonPlan) -> str:
    total = fmt_fixed(plan.total_epsilon, 2)
    line = (f"{_questions(len(plan.questions))}; a student who answers every one spends "
            f"ε = {total}")
    return line + (f", within the budget of {fmt_eps(plan.budget)}."
                   if plan.budget is not None else "; no budget.")


def _question_rows(source: str, plan: LessonPlan) -> None:
    editing = st.session_state.get(_EDITING)
    for i, q in enumerate(plan.questions):
        text, tools = st.columns([3, 2], vertical_alignment="center")
        text.markdown(f"**{i + 1}.** {plain(q.text)}  \n:gray[{plain(question_summary(q))}]")
        buttons = tools.container(horizontal=True, horizontal_alignment="right")
        buttons.button("Up", key=f"dash_plan_up_{i}", help="Move up", disabled=i == 0,
                       on_click=cb_move, args=(source, i, -1))
        buttons.button("Down", key=f"dash_plan_down_{i}", help="Move down",
                       disabled=i == len(plan.questions) - 1, on_click=cb_move,
                       args=(source, i, 1))
        buttons.button("Edit", key=f"dash_plan_edit_{i}", on_click=cb_edit,
                       args=(source, i, q))
        buttons.button("Remove", key=f"dash_plan_remove_{i}", help="Remove from the plan",
                       on_click=cb_remove, args=(source, i))
        if editing == (source, i):
            _editor(source, i)
    if not plan.questions:
        st.info("No questions yet: add the first one below.")
    try:
        starts = _shipped(CS208_PLAN).questions
    except ClassroomError:  # the shipped file is damaged: start from this plan's questions
        starts = plan.questions
    if not starts:
        st.warning("The shipped CS208 plan cannot be read, so there is no question to "
                   "start from; import a plan file instead.")
        return
    templates = {f"{i}": q for i, q in enumerate(starts)}
    pick, add = st.columns([4, 1], vertical_alignment="bottom")
    chosen = pick.selectbox("Add a question, starting from", list(templates),
                            format_func=lambda i: templates[i].text[:70],
                            key="dash_plan_template",
                            help="A question of the CS208 lecture to start from; change "
                            "anything before adding it.")
    add.button("New question", icon=":material/add:", key="dash_plan_add",
               on_click=cb_edit, args=(source, None, templates[chosen]), width="stretch")
    if editing == (source, None):
        _editor(source, None)


def _details(source: str, plan: LessonPlan) -> None:
    key = f"dash_plan_f_{source}_"
    st.session_state.setdefault(key + "title", plan.title)
    st.session_state.setdefault(key + "description", plan.description)
    st.session_state.setdefault(key + "budget_on", plan.budget is not None)
    st.session_state.setdefault(key + "budget", plan.budget if plan.budget is not None
                                else max(1.0, round(plan.total_epsilon + 0.005, 2)))
    st.text_input("Name (the poll's title too)", key=key + "title", max_chars=100,
                  on_change=cb_details, args=(source,))
    st.text_area("Description (for you and colleagues; say why the budget is what it is)",
                 key=key + "description", max_chars=2000, height=120,
                 on_change=cb_details, args=(source,))
    on, value = st.columns([1, 1], vertical_alignment="bottom")
    on.checkbox("Privacy budget for the poll", key=key + "budget_on", on_change=cb_details,
                args=(source,), help="The most ε one student may spend in the class "
                "(sequential composition: the ε of each answer adds up).")
    value.number_input("Total ε per student", step=0.1, format="%.2f", key=key + "budget",
                       on_change=cb_details, args=(source,),
                       disabled=not st.session_state.get(key + "budget_on"))


def _file(source: str, plan: LessonPlan, problems: tuple[str, ...]) -> None:
    slug = re.sub(r"[^a-z0-9]+", "-", plan.title.lower()).strip("-") or "lesson-plan"
    st.download_button("Export as a TOML file", icon=":material/download:",
                       data=dumps(plan) if not problems else "", file_name=f"{slug}.toml",
                       mime="application/toml", key="dash_plan_export", on_click="ignore",
                       disabled=bool(problems),
                       help="A readable file to keep or share; docs/lesson-plans.md "
                       "describes it. Import it again below.")
    key = f"dash_plan_upload_{st.session_state.get(_UPLOADS, 0)}"
    st.file_uploader(f"Import a plan file (.toml, at most {MAX_PLAN_BYTES // 1024} KB)",
                     type=["toml"], key=key, on_change=cb_import, args=(key,),
                     max_upload_size=1)
    # Said once, as the desk's other messages (actions.show_flash): the next action clears
    # it, so a refusal never stays beside what came after.
    found = st.session_state.pop(_IMPORT_PROBLEMS, None)
    if found:
        name, listed = found
        st.error(f"**{plain(name)} was not imported** (nothing was saved):\n\n"
                 + "\n".join(f"- {plain(p)}" for p in listed))
    if source.startswith("saved:"):
        st.checkbox(f"Yes, delete the saved plan “{plain(plan.title)}”",
                    key=f"dash_plan_confirm_delete_{source}")
        st.button("Delete this plan", key="dash_plan_delete", on_click=cb_delete,
                  args=(source,))


def lecture_panel() -> None:
    """Beside the class exercise: the whole CS208 lecture from its shipped plan, one click."""
    st.subheader("Run a whole lecture")
    try:
        plan = _shipped(CS208_PLAN)
    except ClassroomError as exc:
        st.warning(f"The CS208 lesson plan cannot be read: {exc}")
        return
    listed = "\n".join(f"{i}. {plain(q.text if len(q.text) <= 60 else q.text[:59] + '…')}"
                       for i, q in enumerate(plan.questions, 1))
    st.markdown(f"The lesson plan **{plain(plan.title)}** creates a poll with the lecture's "
                f"questions as drafts, to open one by one:\n\n{listed}\n\n"
                f"{plan_summary(plan)}")
    st.button("Start the lecture", icon=":material/event_note:", type="primary",
              key="dash_start_cs208", on_click=cb_start_shipped, args=(CS208_PLAN,),
              help="Change it, or build your own plan, under Lesson plans below.")


def plans_panel(*, expanded: bool = False) -> None:
    """The "Lesson plans" area of the desk view."""
    with st.expander("Lesson plans", icon=":material/event_note:", expanded=expanded,
                     key="dash_open_plans", on_change="rerun"):
        try:
            saved = session.service().plans.list_plans()
        except ClassroomError as exc:
            st.warning(f"Saved plans cannot be read right now: {exc}")
            saved = []
        sources = _sources(saved)
        if st.session_state.get(_PICK) not in sources:
            st.session_state[_PICK] = next(iter(sources))
        source = st.selectbox("Plan", list(sources), format_func=sources.__getitem__,
                              key=_PICK)
        try:
            plan = _draft(source)
        except ClassroomError as exc:
            st.error(f"This plan cannot be read: {exc}")
            return
        problems = plan.problems()
        dirty = source in st.session_state.get(_DIRTY, set())
        st.markdown(plan_summary(plan))
        start, rehearse, save, revert = st.columns([2, 1, 1, 1], vertical_alignment="center")
        start.button("Start a class from this plan", icon=":material/play_arrow:",
                     type="primary", key="dash_plan_start", disabled=bool(problems),
                     on_click=cb_start, args=(source,), width="stretch",
                     help="Creates a poll with the plan's budget and every question as a "
                     "draft, ready to open one by one.")
        rehearse.checkbox("Rehearsal", key="dash_plan_rehearsal",
                          help="A rehearsal poll accepts simulated students.")
        save.button("Save a copy" if not source.startswith("saved:") else "Save",
                    icon=":material/save:", key="dash_plan_save", width="stretch",
                    disabled=bool(problems) or (source.startswith("saved:") and not dirty),
                    on_click=cb_save, args=(source,))
        revert.button("Undo edits", key="dash_plan_revert", disabled=not dirty,
                      on_click=cb_revert, args=(source,), width="stretch")
        if problems:
            st.warning("Fix this before starting or saving: " + "; ".join(problems))
        elif dirty:
            st.caption("Unsaved changes: they are kept in this browser tab until you save.")
        questions_tab, details_tab, file_tab = st.tabs(
            ["Questions", "Name, description, budget", "File: export, import, delete"])
        with questions_tab:
            _question_rows(source, plan)
        with details_tab:
            _details(source, plan)
        with file_tab:
            _file(source, plan, problems)
