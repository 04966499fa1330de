"""The HTTP protocols of served reward models: each server's request and reply, as its own
source defines them (docs/real-models.md, "Served reward models").

* ``vllm-pooling`` and ``vllm-classify``: vLLM's pooling runner (``vllm serve MODEL --runner
  pooling``), ``POST /pooling`` and ``POST /classify``, read from vLLM's
  ``vllm/entrypoints/pooling/{base,pooling,classify}/protocol.py`` on its main branch of 2026
  (the releases after v0.16, where ``use_activation`` replaced ``normalize`` and ``softmax``).
  A completion-style request ``{"model", "input": [text, ...], "add_special_tokens",
  "use_activation"}`` scores a batch of texts; a chat-style request ``{"model", "messages"}``
  scores one conversation, rendered by the server's chat template (``add_special_tokens``
  false by default there: the template writes them).  ``/pooling`` replies ``data[i].data``, a
  sequence classifier's head values; ``/classify`` ``data[i].logits`` (since 2026) or
  ``data[i].probs`` (before: with ``use_activation`` false, the raw values too).  Both report
  ``usage.prompt_tokens``, the request's tokens.
* ``openrlhf-rm``: OpenRLHF's remote RM (``python -m openrlhf.cli.serve_rm``; OpenRLHF 0.11,
  ``openrlhf/cli/serve_rm.py``), ``POST /get_reward`` with ``{"query": [text, ...]}`` — each
  text the whole conversation already written by the chat template (its trainer sends the
  decoded sequences; the ``prompts`` and ``labels`` it sends beside them are not read) — and
  the reply ``{"rewards": [...], "scores": [...]}``; no token counts.
* ``sglang-classify``: SGLang's reward-model endpoint (``python -m sglang.launch_server
  --model-path MODEL --is-embedding``), ``POST /classify`` with ``{"text": text}`` — read from
  SGLang's ``python/sglang/srt/entrypoints/http_server.py`` (``classify_request``) and
  ``managers/io_struct.py`` (``EmbeddingReqInput``) on its main branch of 2025–2026 — one
  text a request (a list of texts is answered with a JSON array, which the judges' client
  refuses as a broken reply; SGLang batches concurrent requests itself), already written by
  the chat template as its docs' example does; the reply ``{"embedding": [score, ...],
  "meta_info": {"prompt_tokens": n, ...}}``.

A reply is data from a server: what is read from it here is a finite number per text sent, or
``BadInput`` naming the URL, the field and the value (a reply the protocol does not allow is
no timing problem: retrying it would not help).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rmaudit.errors import BadInput

Message = dict[str, str]
#: how several heads' values become one score (hf-classifier's head_aggregate)
HeadAggregate = Literal["mean", "first", "index"]


@dataclass(frozen=True)
class Heads:
    """How a reply's head values become the score: their mean, the first, or one by index."""

    aggregate: HeadAggregate = "mean"
    index: int | None = None

    def score(self, values: Sequence[float], url: str, field: str) -> float:
        if not values:
            raise BadInput("the reply holds no value for this text", file=url, field=field)
        if self.aggregate == "mean":
            return math.fsum(values) / len(values)
        position = self.index or 0
        if position >= len(values):
            raise BadInput(
                f"the reply holds {len(values)} head values; head_index is {position}",
                file=url,
                field=field,
            )
        return values[position]


@dataclass(frozen=True)
class ServedInput:
    """One (prompt, response) as it is sent: the text rmaudit wrote with the chat template,
    or the conversation's messages for the server's template to write."""

    text: str | None = None
    messages: tuple[Message, ...] | None = None

    def shown(self) -> str:
        """The input as ``--show-input`` shows it."""
        if self.text is not None:
            return self.text
        return "\n".join(f"[{m['role']}] {m['content']}" for m in self.messages or ())


@dataclass(frozen=True)
class ServedReply:
    """One reply read: a score per text sent, in order, and the tokens the server says it
    read (the request's, where it reports them; None where it does not)."""

    scores: tuple[float, ...]
    tokens: int | None


