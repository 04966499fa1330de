"""The two example distributions in plugins/, installed and loaded through their entry points.

The README's test command installs ``plugins/rmaudit-ranking`` and ``plugins/rmaudit-verifiable``
with ``pip install -e``.  Here a real ``rmaudit run`` in a subprocess (so nothing is registered
by hand) audits two RMs on a JSONL prompt set with reference answers: the ``verifiable`` oracle
labels the responses, the ranking metrics score the RMs, and the stored values are checked
against a brute-force computation from the stored rows.  A deliberately broken plugin sits on
the path throughout: it must be reported and skipped.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import sqlite3
import subprocess
import sys
from collections import defaultdict
from itertools import pairwise

import numpy as np
import pytest

PROMPTS = [
    {"prompt": "What is 17 + 25?", "reference": "42"},
    {"prompt": "What is 6 times 7, minus 2?", "reference": 40},
    {"prompt": "Half of 3, as a decimal?", "reference": "1.5"},
    {"prompt": "Which number is prime? (A) 4 (B) 9 (C) 7 (D) 8", "reference": "C"},
    # MT-bench keeps one reference per turn in a list
    {"prompt": "Which planet is largest? (A) Mars (B) Jupiter (C) Venus", "reference": ["(B)"]},
]

# A reference policy for this test only: it knows the reference answer and gets it wrong on a
# deterministic third of its samples, stating the answer in the ways real models do (after
# distractor numbers, boxed, "Answer:", "final answer =").  The simulated policy cannot serve:
# its texts never state a checkable answer.
STUDENT_PLUGIN = '''
from rmaudit import hookimpl
from rmaudit.components import Generation, ReferencePolicy
from rmaudit.components.keys import content_key

TEMPLATES = (
    "Step 1 gives 3 and step 2 gives 7. The answer is {answer}.",
    "Putting it together we get \\\\boxed{{{answer}}}.",
    "Answer: {answer}",
    "After checking it 2 times, final answer = {answer}",
)


def wrong(reference):
    if reference in "ABCDEFGHIJ":
        return "ABCDEFGHIJ"[("ABCDEFGHIJ".index(reference) + 1) % 10]
    return str(float(reference) + 1)


class Student(ReferencePolicy):
    """A test student: answers from the prompt's reference, wrong on a third of its samples."""

    name = "student"

    def generate(self, batch):
        out = []
        for prompt, sample_index in batch:
            reference = prompt.meta["reference"]
            reference = str(reference[0] if isinstance(reference, list) else reference).strip("()")
            correct = int(content_key(prompt.id, sample_index), 16) % 3 != 0
            answer = reference if correct else wrong(reference)
            text = TEMPLATES[sample_index % len(TEMPLATES)].format(answer=answer)
            out.append(Generation(text, {"correct": correct}))
        return out


@hookimpl
def register_reference_policies(register):
    register(Student)
