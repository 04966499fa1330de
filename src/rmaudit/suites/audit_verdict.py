"""Each suite's headline numbers per model, read back from its run, and the verdict: does a
model beat the bars on the suite's first number — the ``length`` baseline and chance (½ for
an accuracy, 1 for RETA) — with the ``random`` baseline shown beside them as a reference?

A model is compared with a baseline on the **paired difference** over the same pairs or
prompts (:func:`rmaudit.results.comparison.paired_against`; its ± from the per-unit
differences, clustered by prompt): *above* when the difference's interval lies above 0,
*below* when under, otherwise *within the ±*.  Against chance, which has no ±, the model's
own value ± 1.96·stderr decides.  ``random`` is not a bar: its realised score is itself noise
around chance (hh: 0.5425 ± 0.0249), so a model at 0.58 ± 0.025 that beats chance by 3.2
standard errors would fail against it; it is shown with its paired difference, for
reference.  Either bar can be the higher: ``length`` is strong where the judge likes long
answers (AlpacaEval) and below chance where the data was built against it (RM-Bench hard,
LLMBar).  Where the per-unit values are not stored the comparison falls back to the
independent √(se² + se_bar²), and the line says so.

A pairwise judge's first number is its own headline where its metric declares one
(``judge-audit``'s accuracy with both orders and a tie ½, in place of the pair accuracy its
logits give, a tie a loss), paired against the bars' first number on the same pairs; the line
and the JSON name the convention.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from rmaudit.components import MetricValue
from rmaudit.display.formatting import format_number, markdown_line
from rmaudit.metrics.paired import PairedDifference
from rmaudit.results.comparison import Measure, paired_against
from rmaudit.results.scoring_checks import run_scoring_checks, untrusted
from rmaudit.results.summary import load_summary
from rmaudit.store import Store

from . import Suite
from .model_arguments import BASELINES
from .prm_arguments import PRM_BASELINES

#: value ± this many standard errors of the difference decides above / below
Z = 1.96
CHANCE = "chance"
_MISSING = MetricValue("", "", math.nan)
#: the baseline shown beside the bars for reference, never a bar itself
REFERENCE = "random"


@dataclass(frozen=True)
class AgainstBar:
    """A model's first number against one bar."""

    bar: str  # a baseline's label, or "chance"
    cell: MetricValue  # the bar's value and ± (chance: no ±)
    outcome: str  # "above", "below", "within the ± of", or "no value to compare with"
    #: the model's value minus the bar's on the same items (None: chance, or not stored)
    paired: PairedDifference | None = None
    #: whether passing needs "above" here (False: random, a reference)
    required: bool = True

    def difference(self) -> str:
        """``+0.0297 ± 0.0123 paired`` (the independent ± where no paired one)."""
        if self.paired is None:
            return ""
        return f"{self.paired.value:+.4f} ± {format_number(self.paired.stderr)} paired"


@dataclass(frozen=True)
class ModelResult:
    label: str
    baseline: bool
    #: headline name → the stored value, ± and interval (NaN where the run stored none)
    cells: dict[str, MetricValue]
    #: the first headline against each bar (empty for a baseline)
    against_bars: tuple[AgainstBar, ...] = ()
    #: ``⚠ scores not trustworthy: ...`` where a scoring check of the model failed
    untrusted: str | None = None
    #: the convention of the model's first number where it is its own headline (a pairwise
    #: judge's: "judge accuracy: both orders, a tie ½"); empty: the suite's first number
    convention: str = ""

    @property
    def values(self) -> dict[str, float]:
        return {name: cell.value for name, cell in self.cells.items()}

    @property
    def passes(self) -> bool | None:
        """Above every bar, on scores no scoring check failed (None: a baseline, or no bar to
        compare with)."""
        if self.baseline or not self.against_bars:
            return None
        above = all(c.outcome == "above" for c in self.against_bars if c.required)
        return above and self.untrusted is None


@dataclass(frozen=True)
class SuiteResult:
    suite: Suite
    run_id: str
    models: list[ModelResult]
    #: whether the first headline is better higher
    higher_is_better: bool = True

    @property
    def flagged(self) -> list[str]:
        return [m.label for m in self.models if m.passes is False]


