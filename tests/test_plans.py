"""Lesson plans, the pure part: the model, its validation, the TOML file and the shipped
CS208 plan (classroom.plans). The database and the dashboard are tested in
test_plans_service.py and test_dashboard_plans.py."""

from __future__ import annotations

import csv
import math
import tomllib
import unicodedata
from pathlib import Path

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ldp_core
from classroom import plans
from classroom.domain import BudgetStatus, finite_or_inf
from classroom.plans import LessonPlan, PlanError, PlanQuestion

ROOT = Path(__file__).resolve().parents[1]
LN3 = math.log(3)

EXERCISE = {"text": "Vanilla (1) or chocolate (0)?", "kind": "binary",
            "options": ["Chocolate", "Vanilla"],
            "design": {"design": "die", "faces": 4, "truthful": 3}}
SLEEP = {"text": "How many hours did you sleep?", "kind": "numeric", "unit": "hours",
         "design": {"design": "hybrid", "epsilon": 1.0, "lo": 0, "hi": 12}}
COLOURS = {"text": "Favourite colour?", "kind": "categorical",
           "options": ["Red", "Green", "Blue"], "design": {"design": "grr", "d": 3,
                                                           "epsilon": 1.0}}


def plan_text(*questions: dict, budget: float | None = None, title: str = "A plan",
              **extra) -> str:
    data: dict = {"version": 1, "title": title, **extra}
    if budget is not None:
        data["budget"] = budget
    data["questions"] = list(questions)
    return tomli_w.dumps(data)


def problems_of(data: str | bytes) -> tuple[str, ...]:
    with pytest.raises(PlanError) as err:
        plans.loads(data)
    return err.value.problems


def only_problem(data: str | bytes) -> str:
    found = problems_of(data)
    assert len(found) == 1, found
    return found[0]


# -- the shipped plan ------------------------------------------------------------------------


def test_the_shipped_cs208_plan_is_read_through_the_import_path():
    assert plans.CS208_PLAN in plans.shipped_names()
    plan = plans.shipped_plan(plans.CS208_PLAN)
    assert plan == plans.loads((plans.SHIPPED_DIR / "cs208-local-model.toml").read_bytes())
    assert plan.title == "The local model (CS208)"
    assert len(plan.questions) == 6


def test_the_shipped_plan_asks_the_course_questions_with_their_exact_designs():
    q = plans.shipped_plan(plans.CS208_PLAN).questions
    # The class exercise (CS208 notes, 2025): die 1-4, truthful on 1-3: a = 3/4, b = 1/4.
    die = q[0].design
    assert isinstance(die, ldp_core.DieRR)
    assert (die.faces, die.truthful, die.a, die.b) == (4, 3, 0.75, 0.25)
    assert q[0].options == ("Chocolate", "Vanilla") and "Vanilla" in q[0].text
    # The same question with two coins: keep the truth w.p. 1/2 + γ, γ = 1/4 (the notebook).
    coins = q[1].design
    assert isinstance(coins, ldp_core.TwoCoinRR)
    assert (coins.a, coins.b) == (0.5 + 0.25, 0.5 - 0.25)
    assert q[1].options == q[0].options
    # Warner's spinner with the bribe statement (CS208 2022, figure 1).
    warner = q[2].design
    assert isinstance(warner, ldp_core.WarnerRR)
    assert "pay a bribe to a police officer" in q[2].text and q[2].options == ("False", "True")
    assert (warner.a, warner.b) == (0.75, 0.25)
    # "Is your occupation Sales?" by two coins (Near & Abuah).
    assert q[3].text == "Is your occupation Sales?" and isinstance(q[3].design, ldp_core.TwoCoinRR)
    # The 14 occupations by unary encoding, p = 0.75, q = 0.25: ε = ln 9 (2.1972...).
    with open(ROOT / "assets" / "occupations.csv", newline="") as f:
        occupations = tuple(row["occupation"] for row in csv.DictReader(f))
    ue = q[4].design
    assert q[4].kind == "categorical" and q[4].options == occupations
    assert (ue.kind, ue.d, ue.p, ue.q) == ("ue", 14, 0.75, 0.25)
    assert ue.epsilon == pytest.approx(2.1972245773362196, abs=1e-12)
    # Hours of sleep, 0-12, by the mechanism ldp_core recommends at the question's ε.
    sleep = q[5].design
    assert q[5].kind == "numeric" and q[5].unit == "hours"
    assert (sleep.range.lo, sleep.range.hi) == (0, 12)
    assert sleep.kind == ldp_core.recommend_numeric(sleep.epsilon)
    for question in q[:4]:
        assert question.epsilon == pytest.approx(LN3, abs=1e-12)
    assert sleep.epsilon == pytest.approx(LN3, abs=1e-12)


