"""Loading Hugging Face models and running them on padded, length-bucketed batches.

Every batch is padded on the **right** with an attention mask.  A causal model's real tokens
never attend to padding on their right and keep their positions 0..L-1, and an encoder masks
the padding out, so each row's outputs match those of the sequence run alone (to float
rounding): scores do not depend on batch size, order or neighbours.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
import transformers

from rmaudit.errors import BadInput
from rmaudit.hf.batching import length_buckets

DTYPES: dict[str, Any] = {"auto": "auto", "float32": torch.float32, "float16": torch.float16,
                          "bfloat16": torch.bfloat16}


def default_device() -> str:
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def load_tokenizer(model: str, *, revision: str | None, trust_remote_code: bool, field: str,
                   truncation_side: str = "right"):
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            model, revision=revision, trust_remote_code=trust_remote_code)
    except (OSError, ValueError) as error:
        raise BadInput(f"cannot load the tokenizer: {_first_line(error)}", field=field,
                       value=model) from None
    tokenizer.truncation_side = truncation_side
    return tokenizer


def load_model(auto_class: Any, model: str, *, revision: str | None, options: Any, field: str):
    """``auto_class.from_pretrained`` with the component's dtype, device placement, attention
    implementation and ``trust_remote_code`` (always passed, so the recipe alone decides it)."""
    kwargs: dict[str, Any] = {"revision": revision, "dtype": DTYPES[options.dtype],
                              "trust_remote_code": options.trust_remote_code}
    if options.attn_implementation is not None:
        kwargs["attn_implementation"] = options.attn_implementation
    if options.device_map is not None:
        try:
            import accelerate  # noqa: F401  (from_pretrained places a device_map with it)
        except ImportError:
            raise BadInput("device_map needs the accelerate package: pip install accelerate "
                           "(or give device instead)", field="device_map",
                           value=options.device_map) from None
        kwargs["device_map"] = options.device_map
    try:
        loaded = auto_class.from_pretrained(model, **kwargs)
    except (OSError, ValueError, ImportError) as error:
        raise BadInput(f"cannot load the model: {_first_line(error)}", field=field,
                       value=model) from None
    if options.device_map is None:
        loaded.to(options.device or default_device())
    return loaded.eval()


def filler_token_id(tokenizer) -> int:
    """An id to pad causal-LM batches with: any id works, because padding is masked out and
    sits where no real token looks (right of a scored sequence, left of a prompt)."""
    for candidate in (tokenizer.pad_token_id, tokenizer.eos_token_id):
        if candidate is not None:
            return candidate
    return 0


def render_chat(tokenizer, template: str | None, messages: Sequence[Mapping[str, str]], *,
                add_generation_prompt: bool) -> str:
    """The messages as the chat template writes them (``template`` None: the tokenizer's);
    with the generation prompt, the text a policy continues."""
    return tokenizer.apply_chat_template(list(messages), chat_template=template, tokenize=False,
                                         add_generation_prompt=add_generation_prompt)


def model_device(model) -> torch.device:
    return next(model.parameters()).device


def right_padded(rows: Sequence[Mapping[str, Sequence[int]]], pad_id: int,
                 device: torch.device) -> dict[str, torch.Tensor]:
    """Tensors for a batch of encodings (``input_ids`` and optionally ``token_type_ids``),
    padded on the right, with the attention mask."""
    width = max(len(row["input_ids"]) for row in rows)
    batch = {"input_ids": torch.full((len(rows), width), pad_id, dtype=torch.long),
             "attention_mask": torch.zeros((len(rows), width), dtype=torch.long)}
    if "token_type_ids" in rows[0]:
        batch["token_type_ids"] = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        length = len(row["input_ids"])
        batch["attention_mask"][i, :length] = 1
        for name, values in row.items():
            batch[name][i, :length] = torch.tensor(values, dtype=torch.long)
    return {name: tensor.to(device) for name, tensor in batch.items()}


def classifier_logits(model, encodings: Sequence[Mapping[str, Sequence[int]]], *,
                      batch_size: int, max_batch_tokens: int | None) -> np.ndarray:
    """Logits, shape (len(encodings), num_labels), in the order of ``encodings``.

    Decoder classifiers (GPT-2, Llama) score the rightmost token that is not the config's
    ``pad_token_id``.  A checkpoint that names one is padded with it, so a sequence ending in
    that token (pad = EOS is common) is pooled exactly as the model was trained and as it is
    alone.  A checkpoint without one pools an unpadded sequence's last token; each batch is
    then padded with an id that ends none of its rows, made the config's pad id for that
    pass, so every row is pooled at its own last token again.
    """
    logits = np.empty((len(encodings), model.config.num_labels))
    device = model_device(model)
    config = model.config.get_text_config()
    checkpoint_pad = config.pad_token_id
    lengths = [len(e["input_ids"]) for e in encodings]
    try:
        for batch in length_buckets(lengths, batch_size=batch_size,
                                    max_batch_tokens=max_batch_tokens):
            rows = [encodings[i] for i in batch]
            if checkpoint_pad is None:
                last_tokens = {row["input_ids"][-1] for row in rows}
                config.pad_token_id = next(i for i in itertools.count() if i not in last_tokens)
            inputs = right_padded(rows, config.pad_token_id, device)
            with torch.inference_mode():
                out = model(**inputs).logits
            logits[batch] = out.float().cpu().numpy()
    finally:
        config.pad_token_id = checkpoint_pad
    return logits


def token_logprobs(model, sequences: Sequence[Sequence[int]], starts: Sequence[int], *,
                   pad_id: int, batch_size: int, max_batch_tokens: int | None) -> list[np.ndarray]:
    """Per sequence i, log p(t_j | t_<j) for the positions j in [starts[i], len) under a causal LM.

    ``starts[i]`` >= 1: the first token has no context to be predicted from.  Log-softmax
    runs in float32 one row at a time, so memory holds one row's (length × vocabulary)
    table rather than the whole batch's.
    """
    out: list[np.ndarray] = [np.empty(0)] * len(sequences)
    device = model_device(model)
    lengths = [len(s) for s in sequences]
    for batch in length_buckets(lengths, batch_size=batch_size, max_batch_tokens=max_batch_tokens):
        inputs = right_padded([{"input_ids": sequences[i]} for i in batch], pad_id, device)
        with torch.inference_mode():
            logits = model(**inputs).logits
            for row, i in enumerate(batch):
                start, end = starts[i], lengths[i]
                if start >= end:
                    continue
                # logits at position j - 1 predict token j
                table = logits[row, start - 1:end - 1].float().log_softmax(-1)
                targets = inputs["input_ids"][row, start:end].unsqueeze(-1)
                out[i] = table.gather(-1, targets).squeeze(-1).double().cpu().numpy()
    return out
