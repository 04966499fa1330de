"""Base classes for every plugin kind, and the records they exchange.

A component is a class with a unique ``name``, a pydantic ``Options`` model (validated from the
recipe) and a docstring whose first line describes it.  The host builds it with validated options;
its identity — kind, name, ``version`` and options — is hashed into the keys of everything it
produces, so changing an option means new work and an unchanged component never redoes any
(docs/architecture.md, "Content-addressed, resumable store").  The option fields declare what of
them is identity (:mod:`rmaudit.components.options`).

Stages call components on batches (``generate``, ``label``, ``score``): a component may
vectorise across the batch but must return the same value for an item whatever batch
it arrives in.

The classes live in ``kinds`` (the plugin kinds), ``records`` (what they exchange) and
``metric`` (metrics, their inputs and outputs); import them from here.
"""

from rmaudit.store.records import MetricValue
from rmaudit.store.verdicts import VERDICTS, PairVerdict, Verdict

from .judging import JudgedPairs, PairShown, shown_key
from .kinds import (
    BenchmarkSource,
    Component,
    ComponentOptions,
    Embedder,
    NoOptions,
    Oracle,
    PairSource,
    PromptSampler,
    PromptSource,
    ReferencePolicy,
    RewardModel,
    ShiftPerturber,
)
from .metric import (
    RUN_LEVEL,
    CurveValue,
    LabelDesign,
    Metric,
    MetricInputs,
    MetricOutput,
    PairInputs,
    PerPair,
    StepInputs,
    StudyInputs,
)
from .process import STEP_LABELS, LabelledSolution, ProcessRewardModel, Solution, SolutionSource
from .records import (
    PROVENANCE_PARTS,
    BenchmarkContent,
    BenchmarkData,
    Generation,
    OracleLabel,
    PairLoad,
    Prompt,
    Provenance,
    RejectedRecord,
    Response,
    Source,
    SourcedPair,
)

#: every plugin kind's base class by its ``kind``
KINDS: dict[str, type[Component]] = {
    cls.kind: cls
    for cls in (
        PromptSource,
        PromptSampler,
        Embedder,
        ReferencePolicy,
        Oracle,
        RewardModel,
        ProcessRewardModel,
        ShiftPerturber,
        Metric,
        BenchmarkSource,
    )
}

__all__ = [
    "BenchmarkContent",
    "BenchmarkData",
    "BenchmarkSource",
    "Component",
    "ComponentOptions",
    "CurveValue",
    "LabelDesign",
    "Embedder",
    "Generation",
    "JudgedPairs",
    "LabelledSolution",
    "KINDS",
    "Metric",
    "MetricInputs",
    "MetricOutput",
    "MetricValue",
    "NoOptions",
    "Oracle",
    "OracleLabel",
    "PairInputs",
    "PairLoad",
    "PairShown",
    "PairVerdict",
    "PerPair",
    "PairSource",
    "ProcessRewardModel",
    "PROVENANCE_PARTS",
    "Prompt",
    "Provenance",
    "PromptSampler",
    "PromptSource",
    "RUN_LEVEL",
    "ReferencePolicy",
    "RejectedRecord",
    "Response",
    "RewardModel",
    "ShiftPerturber",
    "Source",
    "STEP_LABELS",
    "Solution",
    "SolutionSource",
    "SourcedPair",
    "StepInputs",
    "StudyInputs",
    "VERDICTS",
    "Verdict",
    "shown_key",
]
