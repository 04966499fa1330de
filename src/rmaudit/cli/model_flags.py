"""The Hugging Face model flags of ``rmaudit audit`` (docs/audit.md): each the recipe option of
its name, and together the fixes the scoring checks print (docs/real-models.md, "Scoring
checks").  One decorator adds them and hands the command the options given
(``hf_options``)."""

from __future__ import annotations

from typing import Any

import click

from rmaudit.suites.model_arguments import HF_MODEL_OPTIONS, parse_overrides

from .options import Choice, grouped

_OPTIONS = (
    click.option("--revision", help="Hub branch, tag or commit of the models."),
    click.option("--dtype", type=Choice(["auto", "float32", "float16", "bfloat16"])),
    click.option("--max-length", type=click.IntRange(min=2), help="Tokens per input."),
    click.option(
        "--truncation-side",
        type=Choice(["left", "right"]),
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


def _hf_options(config_overrides: tuple[str, ...], **given: Any) -> dict[str, Any]:
    """The recipe options the flags give (``--config-override`` as one table)."""
    options = {name: given[name] for name in HF_MODEL_OPTIONS}
    return {**options, "config_overrides": parse_overrides(config_overrides)}


#: put under ``@click.command()``: adds the flags, and calls the command with ``hf_options``
hf_model_flags = grouped("hf_options", _hf_options, *_OPTIONS)