def test_the_shipped_budget_covers_the_plan_once_and_says_why():
    plan = plans.shipped_plan(plans.CS208_PLAN)
    assert plan.total_epsilon == pytest.approx(7 * LN3)
    assert plan.budget is not None
    assert plan.budget_status().allows(0.0)
    # ... and no more: one more round of the cheapest question would not fit.
    assert not plan.budget_status().allows(min(plan.epsilons))
    assert "7 ln 3" in plan.description and "budget" in plan.description.lower()


# -- round trip ------------------------------------------------------------------------------


def test_export_then_import_gives_the_same_plan():
    plan = plans.shipped_plan(plans.CS208_PLAN)
    text = plans.dumps(plan)
    assert plans.loads(text) == plan
    assert plans.loads(text.encode()) == plan
    assert plans.plan_from_dict(plans.plan_to_dict(plan)) == plan
    assert text.startswith("# A lesson plan") and tomllib.loads(text)["version"] == 1


_label = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=(
                     "Cc", "Cs", "Zs", "Zl", "Zp", "Cf", "Mn", "Me"),
                                        exclude_characters="\u115f\u1160\u3164\uffa0\u2800"),
                 min_size=1, max_size=12)


@st.composite
def questions(draw) -> PlanQuestion:
    kind = draw(st.sampled_from(("binary", "categorical", "numeric")))
    text = draw(_label) + "?"
    countdown = draw(st.none() | st.integers(10, 3600))
    if kind == "numeric":
        lo = draw(st.integers(-100, 100))
        params = {"design": draw(st.sampled_from(ldp_core.NUMERIC_NAMES)),
                  "epsilon": draw(st.floats(0.01, 5)), "lo": lo,
                  "hi": lo + draw(st.integers(1, 1000))}
        return PlanQuestion.build(text=text, kind=kind, unit=draw(_label), design_params=params,
                                  countdown_s=countdown)
    k = 2 if kind == "binary" else draw(st.integers(2, 20))
    labels = draw(st.lists(_label, min_size=k, max_size=k,
                           unique_by=lambda s: s.strip().casefold()))
    mode = draw(st.sampled_from(("device", "physical")))
    if kind == "binary":
        params = draw(st.sampled_from([
            {"design": "die", "faces": 4, "truthful": 3}, {"design": "two_coin"},
            {"design": "warner", "p": 0.7}, {"design": "gamma", "gamma": 0.3},
            {"design": "epsilon", "epsilon": 0.5}]))
    elif draw(st.booleans()):
        params = {"design": "grr", "d": k, "epsilon": draw(st.floats(0.1, 5))}
    else:
        q = draw(st.floats(0.1, 0.45))  # ε = ln(p (1 - q) / ((1 - p) q)) <= ln 81 < 5
        params = {"design": "ue", "d": k, "p": draw(st.floats(0.55, 0.9)), "q": q}
    return PlanQuestion.build(text=text, kind=kind, options=labels, design_params=params,
                              mode=mode, countdown_s=countdown)


