"""Contract suite for the classroom store: every test runs on SQLite and PostgreSQL.

Guarantees from the poll-service issue: idempotent submit, server-side rules
(refusals write nothing), bad input, the privacy properties of the schema,
tokens, estimates, export / replay, simulation and the migration hook.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import secrets
import threading

import numpy as np
import pytest
import sqlalchemy as sa

import ldp_core
from classroom import (
    BadInput,
    BadReport,
    PollService,
    QuestionClosed,
    Store,
    StoreUnavailable,
    UnknownPoll,
    UnknownQuestion,
)
from classroom.domain import CLASS_EXERCISE, JOIN_CODE_ALPHABET
from classroom.plans import CS208_PLAN, shipped_plan
from classroom.store import SCHEMA_VERSION
from classroom.store.migrations import KIND_CHECK_AT, _set_kind_check
from tests.support.db import count_reports, past_grace, submission_ids

DIE = dict(CLASS_EXERCISE)
EPS1 = {"design": "epsilon", "epsilon": 1.0}
GRR3 = {"design": "grr", "d": 3, "epsilon": 1.0}
UE3 = {"design": "ue", "d": 3, "p": 0.75, "q": 0.25}

REPORT_COLUMNS = {"id", "round_id", "answer", "design_params", "created_at", "submission_id",
                  "dedup_token", "simulated", "address_tag"}


def n_reports(store: Store) -> int:
    return count_reports(store)


def submit(service, poll, q, answer=1, *, device="device-1", sid=None, params=None, **kw):
    return service.reports.submit_report(
        poll.join_code, q.id, answer=answer,
        design_params=q.design_params if params is None else params,
        submission_id=sid or f"sub-{secrets.token_hex(8)}", device_id=device, **kw)


def raw_rows(store: Store, table: str) -> list[dict]:
    with store.engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(sa.text(f"SELECT * FROM {table}"))]


def no_nan(obj) -> bool:
    """True when no float anywhere in a (nested) dataclass / tuple is NaN."""
    if isinstance(obj, float):
        return not math.isnan(obj)
    if dataclasses.is_dataclass(obj):
        return all(no_nan(getattr(obj, f.name)) for f in dataclasses.fields(obj))
    if isinstance(obj, (tuple, list)):
        return all(no_nan(x) for x in obj)
    return True


# -- schema and privacy ----------------------------------------------------------------------


def test_reports_table_has_exactly_the_report_columns(store):
    assert store.columns("reports") == REPORT_COLUMNS


def test_no_table_has_a_column_for_a_true_answer_or_device_id(store):
    for table in ("polls", "questions", "rounds", "reports", "schema_version"):
        for col in store.columns(table):
            assert not any(word in col.lower()
                           for word in ("true", "truth", "device", "secret_answer")), \
                (table, col)


def test_device_id_is_never_stored(service, store, open_question):
    poll, q = open_question()
    device = "DEVICE-COOKIE-7f3a9c"
    submit(service, poll, q, device=device)
    for table in ("polls", "questions", "rounds", "reports"):
        for row in raw_rows(store, table):
            assert all(device not in str(v) for v in row.values()), table


def test_schema_version_is_recorded_and_data_survive_reopening(fresh_db):
    db_url = fresh_db()
    s1 = Store(db_url)
    assert s1.schema_version() == SCHEMA_VERSION
    poll = PollService.on(s1).polls.create_poll("keep me")
    s1.close()
    s2 = Store(db_url)
    try:
        assert s2.schema_version() == SCHEMA_VERSION
        assert PollService.on(s2).polls.poll(poll.id).title == "keep me"
    finally:
        s2.close()


def test_migration_hook_upgrades_an_existing_database_without_losing_it(fresh_db):
    db_url = fresh_db()
    s1 = Store(db_url)
    poll = PollService.on(s1).polls.create_poll("before the upgrade")
    s1.close()

    def next_version(conn):
        conn.execute(sa.text("CREATE TABLE migration_probe (note VARCHAR(20))"))
        conn.execute(sa.text("INSERT INTO migration_probe (note) VALUES ('migrated')"))

    s2 = Store(db_url, migrations={SCHEMA_VERSION: next_version},
               target_version=SCHEMA_VERSION + 1)
    try:
        assert s2.schema_version() == SCHEMA_VERSION + 1
        assert PollService.on(s2).polls.poll(poll.id).title == "before the upgrade"
        assert raw_rows(s2, "migration_probe") == [{"note": "migrated"}]
    finally:
        s2.close()
    # Code older than the database refuses it instead of guessing.
    with pytest.raises(StoreUnavailable, match="newer than this app"):
        Store(db_url)


def test_missing_migration_leaves_the_database_unchanged(fresh_db):
    db_url = fresh_db()
    Store(db_url).close()
    with pytest.raises(StoreUnavailable,
                       match=f"no migration from schema version {SCHEMA_VERSION}"):
        Store(db_url, migrations={}, target_version=SCHEMA_VERSION + 1)
    s = Store(db_url)
    try:
        assert s.schema_version() == SCHEMA_VERSION
    finally:
        s.close()


def _narrow_kind_check(conn) -> None:
    """Put back the version-2 check on questions.kind (no numeric questions)."""
    _set_kind_check(conn, KIND_CHECK_AT[5], KIND_CHECK_AT[2], 2)


def _without_kind(text: str) -> str:
    params = json.loads(text)
    params.pop("kind")
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


def _as_version_6_on(conn) -> None:
    """Take away what version 7 added: when voting on a question's round ended."""
    conn.execute(sa.text("ALTER TABLE questions DROP COLUMN closed_at"))


def _as_version_5_on(conn) -> None:
    """Take away what versions 7 and 6 added: when voting ended, the kind in every stored
    design, and put back the CHECK that lists the kinds."""
    _as_version_6_on(conn)
    _set_kind_check(conn, KIND_CHECK_AT[6], KIND_CHECK_AT[5], 5)
    for table in ("questions", "rounds", "reports"):
        for key, text in conn.execute(sa.text(f"SELECT id, design_params FROM {table}")).all():
            conn.execute(sa.text(f"UPDATE {table} SET design_params = :t WHERE id = :i"),
                         {"t": _without_kind(text), "i": key})


