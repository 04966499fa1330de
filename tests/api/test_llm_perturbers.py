"""llm-paraphrase and llm-rewrite (Rethinking RM Evaluation, arXiv 2410.05584, Tables 5/6) against a
local OpenAI-compatible server."""

from __future__ import annotations

import json
import sqlite3
import textwrap

import pytest
from _api_support import KEY_ENV, SECRET

from rmaudit.benchmark.perturb import selected
from rmaudit.default_plugins.rewrite_perturbers import (
    PARAPHRASE_TEMPLATE,
    REWRITE_TEMPLATE,
    LlmParaphrase,
    LlmRewrite,
)
from rmaudit.errors import BadInput
from rmaudit.recipe import load_recipe
from rmaudit.recipe.validation import validate_options
from rmaudit.run import Runner
from rmaudit.store import Store
from rmaudit.testing import check_shift_perturber

TEXTS = [f"How do I bake bread, variant {i}? {{braces}} kept" for i in range(30)]


def build(cls, server, **options):
    raw = {"base_url": server.base_url, "api_key_env": KEY_ENV, "model": "m", **options}
    return cls(validate_options(cls, raw, field="x", file=None, base_dir=None))


@pytest.mark.parametrize(
    "cls, template", [(LlmParaphrase, PARAPHRASE_TEMPLATE), (LlmRewrite, REWRITE_TEMPLATE)]
)
def test_each_chosen_text_is_rewritten_with_the_papers_template(cls, template, fake_openai):
    server = fake_openai()
    component = build(cls, server, p=0.5, seed=1)
    out = component.perturb_batch(TEXTS, seed=4)
    chosen = [selected(cls.name, t, 0.5, seed=(1, 4)) for t in TEXTS]
    assert 0 < sum(chosen) < len(TEXTS)
    assert server.count() == sum(chosen)  # one request per rewritten text
    asked = sorted(e["question"] for e in server.log)
    assert asked == sorted(
        template.replace("{prompt}", t) for t, c in zip(TEXTS, chosen, strict=True) if c
    )
    for text, new, c in zip(TEXTS, out, chosen, strict=True):
        assert (new != text and new.startswith("Answer ")) if c else new == text
    # the key went in the header only, and no stored reply holds it
    assert {e["authorization"] for e in server.log} == {f"Bearer {SECRET}"}


def test_levels_and_reruns_share_the_cache(fake_openai, tmp_path):
    server = fake_openai()
    low = build(LlmParaphrase, server, p=0.3).perturb_batch(TEXTS, seed=0)
    requests = server.count()
    high = build(LlmParaphrase, server, p=0.9).perturb_batch(TEXTS, seed=0)
    for a, b, text in zip(low, high, TEXTS, strict=True):
        if a != text:
            assert b == a  # rewritten at 0.3: the same rewrite at 0.9, from the cache
    assert server.count() == sum(b != t for b, t in zip(high, TEXTS, strict=True))
    assert server.count() > requests
    before = server.count()
    assert build(LlmParaphrase, server, p=0.9).perturb_batch(TEXTS, seed=0) == high
    assert server.count() == before  # a rerun pays for nothing
    cache = (tmp_path / "cache").rglob("*.sqlite")
    assert all(SECRET.encode() not in f.read_bytes() for f in cache)


def test_p_zero_and_blank_texts_send_nothing(fake_openai):
    server = fake_openai()
    assert build(LlmRewrite, server, p=0.0).perturb_batch(TEXTS, seed=0) == TEXTS
    assert build(LlmRewrite, server, p=1.0).perturb_batch(["", "  \n"], seed=0) == ["", "  \n"]
    assert server.count() == 0


def test_conformance_a_custom_template_and_identity(fake_openai):
    server = fake_openai()
    component = build(LlmParaphrase, server, p=1.0, template="Reword: {prompt}")
    check_shift_perturber(component)
    assert server.log[0]["question"].startswith("Reword: ")
    with pytest.raises(BadInput, match="prompt"):
        build(LlmParaphrase, server, template="no placeholder")
    # operational options are not part of the key; the model and template are
    assert build(LlmParaphrase, server, concurrency=2).key == build(LlmParaphrase, server).key
    assert build(LlmParaphrase, server, model="n").key != build(LlmParaphrase, server).key
    assert SECRET not in json.dumps(component.identity())


def test_a_prompt_shift_sweep_with_an_llm_paraphraser(fake_openai, tmp_path):
    server = fake_openai()
    records = [
        {
            "prompt": f"Question {i}: why is the sky blue?",
            "chosen": f"Rayleigh {i}.",
            "rejected": f"No idea {i}.",
        }
        for i in range(10)
    ]
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    recipe = tmp_path / "r.toml"
    recipe.write_text(
        textwrap.dedent(f"""
        [pairs.source]
        name = "pairs-file"
        path = "pairs.jsonl"

        [pairs.shift]
        levels = [0, 0.5, 1]
        targets = ["prompt"]

        [pairs.shift.perturber]
        name = "llm-paraphrase"
        base_url = "{server.base_url}"
        api_key_env = "{KEY_ENV}"
        model = "m"

        [[reward_models]]
        name = "simulated-rm"
        """)
    )
    db = tmp_path / "audit.db"
    store = Store.open(db)
    try:
        Runner(load_recipe(recipe), store).run()
        assert server.count() == len(records)  # once per prompt, whatever the levels
        Runner(load_recipe(recipe), store).run()
    finally:
        store.close()
    assert server.count() == len(records)
    conn = sqlite3.connect(db)
    texts = [t for (t,) in conn.execute("select text from prompts")]
    conn.close()
    # level 1 rewrote every prompt; level 0.5 some of them, with the same (cached) rewrites
    rewritten = [t for t in texts if t.startswith("Answer ")]
    assert len(set(rewritten)) == len(records) < len(rewritten) < 2 * len(records)
    assert all(SECRET not in t for t in texts)
    assert SECRET.encode() not in db.read_bytes()