@st.composite
def lesson_plans(draw) -> LessonPlan:
    qs = tuple(draw(st.lists(questions(), min_size=1, max_size=6)))
    plan = LessonPlan(title=draw(_label), questions=qs,
                      description=draw(st.text(max_size=80).filter(
                          lambda s: not any(ord(c) < 32 and c not in "\n\t" or
                                            c in "\x7f\ufeff" or 0x80 <= ord(c) < 0xa0 or
                                            0x202a <= ord(c) <= 0x202e or
                                            0x2066 <= ord(c) <= 0x2069 or
                                            0xd800 <= ord(c) < 0xe000 for c in s))
                      .filter(lambda s: not s.strip() or any(
                          unicodedata.category(c) not in ("Cf", "Zs", "Zl", "Zp", "Mn", "Me",
                                                          "Cc")
                          and c not in "\u115f\u1160\u3164\uffa0\u2800" for c in s))).strip())
    if draw(st.booleans()):
        plan = LessonPlan(title=plan.title, questions=qs, description=plan.description,
                          budget=plan.total_epsilon * draw(st.floats(1.0, 3.0)))
    return plan


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lesson_plans())
def test_round_trip_property(plan):
    assert plans.loads(plans.dumps(plan)) == plan


# -- every bad file gets its message ---------------------------------------------------------


def test_an_unknown_design_names_the_field_and_its_line():
    bad = dict(EXERCISE, design={"design": "dice", "faces": 4})
    problem = only_problem(plan_text(EXERCISE, bad))
    assert problem.startswith("line ") and "questions[2].design:" in problem
    assert "unknown binary design 'dice'" in problem and "'die'" in problem
    line = int(problem.split()[1].rstrip(","))
    assert plan_text(EXERCISE, bad).splitlines()[line - 1] == 'design = "dice"'
    typo = dict(EXERCISE, design={"design": "die", "faces": 4, "truthfull": 3})
    assert "got an unexpected keyword argument 'truthfull'" in only_problem(plan_text(typo))


def test_epsilon_out_of_range_names_the_parameter():
    for eps in (0, 50, -1, 5.01, 10):
        problem = only_problem(plan_text(dict(SLEEP, design=dict(SLEEP["design"], epsilon=eps))))
        assert "questions[1].design.epsilon: must be in [0.01, 5]" in problem, problem
        assert f"got {eps}" in problem


def test_epsilon_out_of_range_points_at_the_line_of_the_key():
    text = (plans.dumps(plans.shipped_plan(plans.CS208_PLAN))
            .replace("epsilon = 1.0986122886681098", "epsilon = 25.0"))
    problem = only_problem(text)
    line = int(problem.split()[1].rstrip(","))
    assert text.splitlines()[line - 1].strip() == "epsilon = 25.0"
    assert "questions[6].design.epsilon" in problem


def test_a_budget_the_plan_cannot_afford_is_refused_with_the_arithmetic():
    text = plan_text(EXERCISE, EXERCISE, COLOURS, budget=2.5)
    problem = only_problem(text)
    assert problem.startswith("line ") and "budget: ε = 2.5 does not cover the plan" in problem
    total = 2 * LN3 + 1.0
    assert f"spends ε = {total:.2f}" in problem
    assert "questions[3]" in problem and "at least 3.20" in problem
    # The same arithmetic as the service's: a budget of exactly the total fits.
    assert plans.loads(plan_text(EXERCISE, EXERCISE, COLOURS, budget=total)).budget == total


def test_the_budget_check_is_the_services_arithmetic():
    epsilons = [LN3] * 3
    total = finite_or_inf(epsilons)
    for budget in (total, total * (1 + 5e-10), total * (1 - 5e-9)):
        service_allows = BudgetStatus(budget=budget, committed=finite_or_inf(epsilons[:2]),
                                      rounds=()).allows(epsilons[2])
        text = plan_text(EXERCISE, EXERCISE, EXERCISE, budget=budget)
        if service_allows:
            assert plans.loads(text).budget == budget
        else:
            assert "does not cover" in only_problem(text)


def test_an_infinite_epsilon_is_refused():
    forced = dict(EXERCISE, design={"design": "warner", "p": 1.0})
    for budget in (10, None):
        problem = only_problem(plan_text(forced, budget=budget))
        assert "questions[1].design: this design gives ε = ∞" in problem
        assert "must be in [0.01, 5]" in problem


def test_malformed_toml_gives_the_parsers_line_and_column():
    problem = only_problem('version = 1\ntitle = "x"\nbudget = = 3\n')
    assert problem.startswith("the file is not valid TOML:")
    assert "line 3" in problem and "column" in problem


