"""The scoring checks of a served reward model (docs/real-models.md, "Scoring checks"), the
ones that need no weights: the sample sent the ways the checks compare — as the run sends it
(the scores the run keeps), in other batches and order, each item alone with no other request
in flight, a few items alone again, with the other chat template, with a sentence added to
either end — and the scores judged by the Hugging Face models' batch invariance and
determinism findings (:mod:`rmaudit.backends.hf.scoring_checks`) and the server's template and
truncation findings (:mod:`rmaudit.backends.served.findings`).  No pass reads the request
cache: each measures the server now."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from rmaudit.backends.hf.scoring_checks import Noise, batch_invariance, determinism
from rmaudit.backends.served import findings
from rmaudit.backends.served.protocols import ServedInput
from rmaudit.components import Prompt, Response
from rmaudit.components.scoring_checks import ScoringCheck, ScoringChecks

#: a served reward model (model.ServedRM, which imports this module)
ServedRM = Any
#: items scored alone twice for determinism (a nondeterministic server moves every score)
DETERMINISM_ITEMS = 4
#: the longest items probed for truncation
TRUNCATION_ITEMS = 2
#: what the truncation probe adds to either end of an input
PROBE = "This sentence was added to see whether the server reads it."

Pair = tuple[Prompt, Response]
#: the tokens the server reports reading each input (None where it reports none)
Tokens = tuple[int | None, ...]


def _alone(
    rm: ServedRM, inputs: Sequence[ServedInput]
) -> tuple[np.ndarray, tuple[int | None, ...]]:
    """Each input alone, one request at a time: its score, and the tokens the server says it
    read (None where it does not say)."""
    replies = rm.send([[item] for item in inputs], one_at_a_time=True)
    return np.array([r.scores[0] for r in replies]), tuple(r.tokens for r in replies)


def _batched(
    rm: ServedRM, inputs: Sequence[ServedInput], order: Sequence[int], keys: Sequence[str] | None
) -> np.ndarray:
    """``inputs`` in requests as the run sends them, taken in ``order``; the scores in the
    inputs' own order (``keys``: cached as the run's)."""
    size = rm.per_request()
    groups = [list(order[i : i + size]) for i in range(0, len(order), size)]
    replies = rm.send(
        [[inputs[i] for i in g] for g in groups],
        keys=None if keys is None else [[keys[i] for i in g] for g in groups],
    )
    scores = np.empty(len(inputs))
    for group, reply in zip(groups, replies, strict=True):
        scores[group] = reply.scores
    return scores


def _noise(
    rm: ServedRM, inputs: Sequence[ServedInput], repeated: list[int], alone: np.ndarray
) -> Noise:
    """The same requests sent again, alone: how far the server's own scores move."""
    again, _ = _alone(rm, [inputs[i] for i in repeated])
    difference = float(np.max(np.abs(again - alone[repeated]))) if repeated else 0.0
    return Noise(
        len(repeated),
        difference,
        "the server scores the same request differently on two calls (nondeterministic "
        "kernels, or a cache that changes what is computed)",
    )


def run_checks(rm: ServedRM, sample: Sequence[Pair]) -> ScoringChecks:
    """Every check of the served ``rm`` on ``sample``; the rendered input shown is the
    shortest item's, and the sample's scores as the run sends them are the run's own."""
    rm.check_ready()  # a server that cannot answer is refused at its first request
    started = time.perf_counter()
    inputs = rm.inputs(sample)
    keys = [rm.cache_key(item) for item in inputs]
    order = list(range(len(inputs)))
    batched = _batched(rm, inputs, order, keys)
    reordered = _batched(rm, inputs, order[::-1], None)
    alone, tokens = _alone(rm, inputs)
    by_length = sorted(order, key=lambda i: (len(inputs[i].shown()), i))
    repeated = sorted(by_length[:DETERMINISM_ITEMS])
    noise = _noise(rm, inputs, repeated, alone)
    dtype = rm.options.dtype
    checks = (
        batch_invariance(
            np.concatenate([batched, reordered]), np.concatenate([alone, alone]), dtype, noise
        ),
        _template(rm, sample, repeated, alone, tokens, noise),
        _truncation(rm, sample, sorted(by_length[-TRUNCATION_ITEMS:]), alone, tokens, noise),
        determinism(noise),
    )
    return ScoringChecks(
        "",
        len(sample),
        checks,
        rendered_input=inputs[by_length[0]].shown() if inputs else None,
        seconds=time.perf_counter() - started,
        scores=tuple(float(s) for s in batched),
        settings=rm.scoring_settings(),
    )


