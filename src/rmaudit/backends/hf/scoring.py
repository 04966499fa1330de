"""Scoring forward passes — a sequence classifier's pooled logits, a causal LM's token
log-probabilities — on padded or packed batches, and the checks that choose between them.

Decoder classifiers (GPT-2, Llama and every model built on transformers' generic
``...ForSequenceClassification``: a base model, then a linear ``score`` head applied to
each token and read at the last one) run as base model → the pooled tokens' hidden states
→ head, so only the pooled tokens go through the head and a pack of many sequences is
pooled at each sequence's end.  Whether a model really is such a decoder, and whether its
attention keeps packed sequences apart, is not assumed from its class but checked once at
load on a few random sequences (:func:`matches`); a model that fails runs padded, through
its own forward.

Under half precision the classifier head runs in float32: a bf16 score keeps 8 bits of
mantissa (steps of 1/64 at scores near 3), enough to tie or flip near-tied pairs.
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Callable, Sequence
from contextlib import contextmanager

import torch

from rmaudit.backends.hf.inputs import Batch

logger = logging.getLogger(__name__)

#: Attention implementations whose kernels skip the blocks between packed sequences; with
#: others (sdpa, eager) a pack attends through a dense block-diagonal mask and wastes the
#: attention work between sequences, so packing is off unless asked for.
VARLEN_ATTENTION = ("flash_attention_2", "flash_attention_3", "flex_attention")
#: Rows of logits log-softmaxed at once (bounds float32 memory to ~2**26 entries per chunk).
LOGSOFTMAX_ENTRIES = 2**26


def varlen_attention(model) -> bool:
    implementation = getattr(model.config, "_attn_implementation", None) or ""
    return implementation in VARLEN_ATTENTION or "flash" in implementation


def _probe_sequences(model, lengths=(11, 5, 8)) -> list[torch.Tensor]:
    """Random token ids (fixed seed), none the checkpoint's pad id, on the model's device."""
    config = model.config.get_text_config()
    generator = torch.Generator().manual_seed(0)
    vocab = config.vocab_size
    pad = config.pad_token_id
    sequences = []
    for length in lengths:
        ids = torch.randint(0, vocab, (length,), generator=generator)
        if pad is not None:
            ids[ids == pad] = (pad + 1) % vocab
        sequences.append(ids.to(next(model.parameters()).device))
    return sequences


def matches(actual: torch.Tensor, expected: torch.Tensor, dtype: torch.dtype) -> bool:
    """Equal up to the dtype's rounding, relative to the outputs' scale."""
    tolerance = 1e-4 if dtype == torch.float32 else 5e-2
    scale = expected.abs().max().item() + 1e-6
    return bool((actual.float() - expected.float()).abs().max().item() <= tolerance * scale)


@torch.inference_mode()
def packing_works(
    per_token: Callable[[torch.Tensor, torch.Tensor | None], torch.Tensor], model
) -> bool:
    """Whether ``per_token(ids (1, L), position_ids or None) -> (1, L, ...)`` gives every
    sequence of a pack the outputs it gets alone."""
    sequences = _probe_sequences(model)
    alone = torch.cat([per_token(s[None], None)[0] for s in sequences])
    positions = torch.cat([torch.arange(len(s), device=s.device) for s in sequences])
    try:
        packed = per_token(torch.cat(sequences)[None], positions[None])[0]
    except Exception as error:  # an architecture that rejects position_ids
        logger.info("packed sequences fail on this model: %s", error)
        return False
    return matches(packed, alone, next(model.parameters()).dtype)


def base_model(model):
    return getattr(model, model.base_model_prefix, None)


@torch.inference_mode()
def decoder_head(model) -> torch.nn.Linear | None:
    """The classifier's per-token ``score`` head when base model → head at the pooled token
    reproduces the model's own logits (checked on random sequences); None otherwise."""
    head, base = getattr(model, "score", None), base_model(model)
    if not isinstance(head, torch.nn.Linear) or base is None or model.config.is_encoder_decoder:
        return None
    try:
        for ids in _probe_sequences(model):
            own = model(ids[None]).logits[0]
            hidden = base(ids[None], use_cache=False).last_hidden_state[0, -1]
            if not matches(head(hidden), own, next(model.parameters()).dtype):
                return None
    except Exception as error:
        logger.info("the classifier's score head cannot be run on its own: %s", error)
        return None
    return head


