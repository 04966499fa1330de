"""What ``rmaudit audit`` does once its arguments are read (:mod:`.audit`): each suite planned
and checked before anything is written, then run into the one DB, with its results printed,
written to the results file and, with ``--report DIR``, to a report per suite."""

from __future__ import annotations

import sys
from contextlib import closing, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import click

from rmaudit.suites import Suite

if TYPE_CHECKING:
    from rmaudit.components import Component
    from rmaudit.components.scoring_checks import CheckSettings
    from rmaudit.recipe import Recipe
    from rmaudit.suites.audit_verdict import SuiteResult
    from rmaudit.suites.data import Located
    from rmaudit.suites.served_arguments import ServedFlags

from .console import console


@dataclass(frozen=True)
class AuditOutput:
    """Where the results go besides the terminal: ``--json``, ``--report DIR``, ``--results``;
    and how much the terminal shows: ``--details`` (docs/audit.md, "Output")."""

    as_json: bool
    report_dir: Path | None
    results_file: Path | None  # default: beside the DB, or in --report DIR
    details: bool = False

    @classmethod
    def of_flags(
        cls, as_json: bool, report_dir: str | None, results_file: str | None, details: bool
    ) -> Self:
        return cls(as_json, _path(report_dir), _path(results_file), details)


@dataclass(frozen=True)
class AuditStop:
    """What the audit does instead of running: ``--list-suites``, ``--dry-run``,
    ``--write-items FILE``, ``--print-recipe`` (all false: it runs)."""

    list_suites: bool
    dry_run: bool
    items_path: Path | None
    print_recipe: bool

    @classmethod
    def of_flags(
        cls, list_suites: bool, dry_run: bool, items_path: str | None, print_recipe: bool
    ) -> Self:
        return cls(list_suites, dry_run, _path(items_path), print_recipe)

    def check_models(self, models: tuple[str, ...], recorded: bool) -> None:
        """MODELs given where they are scored, and none for --write-items."""
        if self.items_path is not None:
            from rmaudit.suites.items_file import items_format

            if models:
                raise click.UsageError("--write-items scores no MODEL: give none")
            items_format(self.items_path)
        elif not models and not recorded:
            raise click.UsageError(
                "give at least one MODEL (or --recorded-judges, --list-suites, --write-items)"
            )


@dataclass(frozen=True)
class ModelFlags:
    """How each MODEL is read: a scores:FILE's rows (``--match``, ``--columns``), a DPO
    policy's reference (``--dpo-ref``), a judge:MODEL's endpoint and template."""

    match: str
    columns: str | None
    dpo_ref: str | None
    base_url: str | None
    judge_template: str | None
    api_key_env: str | None
    judge_price: str | None
    request_timeout: float | None

    def tables(
        self,
        models: list[str],
        hf_options: dict[str, Any],
        data_dir: str | None,
        sample: int | None,
        *,
        of_prms: bool,
        served: ServedFlags,
    ) -> list[dict[str, Any]]:
        """The MODELs' and the baselines' recipe tables (``of_prms``: process reward models,
        which take none of these flags; ``served``: a server's URL's ``--rm-*`` flags)."""
        from rmaudit.suites.judge_arguments import JudgeFlags, read_judge_template
        from rmaudit.suites.model_arguments import model_tables, parse_columns
        from rmaudit.suites.prm_arguments import prm_tables, reward_model_flags

        template = read_judge_template(self.judge_template, data_dir)
        judge = JudgeFlags(
            self.base_url,
            template,
            self.api_key_env,
            self.judge_price,
            data_dir,
            self.request_timeout,
        )
        if of_prms:
            reward_model_flags(
                dpo_ref=self.dpo_ref, columns=self.columns, judge=judge, sample=sample
            )
            return prm_tables(models, hf_options)
        columns = parse_columns(self.columns)
        return model_tables(
            models,
            hf_options,
            self.dpo_ref,
            match=self.match,
            columns=columns,
            judge=judge,
            served=served,
        )


def _path(given: str | None) -> Path | None:
    return Path(given) if given else None


@dataclass(frozen=True)
class AuditRequest:
    """What ``rmaudit audit`` was asked to do, once its arguments are checked."""

    found: tuple[tuple[Suite, Located], ...]  # the suites to run, each with its data
    skipped: tuple[Suite, ...]  # the suites whose data was not found
    tables: list[dict[str, Any]]  # the MODELs and the baselines as recipe tables
    db_path: str
    sample: int | None  # pairs drawn from each file (0: all; None: the suite's)
    output: AuditOutput
    stop: AuditStop
    checks: CheckSettings  # --strict, --no-scoring-checks, --show-input, --scoring-checks-sample
    recorded: bool = False  # --recorded-judges
    named: bool = False  # the suites were named with --suite


@dataclass(frozen=True)
class PlannedSuite:
    """A suite ready to run: its data, its recipe tables and the validated recipe."""

    suite: Suite
    located: Located
    table: dict[str, Any]
    recipe: Recipe


def run_audit(request: AuditRequest) -> None:
    from rmaudit.run import build_components
    from rmaudit.suites.model_arguments import check_reachable

    planned = _planned(request)
    if request.stop.print_recipe:
        from rmaudit.suites.build import recipe_text

        for entry in planned:
            click.echo(recipe_text(entry.suite, entry.table))
        return
    # every model loads (bad options, a missing checkpoint) before the DB is touched
    built = [(entry, build_components(entry.recipe)) for entry in planned]
    if request.stop.dry_run:
        _print_plans(built, request.db_path)
        return
    if request.stop.items_path is not None:
        from .audit_items import write_suite_items

        write_suite_items(
            [(e.suite, e.recipe, c) for e, c in built], request.db_path, request.stop.items_path
        )
        return
    check_reachable(request.tables)
    _run_suites(request, built)


