"""Settings: where the data lives, which database to use, the instructor key, the limits.

The app reads them once, at start, into one :class:`Settings` (``Settings.read()``);
nothing on a request path reads the environment, secrets.toml or the data directory
again. No streamlit import: the same code runs under ``streamlit run``, in tests and
in the benchmark. Every function takes the environment and the app root as
optional arguments so tests can inject them instead of patching.

Database URL, first found wins:

1. environment variable ``LDP_CLASSROOM_DATABASE_URL``;
2. key ``database_url`` in ``<app root>/.streamlit/secrets.toml``;
3. ``sqlite:///<data_dir>/classroom.db``.

Data directory: ``LDP_CLASSROOM_DATA_DIR``, else ``<app root>/data``.
"""

from __future__ import annotations

import math
import os
import re
import secrets
import tomllib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from .domain import ConfigError

__all__ = [
    "ALLOWED_HOSTS_ENV",
    "APP_ROOT",
    "DATABASE_URL_ENV",
    "DATA_DIR_ENV",
    "FORWARDED_ALLOW_IPS_ENV",
    "FRAME_ANCESTORS_ENV",
    "KEY_ENV",
    "key_weakness",
    "MAX_PER_ADDRESS_ENV",
    "MIN_KEY_CHARS",
    "PUBLIC_URL_ENV",
    "RATE_LIMIT_STORAGE_ENV",
    "SECRETS_KEY",
    "Settings",
    "allowed_hosts",
    "data_dir",
    "database_url",
    "frame_ancestors",
    "instructor_key",
    "masked_url",
    "max_reports_per_address",
    "normalize_url",
    "public_base_url",
    "rate_limit_storage",
    "secret",
    "trusted_proxies",
]

DATABASE_URL_ENV = "LDP_CLASSROOM_DATABASE_URL"
DATA_DIR_ENV = "LDP_CLASSROOM_DATA_DIR"
SECRETS_KEY = "database_url"

#: The directory holding app.py (the parent of this package).
APP_ROOT = Path(__file__).resolve().parent.parent


def data_dir(*, environ: Mapping[str, str] | None = None, root: Path | None = None) -> Path:
    """The data directory, created if missing (0700: it holds the instructor key and the
    database's salts and tokens); ``ConfigError`` names it if unusable."""
    env = os.environ if environ is None else environ
    raw = env.get(DATA_DIR_ENV, "").strip()
    path = Path(raw).expanduser() if raw else (root or APP_ROOT) / "data"
    path = path.resolve()
    try:
        created = not path.exists()
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        if created or not raw:  # ours: the key, salts and tokens live here (0700)
            path.chmod(0o700)
        probe = path / f".write-test-{uuid.uuid4().hex}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise ConfigError(
            f"the data directory {str(path)!r} cannot be created or written "
            f"({exc.strerror or exc}); set {DATA_DIR_ENV} to a writable directory") from exc
    return path


def _secrets_url(root: Path) -> str | None:
    value = secret(SECRETS_KEY, root=root)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{SECRETS_KEY} in {root / '.streamlit' / 'secrets.toml'} must be a "
                          "non-empty string")
    return value.strip()


def database_url(*, environ: Mapping[str, str] | None = None, root: Path | None = None,
                 data: Path | None = None) -> str:
    """The database URL from the environment, secrets.toml, or the default SQLite file (in
    ``data``, the data directory already resolved, else :func:`data_dir`)."""
    env = os.environ if environ is None else environ
    root = root or APP_ROOT
    raw = env.get(DATABASE_URL_ENV, "").strip()
    source = DATABASE_URL_ENV
    if not raw:
        raw = _secrets_url(root) or ""
        source = f"{SECRETS_KEY} in {root / '.streamlit' / 'secrets.toml'}"
    if not raw:
        return f"sqlite:///{(data or data_dir(environ=env, root=root)) / 'classroom.db'}"
    return normalize_url(raw, source=source)


def normalize_url(url: str, *, source: str = DATABASE_URL_ENV) -> str:
    """Check a configured URL; read ``postgres[ql]://`` as ``postgresql+psycopg://``.

    Refuses in-memory SQLite: each Streamlit session runs in its own thread and
    would see its own, empty database.
    """
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise ConfigError(f"{source} is not a database URL: {masked_url(url)}") from exc
    backend = parsed.get_backend_name()
    if backend in ("postgres", "postgresql"):
        if parsed.drivername in ("postgres", "postgresql"):
            parsed = parsed.set(drivername="postgresql+psycopg")
        elif parsed.get_driver_name() != "psycopg":
            raise ConfigError(f"{source}: use the psycopg 3 driver, postgresql+psycopg://..., "
                              f"got {masked_url(url)}")
        return parsed.render_as_string(hide_password=False)
    if backend == "sqlite":
        db = parsed.database or ""
        memory = (db in ("", ":memory:") or db.startswith("file::memory:")
                  or parsed.query.get("mode") == "memory")
        if memory:
            raise ConfigError(
                f"{source} is an in-memory SQLite URL ({masked_url(url)}), which every "
                "Streamlit session would see as its own empty database; use a file, e.g. "
                "sqlite:////absolute/path/classroom.db")
        return url
    raise ConfigError(f"{source}: only sqlite:/// and postgresql+psycopg:// URLs are "
                      f"supported, got {masked_url(url)}")


