"""Showing user-written text (question text, option labels, poll titles) as text.

Streamlit never renders raw HTML from ``st.markdown`` unless asked to, but it
does render Markdown: a question like ``**Vote** [here](http://evil)`` would
turn bold and into a link. ``plain`` escapes every Markdown metacharacter so
that the text reads exactly as it was typed.
"""

from __future__ import annotations

import re

__all__ = ["html_text", "plain"]

_MARKDOWN = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:=&])")


def plain(text: object) -> str:
    r"""Escape Markdown so ``st.markdown`` shows ``text`` literally.

    >>> plain("**bold** <b>x</b> [a](b)")
    '\\*\\*bold\\*\\* \\<b\\>x\\</b\\> \\[a\\]\\(b\\)'
    """
    return _MARKDOWN.sub(r"\\\1", str(text)).replace("\n", "  \n")


#: HTML specials and Markdown metacharacters, as numeric character references.
_AS_TEXT = {ord(c): f"&#{ord(c)};" for c in "&<>\"'\\`*_{}[]()#+-.!|~$:="}


def html_text(text: object) -> str:
    r"""``text`` for the inside of an HTML element drawn with ``unsafe_allow_html``.

    HTML specials and every Markdown metacharacter become character references and
    line breaks become ``<br>``, so no blank line can end the HTML block and let the
    rest be read as Markdown.

    >>> html_text("**A**\n\n<img src=y>")
    '&#42;&#42;A&#42;&#42;<br><br>&#60;img src&#61;y&#62;'
    """
    return re.sub(r"\r\n|\r|\n", "<br>", str(text).translate(_AS_TEXT))