def test_a_file_over_the_size_limit_is_refused_before_parsing():
    big = b"# " + b"x" * plans.MAX_PLAN_BYTES + b"\n" + plan_text(EXERCISE).encode()
    assert "may be at most 128 KB" in only_problem(big)
    assert "may be at most 128 KB" in only_problem(big.decode())


def test_bytes_that_are_not_utf8_are_refused():
    assert "not UTF-8" in only_problem(plan_text(EXERCISE).encode() + b"# \xff\xfe\n")


def test_a_byte_order_mark_is_allowed():
    assert plans.loads(b"\xef\xbb\xbf" + plan_text(EXERCISE).encode()).title == "A plan"


@pytest.mark.parametrize(("change", "expected"), [
    ({"countdown": 60}, "questions[1].countdown: unknown field"),
    ({"countdown_s": 5}, "questions[1].countdown_s: must be a whole number of seconds from "
                         "10 to 3600"),
    ({"countdown_s": 4000}, "questions[1].countdown_s: must be a whole number"),
    ({"countdown_s": 60.5}, "questions[1].countdown_s: must be a whole number"),
    ({"countdown_s": True}, "questions[1].countdown_s: must be a whole number"),
    ({"options": ["Only one"]}, "questions[1].options: a binary question has exactly 2"),
    ({"options": ["Yes", "yes"]}, "questions[1].options: options 1 and 2 are both 'yes'"),
    ({"options": ["No", 3]}, "questions[1].options: option 2 must be text"),
    ({"options": "No, Yes"}, "questions[1].options: options must be a list"),
    ({"text": "  "}, "questions[1].text: must not be empty"),
    ({"text": "x" * 301}, "questions[1].text: is 301 characters long; the limit is 300"),
    ({"text": "bell\x07"}, "questions[1].text: contains a control character (U+0007)"),
    ({"kind": "yesno"}, "questions[1].kind: must be one of binary, categorical, numeric"),
    ({"mode": "paper"}, "questions[1].mode: must be one of device, physical"),
    ({"unit": "cm"}, "questions[1].unit: only a numeric question has a unit"),
    ({"design": "die"}, "questions[1].design: must be a table, got 'die'"),
    ({"design": {"design": "die", "faces": 4, "truthful": 2}},
     "questions[1].design.truthful: must not be half of faces (2 of 4)"),
    ({"design": {"design": "warner", "p": 0.5}}, "questions[1].design.p: must differ from 1/2"),
])
def test_each_bad_question_field_is_named(change, expected):
    assert expected in only_problem(plan_text(dict(EXERCISE, **change)))


def test_a_missing_design_or_kind_is_named():
    no_design = {k: v for k, v in EXERCISE.items() if k != "design"}
    assert "questions[1].design: missing" in only_problem(plan_text(no_design))
    no_kind = {k: v for k, v in EXERCISE.items() if k != "kind"}
    assert "questions[1].kind: missing" in only_problem(plan_text(no_kind))


def test_numeric_and_categorical_rules():
    assert "physical mode is for yes/no" in only_problem(plan_text(dict(SLEEP, mode="physical")))
    assert "questions[1].options: a numeric question has a unit" in only_problem(
        plan_text(dict(SLEEP, options=["h"])))
    assert "questions[1].design: numeric design parameters need ['hi']" in only_problem(
        plan_text(dict(SLEEP, design={"design": "hybrid", "epsilon": 1.0, "lo": 0})))
    mismatch = dict(COLOURS, design={"design": "grr", "d": 4, "epsilon": 1.0})
    assert "questions[1].design: the design is for d = 4 options but the question has 3" in \
        only_problem(plan_text(mismatch))
    wrong_kind = dict(COLOURS, design={"design": "die", "faces": 4, "truthful": 3})
    assert "categorical questions use a design in ['grr', 'ue']" in only_problem(
        plan_text(wrong_kind))