def masked_url(url: object) -> str:
    """``url`` with its password replaced by ``***``, safe for messages and logs."""
    text = str(url)
    try:
        return make_url(text).render_as_string(hide_password=True)
    except ArgumentError:
        # Not parseable: hide anything between "://" and "@" to be safe.
        return re.sub(r"(://)[^/@]*@", r"\1***@", text)


PUBLIC_URL_ENV = "LDP_CLASSROOM_PUBLIC_URL"


def secret(name: str, *, root: Path | None = None) -> object:
    """The value of top-level key ``name`` in ``<app root>/.streamlit/secrets.toml``, or None."""
    path = (root or APP_ROOT) / ".streamlit" / "secrets.toml"
    if not path.is_file():
        return None
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh).get(name)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path} cannot be read as TOML: {exc}") from exc


def public_base_url(*, environ: Mapping[str, str] | None = None,
                    root: Path | None = None) -> str | None:
    """The address students use, when the server sits behind a proxy or on a LAN address.

    ``LDP_CLASSROOM_PUBLIC_URL``, else ``public_url`` in secrets.toml, else None
    (pages then take it from the request). Must be an http(s) URL.
    """
    env = os.environ if environ is None else environ
    raw = env.get(PUBLIC_URL_ENV, "").strip() or str(secret("public_url", root=root) or "").strip()
    if not raw:
        return None
    if not re.match(r"^https?://[^\s/]+", raw):
        raise ConfigError(f"{PUBLIC_URL_ENV} must start with http:// or https://, got {raw!r}")
    return raw.rstrip("/")


MAX_PER_ADDRESS_ENV = "LDP_CLASSROOM_MAX_REPORTS_PER_ADDRESS"


def max_reports_per_address(*, environ: Mapping[str, str] | None = None,
                            root: Path | None = None) -> int | None:
    """The optional limit of reports per network address and question round (None: off).

    Off by default: a lecture hall behind one NAT sends every phone's report from one
    address. Set ``LDP_CLASSROOM_MAX_REPORTS_PER_ADDRESS`` (or
    ``max_reports_per_address`` in secrets.toml) where each phone has its own address.
    """
    env = os.environ if environ is None else environ
    raw = env.get(MAX_PER_ADDRESS_ENV, "").strip() or str(
        secret("max_reports_per_address", root=root) or "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"{MAX_PER_ADDRESS_ENV} must be a whole number of at least 1 "
                          f"(or unset for no limit), got {raw[:20]!r}")
    return int(raw)


ALLOWED_HOSTS_ENV = "LDP_CLASSROOM_ALLOWED_HOSTS"
_LABEL = r"[a-z0-9]([a-z0-9-]*[a-z0-9])?"
#: A host name, ``*.`` before one (its subdomains), or ``*`` alone.
_HOST_PATTERN = re.compile(rf"^(\*|(\*\.)?{_LABEL}(\.{_LABEL})*)$")


def _setting(env: Mapping[str, str], name: str, key: str, root: Path | None) -> str:
    """A setting's raw text: the environment variable ``name``, else ``key`` in
    secrets.toml (a TOML list is read as its items joined by commas), else ``""``."""
    raw = env.get(name, "").strip()
    if raw:
        return raw
    value = secret(key, root=root)
    if isinstance(value, list):
        return ",".join(str(item) for item in value)
    return str(value or "").strip()


def allowed_hosts(*, environ: Mapping[str, str] | None = None,
                  root: Path | None = None) -> tuple[str, ...]:
    """Host names the app answers to besides its own (loopback, any IP address, this
    machine's names and the host of the public URL, which need no setting).

    ``LDP_CLASSROOM_ALLOWED_HOSTS`` (comma-separated), else ``allowed_hosts`` in
    secrets.toml: names such as ``class.example.org``, ``*.example.org`` for every
    subdomain, or ``*`` for any name (no check: only behind a proxy that checks).
    """
    env = os.environ if environ is None else environ
    names = tuple(dict.fromkeys(
        item.strip().lower().rstrip(".")
        for item in _setting(env, ALLOWED_HOSTS_ENV, "allowed_hosts", root).split(",")
        if item.strip()))
    bad = [name for name in names if not _HOST_PATTERN.match(name)]
    if bad:
        raise ConfigError(f"{ALLOWED_HOSTS_ENV} takes host names without a scheme or port, "
                          f"such as class.example.org or *.example.org; got {bad[0][:60]!r}")
    return names


