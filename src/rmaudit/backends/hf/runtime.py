"""Loading Hugging Face models and tokenizers, chat templates, and single-sequence passes.

Batched scoring is :mod:`rmaudit.backends.hf.scorer`'s.
"""

from __future__ import annotations

import importlib.util
import logging
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
import transformers

from rmaudit.backends.hf.hub import hub_access
from rmaudit.errors import BadInput

logger = logging.getLogger(__name__)

DTYPES: dict[str, Any] = {
    "auto": "auto",
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
}


def default_device() -> str:
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


@contextmanager
def _no_progress_bar() -> Iterator[None]:
    """transformers' own progress bar off while a model loads: it would write through
    rmaudit's progress display, and a refusal after it would not be one line."""
    enabled = transformers.utils.logging.is_progress_bar_enabled()
    transformers.utils.logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            transformers.utils.logging.enable_progress_bar()


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


#: the key under which a transformers tokenizer notes that it warned of an input longer than
#: its model_max_length (it warns once per tokenizer)
LONGER_THAN_MAXIMUM = "sequence-length-is-longer-than-the-specified-maximum"


def load_tokenizer(
    model: str,
    *,
    revision: str | None,
    trust_remote_code: bool,
    field: str,
    truncation_side: str = "right",
):
    access = hub_access(model, revision=revision, field=field)
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            model, revision=revision, trust_remote_code=trust_remote_code, **access
        )
    except (OSError, ValueError) as error:
        raise BadInput(
            f"cannot load the tokenizer: {_first_line(error)}", field=field, value=model
        ) from None
    tokenizer.truncation_side = truncation_side
    # rmaudit measures each input whole and cuts it at max_length itself, and the truncation
    # check and the RM's report count what is cut: the tokenizer's own warning about its
    # model_max_length (not the model's position limit) would repeat that, and mislead
    tokenizer.deprecation_warnings[LONGER_THAN_MAXIMUM] = True
    return tokenizer


def load_config(model: str, *, revision: str | None, trust_remote_code: bool, field: str):
    """The checkpoint's config alone (no weights)."""
    try:
        return transformers.AutoConfig.from_pretrained(
            model,
            revision=revision,
            trust_remote_code=trust_remote_code,
            **hub_access(model, revision=revision, field=field),
        )
    except (OSError, ValueError) as error:
        raise BadInput(
            f"cannot load the model: {_first_line(error)}", field=field, value=model
        ) from None


def _flash_attention_fits(options: Any) -> bool:
    """flash-attention 2 where it runs: its package installed, a CUDA device, half precision."""
    on_cuda = (
        (options.device or default_device()).startswith("cuda")
        if options.device_map is None
        else torch.cuda.is_available()
    )
    return (
        on_cuda
        and options.dtype in ("float16", "bfloat16")
        and importlib.util.find_spec("flash_attn") is not None
    )


#: the models this process loaded, by their loading options' key, while something holds them
_LOADED: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()


def load_once(key: str, load: Callable[[], Any]) -> Any:
    """The model loaded under ``key`` in this process and still held by a component, else
    ``load()``'s: its weights are read from the checkpoint once however many components score
    with it, and freed once none does."""
    model = _LOADED.get(key)
    if model is None:
        model = _LOADED[key] = load()
    return model


