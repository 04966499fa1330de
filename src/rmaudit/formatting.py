"""Small display helpers shared by metrics, the CLI and reports."""

from fractions import Fraction


def eta_label(eta: float) -> str:
    """η as the paper writes it: ``1/4`` for 0.25, three significant digits otherwise."""
    fraction = Fraction(eta).limit_denominator(1024)
    if fraction.numerator == 1 and abs(float(fraction) - eta) < 1e-12:
        return f"1/{fraction.denominator}"
    return f"{eta:.3g}"
