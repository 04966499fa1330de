"""The openai-chat policy and the openai-embeddings embedder against a local server."""

from __future__ import annotations

import numpy as np
from _api_support import KEY_ENV

from rmaudit.components import Prompt
from rmaudit.components.keys import prompt_id
from rmaudit.default_plugins.openai_compat import OpenAIChatPolicy, OpenAIEmbeddings
from rmaudit.recipe.validation import validate_options
from rmaudit.testing.fake_openai import embedding


def build(cls, server, **options):
    raw = {"base_url": server.base_url, "api_key_env": KEY_ENV, **options}
    return cls(validate_options(cls, raw, field="x", file=None, base_dir=None))


def test_a_multi_turn_prompt_set_is_answered_turn_by_turn(fake_openai):
    server = fake_openai()
    policy = build(OpenAIChatPolicy, server, model="p", system="Be brief.")
    prompt = Prompt(prompt_id("x"), "x", {"turns": ["First question?", "Second question?"]})
    [generation] = policy.generate([(prompt, 0)])
    first, second = generation.meta["turns"]
    assert generation.text == second and second.endswith("to: Second question?")
    asked = [e["question"] for e in server.log]
    assert asked == ["First question?", "Second question?"]
    assert generation.meta["prompt_tokens"] > 0 and generation.meta["finish_reason"] == "stop"


def test_samples_of_a_prompt_differ_and_stay_fixed_across_batches(fake_openai):
    server = fake_openai()
    policy = build(OpenAIChatPolicy, server, model="p")
    prompt = Prompt(prompt_id("Hi?"), "Hi?", {"messages": [{"role": "user", "content": "Hi?"}]})
    together = [g.text for g in policy.generate([(prompt, 0), (prompt, 1)])]
    assert together[0] != together[1]
    assert [policy.generate([(prompt, i)])[0].text for i in (1, 0)] == together[::-1]
    assert server.count() == 2


def test_embeddings_are_fetched_once_per_text_and_concatenated_per_turn(fake_openai):
    server = fake_openai()
    embedder = build(OpenAIEmbeddings, server, batch_size=2, dimensions=8)
    texts = ["alpha", "beta", "gamma"]
    vectors = embedder.embed(texts)
    np.testing.assert_allclose(vectors, [embedding(t) for t in texts])
    assert server.count() == 2  # 3 texts in requests of 2
    embedder.embed(["gamma", "delta"])
    assert server.count() == 3 and server.log[-1]["inputs"] == ["delta"]

    sets = [Prompt(str(i), f"set {i}", {"turns": [f"q{i}a", f"q{i}b"]}) for i in range(3)]
    np.testing.assert_allclose(
        embedder.embed_prompts(sets), [embedding(f"q{i}a") + embedding(f"q{i}b") for i in range(3)]
    )


def test_the_embedding_cost_estimate_uses_the_price(fake_openai):
    embedder = build(OpenAIEmbeddings, fake_openai(), price={"prompt": 0.13, "completion": 0})
    assert embedder.estimate_cost(["x" * 400, "y" * 400]) == 200 * 0.13 / 1e6