def suite_result(store: Store, suite: Suite, run_id: str, baselines: set[str]) -> SuiteResult:
    """``baselines``: the labels of the run's baseline RMs (not the user's models)."""
    summary = load_summary(store, run_id)
    first = suite.headlines[0]
    higher = next(
        (
            c.higher_is_better
            for c in summary.columns
            if (c.metric, c.key) == (first.metric, first.key)
        ),
        True,
    )
    rows = []
    for label, rm_key in summary.reward_models:
        cells = {
            h.name: summary.cells.get((rm_key, h.metric, h.key), _MISSING) for h in suite.headlines
        }
        own = summary.headline(rm_key)
        measure = Measure(first.metric, first.key)
        if own is not None and own.headline:  # its metric declares its own headline
            cells[first.name] = summary.cells[(rm_key, own.metric, own.key)]
            measure = Measure(own.metric, own.key)
        rows.append((label, rm_key, cells, measure, own.headline if own else ""))
    bars: list[tuple[str, str, MetricValue, Measure | None]] = [
        (label, key, cells[first.name], measure)
        for label, key, cells, measure, _ in rows
        if label in baselines
    ]
    distrusted = {m.label: untrusted(m.checks) for m in run_scoring_checks(store, run_id)}
    if first.chance is not None:
        chance = first.chance
        bars.append((CHANCE, "", MetricValue(CHANCE, CHANCE, chance, 0.0, chance, chance), None))
    models = []
    for label, rm_key, cells, measure, convention in rows:
        baseline = label in baselines
        against_bars = []
        for bar, bar_key, cell, bar_measure in [] if baseline else bars:
            paired = (
                paired_against(store, run_id, (rm_key, measure), (bar_key, bar_measure))
                if bar_measure is not None
                else None
            )
            outcome = _outcome(cells[first.name], cell, higher, paired)
            # a suite of PRMs has two bars: random is the floor a PRM's threshold is read at
            required = bar != REFERENCE or suite.solutions is not None
            against_bars.append(AgainstBar(bar, cell, outcome, paired, required))
        models.append(
            ModelResult(
                label,
                baseline,
                cells,
                tuple(against_bars),
                distrusted.get(label),
                "" if baseline else convention,
            )
        )
    return SuiteResult(suite, run_id, models, higher)


def _outcome(
    model: MetricValue, bar: MetricValue, higher_is_better: bool, paired: PairedDifference | None
) -> str:
    if not (math.isfinite(model.value) and math.isfinite(bar.value)):
        return "no value to compare with"
    sign = 1 if higher_is_better else -1
    if paired is not None and math.isfinite(paired.stderr):
        low, high = sorted((sign * paired.ci_low, sign * paired.ci_high))
        return "above" if low > 0 else "below" if high < 0 else "within the ± of"
    difference = (model.value - bar.value) * sign
    # a missing ± counts as none: the comparison is then on the values alone
    errors = [e for e in (model.stderr, bar.stderr) if math.isfinite(e)]
    margin = Z * math.sqrt(sum(e * e for e in errors))
    if difference > margin:
        return "above"
    if difference < -margin:
        return "below"
    return "within the ± of"


def baseline_labels(tables: list[dict]) -> set[str]:
    """The labels of the baseline RMs among a recipe's reward-model tables."""
    known = {**BASELINES, **PRM_BASELINES}
    return {t["label"] for t in tables if t["name"] == known.get(t["label"], {}).get("name")}


def shown(cell: MetricValue) -> str:
    """``0.5250 ± 0.0250`` (``≈`` after it where the ± covers less or more than 95%), the
    value alone where it has no ±, ``—`` where it has no value."""
    if not math.isfinite(cell.value):
        return "—"
    if not math.isfinite(cell.stderr) or cell.stderr == 0:
        return format_number(cell.value)
    approximate = " ≈" if cell.approximate else ""
    return f"{format_number(cell.value)} ± {format_number(cell.stderr)}{approximate}"


def _bar(against: AgainstBar) -> str:
    if against.bar == CHANCE:
        return f"chance ({format_number(against.cell.value)})"
    by = f", by {against.difference()}" if against.paired else ""
    reference = "" if against.required else ", a reference, not a bar"
    return f"{against.bar} ({shown(against.cell)}{by}{reference})"


def audit_verdict_lines(results: list[SuiteResult]) -> list[tuple[bool | None, str]]:
    """One line per suite × model audited (per suite, where only baselines ran): its first
    number against each bar, and whether it passes; with the line's pass/fail."""
    lines: list[tuple[bool | None, str]] = []
    for r in results:
        first = r.suite.headlines[0].name
        models = [m for m in r.models if not m.baseline]
        lines += [(m.passes, _model_line(r, m)) for m in models if m.passes is not None]
        if not models:
            lines.append((None, _bars_line(r, first)))
    return lines


def _model_line(r: SuiteResult, m: ModelResult) -> str:
    first = r.suite.headlines[0].name
    against = "; ".join(f"{c.outcome} {_bar(c)}" for c in m.against_bars)
    word = "passes" if m.passes else "does not pass"
    mark = "✓" if m.passes else "⚠"
    bare = "" if math.isfinite(m.cells[first].stderr) else " (no ±: on the values alone)"
    distrust = f" ({m.untrusted.removeprefix('⚠ ')})" if m.untrusted else ""
    convention = f" ({m.convention})" if m.convention else ""
    return (
        f"{mark} {r.suite.name}: {m.label} {word}{distrust} on {first}{convention} "
        f"{shown(m.cells[first])}{bare}: {against}"
    )


