"""Showing user-written text (question text, option labels, poll titles) as text.

Streamlit never renders raw HTML from ``st.markdown`` unless asked to, but it
does render Markdown: a question like ``**Vote** [here](http://evil)`` would
turn bold and into a link. ``plain`` escapes every Markdown metacharacter so
that the text reads exactly as it was typed.
"""

from __future__ import annotations

import re

__all__ = ["plain"]

_MARKDOWN = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:])")


def plain(text: object) -> str:
    r"""Escape Markdown so ``st.markdown`` shows ``text`` literally.

    >>> plain("**bold** <b>x</b> [a](b)")
    '\\*\\*bold\\*\\* \\<b\\>x\\</b\\> \\[a\\]\\(b\\)'
    """
    return _MARKDOWN.sub(r"\\\1", str(text)).replace("\n", "  \n")
