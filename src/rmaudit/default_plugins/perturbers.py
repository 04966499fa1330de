"""Built-in shift perturbers: word insert / delete / replace and character noise (RMs Under
Distribution Shift, arXiv 2311.14743, Sec. 4.2).

Each component perturbs one text; which texts (prompt, responses or both) and which p values
are the shift sweep's business.  The component's ``seed`` option and the ``seed`` the caller
passes (e.g. a sweep replicate) both seed the edit, together with a hash of the text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, TypeVar

from pydantic import Field

from rmaudit import hookimpl
from rmaudit.benchmark.perturb import (
    DEFAULT_VOCABULARY_SIZE,
    char_noise,
    delete_words,
    insert_words,
    perturb_words,
    replace_words,
)
from rmaudit.components import ComponentOptions, ShiftPerturber


class PerturbOptions(ComponentOptions):
    p: float = Field(
        0.1, ge=0.0, le=1.0, description="probability of editing each word (or character)"
    )
    seed: int = Field(0, ge=0, description="seeds the edits, with the caller's seed and the text")


class VocabularyOptions(PerturbOptions):
    vocabulary_size: int = Field(
        DEFAULT_VOCABULARY_SIZE,
        ge=1,
        description="random words come from wordfreq's N most frequent English words",
    )


_PerturbOptionsT = TypeVar("_PerturbOptionsT", bound=PerturbOptions)


class _FunctionPerturber(ShiftPerturber[_PerturbOptionsT]):
    """A perturber that calls one function of :mod:`rmaudit.benchmark.perturb`."""

    edit: ClassVar[Callable[..., str]]

    def perturb(self, text: str, *, seed: int) -> str:
        options = self.options.model_dump()
        p, own_seed = options.pop("p"), options.pop("seed")
        return type(self).edit(text, p, seed=(own_seed, seed), **options)


class _VocabularyPerturber(_FunctionPerturber[VocabularyOptions]):
    Options = VocabularyOptions
    data_packages = ("wordfreq",)  # the random words: a new release may change them


class WordInsert(_VocabularyPerturber):
    """After each word, with probability p, insert a random English word (RMs Under Distribution
    Shift, Sec. 4.2)."""

    name = "word-insert"
    edit = staticmethod(insert_words)


class WordDelete(_FunctionPerturber[PerturbOptions]):
    """Delete each word with probability p (RMs Under Distribution Shift, Sec. 4.2)."""

    name = "word-delete"
    Options = PerturbOptions
    edit = staticmethod(delete_words)


class WordReplace(_VocabularyPerturber):
    """Replace each word, with probability p, by a different random English word (RMs Under
    Distribution Shift, Sec. 4.2)."""

    name = "word-replace"
    edit = staticmethod(replace_words)


class WordPerturb(_VocabularyPerturber):
    """Each word, with probability p, gets an insertion, deletion or replacement (RMs Under
    Distribution Shift, Sec. 4.2)."""

    name = "word-perturb"
    edit = staticmethod(perturb_words)


class CharNoise(_FunctionPerturber[PerturbOptions]):
    """Typo noise: each letter or digit, with probability p, is swapped, dropped or followed by a
    letter."""

    name = "char-noise"
    Options = PerturbOptions
    edit = staticmethod(char_noise)


@hookimpl
def register_shift_perturbers(register):
    for cls in (WordInsert, WordDelete, WordReplace, WordPerturb, CharNoise):
        register(cls)
