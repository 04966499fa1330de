"""Built-in embedders: TF-IDF + truncated SVD (LSA), the offline default."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from pydantic import Field

from rmaudit import hookimpl
from rmaudit.components import ComponentOptions, Embedder
from rmaudit.embedding import tfidf_lsa


class TfidfLsaOptions(ComponentOptions):
    dims: int = Field(256, ge=2, description="dimensions kept by the truncated SVD (k-DPP needs >= k)")
    seed: int = 0


class TfidfLsa(Embedder):
    """TF-IDF over word uni- and bigrams reduced by truncated SVD; offline, no model needed."""

    name = "tfidf-lsa"
    Options = TfidfLsaOptions

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return tfidf_lsa(list(texts), dims=self.options.dims, seed=self.options.seed)


@hookimpl
def register_embedders(register):
    register(TfidfLsa)
