"""RETA's ± coverage as a function of prompts: the figures rmaudit quotes are those
benchmarks/coverage.py measured, and a summary warns where its ±s go beyond them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _support import SMALL_RECIPE

from rmaudit.metrics.reta_coverage import PLUS_MINUS_COVERAGE, VALIDATED_PROMPTS
from rmaudit.recipe import load_recipe
from rmaudit.results.summary import load_summary
from rmaudit.run import Runner
from rmaudit.store import Store

TABLE = Path(__file__).resolve().parents[1] / "benchmarks" / "coverage_reta_prompts.md"
ROW = re.compile(
    r"\| RETA\((1/16|1/4)\) \| ± 1\.96·stderr \| (finite-N|limit) [\d.]+ \| ([\d,]+) prompts "
    r"× 64 \| ([\d.]+)"
)


def measured() -> dict[tuple[float, str, int], float]:
    text = TABLE.read_text(encoding="utf-8")
    return {
        (1 / 16 if m[1] == "1/16" else 0.25, m[2], int(m[3].replace(",", ""))): float(m[4])
        for m in ROW.finditer(text)
    }


def test_the_quoted_coverage_is_what_the_benchmark_measured():
    table = measured()
    quoted = {
        (eta, truth, prompts): pair[index]
        for eta, by_prompts in PLUS_MINUS_COVERAGE.items()
        for prompts, pair in by_prompts.items()
        for index, truth in enumerate(("finite-N", "limit"))
    }
    assert quoted == table
    on_target = [
        prompts
        for prompts in sorted({p for _, _, p in table})
        if all(
            0.92 <= v <= 0.98 for (_, t, p), v in table.items() if p == prompts and t == "finite-N"
        )
    ]
    assert VALIDATED_PROMPTS == on_target[0] == 20
    # the gap to Theorem 1's limit is fixed, the ± shrinks: coverage of the limit falls
    limit = [table[(1 / 16, "limit", p)] for p in (100, 400, 1600)]
    assert limit == sorted(limit, reverse=True) and limit[-1] < 0.1


def summary_notes(tmp_path: Path, prompts: int) -> list[str]:
    recipe = tmp_path / f"k{prompts}.toml"
    recipe.write_text(SMALL_RECIPE.replace("k = 8", f"k = {prompts}").replace("{extra_rms}", ""))
    store = Store.open(tmp_path / f"k{prompts}.db")
    try:
        run_id = Runner(load_recipe(recipe), store).run().run_id
        return load_summary(store, run_id).notes
    finally:
        store.close()


@pytest.mark.parametrize("prompts", [8, 20])
def test_a_summary_warns_where_its_plus_minus_was_not_validated(tmp_path, prompts):
    assert "k = 8" in SMALL_RECIPE
    warned = [n for n in summary_notes(tmp_path, prompts) if "are not validated" in n]
    if prompts < VALIDATED_PROMPTS:
        assert warned == [
            f"±s over {prompts} prompts are not validated: their coverage was measured from "
            f"20 prompts up (RETA(1/16)'s covered {PLUS_MINUS_COVERAGE[1 / 16][10][0]:.2f} at "
            "10 prompts, not 0.95); read them as rough."
        ]
    else:
        assert warned == []
