"""recipes/helpful-hf.toml and recipes/audit-imported.toml: their --dry-run works offline on
tiny stand-ins for the data files they name (written where the recipes look, relative to a
copy of each recipe), printing the plan and, for the API judge, the cost estimate."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from _support import run_small_audit

RECIPES = Path(__file__).resolve().parents[1] / "recipes"
DIALOGUES = [
    {
        "chosen": f"\n\nHuman: Question {i}?\n\nAssistant: A good answer {i}.",
        "rejected": f"\n\nHuman: Question {i}?\n\nAssistant: A bad answer {i}.",
    }
    for i in range(12)
]


def copy_recipe(name: str, root: Path) -> Path:
    (root / "recipes").mkdir()
    return Path(shutil.copy(RECIPES / name, root / "recipes" / name))


def test_helpful_hf_dry_run_prints_the_plan_and_the_cost_offline(tmp_path, rmaudit, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the dry run needs no key
    recipe = copy_recipe("helpful-hf.toml", tmp_path)
    hh = tmp_path / "data" / "hh-rlhf" / "helpful-base" / "test.jsonl.gz"
    hh.parent.mkdir(parents=True)
    with gzip.open(hh, "wt") as handle:
        handle.writelines(json.dumps(d) + "\n" for d in DIALOGUES)
    db = tmp_path / "hf.db"
    result = rmaudit("run", str(recipe), "--db", str(db), "--dry-run")
    assert result.code == 0, result.err
    # 12 prompts (k = 100 caps at the pool) × N = 256; three RMs
    assert "3,072" in result.out and result.out.count("scores: ") == 3
    assert "response labelling (oracle)" in result.out and "llm-judge" in result.out
    cost_rows = [line for line in result.out.splitlines() if line.startswith("│ total")]
    assert len(cost_rows) == 1 and float(cost_rows[0].split("│")[-2].replace(",", "")) > 0
    assert not db.exists()


def test_audit_imported_dry_run_plans_scoring_only(tmp_path, rmaudit, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    recipe = copy_recipe("audit-imported.toml", tmp_path)
    (tmp_path / "data").mkdir()
    source_db = run_small_audit(tmp_path)
    exported = rmaudit(
        "export", str(tmp_path / "data" / "helpful-benchmark.jsonl.gz"), "--db", str(source_db)
    )
    assert exported.code == 0, exported.err
    result = rmaudit("run", str(recipe), "--db", str(tmp_path / "new.db"), "--dry-run")
    assert result.code == 0, result.err
    assert "responses (imported)" in result.out and "scores: Deberta-0.3B" in result.out
    assert "oracle labels" not in result.out and "USD" not in result.out
