"""A reward model behind an HTTP server, one component per protocol
(:mod:`rmaudit.backends.served.protocols`; docs/real-models.md, "Served reward models").

Requests go through the judges' client (:class:`rmaudit.backends.openai_api.ApiClient`): at
most ``concurrency`` in flight, 429s, 5xx replies, timeouts, dropped connections and non-JSON
bodies retried with the judges' backoff, the key read from the environment variable the
options name, only when a request is sent.  Every score is cached on its own, keyed by the
server (its URL, protocol and model) and the input as sent, in the judges' request cache: a
rerun — or a killed run resumed — asks for nothing twice, and a reply that is no score (a NaN,
a string, too few scores) is refused before anything is cached, so it never poisons a rerun.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from rmaudit.backends.conversation import conversation_messages
from rmaudit.backends.openai_api import ApiClient, ApiSession
from rmaudit.backends.served.protocols import Message, Protocol, ServedInput, ServedReply
from rmaudit.components import Prompt, Response, RewardModel
from rmaudit.components.keys import content_key
from rmaudit.components.scoring_checks import ScoringCheck, ScoringChecks, keep_first_scored
from rmaudit.errors import BadInput

from .options import ServedRMOptions

#: the item of the ready call: any reward model scores it
_READY = (Prompt("ready", "What is 2 + 2?"), Response("ready-a", "ready", None, "2 + 2 = 4."))
#: how far the ready item's score may move, relative and absolute, for the same weights (a
#: server's other kernels after a restart); other weights move it further
READY_TOLERANCE = 1e-2


class ServedRM(RewardModel[ServedRMOptions]):
    """What the served reward models share; a protocol's component sets ``protocol``."""

    Options = ServedRMOptions
    options: ServedRMOptions
    protocol: ClassVar[Protocol]
    #: calls ``check_ready`` makes before the run (a plan counts them)
    ready_calls = 1

    def __init__(self, options: ServedRMOptions | None = None) -> None:
        super().__init__(options)
        if self.options.template == "server" and not self.protocol.takes_messages:
            raise BadInput(
                f"{self.protocol.server} takes texts only: rmaudit writes the conversation "
                "(template = 'rmaudit', with tokenizer: the checkpoint's)",
                field="template",
                value="server",
            )
        self.client = ApiClient(self.options)
        self.url = self.client.base_url + self.protocol.endpoint
        self._render: Callable[[list[Message]], str] | None = None
        self.requests = 0
        self.from_cache = 0
        self.scored = 0
        self._ready = False
        self._sample: list[tuple[tuple[Prompt, Response], float]] = []

    # -- inputs -------------------------------------------------------------------------------
    def inputs(
        self, batch: Sequence[tuple[Prompt, Response]], template: str | None = None
    ) -> list[ServedInput]:
        """Each (prompt, response) as sent: its conversation written by rmaudit with the chat
        template, or its messages for the server's (``template``, default the options')."""
        if (template or self.options.template) == "server":
            return [ServedInput(messages=tuple(conversation_messages(p, r))) for p, r in batch]
        render = self.renderer()
        return [ServedInput(text=render(conversation_messages(p, r))) for p, r in batch]

    def renderer(self) -> Callable[[list[Message]], str]:
        """The conversation as the tokenizer's chat template (or ``chat_template``) writes it,
        the tokenizer loaded once (the hf extra: transformers)."""
        if self._render is None:
            from rmaudit.backends.hf import runtime

            o = self.options
            if o.tokenizer is None:
                raise BadInput(
                    "rmaudit writes the conversation only with a tokenizer's chat template",
                    field="tokenizer",
                )
            tokenizer = runtime.load_tokenizer(
                o.tokenizer, revision=None, trust_remote_code=False, field="tokenizer"
            )
            if o.chat_template is None and not tokenizer.chat_template:
                raise BadInput(
                    "the tokenizer has no chat template; give one as chat_template",
                    field="tokenizer",
                    value=o.tokenizer,
                )

            def render(messages: list[Message]) -> str:
                return runtime.render_chat(
                    tokenizer, o.chat_template, messages, add_generation_prompt=False
                )

            self._render = render
        return self._render

    def template_source(self) -> str:
        """Who writes the conversation with which chat template, in words."""
        o = self.options
        if o.template == "server":
            return f"the server's chat template ({self.protocol.name} chat requests)"
        which = (
            "the recipe's chat template" if o.chat_template else f"{o.tokenizer}'s chat template"
        )
        return f"rmaudit, with {which} (texts sent)"

    def cache_key(self, item: ServedInput) -> str:
        """An input's score in the request cache: the server (URL, protocol, model), how the
        score is read and the input as sent."""
        o = self.options
        sent: dict[str, Any] = (
            {"input": item.text}
            if item.text is not None
            else {"messages": list(item.messages or ())}
        )
        return self.client.request_key(
            self.protocol.endpoint,
            {
                "protocol": self.protocol.name,
                "model": o.model,
                "truncate_prompt_tokens": o.truncate_prompt_tokens,
                "heads": [o.head_aggregate, o.head_index],
                **sent,
            },
        )

    # -- scoring ------------------------------------------------------------------------------
    def preferred_batch_items(self) -> int | None:
        """Enough inputs per call to keep ``concurrency`` requests in flight."""
        return self.per_request() * self.options.concurrency * 4

    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        scores = self.score_counted(batch)
        keep_first_scored(self._sample, self.options.batch_dependence_sample, batch, scores)
        return scores

    def score_counted(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        """``score``, left out of the batch dependence sample (the scoring checks' own)."""
        return self.cached_scores(self.inputs(batch))

    def cached_scores(self, inputs: Sequence[ServedInput]) -> list[float]:
        """Each input's score: from the request cache, else asked for in requests as the run
        sends them (the same input twice is asked once), each score cached as it comes."""
        keys = [self.cache_key(item) for item in inputs]
        found: dict[str, float] = {}
        missing: dict[str, ServedInput] = {}
        for key, item in zip(keys, inputs, strict=True):
            if key in found or key in missing:
                continue
            cached = _cached_score(self.client.cache.get(key))
            if cached is None:
                missing[key] = item
            else:
                found[key] = cached
        self.from_cache += len(found)
        if missing:
            # texts of like lengths share a request: a server that pads (OpenRLHF's) pads little
            todo = sorted(missing.items(), key=lambda entry: len(entry[1].shown()))
            size = self.per_request()
            groups = [todo[i : i + size] for i in range(0, len(todo), size)]
            replies = self.send(
                [[item for _, item in group] for group in groups],
                keys=[[key for key, _ in group] for group in groups],
            )
            for group, reply in zip(groups, replies, strict=True):
                found.update(zip((key for key, _ in group), reply.scores, strict=True))
        self.scored += len(inputs)
        return [found[key] for key in keys]

    def per_request(self) -> int:
        """Inputs one request holds: ``batch_size`` texts, or one conversation (one text, for
        a protocol that takes one)."""
        batches = self.options.template == "rmaudit" and self.protocol.batches
        return self.options.batch_size if batches else 1

    def send(
        self,
        groups: Sequence[Sequence[ServedInput]],
        *,
        keys: Sequence[Sequence[str]] | None = None,
        one_at_a_time: bool = False,
        ready: bool = False,
    ) -> list[ServedReply]:
        """One request per group, ``concurrency`` in flight (``one_at_a_time``: each sent
        after the last replied, so no other request shares the server's batch); with
        ``keys``, each score cached as its reply comes."""

        async def work(session: ApiSession) -> list[ServedReply]:
            posts = [
                self._post(session, group, None if keys is None else keys[i])
                for i, group in enumerate(groups)
            ]
            if one_at_a_time:
                return [await post for post in posts]
            return await session.gather(posts)

        return self.client.run(work, ready=ready)

    async def _post(
        self, session: ApiSession, group: Sequence[ServedInput], keys: Sequence[str] | None
    ) -> ServedReply:
        o = self.options
        if group[0].text is not None:
            payload = self.protocol.texts_request(
                o.model, [item.text or "" for item in group], o.truncate_prompt_tokens
            )
        else:
            payload = self.protocol.messages_request(
                o.model, list(group[0].messages or ()), o.truncate_prompt_tokens
            )
        body = await session.post(self.protocol.endpoint, payload, cache_key=None)
        reply = self.protocol.read(body, len(group), o.heads, self.url)
        self.requests += 1
        for key, score in zip(keys or (), reply.scores, strict=False):
            self.client.cache.put(key, self.protocol.endpoint, {"score": score})
        return reply

    # -- before and after a run ---------------------------------------------------------------
    def check_ready(self) -> None:
        """One request scoring an easy item, before the first other (the scoring checks'):
        a URL where nothing answers, a path the server does not serve (another protocol's)
        or a reply that is no score is bad input before a run stores anything; so is a
        score that is not the one cached for the same server (:meth:`_same_weights`).  Once
        answered, not asked again."""
        if not self._ready:
            [ready] = self.inputs([_READY])
            key = self.cache_key(ready)
            cached = _cached_score(self.client.cache.get(key))
            [reply] = self.send([[ready]], keys=[[key]], ready=True)  # cached if not yet
            self._same_weights(cached, reply.scores[0])
            self._ready = True

    def _same_weights(self, cached: float | None, score: float) -> None:
        """The ready item's score now against the one cached beside the server's other scores
        (None: none yet): a server restarted at the same URL with other weights under the same
        ``model`` name would otherwise have the cached scores of the old weights mixed with
        its own.  One off by more than :data:`READY_TOLERANCE` is bad input."""
        if cached is not None and not math.isclose(
            score, cached, rel_tol=READY_TOLERANCE, abs_tol=READY_TOLERANCE
        ):
            name = self.options.model
            raise BadInput(
                f"{self.url} scores the ready item {score:.6g}, but {cached:.6g} when the "
                "request cache's scores for this server were stored: it serves other weights "
                f"under the same {'model name' if name else 'URL, with no model name'}; give "
                "them a name of their own (vLLM's --served-model-name, then --rm-model or the "
                "recipe's model) or another cache file",
                field="model",
                **({"value": name} if name else {}),
            )

    def calls(self, items: int) -> int:
        """Requests that ``items`` inputs not cached take."""
        return math.ceil(items / self.per_request())

    def check_calls(self, sample: int) -> int:
        """Requests the scoring checks send on a sample of ``sample`` items, at most."""
        from .checks import requests_of_checks

        return requests_of_checks(self, sample)

    def report(self) -> dict[str, Any]:
        return {
            "server": self.protocol.server,
            "url": self.url,
            "chat template": self.template_source(),
            "inputs scored": self.scored,
            "inputs from the request cache": self.from_cache,
            "requests": self.requests,
        }

    def scoring_settings(self) -> dict[str, Any]:
        """What the server's scores may depend on beyond the key (how requests batch), and
        the settings in the key a check's fix changes (the template)."""
        o = self.options
        return {
            "protocol": self.protocol.name,
            "template": o.template,
            "tokenizer": o.tokenizer,
            "chat_template": content_key("chat template", o.chat_template)
            if o.chat_template
            else None,
            "batch_size": self.per_request(),
            "concurrency": o.concurrency,
            "dtype": o.dtype,
            "truncate_prompt_tokens": o.truncate_prompt_tokens,
        }

    def scoring_checks(self, sample: Sequence[tuple[Prompt, Response]]) -> ScoringChecks:
        """The server's scoring checks on ``sample`` (docs/real-models.md, "Scoring checks")."""
        from .checks import run_checks

        return run_checks(self, sample)

    def batch_dependence(self) -> ScoringCheck | None:
        """With the checks skipped: the first inputs the run scored, re-scored alone."""
        if not self._sample:
            return None
        from .checks import batch_invariance_of

        return batch_invariance_of(self, self._sample)


def _cached_score(body: dict[str, Any] | None) -> float | None:
    """A cached score, where the cache holds a finite number (anything else is asked again)."""
    score = None if body is None else body.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        return None
    return float(score)
