"""``llm-judge-rm``: an LLM judge over an OpenAI-compatible API as the model under audit
(docs/judges.md).

``mode = "pairwise"``: the run shows it every preference pair in both orders and it answers
``[[A]]``, ``[[B]]`` or ``[[C]]``; P(first preferred) comes from the verdict token's
log-probabilities when the endpoint returns them, else from the share of its ``samples``
parsed replies (a tie counting ½).  ``mode = "rating"``: it rates each response 1–10, and the
score is the expected rating under the rating token's log-probabilities, else the mean of its
parsed ``samples`` — an RM for RETA and best-of-n.  Requests share the oracle's client:
retries, the request cache (a rerun pays for nothing), the key from the environment only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from rmaudit import hookimpl
from rmaudit.backends.judging import parse_score
from rmaudit.backends.judging.verdict_options import VerdictTemplateOptions
from rmaudit.backends.judging.verdicts import (
    VerdictTemplate,
    parse_verdict,
    rating_token_expectation,
    verdict_token_probabilities,
)
from rmaudit.backends.openai_api import (
    ApiClient,
    ApiOptions,
    ApiSession,
    CallEstimate,
    estimate_tokens,
)
from rmaudit.backends.openai_api.replies import CHAT, chat_contents, usage
from rmaudit.components import PairShown, PairVerdict, Prompt, Response, RewardModel, Verdict
from rmaudit.components.options import OPERATIONAL
from rmaudit.errors import BadInput

_DECISIONS: tuple[Verdict, ...] = ("first", "second", "tie")
#: P(first) of each parsed sampled verdict
_CREDIT = {"first": 1.0, "second": 0.0, "tie": 0.5}
#: the pair and answer of the ready call: any judge answers them with a verdict
_READY_QUESTION = "What is 2 + 2?"
_READY_ANSWERS = ("2 + 2 = 4.", "2 + 2 = 5.")


class JudgeRMOptions(VerdictTemplateOptions, ApiOptions):
    model: str = Field(description="the judge model, e.g. gpt-4o-2024-08-06")
    samples: int = Field(1, ge=1, description="replies per call; their verdicts are averaged")
    temperature: float = Field(0.0, ge=0, le=2)
    max_tokens: int | None = Field(None, ge=1, description="default: the template's")
    logprobs: bool = Field(
        True, description="ask for the verdict token's log-probabilities (top 20)"
    )
    scale: tuple[float, float] = Field((1.0, 10.0), description="ratings outside are unparsed")
    expected_answer_tokens: Annotated[int, OPERATIONAL] = Field(
        300, ge=0, description="answer length assumed by cost estimates without the texts"
    )


class LlmJudgeRM(RewardModel):
    """An LLM judge over an OpenAI-compatible API as an RM: pairs in both orders, or ratings."""

    name = "llm-judge-rm"
    Options = JudgeRMOptions
    options: JudgeRMOptions
    #: calls ``check_ready`` makes before a run's first verdict or rating, its ready call (a
    #: plan counts them)
    ready_calls = 1

    def __init__(self, options: JudgeRMOptions | None = None) -> None:
        super().__init__(options)
        self.client = ApiClient(self.options)
        self.template: VerdictTemplate = self.options.verdict_template

    def judges_pairs(self) -> bool:
        return self.options.mode == "pairwise"

    # -- pairwise ---------------------------------------------------------------------------
    def judge_pairs(self, batch: Sequence[PairShown]) -> list[PairVerdict]:
        return self._judge_pairs(batch, ready=False)

    def _judge_pairs(self, batch: Sequence[PairShown], *, ready: bool) -> list[PairVerdict]:
        conversations = [
            self.template.messages(
                question=s.prompt.text.strip(), answer_a=s.first.text, answer_b=s.second.text
            )
            for s in batch
        ]
        return self.client.run(
            lambda session: self._gather(session, conversations, self._verdict), ready=ready
        )

    async def _verdict(self, session: ApiSession, messages: list[dict[str, str]]) -> PairVerdict:
        bodies, choices = await self._ask(session, messages)
        texts = chat_contents_of(choices)
        parsed = [parse_verdict(t) for t in texts]
        verdict, p_first, from_logprobs = _read_verdict(
            parsed, [verdict_token_probabilities(c) for c in choices]
        )
        cost, prompt_tokens, completion_tokens = self._spent(bodies)
        return PairVerdict(
            verdict,
            p_first,
            texts[0] or "",
            tuple(v or "unparsed" for v in parsed),
            from_logprobs,
            cost,
            prompt_tokens,
            completion_tokens,
        )

    # -- rating ------------------------------------------------------------------------------
    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        return self._score(batch, ready=False)

    def _score(self, batch: Sequence[tuple[Prompt, Response]], *, ready: bool) -> list[float]:
        if self.judges_pairs():
            raise BadInput("a pairwise judge scores pairs, not responses", field="mode")
        conversations = [
            self.template.messages(question=p.text.strip(), answer=r.text) for p, r in batch
        ]
        return self.client.run(
            lambda session: self._gather(session, conversations, self._rating), ready=ready
        )

    async def _rating(self, session: ApiSession, messages: list[dict[str, str]]) -> float:
        # a reply holding no rating is not cached: it stops the run, and a rerun asks again
        _, choices = await self._ask(
            session, messages, usable=lambda body: bool(self._ratings(_choices(body)))
        )
        found = self._ratings(choices)
        if not found:
            low, high = self.options.scale
            shown = (chat_contents_of(choices)[0] or "")[:120]
            raise BadInput(
                f"the judge's replies hold no rating in {low:g}-{high:g} (first: {shown!r}); "
                "a rating judge must rate every response"
            )
        return float(np.mean(found))

    def _ratings(self, choices: list[dict[str, Any]]) -> list[float]:
        """The ratings of a call's replies: the expected rating under every reply's rating
        token when each has one, else each reply's rating read from its text."""
        low, high = self.options.scale
        expected = [rating_token_expectation(c, low, high) for c in choices]
        known = [e for e in expected if e is not None]
        if known and len(known) == len(expected):
            return known
        ratings = [parse_score(t, low, high) for t in chat_contents_of(choices) if t is not None]
        return [r for r in ratings if r is not None]

    # -- requests ----------------------------------------------------------------------------
    async def _gather(self, session: ApiSession, conversations: list, one: Any) -> list:
        """``one`` per distinct conversation of the batch, in order: the same question and
        answer shown twice (a data set's duplicate response) is one request, as the request
        cache makes it across batches, so a plan can count the calls."""
        keys = [json.dumps(messages, sort_keys=True) for messages in conversations]
        distinct = dict(zip(keys, conversations, strict=True))
        answered = await session.gather(one(session, m) for m in distinct.values())
        by_key = dict(zip(distinct, answered, strict=True))
        return [by_key[key] for key in keys]

    def _request(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        o = self.options
        request: dict[str, Any] = {
            "model": o.model,
            "messages": messages,
            "temperature": o.temperature,
            "max_tokens": o.max_tokens or self.template.max_tokens,
        }
        if o.samples > 1:
            request["n"] = o.samples
        if o.logprobs:
            request.update(logprobs=True, top_logprobs=20)
        return request

    async def _ask(
        self,
        session: ApiSession,
        messages: list[dict[str, str]],
        usable: Callable[[dict[str, Any]], bool] | None = None,
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The reply bodies and their first ``samples`` choices; an endpoint that returns
        fewer choices than asked is asked again for the rest, one sample at a time.  A body
        ``usable`` refuses is not cached."""
        request = self._request(messages)
        key = self.client.request_key(CHAT, request)
        bodies = [await session.post(CHAT, request, cache_key=key, usable=usable)]
        choices = _choices(bodies[0])[: self.options.samples]
        single = {k: v for k, v in request.items() if k != "n"}
        for i in range(len(choices), self.options.samples):
            key = self.client.request_key(CHAT, single, {"sample": i})
            bodies.append(await session.post(CHAT, single, cache_key=key, usable=usable))
            choices += _choices(bodies[-1])[:1]
        return bodies, choices

    def _spent(self, bodies: list[dict[str, Any]]) -> tuple[float, int, int]:
        prompt_tokens = sum(usage(b)[0] for b in bodies)
        completion_tokens = sum(usage(b)[1] for b in bodies)
        price = self.options.price
        return (
            price.cost(prompt_tokens, completion_tokens) if price else 0.0,
            prompt_tokens,
            completion_tokens,
        )

    # -- before a run ------------------------------------------------------------------------
    def check_ready(self) -> None:
        """One call on a pair any judge can tell apart: an endpoint whose reply holds no
        verdict (or rating) at all would leave every pair unparsed — bad input, before a run
        stores anything."""
        answer, other = _READY_ANSWERS
        question = Prompt("ready", _READY_QUESTION)
        if self.judges_pairs():
            shown = PairShown(
                question,
                Response("ready-a", "ready", None, answer),
                Response("ready-b", "ready", None, other),
            )
            if self._judge_pairs([shown], ready=True)[0].verdict == "unparsed":
                raise BadInput(
                    f"{self.client.base_url}: the judge's reply to its ready call (an easy "
                    "pair) holds no [[A]], [[B]] or [[C]] verdict; check model and template",
                    field="model",
                    value=self.options.model,
                )
            return
        self._score([(question, Response("ready-a", "ready", None, answer))], ready=True)

    def estimate_calls(self, texts: Sequence[Sequence[str]], calls: int) -> CallEstimate:
        """The tokens of ``calls`` calls showing texts like ``texts`` (each a question and its
        answers; empty: a 50-token question and answers of ``expected_answer_tokens``): the
        template's words and the texts once per call at ≈ 4 characters a token, and
        ``samples`` replies of the template's typical length (one request asks for them all)."""
        o = self.options
        answers = 2 if self.judges_pairs() else 1
        blank = estimate_tokens(self.template.user + (self.template.system or ""))
        shown = (
            float(np.mean([sum(estimate_tokens(t) for t in group) for group in texts]))
            if texts
            else 50.0 + answers * o.expected_answer_tokens
        )
        reply = min(self.template.reply_tokens, o.max_tokens or self.template.max_tokens)
        return CallEstimate(calls, calls * (blank + shown), calls * reply * o.samples)


def _read_verdict(
    parsed: list[Literal["first", "second", "tie"] | None],
    probabilities: list[dict[str, float] | None],
) -> tuple[Verdict, float, bool]:
    """(verdict, P(first) with a tie ½, from log-probabilities?) of one call's replies: the
    verdict tokens' probabilities averaged over the replies that have them, else the parsed
    verdicts' shares; ("unparsed", NaN) when neither holds a verdict."""
    read = [p for p in probabilities if p is not None]
    if read:
        mean = {k: float(np.mean([p[k] for p in read])) for k in read[0]}
        return max(_DECISIONS, key=mean.__getitem__), mean["first"] + 0.5 * mean["tie"], True
    found: list[Verdict] = [v for v in parsed if v is not None]
    if not found:
        return "unparsed", math.nan, False
    share = float(np.mean([_CREDIT[v] for v in found]))
    return max(_DECISIONS, key=found.count), share, False


def chat_contents_of(choices: list[dict[str, Any]]) -> list[str | None]:
    return chat_contents({"choices": choices}) if choices else [None]


def _choices(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A reply's choices (one that is not a JSON object read as an empty one)."""
    found = body.get("choices")
    return [c if isinstance(c, dict) else {} for c in found] if isinstance(found, list) else []


@hookimpl
def register_reward_models(register):
    register(LlmJudgeRM)
