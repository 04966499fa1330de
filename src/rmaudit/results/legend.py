"""What the numbers of a run summary mean, in a few lines: printed below ``rmaudit run`` and
``rmaudit runs RUN`` and written into ``report.md`` (plain text, no UI toolkit).

One line per kind of result the run stored (built-in metrics only: a plugin's metric explains
itself through its label), then what ± means and, in a terminal, where to look next.
"""

from __future__ import annotations

import math

from rmaudit.components.vocabulary import (
    RETA_PREFIX,
    SHIFT_CURVE_PREFIX,
    STEP_AUROC,
    ResultKey,
    in_oracle_units,
    is_rb2_key,
)
from rmaudit.display.formatting import eta_label, format_number, short_label
from rmaudit.results.summary import Column, OracleScale, RunSummary

#: (predicate on a column's key, its explanation), in the order the legend lists them
#: the pair metrics whose ± and interval come from a bootstrap over prompts
BOOTSTRAPPED = ("ece", "bt_ece", "ood_auroc", "ood_fpr95")


_PAIR_LINES = (
    (
        lambda key: ResultKey.read(key).name == "accuracy",
        "accuracy: share of the preference pairs where the RM scores the chosen response above "
        "the rejected one, a tie counting 0 unless ties = 'half' (½ = chance; 'acc SUBSET' per "
        "subset).",
    ),
    (
        lambda key: key.startswith("rm_bench_"),
        "RM-Bench easy / normal / hard: accuracy when the chosen response's style is richer than, "
        "equal to, or plainer than the rejected one's (hard: the RM must see past style); their "
        "± is across prompts, each prompt's 9 style pairs one unit.",
    ),
    (
        lambda key: key.startswith("section"),
        "section score: RewardBench's leaderboard score, subsets weighted into its sections "
        "(Chat, Chat Hard, Safety, Reasoning).",
    ),
    (
        is_rb2_key,
        "RewardBench 2: a subset's score is the mean over its rows of 1/k where the correct "
        "completion holds the top score with k completions sharing it, else 0 (¼ = chance); "
        "Ties: its formula of accuracies and margins over ref and tied questions; RB2 score: "
        "the mean of the subsets' (docs/audit.md). Their ±: the standard error across rows; "
        "Ties': a bootstrap's over its questions; the RB2 score's: √(Σ subset ±²) / subsets.",
    ),
    (
        lambda key: key == "ece",
        "ECE: expected calibration error of the RM's confidence in its own pick — the max "
        "softmax of the two scores, σ(|score margin|) — against whether its pick is the chosen "
        "response, over equal-width confidence bins; 0 = calibrated, lower is better.",
    ),
    (
        lambda key: key == "bt_ece",
        "BT-ECE: the same confidence σ(|score margin|) (the Bradley-Terry probability of the "
        "RM's pick) against whether the pick is right, over score-margin bins (quantile bins by "
        "default); lower is better.",
    ),
    (
        lambda key: key.startswith("ood_"),
        "AUROC / FPR@95: how well the detector the column names — energy: the negated energy "
        "log(e^L₀ + e^L₁) of the pair's two scores; msp: the max softmax — tells the unshifted "
        "pairs from their copies shifted at the column's p (AUROC ½ = not at all; FPR@95: the "
        "share of shifted pairs taken for unshifted where 95% of the unshifted are kept).",
    ),
    (
        lambda key: key.startswith("position_bias"),
        "judge (each pair shown in both orders): judge acc, a judge's headline, averages its "
        "credit (1 chosen, ½ tie, 0 rejected) over the two orders; position bias (signed): "
        "share of decisive verdicts for the answer shown first − ½, + prefers the first; "
        "consistency: share of pairs whose verdict survives the swap; reward-bench: one "
        "seeded random order per pair (docs/judges.md).",
    ),
)


#: the step metrics' lines (docs/prm.md)
_STEP_LINES = (
    (
        lambda key: key.startswith(("prm_score", "negative_f1")),
        "PRMScore (PRMBench): ½·F1 on valid steps + ½·F1 on erroneous steps, a step predicted "
        "valid when scored above the threshold; F1 alone for multi_solutions, whose steps are "
        "all valid; per error class and over every step.",
    ),
    (
        lambda key: key == "average_f1" or key.startswith("error_accuracy"),
        "avg F1 (ProcessBench): per split, the harmonic mean of the accuracy at naming the "
        "first wrong step (the first step scored below the threshold) of erroneous solutions "
        "and at flagging no step of correct ones; averaged over the splits.",
    ),
    (
        lambda key: ResultKey.read(key).name == STEP_AUROC,
        "AUROC min / last / product / mean: how well the solution score under each "
        "aggregation of step scores tells solutions with a correct final answer from the "
        "rest (½ = not at all).",
    ),
)


def worst_rm(summary: RunSummary) -> tuple[str, Column] | None:
    """The RM label with the worst value of the run's headline (the first RETA scalar, else
    each model's headline: a judge's own), and the number that heads the run; baselines are
    bars, not candidates."""
    reta = next((c for c in summary.columns if c.key.startswith(RETA_PREFIX)), None)
    column = reta or summary.first_column
    if column is None:
        return None
    values = [
        (cell.value, label)
        for label, rm_key in summary.reward_models
        if rm_key not in summary.baselines
        and (own := reta or summary.headline(rm_key)) is not None
        and (cell := summary.cells.get((rm_key, own.metric, own.key))) is not None
        and math.isfinite(cell.value)
    ]
    if not values:
        return None
    value, label = (min if column.higher_is_better else max)(values)
    return label, column


