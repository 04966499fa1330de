"""The scoring checks before an RM's scores stage (docs/real-models.md, "Scoring checks"): a
model-backed RM (:class:`~rmaudit.components.scoring_checks.CheckedRewardModel`) is checked on
a fixed sample of the items the run scores with it, the checks are stored with the run, and
``--strict`` stops the run on a warning before the full scoring.

The sample is the run's items drawn by a seeded generator, the longest and shortest (in
characters) always among them, so a rerun checks the same items: checks stored for the same
RM key and sample are reused, not redone.  Its size follows the stage's (:func:`sample_size`),
and the sample's scores in the run's batches are kept as the run's own.  The RM's report
takes its batch dependence from the checks' batch invariance (:func:`batch_dependence`), so
nothing is scored after the full scoring; with the checks skipped the model measures it
after the run instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from rmaudit.components import RewardModel
from rmaudit.components.keys import content_key
from rmaudit.components.scoring_checks import (
    AFTER_THE_RUN,
    BY_THE_CHECKS,
    CheckedRewardModel,
    CheckSettings,
    ScoringChecks,
    batch_dependence_report,
    skipped_checks,
)
from rmaudit.errors import BadInput
from rmaudit.recipe import ComponentSpec
from rmaudit.store.scoring_checks import ScoringChecksTable

from .context import RunContext

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


@dataclasses.dataclass(frozen=True)
class Checked:
    """What the checks before a scores stage leave it: ``kept``, the scores of its pending
    items the checks scored as the run does (response id → score), and ``checks``, the
    checks run, read back or skipped (None: the model was not checked)."""

    kept: dict[str, float] = dataclasses.field(default_factory=dict)
    checks: ScoringChecks | None = None


def before_scoring(
    ctx: RunContext,
    spec: ComponentSpec,
    model: RewardModel,
    known: Sequence[str],
    pending: Sequence[str],
) -> Checked:
    """Check ``model`` on a sample of ``known`` (the stage's items) and store the checks; a
    stage with nothing to score checks nothing unless checks were stored for this sample."""
    settings = ctx.checks
    if not isinstance(model, CheckedRewardModel) or not known or ctx.store is None:
        return Checked()
    table = ScoringChecksTable(ctx.store)
    run_id = ctx.recipe.run_key
    if not settings.enabled:
        skipped = skipped_checks()
        table.save(run_id, spec.label, model.key, "", "skipped", skipped.to_json())
        return Checked(checks=skipped)
    responses = ctx.load_responses(known)
    pairs = [(ctx.prompt(r.prompt_id), r) for r in responses]
    sizes = [len(p.text) + len(r.text) for p, r in pairs]
    size = sample_size(len(known), settings.sample_size)
    chosen = draw_sample(list(known), sizes, size, settings.seed)
    sample_key = content_key("scoring-checks", settings.seed, chosen)
    stored = table.find(model.key, sample_key)
    if stored is None and not pending:
        return Checked()
    if stored is not None:
        checks = ScoringChecks.from_json(stored)
    else:
        by_id = {r.id: pair for r, pair in zip(responses, pairs, strict=True)}
        with ctx.timed(f"scoring checks: {spec.label}"):
            try:  # the model's own errors (a checkpoint that cannot load) name its entry
                checks = model.scoring_checks([by_id[rid] for rid in chosen])
            except BadInput as error:
                raise ctx.located(error, spec) from None
        checks = dataclasses.replace(checks, sample_key=sample_key)
    table.save(run_id, spec.label, model.key, sample_key, checks.status, checks.to_json())
    _report(ctx, spec, checks, settings)
    if len(checks.scores) != len(chosen):  # read back, or a model that keeps no scores
        return Checked(checks=checks)
    todo = set(pending)
    kept = {rid: s for rid, s in zip(chosen, checks.scores, strict=True) if rid in todo}
    return Checked(kept, checks)


def batch_dependence(model: RewardModel, checks: ScoringChecks | None) -> dict[str, Any]:
    """The RM report's batch dependence after a scores stage: the checks' batch invariance
    figures (run or read back: nothing is scored again), else, the checks skipped, the
    model's own measurement after the run; empty for a model that is not checked."""
    if checks is None or not isinstance(model, CheckedRewardModel):
        return {}
    if checks.checks:
        found = [c for c in checks.checks if c.name == "batch invariance"]
        return batch_dependence_report(found[0], BY_THE_CHECKS) if found else {}
    measured = model.batch_dependence()
    return batch_dependence_report(measured, AFTER_THE_RUN) if measured else {}


def _report(
    ctx: RunContext, spec: ComponentSpec, checks: ScoringChecks, settings: CheckSettings
) -> None:
    if settings.show_input and checks.rendered_input is not None:
        ctx.notes.append(
            f"{spec.label}: one sampled input as the model reads it:\n{checks.rendered_input}"
        )
    findings = checks.warnings()
    if settings.strict and findings:
        first = findings[0]
        raise BadInput(
            f"scoring check {first.name!r} of {spec.label} is {first.status}: "
            f"{first.finding}; fix: {first.fix} (--strict stops on any warning)",
            file=ctx.recipe.path,
            field=spec.field,
        )
