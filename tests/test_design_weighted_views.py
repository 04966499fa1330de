"""What the TUI and the reports derive from labels under a label design counts only the labels
the design drew, 1/π-weighted where it is a mean (issue 35): the failure table (the oracle score
of an RM's favourite and the prompt's best) and the normalizer ablation.  On a budget-1 run
each equals full labelling's; on a budgeted one each is what the drawn labels give."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest
from test_label_budget import budgeted

from rmaudit.errors import BadInput
from rmaudit.results.ablation import normalizer_ablation
from rmaudit.results.browse import PromptFailure, prompt_failures
from rmaudit.results.run_index import open_for_reading
from rmaudit.results.summary import latest_run_id, load_summary

GUIDED = 'budget = 0.25\ndesign = "rm-guided"\nguide = ["honest"]'


def failure_tables(db) -> dict[str, dict[str, PromptFailure]]:
    """RM label → prompt id → its failure row, for the latest run."""
    store = open_for_reading(db)
    try:
        summary = load_summary(store, latest_run_id(store))
        return {
            label: {row.prompt_id: row for row in prompt_failures(store, summary, rm_key)}
            for label, rm_key in summary.reward_models
        }
    finally:
        store.close()


def run(rmaudit, write_recipe, db, oracle_lines: str, name: str) -> None:
    ran = rmaudit("run", str(write_recipe(budgeted(oracle_lines), name=name)), "--db", str(db))
    assert ran.code == 0, ran.err


def test_a_budget_of_one_shows_full_labellings_failure_table(rmaudit, write_recipe, tmp_path):
    full_db, one_db = tmp_path / "full.db", tmp_path / "one.db"
    run(rmaudit, write_recipe, full_db, "", "full.toml")
    run(rmaudit, write_recipe, one_db, "budget = 1", "one.toml")
    full, one = failure_tables(full_db), failure_tables(one_db)
    assert full.keys() == one.keys() == {"honest", "length"}
    for label, rows in full.items():
        assert rows.keys() == one[label].keys() and len(rows) == 8
        for prompt_id, row in rows.items():
            assert one[label][prompt_id].pick_oracle == pytest.approx(row.pick_oracle, abs=1e-12)
            assert one[label][prompt_id].best_oracle == pytest.approx(row.best_oracle, abs=1e-12)


def drawn_by_prompt(db, rm_label: str) -> dict[str, list[tuple[float, float | None, float]]]:
    """Prompt id → (RM score, drawn label or None, π) of each response, read with plain SQL."""
    with sqlite3.connect(db) as connection:
        (benchmark,) = connection.execute(
            "select benchmark_id from runs order by created_at desc, rowid desc limit 1"
        ).fetchone()
        rows = connection.execute(
            """select r.prompt_id, y.score, i.drawn, l.score, i.probability
               from inclusion i join responses r on r.id = i.response_id
               join rm_scores y on y.response_id = r.id and y.rm_key =
                 (select rm_key from run_reward_models where label = ? limit 1)
               left join oracle_labels l on l.response_id = r.id
               where i.benchmark_id = ?""",
            [rm_label, benchmark],
        ).fetchall()
    found: dict[str, list[tuple[float, float | None, float]]] = {}
    for prompt, score, drawn, label, probability in rows:
        found.setdefault(prompt, []).append((score, label if drawn else None, probability))
    return found


def test_a_budgeted_failure_table_counts_only_the_drawn_labels_weighted_by_1_over_pi(
    rmaudit, write_recipe, tmp_path
):
    db = tmp_path / "audit.db"
    # labels of a uniform half first: the guided quarter's undrawn responses keep theirs
    run(rmaudit, write_recipe, db, "budget = 0.5", "half.toml")
    run(rmaudit, write_recipe, db, GUIDED, "guided.toml")
    with sqlite3.connect(db) as connection:  # 'length' ties on every response of one prompt
        tied = connection.execute(
            """select r.prompt_id from inclusion i join responses r on r.id = i.response_id
               where i.benchmark_id = (select benchmark_id from runs order by created_at desc,
                 rowid desc limit 1) and i.drawn = 1
               group by r.prompt_id having count(distinct i.probability) > 1 limit 1"""
        ).fetchone()[0]
        connection.execute(
            """update rm_scores set score = 0 where rm_key =
                 (select rm_key from run_reward_models where label = 'length' limit 1)
               and response_id in (select id from responses where prompt_id = ?)""",
            [tied],
        )
    tables = failure_tables(db)
    counted_other_labels = False
    for label in ("honest", "length"):
        for prompt, responses in drawn_by_prompt(db, label).items():
            top = max(score for score, _, _ in responses)
            picks = [(j, p) for s, j, p in responses if s == top and j is not None]
            drawn = [j for _, j, _ in responses if j is not None]
            row = tables[label][prompt]
            assert row.best_oracle == pytest.approx(max(drawn), abs=1e-12)
            if picks:
                weighted = sum(j / p for j, p in picks) / sum(1 / p for _, p in picks)
                assert row.pick_oracle == pytest.approx(weighted, abs=1e-12)
            else:  # the design drew none of the RM's favourites: no gap to show
                assert np.isnan(row.pick_oracle) and np.isnan(row.gap)
            if prompt == tied and label == "length":
                plain = np.mean([j for j, _ in picks])
                assert abs(row.pick_oracle - plain) > 1e-6  # the weights matter here
        with sqlite3.connect(db) as connection:  # labels of the half's draw are stored too
            every = dict(
                connection.execute(
                    "select r.prompt_id, max(l.score) from oracle_labels l join responses r "
                    "on r.id = l.response_id group by r.prompt_id"
                ).fetchall()
            )
        counted_other_labels |= any(
            every[prompt] > row.best_oracle + 1e-9 for prompt, row in tables[label].items()
        )
    assert counted_other_labels  # what the table showed before: the other benchmark's labels


def test_the_largest_gap_sorts_first_and_an_unknown_gap_last():
    def row(position: int, pick: float) -> PromptFailure:
        return PromptFailure(position, f"p{position}", "", "", {}, pick, 1.0)

    rows = [row(0, float("nan")), row(1, 0.5), row(2, 0.0), row(3, 0.5)]
    ordered = sorted(rows, key=PromptFailure.largest_gap_first)
    assert [r.position for r in ordered] == [2, 1, 3, 0]


def with_perplexity(db) -> None:
    """Give every stored response a perplexity (the simulated policy stores none)."""
    with sqlite3.connect(db) as connection:
        ids = [rid for (rid,) in connection.execute("select id from responses order by id")]
        connection.executemany(
            "update responses set meta = ? where id = ?",
            [(json.dumps({"perplexity": 2.0 + (i % 7) / 3}), rid) for i, rid in enumerate(ids)],
        )


def ablation(db):
    store = open_for_reading(db)
    try:
        return normalizer_ablation(store, None, eta=0.25)
    finally:
        store.close()


def test_the_normalizer_ablation_under_a_budget_of_one_is_full_labellings(
    rmaudit, write_recipe, tmp_path
):
    full_db, one_db = tmp_path / "full.db", tmp_path / "one.db"
    run(rmaudit, write_recipe, full_db, "", "full.toml")
    run(rmaudit, write_recipe, one_db, "budget = 1", "one.toml")
    with_perplexity(full_db), with_perplexity(one_db)
    full, one = ablation(full_db), ablation(one_db)
    np.testing.assert_allclose(one.perplexity, full.perplexity, atol=1e-12)
    for a, b in zip(full.reward_models, one.reward_models, strict=True):
        np.testing.assert_allclose(b.normalized, a.normalized, atol=1e-12)
        np.testing.assert_allclose(b.unnormalized, a.unnormalized, atol=1e-12)


def test_the_normalizer_ablation_refuses_a_budgeted_benchmark_even_with_other_labels_stored(
    rmaudit, write_recipe, tmp_path
):
    db = tmp_path / "audit.db"
    run(rmaudit, write_recipe, db, "", "full.toml")  # every response labelled by another run
    run(rmaudit, write_recipe, db, "budget = 0.25", "quarter.toml")
    with_perplexity(db)
    with pytest.raises(BadInput, match="labelled 32 of 128"):
        ablation(db)


def test_an_imported_budgeted_benchmark_counts_its_unlabelled_responses_toward_n(
    rmaudit, write_recipe, tmp_path
):
    db, exported = tmp_path / "audit.db", tmp_path / "quarter.jsonl"
    run(rmaudit, write_recipe, db, "budget = 0.25", "quarter.toml")  # 4 labels of 16 a prompt
    assert rmaudit("export", "--db", str(db), str(exported)).code == 0
    imported = write_recipe(
        f'[benchmark]\nfile = "{exported}"\n\n[[reward_models]]\nlabel = "length"\n'
        'name = "length"\n\n[[metrics]]\nname = "best-of-n"\nreport = [8]\n',
        name="imported.toml",
    )
    ran = rmaudit("run", str(imported), "--db", str(tmp_path / "fresh.db"))
    assert ran.code == 0, ran.err  # N = 16 responses per prompt, not the 4 labelled
