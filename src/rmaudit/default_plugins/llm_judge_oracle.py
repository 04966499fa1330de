"""``llm-judge``: the oracle that labels responses with an LLM judge over an
OpenAI-compatible API (OpenAI, vLLM, TGI, ...), as the RETA paper does (arXiv 2504.14838,
App. B.5): the RETA or MT-bench templates (``backends/judging/oracle_templates.py``) or a
user's, samples averaged.

It shares :class:`rmaudit.backends.openai_api.ApiClient` with the other API components
(``openai_compat``): concurrent requests under a limit, retries with backoff on
429/5xx/timeouts, a persistent request cache (no request is paid for twice), and the API key
read from the environment variable the recipe names, at call time only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from rmaudit import hookimpl
from rmaudit.backends.conversation import user_turns
from rmaudit.backends.judging import (
    ORACLE_TEMPLATES,
    OracleTemplate,
    load_oracle_template_file,
    parse_score,
)
from rmaudit.backends.openai_api import ApiClient, ApiOptions, ApiSession, estimate_tokens
from rmaudit.backends.openai_api.replies import CHAT, chat_contents, usage
from rmaudit.components import Oracle, OracleLabel, Prompt, Response
from rmaudit.components.options import OPERATIONAL, HashedDataFile


class LlmJudgeOracleOptions(ApiOptions):
    model: str = Field(description="judge model, e.g. gpt-4-turbo-2024-04-09")
    template: Literal["reta-single", "reta-multi", "mt-bench-single", "mt-bench-multi"] = (
        "reta-single"
    )
    # the template's words, not where the file lies, decide the labels
    template_file: HashedDataFile | None = Field(
        None, description="a user template (replaces template)"
    )
    samples: int = Field(10, ge=1, description="judge samples averaged per label (the paper: 10)")
    temperature: float = Field(1.0, ge=0, le=2, description="sampling temperature of the judge")
    max_tokens: int | None = Field(
        None, ge=1, description="reply length limit (default: the template's)"
    )
    n_per_request: bool = Field(
        True,
        description="ask for all samples in one request (n=samples); "
        "replies with fewer choices are topped up one request at a time",
    )
    scale: tuple[float, float] = Field((1.0, 10.0), description="scores outside are unparseable")
    expected_answer_tokens: Annotated[int, OPERATIONAL] = Field(
        300,
        ge=0,
        description="response length assumed by --dry-run cost estimates "
        "(responses are not written yet)",
    )


class LlmJudgeOracle(Oracle[LlmJudgeOracleOptions]):
    """An LLM judge over an OpenAI-compatible API: the RETA or MT-bench templates, samples
    averaged."""

    name = "llm-judge"
    Options = LlmJudgeOracleOptions

    def __init__(self, options: LlmJudgeOracleOptions | None = None) -> None:
        super().__init__(options)
        self.client = ApiClient(self.options)
        file = self.options.template_file
        self.template: OracleTemplate = (
            load_oracle_template_file(file)
            if file is not None
            else ORACLE_TEMPLATES[self.options.template]
        )

    def calls_per_label(self) -> int:
        return 1 if self.options.n_per_request else self.options.samples

    def label(self, batch: Sequence[tuple[Prompt, Response]]) -> list[OracleLabel]:
        # render every request first: a prompt the template cannot show fails before any is paid
        conversations = [self.template.messages(prompt, response) for prompt, response in batch]

        async def work(session: ApiSession) -> list[OracleLabel]:
            return await session.gather(self._label_one(session, m) for m in conversations)

        return self.client.run(work)

    def _request(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        o = self.options
        return {
            "model": o.model,
            "messages": messages,
            "temperature": o.temperature,
            "max_tokens": o.max_tokens or self.template.max_tokens,
        }

    def _scored(self, body: dict[str, Any]) -> bool:
        """A reply worth caching: a sample in it holds a score (one without any would keep
        its label failed on every rerun; one with some gives the label the rerun would)."""
        return any(
            reply is not None and parse_score(reply, *self.options.scale) is not None
            for reply in chat_contents(body)
        )

    async def _label_one(self, session: ApiSession, messages: list[dict[str, str]]) -> OracleLabel:
        o = self.options
        request = self._request(messages)
        bodies: list[dict[str, Any]] = []
        replies: list[str | None] = []
        if o.n_per_request and o.samples > 1:
            payload = {**request, "n": o.samples}
            bodies.append(
                await session.post(
                    CHAT,
                    payload,
                    usable=self._scored,
                    cache_key=self.client.request_key(CHAT, payload),
                )
            )
            replies = chat_contents(bodies[0])[: o.samples]
        # one request per missing sample; the sample index keeps their cache entries apart
        more = await session.gather(
            session.post(
                CHAT,
                request,
                usable=self._scored,
                cache_key=self.client.request_key(CHAT, request, {"sample": i}),
            )
            for i in range(len(replies), o.samples)
        )
        for body in more:
            bodies.append(body)
            replies.append(chat_contents(body)[0])
        scores, failures = [], []
        for i, reply in enumerate(replies):
            score = None if reply is None else parse_score(reply, *o.scale)
            if score is None:
                shown = "no message content" if reply is None else f"{reply[:120]!r}"
                failures.append(
                    f"judge sample {i}: no score in {o.scale[0]:g}-{o.scale[1]:g} "
                    f"in the reply: {shown}"
                )
            else:
                scores.append(score)
        prompt_tokens = sum(usage(b)[0] for b in bodies)
        completion_tokens = sum(usage(b)[1] for b in bodies)
        cost = o.price.cost(prompt_tokens, completion_tokens) if o.price else 0.0
        return OracleLabel(
            score=float(np.mean(scores)) if scores else math.nan,
            samples=tuple(scores),
            cost_usd=cost,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            failures=tuple(failures),
        )

    def check_prompts(self, prompts: Sequence[Prompt]) -> None:
        for prompt in prompts:  # the template's own checks, on an answer still to be written
            self.template.messages(prompt, _blank_answer(prompt))

    def estimate_cost(self, prompts: Sequence[Prompt], labels: int) -> float | None:
        """RETA Table 1's labelling cost: per label, the judge prompt (template, question,
        reference and an answer of ``expected_answer_tokens`` per turn) once per request,
        and ``samples`` replies of the template's typical length."""
        o = self.options
        if o.price is None:
            return None
        if not prompts or labels == 0:
            return 0.0
        requests = self.calls_per_label()
        per_label = []
        for prompt in prompts:
            turns = user_turns(prompt)
            template = self.template.for_prompt(prompt)
            blank = _blank_answer(prompt)
            shown = sum(estimate_tokens(m["content"]) for m in template.messages(prompt, blank))
            answer = o.expected_answer_tokens * len(turns or [None])
            reply = min(template.reply_tokens or 10**9, o.max_tokens or template.max_tokens)
            per_label.append(o.price.cost((shown + answer) * requests, reply * o.samples))
        return labels * float(np.mean(per_label))


def _blank_answer(prompt: Prompt) -> Response:
    """An empty answer to ``prompt`` (one per user turn), to render its judge prompt early."""
    return Response("blank", prompt.id, 0, "", {"turns": [""] * len(user_turns(prompt) or [])})


@hookimpl
def register_oracles(register):
    register(LlmJudgeOracle)