@dataclass(frozen=True)
class Protocol:
    """One server's protocol: its endpoint, whether it takes chat messages (rendered by the
    server's own chat template) besides texts, and how its reply is read."""

    name: str
    endpoint: str
    server: str
    takes_messages: bool
    reports_tokens: bool
    #: whether one request holds several texts (else one text a request)
    batches: bool = True

    def texts_request(
        self, model: str | None, texts: Sequence[str], truncate: int | None
    ) -> dict[str, Any]:
        """The request scoring ``texts``, each the whole conversation as the model reads it
        (no special tokens added: the chat template wrote them)."""
        if self.name == "openrlhf-rm":
            return {"query": list(texts)}
        if self.name == "sglang-classify":
            (text,) = texts
            return {"text": text}
        return {
            **_model(model),
            "input": list(texts),
            "add_special_tokens": False,
            "use_activation": False,
            **_truncation(truncate),
        }

    def messages_request(
        self, model: str | None, messages: Sequence[Message], truncate: int | None
    ) -> dict[str, Any]:
        """The request scoring one conversation, written by the server's chat template."""
        if not self.takes_messages:
            raise BadInput(
                f"{self.name} takes texts only: the chat template is rmaudit's to apply "
                "(template = 'rmaudit', with tokenizer)",
                field="template",
            )
        return {
            **_model(model),
            "messages": [dict(m) for m in messages],
            "use_activation": False,
            **_truncation(truncate),
        }

    def read(self, body: dict[str, Any], count: int, heads: Heads, url: str) -> ServedReply:
        """The scores of a reply to a request of ``count`` texts."""
        if self.name == "openrlhf-rm":
            values = body.get("rewards", body.get("scores"))
            found = _listed(values, count, url, "rewards")
            return ServedReply(
                tuple(_number(v, url, f"rewards[{i}]") for i, v in enumerate(found)), None
            )
        if self.name == "sglang-classify":
            values = _head_values(body.get("embedding"), url, "embedding")
            info = body.get("meta_info")
            return ServedReply((heads.score(values, url, "embedding"),), _tokens(info))
        data = _listed(body.get("data"), count, url, "data")
        scores = []
        for i, item in enumerate(sorted(data, key=_index)):
            field = f"data[{i}]"
            if not isinstance(item, dict):
                raise BadInput("expected an object", file=url, field=field, value=_shown(item))
            name = self._values_field(item)
            values = item.get(name)
            numbers = _head_values(values, url, f"{field}.{name}")
            scores.append(heads.score(numbers, url, f"{field}.{name}"))
        return ServedReply(tuple(scores), _tokens(body.get("usage")))

    def _values_field(self, item: dict[str, Any]) -> str:
        if self.name == "vllm-pooling":
            return "data"
        return "logits" if "logits" in item else "probs"


def _model(model: str | None) -> dict[str, Any]:
    return {} if model is None else {"model": model}


def _truncation(truncate: int | None) -> dict[str, Any]:
    return {} if truncate is None else {"truncate_prompt_tokens": truncate}


def _index(item: Any) -> int:
    index = item.get("index") if isinstance(item, dict) else None
    return index if isinstance(index, int) and not isinstance(index, bool) else 0


def _listed(values: Any, count: int, url: str, field: str) -> list[Any]:
    if not isinstance(values, list):
        raise BadInput("expected a list", file=url, field=field, value=_shown(values))
    if len(values) != count:
        raise BadInput(
            f"expected {count} score{'s' if count != 1 else ''}, one per text sent, got "
            f"{len(values)}",
            file=url,
            field=field,
        )
    return values


def _head_values(values: Any, url: str, field: str) -> list[float]:
    """A sequence classifier's head values: a number, or a list of numbers (a token-level
    list of lists is no sequence score)."""
    if isinstance(values, list):
        return [_number(v, url, f"{field}[{j}]") for j, v in enumerate(values)]
    return [_number(values, url, field)]


def _number(value: Any, url: str, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadInput("expected a number", file=url, field=field, value=_shown(value))
    if not math.isfinite(value):
        raise BadInput("expected a finite number", file=url, field=field, value=value)
    return float(value)


def _tokens(usage: Any) -> int | None:
    count = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        return None
    return count


def _shown(value: Any) -> Any:
    """A value as an error shows it: a long one cut."""
    text = repr(value)
    return value if len(text) <= 80 else text[:77] + "..."


PROTOCOLS: dict[str, Protocol] = {
    p.name: p
    for p in (
        Protocol("vllm-pooling", "/pooling", "vLLM (--runner pooling)", True, True),
        Protocol("vllm-classify", "/classify", "vLLM (--runner pooling)", True, True),
        Protocol("openrlhf-rm", "/get_reward", "OpenRLHF (openrlhf.cli.serve_rm)", False, False),
        Protocol(
            "sglang-classify", "/classify", "SGLang (--is-embedding)", False, True, batches=False
        ),
    )
}
