"""What ``benchmarks/coverage.py`` measured of the regret study's intervals and estimates
(benchmarks/coverage.md, "Regret correlation"; 300 simulated data sets of recipes/regret.toml's
world per size, design ``held-out-responses``, golds below reliability 0.8 left out), so that
every stored cell can say whether its interval was validated.

A correlation of estimated values is attenuated by their noise, and a rank statistic also by
near-ties between proxies (ordered at random), so point estimates are biased towards 0 at
few prompts, by more than the bootstrap can see.  ``tests/test_regret_coverage.py`` checks
these numbers against benchmarks/coverage.md.
"""

from __future__ import annotations

#: the sizes measured: prompts × responses per prompt
SIZES = ((30, 8), (120, 16))
#: the design the coverage was measured under
MEASURED_STUDY_DESIGN = "held-out-responses"
#: nominal 95% intervals whose measured coverage lies outside this range are approximate
TARGET = (0.92, 0.98)

#: (gold: "oracle" or "each" (N×N), error metric, correlation statistic) → the measured
#: coverage of its 95% interval at each of :data:`SIZES`
COVERAGE: dict[tuple[str, str, str], tuple[float, float]] = {
    ("oracle", "pearson", "kendall"): (0.8, 0.763),
    ("oracle", "pearson", "pearson"): (0.98, 0.973),
    ("oracle", "pearson", "spearman"): (0.917, 0.847),
    ("oracle", "pearson", "mrr"): (0.633, 0.917),
    ("oracle", "spearman", "kendall"): (0.83, 0.763),
    ("oracle", "spearman", "pearson"): (0.98, 0.967),
    ("oracle", "spearman", "spearman"): (0.933, 0.767),
    ("oracle", "spearman", "mrr"): (0.617, 0.917),
    ("oracle", "kendall", "kendall"): (0.807, 0.803),
    ("oracle", "kendall", "pearson"): (0.983, 0.963),
    ("oracle", "kendall", "spearman"): (0.927, 0.777),
    ("oracle", "kendall", "mrr"): (0.62, 0.917),
    ("oracle", "accuracy", "kendall"): (0.79, 0.8),
    ("oracle", "accuracy", "pearson"): (0.983, 0.963),
    ("oracle", "accuracy", "spearman"): (0.927, 0.777),
    ("oracle", "accuracy", "mrr"): (0.607, 0.917),
    ("oracle", "bo5", "kendall"): (0.65, 0.75),
    ("oracle", "bo5", "pearson"): (0.957, 1.0),
    ("oracle", "bo5", "spearman"): (0.897, 0.797),
    ("oracle", "bo5", "mrr"): (0.547, 0.81),
    ("oracle", "ece", "kendall"): (0.787, 0.79),
    ("oracle", "ece", "pearson"): (0.957, 0.933),
    ("oracle", "ece", "spearman"): (0.787, 0.863),
    ("oracle", "ece", "mrr"): (0.883, 0.717),
    ("oracle", "mrr", "kendall"): (0.647, 0.753),
    ("oracle", "mrr", "pearson"): (0.97, 0.983),
    ("oracle", "mrr", "spearman"): (0.9, 0.823),
    ("oracle", "mrr", "mrr"): (0.53, 0.8),
    ("oracle", "ndcg", "kendall"): (0.727, 0.787),
    ("oracle", "ndcg", "pearson"): (0.973, 0.993),
    ("oracle", "ndcg", "spearman"): (0.907, 0.887),
    ("oracle", "ndcg", "mrr"): (0.563, 0.907),
    ("oracle", "xi", "kendall"): (0.78, 0.74),
    ("oracle", "xi", "pearson"): (0.967, 0.947),
    ("oracle", "xi", "spearman"): (0.923, 0.797),
    ("oracle", "xi", "mrr"): (0.6, 0.923),
    ("oracle", "accuracy_pair", "kendall"): (0.753, 0.863),
    ("oracle", "accuracy_pair", "pearson"): (0.92, 0.967),
    ("oracle", "accuracy_pair", "spearman"): (0.887, 0.933),
    ("oracle", "accuracy_pair", "mrr"): (0.553, 0.697),
    ("each", "pearson", "kendall"): (0.64, 0.707),
    ("each", "pearson", "pearson"): (0.98, 0.99),
    ("each", "pearson", "spearman"): (0.893, 0.86),
    ("each", "pearson", "mrr"): (0.63, 0.64),
    ("each", "spearman", "kendall"): (0.767, 0.81),
    ("each", "spearman", "pearson"): (0.963, 0.967),
    ("each", "spearman", "spearman"): (0.92, 0.883),
    ("each", "spearman", "mrr"): (0.58, 0.643),
    ("each", "kendall", "kendall"): (0.757, 0.797),
    ("each", "kendall", "pearson"): (0.963, 0.973),
    ("each", "kendall", "spearman"): (0.91, 0.85),
    ("each", "kendall", "mrr"): (0.593, 0.65),
    ("each", "accuracy", "kendall"): (0.75, 0.8),
    ("each", "accuracy", "pearson"): (0.963, 0.973),
    ("each", "accuracy", "spearman"): (0.917, 0.853),
    ("each", "accuracy", "mrr"): (0.61, 0.657),
    ("each", "bo5", "kendall"): (0.57, 0.567),
    ("each", "bo5", "pearson"): (0.923, 0.983),
    ("each", "bo5", "spearman"): (0.853, 0.817),
    ("each", "bo5", "mrr"): (0.573, 0.557),
    ("each", "ece", "kendall"): (0.827, 0.787),
    ("each", "ece", "pearson"): (0.957, 0.957),
    ("each", "ece", "spearman"): (0.883, 0.85),
    ("each", "ece", "mrr"): (0.753, 0.743),
    ("each", "mrr", "kendall"): (0.54, 0.633),
    ("each", "mrr", "pearson"): (0.933, 0.987),
    ("each", "mrr", "spearman"): (0.877, 0.87),
    ("each", "mrr", "mrr"): (0.623, 0.54),
    ("each", "ndcg", "kendall"): (0.577, 0.77),
    ("each", "ndcg", "pearson"): (0.957, 0.99),
    ("each", "ndcg", "spearman"): (0.897, 0.873),
    ("each", "ndcg", "mrr"): (0.57, 0.63),
    ("each", "xi", "kendall"): (0.6, 0.677),
    ("each", "xi", "pearson"): (0.857, 0.93),
    ("each", "xi", "spearman"): (0.807, 0.827),
    ("each", "xi", "mrr"): (0.61, 0.62),
    ("each", "accuracy_pair", "kendall"): (0.557, 0.687),
    ("each", "accuracy_pair", "pearson"): (0.877, 0.933),
    ("each", "accuracy_pair", "spearman"): (0.84, 0.88),
    ("each", "accuracy_pair", "mrr"): (0.553, 0.51),
}

