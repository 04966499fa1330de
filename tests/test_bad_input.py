"""Bad input → exit code 2, one line naming file, field and value, and no DB written."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys

import pytest
from _support import HANG_S, SMALL_RECIPE, table_counts


def edit(old: str, new: str, extra_rms: str = "") -> str:
    recipe = SMALL_RECIPE.replace("{extra_rms}", extra_rms)
    assert old in recipe, old
    return recipe.replace(old, new, 1)


CASES = {
    "malformed toml": (
        edit('title = "small simulated audit"', 'title = "unterminated'),
        ["malformed TOML"],
    ),
    "unknown component": (
        edit('name = "random"', 'name = "randon"'),
        ["prompts.sampler.name", "did you mean 'random'", "'randon'"],
    ),
    "unknown option": (
        edit("seed = 1", "sead = 1"),
        ["reward_models[0].sead", "unknown option", "did you mean 'seed'"],
    ),
    # a misspelt key is named with the closest key of its own section, never as the
    # "Field required" of the key it was meant to be
    "misspelt table": (
        SMALL_RECIPE.replace("{extra_rms}", "").replace("[[reward_models]]", "[[reward_model]]"),
        ["reward_model: unknown table; did you mean 'reward_models'?"],
    ),
    "misspelt section key": (
        edit("per_prompt = 16", "perprompt = 16"),
        ["responses.perprompt: unknown option; did you mean 'per_prompt'? (got 16)"],
    ),
    "misspelt component option": (
        edit("k = 8", "kk = 8"),
        ["prompts.sampler.kk: unknown option; did you mean 'k'? (got 8)"],
    ),
    "model folder that does not exist": (
        edit('name = "simulated-rm"\nseed = 1', 'name = "hf-classifier"\nmodel = "/no/such/model"'),
        ["reward_models[0].model", "no such folder", "'/no/such/model'"],
    ),
    "wrong option type": (edit("k = 8", 'k = "eight"'), ["prompts.sampler.k", "'eight'"]),
    "eta outside (0, 1)": (edit("eta = 0.25", "eta = 1.5"), ["metrics[0].eta", "1.5"]),
    "eta zero": (edit("eta = 0.25", "eta = 0.0"), ["metrics[0].eta", "0.0"]),
    "n larger than N": (
        edit("report = [4]", "report = [64]"),
        ["metrics[2].report", "16 responses per prompt", "64"],
    ),
    "fewer than two responses": (
        edit("per_prompt = 16", "per_prompt = 1"),
        ["responses.per_prompt", "(got 1)"],
    ),
    "missing data file": (
        edit('name = "simulated-helpful"', 'name = "jsonl"\npath = "nowhere.jsonl"'),
        ["prompts.source.path", "nowhere.jsonl", "not found"],
    ),
    "duplicate label": (
        edit('label = "length"', 'label = "honest"'),
        ["reward_models[1].label", "'honest'"],
    ),
    "both benchmark and prompts": (
        edit("[responses]", '[benchmark]\nfile = "recipe.toml"\n\n[responses]'),
        ["benchmark", "not both"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_recipe_exits_2_with_one_line(case, rmaudit, write_recipe, tmp_path):
    text, expected = CASES[case]
    recipe = write_recipe(text)
    db = tmp_path / "audit.db"
    result = rmaudit("run", str(recipe), "--db", str(db))
    assert result.code == 2, result
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith(f"Error: {recipe}"), lines[0]
    for fragment in expected:
        assert fragment in lines[0], (fragment, lines[0])
    assert not db.exists(), "a rejected recipe must not create or touch the DB"


@pytest.mark.parametrize("bad, shown", [("NaN", "nan"), ("Infinity", "inf"), ("-Infinity", "-inf")])
def test_non_finite_scores_in_a_scores_file(bad, shown, rmaudit, write_recipe, tmp_path):
    scores = tmp_path / "scores.jsonl"
    scores.write_text(
        f'{{"response_id": "a", "score": 1.0}}\n{{"response_id": "b", "score": {bad}}}\n'
    )
    recipe = write_recipe(
        extra_rms='\n[[reward_models]]\nlabel = "file"\nname = "scores-file"\n'
        'path = "scores.jsonl"\n'
    )
    db = tmp_path / "audit.db"
    result = rmaudit("run", str(recipe), "--db", str(db))
    assert result.code == 2
    line = result.err.strip()
    assert f"{scores}:2" in line and "score" in line and f"(got {shown})" in line, line
    assert not db.exists()


def test_rm_returning_nan_at_run_time_stores_nothing_of_the_batch(rmaudit, write_recipe, tmp_path):
    plugin_dir = tmp_path / "plugins"
    plugin_dir.mkdir()
    (plugin_dir / "nan_rm.py").write_text(
        "from rmaudit import hookimpl\n"
        "from rmaudit.components import RewardModel\n"
        "class NanRM(RewardModel):\n"
        "    '''Scores NaN for every third response.'''\n"
        "    name = 'nan-rm'\n"
        "    def score(self, batch):\n"
        "        return [float('nan') if r.sample_index == 2 else 1.0 for _, r in batch]\n"
        "@hookimpl\n"
        "def register_reward_models(register):\n"
        "    register(NanRM)\n"
    )
    recipe = write_recipe(extra_rms='\n[[reward_models]]\nlabel = "broken"\nname = "nan-rm"\n')
    db = tmp_path / "audit.db"
    result = rmaudit("--plugins-dir", str(plugin_dir), "run", str(recipe), "--db", str(db))
    assert result.code == 2, result
    line = result.err.strip()
    assert "reward_models[2]" in line and "'broken'" in line and "(got nan)" in line, line
    counts = table_counts(db)
    assert counts["metric_results"] == 0
    conn_rows = counts["rm_scores"]
    assert conn_rows == 2 * 8 * 16, "the two good RMs are stored, nothing of the broken one"


def test_oracle_mean_not_positive_skips_and_names_the_prompt(rmaudit, write_recipe, tmp_path):
    """RETA is undefined where its normaliser (the mean oracle score) is not positive: the
    prompt is skipped, counted and recorded with its id; the rest is computed (issue 11)."""
    bench = tmp_path / "bench.jsonl"
    header = {
        "format": "rmaudit-benchmark",
        "format_version": 1,
        "benchmark": {"title": "t", "policy_key": "p", "oracle_key": "o"},
    }
    prompts = [
        {
            "prompt": {"text": "good prompt"},
            "responses": [
                {"sample_index": i, "text": f"answer {i}", "label": {"score": 1.0 + i}}
                for i in range(4)
            ],
        },
        {
            "prompt": {"text": "zero prompt"},
            "responses": [
                {"sample_index": i, "text": f"reply {i}", "label": {"score": 0.0}} for i in range(4)
            ],
        },
    ]
    bench.write_text("\n".join(json.dumps(x) for x in [header, *prompts]) + "\n")
    recipe = write_recipe("""
        [benchmark]
        file = "bench.jsonl"

        [[reward_models]]
        name = "simulated-rm"

        [[metrics]]
        name = "reta"
        eta = 0.5
        n = 4
    """)
    db = tmp_path / "audit.db"
    result = rmaudit("run", str(recipe), "--db", str(db))
    assert result.code == 0, result
    assert (
        "reta: 1 of 2 prompts skipped: mean oracle score not positive (the RETA normaliser)"
    ) in result.err
    from rmaudit.components.keys import prompt_id

    with sqlite3.connect(db) as con:
        skipped = con.execute("select item_id, error from failures").fetchall()
        (value,) = con.execute("select value from metric_results").fetchone()
    assert skipped == [
        (prompt_id("zero prompt"), "reta: mean oracle score not positive (the RETA normaliser)")
    ]
    assert table_counts(db)["metric_results"] == 1
    # n = N = 4, η = 1/2: the mean of the RM's top two of the good prompt over its mean 2.5
    assert 1.0 / 2.5 <= value <= 3.5 / 2.5


@pytest.mark.parametrize(
    "line, expected",
    [
        ('{"format": "other"}', ["bench.jsonl:1", "format", "'other'"]),
        ("not json", ["bench.jsonl:1", "invalid JSON"]),
    ],
)
def test_bad_benchmark_file_header(line, expected, rmaudit, tmp_path):
    bench = tmp_path / "bench.jsonl"
    bench.write_text(line + "\n")
    db = tmp_path / "audit.db"
    result = rmaudit("import", str(bench), "--db", str(db))
    assert result.code == 2
    for fragment in expected:
        assert fragment in result.err, result.err
    assert not db.exists()


def test_bad_benchmark_record_names_line_and_field(rmaudit, tmp_path):
    bench = tmp_path / "bench.jsonl"
    header = {
        "format": "rmaudit-benchmark",
        "format_version": 1,
        "benchmark": {"title": "t", "policy_key": "p", "oracle_key": "o"},
    }
    good = {
        "prompt": {"text": "q"},
        "responses": [{"sample_index": i, "text": "a", "label": {"score": 1.0}} for i in range(2)],
    }
    bad = {
        "prompt": {"text": "q2"},
        "responses": [
            {"sample_index": 0, "text": "a", "label": {"score": 1.0}},
            {"sample_index": 1, "text": "b", "label": {"score": "high"}},
        ],
    }
    bench.write_text("\n".join(json.dumps(x) for x in [header, good, bad]) + "\n")
    db = tmp_path / "audit.db"
    result = rmaudit("import", str(bench), "--db", str(db))
    assert result.code == 2
    assert f"{bench}:3" in result.err and "responses[1].label.score" in result.err
    assert "'high'" in result.err
    assert not db.exists()


def test_missing_recipe_and_foreign_db(rmaudit, write_recipe, tmp_path):
    result = rmaudit("run", str(tmp_path / "absent.toml"))
    assert result.code == 2 and "absent.toml" in result.err and "not found" in result.err
    foreign = tmp_path / "foreign.db"
    foreign.write_bytes(b"this is not sqlite at all" * 100)
    result = rmaudit("run", str(write_recipe()), "--db", str(foreign))
    assert result.code == 2 and "foreign.db" in result.err and "not" in result.err


def test_no_library_warning_precedes_the_one_line_error(tmp_path):
    """Prompts with the same words, told apart only by U+2028 line separators, have embeddings
    of rank 1: the k-DPP refuses them in one line, and the SVD that found it says nothing (a
    subprocess: pytest would capture the warning in-process)."""
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(
        "".join(
            json.dumps({"prompt": "apple pear plum" + "\u2028" * i}, ensure_ascii=False) + "\n"
            for i in range(1, 7)
        ),
        encoding="utf-8",
    )
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(
        SMALL_RECIPE.replace("{extra_rms}", "")
        .replace('name = "simulated-helpful"', 'name = "jsonl"\npath = "prompts.jsonl"')
        .replace('name = "random"\nk = 8', 'name = "kdpp"\nk = 3'),
        encoding="utf-8",
    )
    db = tmp_path / "audit.db"
    done = subprocess.run(
        [sys.executable, "-W", "default", "-m", "rmaudit", "run", str(recipe), "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert done.returncode == 2, done.stderr
    progress = re.compile(r" \d+/\d+ [\d:]+ eta ")  # the stage's progress line
    lines = [
        line for line in done.stderr.splitlines() if line.strip() and not progress.search(line)
    ]
    assert "Warning" not in done.stderr
    assert len(lines) == 1 and lines[0].startswith(f"Error: {recipe}: prompts.sampler"), lines
    assert "rank" in lines[0]
