"""ui.text: instructor-written text is shown as text, in Markdown and inside HTML."""

from __future__ import annotations

import re

import pytest

from ui.text import html_text, plain

HOSTILE = [
    "![img](http://img.invalid/x.png)",
    "[link](http://a.invalid)",
    "<img src=http://img.invalid/y onerror=alert(1)>",
    "<script>alert(1)</script>",
    "**bold** _it_ `code`",
    "Title\n=====",
    "line one\n\n# heading after a blank line",
    "&lt;img src=x&gt;",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_plain_escapes_every_markdown_construct(text):
    from markdown_it import MarkdownIt

    rendered = MarkdownIt("commonmark").render(plain(text))
    assert "<img" not in rendered and "<a " not in rendered and "<script" not in rendered
    assert "<strong>" not in rendered and "<em>" not in rendered and "<code>" not in rendered
    assert "<h1>" not in rendered


@pytest.mark.parametrize("text", HOSTILE)
def test_html_text_stays_inside_its_element(text):
    from markdown_it import MarkdownIt

    source = f"<div class='q'>{html_text(text)}</div>"
    assert "\n" not in source  # no blank line can end the HTML block
    rendered = MarkdownIt("commonmark", {"html": True}).render(source)
    assert rendered.count("<div") == 1 and rendered.strip().endswith("</div>")
    assert not re.search(r"<(img|a|script|strong|em|h1)\b", rendered)


def test_html_text_reads_back_as_the_same_characters():
    import html

    text = "A & B <c> \"d\" 'e' *f* [g](h)\nnext"
    assert html.unescape(html_text(text).replace("<br>", "\n")) == text
