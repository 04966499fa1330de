"""The summary's compact block of paired comparisons (rmaudit.results.comparison): each
compared number's significance groups and rank intervals, after the leaderboard."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from rmaudit.display.literal import literal
from rmaudit.results.comparison import headline_comparisons, standing_line
from rmaudit.results.step_aggregation import aggregation_comparisons
from rmaudit.store import Store


def print_comparisons(out: Console, store: Store, run_id: str, db_path: str, items: str) -> None:
    """Nothing with fewer than two models or nothing comparable; a run of process reward
    models adds each PRM's step aggregations compared (which tells correct answers best).
    ``items``: what the models were compared on (a PRM's: solutions)."""
    aggregations = aggregation_comparisons(store, run_id)
    if aggregations:
        out.print(
            Text(
                "step aggregations compared, per PRM (same questions; a shared letter: not "
                "separable, Holm-adjusted at 95%; #: simultaneous rank interval)",
                style="bold",
            )
        )
        for result in aggregations:
            out.print(literal(f"  {standing_line(result)}"))
    results = headline_comparisons(store, run_id)
    if not results:
        return
    first = results[0]
    alpha = first.comparison.alpha if first.comparison else 0.05
    out.print(
        Text(
            f"paired comparisons (same {items}; a shared letter: not separable, Holm-adjusted "
            f"at {1 - alpha:.0%}; #: simultaneous rank interval)",
            style="bold",
        )
    )
    for result in results:
        out.print(literal(f"  {standing_line(result)}"))
    out.print(literal(f"  differences with their ±: rmaudit compare {db_path} {run_id[:10]}"))
