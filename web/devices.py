"""Device cookies that the server issued: a random id, signed with a timestamp.

Every page load of a browser without a valid ``ldp_device`` cookie gets one: a random id
(24 bytes from the OS CSPRNG), signed with ``itsdangerous`` under a key derived from the
instructor key, with the time it was issued. A page load renews the timestamp when it
is older than a minute; the id stays, so the device id the service sees (``Device.id``,
kept only as a per-round HMAC) is stable for a browser, and so are its receipts and
its dedup.

* A made-up or altered value is no cookie at all: the phone API answers ``no_cookie``
  ("reload the page"), and the reload gets a real one. So one client can no longer
  invent a device per report; each device costs a page load.
* Cookies are issued (and renewed) at most :data:`NEW_DEVICES_PER_MINUTE` a minute per
  network address, far above what a lecture hall needs; beyond that a page loads
  without one, and the phone says to wait and reload.
* What it does not stop: a client that loads the page for every device it wants
  (within that rate), or one with many network addresses. The dashboard's plausibility
  check is what sees ballot stuffing; this only makes it cost a page load per device.
* Changing the instructor key invalidates every device cookie: phones reload and
  become new devices, so a question open across the change could get a second report
  from the same phone.
"""

from __future__ import annotations

import functools
import hashlib
import secrets
import time
from collections.abc import Callable

from itsdangerous import BadSignature, TimestampSigner
from limits import RateLimitItem, RateLimitItemPerMinute
from starlette.responses import Response

from .limits import Device, Limits

__all__ = ["DEVICE_COOKIE", "NEW_DEVICES_PER_MINUTE", "DeviceCookies"]

DEVICE_COOKIE = "ldp_device"
#: Device cookies issued or renewed per network address and minute. A lecture hall of
#: 1,500 phones behind one NAT all loading the page within the same minute stays far
#: below it.
NEW_DEVICES_PER_MINUTE = 6000
#: A page load renews a cookie older than this (seconds), so a device that loads a page
#: counts as recently seen (web.limits.Guesses) without a new cookie on every request.
RENEW_AFTER_S = 60
_YEAR = 365 * 24 * 3600
_MAX_COOKIE_CHARS = 200
#: Cookie values already verified, kept so that a phone's every request does not check
#: the same signature again (about 20 µs each): a lecture hall's worth, the least
#: recently seen dropped first.
SEEN_MAX = 16_384


class _Signer(TimestampSigner):
    """itsdangerous' timestamp signer, on a clock of our own (tests move it)."""

    def __init__(self, key: str, clock: Callable[[], float]) -> None:
        super().__init__(key, salt="ldp-classroom device cookie",
                         digest_method=hashlib.sha256)
        self._clock = clock

    def get_timestamp(self) -> int:
        return int(self._clock())


class DeviceCookies:
    """Signs, checks and hands out device cookies, within a rate per address."""

    def __init__(self, key: str, limits: Limits, *, per_minute: int = NEW_DEVICES_PER_MINUTE,
                 clock: Callable[[], float] = time.time) -> None:
        self._signer = _Signer(key, clock)
        self._limits = limits
        self._clock = clock
        self._rate: RateLimitItem = RateLimitItemPerMinute(per_minute)
        # A bad value raises inside, so it is never kept.
        self._verified = functools.lru_cache(maxsize=SEEN_MAX)(self._verify)

    def read(self, value: str | None) -> Device | None:
        """The device a cookie names, or None if it is missing or not one this app signed
        (made up, altered, or signed under another key). A value already verified under
        this key is answered from memory (:data:`SEEN_MAX`); a bad one is checked every
        time and never kept."""
        if not value or len(value) > _MAX_COOKIE_CHARS:
            return None
        try:
            return self._verified(value)
        except BadSignature:
            return None

    def _verify(self, value: str) -> Device:
        device_id, issued = self._signer.unsign(value, return_timestamp=True)
        return Device(device_id.decode("ascii", "replace"), issued.timestamp())

    def sign(self, device_id: str) -> str:
        """A cookie value for ``device_id``, issued now."""
        return self._signer.sign(device_id).decode("ascii")

    def due(self, device: Device | None) -> bool:
        """Whether a page load should get a cookie: none yet, or one to renew."""
        return device is None or self._clock() - device.issued_at > RENEW_AFTER_S

    def issue(self, device: Device | None, address: str, *, secure: bool) -> str | None:
        """The ``Set-Cookie`` header for a new cookie (or ``device``'s, renewed), or None
        when ``address`` has had its share of new cookies this minute."""
        if not self._limits.hit(self._rate, self._limits.key("devices", address)):
            return None
        device_id = device.id if device is not None else secrets.token_urlsafe(24)
        response = Response()
        response.set_cookie(DEVICE_COOKIE, self.sign(device_id), max_age=_YEAR,
                            httponly=True, samesite="lax", secure=secure)
        return response.headers["set-cookie"]

    def exhausted(self, address: str) -> int | None:
        """Seconds until ``address`` may get new cookies again, or None if it may now."""
        key = self._limits.key("devices", address)
        if self._limits.test(self._rate, key):
            return None
        return self._limits.retry_after(self._rate, key)
