"""The classroom's vocabulary and limits: modes, states, join codes,
text limits, and the checks of what people type (titles, questions, options, codes)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .errors import BadInput

__all__ = [
    "CLASS_EXERCISE",
    "EPSILON_RANGE",
    "JOIN_CODE_ALPHABET",
    "JOIN_CODE_LENGTH",
    "MAX_COUNTDOWN_S",
    "MAX_NUMERIC_BOUND",
    "MAX_OPTIONS",
    "MAX_OPTION_CHARS",
    "MAX_QUESTION_CHARS",
    "MAX_ROW_ID",
    "MAX_TITLE_CHARS",
    "MAX_UNIT_CHARS",
    "MIN_COUNTDOWN_S",
    "MIN_NUMERIC_SPAN",
    "MIN_OPTIONS",
    "MODES",
    "STATES",
    "clean_countdown",
    "clean_text",
    "display_order",
    "normalize_join_code",
    "shorten",
    "shown",
]


#: The course's class exercise (CS208): roll a die 1-4, report the truth on 1-3 and the
#: opposite on 4, so a = 3/4, b = 1/4 and epsilon = ln 3. ``dict(CLASS_EXERCISE)`` for a copy.
CLASS_EXERCISE: Mapping[str, Any] = MappingProxyType(
    {"design": "die", "faces": 4, "truthful": 3})

MODES = ("device", "physical")
STATES = ("draft", "open", "closed")

JOIN_CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
JOIN_CODE_LENGTH = 6

MAX_TITLE_CHARS = 100
#: The largest id a row can have on every backend: ids are INTEGER columns, 32 bits on
#: PostgreSQL (SQLite's are 64). A larger id names nothing, and the database would refuse
#: to compare it.
MAX_ROW_ID = 2**31 - 1
MAX_QUESTION_CHARS = 300
MAX_OPTION_CHARS = 60
MIN_OPTIONS = 2
MAX_OPTIONS = 20
MAX_UNIT_CHARS = 24
#: A question's optional voting countdown, in whole seconds.
MIN_COUNTDOWN_S = 10
MAX_COUNTDOWN_S = 3600

#: The privacy loss ε a question's design may have, whatever its kind (the form, a plan
#: file, the service and the store all check it). Up to ε = 5 the numeric 95% interval keeps
#: its coverage (``docs/numeric-checks.md``; at ε = 10 the Hybrid Mechanism's covers 86.6%
#: at n = 20); below 0.01 a class of any size learns nothing. A design with ε = ∞ (Warner's
#: spinner at p = 1) gives no privacy at all and is refused too.
EPSILON_RANGE = (0.01, 5.0)
#: A numeric question's range [lo, hi]: both within ±MAX_NUMERIC_BOUND, and hi - lo at least
#: MIN_NUMERIC_SPAN (every number is shown with at most 6 decimals, its last digit about a
#: thousandth of the width), so that every mechanism's reports stay finite in the answers'
#: units.
MAX_NUMERIC_BOUND = 1e9
MIN_NUMERIC_SPAN = 1e-3

_ALLOWED_CONTROL = {"\n", "\t"}
#: The bidirectional embeddings, overrides and isolates (U+202A–202E, U+2066–2069): they
#: reorder the text after them (U+202E shows "Yes" as "seY" on the projector and the
#: phones), so text with one is refused.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
#: Characters that draw nothing: format characters (zero-width spaces and joiners, the
#: byte-order mark), separators, combining marks on their own, and the blank letters
#: (Hangul fillers, the braille blank).
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Cc", "Zs", "Zl", "Zp", "Mn", "Me"})
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def _visible(ch: str) -> bool:
    return unicodedata.category(ch) not in _INVISIBLE_CATEGORIES and ch not in _BLANK_LETTERS


def shorten(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown(value: object, limit: int = 24) -> str:
    """``repr(value)`` shortened for a message; an integer too long to print whole (Python
    refuses past 4,300 digits) is named by its size.

    >>> shown(10**400), shown("abc"), shown([1, 2])
    ('a 401-digit integer', "'abc'", '[1, 2]')
    """
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        digits = len(str(abs(value))) if value.bit_length() < 14_000 else None
        size = f"{digits}-digit" if digits else f"{value.bit_length()}-bit"
        return f"a{' negative' if value < 0 else ''} {size} integer"
    try:
        return shorten(repr(value), limit)
    except ValueError:  # a huge integer inside a list
        return f"a {type(value).__name__} too large to show"


def clean_text(name: str, value: object, lo: int, hi: int, *, multiline: bool = False) -> str:
    """Strip ``value`` and check its length and characters; raise :class:`BadInput`."""
    if not isinstance(value, str):
        raise BadInput(f"{name} must be text, got {type(value).__name__}")
    text = value.strip()
    for ch in text:
        if unicodedata.category(ch) == "Cc" and not (multiline and ch in _ALLOWED_CONTROL):
            raise BadInput(f"{name} contains a control character (U+{ord(ch):04X}); "
                           "remove it and try again")
        if ch in _BIDI_CONTROLS:
            raise BadInput(f"{name} contains a text-direction control (U+{ord(ch):04X}), "
                           "which would reorder what follows it; remove it and try again")
    if text and not any(_visible(ch) for ch in text):
        raise BadInput(f"{name} has only invisible characters" + (
            "; type some text" if lo >= 1 else "; leave it empty or type some text"))
    if len(text) < lo:
        raise BadInput(f"{name} must not be empty" if lo == 1 else
                       f"{name} must have at least {lo} characters")
    if len(text) > hi:
        raise BadInput(f"{name} is {len(text)} characters long; the limit is {hi}")
    return text


def clean_countdown(value: object) -> int | None:
    """A question's optional countdown: None, or whole seconds from 10 to 3600.

    >>> clean_countdown(None), clean_countdown(90)
    (None, 90)
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) \
            or not MIN_COUNTDOWN_S <= value <= MAX_COUNTDOWN_S:
        raise BadInput(f"the countdown must be a whole number of seconds from "
                       f"{MIN_COUNTDOWN_S} to {MAX_COUNTDOWN_S}, or none; got "
                       f"{shown(value)}")
    return value