'''

RECIPE = """
title = "verifiable answers, ranking metrics"

[prompts.source]
name = "jsonl"
path = "prompts.jsonl"

[responses]
per_prompt = 6

[responses.policy]
name = "student"

[oracle]
name = "rmaudit-verifiable:verifiable"   # plugin:name addressing of an entry-point plugin

[[reward_models]]
label = "honest"
name = "simulated-rm"
seed = 1

[[reward_models]]
label = "length"
name = "simulated-rm"
bias = "length"
seed = 2

[[metrics]]
name = "hit-rate"
eta = 0.5

[[metrics]]
name = "mrr"

[[metrics]]
name = "rmaudit-ranking:ndcg"
"""


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    """Run the recipe once through the CLI in a subprocess; return (db path, env, stderr)."""
    root = tmp_path_factory.mktemp("example-plugins")
    (root / "prompts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PROMPTS))
    (root / "recipe.toml").write_text(RECIPE)
    (root / "student").mkdir()
    (root / "student" / "student.py").write_text(STUDENT_PLUGIN)
    broken = root / "site"
    broken.mkdir()
    (broken / "badplugin.py").write_text('raise ImportError("deliberately broken")\n')
    info = broken / "rmaudit_badplugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: rmaudit_badplugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[rmaudit]\nbadplugin = badplugin\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(broken), *sys.path])}
    env.pop("RMAUDIT_LOAD_PLUGINS", None)
    env.pop("RMAUDIT_DISABLE_PLUGIN_AUTOLOAD", None)
    db = root / "audit.db"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "rmaudit",
            "--plugins-dir",
            str(root / "student"),
            "run",
            str(root / "recipe.toml"),
            "--db",
            str(db),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return db, env, result.stderr


def test_both_example_distributions_are_installed_entry_points(audited):
    _, env, _ = audited
    result = subprocess.run(
        [sys.executable, "-m", "rmaudit", "plugins", "--json"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    listed = {p["distribution"]: p for p in json.loads(result.stdout)}
    assert listed["rmaudit-ranking"]["components"] == [
        "metric:hit-rate",
        "metric:mrr",
        "metric:ndcg",
    ]
    assert listed["rmaudit-ranking"]["hooks"] == ["register_metrics"]
    assert listed["rmaudit-verifiable"]["components"] == ["oracle:verifiable"]
    assert listed["rmaudit-verifiable"]["version"] == "0.1.0"
    assert "badplugin" in result.stderr


def test_run_warns_about_the_broken_plugin_and_still_completes(audited):
    _, _, stderr = audited
    assert "plugin 'badplugin' (rmaudit_badplugin) failed to load and was skipped" in stderr
    assert "deliberately broken" in stderr


def test_verifiable_oracle_labels_what_the_student_got_right(audited):
    db, _, _ = audited
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "select r.meta, l.score from responses r join oracle_labels l on l.response_id = r.id"
        ).fetchall()
    assert len(rows) == len(PROMPTS) * 6
    expected = [10.0 if json.loads(meta)["correct"] else 1.0 for meta, _ in rows]
    assert [score for _, score in rows] == expected
    assert 1.0 in expected and 10.0 in expected


def _tie_break_orders(values):
    """Every ordering of indices by descending value (one per way of breaking ties)."""
    return [
        order
        for order in itertools.permutations(range(len(values)))
        if all(values[a] >= values[b] for a, b in pairwise(order))
    ]


def _brute_force(judged, scored):
    """HR@n (η = 1/2), MRR and NDCG of the 1st and 2nd pick, by enumerating tie-breaks."""
    m = len(judged) // 2
    y_orders, j_orders = _tie_break_orders(scored), _tie_break_orders(judged)
    values = {}
    for n in (1, 3, 6):  # the default cut-offs m/2, m, 2m for m = 3
        values[f"hr@{n}"] = np.mean(
            [len(set(y[:n]) & set(j[:m])) / m for y in y_orders for j in j_orders]
        )
    oracle_rank = [1 + sum(other > mine for other in judged) for mine in judged]
    for rank, suffix in ((1, ""), (2, "2")):
        picks = [oracle_rank[order[rank - 1]] for order in y_orders]
        values[f"mrr{suffix}"] = np.mean([1 / r for r in picks])
        values[f"ndcg{suffix}"] = np.mean([1 / math.log2(1 + r) for r in picks])
    return values


def test_ranking_metrics_agree_with_brute_force_on_the_stored_rows(audited):
    db, _, _ = audited
    with sqlite3.connect(db) as conn:
        run_id = conn.execute("select id from runs").fetchone()[0]
        oracle = defaultdict(dict)
        for pid, rid, score in conn.execute(
            "select r.prompt_id, r.id, l.score from responses r "
            "join oracle_labels l on l.response_id = r.id"
        ):
            oracle[pid][rid] = score
        rms = conn.execute(
            "select label, rm_key from run_reward_models where run_id = ?", [run_id]
        ).fetchall()
        checked = 0
        for label, rm_key in rms:
            scores = dict(
                conn.execute("select response_id, score from rm_scores where rm_key = ?", [rm_key])
            )
            per_prompt = [
                _brute_force([oracle[pid][rid] for rid in rids], [scores[rid] for rid in rids])
                for pid, rids in ((pid, sorted(oracle[pid])) for pid in oracle)
            ]
            stored = dict(
                conn.execute(
                    "select key, value from metric_results where run_id = ? and rm_key = ?",
                    [run_id, rm_key],
                )
            )
            assert set(stored) == set(per_prompt[0]), label
            for key in stored:
                expected = np.mean([values[key] for values in per_prompt])
                assert stored[key] == pytest.approx(expected, abs=1e-12), (label, key)
                checked += 1
    assert checked == 2 * 7
