"""The audit engine end to end on a small simulated recipe: store, rerun, add an RM."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest
from _support import metric_rows, table_counts

from rmaudit.metrics import best_of_n, pairwise_accuracy, reta
from rmaudit.recipe import load_recipe
from rmaudit.run import Runner
from rmaudit.store import Store

PROMPTS, N = 8, 16


def test_run_stores_everything_and_prints_the_summary(rmaudit, write_recipe, tmp_path):
    db = tmp_path / "audit.db"
    result = rmaudit("run", str(write_recipe()), "--db", str(db))
    assert result.code == 0, result.err
    counts = table_counts(db)
    assert counts["prompts"] == PROMPTS
    assert counts["responses"] == PROMPTS * N
    assert counts["oracle_labels"] == PROMPTS * N
    assert counts["rm_scores"] == 2 * PROMPTS * N
    assert counts["runs"] == 1
    for header in ("RETA(1/4)", "BoN@4", "pairwise acc", "honest", "length", "SIMULATED"):
        assert header in result.out, header


def test_stored_metrics_equal_the_public_functions_on_stored_data(rmaudit, write_recipe, tmp_path):
    db = tmp_path / "audit.db"
    assert rmaudit("run", str(write_recipe()), "--db", str(db)).code == 0
    conn = sqlite3.connect(db)
    rows = conn.execute(
        """select m.label, r.prompt_id, l.score, s.score
           from run_reward_models m join rm_scores s on s.rm_key = m.rm_key
           join responses r on r.id = s.response_id
           join oracle_labels l on l.response_id = r.id
           order by m.label, r.prompt_id, r.sample_index"""
    ).fetchall()
    by_rm: dict[str, dict[str, tuple[list, list]]] = {}
    for label, pid, j, y in rows:
        oracle, scores = by_rm.setdefault(label, {}).setdefault(pid, ([], []))
        oracle.append(j)
        scores.append(y)
    stored = {(label, key): value for label, _, key, value, _ in metric_rows(db)}
    for label, prompts in by_rm.items():
        oracle = [np.array(o) for o, _ in prompts.values()]
        scores = [np.array(s) for _, s in prompts.values()]
        assert np.isclose(
            stored[(label, "reta@0.25")], reta(oracle, scores, 0.25).value, rtol=1e-12
        )
        assert np.isclose(stored[(label, "bon@4")], best_of_n(oracle, scores, 4).value, rtol=1e-12)
        assert np.isclose(
            stored[(label, "pairwise_accuracy")],
            pairwise_accuracy(oracle, scores).value,
            rtol=1e-12,
        )


def test_rerun_does_no_work_and_prints_the_same_numbers(rmaudit, write_recipe, tmp_path):
    db = tmp_path / "audit.db"
    recipe = str(write_recipe())
    first = rmaudit("run", recipe, "--db", str(db))
    before, metrics_before = table_counts(db), metric_rows(db)
    second = rmaudit("run", recipe, "--db", str(db))
    assert second.code == 0
    assert "new work: none" in second.err
    assert table_counts(db) == before
    assert metric_rows(db) == metrics_before
    assert first.out == second.out


def test_adding_an_rm_scores_only_that_rm(write_recipe, tmp_path):
    db = tmp_path / "audit.db"
    store = Store.open(db)
    Runner(load_recipe(write_recipe()), store).run()
    extra = '\n[[reward_models]]\nlabel = "flattery"\nname = "simulated-rm"\nbias = "flattery"\n'
    result = Runner(load_recipe(write_recipe(extra_rms=extra, name="more.toml")), store).run()
    pending = {c.stage: c.pending for c in result.counts}
    assert pending == {
        "prompts": 0,
        "responses": 0,
        "oracle labels": 0,
        "scores: honest": 0,
        "scores: length": 0,
        "scores: flattery": PROMPTS * N,
    }
    assert table_counts(db)["rm_scores"] == 3 * PROMPTS * N


def test_dry_run_plans_without_writing(rmaudit, write_recipe, tmp_path):
    db = tmp_path / "audit.db"
    recipe = str(write_recipe())
    result = rmaudit("run", recipe, "--db", str(db), "--dry-run")
    assert result.code == 0
    assert not db.exists()
    assert "oracle labels" in result.out and f"{PROMPTS * N * 3:,}" in result.out  # 3 judge samples
    rmaudit("run", recipe, "--db", str(db))
    before = table_counts(db)
    again = rmaudit("run", recipe, "--db", str(db), "--dry-run")
    assert table_counts(db) == before
    plan = Runner(load_recipe(recipe), Store.open_readonly(db)).plan()
    assert all(c.pending == 0 for c in plan), plan
    assert "scores: length" in again.out


def test_fresh_starts_over(rmaudit, write_recipe, tmp_path):
    db = tmp_path / "audit.db"
    recipe = str(write_recipe())
    rmaudit("run", recipe, "--db", str(db))
    result = rmaudit("run", recipe, "--db", str(db), "--fresh")
    assert result.code == 0 and "new work: none" not in result.err


def test_runs_command_lists_and_shows(rmaudit, write_recipe, tmp_path):
    db = tmp_path / "audit.db"
    rmaudit("run", str(write_recipe()), "--db", str(db))
    listing = rmaudit("runs", "--db", str(db))
    assert listing.code == 0 and "small simulated audit" in listing.out and "done" in listing.out
    run_id = sqlite3.connect(db).execute("select id from runs").fetchone()[0]
    shown = rmaudit("runs", "--db", str(db), run_id[:6])
    assert shown.code == 0 and "RETA(1/4)" in shown.out


def test_runs_takes_the_db_as_its_first_argument_as_tui_and_report_do(
    rmaudit, write_recipe, tmp_path, monkeypatch
):
    db = tmp_path / "audit.db"
    rmaudit("run", str(write_recipe()), "--db", str(db))
    run_id = sqlite3.connect(db).execute("select id from runs").fetchone()[0]
    monkeypatch.chdir(tmp_path)  # no rmaudit.db here: only the DB named can be listed
    assert rmaudit("runs", "--db", "audit.db").out == rmaudit("runs", "audit.db").out
    listing = rmaudit("runs", "audit.db")
    assert listing.code == 0 and "small simulated audit" in listing.out
    shown = rmaudit("runs", "audit.db", run_id[:6], "--json")
    assert shown.code == 0 and json.loads(shown.out)["runs"][0]["id"] == run_id
    # a lone run id still reads the --db (or the default) DB
    assert rmaudit("runs", run_id[:6], "--db", "audit.db").code == 0
    missing = rmaudit("runs", run_id[:6])
    assert missing.code == 2 and missing.err.strip() == "Error: rmaudit.db: database does not exist"
    twice = rmaudit("runs", "audit.db", run_id[:6], "--db", "audit.db")
    assert twice.code == 2 and len(twice.err.strip().splitlines()) == 1


RUN_LEVEL_METRIC = '''
import numpy as np
import pytest
from rmaudit import hookimpl
from rmaudit.components import Metric, MetricOutput, MetricValue


class BestRmGap(Metric):
    """Mean over prompts of the oracle score of the first RM's pick minus the second's."""

    name = "best-rm-gap"
    scope = "run"

    def compute(self, inputs):
        first, second = list(inputs.scores)[:2]
        gaps = [j[np.argmax(a)] - j[np.argmax(b)]
                for j, a, b in zip(inputs.oracle, inputs.scores[first], inputs.scores[second])]
        return MetricOutput(values=[MetricValue("gap", f"{first} − {second}",
        float(np.mean(gaps)))])


@hookimpl
def register_metrics(register):
    register(BestRmGap)
'''


def test_run_level_metric_sees_every_rm_once(rmaudit, write_recipe, tmp_path):
    plugin_dir = tmp_path / "plugins"
    plugin_dir.mkdir()
    (plugin_dir / "gap.py").write_text(RUN_LEVEL_METRIC)
    recipe = write_recipe()
    recipe.write_text(recipe.read_text() + '\n[[metrics]]\nname = "best-rm-gap"\n')
    db = tmp_path / "audit.db"
    result = rmaudit("--plugins-dir", str(plugin_dir), "run", str(recipe), "--db", str(db))
    assert result.code == 0, result.err
    assert "across reward models" in result.out and "honest − length" in result.out
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "select rm_key, value from metric_results where metric = 'best-rm-gap'"
    ).fetchall()
    assert len(rows) == 1 and rows[0][0] == ""
    picks = {}
    for label, pid, j, y in conn.execute(
        """select m.label, r.prompt_id, l.score, s.score from run_reward_models m
               join rm_scores s on s.rm_key = m.rm_key join responses r on r.id = s.response_id
               join oracle_labels l on l.response_id = r.id"""
    ):
        best = picks.setdefault((label, pid), (-np.inf, None))
        if y > best[0]:
            picks[(label, pid)] = (y, j)
    prompts = {pid for _, pid in picks}
    expected = np.mean([picks[("honest", p)][1] - picks[("length", p)][1] for p in prompts])
    assert rows[0][1] == pytest.approx(expected)


def test_nested_components_resolve_data_paths_against_the_recipe(
    rmaudit, write_recipe, tmp_path, monkeypatch
):
    """An ensemble member's scores file is found next to the recipe, whatever the cwd."""
    db = tmp_path / "audit.db"
    assert rmaudit("run", str(write_recipe()), "--db", str(db)).code == 0
    ids = [rid for (rid,) in sqlite3.connect(db).execute("select id from responses")]
    (tmp_path / "scores.jsonl").write_text(
        "".join(f'{{"response_id": "{rid}", "score": {i % 7}}}\n' for i, rid in enumerate(ids))
    )
    extra = (
        '\n[[reward_models]]\nlabel = "mixed"\nname = "ensemble"\nmembers = [\n'
        '  { name = "scores-file", path = "scores.jsonl" },\n'
        '  { name = "simulated-rm", seed = 1 },\n]\n'
    )
    recipe = write_recipe(extra_rms=extra, name="nested.toml")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = rmaudit("run", str(recipe), "--db", str(db))
    assert result.code == 0, result.err
    assert "mixed" in result.out