RATE_LIMIT_STORAGE_ENV = "LDP_CLASSROOM_RATE_LIMIT_STORAGE"


def rate_limit_storage(*, environ: Mapping[str, str] | None = None,
                       root: Path | None = None) -> str | None:
    """Where the rate limits are counted: None, this process's memory (one process);
    or a storage every process shares, ``redis://host:6379`` (the ``limits`` library's
    storage URLs), from ``LDP_CLASSROOM_RATE_LIMIT_STORAGE`` or ``rate_limit_storage``
    in secrets.toml. With several processes, a memory limit gives a guesser one
    allowance per process."""
    env = os.environ if environ is None else environ
    raw = _setting(env, RATE_LIMIT_STORAGE_ENV, "rate_limit_storage", root)
    if not raw or raw == "memory://":
        return None
    if not re.match(r"^(redis|rediss|redis\+unix|redis\+sentinel|redis\+cluster)://", raw):
        raise ConfigError(f"{RATE_LIMIT_STORAGE_ENV} must be a Redis URL such as "
                          f"redis://127.0.0.1:6379 (or memory:// for this process alone), "
                          f"got {masked_url(raw)}")
    return raw


FRAME_ANCESTORS_ENV = "LDP_CLASSROOM_FRAME_ANCESTORS"


def frame_ancestors(*, environ: Mapping[str, str] | None = None,
                    root: Path | None = None) -> str:
    """Who may show the app's pages in a frame: ``'none'`` (nobody, the default), or
    ``'self'`` (pages of the app's own origin: Streamlit Community Cloud shows the app in
    a frame of its own origin), from ``LDP_CLASSROOM_FRAME_ANCESTORS`` or
    ``frame_ancestors`` in secrets.toml. Another site never may: a page that frames the
    dashboard can make the instructor click its buttons."""
    env = os.environ if environ is None else environ
    raw = _setting(env, FRAME_ANCESTORS_ENV, "frame_ancestors", root).strip("'\" ").lower()
    if raw in ("", "none"):
        return "'none'"
    if raw == "self":
        return "'self'"
    raise ConfigError(f"{FRAME_ANCESTORS_ENV} must be none (the default) or self, got "
                      f"{raw[:40]!r}")


FORWARDED_ALLOW_IPS_ENV = "FORWARDED_ALLOW_IPS"
#: uvicorn's own default: a proxy on this machine.
_LOCAL_PROXIES = "127.0.0.1,::1"


def trusted_proxies(*, environ: Mapping[str, str] | None = None) -> str:
    """The proxies whose ``X-Forwarded-For`` is believed: uvicorn's own setting,
    ``FORWARDED_ALLOW_IPS`` (addresses and networks, comma-separated; ``*`` for any),
    with uvicorn's default, ``127.0.0.1,::1``."""
    env = os.environ if environ is None else environ
    return env.get(FORWARDED_ALLOW_IPS_ENV, _LOCAL_PROXIES)


KEY_ENV = "LDP_CLASSROOM_INSTRUCTOR_KEY"
#: A configured key shorter than this stops the start: it could be guessed.
MIN_KEY_CHARS = 16


def instructor_key(*, environ: Mapping[str, str] | None = None, root: Path | None = None,
                   data: Path | None = None) -> tuple[str, str]:
    """The instructor key and where it comes from, in words for the start-up message.

    ``LDP_CLASSROOM_INSTRUCTOR_KEY``, else ``instructor_key`` in secrets.toml, else a
    random key generated on first use and kept in ``<data dir>/instructor_key`` (0600).
    ``data``: the data directory already resolved (else :func:`data_dir`).
    """
    env = os.environ if environ is None else environ
    key, source = env.get(KEY_ENV, "").strip(), KEY_ENV
    if key:
        where = f"the value of {KEY_ENV}"
    else:
        source = where = "instructor_key in .streamlit/secrets.toml"
        key = str(secret("instructor_key", root=root) or "").strip()
    if key:
        if len(key) < MIN_KEY_CHARS:
            raise ConfigError(
                f"the instructor key set in {source} has {len(key)} characters; use at "
                f"least {MIN_KEY_CHARS}, for example the output of "
                "python -c \"import secrets; print(secrets.token_urlsafe(18))\"")
        return key, where
    path = (data or data_dir(environ=env, root=root)) / "instructor_key"
    return _key_from_file(path), str(path)