#: correlation statistic → (lowest, highest) mean error (estimate − truth) over the error
#: metrics and golds, at each of :data:`SIZES`
MEAN_ERROR: dict[str, tuple[tuple[float, float], tuple[float, float]]] = {
    "kendall": ((-0.2987, -0.0183), (-0.1557, -0.0133)),
    "pearson": ((-0.2194, -0.0446), (-0.09, -0.0048)),
    "spearman": ((-0.2137, 0.0497), (-0.0982, -0.0057)),
    "mrr": ((-0.3695, 0.012), (-0.2207, -0.0111)),
}


def _size(index: int) -> str:
    prompts, responses = SIZES[index]
    return f"{prompts} prompts × {responses}"


def interval_caveat(gold: str, metric: str, statistic: str, design: str, prompts: int) -> str:
    """Why a cell's interval is approximate ("" where its measured coverage is on target):
    measured off [0.92, 0.98] at a size, or never validated (fewer prompts than measured,
    another design, a plugin's error metric)."""
    measured = COVERAGE.get((gold, metric, statistic))
    if measured is None or design != MEASURED_STUDY_DESIGN:
        return "interval not validated: its coverage was not measured for this study"
    if prompts < SIZES[0][0]:
        return (
            f"interval not validated at {prompts} prompts: its coverage was measured at "
            f"{_size(0)} and {_size(1)}"
        )
    off = [
        f"{coverage:.3f} at {_size(i)}"
        for i, coverage in enumerate(measured)
        if not TARGET[0] <= coverage <= TARGET[1]
    ]
    return f"interval's measured coverage {', '.join(off)}" if off else ""


def bias_note(statistics: dict[str, str]) -> str:
    """One line on how far the point estimates of ``statistics`` (key → label) sit from the
    truth in simulation."""
    parts = [
        f"{label} "
        + ", ".join(
            f"{low:+.2f} to {high:+.2f} at {_size(i)}"
            for i, (low, high) in enumerate(MEAN_ERROR[key])
        )
        for key, label in statistics.items()
        if key in MEAN_ERROR
    ]
    return (
        "Point estimates are biased, mostly low, at few prompts, more than their intervals show "
        "(mean estimate − truth in simulation: " + "; ".join(parts) + "; benchmarks/coverage.md)"
    )
