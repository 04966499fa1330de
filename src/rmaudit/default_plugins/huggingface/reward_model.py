"""What the Hugging Face reward models share: scoring in batches through a loaded scorer, the
first call's inputs encoded while the weights load, the report's truncation figures, the
scoring checks and the batch dependence a run whose checks were skipped reports."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from rmaudit.components import Prompt, Response, RewardModel
from rmaudit.components.scoring_checks import ScoringCheck, ScoringChecks, keep_first_scored
from rmaudit.default_plugins.huggingface.common import (
    _HFComponent,
    _ScoringOptionsT,
    _TruncationCount,
    items_per_call,
    position_limit,
    scoring_settings,
    tokenizer_limit,
)


class Encoding:
    """``encode()`` in a thread of its own, its result (or error) taken by :meth:`result`;
    waited for on an event, not ``Thread.join`` alone (CPython issue 90882)."""

    def __init__(self, encode: Callable[[], list[Any]]) -> None:
        self._done = threading.Event()
        self._outputs: list[Any] = []
        self._error: BaseException | None = None
        threading.Thread(
            target=self._run, args=(encode,), name="rmaudit-hf-encoding", daemon=True
        ).start()

    def _run(self, encode: Callable[[], list[Any]]) -> None:
        try:
            self._outputs = encode()
        except BaseException as error:  # raised by result(), in the caller's thread
            self._error = error
        finally:
            self._done.set()

    def wait(self) -> None:
        self._done.wait()

    def result(self) -> list[Any]:
        self.wait()
        if self._error is not None:
            raise self._error
        return self._outputs


class _HFRewardModel(_HFComponent[_ScoringOptionsT], RewardModel[_ScoringOptionsT]):
    """What the Hugging Face RMs share: scoring in batches through a loaded
    :class:`rmaudit.backends.hf.scorer.Scorer`, a count of truncated inputs, the scoring
    checks, and the batch dependence a run whose checks were skipped reports — the first
    ``batch_dependence_sample`` inputs re-scored alone (one per batch, unpadded) after it."""

    # set when the model loads (_load_models)
    tokenizer: Any
    scorers: list[Any]
    max_length: int | None
    use_chat: bool
    template: str | None
    input_format: str

    def __init__(self, options=None) -> None:
        super().__init__(options)
        self.truncation = _TruncationCount()
        self._sample: list[tuple[tuple[Prompt, Response], float]] = []

    def preferred_batch_items(self) -> int | None:
        return items_per_call(self.options)

    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        scores = self.score_counted(batch)
        keep_first_scored(self._sample, self.options.batch_dependence_sample, batch, scores)
        return scores

    def score_counted(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        """``score``, counted in the report's truncation figures but left out of the batch
        dependence sample: the scoring checks score their sample so, as the run keeps those
        scores but the checks compare them with scores alone themselves."""
        encoded = self._load_tokenising(batch)
        scores, truncated = self._scores(batch, alone=False, encoded=encoded)
        self.truncation.add(
            f"{self.name} {self.options.model}",
            len(batch),
            truncated,
            self.max_length,
            self.options.truncation_side,
        )
        return scores

    def _load_models(self) -> None:
        self._load_tokenizer()
        self._load_weights()

    def _load_tokenizer(self) -> None:
        """What encoding an input needs: the tokenizer, the template, the length limit (from
        the model's config, read alone)."""
        raise NotImplementedError

    def _load_weights(self) -> None:
        """The model's weights and its scorers (after :meth:`_load_tokenizer`)."""
        raise NotImplementedError

    def _load_tokenising(self, batch: Sequence[tuple[Prompt, Response]]) -> list[Any] | None:
        """Load the model(s) on first use with ``batch`` encoded meanwhile, in a thread of
        its own (the weights load mostly outside the GIL): ``encode_many(batch)``, or None
        where they were loaded already."""
        if self._loaded:
            return None
        self._load_tokenizer()
        encoding = Encoding(lambda: self.encode_many(batch))
        try:
            self._load_weights()
        except BaseException:
            encoding.wait()
            raise
        encoded = encoding.result()
        self._loaded = True
        return encoded

    def encode_many(self, pairs: Sequence[tuple[Prompt, Response]]) -> list[Any]:
        """Each pair's model inputs, as the model's ``_scores`` takes them."""
        raise NotImplementedError

    def _scores(
        self,
        batch: Sequence[tuple[Prompt, Response]],
        *,
        alone: bool,
        encoded: list[Any] | None = None,
    ) -> tuple[list[float], int]:
        """Scores of ``batch`` in order, and how many inputs were truncated; ``alone``: each
        input in a batch of its own; ``encoded``: ``encode_many(batch)``, made already."""
        raise NotImplementedError

    def report(self) -> dict[str, Any]:
        if not self._loaded:
            return {}
        return {
            "inputs scored": self.truncation.scored,
            "inputs truncated": self.truncation.truncated,
            "max_length": self.max_length,
            "truncation side": self.options.truncation_side,
            "input format": self.input_format,
            **self._model_report(),
        }

    def batch_dependence(self) -> ScoringCheck | None:
        """The batch invariance check on the first ``batch_dependence_sample`` inputs
        ``score`` scored, re-scored alone (for a run whose scoring checks were skipped)."""
        if not self._sample:
            return None
        from rmaudit.default_plugins.huggingface.checks import batch_invariance_of

        pairs = [pair for pair, _ in self._sample]
        return batch_invariance_of(self, pairs, [score for _, score in self._sample])

    def _model_report(self) -> dict[str, Any]:
        """Facts specific to this kind of RM, added to the report."""
        raise NotImplementedError

    def scoring_checks(self, sample: Sequence[tuple[Prompt, Response]]) -> ScoringChecks:
        """The scoring checks on ``sample`` (docs/real-models.md, "Scoring checks")."""
        from rmaudit.default_plugins.huggingface.checks import run_checks

        self._load()  # before the checks' clock starts: the scoring would load it anyway
        return run_checks(
            self,
            sample,
            position_limit=position_limit(self.scorers[0].model.config),
            tokenizer_limit=tokenizer_limit(self.tokenizer),
        )

    def scoring_settings(self) -> dict[str, Any]:
        return scoring_settings(self.options)

    def scored_ids(self, pairs: Sequence[tuple[Prompt, Response]]) -> list[list[int]]:
        """Each pair's token ids as the model reads them (after truncation)."""
        raise NotImplementedError

    def own_forward_scores(self, pairs: Sequence[tuple[Prompt, Response]]) -> list[float] | None:
        """Scores through the model's own forward, where the scorer bypasses it; else None."""
        return None
