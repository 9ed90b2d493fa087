"""The students' phone page: one self-contained document, and its Content-Security-Policy.

Assembled once at import from ``phone/assets/``: the HTML shell, its CSS and three
scripts, the randomizer (``randomizer.js``: the single source of the on-device
randomization), the page's state machine (``flow.js``: what to show, from the poll's
state and this tab's sends; no DOM, so node tests it) and the drawing (``page.js``).
Everything is inline, the favicon too (a ``data:`` address), so the first load is one
request for the document: a browser that shows the page's own icon does not ask for
``/favicon.ico``, and a lecture hall's server is spared a request per phone. Nothing comes
from another host. The CSP allows exactly these inline blocks, by hash.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

__all__ = ["CSP", "FAVICON_DATA_URL", "FAVICON_SVG", "PAGE_HTML", "SCRIPTS"]

_ASSETS = Path(__file__).with_name("assets")


def _read(name: str) -> str:
    return (_ASSETS / name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


_STYLE = _read("page.css")
def _code(name: str) -> str:
    """A script without its whole-line ``//`` comments: they explain the source, and a
    phone need not download them (a fifth of the compressed page)."""
    return "\n".join(line for line in _read(name).splitlines()
                     if not line.lstrip().startswith("//"))


#: The scripts, in order; tests/js runs the first two in node, comments and all.
SCRIPTS = ("randomizer.js", "flow.js", "page.js")
_SCRIPT = "\n".join(_code(name) for name in SCRIPTS)

FAVICON_SVG: bytes = (_ASSETS / "favicon.svg").read_bytes()
#: The favicon as the page links it: a ``data:`` address.
FAVICON_DATA_URL = "data:image/svg+xml;base64," + base64.b64encode(FAVICON_SVG.strip()).decode()

PAGE_HTML: bytes = (_read("page.html").replace("/*STYLE*/", _STYLE)
                    .replace("/*SCRIPT*/", _SCRIPT).replace("/*FAVICON*/", FAVICON_DATA_URL)
                    .encode("utf-8"))

#: Only this document's own inline style and script, and requests to this server.
CSP = ("default-src 'none'; "
       f"script-src {_sha256(_SCRIPT)}; style-src {_sha256(_STYLE)}; "
       "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")

