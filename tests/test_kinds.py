"""The contract every kind of question meets (classroom/kinds): each registered kind, on its
own example question, builds and checks its design, encodes and labels every report a
simulated class, a stuffer or the phone sends, refuses what no phone sends, estimates a
round, fills its CSV columns and gives the phone JSON without NaN. A new kind registered in
classroom.kinds.REGISTRY runs through all of it."""

from __future__ import annotations

import inspect
import json
import math
from collections import Counter

import numpy as np
import pytest

from classroom import kinds
from classroom.domain import (
    BadInput,
    BadReport,
    canonical_design,
    check_kind_and_mode,
    design_from_json,
    kind_of_json,
    question_design,
)
from classroom.estimates import estimate_from_groups

KINDS = list(kinds.REGISTRY.values())
IDS = [k.name for k in KINDS]


def _example(kind: kinds.QuestionKind):
    options = kind.clean_options(kind.example_options)
    design, text = question_design(kind.name, dict(kind.example_params), options)
    return options, design, text


def test_the_registry_is_the_list_of_kinds_and_their_names() -> None:
    assert kinds.KINDS == tuple(kinds.REGISTRY)
    assert {"binary", "categorical", "numeric"} <= set(kinds.KINDS)
    for name, kind in kinds.REGISTRY.items():
        assert kind.name == name and kinds.kind(name) is kind
    with pytest.raises(ValueError, match="kind must be one of"):
        kinds.kind("ranking")
    with pytest.raises(BadInput, match="kind must be one of"):
        check_kind_and_mode("ranking", "device")


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_a_kind_builds_checks_and_owns_its_designs(kind: kinds.QuestionKind) -> None:
    options, design, text = _example(kind)
    assert options == kind.example_options
    assert kind.owns(design)
    assert json.loads(text)["kind"] == kind.name  # the stored design records its kind
    assert design_from_json(text) == design and kind_of_json(text) == kind.name
    assert [k.name for k in KINDS if k.owns(design)] == [kind.name]  # one owner
    assert canonical_design(kind.name, json.loads(text)) == (design, text)  # canonical
    assert kind.example_params["design"] in kind.designs
    assert kind.csv_width(design) == len(options)
    assert len(kind.csv_options(len(options))) == len(options)
    assert kind.unit(options) == (options[0] if kind.has_unit else "")
    check_kind_and_mode(kind.name, "device")
    if kind.physical:
        check_kind_and_mode(kind.name, "physical")
    else:
        with pytest.raises(BadInput, match="randomized on the phone"):
            check_kind_and_mode(kind.name, "physical")


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_every_report_of_a_simulated_class_and_a_stuffer_is_stored_and_labelled(
        kind: kinds.QuestionKind) -> None:
    options, design, text = _example(kind)
    truths = kind.true_class(design, options, 200, kind.example_share)
    assert truths.shape == (200,)
    sent = kind.simulate(design, options, truths, np.random.default_rng(7))
    sent += kind.stuffed(design, options, 5, None)
    stored = [kind.encode(design, options, answer) for answer in sent]
    assert all(isinstance(s, str) and 0 < len(s) <= 32 for s in stored)
    assert [kind.encode(design, options, s) for s in stored] == stored  # canonical
    for s in set(stored):
        label = kind.answer_label(design, options, s)
        assert isinstance(label, str) and label
    counts = Counter(stored)
    est = estimate_from_groups(
        question_id=None, kind=kind.name, options=options,
        groups=[(1, text, answer, True, c) for answer, c in counts.items()],
        round_designs={1: text}, round_number=1)
    assert est.n == 205 and est.n_simulated == 205 and est.kind == kind.name
    assert est.epsilon == pytest.approx(design.epsilon)
    results = kind.phone_results(est, options)
    assert results["n"] == 205
    json.dumps(results, allow_nan=False)  # never NaN on a phone


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
@pytest.mark.parametrize("answer", [None, "", "nonsense", [], {"a": 1}, math.nan, -5, 10**6])
def test_a_kind_refuses_what_no_phone_sends(kind: kinds.QuestionKind, answer: object) -> None:
    options, design, _ = _example(kind)
    with pytest.raises(BadReport, match="answer"):
        kind.encode(design, options, answer)


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_a_kind_gives_the_phone_json(kind: kinds.QuestionKind) -> None:
    options, design, _ = _example(kind)
    params = design.params()
    scheme = kind.phone_scheme(design, params)
    assert scheme["type"] and json.dumps(scheme, allow_nan=False)
    order, shown = kind.phone_input("What do you think?", options, params)
    assert sorted(order) in ([], list(range(len(options))))
    assert shown["type"] in ("choice", "number", "checkboxes")  # a drawer phone/page.js has
    json.dumps(shown, allow_nan=False)
    note = kind.privacy_note(design, "3", "1.1")
    assert note.startswith("Your privacy:") and "1.1" in note


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_a_kind_with_no_reports_estimates_nothing(kind: kinds.QuestionKind) -> None:
    options, design, text = _example(kind)
    est = estimate_from_groups(question_id=None, kind=kind.name, options=options, groups=[],
                               round_designs={1: text}, round_number=1)
    assert est.n == 0 and est.empty
    assert est.epsilon == pytest.approx(design.epsilon)  # the round's design defines ε


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_a_kind_has_its_dashboard_view_with_its_results_and_rounds(
        kind: kinds.QuestionKind) -> None:
    """The dashboard draws a kind only through its KindView (ui/dashboard/kinds.py): a kind
    registered without one, or without its results panel and rounds rows, fails here."""
    from types import SimpleNamespace

    from ui.dashboard.kinds import VIEWS, KindView

    assert list(VIEWS) == list(kinds.KINDS)  # no view of a kind that is gone
    view = VIEWS.get(kind.name)
    assert isinstance(view, KindView), f"no KindView for {kind.name} in VIEWS"
    # The live panel calls results(question, estimate, rounds, projector, trajectory, note)
    # and rounds(question, estimate, rounds).
    assert callable(view.results) and callable(view.rounds)
    inspect.signature(view.results).bind(None, None, [], False, [], None)
    options, design, text = _example(kind)
    est = estimate_from_groups(question_id=None, kind=kind.name, options=options, groups=[],
                               round_designs={1: text}, round_number=1)
    question = SimpleNamespace(kind=kind.name, options=options, design=design,
                               unit=kind.unit(options))
    rows = view.rounds(question, est, [])
    assert len(rows) == len(est.history) and all(isinstance(r, dict) and r for r in rows)
