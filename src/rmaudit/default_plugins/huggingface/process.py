"""What the Hugging Face process reward models share (``hf-prm-classifier``,
``hf-prm-step-tag``): their options, loading, each solution written with a marker after every
step (:mod:`rmaudit.backends.hf.steps`), scoring in batches through a
:class:`~rmaudit.backends.hf.scorer.Scorer`, each step's score read at its marker, and the
scoring checks (docs/prm-models.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, ClassVar, Literal, TypeVar

import numpy as np
from pydantic import Field

from rmaudit.backends.hf import steps
from rmaudit.components.options import OPERATIONAL
from rmaudit.components.process import ProcessRewardModel, Solution
from rmaudit.components.records import Source
from rmaudit.components.scoring_checks import ScoringCheck, ScoringChecks, keep_first_scored
from rmaudit.default_plugins.huggingface.common import (
    ScoringOptions,
    _HFComponent,
    _max_length,
    _TruncationCount,
    items_per_call,
    scoring_settings,
)
from rmaudit.errors import BadInput


def format_field(default: Literal["chat", "plain"]) -> Any:
    return Field(
        default,
        description="'chat': the question as the user's message and the steps, each with "
        "its marker, as the assistant's, rendered by the chat template; 'plain': the "
        "question, after_question, then the steps with their markers",
    )


def system_prompt_field(default: str) -> Any:
    return Field(default, description="the system message of format 'chat' (empty: none)")


def after_question_field(default: str) -> Any:
    return Field(default, description="text between the question and the first step (plain)")


class ProcessScoringOptions(ScoringOptions):
    """Options of the Hugging Face process reward models beside the scoring ones: how a
    solution is tokenised, and what happens to one longer than ``max_length``."""

    truncation_side: Literal["left"] = Field(
        "left",
        description="a solution longer than max_length: each step whose marker lies past "
        "it is read from the max_length tokens that end at its marker (its earliest "
        "context dropped); the count is in the report and the truncation check",
    )
    tokenize: Literal["whole", "pieces"] = Field(
        "whole",
        description="'whole': the solution's text tokenised at once (Qwen2.5-Math-PRM's and "
        "Math-Shepherd's code); 'pieces': the question, each step and each marker on "
        "their own, the ids joined (TRL's PRM trainer), so a marker never merges with "
        "its neighbours",
    )
    format: Literal["chat", "plain"] = format_field("chat")
    system_prompt: str = system_prompt_field("")
    after_question: str = after_question_field("")
    items_per_call: Annotated[int | None, OPERATIONAL] = Field(
        None,
        ge=1,
        description="solutions the step scores stage hands each score_steps() call, cut "
        "into forward passes by batch_size and max_batch_tokens; default: 4096 on a GPU "
        "(tokenising overlaps the model within a call, not across calls), else the "
        "recipe's batch_size",
    )
    batch_dependence_sample: Annotated[int, OPERATIONAL] = Field(
        16,
        ge=0,
        description="solutions re-scored alone after a run whose scoring checks were "
        "skipped (--no-scoring-checks), to report how far batching moved their step "
        "scores (the checks measure it otherwise); 0: not measured",
    )


_OptionsT = TypeVar("_OptionsT", bound=ProcessScoringOptions)

#: The first cut step's warning (``_TruncationCount``).
STEPS_CUT = (
    "solutions longer than max_length={max_length} tokens: each step past them is read from "
    "the max_length tokens that end at its marker, without the start of its solution; the "
    "count is in the PRM's report"
)


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=-1, keepdims=True)


class _HFProcessRewardModel(_HFComponent[_OptionsT], ProcessRewardModel[_OptionsT]):
    """A Hugging Face PRM: each solution written by its ``layout`` with a marker after each
    step, the model's logits at the markers read through a 'positions' scorer, and a step's
    score the softmax of a marker's logits at ``score_column``.  A solution longer than
    ``max_length`` is read from its first ``max_length`` tokens, and each step past them
    from the ``max_length`` tokens that end at its marker (counted: the report, and the
    truncation check).  The first ``batch_dependence_sample`` solutions scored are kept for
    a run whose checks were skipped (:meth:`batch_dependence`)."""

    #: the option naming the marker (for errors and the checks' fixes)
    marker_option: ClassVar[str]
    # set when the tokenizer loads (_load_tokenizer)
    tokenizer: Any
    layout: steps.StepLayout
    accepted: frozenset[int]
    columns: list[int] | None
    input_format: str
    # set when the model loads (_load_models)
    model: Any
    scorer: Any
    max_length: int | None
    score_column: int

    def __init__(self, options=None) -> None:
        super().__init__(options)
        self.truncation = _TruncationCount(STEPS_CUT)
        self.steps_scored = 0
        self.steps_cut = 0
        self._sample: list[tuple[Solution, list[float]]] = []
        self._tokenizer_loaded = False

    # -- loading ------------------------------------------------------------------------

    def check_ready(self) -> None:
        """The checkpoint reachable, and its tokenizer holding the marker (and the tokens
        read): in the run's plan, so a marker the tokenizer lacks stops the run before
        anything is written, whether or not the scoring checks run."""
        super().check_ready()
        self._load_tokenizer()

    def _load_tokenizer(self) -> None:
        """The tokenizer, the solutions' layout and the ids of the marker and of the tokens
        read, each checked (once, before the larger model loads)."""
        if self._tokenizer_loaded:
            return

        o = self.options
        self.tokenizer = self._model_tokenizer()
        chat = o.format == "chat"
        template, self.input_format = (
            None,
            "plain text: the question, then each step and its marker",
        )
        if chat:
            _, template, self.input_format = self._chat_template(self.tokenizer, required=True)
        self.layout = self._layout(chat, template)
        self.accepted = steps.accepted_ids(
            self.tokenizer, self.layout.marker, field=self.marker_option
        )
        self.columns = self._vocabulary_columns()
        self._tokenizer_loaded = True

    def _load_models(self) -> None:
        from rmaudit.backends.hf import runtime
        from rmaudit.backends.hf.scorer import Scorer

        o = self.options
        self._load_tokenizer()
        self.model = self._load_scoring_model()
        self.max_length = _max_length(o.max_length, self.tokenizer, self.model.config)
        self.scorer = Scorer(
            self.model,
            o,
            kind="positions",
            max_length=self.max_length,
            filler_id=runtime.filler_token_id(self.tokenizer),
            columns=self.columns,
        )

    def _layout(self, chat: bool, template: str | None) -> steps.StepLayout:
        raise NotImplementedError

    def _vocabulary_columns(self) -> list[int] | None:
        """The vocabulary entries whose logits are read (a causal LM's); None: all the
        model's per-token outputs (a token classifier's labels)."""
        return None

    def _load_scoring_model(self) -> Any:
        raise NotImplementedError

    # -- scoring ------------------------------------------------------------------------

    def preferred_batch_items(self) -> int | None:
        return items_per_call(self.options)

    def check_solutions(self, solutions: Sequence[Solution]) -> None:
        for solution in solutions:
            if not solution.steps:
                raise BadInput(
                    "a solution with no steps has no step to score",
                    field="steps",
                    value=solution.question[:80],
                )

    def score_steps(self, batch: Sequence[Solution]) -> list[list[float]]:
        scores = self.score_counted(batch)
        keep_first_scored(self._sample, self.options.batch_dependence_sample, batch, scores)
        return scores

    def score_counted(self, batch: Sequence[Solution]) -> list[list[float]]:
        """``score_steps``, counted in the report but left out of the batch dependence
        sample (the checks score their sample so)."""
        self.check_solutions(batch)
        self._load()
        scores, encoded = self._step_scores(batch, alone=False)
        cut = [len(e.past(self.max_length)) for e in encoded]
        self.truncation.add(
            f"{self.name} {self.options.model}",
            len(batch),
            sum(1 for count in cut if count),
            self.max_length,
            "left",
        )
        self.steps_scored += sum(len(s) for s in scores)
        self.steps_cut += sum(cut)
        return scores

    def encode_many(self, batch: Sequence[Solution]) -> list[steps.EncodedSolution]:
        """Each solution's token ids and its markers' tokens, from one tokenizer call."""
        rendered = [steps.render(solution, self.layout, self.tokenizer) for solution in batch]
        return steps.encode(rendered, self.layout, self.tokenizer)

    def _step_scores(
        self, batch: Sequence[Solution], *, alone: bool
    ) -> tuple[list[list[float]], list[steps.EncodedSolution]]:
        """Each solution's step scores, in order, and its encoding; ``alone``: each input
        in a batch of its own.  The first ``max_length`` tokens of every solution run
        first; the steps past them then run from the windows that end at their markers."""
        from rmaudit.backends.hf.inputs import ModelInput

        limit = self.max_length
        encoded: dict[int, steps.EncodedSolution] = {}

        def heads(indices: list[int]) -> list[ModelInput]:
            encoded.update(zip(indices, self.encode_many([batch[i] for i in indices]), strict=True))
            rows = []
            for i in indices:
                ids, read_at = encoded[i].ids, encoded[i].read_at
                kept = tuple(at for at in read_at if limit is None or at < limit)
                rows.append(ModelInput(ids if limit is None else ids[:limit], read_at=kept))
            return rows

        # tokenised longest first
        order = sorted(range(len(batch)), key=lambda i: (-batch[i].size, i))
        read = self.scorer.run(order, heads, alone=alone)
        windows = [(i, step) for i in range(len(batch)) for step in encoded[i].past(limit)]

        def window_rows(indices: list[int]) -> list[ModelInput]:
            width = limit or 0  # windows exist only under a limit
            rows = []
            for index in indices:
                i, step = windows[index]
                end = encoded[i].read_at[step] + 1
                rows.append(ModelInput(encoded[i].ids[end - width : end], read_at=(width - 1,)))
            return rows

        tails = self.scorer.run(range(len(windows)), window_rows, alone=alone) if windows else {}
        logits = {i: list(read[i]) for i in range(len(batch))}
        for index, (i, _) in enumerate(windows):  # in step order, after the head's steps
            logits[i].extend(tails[index])
        scores = [
            [float(p) for p in _softmax(np.array(logits[i]))[:, self.score_column]]
            for i in range(len(batch))
        ]
        return scores, [encoded[i] for i in range(len(batch))]

    # -- what a run shows ---------------------------------------------------------------

    def sources(self) -> tuple[Source, ...]:
        return (Source("scores", "model", self.options.model, self.options.revision or ""),)

    def report(self) -> dict[str, Any]:
        if not self._loaded:
            return {}
        return {
            "solutions scored": self.truncation.scored,
            "steps scored": self.steps_scored,
            "solutions over max_length": self.truncation.truncated,
            "steps read from a cut input": self.steps_cut,
            "max_length": self.max_length,
            "input format": self.input_format,
            "tokenize": self.options.tokenize,
            **self.scorer.report(),
        }

    def scoring_settings(self) -> dict[str, Any]:
        """The reward models' settings (``common.scoring_settings``) and ``tokenize``, the
        step markers check's fix."""
        return {**scoring_settings(self.options), "tokenize": self.options.tokenize}

    def scoring_checks(self, sample: Sequence[Solution]) -> ScoringChecks:
        """The PRM scoring checks on ``sample`` (docs/prm-models.md, "Scoring checks")."""
        from rmaudit.default_plugins.huggingface.process_checks import run_checks

        self.check_solutions(sample)
        self._load()  # before the checks' clock starts: the scoring would load it anyway
        return run_checks(self, sample)

    def batch_dependence(self) -> ScoringCheck | None:
        """The batch invariance check on the first ``batch_dependence_sample`` solutions
        ``score_steps`` scored, re-scored alone (for a run whose checks were skipped)."""
        if not self._sample:
            return None
        from rmaudit.default_plugins.huggingface.process_checks import batch_invariance_of

        solutions = [solution for solution, _ in self._sample]
        return batch_invariance_of(self, solutions, [scores for _, scores in self._sample])
