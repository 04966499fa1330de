"""``rmaudit audit http://HOST:PORT --rm-protocol P``: a reward model behind an HTTP server as
a MODEL (docs/real-models.md, "Served reward models") — its recipe table, from the URL and the
``--rm-*`` flags, with the request flags it shares with judges (``--api-key-env``,
``--request-timeout``)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rmaudit.backends.served.protocols import PROTOCOLS
from rmaudit.components.options import url_problem
from rmaudit.errors import BadInput

#: a MODEL that is a server's URL
URL_PREFIXES = ("http://", "https://")
#: the served reward models, by protocol (each its component's name)
SERVED_RMS = tuple(PROTOCOLS)

#: each flag's recipe option
_OPTIONS = {
    "rm_model": "model",
    "rm_tokenizer": "tokenizer",
    "rm_template": "template",
    "rm_batch_size": "batch_size",
    "rm_concurrency": "concurrency",
    "rm_truncate": "truncate_prompt_tokens",
    "rm_dtype": "dtype",
    "rm_price": "price_per_call",
}


@dataclass(frozen=True)
class ServedFlags:
    """The command's ``--rm-*`` flags: a served MODEL's protocol and options."""

    rm_protocol: str | None = None
    rm_model: str | None = None
    rm_tokenizer: str | None = None
    rm_template: str | None = None
    rm_batch_size: int | None = None
    rm_concurrency: int | None = None
    rm_truncate: int | None = None
    rm_dtype: str | None = None
    rm_price: float | None = None

    def given(self) -> list[str]:
        """The flags given, as the command spells them."""
        return [
            "--" + f.name.replace("_", "-")
            for f in fields(self)
            if getattr(self, f.name) is not None
        ]


def is_served(model: str) -> bool:
    """Whether a MODEL is a server's URL."""
    return model.startswith(URL_PREFIXES)


def served_table(
    model: str,
    flags: ServedFlags,
    *,
    api_key_env: str | None = None,
    request_timeout: float | None = None,
) -> dict[str, Any]:
    """The recipe table of the served MODEL at URL ``model``."""
    protocol = flags.rm_protocol
    if protocol is None:
        raise BadInput(
            f"a server's URL needs --rm-protocol, the protocol it serves: {', '.join(SERVED_RMS)}",
            field="MODEL",
            value=model,
        )
    problem = url_problem(model)
    if problem:
        raise BadInput(problem, field="MODEL", value=model)
    table: dict[str, Any] = {
        "label": f"{protocol}:{urlsplit(model).netloc}",
        "name": protocol,
        "base_url": model,
    }
    for flag, option in _OPTIONS.items():
        value = getattr(flags, flag)
        if value is not None:
            table[option] = value
    tokenizer = table.get("tokenizer")
    if tokenizer is not None and Path(tokenizer).is_dir():
        table["tokenizer"] = str(Path(tokenizer).resolve())
    if api_key_env is not None:
        table["api_key_env"] = api_key_env
    if request_timeout is not None:
        table["timeout_s"] = request_timeout
    return table


def check_served_flags(models: list[str], flags: ServedFlags) -> None:
    """``--rm-*`` flags apply to a server's URL among the MODELs."""
    given = flags.given()
    if given and not any(is_served(model) for model in models):
        raise BadInput(
            "the --rm-* flags apply to a served reward model (MODEL http://HOST:PORT); none "
            "was given",
            field=given[0],
        )