def _as_version_4_on(conn) -> None:
    """Take away what versions 5 and 6 added: the deadline of a round opened with a
    countdown, and the kind in every stored design."""
    _as_version_5_on(conn)
    conn.execute(sa.text("DROP INDEX ix_questions_closes_at"))
    conn.execute(sa.text("ALTER TABLE questions DROP COLUMN closes_at"))


def _as_version_3_on(conn) -> None:
    """Take away what versions 4 and 5 added: lesson plans and the questions' countdown."""
    _as_version_4_on(conn)
    conn.execute(sa.text("DROP TABLE plans"))
    conn.execute(sa.text("ALTER TABLE questions DROP COLUMN countdown_s"))


def _as_version_1(db_url: str) -> None:
    """Turn a fresh database back into schema version 1 (before address tags and sessions)."""
    s = Store(db_url)
    try:
        with s.engine.begin() as conn:
            conn.execute(sa.text("DROP TABLE instructor_sessions"))
            conn.execute(sa.text("DROP TABLE used_login_links"))
            conn.execute(sa.text("DROP INDEX ix_reports_round_address"))
            conn.execute(sa.text("ALTER TABLE reports DROP COLUMN address_tag"))
            conn.execute(sa.text("ALTER TABLE polls DROP COLUMN epsilon_budget"))
            _as_version_3_on(conn)
            _narrow_kind_check(conn)
            conn.execute(sa.text("UPDATE schema_version SET version = 1"))
    finally:
        s.close()


def test_a_version_1_database_is_upgraded_in_place(fresh_db):
    db_url = fresh_db()
    s0 = Store(db_url)
    service = PollService.on(s0)
    poll = service.polls.create_poll("from version 1")
    q = service.running.open_question(
        service.polls.add_question(poll.id, "Q?", design_params=DIE).id)
    submit(service, poll, q, device="old-phone")
    s0.close()
    _as_version_1(db_url)
    s1 = Store(db_url)
    try:
        assert s1.schema_version() == SCHEMA_VERSION == 7
        assert s1.columns("reports") == REPORT_COLUMNS
        assert "epsilon_budget" in s1.columns("polls")
        service = PollService.on(s1)
        assert service.results.estimate(q.id).n == 1  # the old report is still there
        submit(service, poll, q, device="new-phone", address="192.0.2.1")
        assert service.results.estimate(q.id).addresses == 1  # the old report has no tag
        from classroom import auth
        instructor = auth.InstructorAuth(s1, key="k" * 20, cache_s=0)
        assert instructor.is_valid(instructor.log_in("k" * 20))
        assert service.polls.set_budget(poll.id, 5.0).epsilon_budget == 5.0
        numeric = service.polls.add_question(  # the widened check on questions.kind
            poll.id, "Hours?", kind="numeric", options=("hours",),
            design_params={"design": "duchi", "epsilon": 1.0, "lo": 0, "hi": 12})
        assert service.polls.question(numeric.id).kind == "numeric"
        with pytest.raises(sa.exc.IntegrityError):  # a kind is still a name
            with s1.engine.begin() as conn:
                conn.execute(sa.text("UPDATE questions SET kind = ''"))
        assert service.results.estimate(q.id).n == 2  # the rounds and reports survived the upgrade
        assert service.polls.question(q.id).countdown_s is None  # version 4's column
        assert service.plans.save_plan(shipped_plan(CS208_PLAN)).plan() == shipped_plan(CS208_PLAN)
    finally:
        s1.close()


def test_a_version_3_database_gets_lesson_plans_and_countdowns(fresh_db):
    db_url = fresh_db()
    s0 = Store(db_url)
    service = PollService.on(s0)
    poll = service.polls.create_poll("from version 3")
    q = service.running.open_question(
        service.polls.add_question(poll.id, "Q?", design_params=DIE).id)
    submit(service, poll, q, device="old-phone")
    with s0.engine.begin() as conn:
        _as_version_3_on(conn)
        conn.execute(sa.text("UPDATE schema_version SET version = 3"))
    s0.close()
    s1 = Store(db_url)
    try:
        assert s1.schema_version() == SCHEMA_VERSION == 7
        assert "countdown_s" in s1.columns("questions")
        assert s1.columns("plans") == {"id", "title", "document", "created_at", "updated_at"}
        service = PollService.on(s1)
        assert service.polls.question(q.id).countdown_s is None
        assert service.results.estimate(q.id).n == 1
        timed = service.polls.add_question(poll.id, "Timed?", design_params=DIE, countdown_s=30)
        assert service.polls.question(timed.id).countdown_s == 30
        with pytest.raises(sa.exc.IntegrityError):  # the upgraded column has its check
            with s1.engine.begin() as conn:
                conn.execute(sa.text("UPDATE questions SET countdown_s = 3601"))
        started, questions = service.plans.start_class(shipped_plan(CS208_PLAN))
        assert len(questions) == 6 and started.epsilon_budget == 7.7
    finally:
        s1.close()


def test_a_version_4_database_gets_deadlines(fresh_db):
    db_url = fresh_db()
    s0 = Store(db_url)
    service = PollService.on(s0)
    poll = service.polls.create_poll("from version 4")
    q = service.running.open_question(service.polls.add_question(poll.id, "Q?", design_params=DIE,
                                                                 countdown_s=60).id)
    with s0.engine.begin() as conn:
        _as_version_4_on(conn)
        conn.execute(sa.text("UPDATE schema_version SET version = 4"))
    s0.close()
    s1 = Store(db_url)
    try:
        assert s1.schema_version() == SCHEMA_VERSION == 7
        service = PollService.on(s1)
        # A question open before the upgrade has no deadline: it stays open until closed.
        before = service.polls.question(q.id)
        assert before.is_open and before.closes_at is None and before.countdown_s == 60
        service.running.close_question(q.id)
        reopened = service.running.open_question(q.id)  # its next opening starts the countdown
        assert reopened.closes_at is not None
        assert 59 <= reopened.seconds_left(service.running.now()) <= 60
        assert service.running.next_deadline() == reopened.closes_at
    finally:
        s1.close()


