"""Argument validation shared by every public constructor and estimator.

Each check raises ``ValueError`` naming the parameter, the value it got and
the range it allows, so that a page can show the message as it is.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import TypeAlias

import numpy as np

__all__: list[str] = []

#: What every ``rng`` argument accepts, as in numpy's SPEC 7: a ``Generator``, or
#: anything ``numpy.random.default_rng`` turns into one (a seed, a bit generator, None).
RNGLike: TypeAlias = (np.random.Generator | np.random.BitGenerator | np.random.SeedSequence
                      | int | None)


def _shown(value: object) -> str:
    """``repr(value)`` for a message, at most 40 characters; an integer too long for that
    is named by its size (Python refuses to print one past 4,300 digits at all)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"an integer of {value.bit_length()} bits"
    try:
        text = repr(value)
    except ValueError:
        return f"a {type(value).__name__} too large to show"
    return text if len(text) <= 40 else text[:39] + "…"


def finite(name: str, value: object) -> float:
    """Return ``value`` as a float, or raise if it is not a finite real number."""
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        raise ValueError(f"{name} must be a real number, got {_shown(value)}")
    try:
        x = float(value)
    except OverflowError:  # an integer beyond every float (10**400)
        x = math.inf
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {_shown(value)}")
    return x


def positive(name: str, value: object) -> float:
    x = finite(name, value)
    if x <= 0:
        raise ValueError(f"{name} must be > 0, got {_shown(value)}")
    return x


def in_range(name: str, value: object, lo: float, hi: float, *,
             lo_open: bool = False, hi_open: bool = False) -> float:
    """Check ``lo <= value <= hi`` (with optional open ends); return the float."""
    x = finite(name, value)
    too_low = x <= lo if lo_open else x < lo
    too_high = x >= hi if hi_open else x > hi
    if too_low or too_high:
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        raise ValueError(f"{name} must be in {left}{lo:g}, {hi:g}{right}, got {_shown(value)}")
    return x


def integer(name: str, value: object, lo: int, hi: int | None = None) -> int:
    """Check that ``value`` is an integer in ``lo..hi`` (``hi`` None: no upper bound)."""
    if isinstance(value, bool) or not isinstance(value, (Integral, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer, got {_shown(value)}")
    k = int(value)
    if k < lo or (hi is not None and k > hi):
        upper = "" if hi is None else f"..{hi}"
        rng = f"{lo}{upper}" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be an integer in {rng}, got {_shown(value)}")
    return k


#: The largest count a float holds exactly; every count is at most this.
MAX_COUNT = 2**53


def count_array(name: str, values: object, n: object = None) -> np.ndarray:
    """Counts: integers >= 0 and, when ``n`` is given, <= n (elementwise)."""
    arr = np.asarray(values)
    if arr.dtype.kind == "b":
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be numeric counts, got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise ValueError(f"{name} must be whole numbers")
        if arr.size and np.abs(arr).max() > MAX_COUNT:
            raise ValueError(f"{name} must be whole numbers below 2**53")
        arr = arr.astype(np.int64)
    if np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0, got {arr[arr < 0][0]!r}")
    if n is not None and np.any(arr > np.asarray(n)):
        raise ValueError(f"{name} must be <= n (the number of reports)")
    return arr.astype(np.int64)


def binary_array(name: str, values: object) -> np.ndarray:
    """An array of 0/1 answers (bools allowed) as uint8."""
    arr = np.asarray(values)
    if arr.dtype.kind == "b":
        return arr.astype(np.uint8)
    if arr.dtype.kind not in "iuf" or arr.size and not np.all((arr == 0) | (arr == 1)):
        raise ValueError(f"{name} must contain only 0 and 1")
    return arr.astype(np.uint8)


def category_array(name: str, values: object, d: int) -> np.ndarray:
    """An array of category indices in 0..d-1 as int64."""
    arr = np.asarray(values)
    if arr.dtype.kind not in "iu":
        if (arr.dtype.kind == "f" and np.all(arr == np.round(arr))
                and (not arr.size or np.abs(arr).max() < 2.0**53)):
            arr = arr.astype(np.int64)
        else:
            raise ValueError(f"{name} must be category indices 0..{d - 1}")
    if arr.size and (arr.min() < 0 or arr.max() >= d):
        bad = arr[(arr < 0) | (arr >= d)][0]
        raise ValueError(f"{name}: unknown category {int(bad)}; allowed 0..{d - 1}")
    return arr.astype(np.int64)