#: Words a person picks for a key; a key made mostly of them is weak.
_COMMON_WORDS = ("password", "passwort", "instructor", "secret", "changeme", "admin",
                 "letmein", "qwerty", "azerty", "welcome", "classroom", "teacher", "privacy",
                 "lecture", "student", "cs208", "12345", "abcde")


def key_weakness(key: str) -> str | None:
    """Why an instructor key that is long enough may still be guessed, in words; None for
    a key that looks random. Rough, on purpose: a key typed by a person (few different
    characters, a repeated piece, common words, digits only) is named, and the start-up
    message says so; a generated key (``secrets.token_urlsafe``) is never.

    >>> key_weakness("passwordpassword"), key_weakness("k3Jx9-Qw2LmZ7tRv_a8N") is None
    ('it repeats "password"', True)
    """
    distinct = len(set(key))
    for size in range(1, len(key) // 2 + 1):
        if len(key) % size == 0 and key[:size] * (len(key) // size) == key:
            return f'it repeats "{key[:size]}"'
    if distinct < 8:
        return f"it uses only {distinct} different characters"
    lowered = key.lower()
    steps = sum(abs(ord(b) - ord(a)) <= 1 for a, b in zip(lowered, lowered[1:], strict=False))
    if steps * 2 >= len(key):
        return "it is mostly runs of neighbouring characters (abcd, 1234)"
    common = sum(len(w) * lowered.count(w) for w in _COMMON_WORDS)
    if common * 2 >= len(key):
        return "it is made mostly of common words"
    classes = [any(c.islower() for c in key), any(c.isupper() for c in key),
               any(c.isdigit() for c in key), any(not c.isalnum() for c in key)]
    alphabet = sum(n for n, seen in zip((26, 26, 10, 32), classes, strict=True) if seen)
    bits = len(key) * math.log2(max(2, min(alphabet, distinct * 2)))
    if bits < 64:
        return f"about {bits:.0f} bits of guessing at best, below 64"
    return None


def _key_from_file(path: Path) -> str:
    try:
        if path.stat().st_mode & 0o077:  # left readable by an older version
            path.chmod(0o600)
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        pass
    key = secrets.token_urlsafe(18)
    # O_EXCL: when two processes start at once, the first writer wins.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(f"the instructor key cannot be written to {str(path)!r} "
                          f"({exc.strerror or exc}); set {KEY_ENV} instead") from exc
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(key + "\n")
    return key


@dataclass(frozen=True)
class Settings:
    """Every setting of one process, read once at start by :meth:`read`.

    A malformed setting raises :class:`ConfigError` there, naming it, so the server
    refuses to start instead of failing on the first request.
    """

    data_dir: Path
    database_url: str
    #: Never shown: not in the repr, and the banner says where it comes from instead.
    instructor_key: str = field(repr=False)
    #: Where the key comes from, in words for the start-up message.
    key_source: str
    #: The address students use (``LDP_CLASSROOM_PUBLIC_URL``), or None: from the request.
    public_url: str | None = None
    #: Reports one network address may send per question round (None: no limit).
    max_reports_per_address: int | None = None
    #: Host names the app answers to besides its own (``LDP_CLASSROOM_ALLOWED_HOSTS``).
    allowed_hosts: tuple[str, ...] = ()
    #: Where rate limits are counted: None for this process's memory, else a Redis URL.
    #: Never shown: it may hold a password.
    rate_limit_storage: str | None = field(default=None, repr=False)
    #: The proxies whose X-Forwarded-For is believed (uvicorn's ``FORWARDED_ALLOW_IPS``).
    trusted_proxies: str = _LOCAL_PROXIES
    #: Who may frame the app's pages: ``'none'``, or ``'self'`` (Community Cloud).
    frame_ancestors: str = "'none'"

    @classmethod
    def read(cls, *, environ: Mapping[str, str] | None = None,
             root: Path | None = None) -> Settings:
        """Read every setting (and create the data directory and the key file if needed)."""
        data = data_dir(environ=environ, root=root)
        key, source = instructor_key(environ=environ, root=root, data=data)
        return cls(data_dir=data,
                   database_url=database_url(environ=environ, root=root, data=data),
                   instructor_key=key, key_source=source,
                   public_url=public_base_url(environ=environ, root=root),
                   max_reports_per_address=max_reports_per_address(environ=environ, root=root),
                   allowed_hosts=allowed_hosts(environ=environ, root=root),
                   rate_limit_storage=rate_limit_storage(environ=environ, root=root),
                   trusted_proxies=trusted_proxies(environ=environ),
                   frame_ancestors=frame_ancestors(environ=environ, root=root))
