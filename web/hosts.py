"""The host names the app answers to, against DNS rebinding.

A page on another site can make its own domain name resolve to this server's address
(DNS rebinding); the browser then sends that page's requests here, with the other
site's name in ``Host``, and treats the answers as the other site's own. Every request
whose ``Host`` is not one of the app's is refused (``421``, a websocket closed before
it opens), Streamlit's pages and websocket included.

The app's own hosts, with no setting:

* loopback: ``localhost`` and any ``*.localhost``;
* any IP address (v4 or v6): rebinding needs a domain name, so an address typed or
  scanned from the QR code is always the page's own; and this machine's addresses
  change with the network (Wi-Fi, a hotspot, a new lease) during a class;
* this machine's names (``socket.gethostname()``, its fully qualified name, and the
  ``.local`` name it may have on the local network);
* the host of ``LDP_CLASSROOM_PUBLIC_URL``.

``LDP_CLASSROOM_ALLOWED_HOSTS`` adds more: names, ``*.example.org`` for every
subdomain, ``*`` for any (behind a proxy that checks names itself).

Streamlit's own ``server.allowedHosts`` (since 1.61) checks the websocket's ``Host``
only, not HTTP requests, and it knows neither this machine's addresses nor the public
URL; this check covers both, so it is not needed (left unset, Streamlit accepts any).
"""

from __future__ import annotations

import functools
import ipaddress
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

__all__ = ["AllowedHosts", "host_name"]


def host_name(header: str | None) -> str | None:
    """The name in a ``Host`` header, lower case, without port or final dot; None if the
    header is not a host (a path, a user, a bad port).

    >>> host_name("Class.Example.org.:8501"), host_name("[::1]:8501"), host_name("a/b")
    ('class.example.org', '::1', None)
    """
    if not header:
        return None
    try:
        parts = urlsplit(f"//{header}")
        name = parts.hostname
        _ = parts.port  # a port that is not a number is not a host
    except ValueError:
        return None
    if name is None or parts.username is not None or parts.password is not None \
            or parts.path or parts.query or parts.fragment:
        return None
    return name.rstrip(".")


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _machine_names() -> set[str]:
    names = {socket.gethostname(), socket.getfqdn()}
    names |= {f"{name.split('.')[0]}.local" for name in set(names)}
    return {name.lower().rstrip(".") for name in names if name}


class AllowedHosts:
    """Whether a request's ``Host`` names this app."""

    def __init__(self, extra: Iterable[str] = (), *, public_url: str | None = None,
                 machine: Iterable[str] | None = None) -> None:
        names = set(_machine_names() if machine is None else machine)
        if public_url:
            public = host_name(urlsplit(public_url).netloc)
            if public:
                names.add(public)
        self._any = False
        self._suffixes: list[str] = []
        for item in extra:
            item = item.strip().lower().rstrip(".")
            if item == "*":
                self._any = True
            elif item.startswith("*."):
                self._suffixes.append(item[1:])
            elif item:
                names.add(item)
        self._names = frozenset(names)
        # Every request asks, with one of a few headers: the answers are kept.
        self._verdict = functools.lru_cache(maxsize=1024)(self._judge)

    def allows(self, header: str | None) -> bool:
        """Whether a request with this ``Host`` header is for the app. A request without
        one is not a browser's (browsers always send it), so it cannot be rebinding."""
        if header is None or self._any:
            return True
        return self._verdict(header)

    def _judge(self, header: str) -> bool:
        name = host_name(header)
        if name is None:
            return False
        return (name == "localhost" or name.endswith(".localhost") or _is_address(name)
                or name in self._names or any(name.endswith(s) for s in self._suffixes))