def test_the_main_recipe_plans_the_papers_scale(rmaudit, tmp_path):
    """recipes/helpful.toml: k = 100 prompts, N = 256, 10 judge samples, five RMs."""
    from pathlib import Path

    recipe = Path(__file__).resolve().parents[1] / "recipes" / "helpful.toml"
    plan = Runner(load_recipe(recipe), None).plan()
    totals = {c.stage: (c.total, c.pending * c.calls_per_item) for c in plan}
    assert totals["prompts"][0] == 100
    assert totals["responses"] == (25_600, 25_600)
    assert totals["oracle labels"] == (25_600, 256_000)
    assert sum(stage.startswith("scores: ") for stage in totals) == 5
    result = rmaudit("run", str(recipe), "--dry-run", "--db", str(tmp_path / "none.db"))
    assert result.code == 0 and "256,000" in result.out
    assert not (tmp_path / "none.db").exists()


SHORT_JUDGE = '''
from rmaudit import hookimpl
from rmaudit.components import Oracle, OracleLabel


class ShortJudge(Oracle):
    """Labels every response of a batch but its last."""

    name = "short-judge"

    def label(self, batch):
        return [OracleLabel(score=1.0) for _ in batch[1:]]


@hookimpl
def register_oracles(register):
    register(ShortJudge)
'''