@pytest.mark.parametrize(("top", "expected"), [
    ({"title": ""}, "title: must not be empty"),
    ({"title": "t" * 101}, "title: is 101 characters long; the limit is 100"),
    ({"budget": -1}, "budget: must be a positive number"),
    ({"budget": "lots"}, "budget: must be a positive number"),
    ({"version": 2}, "version: the plan is in format 2, newer than this app reads (1)"),
    ({"version": "one"}, "version: must be a whole number"),
    ({"colour": "red"}, "colour: unknown field"),
    ({"description": "d" * 2001}, "description: is 2001 characters long; the limit is 2000"),
])
def test_each_bad_plan_field_is_named(top, expected):
    data = {"version": 1, "title": "A plan", "questions": [EXERCISE], **top}
    assert expected in only_problem(tomli_w.dumps(data))


def test_a_plan_needs_questions_and_at_most_the_limit():
    assert "questions: a plan needs at least one question" in only_problem(
        'version = 1\ntitle = "Empty"\n')
    assert "questions: a plan needs at least one question" in only_problem(
        'title = "Empty"\nquestions = []\n')
    many = plan_text(*[EXERCISE] * (plans.MAX_PLAN_QUESTIONS + 1))
    assert f"the limit is {plans.MAX_PLAN_QUESTIONS}" in only_problem(many)


def test_every_problem_of_a_file_is_listed_at_once():
    text = plan_text(dict(EXERCISE, text=""), dict(SLEEP, countdown_s=1), title="")
    found = problems_of(text)
    assert [p.split(": ", 1)[0].split(", ")[-1] for p in found] == [
        "title", "questions[1].text", "questions[2].countdown_s"]
    with pytest.raises(PlanError) as err:
        plans.loads(text)
    assert str(err.value).startswith("the lesson plan was not used: ")


def test_a_question_that_is_not_a_table_is_named():
    assert "questions[1]: must be a table" in only_problem('title = "x"\nquestions = [3]\n')
    assert "a lesson plan is a table" in str(pytest.raises(PlanError, plans.plan_from_dict,
                                                           [1]).value)


# -- the model as the editor uses it ---------------------------------------------------------


def test_build_names_the_field_of_a_bad_question():
    with pytest.raises(PlanError) as err:
        PlanQuestion.build(text="", kind="binary", options=("No", "Yes"),
                           design_params={"design": "two_coin"}, countdown_s=3)
    assert err.value.problems == (
        "question.text: must not be empty",
        "question.countdown_s: must be a whole number of seconds from 10 to 3600, or none; "
        "got 3")
    q = PlanQuestion.build(text="Sleep?", kind="numeric", options=("hours",),
                           design_params={"design": "duchi", "epsilon": 1, "lo": 0, "hi": 12})
    assert q.unit == "hours" and q.options == ("hours",) and q.design_params["lo"] == 0


def test_editing_returns_new_plans_and_problems_say_what_blocks_saving():
    a, b, c = (PlanQuestion.build(text=t, kind="binary", options=("No", "Yes"),
                                  design_params={"design": "two_coin"}) for t in "ABC")
    plan = LessonPlan(title="Edit me").with_question(a).with_question(b).with_question(c)
    assert [q.text for q in plan.questions] == ["A", "B", "C"]
    assert [q.text for q in plan.with_question_moved(2, -1).questions] == ["A", "C", "B"]
    assert [q.text for q in plan.with_question_moved(0, -1).questions] == ["A", "B", "C"]
    assert [q.text for q in plan.with_question_moved(0, 5).questions] == ["B", "C", "A"]
    assert [q.text for q in plan.without_question(1).questions] == ["A", "C"]
    assert [q.text for q in plan.with_question_replaced(1, a).questions] == ["A", "A", "C"]
    assert [q.text for q in plan.with_question(c, at=0).questions] == ["C", "A", "B", "C"]
    assert plan.problems() == ()
    assert plan.checked() == plan
    assert LessonPlan(title="Empty").problems() == (
        "questions: a plan needs at least one question (a [[questions]] table each)",)
    tight = LessonPlan(title="Tight", questions=plan.questions, budget=2.0)
    assert tight.problems()[0].startswith("budget: ε = 2 does not cover the plan")
    assert tight.budget_status().committed == pytest.approx(3 * LN3)


