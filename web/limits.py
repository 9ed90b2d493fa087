"""Rate limits, counted in this process's memory or in a storage every process shares.

The counting is the ``limits`` library's (moving windows). One process counts in its own
memory; several processes (``deploy/run-cluster.sh``, several VMs) must share one
storage, ``LDP_CLASSROOM_RATE_LIMIT_STORAGE=redis://127.0.0.1:6379``: a limit kept in
each of N processes' memory gives a guesser N times the tries.

The storage never sees what it counts: every key is a keyed hash (HMAC-SHA256 under a
secret of the app's) of a device id, a network address or a join code. If the shared
storage fails during a class, counting falls back to this process's memory, with a
warning in the log at most once a minute, instead of failing the phones' requests.

:class:`Guesses` is the policy for wrong guesses (join codes, instructor keys): they
slow down the device that makes them, and a network address only far above what a
lecture hall of honest phones sends; even then a device of that address that did not
guess is not refused (see :meth:`Guesses.refused`).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from limits import RateLimitItem, RateLimitItemPerMinute
from limits.errors import StorageError
from limits.storage import MemoryStorage, Storage, storage_from_string
from limits.strategies import MovingWindowRateLimiter

from classroom.config import masked_url
from classroom.domain import ConfigError

__all__ = ["Device", "GuessRule", "Guesses", "Limits", "MemoryCounts", "Wait"]

_LOG = logging.getLogger(__name__)
T = TypeVar("T")
S = TypeVar("S")
#: A shared storage that does not answer within this long counts as failed (seconds).
_STORAGE_TIMEOUT_S = 0.5
#: Rate-limit keys kept computed (:meth:`Limits.key`): a lecture hall's phones, a few each.
KEYS_KEPT = 16_384
#: A device that found a poll (or logged in) is known for this long (a long lecture).
_KNOWN_FOR_S = 12 * 3600


@dataclass(frozen=True)
class Device:
    """A browser, as its device cookie (signed by this app) says: its random id and when
    its cookie was last issued (a page load renews it)."""

    id: str
    issued_at: float


class MemoryCounts(MemoryStorage):
    """The ``limits`` library's memory storage, dropping expired entries at most once per
    :attr:`SWEEP_S` instead of 10 ms after a write: there, each write starts a new timer
    thread once the last one has ended, and a lecture hall's burst (a new device cookie
    and a found poll per phone) writes about 150 times a second. Reads never see an
    expired entry either way (the storage checks expiry as it reads); the sweep only
    frees memory."""

    SWEEP_S = 1.0

    def _MemoryStorage__schedule_expiry(self) -> None:  # the base class's private hook
        if not self.timer.is_alive():
            sweep = self._MemoryStorage__expire_events  # type: ignore[attr-defined]
            self.timer = threading.Timer(self.SWEEP_S, sweep)
            self.timer.daemon = True
            self.timer.start()


class Limits:
    """Rate limits on one storage: the ``limits`` library's memory storage (one process)
    or its Redis storage (every process). Keys go through :meth:`key`."""

    def __init__(self, storage: Storage, *, secret: bytes,
                 clock: Callable[[], float] = time.time) -> None:
        self._storage = storage
        self._limiter = MovingWindowRateLimiter(storage)
        self._memory = MemoryCounts()
        self._fallback = MovingWindowRateLimiter(self._memory)
        self._secret = secret
        self._key = functools.lru_cache(maxsize=KEYS_KEPT)(self._hashed)
        self._clock = clock
        self._warned_at = -math.inf

    @classmethod
    def open(cls, uri: str | None, *, secret: bytes) -> Limits:
        """Limits in this process's memory (``uri`` None) or in the storage at ``uri``,
        which must answer now: a storage that is down stops the start, naming it."""
        if uri is None:
            return cls(MemoryCounts(), secret=secret)
        try:
            storage = storage_from_string(uri, wrap_exceptions=True,
                                          socket_timeout=_STORAGE_TIMEOUT_S,
                                          socket_connect_timeout=_STORAGE_TIMEOUT_S)
        except Exception as exc:  # a malformed URL, a missing client library: named below
            raise ConfigError(f"the rate-limit storage {masked_url(uri)} cannot be used: "
                              f"{exc}") from exc
        if not isinstance(storage, Storage):  # an asyncio storage (async+redis://...)
            raise ConfigError(f"the rate-limit storage {masked_url(uri)} is an asyncio "
                              "storage; use redis://...")
        if not storage.check():
            raise ConfigError(f"the rate-limit storage {masked_url(uri)} does not answer; "
                              "start it, or unset LDP_CLASSROOM_RATE_LIMIT_STORAGE to count "
                              "in this process's memory (one process only)")
        return cls(storage, secret=secret)

    @property
    def shared(self) -> bool:
        """Whether every process counts in the same storage."""
        return not isinstance(self._storage, MemoryStorage)

    def key(self, *parts: str) -> str:
        """A key naming ``parts`` that the storage cannot read back (a keyed hash). Every
        phone request asks for a few, the same ones each time: they are kept (the last
        :data:`KEYS_KEPT`)."""
        return self._key(parts)

    def _hashed(self, parts: tuple[str, ...]) -> str:
        message = "\x1f".join(parts).encode("utf-8", "surrogateescape")
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()[:32]

    def _failed(self, exc: Exception) -> None:
        now = time.monotonic()
        if now - self._warned_at >= 60:
            self._warned_at = now
            _LOG.warning("rate-limit storage failed (%s); counting in this process's "
                         "memory until it answers again", type(exc).__name__)

    def _either(self, shared: S, own: S, act: Callable[[S], T]) -> T:
        """``act`` on the ``shared`` storage's object, or on this process's ``own`` when
        the storage fails."""
        try:
            return act(shared)
        except StorageError as exc:
            self._failed(exc)
            return act(own)

    def _counted(self, act: Callable[[MovingWindowRateLimiter], T]) -> T:
        return self._either(self._limiter, self._fallback, act)

    def _kept(self, act: Callable[[Storage], T]) -> T:
        return self._either(self._storage, self._memory, act)

    def hit(self, item: RateLimitItem, key: str) -> bool:
        """Count one event; False if it was over the limit (then it is not counted)."""
        return self._counted(lambda limiter: limiter.hit(item, key))

    def test(self, item: RateLimitItem, key: str) -> bool:
        """Whether one more event would be within the limit (nothing is counted)."""
        return self._counted(lambda limiter: limiter.test(item, key))

    def retry_after(self, item: RateLimitItem, key: str) -> int:
        """Whole seconds until the window has room again (at least 1)."""
        reset = self._counted(lambda limiter: limiter.get_window_stats(item, key)).reset_time
        return max(1, math.ceil(reset - time.time()))

    def used(self, item: RateLimitItem, key: str) -> int:
        """How many events the window holds now."""
        stats = self._counted(lambda limiter: limiter.get_window_stats(item, key))
        return item.amount - stats.remaining

    def mark(self, key: str, ttl_s: int) -> None:
        """Remember ``key`` for ``ttl_s`` seconds."""
        self._kept(lambda storage: storage.incr(key, ttl_s))

    def marked(self, key: str) -> bool:
        return self._kept(lambda storage: storage.get(key)) > 0

    def now(self) -> float:
        return self._clock()


@dataclass(frozen=True)
class GuessRule:
    """How many wrong guesses of one kind (``what``: join codes, instructor keys) are let
    through: ``per_device`` a minute from one device (a cookie-less request counts as
    one device per address); a network address is *under attack* once ``per_address``
    arrived within a minute from all its devices together."""

    what: str
    per_device: int
    per_address: int
    #: Under attack, a device must have made no wrong guess for this long, and have loaded
    #: a page (renewing its cookie) within this long, to be let through.
    quiet_s: int = 600
    #: Under attack, the wrong guesses a minute that all such new devices of the address
    #: may make together (None: no limit beyond one each). Without it a guesser gets one
    #: try per fresh cookie, and cookies come by the thousand a minute.
    fresh_per_address: int | None = None

    @property
    def minute(self) -> RateLimitItem:
        return RateLimitItemPerMinute(self.per_device)

    @property
    def address(self) -> RateLimitItem:
        return RateLimitItemPerMinute(self.per_address)

    @property
    def fresh(self) -> RateLimitItem:
        return RateLimitItemPerMinute(self.fresh_per_address or 1)

    @property
    def quiet(self) -> RateLimitItem:
        """Every wrong guess of a device within ``quiet_s`` (a window wide enough to hold
        them all: only its being empty matters)."""
        return RateLimitItemPerMinute(self.per_device * max(1, self.quiet_s // 60),
                                      max(1, self.quiet_s // 60))


@dataclass(frozen=True)
class Wait:
    """Why a guess is not checked now: wait ``seconds``; or, with ``reload``, load the page
    again first (its cookie is older than an attack allows)."""

    seconds: int
    reload: bool = False

    def sentence(self, *, too_many: str, wrong: str, then: str) -> str:
        """What the person reads: ``too_many`` (of this device), or the ``wrong`` guesses
        of its network; then what to do once waited or reloaded (``then``).

        >>> Wait(7).sentence(too_many="Too many keys", wrong="keys", then="try again")
        'Too many keys: wait 7 s, then try again.'
        """
        if self.reload:
            return (f"Many wrong {wrong} came from this network in the last minutes. Reload "
                    f"this page, then {then}.")
        return f"{too_many}: wait {self.seconds} s, then {then}."


class Guesses:
    """Wrong guesses of one kind, counted against the device that makes them first.

    * A device (its signed cookie; without one, its network address) that made
      ``per_device`` wrong guesses in the last minute waits, even with the right answer.
    * A network address is under attack once its devices together made ``per_address``
      wrong guesses in the last minute: far above what a lecture hall of honest phones
      sends. Then a device is let through if it has already found this target before (a
      phone already in the poll, an instructor already logged in), or if it made no wrong
      guess in the last ``quiet_s`` seconds and loaded a page within that time. So a
      guesser gets one try per fresh cookie, and fresh cookies come at a limited rate per
      address (:mod:`web.devices`); a classmate who did not guess never waits.
    * With ``fresh_per_address`` (instructor keys), those new devices share that many
      wrong guesses a minute per address, which no fresh cookie resets: a device that found
      the target before is still let through.
    """

    def __init__(self, limits: Limits, rule: GuessRule) -> None:
        self._limits = limits
        self._rule = rule

    def _who(self, device: Device | None, address: str) -> str:
        if device is None:
            return self._limits.key(self._rule.what, "address-without-cookie", address)
        return self._limits.key(self._rule.what, "device", device.id)

    def _known(self, device: Device, target: str) -> str:
        return self._limits.key(self._rule.what, "found", device.id, target)

    def refused(self, device: Device | None, address: str, target: str) -> Wait | None:
        """Why ``device`` at ``address`` may not try ``target`` now, or None if it may."""
        limits, rule = self._limits, self._rule
        who = self._who(device, address)
        if not limits.test(rule.minute, who):
            return Wait(limits.retry_after(rule.minute, who))
        network = limits.key(rule.what, "address", address)
        if limits.test(rule.address, network):
            return None  # not under attack
        if device is None:
            return Wait(limits.retry_after(rule.address, network))
        if limits.marked(self._known(device, target)):
            return None
        if limits.used(rule.quiet, who):
            return Wait(limits.retry_after(rule.quiet, who))
        if limits.now() - device.issued_at > rule.quiet_s:
            return Wait(1, reload=True)
        fresh = limits.key(rule.what, "fresh", address)
        if rule.fresh_per_address is not None and not limits.test(rule.fresh, fresh):
            return Wait(limits.retry_after(rule.fresh, fresh))
        return None

    def missed(self, device: Device | None, address: str) -> None:
        """Count one wrong guess against the device and its address (and, while the address
        is under attack, against its new devices' shared allowance)."""
        limits, rule = self._limits, self._rule
        who = self._who(device, address)
        limits.hit(rule.minute, who)
        limits.hit(rule.quiet, who)
        network = limits.key(rule.what, "address", address)
        if rule.fresh_per_address is not None and not limits.test(rule.address, network):
            limits.hit(rule.fresh, limits.key(rule.what, "fresh", address))
        limits.hit(rule.address, network)

    def found(self, device: Device | None, target: str) -> None:
        """Remember that ``device`` found ``target`` (a right code, the right key): it is
        let through even while its address is under attack."""
        if device is not None:
            self._limits.mark(self._known(device, target), _KNOWN_FOR_S)
