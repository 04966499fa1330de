"""``rmaudit audit MODEL...``: one command from a reward model to its reliability report.

Each suite (:mod:`rmaudit.suites`) becomes a recipe with the MODELs and the baselines as its
reward models, run by the same runner as ``rmaudit run`` into one DB; a rerun reuses every
stored score.  ``--print-recipe`` shows each suite's recipe as TOML, to keep and edit.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rmaudit.errors import BadInput
from rmaudit.suites import RESULTS_FILE, SUITES, Suite, get_suite

if TYPE_CHECKING:
    from rmaudit.components import Component
    from rmaudit.components.scoring_checks import CheckSettings
    from rmaudit.recipe import Recipe
    from rmaudit.store import Store
    from rmaudit.suites.data import Located
    from rmaudit.suites.verdict import SuiteResult

from .check_options import scoring_check_options
from .console import console
from .options import db_option

#: audits keep their own store, so the runs of ``rmaudit run`` and of audits do not mix
AUDIT_DB = "rmaudit-audit.db"


@click.command()
@click.argument("models", nargs=-1, metavar="MODEL...")
@click.option(
    "--suite",
    "suite_names",
    multiple=True,
    type=click.Choice(list(SUITES)),
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
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON on stdout.")
@click.option(
    "--report",
    "report_dir",
    type=click.Path(file_okay=False),
    help="Write each suite's plots and report.md into DIR/SUITE/, DIR/report.md, and "
    "DIR/report.html (every suite on one self-contained page to share), and "
    f"{RESULTS_FILE} there instead of beside the DB.",
)
@click.option(
    "--results",
    "results_file",
    type=click.Path(dir_okay=False),
    help=f"Write the results JSON here (default: {RESULTS_FILE} beside the DB, or in "
    "--report DIR).",
)
@click.option(
    "--sample",
    type=click.IntRange(min=0),
    help="Pairs drawn from each data file (0: all; default: the suite's).",
)
@click.option(
    "--list-suites", is_flag=True, help="List the suites, their data and sizes, and stop."
)
@click.option("--dry-run", is_flag=True, help="Print each suite's plan (stored, to do) and stop.")
@click.option(
    "--write-items",
    "items_path",
    type=click.Path(dir_okay=False),
    help="Write the texts a model must score for the suites (prompt, response, response_id; "
    "shifted copies included) to FILE (.jsonl or .csv, optionally .gz), score nothing, and "
    "stop: score them elsewhere, then audit scores:FILE.",
)
@click.option("--print-recipe", is_flag=True, help="Print each suite's recipe (TOML) and stop.")
@click.option(
    "--match",
    type=click.Choice(["text", "id", "rmaudit-id"]),
    default="text",
    show_default=True,
    help="What the rows of a scores:FILE are keyed by: prompt + "
    "response text, your response ids, or rmaudit's response ids.",
)
@click.option(
    "--columns",
    metavar="NAME=COLUMN,...",
    help="The columns of a scores:FILE, where they are not named prompt, response, score and "
    "response_id: e.g. prompt=instruction,response=output,score=reward (NAME: prompt, "
    "response, score, id).",
)
@click.option(
    "--dpo-ref",
    metavar="REF",
    help="Score MODEL as a DPO policy by its implicit reward against REF (dpo-implicit).",
)
@click.option("--revision", help="Hub branch, tag or commit of the models.")
@click.option("--dtype", type=click.Choice(["auto", "float32", "float16", "bfloat16"]))
@click.option("--max-length", type=click.IntRange(min=2), help="Tokens per input.")
@click.option(
    "--fallback-chat-template",
    metavar="TEMPLATE",
    help="Jinja chat template for a tokenizer that has none.",
)
@click.option("--device", help="cpu, cuda, cuda:1, mps (default: cuda, else mps, else cpu).")
@click.option("--batch-size", type=click.IntRange(min=1), help="Most sequences per forward pass.")
@click.option(
    "--max-batch-tokens", type=click.IntRange(min=1), help="Most tokens per forward pass."
)
@click.option("--trust-remote-code", is_flag=True, help="Run the checkpoint's own Python code.")
@click.option("--base-url", help="The OpenAI-compatible endpoint of a judge:MODEL.")
@click.option(
    "--judge-template",
    metavar="FILE_OR_NAME",
    help="A judge:MODEL's template: a file, rmaudit-pair, rmaudit-rating, or an MT-bench "
    "prompt (pair-v2, single-v1) from DATA_DIR/mt_bench/judge_prompts.jsonl.",
)
@click.option(
    "--api-key-env", help="Environment variable with a judge:MODEL's key (OPENAI_API_KEY)."
)
@click.option(
    "--judge-price",
    metavar="PROMPT,COMPLETION",
    help="A judge:MODEL's USD per 1M prompt and completion tokens (for costs).",
)
@scoring_check_options
def audit(
    models: tuple[str, ...],
    suite_names: tuple[str, ...],
    data_dir: str | None,
    db_path: str,
    as_json: bool,
    report_dir: str | None,
    sample: int | None,
    list_suites: bool,
    dry_run: bool,
    items_path: str | None,
    print_recipe: bool,
    match: str,
    columns: str | None,
    dpo_ref: str | None,
    results_file: str | None,
    checks: CheckSettings,
    **model_options: Any,
) -> None:
    """Audit reward models on the built-in suites, beside the length and random baselines.

    MODEL is a Hugging Face id or local folder (a sequence classifier; with --dpo-ref, a DPO
    policy), scores:FILE, rb2-scores:FILE (a model's published RewardBench 2 scores), or a
    baseline: length, random.  Several MODELs are compared side by side.  The model flags are
    the recipe options of the same names (docs/audit.md).
    """
    from rmaudit.suites.data import earlier_data_dirs, locate
    from rmaudit.suites.judge_arguments import JudgeFlags
    from rmaudit.suites.model_arguments import HF_MODEL_OPTIONS, model_tables, parse_columns

    out = console()
    if list_suites:
        from .audit_output import suites_table

        earlier = [] if data_dir else earlier_data_dirs(db_path)
        out.print(suites_table(data_dir, locate, earlier, db_path))
        return
    if items_path:
        from rmaudit.suites.items_file import items_format

        if models:
            raise click.UsageError("--write-items scores no MODEL: give none")
        items_format(Path(items_path))
    elif not models:
        raise click.UsageError("give at least one MODEL (or --list-suites, --write-items)")
    found, skipped = _located_suites(suite_names, data_dir)
    tables = model_tables(
        list(models),
        {k: model_options[k] for k in HF_MODEL_OPTIONS},
        dpo_ref,
        match=match,
        columns=parse_columns(columns),
        judge=JudgeFlags(
            model_options["base_url"],
            model_options["judge_template"],
            model_options["api_key_env"],
            model_options["judge_price"],
            data_dir,
        ),
    )
    _audit(
        AuditRequest(
            found=tuple(found),
            skipped=tuple(skipped),
            tables=tables,
            db_path=db_path,
            as_json=as_json,
            report_dir=Path(report_dir) if report_dir else None,
            sample=sample,
            dry_run=dry_run,
            print_recipe=print_recipe,
            items_path=Path(items_path) if items_path else None,
            results_file=Path(results_file) if results_file else None,
            checks=checks,
        )
    )


def _located_suites(
    suite_names: tuple[str, ...], data_dir: str | None
) -> tuple[list[tuple[Suite, Located]], list[Suite]]:
    """The suites asked for (all, by default) whose data was found, and those skipped; every
    suite's data is found before anything runs: a missing one is exit 2, nothing written."""
    from rmaudit.suites.data import locate, missing

    chosen = [get_suite(name) for name in dict.fromkeys(suite_names)] or list(SUITES.values())
    found, skipped = [], []
    for suite in chosen:
        located = locate(suite, data_dir, download=bool(suite_names))
        if located is None and suite_names:
            raise missing(suite, data_dir)
        (found.append((suite, located)) if located else skipped.append(suite))
    if not found:
        raise BadInput(f"no suite's data was found; {missing(chosen[0], data_dir).problem}")
    return found, skipped


@dataclass(frozen=True)
class AuditRequest:
    """What ``rmaudit audit`` was asked to do, once its arguments are checked."""

    found: tuple[tuple[Suite, Located], ...]  # the suites to run, each with its data
    skipped: tuple[Suite, ...]  # the suites whose data was not found
    tables: list[dict[str, Any]]  # the MODELs and the baselines as recipe tables
    db_path: str
    as_json: bool
    report_dir: Path | None
    sample: int | None  # pairs drawn from each file (0: all; None: the suite's)
    dry_run: bool
    print_recipe: bool
    items_path: Path | None  # --write-items FILE
    results_file: Path | None  # --results FILE (default: beside the DB, or in --report DIR)
    checks: CheckSettings  # --strict, --no-preflight, --show-input, --preflight-sample


@dataclass(frozen=True)
class PlannedSuite:
    """A suite ready to run: its data, its recipe tables and the validated recipe."""

    suite: Suite
    located: Located
    table: dict[str, Any]
    recipe: Recipe


def _audit(request: AuditRequest) -> None:
    from rmaudit.run import build_components
    from rmaudit.suites.model_arguments import check_reachable

    planned = _planned(request)
    if request.print_recipe:
        from rmaudit.suites.build import recipe_text

        for entry in planned:
            click.echo(recipe_text(entry.suite, entry.table))
        return
    # every model loads (bad options, a missing checkpoint) before the DB is touched
    built = [(entry, build_components(entry.recipe)) for entry in planned]
    if request.dry_run:
        _print_plans(built, request.db_path)
        return
    if request.items_path is not None:
        _write_items(built, request.db_path, request.items_path)
        return
    check_reachable(request.tables)
    _run_suites(request, built)


def _planned(request: AuditRequest) -> list[PlannedSuite]:
    """Each found suite's recipe; a line on stderr for each suite skipped."""
    from rmaudit.display.literal import literal
    from rmaudit.suites.build import suite_recipe, suite_table

    planned = []
    for suite, located in request.found:
        sample = suite.sample if request.sample is None else (request.sample or None)
        table = suite_table(suite, located, request.tables, sample=sample)
        planned.append(PlannedSuite(suite, located, table, suite_recipe(suite, table)))
    err = console(stderr=True)
    for suite in request.skipped:
        err.print(
            literal(
                f"skipped suite {suite.name}: no data found "
                f"(rmaudit audit --list-suites says where it comes from)"
            )
        )
    return planned


def _print_plans(built: list[tuple[PlannedSuite, dict[str, Component]]], db_path: str) -> None:
    """--dry-run: each suite's plan (stored, to do) on the DB opened read-only."""
    from rmaudit.run import Runner
    from rmaudit.run.costs import estimate_costs
    from rmaudit.store import Store

    from .render import cost_table, plan_table

    for entry, components in built:
        runner = Runner(entry.recipe, Store.open_readonly(db_path), components=components)
        counts = runner.plan()
        console().print(
            plan_table(
                counts,
                f"plan for suite {entry.suite.name} (data: {entry.located.where}; "
                f"db: {db_path}); nothing was run",
            )
        )
        costs = estimate_costs(entry.recipe, components, counts, runner.pending_texts())
        if costs:  # a judge's calls
            console().print(cost_table(costs))


def _run_suites(
    request: AuditRequest, built: list[tuple[PlannedSuite, dict[str, Component]]]
) -> None:
    """Run every suite into one DB, then write and print the results, verdicts and reports."""
    from rmaudit.display.literal import literal
    from rmaudit.store import Store
    from rmaudit.suites.preflight import preflight_suites
    from rmaudit.suites.results_file import results_json
    from rmaudit.suites.verdict import baseline_labels, suite_result

    from .render import run_attached
    from .summary import print_summary

    out, err = console(), console(stderr=True)
    # every suite's input checked (scores files against its items too) before the DB is written
    runners = preflight_suites(
        [(e.suite, e.recipe, c) for e, c in built], request.db_path, request.checks
    )
    baselines = baseline_labels(request.tables)
    results, located_by_suite = [], {}
    written: dict[str, Path] = {}
    store = Store.open(request.db_path)
    try:
        for (entry, _), runner in zip(built, runners, strict=True):
            suite, located = entry.suite, entry.located
            err.print(
                literal(
                    f"suite {suite.name}: {suite.title} — data {located.version} ({located.where})"
                ),
                style="bold",
            )
            result = run_attached(runner, store, err)
            if not request.as_json:
                print_summary(out, store, result.run_id, request.db_path)
            results.append(suite_result(store, suite, result.run_id, baselines))
            located_by_suite[suite.name] = located.version
        if request.report_dir is not None:
            written = _reports(store, results, request.report_dir)
        payload = results_json(store, results, located_by_suite, request.db_path)
    finally:
        store.close()
    _print_results(request, results, payload, written)


def _print_results(
    request: AuditRequest,
    results: list[SuiteResult],
    payload: dict[str, Any],
    written: dict[str, Path],
) -> None:
    """audit-results.json written; the closing table and verdicts (or the JSON) printed."""
    from rmaudit.display.literal import literal
    from rmaudit.suites.results_file import (
        dumps,
        replaced_audit,
        results_location,
        write_results,
    )
    from rmaudit.suites.verdict import index_markdown, verdict_lines

    from .audit_output import closing_table

    out, err = console(), console(stderr=True)
    db_path = request.db_path
    results_path = results_location(db_path, request.report_dir, request.results_file)
    replaced = replaced_audit(results_path, db_path)
    write_results(results_path, payload)
    if request.as_json:
        sys.stdout.write(dumps(payload))
    else:
        out.print(closing_table(results))
        for passes, line in verdict_lines(results):
            out.print(literal(line), style=_VERDICT_STYLES.get(passes))
        out.print(
            literal(
                f"stored in {db_path}; rerun to reuse every stored score; browse: "
                f"rmaudit tui {db_path}"
            )
        )
    err.print(literal(f"results: {results_path}"))
    if replaced:
        err.print(literal(f"note: {results_path} held the results of the audit in {replaced}"))
    if request.report_dir is not None:
        index = request.report_dir / "report.md"
        index.write_text(index_markdown(results, written, db_path), encoding="utf-8")
        err.print(literal(f"report: {index} and {request.report_dir / 'report.html'}"))


def _reports(store: Store, results: list[SuiteResult], report_dir: Path) -> dict[str, Path]:
    """Each suite's folder (PNGs and report.md), then one report.html of every suite."""
    try:  # matplotlib is an optional extra
        from rmaudit.report import HTML_NAME, run_page, write_html, write_report
        from rmaudit.suites.verdict import verdict_lines
    except ImportError as error:
        raise click.ClickException(
            f"--report needs the 'report' extra: pip install 'rmaudit[report]' ({error})"
        ) from None
    written: dict[str, Path] = {}
    pages = []
    for result in results:
        page = replace(
            run_page(store, result.run_id, heading=f"suite {result.suite.name}"),
            verdicts=tuple(line for _, line in verdict_lines([result])),
        )
        paths = write_report(store, page, report_dir / result.suite.name)
        written[result.suite.name] = paths[-1]
        pages.append(page)
    write_html(store, pages, report_dir / HTML_NAME)
    return written


#: a verdict line's style: passes, does not pass, or no verdict (None)
_VERDICT_STYLES: dict[bool | None, str] = {True: "bold green", False: "bold red"}


def _write_items(
    built: list[tuple[PlannedSuite, dict[str, Component]]], db_path: str, path: Path
) -> None:
    """--write-items: each suite's items made and stored (as a run makes them), then written."""
    from rmaudit.display.literal import literal
    from rmaudit.store import Store
    from rmaudit.suites.items_file import item_rows, write_items
    from rmaudit.suites.preflight import preflight_suites

    # every suite's data checked before the DB is written (records all rejected, say)
    runners = preflight_suites([(e.suite, e.recipe, c) for e, c in built], db_path)
    store = Store.open(db_path)
    try:
        suite_items = []
        for (entry, _), runner in zip(built, runners, strict=True):
            runner.attach(store)
            suite_items.append((entry.suite.name, runner.items_to_score()))
    finally:
        store.close()
    rows = item_rows(suite_items)
    write_items(path, rows)
    console(stderr=True).print(
        literal(
            f"wrote {len(rows):,} responses to score ({', '.join(s for s, _ in suite_items)}) "
            f"to {path}: add a score column, then rmaudit audit scores:FILE with the same "
            "--suite and --sample"
        )
    )
