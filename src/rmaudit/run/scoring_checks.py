"""The scoring checks before an RM's scores stage (docs/real-models.md, "Scoring checks"): a
model-backed RM (:class:`~rmaudit.components.scoring_checks.CheckedRewardModel`) is checked on
a fixed sample of the items the run scores with it, the checks are stored with the run, and
``--strict`` stops the run on a warning before the full scoring.

The sample is the run's items drawn by a seeded generator, the longest and shortest (in
characters) always among them, so a rerun checks the same items: checks stored for the same
RM key and sample are reused, not redone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from rmaudit.components import RewardModel
from rmaudit.components.keys import content_key
from rmaudit.components.scoring_checks import CheckedRewardModel, ScoringChecks, skipped_checks
from rmaudit.errors import BadInput
from rmaudit.recipe import ComponentSpec
from rmaudit.store.scoring_checks import ScoringChecksTable

from .context import RunContext


@dataclasses.dataclass(frozen=True)
class CheckSettings:
    """How a run checks its RMs (the CLI's ``--no-preflight``, ``--strict``, ``--show-input``)."""

    enabled: bool = True
    strict: bool = False
    show_input: bool = False
    sample_size: int = 64
    seed: int = 0


_SETTINGS: ContextVar[CheckSettings | None] = ContextVar("scoring_checks", default=None)


@contextmanager
def check_settings(settings: CheckSettings) -> Iterator[None]:
    """Runs started inside check with ``settings`` (the CLI sets them once per command)."""
    token = _SETTINGS.set(settings)
    try:
        yield
    finally:
        _SETTINGS.reset(token)


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


def before_scoring(
    ctx: RunContext, spec: ComponentSpec, model: RewardModel, known: Sequence[str], pending: int
) -> None:
    """Check ``model`` on a sample of ``known`` (the stage's items) and store the checks; a
    stage with nothing to score checks nothing unless checks were stored for this sample."""
    settings = _SETTINGS.get() or CheckSettings()
    if not isinstance(model, CheckedRewardModel) or not known or ctx.store is None:
        return
    table = ScoringChecksTable(ctx.store)
    run_id = ctx.recipe.run_key
    if not settings.enabled:
        table.save(run_id, spec.label, model.key, "", "skipped", skipped_checks().to_json())
        return
    responses = ctx.load_responses(known)
    pairs = [(ctx.prompt(r.prompt_id), r) for r in responses]
    sizes = [len(p.text) + len(r.text) for p, r in pairs]
    chosen = draw_sample(list(known), sizes, settings.sample_size, settings.seed)
    sample_key = content_key("scoring-checks", settings.seed, chosen)
    stored = table.find(model.key, sample_key)
    if stored is None and not pending:
        return
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
