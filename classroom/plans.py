"""Lesson plans: the questions of a lecture, prepared before class, kept and shared as a file.

A plan is a title, a description, an optional privacy budget (the poll's) and an ordered
list of questions. Each question is what :meth:`Polls.add_question` takes (text,
kind, options or a numeric question's unit, design parameters exactly as the classroom
stores them, mode) plus an optional countdown. Every question is checked by the same
functions ``add_question`` uses (:mod:`classroom.domain`), and the budget by the same
arithmetic as the service's (:class:`~classroom.domain.BudgetStatus` over the sequential
composition of the questions' ε), so a plan that validates here starts a class that the
service accepts, question by question, to the last.

The file is TOML (``docs/lesson-plans.md`` documents every field): an instructor
writes and reads it by hand, with comments; it is read with :mod:`tomllib` and written
with ``tomli-w``. :func:`loads` validates a whole file before anything is used and
raises :class:`PlanError` listing every problem, each naming its line and field.
:func:`dumps` and :func:`loads` are inverse: ``loads(dumps(plan)) == plan``.

Pure: no database and no Streamlit. The app ships its plans as files in ``plans/``,
read through the same :func:`loads` (:func:`shipped_plan`).
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import tomli_w

from . import kinds
from .domain import (
    KINDS,
    MAX_QUESTION_CHARS,
    MAX_TITLE_CHARS,
    BadInput,
    BudgetStatus,
    Designed,
    check_kind_and_mode,
    clean_countdown,
    clean_options,
    clean_text,
    finite_or_inf,
    question_design,
)
from .kinds.binary import series_charges
from .privacy_numbers import epsilon_up

__all__ = [
    "CS208_PLAN",
    "FORMAT_VERSION",
    "MAX_DESCRIPTION_CHARS",
    "MAX_KEY_PARTS",
    "MAX_PLAN_BYTES",
    "MAX_PLAN_NESTING",
    "MAX_PLAN_QUESTIONS",
    "SHIPPED_DIR",
    "LessonPlan",
    "PlanError",
    "PlanQuestion",
    "SavedPlan",
    "dumps",
    "loads",
    "plan_from_dict",
    "plan_to_dict",
    "shipped_names",
    "shipped_plan",
]

#: The version of the file format this code reads and writes.
FORMAT_VERSION = 1
#: The largest plan file read, in bytes (the shipped CS208 plan is about 4 KB; 60
#: questions with 20 long options each stay below it).
MAX_PLAN_BYTES = 128 * 1024
MAX_PLAN_QUESTIONS = 60
MAX_DESCRIPTION_CHARS = 2000
#: How deep arrays and inline tables may nest in a plan file (the shipped plan nests 2
#: deep), and how many dotted parts a key may have (its deepest is ``questions.design``).
#: Checked before the file is parsed: :mod:`tomllib` recurses once per level (50,000
#: nested arrays raise ``RecursionError``) and spends time quadratic in a key's parts (one
#: key of 64,000 parts, 126 KB, takes minutes), so within these limits any file up to
#: :data:`MAX_PLAN_BYTES` is read, or refused, within a fraction of a second
#: (``bench/bench_plan_import.py``).
MAX_PLAN_NESTING = 10
MAX_KEY_PARTS = 10
#: Problems listed in one message at most (the rest are counted).
_MAX_PROBLEMS = 12

#: Where the app's own plans live, one TOML file each.
SHIPPED_DIR = Path(__file__).resolve().parent.parent / "plans"
#: The shipped plan of the CS208 lecture "The Local Model: Foundations".
CS208_PLAN = "cs208-local-model"

_PLAN_KEYS = ("version", "title", "description", "budget", "questions")
_QUESTION_KEYS = ("text", "kind", "options", "unit", "mode", "countdown_s", "design")


class PlanError(BadInput):
    """A plan, or a plan file, that cannot be used. ``problems`` lists every problem found,
    each starting with the field it is about (``questions[3].design.p: ...``), and with
    the line when it came from a file."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        shown = list(self.problems[:_MAX_PROBLEMS])
        if len(self.problems) > _MAX_PROBLEMS:
            shown.append(f"… and {len(self.problems) - _MAX_PROBLEMS} more")
        head = "the lesson plan was not used" if len(self.problems) != 1 else ""
        super().__init__("; ".join(shown) if not head else f"{head}: " + "; ".join(shown))


