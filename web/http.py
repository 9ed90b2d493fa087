"""Small facts about one request, shared by the login routes, the phone routes and the
middleware: who sent it, over what, from which page, and how deep its JSON is."""

from __future__ import annotations

from starlette.requests import Request

__all__ = ["client_address", "is_secure", "json_depth", "own_origin", "same_origin"]


def client_address(request: Request) -> str:
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