def test_a_version_5_database_gets_designs_that_record_their_kind(fresh_db):
    """Every stored design learns its question's kind (a yes/no design, a categorical GRR
    design, their rounds and reports), and the CHECK on a kind stops listing kinds."""
    db_url = fresh_db()
    s0 = Store(db_url)
    service = PollService.on(s0)
    poll = service.polls.create_poll("from version 5")
    q = service.running.open_question(
        service.polls.add_question(poll.id, "Q?", design_params=DIE).id)
    submit(service, poll, q, device="old-phone")
    grr = {"design": "grr", "d": 3, "epsilon": 1.0}
    cat = service.polls.add_question(poll.id, "Colour?", kind="categorical",
                                     options=("R", "G", "B"), design_params=grr)
    with s0.engine.begin() as conn:
        _as_version_5_on(conn)
        conn.execute(sa.text("UPDATE schema_version SET version = 5"))
        assert "kind" not in conn.execute(sa.text("SELECT design_params FROM reports")
                                          ).scalar_one()
    s0.close()
    s1 = Store(db_url)
    try:
        assert s1.schema_version() == SCHEMA_VERSION == 7
        service = PollService.on(s1)
        for table in ("questions", "rounds", "reports"):
            texts = [json.loads(t) for t in raw_column(s1, table)]
            assert texts and all(t["kind"] in ("binary", "categorical") for t in texts)
        assert service.polls.question(cat.id).design_json == \
            '{"d":3,"design":"grr","epsilon":1.0,"kind":"categorical"}'
        assert service.polls.question(cat.id).design_params == grr
        assert service.results.estimate(q.id).n == 1  # the old report reads back
        submit(service, poll, q, device="new-phone")  # and a new one joins its group
        assert service.results.estimate(q.id).n == 2
        with s1.engine.begin() as conn:  # any name will do for the database now
            conn.execute(sa.text(f"UPDATE questions SET kind = 'rating' WHERE id = {cat.id}"))
    finally:
        s1.close()


def raw_column(store, table: str) -> list[str]:
    with store.engine.begin() as conn:
        return list(conn.execute(sa.text(f"SELECT design_params FROM {table}")).scalars())


def test_a_version_6_database_learns_when_voting_ended(fresh_db):
    db_url = fresh_db()
    s0 = Store(db_url)
    service = PollService.on(s0)
    poll = service.polls.create_poll("from version 6")
    q = service.running.open_question(service.polls.add_question(poll.id, "Q?",
                                                                 design_params=DIE).id)
    service.running.close_question(q.id)  # closed before the upgrade: no time recorded
    with s0.engine.begin() as conn:
        _as_version_6_on(conn)
        conn.execute(sa.text("UPDATE schema_version SET version = 6"))
    s0.close()
    s1 = Store(db_url)
    try:
        assert s1.schema_version() == SCHEMA_VERSION == 7
        assert "closed_at" in s1.columns("questions")
        service = PollService.on(s1)
        with pytest.raises(QuestionClosed):  # no grace without the time voting ended
            submit(service, poll, q, device="late-phone")
        service.running.open_question(q.id)
        service.running.close_question(q.id)
        assert not submit(service, poll, q, device="late-phone").already_answered  # in grace
    finally:
        s1.close()


def test_dedup_tokens_differ_across_rounds_and_questions(service, store, open_question):
    poll, q = open_question()
    q2 = service.running.open_question(service.polls.add_question(poll.id, "Tea or coffee?",
                                                                  options=("Tea", "Coffee"),
                                                                  design_params=DIE).id)
    submit(service, poll, q2, device="same-device", sid="sub-q2-r1")
    service.running.open_question(q.id)
    submit(service, poll, q, device="same-device", sid="sub-q1-r1")
    service.running.new_round(q.id, open_now=True)
    q = service.polls.question(q.id)
    submit(service, poll, q, device="same-device", sid="sub-q1-r2")
    tokens = [r["dedup_token"] for r in raw_rows(store, "reports")]
    assert len(tokens) == 3 and len(set(tokens)) == 3
    salts = [r["salt"] for r in raw_rows(store, "rounds")]
    assert len(set(salts)) == len(salts) == 3


def test_round_objects_do_not_expose_the_salt(service, open_question):
    _, q = open_question()
    r = service.running.rounds(q.id)[0]
    assert not hasattr(r, "salt")
    assert "salt" not in repr(r)


# -- idempotent submit -----------------------------------------------------------------------


def test_same_submission_id_twice_stores_one_report(service, store, open_question):
    poll, q = open_question()
    first = submit(service, poll, q, answer=1, sid="tap-0001")
    second = submit(service, poll, q, answer=1, sid="tap-0001")
    assert n_reports(store) == 1
    assert not first.already_answered and second.already_answered
    assert (second.answer, second.created_at, second.answer_label) == \
        (first.answer, first.created_at, first.answer_label)


def test_same_device_twice_returns_the_first_receipt(service, store, open_question):
    poll, q = open_question()
    first = submit(service, poll, q, answer=1, device="phone", sid="tab-1-aaaa")
    second = submit(service, poll, q, answer=0, device="phone", sid="tab-2-bbbb")
    assert n_reports(store) == 1
    assert second.already_answered and second.answer == "1" == first.answer
    assert second.answer_label == "Vanilla"
    assert second.created_at == first.created_at
    assert service.reports.receipt_for(q.id, "phone") == second
    assert service.reports.receipt_for(q.id, "other-phone") is None