def normalize_join_code(code: object) -> str:
    """Normalise a typed join code: drop whitespace and dashes, upper-case, check the alphabet.

    >>> normalize_join_code(" abc-234 ")
    'ABC234'
    """
    if not isinstance(code, str):
        raise BadInput("the join code must be text")
    raw = code
    norm = re.sub(r"[\s\-–—_]+", "", raw).upper()
    if not norm:
        raise BadInput("enter the join code shown on the projector")
    bad = sorted({ch for ch in norm if ch not in JOIN_CODE_ALPHABET})
    if bad:
        chars = " ".join(repr(c) for c in bad[:5])
        raise BadInput(f"join code {shorten(raw.strip())!r} contains {chars}, which never "
                       f"appear in join codes (they use 2-9 and A-Z without I, L, O)")
    if len(norm) != JOIN_CODE_LENGTH:
        raise BadInput(f"join code {shorten(raw.strip())!r} has {len(norm)} characters; "
                       f"join codes have {JOIN_CODE_LENGTH}")
    return norm


def display_order(text: str, options: tuple[str, ...], *, yes_first: bool = True
                  ) -> tuple[int, ...]:
    """The order in which to show the answers: the order the question names them in.

    Each option's position is where its label first appears in ``text``
    (case-insensitive, as a whole word). Labels the text does not name follow,
    in reverse option order with ``yes_first`` ("yes", value 1, before "no", value 0, on
    a yes/no question), else in option order. The stored encoding is untouched: this is
    the buttons' order only.

    >>> display_order("Vanilla (1) or chocolate (0)?", ("Chocolate", "Vanilla"))
    (1, 0)
    >>> display_order("Did you sleep well?", ("No", "Yes"))
    (1, 0)
    >>> display_order("Red, green or blue?", ("Blue", "Green", "Red"), yes_first=False)
    (2, 1, 0)
    """
    folded = text.casefold()
    unnamed = list(range(len(options)))
    if yes_first:
        unnamed.reverse()

    def place(i: int) -> tuple[int, int]:
        found = re.search(rf"(?<!\w){re.escape(options[i].casefold())}(?!\w)", folded)
        return (found.start(), 0) if found else (len(folded) + 1, unnamed.index(i))

    return tuple(sorted(range(len(options)), key=place))
