"""The test-set design studies of Rethinking RM Evaluation (arXiv 2410.05584, Fig. 4, 6, 7) as pure
functions and `rmaudit regret-study`."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rmaudit.errors import MetricInputError
from rmaudit.metrics.regret.design_studies import (
    _accuracy,
    annotation_budget,
    downstream_ndr,
    merge_sort_cost,
    rank_bins,
    responses_vs_prompts,
)
from rmaudit.metrics.regret.world import RegretWorld


def reference_merge_sort(items, counter):
    if len(items) < 2:
        return list(items)
    left = reference_merge_sort(items[: len(items) // 2], counter)
    right = reference_merge_sort(items[len(items) // 2 :], counter)
    out = []
    while left and right:
        counter[0] += 1
        out.append(left.pop(0) if left[0] <= right[0] else right.pop(0))
    return out + left + right


def test_merge_sort_comparisons_count_a_real_merge_sort():
    assert merge_sort_cost([1.0]) == 0 and merge_sort_cost([2.0, 1.0]) == 1
    for perm in itertools.permutations(range(5)):
        counter = [0]
        assert reference_merge_sort(list(perm), counter) == sorted(perm)
        assert merge_sort_cost(perm) == counter[0]


def test_accuracy_is_the_mean_over_prompts_of_the_agreeing_pair_fraction():
    rng = np.random.default_rng(1)
    reference = rng.integers(0, 3, size=(4, 5)).astype(float)  # ties: those pairs do not count
    proxies = rng.normal(size=(3, 4, 5))
    got = _accuracy(reference, proxies)
    for k in range(3):
        per_prompt = []
        for q in range(4):
            pairs = [
                (i, j) for i in range(5) for j in range(5) if reference[q, i] > reference[q, j]
            ]
            per_prompt.append(
                np.mean([proxies[k, q, i] > proxies[k, q, j] for i, j in pairs]) if pairs else 0.0
            )
        assert got[k] == pytest.approx(np.mean(per_prompt))


def test_downstream_ndr_falls_with_the_noise_as_the_normal_model_says():
    sigmas = (0.0, 0.5, 1.0, 2.0)
    regret = downstream_ndr(RegretWorld(sigmas=sigmas), prompts=400)
    assert regret[0] == pytest.approx(1.0)
    assert list(regret) == sorted(regret, reverse=True)
    assert regret[2] == pytest.approx(1 / np.sqrt(2), abs=0.05)  # goodhart_ndr(1, 1)


def test_fig6_more_responses_per_prompt_predict_regret_better_at_a_fixed_sample_count():
    result = responses_vs_prompts(samples=64, ks=(2, 16), replicates=200)
    pair, many = result.rows
    assert pair.setting == {"responses per prompt": 2, "prompts": 32, "samples": 64}
    assert many.setting == {"responses per prompt": 16, "prompts": 4, "samples": 64}
    assert many.spearman - pair.spearman > 5 * np.hypot(many.stderr, pair.stderr)
    assert responses_vs_prompts(samples=64, ks=(2, 16), replicates=200) == result  # seeded


def test_fig7_every_test_set_stays_within_the_annotation_budget():
    result = annotation_budget(budget=60, ks=(2, 4, 8), replicates=20)
    for row in result.rows:
        assert row.setting["comparisons"] <= 60
        assert -1 <= row.low <= row.spearman <= row.high <= 1
    assert result.rows[0].setting["prompts"] == 60  # one comparison per pair
    assert result.notes["beta"] == 0.5


def test_fig4_pairs_from_distant_rank_bins_beat_pairs_from_one_bin():
    result = rank_bins(bins=5, pool=20, prompts=100, replicates=60)
    rows = {(r.setting["chosen bin"], r.setting["rejected bin"]): r for r in result.rows}
    assert len(rows) == 15 and all(c >= r for c, r in rows)
    assert rows[(5, 1)].spearman > rows[(3, 3)].spearman + 0.2


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: responses_vs_prompts(samples=3, ks=(2, 4)),
            "expected responses per prompt <= samples",
        ),
        (lambda: RegretWorld(sigmas=(1.0, 1.0, 1.0)), "different noise levels"),
        (lambda: RegretWorld(sigmas=(1.0, 2.0)), "at least 3 finite noise levels"),
        (lambda: RegretWorld(difficulty=-1.0), "expected a log-scale spread >= 0"),
        (lambda: RegretWorld(response_correlation=1.0), r"expected a correlation in \[0, 1\)"),
        (lambda: annotation_budget(budget=2, ks=(8,)), "cannot rank even one prompt"),
        (lambda: annotation_budget(beta=0.0), "beta > 0"),
        (lambda: rank_bins(bins=5, pool=7), "splits into 5 bins"),
    ],
)
def test_bad_settings_are_clear_errors(call, message):
    with pytest.raises(MetricInputError, match=message):
        call()


def test_regret_study_command_prints_each_table(rmaudit):
    result = rmaudit("regret-study", "responses", "--ks", "2,8", "--replicates", "20")
    assert result.code == 0, result.err
    assert "responses per prompt vs prompts (Rethinking RM Evaluation" in result.out
    assert "Spearman corr." in result.out and "SIMULATED" in result.out
    budget = rmaudit("regret-study", "budget", "--budget", "40", "--ks", "2,4", "--replicates", "5")
    assert budget.code == 0 and "BT annotator (β = 0.5)" in budget.out
    bins = rmaudit("regret-study", "rank-bins", "--bins", "2", "--pool", "4", "--replicates", "5")
    assert bins.code == 0 and "chosen bin" in bins.out


def test_regret_study_command_takes_the_worlds_structure(rmaudit):
    result = rmaudit(
        "regret-study",
        "budget",
        "--budget",
        "40",
        "--ks",
        "2,4",
        "--replicates",
        "5",
        "--difficulty",
        "1",
        "--disagreement",
        "0.5",
        "--response-correlation",
        "0.3",
    )
    assert result.code == 0, result.err
    assert "difficulty 1.0, disagreement 0.5, response correlation 0.3" in result.out


def test_structured_world_changes_the_study_and_plain_world_is_the_default():
    plain = annotation_budget(budget=40, ks=(2, 4), replicates=10)
    assert annotation_budget(budget=40, ks=(2, 4), replicates=10, world=RegretWorld()) == plain
    assert "difficulty" not in plain.notes
    hard = annotation_budget(
        budget=40, ks=(2, 4), replicates=10, world=RegretWorld(disagreement=1.0)
    )
    assert hard.notes["disagreement"] == 1.0 and hard.ndr != plain.ndr


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ("budget", "--response-correlation", "1"),
            "--response-correlation: expected a correlation in [0, 1)",
        ),
        (
            ("responses", "--samples", "3", "--ks", "2,4"),
            "--ks: expected responses per prompt <= samples",
        ),
        (("budget", "--ks", "2,x"), "--ks: expected comma-separated integers"),
        (("rank-bins", "--pool", "7"), "--pool: expected a pool that splits into 5 bins"),
    ],
)
def test_regret_study_bad_input_exits_2_with_one_line(rmaudit, args, message):
    result = rmaudit("regret-study", *args)
    assert result.code == 2
    assert len(result.err.strip().splitlines()) == 1 and message in result.err, result.err
