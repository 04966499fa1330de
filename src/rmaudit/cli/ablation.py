"""``rmaudit ablation normalizer DB``: the RETA paper's Sec. 4.3 normalizer ablation from a
stored run (:mod:`rmaudit.results.ablation`)."""

from __future__ import annotations

import csv
import math
from contextlib import closing

import click
from rich.table import Table

from rmaudit.backends.simulated import SIMULATED_NOTICE
from rmaudit.display.formatting import eta_label, short_label
from rmaudit.display.literal import literal
from rmaudit.results.run_index import open_for_reading

from .console import console
from .options import db_argument


def _number(value: float, digits: int = 3) -> str:
    return "—" if not math.isfinite(value) else f"{value:.{digits}f}"


@click.group("ablation")
def ablation() -> None:
    """Ablations of the audit's estimators, computed from stored runs."""


@ablation.command("normalizer")
@db_argument(optional=False)
@click.option("--run", "run_id", help="Run id or prefix (default: the latest run).")
@click.option(
    "--eta", type=float, default=None, help="Quantile η (default: the run's RETA η, else 0.25)."
)
@click.option("--rm", "rms", multiple=True, help="Only this RM (recipe label); repeatable.")
@click.option(
    "--csv",
    "csv_path",
    type=click.Path(dir_okay=False),
    help="Also write per prompt: perplexity and each RM's RETA on and off (Fig. 4).",
)
def normalizer(
    db_path: str, run_id: str | None, eta: float | None, rms: tuple[str, ...], csv_path: str | None
) -> None:
    """Per-prompt RETA with and without normalization vs prompt perplexity (RETA Sec. 4.3).

    The prompt perplexity is the mean over the prompt's responses of their perplexity under
    the policy (stored by hf-causal-lm).  Normalization should remove most of the
    correlation of per-prompt RETA with it.
    """
    from rmaudit.results.ablation import CORRELATIONS, normalizer_ablation

    with closing(open_for_reading(db_path)) as store:
        result = normalizer_ablation(store, run_id, eta=eta, reward_models=rms or None)
    tag = "  [bold yellow]SIMULATED[/]" if result.simulated else ""
    table = Table(
        title=f"RETA({eta_label(result.eta)}) per prompt vs prompt perplexity, "
        f"normalize on / off{tag}",
        title_justify="left",
        caption=f"run {result.run_id[:12]}, {len(result.prompt_ids)} prompts; "
        f"prompt perplexity mean {_number(float(result.perplexity.mean()), 2)} "
        f"(min {_number(float(result.perplexity.min()), 2)}, "
        f"max {_number(float(result.perplexity.max()), 2)}); p: two-sided",
        caption_justify="left",
    )
    for name in ("RM", "normalize", "RETA (mean)"):
        table.add_column(
            name,
            style="bold" if name == "RM" else None,
            justify="left" if name != "RETA (mean)" else "right",
        )
    for label in CORRELATIONS.values():
        table.add_column(f"{label} with PPL", justify="right")
        table.add_column("p", justify="right")
    for rm in result.reward_models:
        for flag in (True, False):
            cells = [
                literal(short_label(rm.label)) if flag else "",
                "on" if flag else "off",
                _number(float(rm.per_prompt(flag).mean())),
            ]
            for name in CORRELATIONS:
                value = rm.correlations[(flag, name)]
                cells += [_number(value.statistic), _number(value.p_value, 3)]
            table.add_row(*cells)
    out = console()
    out.print(table)
    if result.simulated:
        out.print(SIMULATED_NOTICE)
    if csv_path:
        with open(csv_path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(
                [
                    "prompt_id",
                    "prompt_perplexity",
                    *[
                        f"{rm.label} RETA {kind}"
                        for rm in result.reward_models
                        for kind in ("normalized", "unnormalized")
                    ],
                ]
            )
            for q, pid in enumerate(result.prompt_ids):
                writer.writerow(
                    [
                        pid,
                        repr(float(result.perplexity[q])),
                        *[
                            repr(float(rm.per_prompt(flag)[q]))
                            for rm in result.reward_models
                            for flag in (True, False)
                        ],
                    ]
                )
        out.print(f"per-prompt values written to {csv_path}")
