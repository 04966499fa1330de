"""``rmaudit audit MODEL...``: one command from a reward model to its reliability report.

Each suite (:mod:`rmaudit.suites`) becomes a recipe with the MODELs and the baselines as its
reward models, run by the same runner as ``rmaudit run`` into one DB; a rerun reuses every
stored score.  ``--print-recipe`` shows each suite's recipe as TOML, to keep and edit.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rmaudit.backends.openai_api.options import MOST_TIMEOUT_S
from rmaudit.errors import BadInput
from rmaudit.suites import JUDGEBENCH_PAIRS, RESULTS_SUFFIX, SUITES, Suite, get_suite

if TYPE_CHECKING:
    from rmaudit.components.scoring_checks import CheckSettings
    from rmaudit.suites.data import Located
    from rmaudit.suites.served_arguments import ServedFlags

from .audit_run import AuditOutput, AuditRequest, AuditStop, ModelFlags, run_audit
from .check_options import scoring_check_options
from .console import console
from .model_flags import hf_model_flags
from .options import Choice, FiniteFloat, db_option, grouped
from .served_flags import served_flags

#: audits keep their own store, so the runs of ``rmaudit run`` and of audits do not mix
AUDIT_DB = "rmaudit-audit.db"


@click.command()
@click.argument("models", nargs=-1, metavar="MODEL...")
@click.option(
    "--suite",
    "suite_names",
    multiple=True,
    type=Choice(list(SUITES)),
    help="Run this suite (repeatable; default: every suite whose data is found).",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False),
    help="Local data mirror (the layout of rmaudit's shared data folder).",
)
@db_option(
    "SQLite file that stores everything (apart from rmaudit run's rmaudit.db).", default=AUDIT_DB
)
@grouped(
    "output",
    AuditOutput.of_flags,
    click.option("--json", "as_json", is_flag=True, help="Print the results as JSON on stdout."),
    click.option(
        "--report",
        "report_dir",
        type=click.Path(file_okay=False),
        help="Write each suite's plots and report.md into DIR/SUITE/, DIR/report.md, and "
        "DIR/report.html (every suite on one self-contained page to share), and "
        f"the results JSON (the DB's name ending in {RESULTS_SUFFIX}) there instead of beside "
        "the DB.",
    ),
    click.option(
        "--results",
        "results_file",
        type=click.Path(dir_okay=False),
        help="Write the results JSON here (default: the DB's name ending in "
        f"{RESULTS_SUFFIX}, beside the DB or in --report DIR).",
    ),
    click.option(
        "--details",
        is_flag=True,
        help="Print everything: every model's row, the tables per subset, every other number, "
        "the publisher's figures, the closing table, each model's verdict and each note in "
        "full, and the whole legend (default: the leaderboard's best rows, the verdicts in "
        "brief and the next step; docs/audit.md says where each part goes).",
    ),
)
@click.option(
    "--sample",
    type=click.IntRange(min=0),
    help="Pairs drawn from each data file (0: all; default: the suite's).",
)
@grouped(
    "stop",
    AuditStop.of_flags,
    click.option(
        "--list-suites",
        is_flag=True,
        help="List the suites, one line each, and stop; with --suite NAME, that suite's "
        "details: what it measures, its size, its data and where it is found.",
    ),
    click.option(
        "--dry-run", is_flag=True, help="Print each suite's plan (stored, to do) and stop."
    ),
    click.option(
        "--write-items",
        "items_path",
        type=click.Path(dir_okay=False),
        help="Write the texts a model must score for the suites (prompt, response, response_id; "
        "shifted copies included) to FILE (.jsonl or .csv, optionally .gz), score nothing, and "
        "stop: score them elsewhere, then audit scores:FILE.  For prmbench and processbench: "
        "one JSON row per solution (question, steps), to come back with step_scores added as "
        "step-scores:FILE.",
    ),
    click.option("--print-recipe", is_flag=True, help="Print each suite's recipe (TOML) and stop."),
)
@click.option(
    "--recorded-judges",
    "recorded",
    is_flag=True,
    help="Also audit every judge whose published outputs lie with the suite's data (llmbar, "
    "llmbar-processed, judgebench): one model per judge configuration.",
)
@click.option(
    "--judgebench-pairs",
    type=Choice(list(JUDGEBENCH_PAIRS)),
    default="gpt-4o",
    show_default=True,
    help="Whose responses the judgebench suite's pairs are.",
)
@grouped(
    "model_flags",
    ModelFlags,
    click.option(
        "--match",
        type=Choice(["text", "id", "rmaudit-id"]),
        default="text",
        show_default=True,
        help="What the rows of a scores:FILE are keyed by: prompt + "
        "response text, your response ids, or rmaudit's response ids.",
    ),
    click.option(
        "--columns",
        metavar="NAME=COLUMN,...",
        help="The columns of a scores:FILE, where they are not named prompt, response, score "
        "and response_id: e.g. prompt=instruction,response=output,score=reward (NAME: prompt, "
        "response, score, id).",
    ),
    click.option(
        "--dpo-ref",
        metavar="REF",
        help="Score MODEL as a DPO policy by its implicit reward against REF (dpo-implicit).",
    ),
    click.option("--base-url", help="The OpenAI-compatible endpoint of a judge:MODEL."),
    click.option(
        "--judge-template",
        metavar="FILE_OR_NAME",
        help="A judge:MODEL's template: a file, rmaudit-pair, rmaudit-rating, or an MT-bench "
        "prompt (pair-v2, single-v1) from DATA_DIR/mt_bench/judge_prompts.jsonl.",
    ),
    click.option(
        "--api-key-env",
        help="Environment variable with a judge:MODEL's key (OPENAI_API_KEY), or a served "
        "MODEL's (default: none).",
    ),
    click.option(
        "--judge-price",
        metavar="PROMPT,COMPLETION",
        help="A judge:MODEL's USD per 1M prompt and completion tokens (for costs).",
    ),
    click.option(
        "--request-timeout",
        type=FiniteFloat(min=0, min_open=True, max=MOST_TIMEOUT_S),
        metavar="SECONDS",
        help="How long each request of a judge:MODEL or a served MODEL waits for its reply "
        "(default 60). Its first, the ready call, is not tried again: a URL where nothing "
        "answers stops the audit then; the others are tried up to 7 times (max_retries in the "
        "recipe).",
    ),
)
@served_flags
@hf_model_flags
@scoring_check_options
def audit(
    models: tuple[str, ...],
    suite_names: tuple[str, ...],
    data_dir: str | None,
    db_path: str,
    sample: int | None,
    recorded: bool,
    judgebench_pairs: str,
    output: AuditOutput,
    stop: AuditStop,
    model_flags: ModelFlags,
    served: ServedFlags,
    checks: CheckSettings,
    hf_options: dict[str, Any],
) -> None:
    """Audit reward models on the built-in suites, beside the length and random baselines.

    MODEL is a Hugging Face id or local folder (a sequence classifier; with --dpo-ref, a DPO
    policy), a server's URL with --rm-protocol (a served reward model, docs/real-models.md),
    scores:FILE, rb2-scores:FILE (a model's published RewardBench 2 scores), or a baseline:
    length, random.  Several MODELs are compared side by side.  The model flags are
    the recipe options of the same names (docs/audit.md).  --recorded-judges adds the judges
    whose published outputs lie with the data (docs/judges.md).  With --suite prmbench or
    processbench, MODEL is a process reward model: a Hugging Face token classifier
    (step-tag:MODEL: a causal LM read at step tags), step-scores:FILE, or a baseline: random,
    step-length (docs/prm.md).
    """
    if data_dir is not None and not Path(data_dir).is_dir():
        raise BadInput("no such folder", field="--data-dir", value=data_dir)
    if stop.list_suites:
        from rmaudit.suites.data import earlier_data_dirs, locate

        from .suite_list import print_suite_list

        names = [get_suite(name).name for name in dict.fromkeys(suite_names)]
        earlier = [] if data_dir else earlier_data_dirs(db_path)
        print_suite_list(console(), names, data_dir, locate, earlier, db_path)
        return
    stop.check_models(models, recorded)
    found, skipped = _located_suites(
        suite_names, data_dir, JUDGEBENCH_PAIRS[judgebench_pairs], recorded, db_path
    )
    of_prms = found[0][0].solutions is not None
    tables = model_flags.tables(
        list(models), hf_options, data_dir, sample, of_prms=of_prms, served=served
    )
    run_audit(
        AuditRequest(
            found=tuple(found),
            skipped=tuple(skipped),
            tables=tables,
            db_path=db_path,
            sample=sample,
            output=output,
            stop=stop,
            checks=checks,
            recorded=recorded,
            named=bool(suite_names),
        )
    )


def _located_suites(
    suite_names: tuple[str, ...],
    data_dir: str | None,
    judgebench: Suite,
    recorded: bool,
    db_path: str,
) -> tuple[list[tuple[Suite, Located]], list[Suite]]:
    """The suites asked for (by default every suite of reward models, or with ``recorded``
    those with recorded judges; ``judgebench`` on the pairs chosen) whose data was found, and
    those skipped; every suite's data is found before anything runs: a missing one is exit 2,
    nothing written.  Suites of process reward models run only when named, and not with
    suites of reward models (a MODEL is one or the other)."""
    from rmaudit.suites.data import locate, missing, nothing_found

    chosen = [get_suite(name) for name in dict.fromkeys(suite_names)] or [
        suite
        for suite in SUITES.values()
        if suite.solutions is None and (suite.recorded or not recorded)
    ]
    chosen = [judgebench if suite.name == judgebench.name else suite for suite in chosen]
    if len({suite.solutions is None for suite in chosen}) > 1:
        raise BadInput(
            "prmbench and processbench audit process reward models, the other suites reward "
            "models: run them in separate audits",
            field="--suite",
            value=", ".join(suite.name for suite in chosen),
        )
    found, skipped = [], []
    for suite in chosen:
        located = locate(suite, data_dir, download=bool(suite_names))
        if located is None and suite_names:
            raise missing(suite, data_dir)
        (found.append((suite, located)) if located else skipped.append(suite))
    if not found:
        raise nothing_found(data_dir, db_path)
    return found, skipped
