"""The scoring checks a model-backed reward model or process reward model runs on a sample of
a run's items before the full scoring: the records they produce and the methods a model
implements to take part (docs/real-models.md, "Scoring checks"; a PRM's: docs/prm-models.md).

A check ends ``pass``, ``warn`` or ``fail`` (with its measured cause, and the fix: the recipe
option and the value to set); a reward model whose checks were turned off is stored as
``skipped``.  Checks hold the scoring settings they were made under (``settings``): a run
under other settings checks again (run/scoring_checks.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

ItemT = TypeVar("ItemT")
ScoreT = TypeVar("ScoreT")

Status = Literal["pass", "warn", "fail", "skipped"]
#: worst first: a model's status is that of its worst check
SEVERITY: dict[str, int] = {"fail": 3, "warn": 2, "pass": 1, "skipped": 0}

#: The checks, in the order they are shown.
CHECK_NAMES = (
    "batch invariance",
    "forward",
    "template",
    "special tokens",
    "truncation",
    "numerics",
    "determinism",
)


@dataclass(frozen=True)
class CheckSettings:
    """How a run checks its model-backed RMs and PRMs (the CLI's ``--no-scoring-checks``,
    ``--strict``, ``--show-input``, ``--scoring-checks-sample``)."""

    enabled: bool = True
    strict: bool = False
    show_input: bool = False
    sample_size: int | None = None  # None: from the stage's size (sample_size)
    seed: int = 0


@dataclass(frozen=True)
class ScoringCheck:
    """One check's outcome: ``finding`` says what was measured in a line, ``figures`` the
    numbers behind it, ``fix`` (warn and fail) the recipe option and value that fixes it."""

    name: str
    status: Status
    finding: str
    figures: dict[str, Any] = field(default_factory=dict)
    fix: str | None = None


@dataclass(frozen=True)
class ScoringChecks:
    """Every check of one model on one sample of items (``sample_key`` hashes which), under
    the scoring ``settings`` it was made with, the rendered text of one sampled item (shown
    on request, literally), the seconds the checks took and ``scores``: the sample's scores
    as the run scores them, in its order — a reward model's one float per item, a PRM's one
    list of step scores per solution (the run keeps them rather than score those items
    again; not stored with the checks).  ``unit`` names what the sample holds: ``items``
    ((prompt, response) pairs) or a PRM's ``solutions``."""

    sample_key: str
    sample_size: int
    checks: tuple[ScoringCheck, ...] = ()
    rendered_input: str | None = None
    seconds: float = 0.0
    scores: tuple[Any, ...] = field(default=(), compare=False)
    settings: dict[str, Any] = field(default_factory=dict)
    unit: str = "items"

    @property
    def status(self) -> Status:
        if not self.checks:
            return "skipped"
        return max((c.status for c in self.checks), key=SEVERITY.__getitem__)

    def warnings(self) -> list[ScoringCheck]:
        return [c for c in self.checks if c.status in ("warn", "fail")]

    def failures(self) -> list[ScoringCheck]:
        """The checks that failed: the model's scores are not to be trusted."""
        return [c for c in self.checks if c.status == "fail"]

    def passes(self, name: str) -> bool:
        """Whether check ``name`` was run and passed."""
        return any(c.name == name and c.status == "pass" for c in self.checks)

    def as_stored(self) -> dict[str, Any]:
        """What the store keeps of the checks (``scores`` are not kept)."""
        return {
            "sample_key": self.sample_key,
            "sample_size": self.sample_size,
            "seconds": self.seconds,
            "rendered_input": self.rendered_input,
            "checks": [vars(c) for c in self.checks],
            "settings": self.settings,
            "unit": self.unit,
        }

    @classmethod
    def from_stored(cls, data: dict[str, Any]) -> ScoringChecks:
        return cls(
            sample_key=data["sample_key"],
            sample_size=data["sample_size"],
            checks=tuple(ScoringCheck(**c) for c in data["checks"]),
            rendered_input=data.get("rendered_input"),
            seconds=data.get("seconds", 0.0),
            settings=data.get("settings", {}),
            unit=data.get("unit", "items"),
        )


def skipped_checks(
    sample_key: str = "", settings: dict[str, Any] | None = None, unit: str = "items"
) -> ScoringChecks:
    """What a run stores for a model whose checks were turned off (``--no-scoring-checks``):
    the sample it would have checked, and its settings."""
    return ScoringChecks(sample_key=sample_key, sample_size=0, settings=settings or {}, unit=unit)


#: Where the RM report's batch dependence came from: the scoring checks, or (checks skipped)
#: the model's first inputs of the run re-scored alone after it.
BY_THE_CHECKS = "the scoring checks (batch invariance)"
AFTER_THE_RUN = "the run's first inputs re-scored alone after it (checks skipped)"


def keep_first_scored(
    kept: list[tuple[ItemT, ScoreT]], most: int, batch: Sequence[ItemT], scores: Sequence[ScoreT]
) -> None:
    """Add to ``kept`` the start of ``batch`` with its ``scores`` until it holds ``most``: the
    first inputs a run scored, which :meth:`CheckedModel.batch_dependence` re-scores alone."""
    kept.extend(list(zip(batch, scores, strict=True))[: max(most - len(kept), 0)])


def batch_dependence_report(
    check: ScoringCheck, measured_by: str, unit: str = "inputs"
) -> dict[str, Any]:
    """The report's batch-dependence figures (``run_reward_models.report``) from a batch
    invariance check: its largest difference between a score in the run's batches and
    alone, and on how many ``unit`` (a reward model's inputs, a PRM's step scores; a check
    stored before it counted them: left out)."""
    facts: dict[str, Any] = {
        "batch dependence: max |score - score alone|": check.figures["largest difference"]
    }
    compared = [value for name, value in check.figures.items() if name.endswith(" compared")]
    if compared:
        facts[f"batch dependence: {unit} checked"] = compared[0]
    facts["batch dependence: measured by"] = measured_by
    return facts


@runtime_checkable
class CheckedModel(Protocol):
    """A reward model or process reward model that runs the scoring checks: the Hugging Face
    RMs and PRMs do, and a model-backed judge joins by implementing these three methods."""

    def scoring_settings(self) -> dict[str, Any]:
        """The settings its scores depend on beyond its key (batching, device), with those in
        the key a user would change to fix a finding (dtype, max_length, truncation side,
        template), as JSON values: stored checks are valid for these settings only.  Read
        from the options: the model need not be loaded."""
        ...

    def scoring_checks(self, sample: Sequence[Any]) -> ScoringChecks:
        """The checks on ``sample`` — what its scoring method takes: (prompt, response) pairs
        for a reward model's ``score``, solutions for a PRM's ``score_steps`` — (the model
        loaded if it was not), in the order they are shown, with one sampled item's rendered
        text, the seconds the checks took (not counting the model's loading) and the
        sample's scores as the scoring method gives them, which the run keeps (empty: it
        scores the sample again); the caller sets the sample key."""
        ...

    def batch_dependence(self) -> ScoringCheck | None:
        """For a run whose checks were skipped: the batch invariance check on the first
        inputs the scoring method scored (their scores as it returned them) re-scored alone,
        so the model's report still says how far batching moved its scores; None when it scored
        none or keeps no such sample.  A run with the checks takes the figures from them
        and never calls this."""
        ...
