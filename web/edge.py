"""What the app decides about a request before any route or page sees it: whether its
``Host`` is the app's own, who sent it, from which device, and the rate limits those
answers are counted in.

:class:`Edge` holds them for a process (built once from the settings, part of the
composition root); the middleware (:mod:`web.middleware`) applies it to every request
and leaves a :class:`Visitor` in the request's state, which routes read with
:func:`visitor`.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from classroom.config import Settings

from .devices import DeviceCookies
from .hosts import AllowedHosts
from .limits import Device, Limits, MemoryCounts

__all__ = ["Edge", "Visitor", "visitor"]

_STATE_KEY = "ldp.visitor"
#: uvicorn's own default for FORWARDED_ALLOW_IPS: a proxy on this machine.
_LOCAL_PROXIES = "127.0.0.1,::1"


async def _nothing(scope: Scope, receive: Receive, send: Send) -> None:
    return None


async def _no_message() -> Message:
    return {"type": "http.disconnect"}


async def _no_send(message: Message) -> None:
    return None


#: Rewrites a scope's client and scheme from a trusted proxy's headers.
ForwardedRule = Callable[[Scope, Receive, Send], Awaitable[None]]


def _forwarded_rule(trusted_proxies: str) -> ForwardedRule:
    """uvicorn's own X-Forwarded-For rule (its ProxyHeadersMiddleware, which rewrites the
    scope in place) on ``trusted_proxies``, as a function of a scope."""
    return cast(ForwardedRule, ProxyHeadersMiddleware(cast(Any, _nothing),
                                                      trusted_hosts=trusted_proxies))


def _derived(key: str, purpose: str) -> bytes:
    return hmac.new(key.encode(), purpose.encode(), hashlib.sha256).digest()


@dataclass(frozen=True)
class Edge:
    """A process's allowed hosts, rate limits and device cookies."""

    hosts: AllowedHosts
    limits: Limits
    devices: DeviceCookies
    #: uvicorn's own X-Forwarded-For rule, on the proxies the settings trust.
    forwarded: ForwardedRule
    #: Who may frame the app's pages (CSP frame-ancestors): ``'none'`` or ``'self'``.
    framing: str = "'none'"

    @classmethod
    def build(cls, settings: Settings) -> Edge:
        """From the settings: the rate limits' storage must answer (else ConfigError)."""
        limits = Limits.open(settings.rate_limit_storage,
                             secret=_derived(settings.instructor_key, "rate-limit keys"))
        return cls(AllowedHosts(settings.allowed_hosts, public_url=settings.public_url),
                   limits, DeviceCookies(settings.instructor_key, limits),
                   _forwarded_rule(settings.trusted_proxies), settings.frame_ancestors)

    @classmethod
    def local(cls, key: str = "a local key for tests and tools", *,
              hosts: Iterable[str] = (), limits: Limits | None = None,
              trusted_proxies: str = _LOCAL_PROXIES, framing: str = "'none'",
              clock: Callable[[], float] = time.time) -> Edge:
        """An edge of its own, counting in memory: for tests and tools that serve the routes
        without the app (``hosts``: names to allow beyond the app's own, such as the test
        client's ``testserver``)."""
        limits = limits or Limits(MemoryCounts(), secret=_derived(key, "rate-limit keys"),
                                  clock=clock)
        return cls(AllowedHosts(hosts), limits, DeviceCookies(key, limits, clock=clock),
                   _forwarded_rule(trusted_proxies), framing)

    async def unmap_client(self, scope: Scope) -> None:
        """On a dual-stack socket (``streamlit run app.py`` listens on ``::``), an IPv4
        client arrives as ``::ffff:a.b.c.d``, which matches no IPv4 address or network
        in FORWARDED_ALLOW_IPS: a proxy on this machine (``::ffff:127.0.0.1``) was never
        believed. Read such an address as the IPv4 address it is, then apply uvicorn's
        own X-Forwarded-For rule, as uvicorn would have for an IPv4 socket."""
        client = scope.get("client")
        if not client:
            return
        mapped = _ipv4_mapped(client[0])
        if mapped is not None:
            scope["client"] = (mapped, client[1])
            await self.forwarded(scope, _no_message, _no_send)


@functools.lru_cache(maxsize=4096)  # every request asks; a lecture hall has few addresses
def _ipv4_mapped(host: str) -> str | None:
    """The IPv4 address an IPv4-mapped IPv6 address stands for, else None.

    >>> _ipv4_mapped("::ffff:192.0.2.7"), _ipv4_mapped("192.0.2.7"), _ipv4_mapped("::1")
    ('192.0.2.7', None, None)
    """
    try:
        mapped = ipaddress.IPv6Address(host).ipv4_mapped
    except ValueError:
        return None
    return None if mapped is None else str(mapped)


@dataclass(frozen=True)
class Visitor:
    """Who sent a request, as the edge saw it."""

    edge: Edge
    #: The device its cookie names, or None (no cookie, or one this app did not sign).
    device: Device | None
    #: Whether it sent a device cookie at all (one that was made up is refused as none).
    sent_cookie: bool

    def place(self, scope: Scope) -> None:
        scope.setdefault("state", {})[_STATE_KEY] = self


def visitor(request: Request) -> Visitor:
    """The :class:`Visitor` the app's middleware left on ``request``."""
    found = request.scope.get("state", {}).get(_STATE_KEY)
    if not isinstance(found, Visitor):
        raise RuntimeError("the app's middleware (web.middleware) did not see this request")
    return found
