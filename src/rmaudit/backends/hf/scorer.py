"""A loaded model set up for scoring: its batching resolved from the component's options and
the device, the checks of what it supports, and the engines that run it.

Defaults differ by device.  On CUDA: batches cut by a token budget
(:func:`rmaudit.backends.hf.token_budget.auto_token_budget`) with no row limit, widths padded
to multiples of 64, sequences packed without padding where the attention implementation skips
the work between them (flash-attention, flex-attention) and the model passes the packing check.
On CPU (and MPS): batches of 8 rows, no budget, no rounding, padded — the measured-best
settings there (benchmarks/README.md).

Deterministic mode runs each input in a batch of its own, padded to a width set by its own
length, with deterministic kernels: its score then depends on nothing else in the run, bit
for bit on the same hardware and software.  Batches of several rows cannot promise that —
even with fixed shapes, a matrix product's rounding can depend on a row's position (seen on
CPU in a 3-column classifier head) — so the mode trades speed for it.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import torch

from rmaudit.backends.hf import scoring
from rmaudit.backends.hf.engine import Encode, Engine, Limits
from rmaudit.backends.hf.inputs import ModelInput
from rmaudit.backends.hf.token_budget import auto_token_budget
from rmaudit.errors import BadInput

logger = logging.getLogger(__name__)

GPU_PAD_MULTIPLE = 64
CPU_BATCH_SIZE = 8


def _pad_not_ending(rows: Sequence[ModelInput]) -> int:
    """An id that ends none of the rows (see scoring.classifier_forward)."""
    last = {row.ids[-1] for row in rows}
    return next(i for i in range(len(last) + 1) if i not in last)


def _compile(module, setting: bool | str, field: str = "compile") -> None:
    backend = "inductor" if setting is True else setting
    known = torch._dynamo.list_backends(exclude_tags=())
    if backend not in known:
        raise BadInput(
            f"not a torch.compile backend (known: {', '.join(sorted(known))})",
            field=field,
            value=backend,
        )
    module.compile(backend=backend)


@dataclasses.dataclass(frozen=True)
class ProbeFindings:
    """What a scorer's load-time probes found about the model's architecture (not its
    dtype): whether it gives per-token outputs (a decoder classifier's head runs alone on
    the pooled tokens; a causal LM's log-probabilities always do), and whether packed
    sequences get the outputs they get alone."""

    head_alone: bool
    packing_passes: bool


class Scorer:
    """``kind`` 'classifier': logits at each row's ``pool_at``; 'logprobs': a causal LM's
    log-probabilities of each row's tokens from ``start`` on; 'positions': the per-token
    logits at each row's ``read_at`` (a token classifier's labels, or the ``columns`` of a
    causal LM's vocabulary); ``findings``: the probes' findings on another copy of the same
    model, taken rather than probed again."""

    #: the positions of a row whose outputs are read (its pooled token, or its scored tokens)
    read: Callable[[Any], Sequence[int]]
    #: how the outputs are computed, and whether that bypasses the model's own forward (a
    #: decoder classifier's base model, then its score head at the pooled tokens)
    path: str
    bypasses_forward: bool

    def __init__(
        self,
        model,
        options: Any,
        *,
        kind: Literal["classifier", "logprobs", "positions"],
        max_length: int | None,
        filler_id: int,
        findings: ProbeFindings | None = None,
        columns: Sequence[int] | None = None,
    ) -> None:
        self.model = model
        self.options = options
        self.kind, self.filler_id, self.max_length = kind, filler_id, max_length
        self.columns = columns
        device = next(model.parameters()).device
        cuda = device.type == "cuda"
        if options.deterministic:
            scoring.deterministic_kernels()
        pad_id, compiled, per_token = (
            self._classifier(filler_id, findings)
            if kind == "classifier"
            else self._logprobs(filler_id)
            if kind == "logprobs"
            else self._positions(filler_id)
        )
        self.packing_passes = per_token is not None and (
            findings.packing_passes if findings else scoring.packing_works(per_token, model)
        )
        self.findings = ProbeFindings(per_token is not None, self.packing_passes)
        wanted = options.packing if options.packing is not None else scoring.varlen_attention(model)
        self.packed = bool(wanted and self.packing_passes and not options.deterministic)
        if options.packing and not self.packed:
            logger.warning(
                "packing asked for but %s; scoring padded batches", self._why_not_packed()
            )
        if options.compile:
            _compile(compiled, options.compile)
        pad_multiple = options.pad_to_multiple or (GPU_PAD_MULTIPLE if cuda else 1)
        budget = options.max_batch_tokens or auto_token_budget(
            model,
            device,
            max_length=max_length,
            logits=kind == "logprobs" or columns is not None,
            pad_multiple=pad_multiple,
        )
        batch_size = (
            options.batch_size
            if options.batch_size is not None
            else (None if cuda else CPU_BATCH_SIZE)
        )
        if options.deterministic:  # alone, in a shape set by its own length: see the module doc
            batch_size, budget = 1, None
        # a pack's filler segments need no pad id, and a pad id in unmasked inputs makes
        # transformers warn
        checkpoint_pad = model.config.get_text_config().pad_token_id
        pack_filler = next(i for i in (0, 1) if i != checkpoint_pad)
        self.engine = Engine(
            device,
            Limits(batch_size, budget, pad_multiple, self.packed),
            pad_id=pack_filler if self.packed else pad_id,
            read_positions=self.read,
            prefetch=options.prefetch,
        )
        self.alone = Engine(
            device, Limits(1, None), pad_id=pad_id, read_positions=self.read, prefetch=0
        )

    def _classifier(self, filler_id: int, findings: ProbeFindings | None):
        """(pad id, module to compile, per-token outputs for the packing check or None)."""
        model = self.model
        scoring.float32_head(model)
        base = scoring.base_model(model)
        if findings is None:
            head = scoring.decoder_head(model)
        else:
            head = model.score if findings.head_alone else None
        checkpoint_pad = model.config.get_text_config().pad_token_id
        own_pad_trick = head is None and checkpoint_pad is None
        self.forward = scoring.classifier_forward(model, head, own_pad_trick=own_pad_trick)
        self.read = lambda row: [row.pool_at]
        pad_id: Any = (
            _pad_not_ending
            if own_pad_trick
            else checkpoint_pad
            if checkpoint_pad is not None
            else filler_id
        )
        self.bypasses_forward = head is not None
        if head is None:  # the model's own forward: padded batches only
            self.path = "the model's own forward and pooling"
            return pad_id, model, None
        self.path = "its base model, then its score head at each input's last token"
        return (
            pad_id,
            base,
            lambda ids, positions: (
                base(ids, position_ids=positions, use_cache=False).last_hidden_state
            ),
        )

    def _logprobs(self, filler_id: int):
        model = self.model
        self.forward = scoring.logprob_forward(model)
        self.read = lambda row: range(row.start - 1, len(row) - 1)
        self.path, self.bypasses_forward = "the model's own forward (its logits)", False
        return (
            filler_id,
            model,
            lambda ids, positions: model(ids, position_ids=positions, use_cache=False).logits,
        )

    def _positions(self, filler_id: int):
        model = self.model
        if self.columns is None:  # a token classifier's head, as a sequence classifier's
            scoring.float32_head(model)
        self.forward = scoring.position_logits_forward(model, self.columns)
        self.read = lambda row: row.read_at
        return (
            filler_id,
            model,
            lambda ids, positions: model(ids, position_ids=positions).logits,
        )

    def in_dtype(self, dtype: torch.dtype) -> Scorer:
        """This scorer on a copy of its model cast to ``dtype`` (the model itself untouched:
        casting it down and back would round its weights), uncompiled, with this one's
        findings: the probes ask about the architecture, which the cast does not change."""
        return Scorer(
            copy.deepcopy(self.model).to(dtype),
            self.options.model_copy(update={"compile": False}),
            kind=self.kind,
            max_length=self.max_length,
            filler_id=self.filler_id,
            findings=self.findings,
            columns=self.columns,
        )

    def run(
        self, order: Sequence[int], encode: Encode, *, alone: bool = False
    ) -> dict[int, np.ndarray]:
        """Outputs per item (see Engine.run); ``alone``: each item in a batch of its own,
        unpadded — the reference that batch dependence is measured against.  The model runs
        in eval mode, whatever its own code switched on since it loaded (dropout modules)."""
        self.model.eval()
        with torch.inference_mode():
            return (self.alone if alone else self.engine).run(order, encode, self.forward)

    def _why_not_packed(self) -> str:
        if self.options.deterministic:
            return "deterministic mode runs each input alone"
        if not self.packing_passes:
            return "this model's outputs change when its inputs are packed"
        return "the attention implementation would attend through a dense mask"

    def report(self) -> dict[str, Any]:
        limits, stats = self.engine.limits, self.engine.stats
        config = self.model.config
        batching = f"at most {limits.max_tokens} tokens" if limits.max_tokens else "no token budget"
        if limits.batch_size:
            batching += f" and {limits.batch_size} rows"
        batching += " per batch, " + (
            "packed without padding"
            if self.packed
            else f"padded to multiples of {limits.pad_multiple}"
        )
        facts: dict[str, Any] = {
            "dtype": str(next(self.model.parameters()).dtype).removeprefix("torch."),
            "attention": getattr(config, "_attn_implementation", None) or "default",
            "batching": batching,
            "batch shapes": len(stats.shapes),
            "padding-free": "yes" if self.packed else f"no: {self._why_not_packed()}",
        }
        if stats.oom_backoffs:
            facts["out-of-memory back-offs"] = stats.oom_backoffs
        if self.options.compile:
            facts["compiled"] = "inductor" if self.options.compile is True else self.options.compile
        if self.options.deterministic:
            facts["deterministic"] = "each input alone, in a shape set by its length"
        return facts
