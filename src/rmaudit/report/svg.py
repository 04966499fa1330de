"""A figure as SVG to set inline in ``report.html``: its text kept as text (``<text>``, so it
stays sharp, searchable, and its rendered size measurable), sized by the page (the viewBox
kept, width and height dropped), without the metadata, comments and ids matplotlib writes,
and with the ids its parts refer to (clip paths, markers) made unique to the figure, so two
figures on one page never take each other's.

Text from data reaches the SVG through matplotlib, which escapes it as XML text; the page
allows no script, and inline SVG brings none.
"""

from __future__ import annotations

import html
import io
import re

import matplotlib
from matplotlib.figure import Figure

#: what an SVG text names as its font: matplotlib's (DejaVu Sans), else the reader's sans-serif
FONT_FAMILY = "font-family: 'DejaVu Sans', Verdana, sans-serif"
_FONT_FAMILY = re.compile(r"font-family: [^;\"]*")
_ID = re.compile(r' id="([^"]*)"')
_REFERENCE = re.compile(r'(url\(#|href="#)([^)"]*)')


def inline_svg(figure: Figure, name: str, prefix: str) -> str:
    """``figure`` as an ``<svg>`` element to set in a page, labelled ``name``; ``prefix``
    (unique on the page; anything but letters, digits and ``-`` made ``-``) starts every id
    it keeps."""
    prefix = re.sub(r"[^A-Za-z0-9-]+", "-", prefix)  # an id, and a URL fragment
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": prefix}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r"<metadata>.*?</metadata>|<!--.*?-->", "", text, flags=re.S)
    text = _FONT_FAMILY.sub(FONT_FAMILY, text)
    referenced = {found[1] for found in _REFERENCE.findall(text)}
    text = _ID.sub(
        lambda m: f' id="{prefix}-{m[1]}"' if m[1] in referenced else "",
        text,
    )
    text = _REFERENCE.sub(lambda m: f"{m[1]}{prefix}-{m[2]}", text)
    label = html.escape(name.removesuffix(".png"), quote=True)
    return re.sub(
        r'<svg ([^>]*?)width="[^"]*" height="[^"]*"',
        lambda m: f'<svg role="img" aria-label="{label}" {m[1]}',
        text,
        count=1,
    ).strip()
