"""Built-in components over OpenAI-compatible APIs (OpenAI, vLLM, TGI, ...): a chat policy
and an embedder (the ``llm-judge`` oracle, over the same client, is ``llm_judge_oracle``).

They share :class:`rmaudit.backends.openai_api.ApiClient`: concurrent requests under a limit,
retries with backoff on 429/5xx/timeouts, a persistent request cache (no request is paid for twice),
and the API key read from the environment variable the recipe names, at call time only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from rmaudit import hookimpl
from rmaudit.backends.conversation import prompt_messages, user_turns
from rmaudit.backends.openai_api import ApiClient, ApiError, ApiOptions, ApiSession, estimate_tokens
from rmaudit.backends.openai_api.replies import CHAT, EMBEDDINGS, chat_contents, usage
from rmaudit.components import Embedder, Generation, Prompt, ReferencePolicy
from rmaudit.components.options import OPERATIONAL

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
            return await session.gather(self._generate_one(session, p, i) for p, i in batch)

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
            await session.gather(
                self._fetch(session, todo[i : i + size], vectors) for i in range(0, len(todo), size)
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
def register_reference_policies(register):
    register(OpenAIChatPolicy)


@hookimpl
def register_embedders(register):
    register(OpenAIEmbeddings)
