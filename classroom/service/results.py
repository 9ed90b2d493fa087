"""Reading results: a round's estimate, the dashboard's snapshot, the CSV export and its
replay, and the rehearsal's simulated students and stuffers."""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Iterable, Sequence

import numpy as np

from .. import kinds
from ..csvio import replay_from_csv, write_csv
from ..domain import (
    BadInput,
    DashboardSnapshot,
    Design,
    Question,
    QuestionClosed,
    QuestionEstimate,
    answer_label,
)
from ..estimates import estimate_from_groups, parse_design, trajectory
from ..store import RoundSecret, Store
from .common import question_found, row_id
from .reports import check_report, dedup_token

__all__ = ["MAX_SIMULATED", "Results"]

MAX_SIMULATED = 100_000


class Results:
    """What the dashboard and the study pages read: estimates, exports, rehearsals."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def _question(self, question_id: int) -> Question:
        qid = row_id("question id", question_id)
        return question_found(self._store.question(qid), qid)

    # -- estimates ------------------------------------------------------------------------
    def estimate(self, question_id: int, round_number: int | None = None, *,
                 include_simulated: bool = True, level: float = 0.95) -> QuestionEstimate:
        """The estimate for one round (default: the current one) with the per-round history."""
        qid = row_id("question id", question_id)
        found = self._store.estimate_inputs(qid, include_simulated=include_simulated)
        found = question_found(found, qid)
        q = found.question
        number = q.round_number if round_number is None else round_number
        est = estimate_from_groups(
            question_id=q.id, kind=q.kind, options=q.options, groups=found.groups,
            round_designs={r.number: r.design_json for r in found.rounds},
            round_number=number, level=level)
        return dataclasses.replace(est, addresses=found.addresses.get(number))

    def dashboard_snapshot(self, question_id: int, *, level: float = 0.95,
                           points: int = 60) -> DashboardSnapshot:
        """What one refresh of the dashboard shows for a question, from ONE read
        transaction: the question, its rounds, the current round's estimate and, for a
        yes/no question, its arrival trajectory."""
        qid = row_id("question id", question_id)
        found = self._store.estimate_inputs(qid, with_answers=True)
        found = question_found(found, qid)
        q = found.question
        est = estimate_from_groups(
            question_id=q.id, kind=q.kind, options=q.options, groups=found.groups,
            round_designs={r.number: r.design_json for r in found.rounds},
            round_number=q.round_number, level=level)
        est = dataclasses.replace(est, addresses=found.addresses.get(q.round_number))
        path = () if found.answers is None else trajectory(
            found.answers, points=row_id("points", points), level=level)
        return DashboardSnapshot(question=q, rounds=tuple(found.rounds), estimate=est,
                                 trajectory=path)

    # -- export and replay ----------------------------------------------------------------
    def export_csv(self, question_id: int, *, include_simulated: bool = False) -> str:
        """CSV of a question's reports: round, answer, label, design params, time."""
        q = self._question(question_id)
        designs: dict[str, Design] = {}  # a round's reports share a few design texts

        def label(design_json: str, answer: str) -> str:
            if design_json not in designs:
                designs[design_json] = parse_design(design_json)
            return answer_label(q.kind, designs[design_json], q.options, answer)

        return write_csv(
            (number, answer, label(design_json, answer), design_json, created.isoformat())
            for number, answer, design_json, created in self._store.export_rows(
                q.id, include_simulated=include_simulated))

    def import_csv(self, text: str, *, round_number: int | None = None,
                   level: float = 0.95) -> QuestionEstimate:
        """Replay an exported CSV for self-study (nothing is stored)."""
        return replay_from_csv(text, round_number=round_number, level=level)

    # -- rehearsal ------------------------------------------------------------------------
    def rehearsal_class(self, question_id: int, n: int, true_share: float | Sequence[float],
                        *, seed: int | np.random.SeedSequence | None = None
                        ) -> tuple[float, ...]:
        """The true answers of a simulated class of ``n`` with exactly the chosen shares.

        Binary: ``round(true_share * n)`` students answer ``options[1]``; categorical:
        each option gets its share of ``n`` by largest remainders; numeric:
        ``true_share`` is the class's true mean, and the values are spread evenly and
        symmetrically around it within the range (:func:`numeric_class`). The order is
        shuffled. A class with exactly the chosen share is what the rehearsal's 95% CI
        is about: the fixed-class SD describes the randomness for *this* class.
        The truths exist only in memory.
        """
        question = self._question(question_id)
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_SIMULATED:
            raise BadInput(f"the number of simulated students must be 1..{MAX_SIMULATED}, "
                           f"got {n!r}")
        rng = np.random.default_rng(seed)
        truths = kinds.kind(question.kind).true_class(question.design, question.options, n,
                                                      true_share)
        return tuple(v.item() for v in rng.permutation(truths))

    def add_simulated_reports(self, question_id: int, n: int, true_share: float | Sequence[float],
                              *, seed: int | None = None) -> int:
        """Fake students for rehearsal: a class with exactly the chosen shares
        (:meth:`rehearsal_class`), randomized with ldp_core, validated like real reports,
        stored with ``simulated=True``. The question must be open. Returns the number of
        reports written.
        """
        # Two streams of one seed: the order of the class and each student's dice must be
        # independent (one stream for both tied a student's place to their roll).
        order, dice = (None, None) if seed is None else np.random.SeedSequence(seed).spawn(2)
        truths = self.rehearsal_class(question_id, n, true_share, seed=order)
        return self.add_simulated_answers(question_id, truths, seed=dice)

    def add_simulated_answers(self, question_id: int, truths: Sequence[float], *,
                              seed: int | np.random.SeedSequence | None = None) -> int:
        """Randomize the given true answers on the server with ldp_core and store them as
        simulated reports (the same checks as real reports). The truths are not stored.

        ``truths`` are option numbers, or for a numeric question values in its range.
        """
        question, rnd = self._open_round(question_id, "simulated students")
        strategy = kinds.kind(question.kind)
        values = np.asarray(truths)
        what = "values in the question's range" if strategy.continuous else "option numbers"
        if values.ndim != 1 or not 1 <= values.size <= MAX_SIMULATED or not (
                np.issubdtype(values.dtype, np.integer)
                or (strategy.continuous and np.issubdtype(values.dtype, np.floating))):
            raise BadInput(f"simulated answers must be 1..{MAX_SIMULATED} {what}")
        answers = strategy.simulate(question.design, question.options, values,
                                    np.random.default_rng(seed))
        return self._insert_simulated(question, rnd, answers)

    def add_stuffed_reports(self, question_id: int, n: int, *, target: int | None = None
                            ) -> int:
        """Rehearsal of ballot stuffing: ``n`` fake users who skip the randomizer and always
        send the report that pushes ``target`` up (``ldp_core.fake_report``): the answer
        that supports ``options[target]`` of a yes/no question (default 1) or a
        categorical one (default 0), the largest report a numeric question's server
        accepts. Stored as simulated reports, with the same checks as real ones.
        """
        question, rnd = self._open_round(question_id, "stuffers")
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_SIMULATED:
            raise BadInput(f"the number of stuffers must be 1..{MAX_SIMULATED}, got {n!r}")
        answers = kinds.kind(question.kind).stuffed(question.design, question.options, n,
                                                    target)
        return self._insert_simulated(question, rnd, answers)

    def _open_round(self, question_id: int, who: str) -> tuple[Question, RoundSecret]:
        """The question and its current round (with the salt), refusing a closed one."""
        qid = row_id("question id", question_id)
        question, rnd = question_found(self._store.current_round_secret(qid), qid)
        if not question.is_open:
            raise QuestionClosed(f"voting is closed for this question; open it before adding "
                                 f"{who}")
        return question, rnd

    def _insert_simulated(self, question: Question, rnd: RoundSecret,
                          answers: Iterable[object]) -> int:
        """Check each answer as a real report and store them all as simulated."""
        params = question.design_params
        now = self._store.now()
        batch = []
        for answer in answers:
            stored, design_json, _ = check_report(question, answer, params)
            batch.append({
                "round_id": rnd.round_id, "answer": stored, "design_params": design_json,
                "created_at": now, "submission_id": "sim-" + secrets.token_hex(16),
                "dedup_token": dedup_token(rnd.salt, "sim-" + secrets.token_hex(16)),
                "simulated": True})
        return self._store.insert_reports(batch)

    def clear_simulated(self, question_id: int) -> int:
        """Delete the question's simulated reports (every round); real ones stay."""
        q = self._question(question_id)
        return self._store.delete_simulated(q.id)
