"""The line under the leaderboard about its paired comparison (rmaudit.results.comparison):
where every pair's difference is, with its ± and interval."""

from __future__ import annotations

from rich.console import Console

from rmaudit.display.literal import literal
from rmaudit.results.leaderboard import Leaderboard


def print_comparisons(out: Console, board: Leaderboard, db_path: str) -> None:
    """Nothing with fewer than two models or nothing compared."""
    result = board.comparison
    if result is None or result.comparison is None:
        return
    run_id = board.summary.run.id
    out.print(
        literal(
            f"each pair's difference with its ± (every compared number): rmaudit compare "
            f"{db_path} {run_id[:10]}"
        )
    )