def test_two_tabs_racing_store_one_report(service, store, open_question):
    poll, q = open_question()
    for attempt in range(10):
        barrier = threading.Barrier(4)
        results, errors = [], []

        def tab(i, barrier=barrier, results=results, errors=errors, attempt=attempt):
            barrier.wait()
            try:
                results.append(submit(service, poll, q, answer=i % 2,
                                      device=f"racer-{attempt}", sid=f"race-{attempt}-{i}"))
            except Exception as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(exc)

        threads = [threading.Thread(target=tab, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert sum(not r.already_answered for r in results) == 1
        assert len({r.answer for r in results}) == 1
    assert n_reports(store) == 10


def test_already_answered_is_returned_even_after_closing(service, open_question):
    poll, q = open_question()
    first = submit(service, poll, q, device="late")
    service.running.close_question(q.id)
    again = submit(service, poll, q, device="late", sid="another-sid-1")
    assert again.already_answered and again.answer == first.answer
    past_grace(service.store, q.id)
    with pytest.raises(QuestionClosed):
        submit(service, poll, q, device="never-answered")


def test_submission_id_reused_for_another_question_is_refused(service, store, open_question):
    poll, q = open_question()
    submit(service, poll, q, device="a", sid="reused-id-1")
    q2 = service.running.open_question(service.polls.add_question(poll.id, "Cats or dogs?",
                                                                  options=("Cats", "Dogs"),
                                                                  design_params=DIE).id)
    with pytest.raises(BadReport, match="submission id was already used for another answer"):
        submit(service, poll, q2, device="a", sid="reused-id-1")
    assert n_reports(store) == 1


def test_submission_id_of_another_device_is_refused_without_its_receipt(service, store,
                                                                        open_question):
    poll, q = open_question()
    submit(service, poll, q, answer=1, device="first-device", sid="shared-sid-1")
    with pytest.raises(BadReport, match="already used for another answer"):
        submit(service, poll, q, answer=0, device="second-device", sid="shared-sid-1")
    assert n_reports(store) == 1
    assert service.reports.receipt_for(q.id, "second-device") is None


def test_a_new_round_accepts_the_same_device_again(service, store, open_question):
    poll, q = open_question()
    submit(service, poll, q, device="d")
    service.running.new_round(q.id, open_now=True)
    q = service.polls.question(q.id)
    r = submit(service, poll, q, device="d", sid="round-two-sid")
    assert not r.already_answered and r.round_number == 2
    assert n_reports(store) == 2


# -- server-side rules -----------------------------------------------------------------------


def test_draft_question_is_refused(service, store):
    poll = service.polls.create_poll()
    q = service.polls.add_question(poll.id, "Draft?", design_params=DIE)
    assert q.state == "draft"
    with pytest.raises(QuestionClosed, match="voting is closed for this question"):
        submit(service, poll, q)
    assert n_reports(store) == 0


def test_closed_question_is_refused(service, store, open_question):
    poll, q = open_question()
    service.running.close_question(q.id)
    past_grace(store, q.id)
    with pytest.raises(QuestionClosed, match="after voting on this question closed"):
        submit(service, poll, q)
    assert n_reports(store) == 0


def test_unknown_join_code_is_refused(service, store, open_question):
    poll, q = open_question()
    code = next(c * 6 for c in JOIN_CODE_ALPHABET if c * 6 != poll.join_code)
    with pytest.raises(UnknownPoll, match=code):
        service.reports.submit_report(code, q.id, answer=1, design_params=q.design_params,
                                      submission_id="sub-unknown-1", device_id="d")
    with pytest.raises(BadInput, match="join code"):
        service.reports.submit_report("NOPE!!", q.id, answer=1, design_params=q.design_params,
                                      submission_id="sub-unknown-2", device_id="d")
    assert n_reports(store) == 0


def test_question_of_another_poll_is_refused(service, store, open_question):
    poll_a, _ = open_question()
    _, q_b = open_question()
    with pytest.raises(UnknownQuestion, match=f"question {q_b.id} is not part of poll"):
        submit(service, poll_a, q_b)
    with pytest.raises(UnknownQuestion):
        service.reports.submit_report(poll_a.join_code, 999_999, answer=1, design_params=DIE,
                                      submission_id="sub-missing", device_id="d")
    assert n_reports(store) == 0


@pytest.mark.parametrize("answer", [2, -1, "yes", None, 1.5, "", [1], "01"])
def test_binary_answer_outside_the_options_is_refused(service, store, open_question, answer):
    poll, q = open_question()
    with pytest.raises(BadReport, match=r"answer must be 0 \(Chocolate\) or 1 \(Vanilla\)"):
        submit(service, poll, q, answer=answer, sid="bad-answer-1")
    assert n_reports(store) == 0


def test_categorical_answers_outside_the_encoding_are_refused(service, store, open_question):
    poll, q = open_question(options=("Red", "Green", "Blue"), kind="categorical",
                            design_params=GRR3)
    for bad in (3, -1, "x", "010"):
        with pytest.raises(BadReport, match="answer must be"):
            submit(service, poll, q, answer=bad, sid="grr-bad-1")
    poll2, ue = open_question(options=("Red", "Green", "Blue"), kind="categorical",
                              design_params=UE3)
    for bad in ("01", "0102", 2, [0, 1], "abc"):
        with pytest.raises(BadReport, match="3 bits"):
            submit(service, poll2, ue, answer=bad, sid="ue-bad-1")
    assert n_reports(store) == 0
    assert submit(service, poll2, ue, answer=[1, 0, 1], sid="ue-good-1").answer_label == \
        "Red, Blue"


def test_design_params_differing_from_the_round_are_refused(service, store, open_question):
    poll, q = open_question()
    with pytest.raises(BadReport, match=r"truthful is 1, this round uses 3"):
        submit(service, poll, q, params={"design": "die", "faces": 4, "truthful": 1})
    with pytest.raises(BadReport, match=r"design is 'epsilon', this round uses 'die'"):
        submit(service, poll, q, params=EPS1)
    with pytest.raises(BadReport, match="not valid"):
        submit(service, poll, q, params={"faces": 4})
    with pytest.raises(BadReport, match="not valid"):
        submit(service, poll, q, params="die")
    assert n_reports(store) == 0
    # Equal parameters written differently are the same design.
    submit(service, poll, q, params={"truthful": 3.0, "faces": 4, "design": "die"})
    assert n_reports(store) == 1


@pytest.mark.parametrize("field, value", [
    ("submission_id", "short"), ("submission_id", "has space in it"), ("submission_id", None),
    ("device_id", ""), ("device_id", None), ("device_id", "x" * 300)])
def test_bad_ids_are_refused(service, store, open_question, field, value):
    poll, q = open_question()
    kw = {"submission_id": "good-sub-id-1", "device_id": "good-device"} | {field: value}
    with pytest.raises(BadReport):
        service.reports.submit_report(poll.join_code, q.id, answer=1, design_params=q.design_params,
                                      **kw)
    assert n_reports(store) == 0


# -- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize("text, message", [
    ("", "must not be empty"), ("   \n ", "must not be empty"),
    ("x" * 301, "limit is 300"), ("bell\x07", "control character"),
    ("nul\x00byte", "control character")])
