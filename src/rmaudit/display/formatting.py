"""Small display helpers shared by metrics, the CLI, the TUI and reports (no UI toolkit)."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np

SPARK = "▁▂▃▄▅▆▇█"

#: Characters a terminal acts on instead of showing: C0/C1 controls (escape sequences, carriage
#: return, backspace, ...) but newline and tab, DEL, the bidirectional-text controls that reorder
#: what follows them, Unicode line/paragraph separators and lone surrogates (not encodable);
#: and the invisible format characters that hide in text (zero-width space, word joiner,
#: invisible operators, byte-order mark) — not the zero-width (non-)joiners that scripts
#: and emoji sequences need.
_HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u2028\u2029"
    "\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ud800-\udfff]"
)


def visible(text: str) -> str:
    """``text`` with every character a terminal would act on rather than show replaced by a
    visible ``⟨U+001B⟩``; newlines and tabs are kept.  Every string from a recipe, a data file,
    a model or the DB goes through this (and, in Rich or Textual, into a ``Text``, never markup)
    before it is shown.

    Example:
        >>> visible("a\x1b[31mb\u202ec")
        'a⟨U+001B⟩[31mb⟨U+202E⟩c'
    """
    return _HIDDEN.sub(lambda match: f"⟨U+{ord(match.group()):04X}⟩", text)


#: the most of an RM's label (or a run's title) a table cell, a legend or a heading shows
LABEL_MAX = 60


def one_line(text: str, width: int | None = None) -> str:
    """``text`` made :func:`visible`, its whitespace runs (newlines too) collapsed to one space,
    cut to ``width`` characters with an ellipsis."""
    line = " ".join(visible(text).split())
    return line if width is None or len(line) <= width else line[: max(width - 1, 0)] + "…"


def markdown_line(text: object, width: int | None = None) -> str:
    """Text from data on one line (at most ``width`` characters), with every character
    Markdown would act on escaped."""
    return re.sub(r"([\\`*_\[\]<>|#!~{}])", r"\\\1", one_line(str(text), width))


def percent(share: float) -> str:
    """A share as a percentage to 3 significant digits, one way everywhere: ``37.5%``,
    ``25%`` (never "38%" beside "37.5%").

    >>> percent(0.375), percent(0.25)
    ('37.5%', '25%')
    """
    return f"{100 * share:.3g}%"


def short_label(label: str) -> str:
    """An RM's label as tables, legends and headings show it: one line, at most
    :data:`LABEL_MAX` characters (the DB keeps it whole)."""
    return one_line(label, LABEL_MAX)


def eta_label(eta: float) -> str:
    """η as the paper writes it: ``1/4`` for 0.25, three significant digits otherwise."""
    fraction = Fraction(eta).limit_denominator(1024)
    if fraction.numerator == 1 and abs(float(fraction) - eta) < 1e-12:
        return f"1/{fraction.denominator}"
    return f"{eta:.3g}"


def format_number(value: float | None, digits: int = 4) -> str:
    """``value`` to ``digits`` decimals; "—" when it is missing or not finite (never hidden)."""
    return "—" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def format_value(
    value: float | None, stderr: float | None, separator: str = " ± ", digits: int = 4
) -> str:
    """value ± stderr to ``digits`` decimals; the value alone when its stderr is missing."""
    if value is None or not math.isfinite(value):
        return "—"
    if stderr is None or not math.isfinite(stderr):
        return format_number(value, digits)
    return f"{format_number(value, digits)}{separator}{format_number(stderr, digits)}"


def sparkline(values: np.ndarray) -> str:
    """The finite values as block characters, lowest to highest."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return ""
    low, high = finite.min(), finite.max()
    span = high - low or 1.0
    return "".join(SPARK[int(round((v - low) / span * (len(SPARK) - 1)))] for v in finite)


#: One colour per RM, by its place in the run (matplotlib's tab10): the same RM has the same
#: colour in every report figure and TUI plot.
RM_COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
#: the colour of a result across all RMs (a run-level curve), and of reference lines
NEUTRAL_COLOUR = "#404040"


def rm_colour(position: int) -> str:
    """The colour of the RM at ``position`` in the run (cycling after ten RMs)."""
    return RM_COLOURS[position % len(RM_COLOURS)]


def spread(length: int, count: int) -> list[int]:
    """``count`` indices spread evenly over ``range(length)``, first and last included (the
    points of a curve a table shows)."""
    return sorted({round(i) for i in np.linspace(0, length - 1, min(count, length))})
