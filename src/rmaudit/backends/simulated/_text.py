"""Shared text primitives: tokens, content words and sentence splitting.

The policy writes text, and the judge and reward models read it back through exactly
these functions, so a word-level perturbation of a response changes what they see in the
same way for every reader.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_LIST_MARKER = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

# Function words plus conversational glue; what is left carries topic content.  The
# dialogue labels of Anthropic-HH-style prompts are included so that a transcript's
# speaker tags never become pseudo key points.
STOPWORDS = frozenset(
    """
a about above after again against all also am an and any are aren't as at be because
been before being below between both but by can can't cannot could couldn't did didn't do
does doesn't doing don't down during each either else even ever every few for from further
get gets getting got had hadn't has hasn't have haven't having he he's her here here's hers
herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its
itself just let let's like lot lots make makes many may me might more most much must my
myself need needs no nor not now of off often on once one only or other others our ours
ourselves out over own per quite rather really same shall she she's should shouldn't so
some such than that that's the their theirs them themselves then there there's these they
they'd they'll they're they've thing things this those though through to too under until
up upon us use used using very want wants was wasn't way ways we we'd we'll we're we've
well were weren't what what's whatever when where where's whether which while who who's
why will with within without won't would wouldn't yes yet you you'd you'll you're you've
your yours yourself yourselves
human assistant
""".split()
)


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens of ``text`` (curly apostrophes folded to straight ones)."""
    return _TOKEN.findall(text.lower().replace("\u2019", "'"))


def content_words(words) -> set[str]:
    """The content words among ``words``: not stopwords, and not single letters."""
    return {w for w in words if w not in STOPWORDS and (len(w) > 1 or w.isdigit())}


def split_sentences(text: str) -> list[str]:
    """Split a response into sentences, treating list items and lines as boundaries."""
    sentences: list[str] = []
    for line in text.splitlines():
        line = _LIST_MARKER.sub("", line).strip()
        if line:
            sentences.extend(s for s in _SENTENCE_END.split(line) if s)
    return sentences