def test_question_text_limits(service, store, text, message):
    poll = service.polls.create_poll()
    with pytest.raises(BadInput, match=message):
        service.polls.add_question(poll.id, text, design_params=DIE)
    assert service.polls.questions(poll.id) == []


def test_question_text_at_the_limit_is_kept_stripped(service):
    poll = service.polls.create_poll()
    q = service.polls.add_question(poll.id, "  " + "y" * 300 + "\n", design_params=DIE)
    assert q.text == "y" * 300
    multi = service.polls.add_question(poll.id, "line one\nline two", design_params=DIE)
    assert service.polls.question(multi.id).text == "line one\nline two"


@pytest.mark.parametrize("options, kind, message", [
    (("Only",), "binary", "exactly 2 options"),
    (("A", "B", "C"), "binary", "exactly 2 options"),
    (tuple(f"o{i}" for i in range(21)), "categorical", "2 to 20 options"),
    (("Same", "same"), "binary", "labels must differ"),
    (("", "B"), "binary", "option 1 must not be empty"),
    (("A", "b" * 61), "binary", "limit is 60"),
    ("AB", "binary", "list of labels")])
def test_option_limits(service, options, kind, message):
    poll = service.polls.create_poll()
    params = DIE if kind == "binary" else {"design": "grr", "d": len(options), "epsilon": 1.0}
    with pytest.raises(BadInput, match=message):
        service.polls.add_question(poll.id, "Q?", options=options, design_params=params, kind=kind)


@pytest.mark.parametrize("params, kind, options, message", [
    ({"design": "die", "faces": 4, "truthful": 2}, "binary", ("N", "Y"), "half of faces"),
    ({"design": "gamma", "gamma": 0.0}, "binary", ("N", "Y"), "carries no information"),
    ({"design": "nope"}, "binary", ("N", "Y"), "unknown binary design"),
    ({"design": "grr", "d": 4, "epsilon": 1.0}, "categorical", ("A", "B", "C"), "d = 4"),
    ({"design": "olh", "d": 3, "epsilon": 1.0}, "categorical", ("A", "B", "C"), "grr"),
    (DIE, "numeric", ("N", "Y"), "one option: the unit"),
    (DIE, "numeric", ("hours",), "mechanism in"),
    (DIE, "ordinal", ("N", "Y"), "kind must be")])
def test_bad_designs_are_refused_when_adding(service, params, kind, options, message):
    poll = service.polls.create_poll()
    with pytest.raises(BadInput, match=message):
        service.polls.add_question(poll.id, "Q?", options=options, design_params=params, kind=kind)


SQL_TEXTS = ["Robert'); DROP TABLE reports;--", "100% of _students_ \\ say \"yes\"",
             "' OR '1'='1", "🍦 vanille; -- crème", "$1 :name ? %(x)s {0}"]


def test_sql_metacharacters_are_stored_verbatim(service, store, open_question):
    poll = service.polls.create_poll(SQL_TEXTS[0])
    q = service.polls.add_question(poll.id, SQL_TEXTS[1], options=(SQL_TEXTS[2], SQL_TEXTS[3]),
                                   design_params=DIE)
    cat = service.polls.add_question(poll.id, SQL_TEXTS[4], options=tuple(SQL_TEXTS[:3]),
                                     kind="categorical", design_params=GRR3)
    assert service.polls.poll(poll.id).title == SQL_TEXTS[0]
    assert service.polls.question(q.id).text == SQL_TEXTS[1]
    assert service.polls.question(q.id).options == (SQL_TEXTS[2], SQL_TEXTS[3])
    assert service.polls.question(cat.id).text == SQL_TEXTS[4]
    assert service.polls.question(cat.id).options == tuple(SQL_TEXTS[:3])
    # Still intact: the tables the texts try to drop.
    service.running.open_question(q.id)
    receipt = submit(service, poll, service.polls.question(q.id), answer=0)
    assert receipt.answer_label == SQL_TEXTS[2]
    assert store.columns("reports") == REPORT_COLUMNS


def test_typed_join_codes_resolve_or_fail_cleanly(service):
    poll = service.polls.create_poll()
    code = poll.join_code
    assert set(code) <= set(JOIN_CODE_ALPHABET) and len(code) == 6
    for typed in (code.lower(), f"  {code}  ", f"{code[:3]}-{code[3:]}", f"{code[:3]} {code[3:]}",
                  f"\t{code.lower()}\n", f"{code[:2]}–{code[2:]}"):
        assert service.polls.poll_by_code(typed) == poll
    for typed, message in (("", "enter the join code"), ("   ", "enter the join code"),
                           ("AB0CD2", "'0'"), ("ILO234", "'I' 'L' 'O'"),
                           ("ABC23", "has 5 characters"), ("ABCD2345", "has 8 characters"),
                           ("AB;C23", "';'"), ("ÄBC234", "'Ä'")):
        with pytest.raises(BadInput, match=message):
            service.polls.poll_by_code(typed)
    with pytest.raises(BadInput):
        service.polls.poll_by_code(None)  # type: ignore[arg-type]
    unknown = "ZZZZZZ" if code != "ZZZZZZ" else "222222"
    with pytest.raises(UnknownPoll, match=unknown):
        service.polls.poll_by_code(unknown.lower())


