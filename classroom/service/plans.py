"""Lesson plans: save, read, import and delete them, and start a class from one."""

from __future__ import annotations

import json

from ..domain import Poll, Question, UnknownPlan
from ..plans import LessonPlan, SavedPlan, dumps, loads
from ..store import Store
from .common import new_salt, row_id, with_join_code

__all__ = ["Plans"]


class Plans:
    """The instructor's saved lesson plans, and a class started from one."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def list_plans(self) -> list[SavedPlan]:
        """The saved lesson plans, the most recently changed first."""
        return self._store.list_plans()

    def saved_plan(self, plan_id: int) -> SavedPlan:
        pid = row_id("plan id", plan_id)
        saved = self._store.plan(pid)
        if saved is None:
            raise UnknownPlan(f"no saved lesson plan with id {pid}")
        return saved

    def save_plan(self, plan: LessonPlan, plan_id: int | None = None) -> SavedPlan:
        """Save a plan: a new one, or over the saved plan ``plan_id``. The plan is
        validated whole first (:class:`~classroom.plans.PlanError` lists every problem)
        and kept as its TOML file; nothing is written on a refusal."""
        checked = plan.checked()
        document = dumps(checked)
        if plan_id is None:
            return self._store.insert_plan(checked.title, document, self._store.now())
        pid = row_id("plan id", plan_id)
        saved = self._store.update_plan(pid, checked.title, document, self._store.now())
        if saved is None:
            raise UnknownPlan(f"no saved lesson plan with id {pid}; save it as a new plan")
        return saved

    def import_plan(self, data: bytes | str) -> SavedPlan:
        """Read a plan file and save it as a new plan. The whole file is validated before
        anything is written (:func:`classroom.plans.loads`)."""
        return self.save_plan(loads(data))

    def delete_plan(self, plan_id: int) -> bool:
        """Delete a saved plan (classes started from it stay); False if it was not there."""
        return self._store.delete_plan(row_id("plan id", plan_id))

    def start_class(self, plan: LessonPlan, *,
                    rehearsal: bool = False) -> tuple[Poll, list[Question]]:
        """One click before class: a poll titled after the plan, with the plan's budget and
        every question as a draft in the plan's order, ready to open one by one.

        The plan is validated whole first, by the same checks as
        :meth:`~classroom.service.Polls.add_question` and
        :meth:`~classroom.service.Polls.set_budget` (its budget covers every question
        once), and everything is written in one transaction: a refusal creates nothing.
        """
        checked = plan.checked()
        rows = [{"text": q.text, "kind": q.kind, "options_json": json.dumps(list(q.options)),
                 "design_json": q.design_json, "mode": q.mode, "countdown_s": q.countdown_s,
                 "salt": new_salt()} for q in checked.questions]
        return with_join_code(lambda code: self._store.insert_class(
            join_code=code, title=checked.title, rehearsal=bool(rehearsal),
            budget=checked.budget, question_rows=rows, now=self._store.now()))
