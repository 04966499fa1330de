"""The typed rows the store returns for a benchmark's items (the rest are in
:mod:`rmaudit.store.records`, a run's preference pairs in :mod:`rmaudit.store.pair_records`):
prompts, responses, their labels and scores, each JSON column parsed
(:mod:`rmaudit.store.json_columns`)."""

from __future__ import annotations

from typing import Any, NamedTuple


class SelectionPrompt(NamedTuple):
    """A prompt of a stored selection, at its position."""

    position: int
    id: str
    text: str
    #: the prompt's metadata
    meta: dict[str, Any]


class LabelledResponse(NamedTuple):
    """A benchmark response with its oracle label (the label columns None where a label
    design left it unlabelled) and, on a budgeted benchmark, its inclusion probability."""

    id: str
    sample_index: int
    text: str
    meta: dict[str, Any]
    score: float | None
    #: the judge's samples (empty: unlabelled)
    samples: tuple[float, ...]
    cost_usd: float | None
    prompt_tokens: int | None
    completion_tokens: int | None
    inclusion_probability: float | None


class ScoredLabel(NamedTuple):
    """A benchmark response scored by an RM, with its oracle label: every scored response of a
    budgeted benchmark (the label None where its design did not draw the response), else the
    labelled ones (inclusion probability None: every response is in)."""

    prompt_id: str
    rm_score: float
    oracle_score: float | None
    inclusion_probability: float | None


class LabelledItem(NamedTuple):
    """A labelled benchmark response, in benchmark order."""

    prompt_id: str
    response_id: str
    score: float
    #: the response's metadata
    meta: dict[str, Any]


class Inclusion(NamedTuple):
    """A budgeted benchmark's response in its label design."""

    probability: float
    #: whether the design drew it for a label
    drawn: bool


class StoredResponse(NamedTuple):
    """A stored response (``responses``): a policy's ``sample_index``-th sample for a
    prompt, or (with no policy) a text from a pair file or a shift."""

    id: str
    prompt_id: str
    policy_key: str | None
    sample_index: int | None
    text: str
    #: the response's metadata
    meta: dict[str, Any]


class StoredPrompt(NamedTuple):
    """A stored prompt (``prompts``): its id, text and metadata."""

    id: str
    text: str
    meta: dict[str, Any]


class StoredLabel(NamedTuple):
    """An oracle's label of a response (``oracle_labels``): its score, the judge's samples and
    what the call cost."""

    response_id: str
    oracle_key: str
    score: float
    samples: tuple[float, ...]
    cost_usd: float | None
    prompt_tokens: int | None
    completion_tokens: int | None
