"""What every benchmark script shares: the machine's CPU model and its section of
docs/benchmarks.md, rewritten in place under a lock so scripts never interleave."""

from __future__ import annotations

import fcntl
import platform
import tempfile
from pathlib import Path

__all__ = ["BENCH_DOC", "cpu_model", "machine", "update_doc"]

BENCH_DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
_LOCK = Path(tempfile.gettempdir()) / "ldp-classroom-benchmarks-md.lock"
_HEADER = "# Benchmarks\n\nEach benchmark script under `bench/` rewrites its own section below.\n"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def machine() -> str:
    """The machine a benchmark ran on: cores, CPU, architecture, Python and numpy."""
    import os

    import numpy as np

    return (f"{os.cpu_count()} cores, {cpu_model()}, {platform.machine()}, "
            f"Python {platform.python_version()}, numpy {np.__version__}")


def update_doc(name: str, section: list[str], doc: Path = BENCH_DOC) -> None:
    """Replace the lines between ``<!-- name:start -->`` and ``<!-- name:end -->``
    (appending the section if it is not there yet); other sections stay as they are."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    doc.parent.mkdir(parents=True, exist_ok=True)
    with open(_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        text = doc.read_text() if doc.exists() else _HEADER
        block = "\n".join([start, *section, end])
        if start in text and end in text and text.index(start) < text.index(end):
            head, rest = text.split(start, 1)
            _, tail = rest.split(end, 1)
            text = head + block + tail
        else:
            text = text.rstrip("\n") + "\n\n" + block + "\n"
        tmp = doc.with_name(f".{doc.name}.{name}.tmp")
        tmp.write_text(text)
        tmp.replace(doc)
