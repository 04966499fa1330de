"""The Hugging Face model flags of ``rmaudit audit`` (docs/audit.md): each the recipe option of
its name, and together the fixes the scoring checks print (docs/real-models.md, "Scoring
checks").  One decorator adds them and hands the command the options given
(``hf_options``)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from rmaudit.suites.model_arguments import HF_MODEL_OPTIONS, parse_overrides

_OPTIONS = (
    click.option("--revision", help="Hub branch, tag or commit of the models."),
    click.option("--dtype", type=click.Choice(["auto", "float32", "float16", "bfloat16"])),
    click.option("--max-length", type=click.IntRange(min=2), help="Tokens per input."),
    click.option(
        "--truncation-side",
        type=click.Choice(["left", "right"]),
        help="Where over-long inputs lose tokens (default: left, keeping the response's end).",
    ),
    click.option(
        "--fallback-chat-template",
        metavar="TEMPLATE",
        help="Jinja chat template for a tokenizer that has none.",
    ),
    click.option(
        "--chat-template",
        metavar="TEMPLATE",
        help="Jinja chat template used instead of the tokenizer's own.",
    ),
    click.option(
        "--config-override",
        "config_overrides",
        metavar="NAME=VALUE",
        multiple=True,
        help="Set an attribute of the model's config once it loads (repeatable; VALUE read as "
        "JSON where it parses, e.g. dropout_at_inference=0).",
    ),
    click.option("--device", help="cpu, cuda, cuda:1, mps (default: cuda, else mps, else cpu)."),
    click.option(
        "--batch-size", type=click.IntRange(min=1), help="Most sequences per forward pass."
    ),
    click.option(
        "--max-batch-tokens", type=click.IntRange(min=1), help="Most tokens per forward pass."
    ),
    click.option(
        "--pad-to-multiple",
        type=click.IntRange(min=1),
        help="Round padded widths up to a multiple (default: 64 on a GPU, 1 on CPU).",
    ),
    click.option(
        "--deterministic",
        is_flag=True,
        help="Score each input alone with deterministic kernels (slower on a GPU).",
    ),
    click.option("--trust-remote-code", is_flag=True, help="Run the checkpoint's own Python code."),
)


def hf_model_flags(command: Callable[..., Any]) -> Callable[..., Any]:
    """Put under ``@click.command()``: adds the flags, and calls ``command`` with
    ``hf_options``, the recipe options they give (``--config-override`` as one table)."""

    @functools.wraps(command)
    def with_options(*args: Any, config_overrides: tuple[str, ...], **kwargs: Any) -> Any:
        options = {name: kwargs.pop(name) for name in HF_MODEL_OPTIONS}
        options["config_overrides"] = parse_overrides(config_overrides)
        return command(*args, hf_options=options, **kwargs)

    for option in reversed(_OPTIONS):
        with_options = option(with_options)
    return with_options
