"""A whole audit through the runner with tiny Hugging Face models: a real SQLite file, the
policy's meta stored with every response, and a rerun that loads no model."""

from __future__ import annotations

import json
import sqlite3
import textwrap

import pytest

pytest.importorskip("torch")

from rmaudit.recipe import load_recipe  # noqa: E402
from rmaudit.run import Runner  # noqa: E402
from rmaudit.store import Store  # noqa: E402

RECIPE = """
title = "tiny hf audit"
batch_size = 8

[prompts.source]
name = "simulated-helpful"

[prompts.sampler]
name = "random"
k = 3

[responses]
per_prompt = 4

[responses.policy]
name = "hf-causal-lm"
model = "{models}/llama-lm"
max_new_tokens = 8
top_p = 0.9
batch_size = 6

[oracle]
name = "simulated-judge"
samples = 2

[[reward_models]]
label = "gpt2"
name = "hf-classifier"
model = "{models}/gpt2-rm"

[[reward_models]]
label = "dpo"
name = "dpo-implicit"
model = "{models}/gpt2-lm"
reference = "{models}/gpt2-lm-ref"

[[metrics]]
name = "pairwise-accuracy"
"""


def run(recipe, db):
    store = Store.open(db)
    try:
        return Runner(load_recipe(recipe), store).run()
    finally:
        store.close()


def test_audit_with_hugging_face_models_stores_and_resumes(tiny_models, tmp_path):
    models = tiny_models["gpt2-rm"].rsplit("/", 1)[0]
    recipe = tmp_path / "hf.toml"
    recipe.write_text(textwrap.dedent(RECIPE.replace("{models}", models)), encoding="utf-8")
    db = tmp_path / "audit.db"
    result = run(recipe, db)

    conn = sqlite3.connect(db)
    reports = dict(conn.execute("select label, report from run_reward_models"))
    assert json.loads(reports["gpt2"])["input format"] == "the tokenizer's chat template"
    assert any(note.startswith("gpt2: ") and "input format" in note for note in result.notes)
    metas = [json.loads(m) for (m,) in conn.execute("select meta from responses")]
    scores = conn.execute("select count(*), count(distinct rm_key) from rm_scores").fetchone()
    conn.close()
    assert len(metas) == 12 and scores == (24, 2)
    assert all(
        m["top_p"] == 0.9 and m["max_new_tokens"] == 8 and m["perplexity"] > 1 for m in metas
    )

    store = Store.open(db)
    second = Runner(load_recipe(recipe), store)
    try:
        result = second.run()
        assert all(count.pending == 0 for count in result.counts)
        # nothing was left to do, so no model was ever loaded
        hf_components = [
            second.ctx.component(spec)
            for spec in (*second.recipe.reward_models, second.recipe.policy)
        ]
        assert not any(component._loaded for component in hf_components)
    finally:
        store.close()


def test_audit_imported_recipe_scores_an_imported_benchmark_with_no_oracle(
    tiny_models, tmp_path, rmaudit
):
    """recipes/audit-imported.toml for real, its RM swapped for a tiny DeBERTa-v2 one: the
    imported responses are scored and the metrics computed; no policy or oracle runs."""
    from pathlib import Path

    from _support import run_small_audit

    recipe_text = (
        Path(__file__).resolve().parents[2] / "recipes" / "audit-imported.toml"
    ).read_text()
    assert 'model = "OpenAssistant/reward-model-deberta-v3-large-v2"' in recipe_text
    (tmp_path / "recipes").mkdir()
    (tmp_path / "data").mkdir()
    recipe = tmp_path / "recipes" / "audit-imported.toml"
    recipe.write_text(
        recipe_text.replace(
            "OpenAssistant/reward-model-deberta-v3-large-v2", tiny_models["deberta-rm"]
        ),
        encoding="utf-8",
    )
    source = run_small_audit(tmp_path)
    exported = rmaudit(
        "export", str(tmp_path / "data" / "helpful-benchmark.jsonl.gz"), "--db", str(source)
    )
    assert exported.code == 0, exported.err
    db = tmp_path / "imported.db"
    result = rmaudit("run", str(recipe), "--db", str(db))
    assert result.code == 0, result.err
    conn = sqlite3.connect(db)
    try:
        responses, labels = conn.execute(
            "select (select count(*) from responses), (select count(*) from oracle_labels)"
        ).fetchone()
        scored = conn.execute("select count(*) from rm_scores").fetchone()[0]
        metrics = conn.execute("select count(*) from metric_results").fetchone()[0]
    finally:
        conn.close()
    assert responses == labels == scored == 8 * 16 and metrics > 0
    assert "Deberta-0.3B" in result.out