def test_join_codes_are_distinct(service):
    codes = {service.polls.create_poll().join_code for _ in range(50)}
    assert len(codes) == 50


# -- lifecycle -------------------------------------------------------------------------------


def test_current_question_follows_open_and_close(service):
    poll = service.polls.create_poll()
    a = service.polls.add_question(poll.id, "A?", design_params=DIE)
    b = service.polls.add_question(poll.id, "B?", design_params=DIE)
    assert [q.position for q in service.polls.questions(poll.id)] == [1, 2]
    assert service.polls.current_question(poll.id) is None
    service.running.open_question(a.id)
    assert service.polls.current_question(poll.id).id == a.id
    service.running.open_question(b.id)  # closes a
    assert service.polls.question(a.id).state == "closed"
    assert service.polls.current_question(poll.id).id == b.id
    service.running.close_question(b.id)
    assert service.polls.current_question(poll.id).id == b.id
    service.polls.set_design(a.id, EPS1)  # not a state change: b stays the most recent
    assert service.polls.current_question(poll.id).id == b.id
    revealed = service.running.set_revealed(a.id, True)
    assert revealed.revealed
    assert service.polls.current_question(poll.id).id == a.id


def test_new_round_keeps_history_and_changes_design(service, open_question):
    poll, q = open_question()
    r2 = service.running.new_round(q.id, EPS1)
    assert r2.number == 2 and r2.design_params == EPS1
    q = service.polls.question(q.id)
    assert q.state == "draft" and q.round_number == 2 and q.design_params == EPS1
    rounds = service.running.rounds(q.id)
    assert [r.number for r in rounds] == [1, 2]
    assert rounds[0].design_params == DIE
    assert rounds[0].epsilon == pytest.approx(math.log(3))


def test_unknown_ids_raise_not_found(service):
    with pytest.raises(UnknownPoll):
        service.polls.poll(424242)
    with pytest.raises(UnknownPoll):
        service.polls.questions(424242)
    with pytest.raises(UnknownPoll):
        service.polls.add_question(424242, "Q?", design_params=DIE)
    with pytest.raises(UnknownQuestion):
        service.polls.question(424242)
    with pytest.raises(UnknownQuestion):
        service.running.open_question(424242)
    with pytest.raises(UnknownQuestion):
        service.results.estimate(424242)


def test_delete_poll_removes_everything(service, store, open_question):
    poll, q = open_question()
    submit(service, poll, q)
    assert service.polls.delete_poll(poll.id)
    assert not service.polls.delete_poll(poll.id)
    assert n_reports(store) == 0 and raw_rows(store, "rounds") == []
    with pytest.raises(UnknownPoll):
        service.polls.poll_by_code(poll.join_code)


def test_list_polls_newest_first(service):
    a = service.polls.create_poll("first")
    b = service.polls.create_poll("second", rehearsal=True)
    listed = service.polls.list_polls()
    assert [p.id for p in listed][:2] == [b.id, a.id]
    assert listed[0].rehearsal and not listed[1].rehearsal


# -- estimates -------------------------------------------------------------------------------


def test_estimate_with_no_reports_is_a_state_not_nan(service, open_question):
    _, q = open_question()
    est = service.results.estimate(q.id)
    assert est.empty and est.n == 0 and est.counts == (0, 0)
    assert est.result.estimate.mu_hat is None and est.result.estimate.sd_worst is None
    assert est.epsilon == pytest.approx(math.log(3))
    assert no_nan(est)
    _, cat = open_question(options=("A", "B", "C"), kind="categorical", design_params=UE3)
    cest = service.results.estimate(cat.id)
    assert cest.empty and cest.result.raw is None and cest.counts == (0, 0, 0)
    assert cest.result.shares() is None
    assert no_nan(cest)


def test_binary_estimate_is_ldp_core_on_the_counts(service, open_question):
    poll, q = open_question()
    answers = [1] * 30 + [0] * 10
    for i, a in enumerate(answers):
        submit(service, poll, q, answer=a, device=f"student-{i}")
    est = service.results.estimate(q.id)
    ref = ldp_core.BinaryCounts.single(ldp_core.DieRR(4, 3), yes=30, n=40).summary()
    assert est.result.estimate == ref
    assert est.counts == (10, 30) and est.n == 40
    # the class exercise formula
    assert est.result.estimate.mu_hat == pytest.approx(2 * 30 / 40 - 0.5)
    assert est.result.estimate.sd_worst == pytest.approx(math.sqrt(3 / (4 * 40)))


def test_mixed_designs_within_a_round_use_each_reports_own_design(service, store,
                                                                  open_question):
    poll, q = open_question()
    for i, a in enumerate([1, 1, 1, 0, 1, 0]):
        submit(service, poll, q, answer=a, device=f"early-{i}")
    stale = q
    q = service.polls.set_design(q.id, EPS1)
    assert q.round_number == 1 and q.design_params == EPS1
    with pytest.raises(BadReport, match="differ from this round's design"):
        submit(service, poll, stale, answer=1, device="late-stale")
    for i, a in enumerate([0, 0, 1, 0]):
        submit(service, poll, q, answer=a, device=f"late-{i}")
    est = service.results.estimate(q.id)
    ref = ldp_core.BinaryCounts(((ldp_core.DieRR(4, 3), 6, 4),
                                 (ldp_core.EpsilonRR(1.0), 4, 1)))
    assert est.n == 10 and len(est.result.counts.groups) == 2
    assert est.result.estimate.mu_hat == pytest.approx(ref.unbiased())
    assert est.result.estimate.mle == pytest.approx(ref.mle())
    assert est.epsilon == pytest.approx(max(math.log(3), 1.0))
    assert est.result.counts.sd_at(0.5) == pytest.approx(ref.sd_at(0.5))


