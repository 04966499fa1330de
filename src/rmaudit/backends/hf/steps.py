"""A solution written for a process reward model: its text with a marker after each step
(a separator token, a step tag), tokenised, and the positions each step's score is read at.

Both Hugging Face conventions write the steps, each followed by its marker, and read the
model's per-token output at each marker: Qwen2.5-Math-PRM's token classifier at the
``<extra_0>`` it writes after every step, inside the chat template; Math-Shepherd's causal
LM at the ``ки`` tag it writes after every step of a plain text.  The read position is the
token that holds the marker's last character.  Tokenised as a whole text, a marker may come
out as several tokens, or as one token that took in the text beside it; tokenised in pieces
(the question, each step and each marker on their own, the ids joined: how TRL's PRM
trainer writes its inputs) every marker is its own token.  :func:`marker_reads` says which.

Only the standard library here: the tokenizer is the caller's object.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rmaudit.components.process import Solution
from rmaudit.errors import BadInput

#: How a step's marker was tokenised: its own token, several tokens, or one token that took
#: in text beside it.
MarkerRead = Literal["whole", "split", "merged"]


@dataclass(frozen=True)
class StepLayout:
    """Where the question, the steps and their markers go: a plain text (question,
    ``after_question``, then every step followed by ``before_marker`` + marker +
    ``after_marker``), or, ``chat``, the same steps as the assistant's message after the
    question as the user's (and ``system_prompt`` as the system's, unless empty), rendered
    by the chat template (``template``: None for the tokenizer's own)."""

    marker: str
    before_marker: str = ""
    after_marker: str = ""
    after_question: str = ""
    chat: bool = False
    template: str | None = None
    system_prompt: str = ""
    pieces: bool = False


@dataclass(frozen=True)
class RenderedSolution:
    """A solution's text, the character span of each step's marker in it, and where its
    pieces meet (the question's end, each step's and marker's ends: what
    ``tokenize = "pieces"`` tokenises apart)."""

    text: str
    markers: tuple[tuple[int, int], ...]
    cuts: tuple[int, ...] = ()


@dataclass(frozen=True)
class EncodedSolution:
    """A solution's token ids and, per step, the first and last token over its marker's
    characters: the score is read at the last."""

    ids: list[int]
    marker_tokens: tuple[tuple[int, int], ...]

    @property
    def read_at(self) -> tuple[int, ...]:
        return tuple(last for _, last in self.marker_tokens)

    def past(self, max_length: int | None) -> list[int]:
        """The steps whose read position lies past the first ``max_length`` tokens."""
        if max_length is None:
            return []
        return [step for step, at in enumerate(self.read_at) if at >= max_length]


def marker_id(tokenizer: Any, text: str, *, field: str) -> int:
    """The one token ``text`` is alone (no special tokens added); ``BadInput`` naming
    ``field`` when the tokenizer's vocabulary has no such token."""
    ids = _one_token(tokenizer, text)
    if ids is None:
        raise BadInput(
            f"not a token of the tokenizer's vocabulary: it encodes as {_pieces(tokenizer, text)}",
            field=field,
            value=text,
        )
    return ids


def accepted_ids(tokenizer: Any, marker: str, *, field: str) -> frozenset[int]:
    """The tokens a marker may be read at: the one it is alone, and the one it is after a
    space (sentencepiece writes a word after a space, and alone, as one "▁word" token;
    byte-level BPE writes a word after a space as a "Ġword" token of its own);
    ``BadInput`` naming ``field`` when the vocabulary has neither."""
    ids = {_one_token(tokenizer, marker), _one_token(tokenizer, " " + marker)} - {None}
    if not ids:
        raise BadInput(
            f"not a token of the tokenizer's vocabulary: it encodes as "
            f"{_pieces(tokenizer, marker)}, and after a space as "
            f"{_pieces(tokenizer, ' ' + marker)}",
            field=field,
            value=marker,
        )
    return frozenset(i for i in ids if i is not None)


def _one_token(tokenizer: Any, text: str) -> int | None:
    ids = list(tokenizer(text, add_special_tokens=False)["input_ids"])
    return ids[0] if len(ids) == 1 and ids[0] != tokenizer.unk_token_id else None


def _pieces(tokenizer: Any, text: str) -> str:
    tokens = tokenizer.convert_ids_to_tokens(tokenizer(text, add_special_tokens=False)["input_ids"])
    return f"{len(tokens)} tokens {tokens}"


def render(solution: Solution, layout: StepLayout, tokenizer: Any) -> RenderedSolution:
    """The solution's text as the layout writes it, with its markers' spans."""
    from rmaudit.backends.hf.runtime import render_chat

    content, spans, cuts = "", [], []
    for step in solution.steps:
        for piece in (step, layout.before_marker):
            content += piece
            cuts.append(len(content))
        spans.append((len(content), len(content) + len(layout.marker)))
        for piece in (layout.marker, layout.after_marker):
            content += piece
            cuts.append(len(content))
    if layout.chat:
        messages = [{"role": "system", "content": layout.system_prompt}] * bool(
            layout.system_prompt
        ) + [
            {"role": "user", "content": solution.question},
            {"role": "assistant", "content": content},
        ]
        text = render_chat(tokenizer, layout.template, messages, add_generation_prompt=False)
        start = text.rfind(content)
        if start < 0:
            raise BadInput(
                "the chat template does not write the steps as given, so their markers "
                "cannot be found; give a template that writes the assistant's message "
                "unchanged as fallback_chat_template, or set format = 'plain'",
                field="format",
                value="chat",
            )
        question_end = start
    else:
        text = solution.question + layout.after_question + content
        start = len(solution.question + layout.after_question)
        question_end = len(solution.question)
    edges = {question_end, start, *(start + cut for cut in cuts)}
    return RenderedSolution(
        text,
        tuple((start + a, start + b) for a, b in spans),
        tuple(sorted(edges - {0, len(text)})),
    )


def encode(
    rendered: Sequence[RenderedSolution], layout: StepLayout, tokenizer: Any
) -> list[EncodedSolution]:
    """Token ids of each rendered solution and its markers' tokens, from one batched
    tokenizer call.  A plain text gets the special tokens the tokenizer adds (a BOS); a chat
    template writes its own, so none are added."""
    add_special = not layout.chat
    if layout.pieces:
        return _in_pieces(rendered, tokenizer, add_special)
    if not getattr(tokenizer, "is_fast", False):
        raise BadInput(
            "a slow tokenizer gives no character offsets to find the markers' tokens by; "
            "set tokenize = 'pieces'",
            field="tokenize",
            value="whole",
        )
    encoded = tokenizer(
        [r.text for r in rendered], add_special_tokens=add_special, return_offsets_mapping=True
    )
    out = []
    for i, solution in enumerate(rendered):
        offsets = encoded["offset_mapping"][i]
        out.append(
            EncodedSolution(
                list(encoded["input_ids"][i]), _marker_tokens(offsets, solution.markers)
            )
        )
    return out


def _marker_tokens(
    offsets: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int]]
) -> tuple[tuple[int, int], ...]:
    """Per span, the first and last token whose characters overlap it, in one pass over the
    tokens (their offsets rise with the text; the special tokens a tokenizer adds span no
    characters and overlap nothing)."""
    out, t = [], 0
    for start, end in spans:
        while t < len(offsets) and (offsets[t][1] <= start or offsets[t][1] <= offsets[t][0]):
            t += 1
        hits, u = [], t
        while u < len(offsets) and (offsets[u][0] < end or offsets[u][1] <= offsets[u][0]):
            if offsets[u][1] > offsets[u][0]:
                hits.append(u)
            u += 1
        if not hits:  # a normaliser that dropped the marker's characters
            raise BadInput(
                "the tokenizer drops the marker's characters, so its score cannot be read",
                field="tokenize",
                value="whole",
            )
        out.append((hits[0], hits[-1]))
    return tuple(out)


