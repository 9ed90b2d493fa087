"""The students' phone page: one self-contained document, and its Content-Security-Policy.

Assembled once at import from ``phone/assets/``: the HTML shell, its CSS and two
scripts, the randomizer (``randomizer.js``: the single source of the on-device
randomization) and the page logic (``page.js``). Everything is inline, so the
first load is one request for the document and one for the favicon; nothing
comes from another host. The CSP allows exactly these inline blocks, by hash.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

__all__ = ["CSP", "FAVICON_SVG", "PAGE_HTML"]

_ASSETS = Path(__file__).with_name("assets")


def _read(name: str) -> str:
    return (_ASSETS / name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


_STYLE = _read("page.css")
_SCRIPT = _read("randomizer.js") + "\n" + _read("page.js")

PAGE_HTML: bytes = (_read("page.html").replace("/*STYLE*/", _STYLE)
                    .replace("/*SCRIPT*/", _SCRIPT).encode("utf-8"))

#: Only this document's own inline style and script, and requests to this server.
CSP = ("default-src 'none'; "
       f"script-src {_sha256(_SCRIPT)}; style-src {_sha256(_STYLE)}; "
       "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")

FAVICON_SVG: bytes = (_ASSETS / "favicon.svg").read_bytes()