def test_history_has_one_estimate_per_round(service, open_question):
    poll, q = open_question()
    for i in range(5):
        submit(service, poll, q, answer=1, device=f"s{i}")
    service.running.new_round(q.id, EPS1, open_now=True)
    q = service.polls.question(q.id)
    for i in range(3):
        submit(service, poll, q, answer=0, device=f"s{i}")
    est = service.results.estimate(q.id)
    assert est.round_number == 2 and est.rounds == (1, 2)
    assert [(n, h.n) for n, h in est.history] == [(1, 5), (2, 3)]
    assert est.n == 3 and est.epsilon == pytest.approx(1.0)
    first = service.results.estimate(q.id, round_number=1)
    assert first.n == 5 and first.counts == (0, 5)
    with pytest.raises(BadInput, match="round 7 does not exist"):
        service.results.estimate(q.id, round_number=7)


def _categorical_reference(oracle, support, n):
    raw = oracle.estimate_counts(support, n)
    return raw, ldp_core.norm_sub(raw, n)


@pytest.mark.parametrize("params", [GRR3, UE3], ids=["grr", "ue"])
def test_categorical_estimate_is_ldp_core_on_support_counts(service, open_question, params):
    poll, q = open_question(options=("Red", "Green", "Blue"), kind="categorical",
                            design_params=params)
    oracle = ldp_core.categorical_oracle_from_params(params)
    rng = np.random.default_rng(7)
    reports = oracle.perturb(rng.integers(0, 3, size=60), rng=rng)
    for i, rep in enumerate(reports):
        answer = "".join(map(str, rep)) if params["design"] == "ue" else int(rep)
        submit(service, poll, q, answer=answer, device=f"c{i}")
    support = oracle.support_counts(reports)
    raw, ns = _categorical_reference(oracle, support, 60)
    est = service.results.estimate(q.id)
    cat = est.result
    assert est.counts == tuple(support) == cat.support_counts
    np.testing.assert_allclose(cat.raw, raw)
    np.testing.assert_allclose(cat.norm_sub, ns)
    np.testing.assert_allclose(cat.clipped, ldp_core.clip_counts(raw))
    np.testing.assert_allclose(
        np.square(cat.sd), oracle.count_variance(60, np.asarray(ns) / 60))
    assert sum(cat.shares()) == pytest.approx(1.0)


# -- simulation ------------------------------------------------------------------------------


def test_simulated_reports_are_validated_counted_and_cleared(service, store, open_question):
    poll, q = open_question()
    submit(service, poll, q, answer=1, device="real-student")
    assert service.results.add_simulated_reports(q.id, 300, 0.8, seed=3) == 300
    est = service.results.estimate(q.id)
    assert est.n == 301 and est.n_simulated == 300
    assert 0.6 < est.result.estimate.mu_hat < 1.0
    assert service.results.estimate(q.id, include_simulated=False).n == 1
    assert service.results.clear_simulated(q.id) == 300
    assert n_reports(store) == 1
    assert service.reports.receipt_for(q.id, "real-student") is not None
    service.running.close_question(q.id)
    with pytest.raises(QuestionClosed):
        service.results.add_simulated_reports(q.id, 5, 0.5)
    service.running.open_question(q.id)
    with pytest.raises(BadInput, match="true_share must be a number in"):
        service.results.add_simulated_reports(q.id, 5, 1.5)
    with pytest.raises(BadInput, match="simulated students must be"):
        service.results.add_simulated_reports(q.id, 0, 0.5)


def test_simulated_categorical_reports(service, open_question):
    _, q = open_question(options=("A", "B", "C"), kind="categorical", design_params=UE3)
    assert service.results.add_simulated_reports(q.id, 500, [0.6, 0.3, 0.1], seed=11) == 500
    cat = service.results.estimate(q.id).result
    assert cat.n == 500 and cat.norm_sub[0] > cat.norm_sub[2]
    with pytest.raises(BadInput, match="3 non-negative shares"):
        service.results.add_simulated_reports(q.id, 5, [0.5, 0.5])


# -- privacy accounting ----------------------------------------------------------------------


def test_spent_epsilon_composes_this_devices_reports_only(service, open_question):
    poll, q1 = open_question()
    q2 = service.polls.add_question(poll.id, "Second?", design_params=EPS1)
    submit(service, poll, q1, device="me")
    submit(service, poll, q1, device="someone-else")
    service.running.open_question(q2.id)
    submit(service, poll, service.polls.question(q2.id), device="me")
    service.running.new_round(q2.id, {"design": "epsilon", "epsilon": 0.5}, open_now=True)
    submit(service, poll, service.polls.question(q2.id), device="me")
    assert service.reports.spent_epsilon(poll.id, "me") == pytest.approx(math.log(3) + 1.0 + 0.5)
    assert service.reports.spent_epsilon(poll.id, "someone-else") == pytest.approx(math.log(3))
    assert service.reports.spent_epsilon(poll.id, "nobody") == 0.0
    with pytest.raises(UnknownPoll):
        service.reports.spent_epsilon(424242, "me")


# -- export and replay -----------------------------------------------------------------------