def _planned(request: AuditRequest) -> list[PlannedSuite]:
    """Each found suite's recipe; a line on stderr for each suite skipped."""
    from rmaudit.display.literal import literal
    from rmaudit.errors import BadInput
    from rmaudit.suites.build import suite_recipe, suite_table
    from rmaudit.suites.judge_arguments import check_template_used
    from rmaudit.suites.math_suites import is_math, without_texts
    from rmaudit.suites.recorded_judges import suite_runs

    check_template_used(request.tables, [suite.benchmark is None for suite, _ in request.found])
    planned = []
    err = console(stderr=True)
    plans, left_out = suite_runs(request.found, recorded=request.recorded, named=request.named)
    for plan in plans:
        suite, located = plan.suite, plan.located
        models = [*request.tables, *plan.tables]
        unusable = without_texts(suite, located, models) if is_math(suite) else None
        if unusable is not None and request.named:
            raise BadInput(unusable, field="MODEL")
        if unusable is not None:
            left_out.append(f"skipped {unusable}")
            continue
        sample = suite.sample if request.sample is None else (request.sample or None)
        table = suite_table(suite, located, models, sample=sample)
        planned.append(PlannedSuite(suite, located, table, suite_recipe(suite, table)))
        if plan.note:
            err.print(literal(plan.note))
    for suite in request.skipped:
        err.print(
            literal(
                f"skipped suite {suite.name}: no data found "
                f"(rmaudit audit --list-suites says where it comes from)"
            )
        )
    for line in left_out:
        err.print(literal(line))
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
    from rmaudit.suites.audit_verdict import baseline_labels, suite_result
    from rmaudit.suites.judge_arguments import judge_waits
    from rmaudit.suites.preflight import preflight_suites
    from rmaudit.suites.publisher_figures import publisher_figures
    from rmaudit.suites.results_file import results_json

    from .audit_output import print_suite_summary, write_reports
    from .render import run_attached

    out, err = console(), console(stderr=True)
    # every suite's input checked (scores files against its items too) before the DB is written;
    # a judge's ready call is its first request: how long it may wait shows while it waits
    waits = judge_waits(request.tables)
    with err.status(literal("; ".join(waits))) if waits else nullcontext():
        runners = preflight_suites(
            [(e.suite, e.recipe, c) for e, c in built], request.db_path, request.checks
        )
    baselines = baseline_labels(request.tables)
    results, located_by_suite, publishers = [], {}, {}
    last: list[str] = []  # said after the verdicts
    written: dict[str, Path] = {}
    with closing(Store.open(request.db_path)) as store:
        for (entry, components), runner in zip(built, runners, strict=True):
            suite, located = entry.suite, entry.located
            err.print(
                literal(
                    f"suite {suite.name}: {suite.title} — data {located.version} ({located.where})"
                ),
                style="bold",
            )
            result = run_attached(runner, store, err, brief=not request.output.details)
            figures = publisher_figures(
                store, result.run_id, suite, located, entry.recipe, components
            )
            if not request.output.as_json:
                last += print_suite_summary(
                    out, store, result.run_id, request.db_path, figures, request.output.details
                )
            results.append(suite_result(store, suite, result.run_id, baselines))
            located_by_suite[suite.name] = located.version
            publishers[suite.name] = figures
        if request.output.report_dir is not None:
            written = write_reports(store, results, request.output.report_dir)
        payload = results_json(store, results, located_by_suite, request.db_path, publishers)
    _print_results(request, results, payload, written, last)


def _print_results(
    request: AuditRequest,
    results: list[SuiteResult],
    payload: dict[str, Any],
    written: dict[str, Path],
    last: list[str],
) -> None:
    """The results file written; the closing table and verdicts (or the JSON) printed, then
    ``last`` (in brief: each suite's next step)."""
    from rmaudit.display.literal import literal
    from rmaudit.suites.audit_verdict import (
        audit_verdict_lines,
        brief_audit_verdict_lines,
        index_markdown,
    )
    from rmaudit.suites.results_file import (
        dumps,
        replaced_audit,
        results_location,
        write_results,
    )

    from .audit_output import closing_table, of_prms

    out, err = console(), console(stderr=True)
    db_path = request.db_path
    results_path = results_location(db_path, request.output.report_dir, request.output.results_file)
    replaced = replaced_audit(results_path, db_path)
    text = dumps(payload)
    write_results(results_path, text)
    if request.output.as_json:
        sys.stdout.write(text)
    else:
        details = request.output.details
        if details:
            out.print(closing_table(results))
        for passes, line in (audit_verdict_lines if details else brief_audit_verdict_lines)(
            results
        ):
            out.print(literal(line), style=_VERDICT_STYLES.get(passes))
        for line in dict.fromkeys(last):  # suites alike say the same next step: once
            out.print(literal(line))
        scored = "step score" if of_prms(results) else "score"
        browse = f"; browse: rmaudit tui {db_path}" if details else ""  # else said by Next:
        out.print(literal(f"stored in {db_path}; rerun to reuse every stored {scored}{browse}"))
    err.print(literal(f"results: {results_path}"))
    if replaced:
        err.print(literal(f"note: {results_path} held the results of the audit in {replaced}"))
    if request.output.report_dir is not None:
        index = request.output.report_dir / "report.md"
        index.write_text(index_markdown(results, written, db_path), encoding="utf-8")
        err.print(literal(f"report: {index} and {request.output.report_dir / 'report.html'}"))


#: a verdict line's style: passes, does not pass, or no verdict (None)
_VERDICT_STYLES: dict[bool | None, str] = {True: "bold green", False: "bold red"}
