"""The served reward model flags of ``rmaudit audit`` (docs/real-models.md, "Served reward
models"): with MODEL a server's URL, how it is reached and read, each the recipe option of
the served RMs it names.  One decorator adds them and hands the command the flags given
(``served``)."""

from __future__ import annotations

import click

from rmaudit.suites.served_arguments import SERVED_RMS, ServedFlags

from .options import Choice, FiniteFloat, grouped

served_flags = grouped(
    "served",
    ServedFlags,
    click.option(
        "--rm-protocol",
        type=Choice(list(SERVED_RMS)),
        help="The protocol of a MODEL that is a server's URL (http://HOST:PORT): vLLM's "
        "POST /pooling or /classify, OpenRLHF's POST /get_reward, SGLang's POST /classify.",
    ),
    click.option(
        "--rm-model", metavar="NAME", help="The served model's name (vLLM: --served-model-name)."
    ),
    click.option(
        "--rm-tokenizer",
        metavar="ID",
        help="The checkpoint (hub id or folder) whose chat template rmaudit applies "
        "(--rm-template rmaudit), or checks the server's against.",
    ),
    click.option(
        "--rm-template",
        type=Choice(["server", "rmaudit"]),
        help="Who writes the conversation with the chat template (default: the server where "
        "the protocol takes chat messages, else rmaudit).",
    ),
    click.option(
        "--rm-batch-size", type=click.IntRange(min=1), help="Texts per request (default 32)."
    ),
    click.option(
        "--rm-concurrency", type=click.IntRange(min=1), help="Requests in flight (default 16)."
    ),
    click.option(
        "--rm-truncate",
        type=click.IntRange(min=1),
        metavar="TOKENS",
        help="vLLM: keep the last TOKENS of a longer input (truncate_prompt_tokens).",
    ),
    click.option(
        "--rm-dtype",
        type=Choice(["float32", "bfloat16", "float16"]),
        help="The dtype the server runs the model in: the rounding the checks forgive "
        "(default bfloat16).",
    ),
    click.option(
        "--rm-price",
        type=FiniteFloat(min=0),
        metavar="USD",
        help="USD per request, for --dry-run's costs.",
    ),
)