@dataclass(frozen=True)
class PlanQuestion(Designed):
    """One question of a plan, checked as :meth:`Polls.add_question` checks it.

    Build one with :meth:`build`. ``options`` follows the classroom's answer encoding
    (a numeric question's is ``(unit,)``); ``design_json`` is the canonical JSON of the
    design parameters, so two questions with the same design compare equal.
    """

    text: str
    kind: str
    options: tuple[str, ...]
    design_json: str
    mode: str = "device"
    countdown_s: int | None = None

    @classmethod
    def build(cls, *, text: object, kind: object, options: object = None,
              design_params: object, unit: object = None, mode: object = "device",
              countdown_s: object = None) -> PlanQuestion:
        """A checked question; :class:`PlanError` names each field that is wrong.

        A numeric question gives ``unit`` (or ``options=(unit,)``); the others
        ``options``.
        """
        raw: dict[str, Any] = {"text": text, "kind": kind, "design": design_params,
                               "mode": mode, "countdown_s": countdown_s}
        if kind in KINDS and kinds.kind(kind).has_unit:
            raw["unit"] = unit if unit is not None else \
                (options[0] if isinstance(options, (list, tuple)) and options else "")
        else:
            raw["options"] = options
        problems: list[str] = []
        question = _question(raw, "question", problems)
        if question is None:
            raise PlanError(problems)
        return question

    @property
    def design_params(self) -> dict[str, Any]:
        """The design parameters, in the order ldp_core gives them (a fresh dict)."""
        return self.design.params()

    @property
    def unit(self) -> str:
        return kinds.kind(self.kind).unit(self.options)


@dataclass(frozen=True)
class LessonPlan:
    """A lecture's questions in order, with a title, a description and an optional budget.

    A plan read from a file or from :func:`plan_from_dict` is valid; one being edited may
    not be (no questions yet, or over its budget): :meth:`problems` says what is wrong,
    and :meth:`checked` raises :class:`PlanError` with it.
    """

    title: str
    questions: tuple[PlanQuestion, ...] = ()
    description: str = ""
    #: The poll's privacy budget: the most ε one student may spend in the class, or None.
    budget: float | None = None

    @property
    def epsilons(self) -> tuple[float, ...]:
        return tuple(q.epsilon for q in self.questions)

    @property
    def charges(self) -> tuple[float, ...]:
        """What each question adds to a student's spending: its ε, a question of a series
        no more than the series' ε∞ together (:func:`classroom.kinds.binary.series_charges`)."""
        return tuple(series_charges([((q.design,), q.epsilon) for q in self.questions]))

    @property
    def total_epsilon(self) -> float:
        """What a student who answers every question spends (sequential composition)."""
        return finite_or_inf(list(self.charges))

    def budget_status(self) -> BudgetStatus:
        """The plan's budget against what a student spends who answers every question
        once: the poll's own count once the plan has been run (its rounds are not
        created yet, so none are listed)."""
        return BudgetStatus(budget=self.budget, committed=self.total_epsilon, rounds=())

    def problems(self) -> tuple[str, ...]:
        """Everything that stops this plan from being saved or started (empty when none)."""
        try:
            self.checked()
        except PlanError as exc:
            return exc.problems
        return ()

    def checked(self) -> LessonPlan:
        """This plan validated again through the file's own path (:func:`plan_from_dict`)."""
        return plan_from_dict(plan_to_dict(self))

    # -- editing: each returns a new plan --------------------------------------------------
    def with_question(self, question: PlanQuestion, at: int | None = None) -> LessonPlan:
        """The plan with ``question`` inserted before position ``at`` (default: last)."""
        qs = list(self.questions)
        qs.insert(len(qs) if at is None else at, question)
        return replace(self, questions=tuple(qs))

    def without_question(self, index: int) -> LessonPlan:
        qs = list(self.questions)
        del qs[index]
        return replace(self, questions=tuple(qs))

    def with_question_moved(self, index: int, offset: int) -> LessonPlan:
        """The question at ``index`` moved by ``offset`` places, kept within the plan."""
        qs = list(self.questions)
        target = min(max(index + offset, 0), len(qs) - 1)
        qs.insert(target, qs.pop(index))
        return replace(self, questions=tuple(qs))

    def with_question_replaced(self, index: int, question: PlanQuestion) -> LessonPlan:
        qs = list(self.questions)
        qs[index] = question
        return replace(self, questions=tuple(qs))