def legend(
    summary: RunSummary,
    scale: OracleScale | None,
    db_path: str | None = None,
    *,
    terminal: bool = True,
    brief: bool = False,
) -> list[str]:
    """The legend's lines for ``summary`` (``scale``: its benchmark's oracle scores, if any).
    ``terminal=False`` (a report file) leaves out what only the terminal shows: the sparkline
    and the next command to run; ``brief`` (rmaudit audit without --details, which says the
    next command after its verdicts) keeps only what ± and ≈ mean, in one line."""
    keys = [c.key for c in summary.columns]
    if brief:
        approximate = "; ≈: approximate (which, and how far: --details)" if summary.notes else ""
        return [line.removesuffix(".") + approximate for line in _plus_minus(summary, keys)]
    lines = []
    reta = next((c for c in summary.columns if c.key.startswith(RETA_PREFIX)), None)
    etas = summary.reta_etas()
    if reta is not None or etas is not None:
        lines.append(
            "RETA(η): mean oracle score of the RM's top η share of a prompt's responses "
            "÷ the mean of all of them; 1 = a random RM, > 1 better"
            + (f" ({reta.header}: its top {_share(reta)})" if reta is not None else "")
            + (
                f". The RETA curve runs from η = {summary.reta_start()} to {eta_label(etas[1])}"
                if etas is not None
                else ""
            )
            + (
                " (its sparkline, where the width allows, goes ▁ lowest to █ highest on each "
                "RM's own scale)"
                if terminal and etas is not None
                else ""
            )
            + "."
        )
    if any(in_oracle_units(key) for key in keys):
        lines.append(
            "BoN@n: oracle score of the RM's favourite among n random responses "
            "(2nd-BoN@n: of its second favourite); " + _scale_words(scale) + "."
        )
    if "pairwise_accuracy" in keys:
        lines.append(
            "pairwise acc: share of the response pairs the oracle orders that the RM "
            "orders the same way, an RM tie counting ½ unless ties = 'loss' (½ = chance)."
        )
    lines += [text for matches, text in _PAIR_LINES if any(matches(key) for key in keys)]
    lines += [text for matches, text in _STEP_LINES if any(matches(key) for key in keys)]
    if any(key.startswith(SHIFT_CURVE_PREFIX) for _, key in summary.curve_keys()):
        lines.append(
            "Under shift: p is the perturber's level (word perturbers: the chance each "
            "word is changed; rewriters: the chance a text is rewritten); p = 0 is the "
            "unshifted pairs."
        )
    lines += _plus_minus(summary, keys)
    lines += summary.notes  # what an interval or an estimate at this size does not cover
    if terminal:
        lines += next_steps(summary, db_path or "DB")
    return lines


def _plus_minus(summary: RunSummary, keys: list[str]) -> list[str]:
    """What ± means in this run (no line where every number is RewardBench 2's, which says
    its own)."""
    pairs = "pairs, clustered by prompt" if summary.clustered_pairs else "pairs"
    unit = "prompts" if summary.run.benchmark_id else pairs
    if summary.pairs and summary.run.benchmark_id:
        unit = f"prompts ({pairs}, for the pair metrics)"
    bootstrapped = any(key in BOOTSTRAPPED for key in keys) or any(
        key.startswith(SHIFT_CURVE_PREFIX) for _, key in summary.curve_keys()
    )
    if summary.solutions:
        unit = "questions, a question's solutions one cluster (linearised; value ± 1.96·± is 95%)"
    if keys and all(is_rb2_key(key) for key in keys):
        return []
    return [
        f"±: standard error across {unit}"
        + (
            "; ECE, BT-ECE, AUROC and FPR@95 (also under shift): the bootstrap's over prompts, "
            "its 95% interval for the value expected on as many pairs (a binned ECE's lies "
            "above the population calibration error)."
            if bootstrapped
            else "."
        )
    ]


def _share(column: Column) -> str:
    """'quarter' for RETA(1/4), else 'η = …'."""
    eta = float(column.key.removeprefix(RETA_PREFIX))
    names = {0.5: "half", 0.25: "quarter", 0.125: "eighth"}
    return names.get(eta, f"{eta_label(eta)} of them")


def _scale_words(scale: OracleScale | None) -> str:
    if scale is None:
        return "in oracle-score units"
    declared = (
        f"on its {scale.declared[0]:g}–{scale.declared[1]:g} scale, " if scale.declared else ""
    )
    return (
        f"in oracle-score units ({scale.oracle}, {declared}scores "
        f"{format_number(scale.low, 2)}–{format_number(scale.high, 2)} on this benchmark; "
        f"a random pick scores {format_number(scale.mean, 2)})"
    )


def next_steps(summary: RunSummary, db_path: str) -> list[str]:
    """Where to look next: the TUI on the worst model, and what enter on it opens."""
    if not summary.columns:
        return []
    if summary.solutions:
        where = "opens its solutions, worst first, each step with its score"
    elif summary.run.benchmark_id:
        where = "opens its Failures: the prompts where its top picks do worst" + (
            "; p: the preference pairs it gets wrong" if summary.pairs else ""
        )
    else:
        where = "opens its pair failures: the pairs it gets wrong, worst margin first"
    model, one = ("PRM", "a PRM") if summary.solutions else ("RM", "a reward model")
    worst = worst_rm(summary)
    if worst is None:  # only baselines: no model of the user's to send them to
        return [f"Next: rmaudit tui {db_path} — enter on {one} {where}."]
    label, column = worst
    return [
        f"Next: rmaudit tui {db_path} — the worst {model} by {column.header} is "
        f"{short_label(label)}; enter on it {where}."
    ]
