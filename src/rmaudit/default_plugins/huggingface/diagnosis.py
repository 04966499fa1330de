"""The causes behind the Hugging Face RMs' scoring-check findings, measured, and fixes checked
on the sample before they are printed (docs/real-models.md, "Scoring checks"):

- noise: two passes alone that differ are scored twice more with the random generator seeded
  alike.  Agreeing, the model's own code draws random numbers at inference (dropout applied
  whatever the modules' mode: rmaudit runs every model in eval mode); the config settings
  that could turn it on are tried off one at a time, and the one that makes two passes agree
  is the fix.  Still differing, the kernels are nondeterministic: ``deterministic = true``.
- templates: the template in use changed one way (its first ``{{ bos_token }}`` removed, one
  put first, ``{{ eos_token }}`` after the last message), rendered on the sample, and kept as
  a fix only where the change removes the finding.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from rmaudit.backends.hf.input_checks import RenderedInput, TemplateFix
from rmaudit.backends.hf.scoring_checks import Noise
from rmaudit.default_plugins.huggingface.rendering import (
    PromptResponse,
    closing_ids,
    rendered_inputs,
)

#: a loaded Hugging Face RM (reward_model._HFRewardModel)
HFRewardModel = Any

#: config settings that may switch on randomness in a model's own code: their names
NOISE_WORDS = ("drop", "noise")
_BOS = re.compile(r"\{\{-?\s*bos_token\s*-?\}\}")


def scores_alone(
    rm: HFRewardModel, sample: Sequence[PromptResponse], chosen: Sequence[int]
) -> np.ndarray:
    return np.array(rm._scores([sample[i] for i in chosen], alone=True)[0])


@contextmanager
def _seeded(seed: int = 0) -> Iterator[None]:
    """torch's generators seeded for a pass, and restored after it."""
    import torch

    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        yield


def _agree(
    rm: HFRewardModel, sample: Sequence[PromptResponse], items: Sequence[int], *, seeded: bool
) -> bool:
    passes = []
    for _ in range(2):
        if seeded:
            with _seeded():
                passes.append(scores_alone(rm, sample, items))
        else:
            passes.append(scores_alone(rm, sample, items))
    return bool(np.array_equal(passes[0], passes[1]))


def _switches(config: Any) -> list[tuple[str, Any]]:
    """(name, value that turns it off) of each config setting that could switch on noise: a
    rate or flag named for dropout or noise, set."""
    found: list[tuple[str, Any]] = []
    for name, value in config.to_dict().items():
        if not any(word in name.lower() for word in NOISE_WORDS):
            continue
        if isinstance(value, bool):
            if value:
                found.append((name, False))
        elif isinstance(value, int | float) and value > 0:
            found.append((name, 0))
    return found


def _switch_off(
    rm: HFRewardModel, sample: Sequence[PromptResponse], items: Sequence[int]
) -> tuple[str, Any] | None:
    """The config setting that, turned off, makes two passes agree (tried one at a time, each
    put back after)."""
    config = rm.scorers[0].model.config
    for name, off in _switches(config):
        saved = getattr(config, name)
        setattr(config, name, off)
        try:
            if _agree(rm, sample, items, seeded=False):
                return name, off
        finally:
            setattr(config, name, saved)
    return None


def noise(
    rm: HFRewardModel, sample: Sequence[PromptResponse], items: Sequence[int], first: np.ndarray
) -> Noise:
    """``items`` scored alone again (``first``: the first pass), and where the passes differ,
    why, and the fix checked to remove it."""
    again = scores_alone(rm, sample, items)
    difference = float(np.max(np.abs(first - again))) if len(items) else 0.0
    if difference == 0.0:
        return Noise(len(items), 0.0)
    if not _agree(rm, sample, items, seeded=True):
        if rm.options.deterministic:
            return Noise(
                len(items),
                difference,
                "nondeterministic kernels, with deterministic = true already set",
                "none in the recipe: this device's kernels differ pass to pass",
            )
        return Noise(
            len(items),
            difference,
            "nondeterministic kernels: two passes seeded alike differ too",
            "set deterministic = true (--deterministic): deterministic kernels, each input alone",
        )
    cause = "the model's own code draws random numbers at inference (two passes seeded alike agree)"
    found = _switch_off(rm, sample, items)
    if found is None:
        return Noise(
            len(items),
            difference,
            f"{cause}, in eval mode too, and no config setting named for dropout or noise stops it",
            "none in rmaudit: the scores are random draws; fix the model's code",
        )
    name, off = found
    shown = str(off).lower()
    return Noise(
        len(items),
        difference,
        f"{cause}; its config's {name} = {getattr(rm.scorers[0].model.config, name)} turns it on",
        f"set config_overrides = {{ {name} = {shown} }} (--config-override {name}={shown}): "
        f"two passes then agree",
    )


def template_text(rm: HFRewardModel) -> str | None:
    """The chat template in use, as text (None: a text pair, or a tokenizer's named set)."""
    if not rm.use_chat:
        return None
    text = rm.template if rm.template is not None else rm.tokenizer.chat_template
    return text if isinstance(text, str) else None


@contextmanager
def with_template(rm: HFRewardModel, text: str) -> Iterator[None]:
    """``rm`` rendering its inputs with the chat template ``text`` (its own put back after)."""
    saved = rm.template
    rm.template = text
    try:
        yield
    finally:
        rm.template = saved


def _fix(
    rm: HFRewardModel,
    sample: Sequence[PromptResponse],
    candidate: str,
    change: str,
    removed,
) -> TemplateFix | None:
    """``candidate`` as a fix where every input it renders passes ``removed``."""
    with with_template(rm, candidate):
        try:
            rendered = rendered_inputs(rm, sample)
        except Exception:  # a candidate the template engine rejects is no fix
            return None
    return TemplateFix(change, candidate) if all(map(removed, rendered)) else None


def template_fixes(
    rm: HFRewardModel, sample: Sequence[PromptResponse], rendered: Sequence[RenderedInput]
) -> dict[str, TemplateFix | None]:
    """For each template finding the sample shows: a fix checked on it, or None where no
    change of the template in use removes it.  ``once``: BOS twice; ``closed``: no EOS after
    the response; ``bos``: the tokenizer's BOS dropped."""
    text, tokenizer = template_text(rm), rm.tokenizer
    bos, eos = tokenizer.bos_token_id, tokenizer.eos_token_id
    fixes: dict[str, TemplateFix | None] = {}
    if text is None:
        return fixes
    if bos is not None and any(item.full[:2] == [bos, bos] for item in rendered):
        first = _BOS.search(text)
        fixes["once"] = first and _fix(
            rm,
            sample,
            text[: first.start()] + text[first.end() :],
            "without its first {{ bos_token }}",
            lambda item: item.full[:2] != [bos, bos],
        )
    closing = closing_ids(tokenizer)
    if eos is not None and not all(item.closed(closing) for item in rendered):
        fixes["closed"] = _fix(
            rm,
            sample,
            text + "{{ eos_token }}",
            "with {{ eos_token }} after the last message",
            lambda item: item.closed(closing),
        )
    if bos is not None and any(
        bos in item.added_front and item.full[:1] != [bos] for item in rendered
    ):
        fixes["bos"] = _fix(
            rm,
            sample,
            "{{ bos_token }}" + text,
            "with {{ bos_token }} at its start",
            lambda item: item.full[:1] == [bos] and item.full[:2] != [bos, bos],
        )
    return fixes
