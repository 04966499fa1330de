"""``rmaudit audit MODEL...``: one command from a reward model to its reliability report.

Each suite (:mod:`rmaudit.suites`) becomes a recipe with the MODELs and the baselines as its
reward models, run by the same runner as ``rmaudit run`` into one DB; a rerun reuses every
stored score.  ``--print-recipe`` shows each suite's recipe as TOML, to keep and edit.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from rmaudit.errors import BadInput
from rmaudit.suites import RESULTS_FILE, SUITES, get_suite

from .console import console

#: audits keep their own store, so the runs of ``rmaudit run`` and of audits do not mix
AUDIT_DB = "rmaudit-audit.db"

#: click option name → recipe option name, for the model flags
_MODEL_FLAGS = (
    "revision",
    "dtype",
    "max_length",
    "fallback_chat_template",
    "device",
    "batch_size",
    "max_batch_tokens",
    "trust_remote_code",
)


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
@click.option(
    "--db",
    "db_path",
    default=AUDIT_DB,
    show_default=True,
    type=click.Path(dir_okay=False),
    help="SQLite file that stores everything (apart from rmaudit run's rmaudit.db).",
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
    **model_options: Any,
) -> None:
    """Audit reward models on the built-in suites, beside the length and random baselines.

    MODEL is a Hugging Face id or local folder (a sequence classifier; with --dpo-ref, a DPO
    policy), scores:FILE, or a baseline: length, random.  Several MODELs are compared side
    by side.  The model flags are the recipe options of the same names (docs/audit.md).
    """
    from rmaudit.suites.data import earlier_data_dirs, locate, missing
    from rmaudit.suites.model_arguments import model_tables, parse_columns

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
    chosen = [get_suite(name) for name in dict.fromkeys(suite_names)] or list(SUITES.values())
    # every suite's data is found before anything runs: a missing one is exit 2, nothing written
    found, skipped = [], []
    for suite in chosen:
        located = locate(suite, data_dir, download=bool(suite_names))
        if located is None and suite_names:
            raise missing(suite, data_dir)
        (found.append((suite, located)) if located else skipped.append(suite))
    if not found:
        raise BadInput(f"no suite's data was found; {missing(chosen[0], data_dir).problem}")
    tables = model_tables(
        list(models),
        {k: model_options[k] for k in _MODEL_FLAGS},
        dpo_ref,
        match=match,
        columns=parse_columns(columns),
    )
    _audit(
        found,
        skipped,
        tables,
        db_path,
        as_json,
        report_dir,
        sample,
        dry_run,
        print_recipe,
        items_path,
        results_file,
    )


def _audit(
    found,
    skipped,
    tables,
    db_path,
    as_json,
    report_dir,
    sample,
    dry_run,
    print_recipe,
    items_path,
    results_file=None,
) -> None:
    from rmaudit.display.literal import literal
    from rmaudit.run import Runner, build_components
    from rmaudit.store import Store
    from rmaudit.suites.build import recipe_text, suite_recipe, suite_table
    from rmaudit.suites.model_arguments import check_reachable
    from rmaudit.suites.results_file import (
        dumps,
        replaced_audit,
        results_json,
        results_location,
        write_results,
    )
    from rmaudit.suites.verdict import (
        baseline_labels,
        index_markdown,
        suite_result,
        verdict_lines,
    )

    from .audit_output import closing_table
    from .render import RichProgress, plan_table, work_line
    from .summary import print_summary

    out, err = console(), console(stderr=True)
    planned = []
    for suite, located in found:
        table = suite_table(
            suite, located, tables, sample=suite.sample if sample is None else (sample or None)
        )
        planned.append((suite, located, table, suite_recipe(suite, table)))
    for suite in skipped:
        err.print(
            literal(
                f"skipped suite {suite.name}: no data found "
                f"(rmaudit audit --list-suites says where it comes from)"
            )
        )
    if print_recipe:
        for suite, _, table, _ in planned:
            click.echo(recipe_text(suite, table))
        return
    # every model loads (bad options, a missing checkpoint) before the DB is touched
    planned = [(*entry, build_components(entry[3])) for entry in planned]
    if dry_run:
        for suite, located, _, recipe, components in planned:
            counts = Runner(recipe, Store.open_readonly(db_path), components=components).plan()
            out.print(
                plan_table(
                    counts,
                    f"plan for suite {suite.name} (data: {located.where}; "
                    f"db: {db_path}); nothing was run",
                )
            )
        return
    if items_path:
        _write_items(planned, db_path, Path(items_path))
        return
    check_reachable(tables)
    baselines = baseline_labels(tables)
    results, located_by_suite = [], {}
    store = Store.open(db_path)
    try:
        for suite, located, _, recipe, components in planned:
            err.print(
                literal(
                    f"suite {suite.name}: {suite.title} — data {located.version} ({located.where})"
                ),
                style="bold",
            )
            with RichProgress(err) as progress:
                result = Runner(recipe, store, progress, components).run()
            err.print(literal(work_line(result.counts)))
            for note in result.notes:
                err.print(literal(note))
            if not as_json:
                print_summary(out, store, result.run_id, db_path)
            results.append(suite_result(store, suite, result.run_id, baselines))
            located_by_suite[suite.name] = located.version
        if report_dir:
            written = _reports(store, results, Path(report_dir))
        payload = results_json(store, results, located_by_suite, db_path)
    finally:
        store.close()
    results_path = results_location(db_path, report_dir, results_file)
    replaced = replaced_audit(results_path, db_path)
    write_results(results_path, payload)
    if as_json:
        sys.stdout.write(dumps(payload))
    else:
        out.print(closing_table(results))
        for passes, line in verdict_lines(results):
            out.print(literal(line), style={True: "bold green", False: "bold red"}.get(passes))
        out.print(
            literal(
                f"stored in {db_path}; rerun to reuse every stored score; browse: "
                f"rmaudit tui {db_path}"
            )
        )
    err.print(literal(f"results: {results_path}"))
    if replaced:
        err.print(literal(f"note: {results_path} held the results of the audit in {replaced}"))
    if report_dir:
        index = Path(report_dir) / "report.md"
        index.write_text(index_markdown(results, written, db_path), encoding="utf-8")
        err.print(literal(f"report: {index} and {Path(report_dir) / 'report.html'}"))


def _reports(store, results, report_dir: Path) -> dict[str, Path]:
    """Each suite's folder (PNGs and report.md), then one report.html of every suite."""
    try:  # matplotlib is an optional extra
        from rmaudit.report import HTML_NAME, run_page, write_html, write_report
        from rmaudit.suites.verdict import verdict_lines
    except ImportError as error:
        raise click.ClickException(
            f"--report needs the 'report' extra: pip install 'rmaudit[report]' ({error})"
        ) from None
    written, pages = {}, []
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


def _write_items(planned, db_path: str, path: Path) -> None:
    """--write-items: each suite's items made and stored (as a run makes them), then written."""
    from rmaudit.display.literal import literal
    from rmaudit.run import Runner
    from rmaudit.store import Store
    from rmaudit.suites.items_file import item_rows, write_items

    store = Store.open(db_path)
    try:
        suite_items = [
            (suite.name, Runner(recipe, store, components=components).items_to_score())
            for suite, _, _, recipe, components in planned
        ]
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
