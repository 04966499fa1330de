"""hf-judge-rm: a tiny causal LM built offline judges pairs through its next-token
distribution after ``[[``; checked against the same distribution computed here with
transformers directly, and identical whatever the batch size."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "rewardbench-mini.jsonl"

RECIPE = """\
title = "a tiny local judge"
batch_size = {batch}

[pairs.source]
name = "pairs-file"
path = "{pairs}"
subset = "subset"

[[reward_models]]
label = "tiny judge"
name = "hf-judge-rm"
model = "{model}"

[[metrics]]
name = "judge-audit"
"""


def run(rmaudit, tmp_path: Path, model: str, batch: int) -> dict[tuple[str, str, str], float]:
    recipe = tmp_path / f"judge-{batch}.toml"
    recipe.write_text(RECIPE.format(batch=batch, pairs=EXAMPLES, model=model))
    db = tmp_path / f"judge-{batch}.db"
    done = rmaudit("run", str(recipe), "--db", str(db))
    assert done.code == 0, done.err
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "select p.text, a.text, b.text, v.p_first from judge_verdicts v join prompts p on "
            "p.id = v.prompt_id join responses a on a.id = v.first_id join responses b on "
            "b.id = v.second_id"
        ).fetchall()
    return {(q, a, b): p for q, a, b, p in rows}


def test_verdicts_are_the_next_token_distribution_whatever_the_batch(
    rmaudit, tiny_models, tmp_path
):
    from rmaudit.backends.judging.verdicts import RMAUDIT_PAIR

    model = tiny_models["llama-lm"]
    one, many = run(rmaudit, tmp_path, model, 1), run(rmaudit, tmp_path, model, 16)
    assert one == many and len(one) == 2 * sum(1 for _ in EXAMPLES.open())

    tokenizer = transformers.AutoTokenizer.from_pretrained(model)
    lm = transformers.AutoModelForCausalLM.from_pretrained(model).eval()
    letters = [tokenizer.encode(c, add_special_tokens=False)[0] for c in "ABC"]
    for (question, first, second), p_first in list(one.items())[:6]:
        messages = RMAUDIT_PAIR.messages(question=question, answer_a=first, answer_b=second)
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        ids = tokenizer.encode(text + "[[", add_special_tokens=False)
        with torch.no_grad():
            logits = lm(torch.tensor([ids])).logits[0, -1].double()
        p = np.exp(logits[letters].numpy() - logits[letters].numpy().max())
        p /= p.sum()
        assert p_first == pytest.approx(p[0] + p[2] / 2, abs=1e-6)


def test_audit_judge_folder_judges_llmbar_pairs_locally(
    rmaudit, tiny_models, tmp_path, monkeypatch
):
    import json

    monkeypatch.chdir(tmp_path)
    data = tmp_path / "data"
    for subset in (
        "Natural",
        "Adversarial/Neighbor",
        "Adversarial/GPTInst",
        "Adversarial/GPTOut",
        "Adversarial/Manual",
    ):
        path = data / "llmbar" / "LLMBar" / subset / "dataset.json"
        path.parent.mkdir(parents=True)
        records = [
            {
                "input": f"{subset} q{i}?",
                "output_1": f"yes {i}",
                "output_2": "no " * (i + 1),
                "label": 1 + i % 2,
            }
            for i in range(2)
        ]
        path.write_text(json.dumps(records))
    model = tiny_models["llama-lm"]
    done = rmaudit(
        "audit",
        f"judge:{model}",
        "--suite",
        "llmbar",
        "--data-dir",
        str(data),
        "--db",
        str(tmp_path / "a.db"),
        "--json",
    )
    assert done.code == 0, done.err
    judge = json.loads(done.out)["suites"][0]["models"][0]
    assert judge["label"] == f"judge:{model}" and "position_bias" in judge["judge"]