def _special_ends(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The special tokens the tokenizer adds before and after a text (a BOS, an EOS)."""
    bare = list(tokenizer("x", add_special_tokens=False)["input_ids"])
    full = list(tokenizer("x")["input_ids"])
    for at in range(len(full) - len(bare) + 1):
        if full[at : at + len(bare)] == bare:
            return full[:at], full[at + len(bare) :]
    return [], []


def _in_pieces(
    rendered: Sequence[RenderedSolution], tokenizer: Any, add_special: bool
) -> list[EncodedSolution]:
    """The question, each step and each marker (and the text between them) tokenised on
    their own, in one tokenizer call, the ids of each solution joined."""
    before, after = _special_ends(tokenizer) if add_special else ([], [])
    segments = []
    for solution in rendered:
        cuts = [0, *solution.cuts, len(solution.text)]
        segments.append([(a, solution.text[a:b]) for a, b in zip(cuts, cuts[1:], strict=False)])
    flat = [text for parts in segments for _, text in parts]
    pieces = iter(tokenizer(flat, add_special_tokens=False)["input_ids"] if flat else [])
    out = []
    for solution, parts in zip(rendered, segments, strict=True):
        starts = {a: i for i, (a, _) in enumerate(solution.markers)}
        ids, markers = list(before), [(0, 0)] * len(solution.markers)
        for at, _ in parts:
            piece = next(pieces)
            if at in starts:
                markers[starts[at]] = (len(ids), len(ids) + len(piece) - 1)
            ids.extend(piece)
        out.append(EncodedSolution(ids + after, tuple(markers)))
    return out


def marker_reads(encoded: EncodedSolution, accepted: Collection[int]) -> list[MarkerRead]:
    """How each step's marker was tokenised: ``whole`` (one token, one the marker is),
    ``split`` (several tokens over its characters) or ``merged`` (one token that took in
    text beside it: not one the marker is)."""
    reads: list[MarkerRead] = []
    for first, last in encoded.marker_tokens:
        if last > first:
            reads.append("split")
        elif encoded.ids[last] not in accepted:
            reads.append("merged")
        else:
            reads.append("whole")
    return reads