def float32_head(model) -> None:
    """Run the classifier's output layer (the last linear layer with one output per label)
    in float32: its weights are upcast and its input cast on the way in."""
    if next(model.parameters()).dtype == torch.float32:
        return
    heads = [
        m
        for m in model.modules()
        if isinstance(m, torch.nn.Linear) and m.out_features == model.config.num_labels
    ]
    if heads and heads[-1].weight.dtype != torch.float32:  # not already done
        heads[-1].float()
        heads[-1].register_forward_pre_hook(
            lambda module, args: tuple(
                a.float() if torch.is_tensor(a) and a.is_floating_point() else a for a in args
            )
        )


@contextmanager
def _config_pad_id(model, pad_id: int | None):
    """The checkpoint's pad id set to ``pad_id`` for one pass (see :func:`classifier_forward`)."""
    config = model.config.get_text_config()
    saved = config.pad_token_id
    if pad_id is not None:
        config.pad_token_id = pad_id
    try:
        yield
    finally:
        config.pad_token_id = saved


def classifier_forward(model, head: torch.nn.Linear | None, *, own_pad_trick: bool):
    """forward(batch, tensors) -> (rows, labels) float32 logits, rows in batch order.

    With ``head``: base model, then the head at each row's pooled token (``read_index``).
    Without: the model's own forward and pooling.  A decoder pools the rightmost token that
    is not its config's pad id; when the checkpoint names none (``own_pad_trick``), each
    batch is padded with an id that ends none of its rows, made the pad id for that pass.
    """
    base = base_model(model)

    def forward(batch: Batch, tensors: dict[str, torch.Tensor]) -> torch.Tensor:
        model_inputs = {name: tensors[name] for name in batch.arrays}
        if head is not None:
            hidden = base(**model_inputs, use_cache=False).last_hidden_state
            pooled = hidden.reshape(-1, hidden.shape[-1])[tensors["read_index"]]
            return head(pooled).float()
        with _config_pad_id(model, batch.pad_id if own_pad_trick else None):
            logits = model(**model_inputs).logits
        return logits[: len(batch.lengths)].float()

    return forward


def _read_logits(model):
    """read(batch, tensors) -> (logits, rows): the model's per-token logits flattened to
    (tokens, columns), and which of their rows are the batch's read positions
    (``read_index``), in order.

    A packed batch asks the model for the logits of the read positions only
    (``logits_to_keep``, where the model takes it); a padded one computes every token's.
    ``use_cache`` is turned off where the model's forward takes it (token classifiers of
    some architectures do not)."""
    parameters = inspect.signature(model.forward).parameters
    keeps = "logits_to_keep" in parameters
    no_cache = {"use_cache": False} if "use_cache" in parameters else {}

    def read(batch: Batch, tensors: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        model_inputs = {name: tensors[name] for name in batch.arrays}
        index = tensors["read_index"]
        if batch.packed and keeps:
            logits = model(**model_inputs, **no_cache, logits_to_keep=index).logits[0]
            return logits, torch.arange(len(index), device=index.device)
        logits = model(**model_inputs, **no_cache).logits
        return logits.reshape(-1, logits.shape[-1]), index

    return read


def logprob_forward(model):
    """forward(batch, tensors) -> float32 log p(token j | tokens before j) for every read
    position j - 1 (``read_index``), in batch order.

    Log-softmax runs in float32 over chunks of rows, so memory holds a bounded slice of the
    (positions × vocabulary) table (:func:`_read_logits` computes the logits).
    """
    read = _read_logits(model)

    def forward(batch: Batch, tensors: dict[str, torch.Tensor]) -> torch.Tensor:
        index = tensors["read_index"]
        targets = tensors["input_ids"].reshape(-1)[index + 1]
        logits, rows = read(batch, tensors)
        chunk = max(1, LOGSOFTMAX_ENTRIES // logits.shape[-1])
        out = torch.empty(len(index), dtype=torch.float32, device=logits.device)
        for start in range(0, len(index), chunk):
            part = logits[rows[start : start + chunk]].float().log_softmax(-1)
            out[start : start + chunk] = part.gather(-1, targets[start : start + chunk, None])[:, 0]
        return out

    return forward


def position_logits_forward(model, columns: Sequence[int] | None):
    """forward(batch, tensors) -> float32 logits at every read position (``read_index``), in
    batch order, one row per position: all of a token classifier's labels, or (``columns``)
    the chosen vocabulary entries of a causal LM's next-token logits."""
    read = _read_logits(model)
    chosen = None if columns is None else list(columns)

    def forward(batch: Batch, tensors: dict[str, torch.Tensor]) -> torch.Tensor:
        logits, rows = read(batch, tensors)
        picked = logits[rows]
        return (picked if chosen is None else picked[:, chosen]).float()

    return forward


def deterministic_kernels() -> None:
    """Deterministic kernels and full-precision reductions, process-wide (torch's switches
    are global): the same inputs in the same shapes give the same bits on every run."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
