"""The app's middleware around routes under test, as Starlette's TestClient reaches them.

The TestClient sends ``Host: testserver``, which is not one of the app's own hosts, so
the edge here allows that name as well; everything else is the app's (signed device
cookies, rate limits in memory, the default trusted proxies).
"""

from __future__ import annotations

import web

__all__ = ["TEST_HOST", "local_edge", "local_middleware"]

TEST_HOST = "testserver"


def local_edge(**kwargs) -> web.Edge:
    """An edge of its own (fresh limits in memory) that allows the test client's host."""
    return web.Edge.local(hosts=(TEST_HOST, *kwargs.pop("hosts", ())), **kwargs)


def local_middleware(edge: web.Edge | None = None) -> list:
    """``web.middleware`` on ``edge`` (a fresh :func:`local_edge` by default)."""
    return web.middleware(edge or local_edge())