def test_export_has_no_tokens_or_submission_ids(service, store, open_question):
    poll, q = open_question()
    submit(service, poll, q, answer=1, device="d1", sid="secret-sub-id-1")
    submit(service, poll, q, answer=0, device="d2", sid="secret-sub-id-2")
    service.results.add_simulated_reports(q.id, 10, 0.5, seed=1)
    text = service.results.export_csv(q.id)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0].keys()) == ("round", "answer", "answer_label", "design_params",
                                     "created_at")
    assert len(rows) == 2
    assert [(r["answer"], r["answer_label"]) for r in rows] == [("1", "Vanilla"),
                                                               ("0", "Chocolate")]
    assert json.loads(rows[0]["design_params"]) == {**DIE, "kind": "binary"}  # records its kind
    for row in raw_rows(store, "reports"):
        assert row["dedup_token"] not in text and row["submission_id"] not in text
    assert "d1" not in text
    assert len(list(csv.DictReader(io.StringIO(
        service.results.export_csv(q.id, include_simulated=True))))) == 12


def test_import_round_trips_binary_rounds_with_mixed_designs(service, open_question):
    poll, q = open_question()
    for i, a in enumerate([1, 1, 0, 1]):
        submit(service, poll, q, answer=a, device=f"a{i}")
    q = service.polls.set_design(q.id, EPS1)
    for i, a in enumerate([0, 1, 0]):
        submit(service, poll, q, answer=a, device=f"b{i}")
    service.running.new_round(q.id, {"design": "warner", "p": 0.8}, open_now=True)
    q = service.polls.question(q.id)
    for i, a in enumerate([1, 0, 0, 0, 1]):
        submit(service, poll, q, answer=a, device=f"c{i}")
    replay = service.results.import_csv(service.results.export_csv(q.id))
    live = service.results.estimate(q.id)
    assert replay.question_id is None and replay.options == ("Chocolate", "Vanilla")
    assert replay.rounds == live.rounds == (1, 2)
    assert replay.result.estimate == live.result.estimate
    assert replay.history == live.history
    replayed = service.results.import_csv(service.results.export_csv(q.id), round_number=1)
    live = service.results.estimate(q.id, round_number=1)
    assert replayed.result.estimate == live.result.estimate


def test_import_round_trips_categorical(service, open_question):
    poll, q = open_question(options=("A", "B", "C"), kind="categorical", design_params=UE3)
    service.results.add_simulated_reports(q.id, 40, [0.2, 0.5, 0.3], seed=5)
    replay = service.results.import_csv(service.results.export_csv(q.id, include_simulated=True))
    live = service.results.estimate(q.id)
    assert replay.kind == "categorical" and replay.counts == live.counts
    assert replay.result == live.result


# -- network addresses: counted per round, never stored, optionally limited ----------------


def test_distinct_addresses_are_counted_per_round_without_storing_any(service, store,
                                                                      open_question):
    poll, q = open_question()
    for i, address in enumerate(["198.51.100.7", "198.51.100.7", "203.0.113.9", None]):
        submit(service, poll, q, device=f"phone-{i}", address=address)
    est = service.results.estimate(q.id)
    assert est.n == 4 and est.addresses == 2  # the report without an address is not counted
    text = " ".join(str(v) for table in ("polls", "questions", "rounds", "reports")
                    for row in raw_rows(store, table) for v in row.values())
    assert "198.51.100.7" not in text and "203.0.113.9" not in text
    first = {r["address_tag"] for r in raw_rows(store, "reports")} - {None}
    service.running.new_round(q.id, open_now=True)
    submit(service, poll, q, device="phone-0", address="198.51.100.7")
    assert service.results.estimate(q.id).addresses == 1
    second = {r["address_tag"] for r in raw_rows(store, "reports")} - {None} - first
    assert len(first) == 2 and len(second) == 1 and not first & second  # unlinkable
    assert service.results.estimate(q.id, round_number=1).addresses == 2


def test_simulated_reports_are_not_counted_as_addresses(service, open_question):
    poll, q = open_question()
    submit(service, poll, q, device="sim", simulated=True, address="192.0.2.1")
    submit(service, poll, q, device="real", address="192.0.2.2")
    assert service.results.estimate(q.id).addresses == 1


def test_the_per_address_limit_refuses_and_writes_nothing(store, open_question, caplog):
    from classroom.domain import AddressLimit

    limited = PollService.on(store, max_reports_per_address=2)
    poll, q = open_question()
    first = submit(limited, poll, q, device="a", sid="sub-limit-a", address="192.0.2.50")
    submit(limited, poll, q, device="b", address="192.0.2.50")
    with caplog.at_level("WARNING", logger="classroom.service"):
        with pytest.raises(AddressLimit, match="2 answers to this question already came"):
            submit(limited, poll, q, device="c", address="192.0.2.50")
    assert n_reports(store) == 2
    assert any("per-address limit" in r.getMessage() for r in caplog.records)
    assert not any("192.0.2.50" in r.getMessage() for r in caplog.records)
    # A double tap of a stored report still gets its receipt, and another network votes.
    again = submit(limited, poll, q, device="a", sid="sub-limit-a", address="192.0.2.50")
    assert again.already_answered and again.answer == first.answer
    submit(limited, poll, q, device="c", address="192.0.2.51")
    assert n_reports(store) == 3
    # The limit is per round: a new round starts from zero.
    limited.running.new_round(q.id, open_now=True)
    submit(limited, poll, q, device="c", address="192.0.2.50")


def test_a_burst_from_one_address_is_logged_without_the_address(service, open_question,
                                                                 caplog):
    from classroom.service import BURST_LOG_AT

    poll, q = open_question()
    with caplog.at_level("WARNING", logger="classroom.service"):
        for i in range(min(BURST_LOG_AT)):
            submit(service, poll, q, device=f"stuffer-{i}", address="192.0.2.99")
    bursts = [r.getMessage() for r in caplog.records if "came from one network" in r.getMessage()]
    assert bursts == [f"question {q.id} round 1: {min(BURST_LOG_AT)} reports so far came "
                      "from one network address (a class behind one NAT, or one device "
                      "voting with many cookies: see the dashboard's plausibility check)"]
    assert not any("192.0.2.99" in r.getMessage() or "stuffer" in r.getMessage()
                   for r in caplog.records)