@dataclass(frozen=True)
class SavedPlan:
    """A plan saved in the classroom database, kept as its TOML file."""

    id: int
    title: str
    document: str
    created_at: datetime
    updated_at: datetime

    def plan(self) -> LessonPlan:
        """The plan, read back through the import path (:func:`loads`)."""
        return loads(self.document)


# -- validation: the one path from plain data to a plan -----------------------------------


def _shorten(value: object, limit: int = 30) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _without_name(message: str, name: str) -> str:
    """``"text must not be empty"`` → ``"must not be empty"`` (the field is named before)."""
    return message[len(name) + 1:] if message.startswith(name + " ") else message


def _unknown(raw: Mapping[str, Any], known: Sequence[str], path: str,
             problems: list[str]) -> None:
    extra = [k for k in raw if k not in known]
    if extra:
        where = f"{path}." if path else ""
        named = ", ".join(_clip(k) for k in extra[:8]) + (
            f" and {len(extra) - 8} more" if len(extra) > 8 else "")
        problems.append(f"{where}{_clip(extra[0])}: unknown field" if len(extra) == 1 else
                        f"{path or 'the plan'}: unknown fields {named}")


def _design_problem(path: str, message: str, params: Mapping[str, Any]) -> str:
    """Name the design parameter an ldp_core message is about when it starts with one."""
    message = _without_name(message, "design parameters:").strip()
    key = message.split(" ", 1)[0]
    if key in params and key != "design":
        return f"{path}.design.{key}: {_without_name(message, key)}"
    return f"{path}.design: {message}"


def _question(raw: object, path: str, problems: list[str]) -> PlanQuestion | None:
    """One question from plain data, or None with its problems added to ``problems``."""
    if not isinstance(raw, Mapping):
        problems.append(f"{path}: must be a table of fields (text, kind, design, …), got "
                        f"{_shorten(raw)}")
        return None
    before = len(problems)
    _unknown(raw, _QUESTION_KEYS, path, problems)
    kind, mode = _kind_and_mode(raw, path, problems)
    text = _field(problems, f"{path}.text", "text", lambda: clean_text(
        "text", raw.get("text"), 1, MAX_QUESTION_CHARS, multiline=True))
    labels = None if kind is None else _labels(raw, kind, path, problems)
    countdown = _field(problems, f"{path}.countdown_s", "the countdown",
                       lambda: clean_countdown(raw.get("countdown_s")))
    design_json = _design_json(raw, kind, labels, path, problems)
    if len(problems) > before or text is None or labels is None or design_json is None \
            or not isinstance(kind, str) or not isinstance(mode, str):
        return None
    return PlanQuestion(text=text, kind=kind, options=labels, design_json=design_json,
                        mode=mode, countdown_s=countdown)


def _field(problems: list[str], where: str, name: str, clean: Callable[[], Any]) -> Any:
    """``clean()``, or None with its problem (named at ``where``) added."""
    try:
        return clean()
    except BadInput as exc:
        problems.append(f"{where}: {_without_name(str(exc), name)}")
        return None


def _kind_and_mode(raw: Mapping[str, Any], path: str, problems: list[str]
                   ) -> tuple[str | None, object]:
    """The question's kind (None when missing or unknown) and its mode, checked together."""
    kind, mode = raw.get("kind"), raw.get("mode", "device")
    if kind is None:
        problems.append(f"{path}.kind: missing; one of {', '.join(KINDS)}")
    else:
        try:
            check_kind_and_mode(kind, mode)
        except BadInput as exc:
            field = "kind" if str(exc).startswith("kind") else "mode"
            problems.append(f"{path}.{field}: {_without_name(str(exc), field)}")
    return (kind if kind in KINDS else None), mode


