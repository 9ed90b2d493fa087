"""Settings: where the data lives and which database to use.

No streamlit import: the same code runs under ``streamlit run``, in tests and
in the benchmark. Every function takes the environment and the app root as
optional arguments so tests can inject them instead of patching.

Database URL, first found wins:

1. environment variable ``LDP_CLASSROOM_DATABASE_URL``;
2. key ``database_url`` in ``<app root>/.streamlit/secrets.toml``;
3. ``sqlite:///<data_dir>/classroom.db``.

Data directory: ``LDP_CLASSROOM_DATA_DIR``, else ``<app root>/data``.
"""

from __future__ import annotations

import os
import re
import tomllib
import uuid
from collections.abc import Mapping
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from .domain import ConfigError

__all__ = [
    "APP_ROOT",
    "DATABASE_URL_ENV",
    "DATA_DIR_ENV",
    "MAX_PER_ADDRESS_ENV",
    "SECRETS_KEY",
    "data_dir",
    "database_url",
    "masked_url",
    "max_reports_per_address",
    "normalize_url",
    "public_base_url",
    "secret",
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


def database_url(*, environ: Mapping[str, str] | None = None, root: Path | None = None) -> str:
    """The database URL from the environment, secrets.toml, or the default SQLite file."""
    env = os.environ if environ is None else environ
    root = root or APP_ROOT
    raw = env.get(DATABASE_URL_ENV, "").strip()
    source = DATABASE_URL_ENV
    if not raw:
        raw = _secrets_url(root) or ""
        source = f"{SECRETS_KEY} in {root / '.streamlit' / 'secrets.toml'}"
    if not raw:
        return f"sqlite:///{data_dir(environ=env, root=root) / 'classroom.db'}"
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
