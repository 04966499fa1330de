"""Tiny models for the Hugging Face tests, built once per session (tests/_tiny_hf.py)."""

from __future__ import annotations

import os

import pytest

# before anything here imports huggingface_hub, which reads it once: no test may reach the hub
os.environ["HF_HUB_OFFLINE"] = "1"


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory) -> dict[str, str]:
    """Name (a key of _tiny_hf.MODELS) → folder of the saved model and tokenizer."""
    pytest.importorskip("torch")
    import _tiny_hf

    folder = tmp_path_factory.mktemp("tiny-hf-models")
    return {name: str(_tiny_hf.build(name, folder)) for name in _tiny_hf.MODELS}


@pytest.fixture(scope="session")
def pairs():
    """(prompt, response) pairs from the conformance kit, 4 prompts × 4 responses of varied
    length (the longest over 200 tokens)."""
    from rmaudit.testing import sample_prompts, sample_responses

    prompts = sample_prompts()
    by_id = {p.id: p for p in prompts}
    return [(by_id[r.prompt_id], r) for r in sample_responses(prompts)]


@pytest.fixture(scope="session")
def tiny_prms(tmp_path_factory) -> dict[str, str]:
    """Name (a key of _tiny_prm.BUILDERS) → folder of the saved PRM and its tokenizer."""
    pytest.importorskip("torch")
    import _tiny_prm

    folder = tmp_path_factory.mktemp("tiny-prms")
    return {name: str(_tiny_prm.build(name, folder)) for name in _tiny_prm.BUILDERS}


@pytest.fixture(scope="session")
def solutions():
    """Sixteen solutions of one to six steps and 10 to 120 tokens under the tiny PRMs'
    tokenizer (as many as the smallest sample the scoring checks draw)."""
    from rmaudit.components import Solution

    sentences = [
        "Subtract 3 from both sides: 2x = 8.",
        "Divide by 2, so x = 4.",
        "The area of a circle of radius 3 is 9 pi.",
        "17 + 25 = 42",
        "42 - 2 = 40, the answer.",
        "So x = 4 and the answer is 4.",
    ]
    return [
        Solution(
            f"Find x if 2x + {i} = {2 * 4 + i}.",
            tuple(sentences[(i + j) % len(sentences)] for j in range(1 + i % 6)),
        )
        for i in range(16)
    ]