def load_model(
    auto_class: Any,
    model: str,
    *,
    revision: str | None,
    options: Any,
    field: str,
    whole: str | None = None,
):
    """``auto_class.from_pretrained`` with the component's dtype, device placement, attention
    implementation and ``trust_remote_code`` (always passed, so the recipe alone decides it).
    With no attention implementation given, flash-attention 2 where it fits and the model
    supports it, else transformers' default.  ``whole``: the checkpoint must hold every
    weight of the class (transformers would start the missing ones at random, as a head the
    checkpoint names differently), else ``BadInput`` ending with this hint."""
    kwargs: dict[str, Any] = {
        "revision": revision,
        "dtype": DTYPES[options.dtype or "auto"],
        "trust_remote_code": options.trust_remote_code,
        **hub_access(model, revision=revision, field=field),
    }
    if options.attn_implementation is not None:
        kwargs["attn_implementation"] = options.attn_implementation
    elif _flash_attention_fits(options):
        try:
            return _load_model(
                auto_class,
                model,
                {**kwargs, "attn_implementation": "flash_attention_2"},
                options,
                field,
                whole,
            )
        except BadInput as error:  # e.g. an architecture flash-attention does not support
            logger.info(
                "flash-attention 2 unavailable for %s (%s); using the default attention",
                model,
                error,
            )
    return _load_model(auto_class, model, kwargs, options, field, whole)


def _accelerate_importable() -> bool:
    try:
        import accelerate  # noqa: F401
    except ImportError:
        return False
    return True


def _load_model(
    auto_class: Any,
    model: str,
    kwargs: dict[str, Any],
    options: Any,
    field: str,
    whole: str | None = None,
):
    if options.device_map is not None:
        try:
            import accelerate  # noqa: F401  (from_pretrained places a device_map with it)
        except ImportError:
            raise BadInput(
                "device_map needs the accelerate package: pip install accelerate "
                "(or give device instead)",
                field="device_map",
                value=options.device_map,
            ) from None
        kwargs["device_map"] = options.device_map
    elif _accelerate_importable():
        # straight to the device in the target dtype, each weight read onto it from the
        # checkpoint: no whole copy on the host first (transformers needs accelerate for it)
        kwargs["device_map"] = {"": options.device or default_device()}
    try:
        report = {"output_loading_info": True} if whole else {}
        with _no_progress_bar():
            loaded = auto_class.from_pretrained(model, **kwargs, **report)
    except (OSError, ValueError, ImportError) as error:
        raise BadInput(
            f"cannot load the model: {_first_line(error)}", field=field, value=model
        ) from None
    if whole:
        loaded, info = loaded
        mismatched = (k[0] if isinstance(k, tuple) else k for k in info["mismatched_keys"])
        missing = sorted({*info["missing_keys"], *mismatched})
        if missing:
            raise BadInput(
                f"the checkpoint holds no weights for {', '.join(missing[:4])}"
                f"{' and more' if len(missing) > 4 else ''} of {type(loaded).__name__}: "
                f"they would be random; {whole}",
                field=field,
                value=model,
            )
    if "device_map" not in kwargs:
        loaded.to(options.device or default_device())
    return loaded.eval()


def filler_token_id(tokenizer) -> int:
    """An id to pad causal-LM batches with: any id works, because padding is masked out and
    sits where no real token looks (right of a scored sequence, left of a prompt)."""
    for candidate in (tokenizer.pad_token_id, tokenizer.eos_token_id):
        if candidate is not None:
            return candidate
    return 0


def render_chat(
    tokenizer,
    template: str | None,
    messages: Sequence[Mapping[str, str]],
    *,
    add_generation_prompt: bool,
) -> str:
    """The messages as the chat template writes them (``template`` None: the tokenizer's);
    with the generation prompt, the text a policy continues."""
    return tokenizer.apply_chat_template(
        list(messages),
        chat_template=template,
        tokenize=False,
        add_generation_prompt=add_generation_prompt,
    )


def model_device(model) -> torch.device:
    return next(model.parameters()).device


def sequence_logprobs(model, ids: Sequence[int], start: int) -> np.ndarray:
    """log p(t_j | t_<j) for the positions j in [start, len(ids)) of one sequence, run alone
    under a causal LM (``start`` >= 1: the first token has no context)."""
    with torch.inference_mode():
        inputs = torch.tensor([list(ids)], device=model_device(model))
        logits = model(inputs, use_cache=False).logits[0, start - 1 : len(ids) - 1]
        targets = inputs[0, start:, None]
        return logits.float().log_softmax(-1).gather(-1, targets)[:, 0].double().cpu().numpy()
