"""Small facts about one request, shared by the login routes, the phone routes and the
middleware: who sent it, over what, from which page, and what its JSON says."""

from __future__ import annotations

import json
import math

from starlette.requests import HTTPConnection, Request

from classroom.domain import MAX_ROW_ID

__all__ = ["MAX_ROW_ID", "MAX_SAFE_INTEGER", "client_address", "is_secure", "json_depth",
           "own_origin", "parse_json", "same_origin"]

#: The largest integer a browser's JavaScript holds exactly (``Number.MAX_SAFE_INTEGER``):
#: a page of the app never sends a larger one.
MAX_SAFE_INTEGER = 2**53 - 1


def client_address(request: HTTPConnection) -> str:
    """The request's network address: the connection's, or, from a proxy uvicorn trusts
    (``FORWARDED_ALLOW_IPS``), the one it forwarded."""
    return request.client.host if request.client else "unknown"


def _scheme(request: Request) -> str:
    return request.headers.get("x-forwarded-proto", request.url.scheme).split(",")[0].strip()


def is_secure(request: Request) -> bool:
    """Whether the browser reached the app over HTTPS (directly or through a proxy)."""
    return _scheme(request) == "https"


def own_origin(request: Request) -> str:
    """The origin the app's own pages have for this request, ``scheme://host``."""
    return f"{_scheme(request)}://{request.headers.get('host', '')}"


def same_origin(request: Request) -> bool:
    """Whether the request says it comes from one of the app's own pages (``Origin``)."""
    origin = request.headers.get("origin")
    return bool(origin) and origin == own_origin(request)


def _exact_int(text: str) -> int:
    if len(text.lstrip("-")) > 16 or abs(value := int(text)) > MAX_SAFE_INTEGER:
        raise ValueError(f"{text[:20]}... is larger than any number a page sends")
    return value


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 overflows to infinity
        raise ValueError(f"{text[:20]} is not a finite number")
    return value


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a number a page sends")


def parse_json(data: bytes | str) -> object:
    """JSON as the app's pages send it: integers within JavaScript's exact range, finite
    numbers only (no ``NaN``, ``Infinity`` or ``1e400``); anything else raises
    ``ValueError``, so a number no page could have sent never reaches the service.

    >>> parse_json(b'{"a": [1, 2.5, -3]}')
    {'a': [1, 2.5, -3]}
    >>> for bad in (b'1' + b'0' * 400, b'1e400', b'NaN', b'9007199254740993'):
    ...     try:
    ...         parse_json(bad)
    ...     except ValueError:
    ...         print("refused")
    refused
    refused
    refused
    refused
    """
    return json.loads(data, parse_int=_exact_int, parse_float=_finite_float,
                      parse_constant=_no_constant)


def json_depth(value: object) -> int:
    """Nesting depth of parsed JSON, without recursion (a crafted document cannot
    exhaust the stack).

    >>> json_depth({"a": [1, {"b": []}]}), json_depth(3)
    (4, 1)
    """
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
    return deepest