def _labels(raw: Mapping[str, Any], kind: str, path: str, problems: list[str]
            ) -> tuple[str, ...] | None:
    """The question's options, or for a kind with a unit its unit (one entry)."""
    if kinds.kind(kind).has_unit:
        if "options" in raw:
            problems.append(f"{path}.options: a {kind} question has a unit and a range "
                            "(the design's lo and hi), not options")
        labels: tuple[str, ...] | None = _field(
            problems, f"{path}.unit", "unit", lambda: clean_options((raw.get("unit", ""),), kind))
        return labels
    if "unit" in raw:
        problems.append(f"{path}.unit: only a numeric question has a unit")
    if "options" not in raw:
        problems.append(f"{path}.options: missing; list the answers, e.g. [\"No\", \"Yes\"]")
        return None
    try:
        return clean_options(raw["options"], kind)
    except BadInput as exc:
        problems.append(f"{path}.options: {exc}")
        return None


def _design_json(raw: Mapping[str, Any], kind: str | None, labels: tuple[str, ...] | None,
                 path: str, problems: list[str]) -> str | None:
    """The question's design, checked as a question's (canonical JSON), or None."""
    params = raw.get("design")
    if not isinstance(params, Mapping):
        problems.append(f"{path}.design: " + ("missing; " if params is None else
                                              f"must be a table, got {_shorten(params)}; ")
                        + "e.g. { design = \"die\", faces = 4, truthful = 3 }")
        return None
    if kind is None:
        return None
    try:
        return question_design(kind, dict(params), labels if labels is not None else ())[1]
    except BadInput as exc:
        # Without valid options the d check would only repeat the options' problem.
        if labels is not None or "options" not in str(exc):
            problems.append(_design_problem(path, str(exc), params))
        return None


def _budget(value: object, problems: list[str]) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not (math.isfinite(value) and value > 0):
        problems.append(f"budget: must be a positive number (the total ε a student may "
                        f"spend), or left out for none; got {_shorten(value)}")
        return None
    return float(value)


def _clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _afford(plan: LessonPlan, problems: list[str]) -> None:
    """The service's own budget arithmetic, question by question in the plan's order: a
    student who answered every earlier question has spent their composition; the
    question fits when :meth:`BudgetStatus.allows` its ε on top."""
    if plan.budget is None:
        return
    charges = plan.charges
    for i, eps in enumerate(charges):
        status = BudgetStatus(budget=plan.budget,
                              committed=finite_or_inf(list(charges[:i])), rounds=())
        if not status.allows(eps):
            total = plan.total_epsilon
            need = "no finite budget covers it" if math.isinf(total) else \
                f"raise the budget to at least {epsilon_up(total)}, or remove questions"
            problems.append(
                f"budget: ε = {plan.budget:g} does not cover the plan: a student who answers "
                f"every question spends ε = {epsilon_up(total)} (each answer's ε adds up), and "
                f"questions[{i + 1}] (“{_clip(plan.questions[i].text)}”) would bring it to "
                f"ε = {epsilon_up(status.committed + eps)}; {need}")
            return


