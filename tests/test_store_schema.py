"""The schema's CHECK constraints come from the domain's vocabulary, and the migrations
keep up with them.

A new kind, mode or state in :mod:`classroom.domain` changes the constraints a fresh
database gets; an existing database learns them only from a migration. These tests
fail when the vocabulary moves without one (the contract suite runs the migrations
themselves on both backends).
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from classroom.domain import KINDS, MAX_COUNTDOWN_S, MIN_COUNTDOWN_S, MODES, STATES
from classroom.store import (
    COUNTDOWN_CHECK,
    KIND_CHECK,
    MODE_CHECK,
    SCHEMA_VERSION,
    STATE_CHECK,
    questions,
)
from classroom.store.migrations import COUNTDOWN_CHECK_AT_4, KIND_CHECK_AT
from classroom.store.schema import check_in


def test_the_constraints_are_the_vocabulary():
    """Modes and states are lists; a kind is any name (the registry checks it), so a new
    kind leaves the schema as it is."""
    assert KIND_CHECK == "kind <> ''" and not any(k in KIND_CHECK for k in KINDS)
    assert (MODE_CHECK, STATE_CHECK) == (check_in("mode", MODES), check_in("state", STATES))
    named = {c.name: str(c.sqltext) for c in questions.constraints
             if isinstance(c, sa.CheckConstraint)}
    assert named == {"ck_questions_kind": KIND_CHECK, "ck_questions_mode": MODE_CHECK,
                     "ck_questions_state": STATE_CHECK}


def test_the_latest_migration_writes_the_current_kind_check():
    """The latest schema version's check on a kind is the one a fresh database gets."""
    assert KIND_CHECK_AT[SCHEMA_VERSION] == KIND_CHECK
    assert max(KIND_CHECK_AT) == SCHEMA_VERSION


def test_the_countdown_check_is_the_domains_range_as_version_4_wrote_it():
    assert (MIN_COUNTDOWN_S, MAX_COUNTDOWN_S) == (10, 3600)
    assert COUNTDOWN_CHECK == COUNTDOWN_CHECK_AT_4
    assert [str(c.sqltext) for c in questions.c.countdown_s.constraints] == [COUNTDOWN_CHECK]


@pytest.mark.parametrize("column, values", [("kind; DROP TABLE x", ("a",)),
                                            ("kind", ("a'); DROP TABLE x; --",))])
def test_a_check_is_built_only_from_plain_names(column, values):
    with pytest.raises(ValueError, match="not plain identifiers"):
        check_in(column, values)


def test_the_database_refuses_what_the_vocabulary_does_not_know(store):
    poll = store.insert_poll("K7QM2P", "t", False, sa.func.now())
    assert poll is not None
    row = {"poll_id": poll.id, "position": 1, "text": "?", "options": "[]",
           "design_params": "{}", "revealed": False, "round_count": 1,
           "created_at": sa.func.now(), "updated_at": sa.func.now()}
    for bad in ({"kind": "", "mode": "device", "state": "draft"},
                {"kind": "binary", "mode": "by-post", "state": "draft"},
                {"kind": "binary", "mode": "device", "state": "revealed"}):
        with pytest.raises(sa.exc.IntegrityError), store.engine.begin() as conn:
            conn.execute(questions.insert().values(**row, **bad))
