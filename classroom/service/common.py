"""What every use case of the service shares: row ids read from outside, "not found"
answers, fresh join codes and round salts."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import TypeVar

from ..domain import (
    JOIN_CODE_ALPHABET,
    JOIN_CODE_LENGTH,
    MAX_ROW_ID,
    BadInput,
    StoreUnavailable,
    UnknownPoll,
    UnknownQuestion,
)
from ..domain.vocabulary import shown

__all__ = ["SALT_BYTES", "new_join_code", "new_salt", "poll_found", "question_found",
           "row_id", "with_join_code"]

SALT_BYTES = 32
T = TypeVar("T")


def new_join_code() -> str:
    """Six characters from the unambiguous alphabet, from the OS CSPRNG."""
    return "".join(secrets.choice(JOIN_CODE_ALPHABET) for _ in range(JOIN_CODE_LENGTH))


def new_salt() -> bytes:
    """A round's fresh salt (its dedup tokens and address tags are HMACs under it)."""
    return secrets.token_bytes(SALT_BYTES)


def with_join_code(insert: Callable[[str], T | None]) -> T:
    """``insert(code)`` with fresh join codes until one is free (it returns None when the
    code is taken)."""
    for _ in range(20):
        created = insert(new_join_code())
        if created is not None:
            return created
    raise StoreUnavailable("could not find a free join code — try again")


def row_id(name: str, value: object) -> int:
    """A row id: a whole number up to MAX_ROW_ID (a larger one names nothing, and the
    database would refuse to compare it); zero or below names nothing either."""
    if isinstance(value, bool):
        raise BadInput(f"{name} must be a whole number, got {value!r}")
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) < 19:
        value = int(value.strip())
    if isinstance(value, int):
        if value > MAX_ROW_ID:
            raise BadInput(f"{name} {shown(value)} is out of range: ids run from 1 to "
                           f"{MAX_ROW_ID}")
        return value
    raise BadInput(f"{name} must be a whole number, got {str(value)[:24]!r}")


def question_found(value: T | None, question_id: int) -> T:
    """``value``, or ``UnknownQuestion`` when the store found nothing."""
    if value is None:
        raise UnknownQuestion(f"no question with id {question_id}")
    return value


def poll_found(value: T | None, poll_id: int) -> T:
    """``value``, or ``UnknownPoll`` when the store found nothing."""
    if value is None:
        raise UnknownPoll(f"no poll with id {poll_id}")
    return value