def brief_audit_verdict_lines(results: list[SuiteResult]) -> list[tuple[bool | None, str]]:
    """:func:`audit_verdict_lines` in brief (rmaudit audit without --details): per suite one
    line for every model that passes, and one per way of failing (a scoring check failed: one
    per model); a line that would name one model is that model's own line."""
    lines: list[tuple[bool | None, str]] = []
    for r in results:
        first = r.suite.headlines[0].name
        judged = [m for m in r.models if not m.baseline and m.passes is not None]
        passing = [m for m in judged if m.passes]
        failing: dict[str, list[ModelResult]] = {}
        for m in judged:
            if not m.passes:
                failing.setdefault(m.untrusted or _failed_bars(m), []).append(m)
        if len(passing) > 1:
            bars = " and ".join(_bar_brief(c) for c in passing[0].against_bars if c.required)
            lines.append(
                (
                    True,
                    f"✓ {r.suite.name}: {len(passing)} of {len(judged)} models pass on "
                    f"{first}{_shared_convention(passing)}, above {bars} (each one's line: "
                    "--details)",
                )
            )
        lines += [(True, _model_line(r, m)) for m in passing if len(passing) == 1]
        for why, models in failing.items():
            if len(models) == 1 or models[0].untrusted:
                lines += [(False, _model_line(r, m)) for m in models]
                continue
            values = ", ".join(f"{m.label} {format_number(m.cells[first].value)}" for m in models)
            lines.append(
                (
                    False,
                    f"⚠ {r.suite.name}: {len(models)} models do not pass on {first}, {why}: "
                    f"{values}",
                )
            )
        if not any(not m.baseline for m in r.models):
            lines.append((None, _bars_line(r, first)))
    return lines


def _failed_bars(m: ModelResult) -> str:
    """The bars ``m`` does not beat: "below chance (0.5000)"."""
    failed = [c for c in m.against_bars if c.required and c.outcome != "above"]
    return "; ".join(f"{c.outcome} {_bar_brief(c)}" for c in failed)


def _bar_brief(against: AgainstBar) -> str:
    """A bar without the model's own paired difference: "length (0.2697 ± 0.0217, paired)"."""
    if against.bar == CHANCE:
        return f"chance ({format_number(against.cell.value)})"
    return f"{against.bar} ({shown(against.cell)}, paired)"


def _shared_convention(models: list[ModelResult]) -> str:
    conventions = {m.convention for m in models}
    return f" ({conventions.pop()})" if len(conventions) == 1 and models[0].convention else ""


def _bars_line(r: SuiteResult, first: str) -> str:
    baselines = [(m.label, m.cells[first]) for m in r.models if m.baseline]
    process = r.suite.solutions is not None
    bars = [(label, cell) for label, cell in baselines if label != REFERENCE or process]
    chance = r.suite.headlines[0].chance
    if chance is not None:
        bars.append((CHANCE, MetricValue(CHANCE, CHANCE, chance, math.nan, chance, chance)))
    shown_bars = ", ".join(f"{label} {shown(cell)}" for label, cell in bars)
    known = [(cell.value, label) for label, cell in bars if math.isfinite(cell.value)]
    higher = r.higher_is_better
    # every bar undefined (ProcessBench's F1 on a split with no correct solution): none highest
    highest = " (undefined for each of them here)"
    if known:
        best = (max if higher else min)(known)[1]
        highest = f" (the {'highest' if higher else 'lowest'}: {best})"
    reference = "".join(
        f"; {label} {shown(cell)} is shown for reference, not a bar"
        for label, cell in baselines
        if label == REFERENCE and not process
    )
    by_chance = f", chance by {Z}× the model's ±" if chance is not None else ""
    return (
        f"{r.suite.name}: a model passes by beating each of {shown_bars}"
        f"{highest} on {first}: a baseline by its paired difference's 95% "
        f"interval{by_chance}{reference}"
    )


def index_markdown(results: list[SuiteResult], reports: dict[str, Path], db: str) -> str:
    """``--report DIR``'s DIR/report.md: each suite's headline numbers and its own report."""
    lines = [
        "# rmaudit audit",
        "",
        f"Stored in `{db}`; each suite's plots and full report are "
        "linked below.  Text from the data appears only in the suites' reports.",
        "",
    ]
    for r in results:
        names = [h.name for h in r.suite.headlines]
        lines += [
            f"## {r.suite.name}: {r.suite.title}",
            "",
            f"[report]({reports[r.suite.name].relative_to(reports[r.suite.name].parents[1]).as_posix()})"
            f" · run `{r.run_id}` · {r.suite.measures}",
            "",
            "| model | " + " | ".join(names) + " | verdict |",
            "|---|" + "---:|" * len(names) + "---|",
        ]
        for m in r.models:
            label = m.label.replace("|", "\\|").replace("`", "'")
            lines.append(
                f"| `{label}` | "
                + " | ".join(shown(m.cells[n]) for n in names)
                + f" | {audit_verdict_word(m)} |"
            )
        lines.append("")
        lines += [f"- {markdown_line(line)}" for _, line in audit_verdict_lines([r])] + [""]
    return "\n".join(lines)


def audit_verdict_word(model: ModelResult) -> str:
    """A closing-table cell: baseline, passes, or which bars it does not beat."""
    if model.baseline:
        return "baseline"
    if model.passes is None:
        return ""
    if model.passes:
        return "passes"
    if model.untrusted is not None:
        return model.untrusted.partition(":")[0]  # the words before the findings
    missed = [c.bar for c in model.against_bars if c.required and c.outcome != "above"]
    return "⚠ not above " + ", ".join(missed)
