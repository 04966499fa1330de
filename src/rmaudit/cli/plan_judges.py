"""``rmaudit plan``'s table of the LLM judges' calls: per judge under audit, the calls still to
make for the recipe against the DB, the replies they ask for, their tokens and USD, and a
plain line for each judge without a price (docs/judges.md, "Cost")."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from rmaudit.display.literal import literal
from rmaudit.run.costs import JudgeCalls


def judge_table(judges: Sequence[JudgeCalls], db_path: str) -> Table:
    table = Table(
        title=f"the LLM judges' calls still to make for the recipe as it stands (db: {db_path}; "
        "tokens at ≈ 4 characters a token)",
        title_justify="left",
    )
    for header in ("judge", "what", "calls", "replies", "prompt tokens", "completion tokens"):
        table.add_column(header, justify="left" if header in ("judge", "what") else "right")
    table.add_column("USD", justify="right")
    for found in judges:
        table.add_row(
            literal(found.label),
            "pairs, both orders" if found.stage.startswith("verdicts") else "ratings",
            f"{found.pending:,}" + (f" + {found.ready} ready call" if found.ready else ""),
            f"{found.calls * found.samples:,}",
            f"{found.estimate.prompt_tokens:,.0f}",
            f"{found.estimate.completion_tokens:,.0f}",
            "no price" if found.usd is None else f"{found.usd:,.2f}",
        )
    return table


def judge_notes(judges: Sequence[JudgeCalls]) -> list[str]:
    lines = [
        "a judge call shows one pair in one order (each pair twice) or one response, and asks "
        "for its samples' replies at once; the ready call checks the judge answers a "
        "verdict before the first (answered from the request cache when this judge was "
        "checked before); a stored verdict or rating is never paid again."
    ]
    for found in judges:
        if found.usd is None:
            lines.append(
                f"no price for the judge {found.label!r}, so no USD: give --judge-price "
                "PROMPT,COMPLETION (USD per 1M tokens) or price = { prompt = …, completion = … "
                "} in its [[reward_models]] entry."
            )
    return lines
