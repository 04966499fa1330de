"""The options of a served reward model: where its server is and how to reach it (the judges'
connection: concurrency, timeout, retries, cache, the key's variable), which served model,
who writes the conversation with the chat template, and how requests are batched and priced."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from rmaudit.backends.openai_api.options import ApiConnection
from rmaudit.backends.served.protocols import HeadAggregate, Heads
from rmaudit.components.options import OPERATIONAL, ModelLocation

#: the dtypes a served model may run in: the rounding its batch check forgives
ServedDtype = Literal["float32", "bfloat16", "float16"]


class ServedRMOptions(ApiConnection):
    """A served reward model's options; what changes its scores (the server and model, who
    applies which chat template, the heads, the server's truncation) is its identity."""

    api_key_env: Annotated[str | None, OPERATIONAL] = Field(
        None,
        description="NAME of the environment variable holding the server's key (None: send "
        "none, as for a local server)",
    )
    model: str | None = Field(
        None,
        description="the served model's name (vLLM: --served-model-name, by default the path "
        "it serves); None: the server's only model",
    )
    template: Literal["server", "rmaudit"] = Field(
        "server",
        description="who writes the conversation with the chat template: the server (its "
        "chat requests: vLLM's) or rmaudit (the tokenizer's template, texts sent)",
    )
    tokenizer: ModelLocation | None = Field(
        None,
        description="the checkpoint (hub id or folder) whose tokenizer's chat template "
        "rmaudit applies (template = 'rmaudit'); with template = 'server', the template "
        "check compares the server's with it",
    )
    chat_template: str | None = Field(
        None, description="a Jinja chat template rmaudit applies instead of the tokenizer's"
    )
    truncate_prompt_tokens: int | None = Field(
        None,
        ge=1,
        description="vLLM: the server keeps this many tokens of a longer input (default: it "
        "refuses inputs over --max-model-len)",
    )
    head_aggregate: HeadAggregate = Field(
        "mean", description="how the heads of a multi-head RM become one score (hf-classifier's)"
    )
    head_index: int | None = Field(
        None, ge=0, description="the head used by head_aggregate = 'index'"
    )
    batch_size: Annotated[int, OPERATIONAL] = Field(
        32, ge=1, description="texts per request (a chat request holds one conversation)"
    )
    dtype: Annotated[ServedDtype, OPERATIONAL] = Field(
        "bfloat16",
        description="the dtype the server runs the model in: the scoring checks forgive its "
        "rounding (vLLM's default for a bfloat16 checkpoint)",
    )
    price_per_call: Annotated[float | None, OPERATIONAL] = Field(
        None, ge=0, allow_inf_nan=False, description="USD per request, for --dry-run's costs"
    )
    batch_dependence_sample: Annotated[int, OPERATIONAL] = Field(
        16,
        ge=0,
        description="with the scoring checks skipped: the first inputs re-scored alone "
        "after the run, for its report's batch dependence",
    )

    @model_validator(mode="after")
    def _consistent(self):
        if (self.head_aggregate == "index") != (self.head_index is not None):
            raise ValueError("head_index goes with head_aggregate = 'index', and only with it")
        if self.template == "rmaudit" and self.tokenizer is None:
            raise ValueError(
                "template = 'rmaudit' needs tokenizer: the checkpoint whose chat template "
                "rmaudit applies"
            )
        return self

    @property
    def heads(self) -> Heads:
        return Heads(self.head_aggregate, self.head_index)


class TextServedRMOptions(ServedRMOptions):
    """A server that takes texts only (OpenRLHF's): rmaudit writes the conversation."""

    template: Literal["server", "rmaudit"] = Field(
        "rmaudit",
        description="who writes the conversation with the chat template: rmaudit (the "
        "tokenizer's template; this server takes texts only)",
    )
