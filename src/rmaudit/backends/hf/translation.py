"""Greedy translation with a Hugging Face seq2seq model (Marian, T5, BART/mBART, M2M100, NLLB).

Imported only when a ``translate`` perturber first translates: it imports torch.  Loaded
models are kept per (model, revision, dtype, device, trust_remote_code), so the levels of a
shift sweep — one perturber instance each — share one model, and translations are memoised
per model and generation settings, so a text translated at one level is not translated again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import transformers

from rmaudit.backends.hf.batching import length_buckets
from rmaudit.backends.hf.runtime import load_model, load_tokenizer, model_device
from rmaudit.errors import BadInput

_LOADED: dict[tuple, tuple[Any, Any, dict[tuple, str]]] = {}


def loaded(options: Any) -> tuple[Any, Any, dict[tuple, str]]:
    """(tokenizer, model, translation memo) for the component's options, loaded once."""
    key = (
        options.model,
        options.revision,
        options.dtype,
        options.device,
        options.trust_remote_code,
    )
    if key not in _LOADED:
        tokenizer = load_tokenizer(
            options.model,
            revision=options.revision,
            trust_remote_code=options.trust_remote_code,
            field="model",
        )
        model = load_model(
            transformers.AutoModelForSeq2SeqLM,
            options.model,
            revision=options.revision,
            options=options,
            field="model",
        )
        _LOADED[key] = (tokenizer, model, {})
    return _LOADED[key]


def _forced_bos(tokenizer, target_lang: str | None) -> int | None:
    if target_lang is None:
        return None
    ids = tokenizer.convert_tokens_to_ids([target_lang])
    if not ids or ids[0] is None or ids[0] == tokenizer.unk_token_id:
        raise BadInput(
            "not a token of the model's tokenizer (expected a language code token, "
            "e.g. deu_Latn for NLLB or __de__ for M2M100)",
            field="target_lang",
            value=target_lang,
        )
    return int(ids[0])


def translate(options: Any, texts: Sequence[str]) -> list[str]:
    """Greedy (``num_beams=1``, no sampling) translations of ``texts``, in order.

    Each text is ``prefix + text``; ``source_lang`` sets the tokenizer's ``src_lang``
    (mBART, M2M100, NLLB), ``target_lang`` is forced as the first generated token.  Batches
    group texts of similar length; padding is masked, so a text's translation does not depend
    on its neighbours (up to float rounding in the encoder).
    """
    tokenizer, model, memo = loaded(options)
    settings = (
        options.prefix,
        options.source_lang,
        options.target_lang,
        options.max_new_tokens,
        options.max_length,
    )
    todo = list(dict.fromkeys(t for t in texts if (settings, t) not in memo))
    if todo:
        if options.source_lang is not None:
            if not hasattr(tokenizer, "src_lang"):
                raise BadInput(
                    "this tokenizer has no source language setting (src_lang); "
                    "leave source_lang out",
                    field="source_lang",
                    value=options.source_lang,
                )
            tokenizer.src_lang = options.source_lang
        forced = _forced_bos(tokenizer, options.target_lang)
        inputs = [options.prefix + t for t in todo]
        lengths = [
            len(tokenizer(text, truncation=True, max_length=options.max_length)["input_ids"])
            for text in inputs
        ]
        device = model_device(model)
        for batch in length_buckets(lengths, batch_size=options.batch_size):
            encoded = tokenizer(
                [inputs[i] for i in batch],
                padding=True,
                truncation=True,
                max_length=options.max_length,
                return_tensors="pt",
            ).to(device)
            kwargs: dict[str, Any] = {
                "max_new_tokens": options.max_new_tokens,
                "do_sample": False,
                "num_beams": 1,
            }
            if forced is not None:
                kwargs["forced_bos_token_id"] = forced
            with torch.inference_mode():
                out = model.generate(**encoded, **kwargs)
            for i, text in zip(
                batch, tokenizer.batch_decode(out, skip_special_tokens=True), strict=True
            ):
                memo[settings, todo[i]] = text.strip()
    return [memo[settings, t] for t in texts]
