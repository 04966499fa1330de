"""Built-in components over OpenAI-compatible APIs (OpenAI, vLLM, TGI, ...): an LLM judge
oracle, a chat policy and an embedder.

They share :class:`rmaudit.backends.openai_api.ApiClient`: concurrent requests under a limit,
retries with backoff on 429/5xx/timeouts, a persistent request cache (no request is paid for twice),
and the API key read from the environment variable the recipe names, at call time only.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from rmaudit import hookimpl
from rmaudit.backends.conversation import prompt_messages, user_turns
from rmaudit.backends.judging import (
    BUILTIN_TEMPLATES,
    JudgeTemplate,
    load_template_file,
    parse_score,
)
from rmaudit.backends.openai_api import ApiClient, ApiError, ApiOptions, ApiSession, estimate_tokens
from rmaudit.backends.openai_api.replies import CHAT, EMBEDDINGS, chat_contents, usage
from rmaudit.components import (
    Embedder,
    Generation,
    Oracle,
    OracleLabel,
    Prompt,
    ReferencePolicy,
    Response,
)
from rmaudit.components.options import OPERATIONAL, HashedDataFile

# -- the LLM judge ----------------------------------------------------------------------------


class JudgeOptions(ApiOptions):
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


class LlmJudge(Oracle[JudgeOptions]):
    """An LLM judge over an OpenAI-compatible API: the RETA or MT-bench templates, samples
    averaged."""

    name = "llm-judge"
    Options = JudgeOptions

    def __init__(self, options: JudgeOptions | None = None) -> None:
        super().__init__(options)
        self.client = ApiClient(self.options)
        file = self.options.template_file
        self.template: JudgeTemplate = (
            load_template_file(file)
            if file is not None
            else BUILTIN_TEMPLATES[self.options.template]
        )

    def calls_per_label(self) -> int:
        return 1 if self.options.n_per_request else self.options.samples

    def label(self, batch: Sequence[tuple[Prompt, Response]]) -> list[OracleLabel]:
        # render every request first: a prompt the template cannot show fails before any is paid
        conversations = [self.template.messages(prompt, response) for prompt, response in batch]

        async def work(session: ApiSession) -> list[OracleLabel]:
            return list(
                await asyncio.gather(
                    *(self._label_one(session, messages) for messages in conversations)
                )
            )

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
        more = await asyncio.gather(
            *(
                session.post(
                    CHAT,
                    request,
                    usable=self._scored,
                    cache_key=self.client.request_key(CHAT, request, {"sample": i}),
                )
                for i in range(len(replies), o.samples)
            )
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


# -- a chat model as the reference policy ----------------------------------------------------


class ChatPolicyOptions(ApiOptions):
    model: str = Field(description="the policy model, e.g. meta-llama/Llama-2-7b-chat-hf on vLLM")
    temperature: float = Field(1.0, ge=0, le=2)
    top_p: float = Field(1.0, gt=0, le=1)
    max_tokens: int = Field(512, ge=1)
    system: str | None = Field(None, description="a system message before the prompt")
    seed: int | None = Field(
        None, description="sent as seed + sample index (vLLM, OpenAI honour it)"
    )


class OpenAIChatPolicy(ReferencePolicy[ChatPolicyOptions]):
    """A chat model over an OpenAI-compatible API (vLLM, TGI, OpenAI) writes the responses."""

    name = "openai-chat"
    Options = ChatPolicyOptions

    def __init__(self, options: ChatPolicyOptions | None = None) -> None:
        super().__init__(options)
        self.client = ApiClient(self.options)

    def generate(self, batch: Sequence[tuple[Prompt, int]]) -> list[Generation]:
        async def work(session: ApiSession) -> list[Generation]:
            return list(
                await asyncio.gather(
                    *(self._generate_one(session, prompt, i) for prompt, i in batch)
                )
            )

        return self.client.run(work)

    async def _generate_one(self, session: ApiSession, prompt: Prompt, sample: int) -> Generation:
        o = self.options
        system = [{"role": "system", "content": o.system}] if o.system else []
        turns = user_turns(prompt)
        history = system + ([] if turns else prompt_messages(prompt))
        answers, prompt_tokens, completion_tokens, finish = [], 0, 0, None
        # a multi-turn prompt set is answered turn by turn, each answer joining the history
        questions: list[str | None] = [*turns] if turns else [None]
        for question in questions:
            if question is not None:
                history = history + [{"role": "user", "content": question}]
            payload = {
                "model": o.model,
                "messages": history,
                "temperature": o.temperature,
                "top_p": o.top_p,
                "max_tokens": o.max_tokens,
            }
            if o.seed is not None:
                payload["seed"] = o.seed + sample
            body = await session.post(
                CHAT, payload, cache_key=self.client.request_key(CHAT, payload, {"sample": sample})
            )
            answer = chat_contents(body)[0]
            if answer is None:
                raise ApiError(
                    f"{self.client.base_url}{CHAT}: a reply without message content "
                    f"for prompt {prompt.id}, sample {sample}"
                )
            answers.append(answer)
            history = history + [{"role": "assistant", "content": answer}]
            used = usage(body)
            prompt_tokens, completion_tokens = prompt_tokens + used[0], completion_tokens + used[1]
            finish = (body["choices"][0] or {}).get("finish_reason")
        meta: dict[str, Any] = {
            "model": o.model,
            "finish_reason": finish,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
        }
        if o.price:
            meta["cost_usd"] = o.price.cost(prompt_tokens, completion_tokens)
        if turns:
            meta["turns"] = answers
        return Generation(answers[-1], meta)


# -- embeddings -------------------------------------------------------------------------------


class EmbeddingsOptions(ApiOptions):
    model: str = Field("text-embedding-3-large", description="embedding model")
    dimensions: int | None = Field(
        None, ge=1, description="shortened embeddings (text-embedding-3-*)"
    )
    batch_size: Annotated[int, OPERATIONAL] = Field(256, ge=1, description="texts per request")


class OpenAIEmbeddings(Embedder[EmbeddingsOptions]):
    """Embeddings over an OpenAI-compatible API (text-embedding-3-large in the RETA paper)."""

    name = "openai-embeddings"
    Options = EmbeddingsOptions

    def __init__(self, options: EmbeddingsOptions | None = None) -> None:
        super().__init__(options)
        self.client = ApiClient(self.options)

    def _text_key(self, text: str) -> str:
        # cached per text, not per request, so a text costs once whatever batch it came in
        return self.client.request_key(
            EMBEDDINGS,
            {"model": self.options.model, "dimensions": self.options.dimensions, "input": text},
        )

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [self._text_key(t) for t in texts]
        vectors: dict[str, list[float]] = {}
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            cached = self.client.cache.get(key)
            if cached is not None:
                vectors[key] = cached["embedding"]
            else:
                missing[key] = text

        async def work(session: ApiSession) -> None:
            todo = list(missing.items())
            size = self.options.batch_size
            await asyncio.gather(
                *(
                    self._fetch(session, todo[i : i + size], vectors)
                    for i in range(0, len(todo), size)
                )
            )

        if missing:
            self.client.run(work)
        return np.array([vectors[key] for key in keys], dtype=float).reshape(len(texts), -1)

    async def _fetch(
        self, session: ApiSession, chunk: list[tuple[str, str]], vectors: dict[str, list[float]]
    ) -> None:
        payload: dict[str, Any] = {"model": self.options.model, "input": [t for _, t in chunk]}
        if self.options.dimensions is not None:
            payload["dimensions"] = self.options.dimensions
        body = await session.post(EMBEDDINGS, payload, cache_key=None)
        data = body.get("data")
        if not isinstance(data, list) or len(data) != len(chunk):
            raise ApiError(
                f"{self.client.base_url}{EMBEDDINGS}: expected {len(chunk)} embeddings, "
                f"got {len(data) if isinstance(data, list) else 'none'}"
            )
        for item in sorted(data, key=lambda d: d.get("index", 0)):
            key = chunk[item.get("index", 0)][0]
            vectors[key] = item["embedding"]
            self.client.cache.put(key, EMBEDDINGS, {"embedding": item["embedding"]})

    def estimate_cost(self, texts: Sequence[str]) -> float | None:
        price = self.options.price
        return None if price is None else price.cost(sum(estimate_tokens(t) for t in texts), 0)


@hookimpl
def register_oracles(register):
    register(LlmJudge)


@hookimpl
def register_reference_policies(register):
    register(OpenAIChatPolicy)


@hookimpl
def register_embedders(register):
    register(OpenAIEmbeddings)
