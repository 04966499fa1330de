"""How well RETA's ± covers what it estimates, as measured, and the notes a summary prints
where an interval is used beyond what was validated.

Measured by ``benchmarks/coverage.py --part reta-prompts`` (benchmarks/coverage_reta_prompts.md:
500 simulated data sets per size, N = 64 responses per prompt, J ~ N(5, 1), Y = J + N(0, 1)).
Value ± 1.96·stderr covers the finite-pool quantity (what RETA at this N estimates) 0.93–0.96
of the time from 20 prompts up, but only 0.90 at 10 prompts for η = 1/16.  Against Theorem 1's
large-N limit it covers less and less as prompts grow: the finite-pool value lies below the
limit by a fixed amount (0.0085 at η = 1/16, N = 64) while the ± shrinks as 1/√prompts.
"""

from __future__ import annotations

from collections.abc import Sequence

from rmaudit.metrics.reta import reta_n_range

#: the pool size the coverage against prompts was measured at
MEASURED_N = 64
#: η → prompts → coverage of value ± 1.96·stderr: (of the finite-pool quantity, of the limit)
PLUS_MINUS_COVERAGE: dict[float, dict[int, tuple[float, float]]] = {
    1 / 16: {
        10: (0.902, 0.890),
        20: (0.934, 0.906),
        50: (0.946, 0.858),
        100: (0.960, 0.796),
        400: (0.950, 0.392),
        1600: (0.952, 0.002),
    },
    0.25: {
        10: (0.936, 0.926),
        20: (0.926, 0.912),
        50: (0.954, 0.910),
        100: (0.950, 0.864),
        400: (0.956, 0.662),
        1600: (0.944, 0.112),
    },
}
#: the fewest prompts at which the ± covered the finite-pool quantity within [0.92, 0.98] at
#: every η measured
VALIDATED_PROMPTS = min(
    q
    for q in PLUS_MINUS_COVERAGE[1 / 16]
    if all(0.92 <= by_q[q][0] <= 0.98 for by_q in PLUS_MINUS_COVERAGE.values())
)
#: Below this many responses in the top η of the smallest subset (η·n_min), RETA(η) at the
#: pool size N is measurably below Theorem 1's limit (:mod:`rmaudit.metrics.reta`, "Finite N").
FINITE_POOL_TOP = 32


def _eta(eta: float) -> str:
    return "1/16" if eta == 1 / 16 else "1/4"


def few_prompts_note(prompts: int) -> str | None:
    """A warning for a summary whose ±s are over fewer prompts than they were validated at,
    or None.

    >>> few_prompts_note(20) is None
    True
    >>> few_prompts_note(10)[:40]
    '±s over 10 prompts are not validated: th'
    """
    if prompts >= VALIDATED_PROMPTS:
        return None
    worst = min(PLUS_MINUS_COVERAGE, key=lambda eta: PLUS_MINUS_COVERAGE[eta][10][0])
    return (
        f"±s over {prompts} prompts are not validated: their coverage was measured from "
        f"{VALIDATED_PROMPTS} prompts up (RETA({_eta(worst)})'s covered "
        f"{PLUS_MINUS_COVERAGE[worst][10][0]:.2f} at 10 prompts, not 0.95); read them as rough."
    )


def finite_pool_note(etas: Sequence[float], N: int) -> str | None:
    """A caveat for a summary that reports RETA at these η with pools of N responses, or None
    when every η has at least :data:`FINITE_POOL_TOP` responses in its top η n.

    >>> finite_pool_note([0.5], 256) is None
    True
    >>> finite_pool_note([0.25, 1 / 16], 64)[:48]
    'RETA(η ≤ 0.25) at N = 64 responses per prompt is'
    """
    smallest_n = int(reta_n_range(N)[0])
    small = [float(e) for e in etas if e * smallest_n < FINITE_POOL_TOP]
    if not small:
        return None
    eta = 1 / 16 if min(small) <= 1 / 16 else 0.25
    measured = PLUS_MINUS_COVERAGE[eta]
    curve = ", ".join(f"{measured[q][1]:.2f} at {q:,} prompts" for q in measured if q >= 100)
    return (
        f"RETA(η ≤ {max(small):.3g}) at N = {N} responses per prompt is the "
        f"finite-pool quantity (Eq. 5-6 over subsets of {smallest_n}+ responses), which lies "
        f"below Theorem 1's large-N limit by a fixed amount, so its ± covers the limit less "
        f"the more prompts there are (simulated at N = {MEASURED_N}, RETA({_eta(eta)})'s ± "
        f"covered it {curve}): read the ± as an interval for the finite-pool quantity only."
    )
