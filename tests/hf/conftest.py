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