def _template(
    rm: ServedRM,
    sample: Sequence[Pair],
    items: list[int],
    alone: np.ndarray,
    tokens: Tokens,
    noise: Noise,
) -> ScoringCheck:
    """The template in use against the other, where the protocol takes both and a checkpoint
    was given; else who writes the conversation, in words."""
    o = rm.options
    source = rm.template_source()
    if not rm.protocol.takes_messages:
        return findings.template_by_rmaudit(source, rm.protocol.server)
    if o.tokenizer is None:
        return findings.template_unchecked(source)
    other = "rmaudit" if o.template == "server" else "server"
    others, other_tokens = _alone(rm, rm.inputs([sample[i] for i in items], other))
    other_source = (
        f"{o.tokenizer}'s chat template" if other == "rmaudit" else "the server's chat template"
    )
    compared = findings.TemplateScores(
        source, other_source, alone[items], others, tuple(tokens[i] for i in items), other_tokens
    )
    return findings.template_compared(compared, alone, o.dtype, noise)


def _truncation(
    rm: ServedRM,
    sample: Sequence[Pair],
    items: list[int],
    alone: np.ndarray,
    tokens: Tokens,
    noise: Noise,
) -> ScoringCheck:
    """The longest items again with a sentence after the response and before the prompt."""
    appended = [(p, replace(r, text=f"{r.text}\n\n{PROBE}")) for p, r in (sample[i] for i in items)]
    prepended = [(_prefixed(p), r) for p, r in (sample[i] for i in items)]
    after, after_tokens = _alone(rm, rm.inputs(appended))
    before, _ = _alone(rm, rm.inputs(prepended))
    probe = findings.Probe(
        alone[items], after, before, tuple(tokens[i] for i in items), after_tokens
    )
    return findings.truncation(probe, noise)


def _prefixed(prompt: Prompt) -> Prompt:
    """``prompt`` with the probe sentence before its first message (or its text)."""
    messages = prompt.meta.get("messages")
    if isinstance(messages, list) and messages and isinstance(messages[0], dict):
        first = {**messages[0], "content": f"{PROBE}\n\n{messages[0].get('content', '')}"}
        return replace(prompt, meta={**prompt.meta, "messages": [first, *messages[1:]]})
    return replace(prompt, text=f"{PROBE}\n\n{prompt.text}")


def requests_of_checks(rm: ServedRM, sample: int) -> int:
    """The requests :func:`run_checks` sends on ``sample`` items, at most: the run's batches
    twice (as sent, and reordered), each item alone, the determinism items again, the template
    items the other way, the truncation probes."""
    repeated, probed = min(DETERMINISM_ITEMS, sample), min(TRUNCATION_ITEMS, sample)
    return 2 * rm.calls(sample) + sample + 2 * repeated + 2 * probed


def batch_invariance_of(rm: ServedRM, scored: Sequence[tuple[Pair, float]]) -> ScoringCheck:
    """The batch invariance check of inputs the run scored (``scored``: each with its score
    as the run got it), each re-scored alone, its noise measured on the first few."""
    inputs = rm.inputs([pair for pair, _ in scored])
    alone, _ = _alone(rm, inputs)
    repeated = list(range(min(DETERMINISM_ITEMS, len(inputs))))
    noise = _noise(rm, inputs, repeated, alone)
    batched = np.array([score for _, score in scored])
    return batch_invariance(batched, alone, rm.options.dtype, noise)
