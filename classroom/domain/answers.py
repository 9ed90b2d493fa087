"""Answers: the canonical stored string of a randomized report under its design, and its
label for people (see the package docstring for the encoding); each kind's rules are in
its module of :mod:`classroom.kinds`."""

from __future__ import annotations

from classroom.kinds import (
    Design,
    format_value,
    kind,
    numeric_report,
    ue_label,
)

__all__ = ["answer_label", "encode_answer", "format_value", "numeric_report", "ue_label"]


def encode_answer(kind_name: str, design: Design, options: tuple[str, ...],
                  answer: object) -> str:
    """The canonical stored string of ``answer``, or :class:`BadReport` naming what is allowed."""
    return kind(kind_name).encode(design, options, answer)


def answer_label(kind_name: str, design: Design, options: tuple[str, ...], stored: str) -> str:
    """Human label of a stored answer of a ``kind_name`` question under ``design``: the
    option, for UE the options whose bit is 1, for a numeric question the report in the
    question's units."""
    return kind(kind_name).answer_label(design, options, stored)
