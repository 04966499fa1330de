"""The Regressional Goodhart normal model ("Rethinking Reward Model Evaluation", arXiv 2410.05584,
Sec. 5,
App. 8.4): accuracy, degree of overoptimization and best-of-n NDR in closed form."""

from __future__ import annotations

import numpy as np

from rmaudit.errors import MetricInputError


def _check_sigmas(sigma_r, sigma) -> tuple[np.ndarray, np.ndarray]:
    values = []
    for name, value in (("sigma_r", sigma_r), ("sigma", sigma)):
        array = np.asarray(value, dtype=float) if not isinstance(value, bool) else None
        if array is None or not np.all(np.isfinite(array)):
            raise MetricInputError(
                f"expected finite standard deviations, got {value!r}", field=name
            )
        values.append(array)
    if np.any(values[0] <= 0):
        raise MetricInputError(f"expected sigma_r > 0, got {sigma_r!r}", field="sigma_r")
    if np.any(values[1] < 0):
        raise MetricInputError(f"expected sigma >= 0, got {sigma!r}", field="sigma")
    return values[0], values[1]


def _scalar_or_array(value: np.ndarray) -> float | np.ndarray:
    return float(value) if value.ndim == 0 else value


def goodhart_accuracy(sigma_r: float | np.ndarray, sigma: float | np.ndarray) -> float | np.ndarray:
    """Pairwise accuracy under the Regressional Goodhart normal model, in closed form.

    Model (Sec. 5, App. 8.4): gold r* ~ N(0, σ_r²) i.i.d. over responses and proxy
    r = r* + z, z ~ N(0, σ²) independent.  For a random pair, D* = r*_1 − r*_2 ~ N(0, 2σ_r²)
    and D = D* + (z_1 − z_2) are jointly normal with correlation
    ρ = 2σ_r² / sqrt(2σ_r² · 2(σ_r² + σ²)) = σ_r / sqrt(σ_r² + σ²), and by Sheppard's formula
    P(D and D* have the same sign) = 1/2 + arcsin(ρ)/π:

        accuracy = 1/2 + arcsin(σ_r / sqrt(σ_r² + σ²)) / π.

    This is the paper's Eq. 18 integral, ``1 − ∫_0^∞ (σ_r√π)^-1 e^{−x²/4σ_r²} Φ(−x/(√2 σ)) dx``,
    which the seed evaluated numerically.  Arrays broadcast.

    >>> goodhart_accuracy(1.0, 0.0), round(goodhart_accuracy(1.0, 1.0), 6)   # 1/2 + 1/4
    (1.0, 0.75)
    """
    s_r, s = _check_sigmas(sigma_r, sigma)
    return _scalar_or_array(0.5 + np.arcsin(s_r / np.sqrt(s_r**2 + s**2)) / np.pi)


def goodhart_overoptimization(
    sigma_r: float | np.ndarray, sigma: float | np.ndarray
) -> float | np.ndarray:
    """The seed's expected degree of overoptimization, ``d_π = σ_r² / (σ_r² + σ²)`` (Eq. 6, 20).

    From Eq. 19 (Gao et al.): E[r* | r = c] = c · σ_r² / (σ_r² + σ²), the fraction of a proxy
    gain that is real.  With :func:`goodhart_accuracy` it gives the paper's Fig. 8(a) curve in
    closed form: d_π = sin²(π (accuracy − 1/2)) (:func:`goodhart_from_accuracy`).

    >>> goodhart_overoptimization(1.0, 1.0)
    0.5
    """
    s_r, s = _check_sigmas(sigma_r, sigma)
    return _scalar_or_array(s_r**2 / (s_r**2 + s**2))


def goodhart_ndr(sigma_r: float | np.ndarray, sigma: float | np.ndarray) -> float | np.ndarray:
    """Expected best-of-n NDR under the same normal model: σ_r / sqrt(σ_r² + σ²), for every n.

    The proxy's best-of-n pick has E[r] = e_n sqrt(σ_r² + σ²) (e_n the mean of the largest of
    n standard normals), so by Eq. 19 E[r*] = e_n σ_r² / sqrt(σ_r² + σ²); the gold's own pick
    has E[r*] = e_n σ_r and π0 has 0.  The ratio is σ_r / sqrt(σ_r² + σ²) = sqrt(d_π): under
    Regressional Goodhart alone the NDR does not depend on n (no overoptimization peak).

    >>> round(goodhart_ndr(3.0, 4.0), 6)
    0.6
    """
    s_r, s = _check_sigmas(sigma_r, sigma)
    return _scalar_or_array(s_r / np.sqrt(s_r**2 + s**2))


def goodhart_from_accuracy(accuracy: float | np.ndarray) -> dict[str, float | np.ndarray]:
    """What the normal model predicts for an RM of a given pairwise accuracy (Rethinking RM
    Evaluation, Fig. 8a).

    Inverting :func:`goodhart_accuracy`: ρ = sin(π (accuracy − 1/2)), so the expected NDR is
    ρ and the degree of overoptimization d_π = ρ².  Overlay observed (accuracy, NDR) points
    of real RMs on this curve to see which deviate from pure Regressional Goodhart (Fig. 8b).

    >>> {k: round(float(v), 6) for k, v in goodhart_from_accuracy(0.75).items()}
    {'ndr': 0.707107, 'overoptimization': 0.5}
    """
    values = np.asarray(accuracy, dtype=float)
    if not np.all((values >= 0.5) & (values <= 1.0)):
        raise MetricInputError(
            f"expected accuracies in [0.5, 1] (the model's range), got {accuracy!r}",
            field="accuracy",
        )
    rho = np.sin(np.pi * (values - 0.5))
    return {"ndr": _scalar_or_array(rho), "overoptimization": _scalar_or_array(rho**2)}
