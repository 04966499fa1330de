"""Small display helpers shared by metrics, the CLI, the TUI and reports (no UI toolkit)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

SPARK = "▁▂▃▄▅▆▇█"


def eta_label(eta: float) -> str:
    """η as the paper writes it: ``1/4`` for 0.25, three significant digits otherwise."""
    fraction = Fraction(eta).limit_denominator(1024)
    if fraction.numerator == 1 and abs(float(fraction) - eta) < 1e-12:
        return f"1/{fraction.denominator}"
    return f"{eta:.3g}"


def format_number(value: float | None, digits: int = 4) -> str:
    """``value`` to ``digits`` decimals; "—" when it is missing or not finite (never hidden)."""
    return "—" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def format_value(value: float | None, stderr: float | None, separator: str = " ± ") -> str:
    """value ± stderr to four decimals; the value alone when its stderr is missing."""
    if value is None or not math.isfinite(value):
        return "—"
    if stderr is None or not math.isfinite(stderr):
        return format_number(value)
    return f"{format_number(value)}{separator}{format_number(stderr)}"


def sparkline(values: np.ndarray) -> str:
    """The finite values as block characters, lowest to highest."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return ""
    low, high = finite.min(), finite.max()
    span = high - low or 1.0
    return "".join(SPARK[int(round((v - low) / span * (len(SPARK) - 1)))] for v in finite)
