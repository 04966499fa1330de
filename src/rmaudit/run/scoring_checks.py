"""The scoring checks before the scores stages (docs/real-models.md, "Scoring checks"):
every model-backed RM or PRM (:class:`~rmaudit.components.scoring_checks.CheckedModel`) is
checked on a fixed sample of the items the run scores with it — a reward model's responses,
a PRM's solutions — before any model scores, the checks are stored with the run, and
``--strict`` stops the run on any warning of any model.

Where a stage's items are known before the run (read from files, or stored), the checks run in
the run's plan, on the DB opened read-only (``Runner.preflight``): a ``--strict`` stop, or a
refusal to mix settings, then leaves the DB as it was.  Where the run makes them first
(generated responses), the checks run once they are made, before the first scores stage,
and the run holds its writes until they pass (``Store.hold``): a stop then writes nothing
either.

The sample is the run's items drawn by a seeded generator, the longest and shortest (in
characters) always among them, so a rerun checks the same items.  Checks are valid for the
scoring settings they were made under (``CheckedModel.scoring_settings``: batching, device,
dtype, max length, truncation side, template): checks stored for the same model key, sample
and settings are reused; other settings are checked again.  A stage some of whose scores
were stored under other settings mixes scores made both ways only where batch invariance
passes under each (the scores then match scores alone under both); otherwise the run is
refused, saying which settings finish it.  Its size follows the stage's (:func:`sample_size`),
and the sample's scores in the run's batches (a PRM's step scores too) are kept as the run's
own (:func:`keep`).  The model's report takes its batch dependence from the checks' batch
invariance (:func:`report`), so nothing is scored after the full scoring; with the checks
skipped the model measures it after the run instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rmaudit.components import ProcessRewardModel, RewardModel
from rmaudit.components.keys import content_key
from rmaudit.components.scoring_checks import (
    AFTER_THE_RUN,
    BY_THE_CHECKS,
    CheckedModel,
    ScoringChecks,
    batch_dependence_report,
    skipped_checks,
)
from rmaudit.errors import BadInput
from rmaudit.recipe import ComponentSpec
from rmaudit.store.scoring_checks import ScoringChecksTable

from .context import RunContext, Work

#: The sample's size by default: one item in SAMPLE_SHARE of the stage's, at least
#: MIN_SAMPLE (the defect tests in tests/hf/ catch each seeded defect on that many) and at
#: most MAX_SAMPLE, so the checks cost a few per cent of the scoring on a small suite too.
MIN_SAMPLE, MAX_SAMPLE, SAMPLE_SHARE = 16, 64, 50


def sample_size(items: int, requested: int | None = None) -> int:
    """The sample's size for a stage of ``items`` (``requested``: --scoring-checks-sample)."""
    if requested is not None:
        return requested
    return min(MAX_SAMPLE, max(MIN_SAMPLE, items // SAMPLE_SHARE))


def draw_sample(ids: Sequence[str], sizes: Sequence[int], size: int, seed: int) -> list[str]:
    """``size`` of ``ids``: the longest and the shortest by ``sizes`` (ties: the smallest id),
    then a seeded draw of the rest; every id when there are no more than ``size``."""
    order = sorted(range(len(ids)), key=lambda i: ids[i])
    if len(order) <= size:
        return [ids[i] for i in order]
    longest = min(order, key=lambda i: (-sizes[i], ids[i]))
    shortest = min(order, key=lambda i: (sizes[i], ids[i]))
    ends = list(dict.fromkeys([longest, shortest]))[:size]
    rest = [i for i in order if i not in ends]
    drawn = np.random.default_rng(seed).choice(len(rest), size - len(ends), replace=False)
    return [ids[i] for i in ends] + sorted(ids[rest[j]] for j in drawn)


def settings_key(settings: dict[str, Any]) -> str:
    return content_key("scoring settings", settings)


#: a model a scores stage scores with
Scored = RewardModel | ProcessRewardModel


@dataclasses.dataclass(frozen=True)
class Sampled:
    """One item a sample may take, as the model's scoring takes it (``item``: a (prompt,
    response) for a reward model, a solution for a PRM), with its id and its size in
    characters (the longest and the shortest are always checked)."""

    id: str
    size: int
    item: Any


@dataclasses.dataclass(frozen=True)
class ScoresToCheck:
    """One model's scores stage as its checks see it: every item it scores (``known``), those
    not scored yet, those its sample is drawn from (``sampled``: the stage's items but the
    shift sweep's copies, which a plan cannot know; in a plan, ``unlisted`` more not made
    yet), and ``read``: those of some ids known now (in memory, stored or read from files),
    as the model's checks take them."""

    spec: ComponentSpec
    model: Scored
    known: list[str]
    pending: list[str]
    sampled: list[str]
    read: Callable[[Sequence[str]], list[Sampled]]
    #: the stage's own check of what the model returned for some ids (BadInput: a NaN, a
    #: solution's step scores not one per step), the values as the stage stores them
    accept: Callable[[Sequence[str], list[Any]], list[Any]]
    unlisted: int = 0
    #: what its items are, as the checks' block names them
    unit: str = "items"


@dataclasses.dataclass(frozen=True)
class Checked:
    """What the checks before a scores stage leave it: ``kept``, the scores of its pending
    items the checks scored as the run does (item id → score, or a solution's step scores),
    and ``checks``, the checks run, read back or skipped."""

    kept: dict[str, Any] = dataclasses.field(default_factory=dict)
    checks: ScoringChecks | None = None


def check_models(
    ctx: RunContext, targets: Sequence[ScoresToCheck], execute: bool
) -> dict[str, Checked]:
    """Every checked model's checks, by recipe label, before any model scores: in the run's
    plan (``execute`` false; a dry run checks nothing) those whose items are all known, in
    the run every one (those of its plan reused); with ``--strict`` every finding of every
    model stops the run in one line."""
    if not execute and not ctx.strict:
        return {}
    found = {}
    for target in targets:
        if isinstance(target.model, CheckedModel) and target.sampled:
            checked = _check(ctx, target, execute)
            if checked is not None:
                found[target.spec.label] = checked
    if ctx.checks.strict:
        _stop(ctx, found)
    return found


def _check(ctx: RunContext, target: ScoresToCheck, execute: bool) -> Checked | None:
    """One model's checks (None: none to show, or in a plan, its items not all known yet)."""
    settings, spec, model = ctx.checks, target.spec, target.model
    assert isinstance(model, CheckedModel)
    items = target.read(target.sampled)
    if not execute and (target.unlisted or len(items) < len(target.sampled)):
        return None
    ids = [item.id for item in items]
    sizes = [item.size for item in items]
    chosen = draw_sample(ids, sizes, sample_size(len(ids), settings.sample_size), settings.seed)
    sample_key = content_key("scoring-checks", settings.seed, chosen)
    current = model.scoring_settings()
    table = ScoringChecksTable(ctx.store) if ctx.store is not None else None
    stored = (
        [ScoringChecks.from_stored(data) for data in table.on_sample(model.key, sample_key)]
        if table
        else []
    )
    if not settings.enabled:
        checks: ScoringChecks | None = skipped_checks(sample_key, current, target.unit)
    else:
        by_id = {item.id: item.item for item in items}
        checks = _made(ctx, target, stored, current, [by_id[rid] for rid in chosen], sample_key)
    if checks is None:
        return None
    # the sample's scores pass the stage's own check here: in a plan, a model returning NaN
    # is refused before anything is written
    scores = (
        target.accept(chosen, list(checks.scores)) if len(checks.scores) == len(chosen) else None
    )
    _refuse_mixing(ctx, target, checks, stored)
    if execute:
        ScoringChecksTable(ctx.db).save(
            ctx.recipe.run_key, spec.label, model.key, sample_key, checks.status, checks.as_stored()
        )
        if settings.show_input and checks.rendered_input is not None:
            ctx.notes.append(
                f"{spec.label}: one sampled input as the model reads it:\n{checks.rendered_input}"
            )
    if scores is None:  # read back, or a model that keeps no scores
        return Checked(checks=checks)
    todo = set(target.pending)
    kept = {rid: s for rid, s in zip(chosen, scores, strict=True) if rid in todo}
    return Checked(kept, checks)


def _made(
    ctx: RunContext,
    target: ScoresToCheck,
    stored: list[ScoringChecks],
    current: dict[str, Any],
    sample: list,
    sample_key: str,
) -> ScoringChecks | None:
    """The checks of ``sample`` under the ``current`` settings: made earlier in this run (its
    plan), stored by a run under the same settings, else made now; with nothing left to
    score, the stored checks under whichever settings made the stored scores (none: None),
    and no model is loaded."""
    key = settings_key(current)
    memo = (target.model.key, sample_key, key)
    same = [c for c in stored if c.checks and settings_key(c.settings) == key]
    checks = ctx.checked.get(memo) or (same[-1] if same else None)
    if checks is None and not target.pending:
        return next((c for c in reversed(stored) if c.checks), None)
    if checks is None:
        assert isinstance(target.model, CheckedModel)
        with ctx.timed(f"scoring checks: {target.spec.label}"):
            try:  # the model's own errors (a checkpoint that cannot load) name its entry
                made = target.model.scoring_checks(sample)
            except BadInput as error:
                raise ctx.located(error, target.spec) from None
        checks = dataclasses.replace(made, sample_key=sample_key, settings=current)
    ctx.checked[memo] = checks
    return checks


def _shown(value: Any) -> str:
    return "default" if value is None else str(value)


def _differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """``name old (this run: new)`` for each setting that differs."""
    if not old:
        return ["settings not recorded"]
    names = [*new, *(name for name in old if name not in new)]
    return [
        f"{name} {_shown(old.get(name))} (this run: {_shown(new.get(name))})"
        for name in names
        if old.get(name) != new.get(name)
    ]


def _refuse_mixing(
    ctx: RunContext, target: ScoresToCheck, checks: ScoringChecks, stored: list[ScoringChecks]
) -> None:
    """A stage about to score under settings other than those some of its stored scores were
    made under goes on only where batch invariance passes under each: its scores then match
    scores alone both ways.  Otherwise it is refused, saying how to finish it."""
    scored = len(target.known) - len(target.pending)
    key = settings_key(checks.settings)
    others = [c for c in stored if settings_key(c.settings) != key]
    if not (target.pending and scored and others):
        return
    label = target.spec.label
    changed = "; ".join(_differences(others[-1].settings, checks.settings))
    unsure = [c for c in (checks, *others) if not c.passes("batch invariance")]
    if not unsure:
        ctx.notes.append(
            f"{label}: {scored:,} of its scores were made under other settings ({changed}); "
            f"batch invariance passes under both, so this run's join them"
        )
        return
    why = ", ".join(
        ("this run's" if c is checks else "the stored scores'")
        + f" batch invariance {'was skipped' if not c.checks else 'is ' + c.status}"
        for c in unsure
    )
    finish = [c for c in others if c.passes("batch invariance")]
    how = (
        "finish it with the settings the stored scores were made under, or score it anew "
        "in another DB (--db)"
        if finish
        else "score it anew in another DB (--db), under settings whose checks pass"
    )
    raise BadInput(
        f"{scored:,} of its {len(target.known):,} scores were made under other scoring "
        f"settings ({changed}), and {why}: this run would mix scores made both ways; {how}",
        file=ctx.recipe.path,
        field=target.spec.field,
    )


def _stop(ctx: RunContext, found: dict[str, Checked]) -> None:
    """--strict: every warning and failure of every model's checks, in one line."""
    findings = [
        f"scoring check {c.name!r} of {label} is {c.status}: {c.finding}; fix: {c.fix}"
        for label, checked in found.items()
        if checked.checks is not None
        for c in checked.checks.warnings()
    ]
    if findings:
        written = "nothing was written"  # in the plan, or held by the run (Store.hold)
        raise BadInput(
            "; ".join(findings) + f" (--strict stops on any warning; {written})",
            file=ctx.recipe.path,
        )


def keep(
    checked: Checked | None, work: Work[str], write: Callable[[list[str], list[Any]], None]
) -> Work[str]:
    """The scores of the checks' sample, scored as the run scores them, stored with ``write``
    (they are not scored again); the work left, whose progress starts from them (the run's
    counts still say they are new)."""
    kept = checked.kept if checked is not None else {}
    if not kept:
        return work
    write(list(kept), list(kept.values()))
    shown = dataclasses.replace(work.count, stored=work.count.stored + len(kept))
    return Work(shown, [item for item in work.pending if item not in kept])


def report(ctx: RunContext, spec: ComponentSpec, model: Scored, checked: Checked | None) -> None:
    """What the model reports about its scoring, with the batch dependence its checks
    measured (stored in the run and said after it); nothing from a model that scored nothing
    here."""
    facts = model.report()
    if facts:
        facts = {**facts, **_batch_dependence(model, checked.checks if checked else None)}
        ctx.db.runs.set_report(ctx.recipe.run_key, spec.label, facts)
        ctx.notes.append(f"{spec.label}: " + ", ".join(f"{k}: {v}" for k, v in facts.items()))


def _batch_dependence(model: Scored, checks: ScoringChecks | None) -> dict[str, Any]:
    """The report's batch dependence after a scores stage: the checks' batch invariance
    figures (run or read back: nothing is scored again), else, the checks skipped, the
    model's own measurement after the run; empty for a model that is not checked."""
    if checks is None or not isinstance(model, CheckedModel):
        return {}
    unit = "step scores" if isinstance(model, ProcessRewardModel) else "inputs"
    if checks.checks:
        found = [c for c in checks.checks if c.name == "batch invariance"]
        return batch_dependence_report(found[0], BY_THE_CHECKS, unit) if found else {}
    measured = model.batch_dependence()
    return batch_dependence_report(measured, AFTER_THE_RUN, unit) if measured else {}
