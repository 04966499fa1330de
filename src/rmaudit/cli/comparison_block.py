"""The lines under the leaderboard about its paired comparisons (rmaudit.results.comparison):
where every pair's difference is, with its ± and interval; and for a run of process reward
models, each PRM's step aggregations compared."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from rmaudit.display.literal import literal
from rmaudit.results.comparison_text import standing_line
from rmaudit.results.leaderboard import Leaderboard
from rmaudit.results.step_aggregation import aggregation_comparisons
from rmaudit.store import Store


def print_comparisons(out: Console, store: Store, board: Leaderboard, db_path: str) -> None:
    """Nothing with fewer than two models or nothing compared; a run of process reward
    models adds each PRM's step aggregations compared (which tells correct answers best)."""
    run_id = board.summary.run.id
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
        if any("undefined" in result.note for result in aggregations):
            out.print(literal("  an undefined AUROC is left out; why: --details"))
    board_comparison = board.comparison
    if board_comparison is None or board_comparison.comparison is None:
        return
    out.print(
        literal(
            f"every two models' difference with its ± (every compared number): rmaudit compare "
            f"{db_path} {run_id[:10]}"
        )
    )