SHORT_RM = '''
from rmaudit import hookimpl
from rmaudit.components import RewardModel


class ShortRM(RewardModel):
    """Scores every response of a batch but its last."""

    name = "short-rm"

    def score(self, batch):
        return [0.5 for _ in batch[1:]]


@hookimpl
def register_reward_models(register):
    register(ShortRM)
'''


@pytest.mark.parametrize(
    ("plugin", "table", "replaced", "message", "stored"),
    [
        (
            SHORT_JUDGE,
            "[oracle]",
            'name = "simulated-judge"\nsamples = 3',
            "oracle 'short-judge' returned 31 labels for 32 responses",
            "select count(*) from oracle_labels",
        ),
        (
            SHORT_RM,
            'label = "honest"',
            'name = "simulated-rm"\nseed = 1',
            "reward model 'honest' returned 31 scores for 32 responses",
            "select count(*) from rm_scores s join run_reward_models m on m.rm_key = s.rm_key "
            "where m.label = 'honest'",
        ),
    ],
    ids=["oracle", "reward-model"],
)
def test_a_component_that_returns_too_few_outputs_stores_none_of_the_batch(
    rmaudit, write_recipe, tmp_path, plugin, table, replaced, message, stored
):
    plugin_dir = tmp_path / "plugins"
    plugin_dir.mkdir()
    name = "short_judge" if plugin is SHORT_JUDGE else "short_rm"
    (plugin_dir / f"{name}.py").write_text(plugin)
    recipe = write_recipe()
    text = recipe.read_text()
    start = text.index(table)
    component = name.replace("_", "-")
    recipe.write_text(text[:start] + text[start:].replace(replaced, f'name = "{component}"', 1))
    db = tmp_path / "audit.db"
    result = rmaudit("--plugins-dir", str(plugin_dir), "run", str(recipe), "--db", str(db))
    assert result.code == 1
    assert message in result.err
    conn = sqlite3.connect(db)
    assert conn.execute(stored).fetchone()[0] == 0
    conn.close()
