"""Strings from data as Rich ``Text``: the one way prompts, responses, labels, titles and model
output reach a Rich or Textual renderer (the TUI, and the CLI's tables).

A ``Text`` is never parsed as markup, so ``[/]``, ``[link=…]`` or ``[@click=…]`` in data is
shown as written; control characters are replaced by visible escapes first
(:func:`rmaudit.display.formatting.visible`).  Rich only, no Textual: the CLI imports this module
without the ``tui`` extra.
"""

from __future__ import annotations

from rich.text import Text

from rmaudit.display.formatting import one_line, visible


def literal(text: object, style: str = "") -> Text:
    """``text`` (any value, shown as ``str``) exactly as written, in ``style``."""
    return Text(visible(str(text)), style=style)


def literal_line(text: object, width: int | None = None, style: str = "") -> Text:
    """``text`` on one line (whitespace collapsed), at most ``width`` terminal cells (an emoji
    or a CJK character takes two), with an ellipsis where it is cut."""
    line = Text(one_line(str(text)), style=style, no_wrap=True)
    if width is not None:
        line.truncate(width, overflow="ellipsis")
    return line


def assemble(*parts: str | Text | tuple[str, str]) -> Text:
    """Our own markup-free pieces and literal data joined into one ``Text``: a ``str`` is
    made visible, a ``(str, style)`` pair is made visible and styled, a ``Text`` is kept."""
    joined = Text()
    for part in parts:
        if isinstance(part, Text):
            joined.append_text(part)
        elif isinstance(part, tuple):
            joined.append_text(literal(*part))
        else:
            joined.append_text(literal(part))
    return joined