def plan_from_dict(data: object, *, lines: _Lines | None = None) -> LessonPlan:
    """A valid plan from plain data (a parsed file), or :class:`PlanError` listing every
    problem. Questions are counted from 1 in messages, as the dashboard's Q1, Q2, …"""
    problems: list[str] = []
    if not isinstance(data, Mapping):
        raise PlanError([f"a lesson plan is a table of fields, got {_shorten(data)}"])
    _unknown(data, _PLAN_KEYS, "", problems)
    version = data.get("version", FORMAT_VERSION)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        problems.append(f"version: must be a whole number (this app writes "
                        f"{FORMAT_VERSION}), got {_shorten(version)}")
    elif version > FORMAT_VERSION:
        problems.append(f"version: the plan is in format {version}, newer than this app "
                        f"reads ({FORMAT_VERSION}); update the app")
    title = ""
    try:
        title = clean_text("title", data.get("title"), 1, MAX_TITLE_CHARS)
    except BadInput as exc:
        problems.append(f"title: {_without_name(str(exc), 'title')}")
    description = ""
    try:
        description = clean_text("description", data.get("description", ""), 0,
                                 MAX_DESCRIPTION_CHARS, multiline=True)
    except BadInput as exc:
        problems.append(f"description: {_without_name(str(exc), 'description')}")
    budget = _budget(data.get("budget"), problems)
    raw_questions = data.get("questions")
    questions: list[PlanQuestion | None] = []
    if not isinstance(raw_questions, list) or not raw_questions:
        problems.append("questions: a plan needs at least one question "
                        "(a [[questions]] table each)")
    elif len(raw_questions) > MAX_PLAN_QUESTIONS:
        problems.append(f"questions: the plan has {len(raw_questions)} questions; the limit "
                        f"is {MAX_PLAN_QUESTIONS}")
    else:
        questions = [_question(q, f"questions[{i + 1}]", problems)
                     for i, q in enumerate(raw_questions)]
    if not problems:
        plan = LessonPlan(title=title, description=description, budget=budget,
                          questions=tuple(q for q in questions if q is not None))
        _afford(plan, problems)
        if not problems:
            return plan
    raise PlanError(problems if lines is None else [lines.locate(p) for p in problems])


def plan_to_dict(plan: LessonPlan) -> dict[str, Any]:
    """The plan as the file's plain data (defaults left out: mode "device", no countdown,
    no budget, no description); :func:`plan_from_dict` reads it back."""
    out: dict[str, Any] = {"version": FORMAT_VERSION, "title": plan.title}
    if plan.budget is not None:
        out["budget"] = plan.budget
    if plan.description:
        out["description"] = plan.description
    questions = []
    for q in plan.questions:
        item: dict[str, Any] = {"text": q.text, "kind": q.kind}
        if kinds.kind(q.kind).has_unit:
            item["unit"] = q.unit
        else:
            item["options"] = list(q.options)
        if q.mode != "device":
            item["mode"] = q.mode
        if q.countdown_s is not None:
            item["countdown_s"] = q.countdown_s
        item["design"] = q.design_params
        questions.append(item)
    out["questions"] = questions
    return out


# -- the file -------------------------------------------------------------------------------

_HEADER = """\
# A lesson plan of the LDP classroom: docs/lesson-plans.md describes every field.
# On the dashboard: Lesson plans → Import a plan file; then Start a class from it.

"""


def dumps(plan: LessonPlan) -> str:
    """The plan as a TOML file (multi-line text kept readable)."""
    return _HEADER + tomli_w.dumps(plan_to_dict(plan), multiline_strings=True)


class _Lines:
    """Where a plan file's fields are, to name a problem's line (best effort: the line
    of the field's key inside its question's ``[[questions]]`` block, else that block's
    header)."""

    _HEADER = re.compile(r"^\s*\[\[\s*questions\s*\]\]")

    def __init__(self, text: str) -> None:
        self._lines = text.splitlines()
        self._starts = [i for i, line in enumerate(self._lines) if self._HEADER.match(line)]

    def _block(self, index: int | None) -> tuple[int, int] | None:
        if index is None:
            return 0, self._starts[0] if self._starts else len(self._lines)
        if not 1 <= index <= len(self._starts):
            return None
        start = self._starts[index - 1]
        end = self._starts[index] if index < len(self._starts) else len(self._lines)
        return start, end

    def line_of(self, path: str) -> int | None:
        """The 1-based line of ``path`` (``budget``, ``questions[3].design.p``)."""
        found = re.match(r"questions\[(\d+)\]((?:\.\w+)*)", path)
        index = int(found.group(1)) if found else None
        keys = (found.group(2) if found else "." + path.split(".")[0]).strip(".").split(".")
        block = self._block(index)
        if block is None:
            return None
        start, end = block
        key = keys[-1] if keys and keys[-1] else ""
        if key and key != "questions":
            pattern = re.compile(rf"(^|[{{,\s]){re.escape(key)}\s*=")
            for i in range(start, end):
                if pattern.search(self._lines[i].split("#", 1)[0]):
                    return i + 1
        return start + 1 if index is not None else None

    def locate(self, problem: str) -> str:
        path = problem.split(":", 1)[0]
        if " " in path:
            return problem
        line = self.line_of(path)
        return problem if line is None else f"line {line}, {problem}"