def test_an_unknown_shipped_plan_is_a_clear_refusal():
    with pytest.raises(plans.BadInput, match="no shipped lesson plan is called 'nope'"):
        plans.shipped_plan("nope")


def test_the_docs_show_the_shipped_file_and_its_true_messages():
    """docs/lesson-plans.md quotes the shipped plan and three messages about it: each
    quotation is what the app reads and says."""
    doc = (ROOT / "docs" / "lesson-plans.md").read_text()
    shipped = (plans.SHIPPED_DIR / "cs208-local-model.toml").read_text()
    assert "```toml\n" + shipped + "```" in doc
    flat = " ".join(doc.split())
    for old, new in (("epsilon = 1.0986122886681098", "epsilon = 25.0"),
                     ('design = "warner"', 'design = "wheel"'), ("budget = 7.7", "budget = 3")):
        assert f"`{only_problem(shipped.replace(old, new))}`" in flat


@pytest.mark.parametrize(("design", "field", "message"), [
    ({"design": "laplace", "epsilon": 1.0, "lo": -1e308, "hi": 1e308}, "lo",
     "must be within ±1,000,000,000"),
    ({"design": "hybrid", "epsilon": 1.0, "lo": -1, "hi": 1e300}, "hi",
     "must be within ±1,000,000,000"),
    ({"design": "hybrid", "epsilon": 1.0, "lo": 0, "hi": 1e-300}, "hi",
     "must exceed lo by at least 0.001"),
    ({"design": "piecewise", "epsilon": 10.0, "lo": 0, "hi": 12}, "epsilon",
     "must be in [0.01, 5]"),
])
def test_a_numeric_design_outside_the_limits_names_its_field(design, field, message):
    problem = only_problem(plan_text(dict(SLEEP, design=design)))
    assert f"questions[1].design.{field}: {message}" in problem, problem


# -- bounded import: any file up to the size cap is answered within a second of CPU ----------


def _cpu_seconds(data: str) -> tuple[float, tuple[str, ...]]:
    import time

    start = time.process_time()
    found = problems_of(data)
    return time.process_time() - start, found


@pytest.mark.parametrize(("data", "message"), [
    ("a." * 63_000 + "a = 1\n", "line 1: a key has more than 10 dotted parts"),
    ("x = " + "[" * 50_000 + "]" * 50_000 + "\n", "nest more than 10 levels deep"),
    ("x = " + "{a=" * 5_000 + "1" + "}" * 5_000 + "\n", "nest more than 10 levels deep"),
    ('version = 1\ntitle = "t"\n\n[[questions]]\ntext = "Q?"\nkind = "binary"\n'
     'options = ["a", "b"]\ndesign = ' + "{x=" * 11 + "1" + "}" * 11 + "\n",
     "line 8: arrays and tables nest more than 10 levels deep"),
], ids=["key-of-63k-parts", "arrays-50k-deep", "inline-tables-5k-deep", "eleven-deep"])
def test_a_costly_file_is_refused_before_it_is_parsed(data, message):
    assert len(data.encode()) <= plans.MAX_PLAN_BYTES
    seconds, found = _cpu_seconds(data)
    assert len(found) == 1 and message in found[0], found
    assert seconds < 1.0


def test_the_structure_check_reads_strings_and_comments_as_toml_does():
    deep = "[" * 12 + "]" * 12
    text = plan_text(dict(EXERCISE, text=f"Is {deep} a.b.c.d.e.f.g.h.i.j.k.l deep?"),
                     description=f"''' \"\"\" {deep} a.b.c.d.e.f.g.h.i.j.k.l\n\\\" ' x")
    text = f"# {deep} a.b.c.d.e.f.g.h.i.j.k.l\n" + text.replace(
        "title = ", f"title = '{deep}'\n# ").replace("\n[[questions]]",
                                                  f"\n'k' = '''{deep}''''\n[[questions]]")
    problem = only_problem(text)  # parsed: the unknown key 'k' is what is wrong
    assert problem.startswith("k: unknown field"), problem
    unclosed = 'version = 1\ntitle = "t\n' + "[" * 20
    assert only_problem(unclosed).startswith("the file is not valid TOML")
