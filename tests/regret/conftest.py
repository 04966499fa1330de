"""The regret tests' shared stored run (running the recipe once is the slow part)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def regret_db(tmp_path_factory):
    """recipes/regret.toml cut to 24 prompts, run through the CLI once for the regret tests."""
    from rmaudit.cli import main

    folder = tmp_path_factory.mktemp("regret")
    text = (ROOT / "recipes" / "regret.toml").read_text(encoding="utf-8")
    assert "k = 120" in text and text.count("bootstrap = 200") == 2
    recipe = folder / "regret-small.toml"
    recipe.write_text(
        text.replace("k = 120", "k = 24").replace("bootstrap = 200", "bootstrap = 60"),
        encoding="utf-8",
    )
    db = folder / "regret.db"
    with pytest.raises(SystemExit) as done:
        main(["run", str(recipe), "--db", str(db)])
    assert done.value.code == 0
    return db