def loads(data: bytes | str) -> LessonPlan:
    """A plan from a TOML file's bytes or text, validated whole (:class:`PlanError`).

    The size is checked before anything is parsed (:data:`MAX_PLAN_BYTES`); the text
    must be UTF-8 (a leading byte-order mark is allowed).
    """
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "replace"))
    if size > MAX_PLAN_BYTES:
        raise PlanError([f"the file is {size / 1024:.0f} KB; a lesson plan may be at most "
                         f"{MAX_PLAN_BYTES // 1024} KB"])
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PlanError([f"the file is not UTF-8 text (byte {exc.start + 1} cannot be "
                             "read); save it as UTF-8"]) from None
    else:
        text = data
    text = text.removeprefix("\ufeff")
    problem = _structure_problem(text)
    if problem is not None:
        raise PlanError([problem])
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PlanError([f"the file is not valid TOML: {exc}"]) from None
    except RecursionError:  # not within the limits above; kept as a last guard
        raise PlanError([f"the file nests too deep; a lesson plan nests at most "
                         f"{MAX_PLAN_NESTING} levels"]) from None
    return plan_from_dict(parsed, lines=_Lines(text))


#: What the structure check looks at outside strings and comments: brackets, dots, the
#: signs that end a key, newlines; and where strings and comments start.
_TOKEN = re.compile(r"""\"\"\"|'''|["'#\[\]{}.=,\n]""")
#: Where a string that starts with the key's token ends (TOML 1.0: a basic string has
#: escapes, a literal one none; a multi-line one may end with up to two more quotes).
_STRING_END = {
    '"""': re.compile(r'(?:[^"\\]|\\.|"(?!""))*"""(?:""|")?', re.S),
    "'''": re.compile(r"(?:[^']|'(?!''))*'''(?:''|')?"),
    '"': re.compile(r'(?:[^"\\\n]|\\.)*"'),
    "'": re.compile(r"[^'\n]*'"),
}


def _structure_problem(text: str) -> str | None:
    """Why a plan file is refused before it is parsed: arrays and inline tables nested
    deeper than :data:`MAX_PLAN_NESTING`, or a key of more than :data:`MAX_KEY_PARTS`
    dotted parts; None if neither. One pass over the text, strings and comments skipped.
    A string left open ends the pass: the parser reports it, having read no further."""
    depth = dots = 0
    line, pos = 1, 0
    while (m := _TOKEN.search(text, pos)) is not None:
        token, pos = m.group(), m.end()
        if token in _STRING_END:
            end = _STRING_END[token].match(text, pos)
            if end is None:
                return None
            line, pos = line + text.count("\n", pos, end.end()), end.end()
        elif token == "#":
            newline = text.find("\n", pos)
            pos = len(text) if newline < 0 else newline
        elif token == ".":
            dots += 1
            if dots >= MAX_KEY_PARTS:
                return (f"line {line}: a key has more than {MAX_KEY_PARTS} dotted parts; a "
                        f"lesson plan's keys have at most {MAX_KEY_PARTS}")
        else:
            dots = 0
            line += token == "\n"
            depth += (token in "[{") - (token in "]}")
            if depth > MAX_PLAN_NESTING:
                return (f"line {line}: arrays and tables nest more than {MAX_PLAN_NESTING} "
                        f"levels deep; a lesson plan nests at most {MAX_PLAN_NESTING}")
    return None


# -- the app's own plans --------------------------------------------------------------------


def shipped_names() -> tuple[str, ...]:
    """The names of the plans the app ships (file names in :data:`SHIPPED_DIR`), sorted."""
    return tuple(sorted(p.stem for p in SHIPPED_DIR.glob("*.toml")))


def shipped_plan(name: str) -> LessonPlan:
    """A shipped plan, read and validated like any imported file; :class:`BadInput` for an
    unknown name."""
    if name not in shipped_names():
        raise BadInput(f"no shipped lesson plan is called {name!r}; there are "
                       f"{', '.join(shipped_names()) or 'none'}")
    return loads((SHIPPED_DIR / f"{name}.toml").read_bytes())
