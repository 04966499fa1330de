"""PRM metrics against hand computations and independent implementations: PRMBench's
PRMScore per class (scikit-learn's f1_score, and the counts by hand), ProcessBench's F1 (the
QwenLM code's rule, by brute force), the AUROC (scikit-learn; DeLong's variance), and the
linearised ± (its per-question values average to the value; Cochran's ratio variance)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import f1_score, roc_auc_score

from rmaudit.errors import MetricInputError
from rmaudit.metrics.process import (
    aggregate,
    auroc,
    first_error_scores,
    first_flagged,
    ratio,
    step_f1,
)
from rmaudit.metrics.process.first_error import predictions


def test_prmscore_of_a_hand_example():
    # solution 1: steps 0.9 0.2 0.8 0.3, step 2 (0-based 1) erroneous; solution 2: 0.6 0.4,
    # step 1 erroneous.  At 0.5: valid predicted = >0.5.
    # s1: step0 valid/pred valid TP; step1 err/pred err TN; step2 valid/valid TP;
    #     step3 valid/pred err FN.  s2: step0 err/pred valid FP; step1 valid/pred err FN.
    # TP=2 FP=1 FN=2 TN=1: f1 = 4/(4+1+2) = 4/7; negative f1 = 2/(2+2+1) = 2/5
    scores = [np.array([0.9, 0.2, 0.8, 0.3]), np.array([0.6, 0.4])]
    found = step_f1(scores, [(1,), (0,)], np.array([0, 1]), 2, np.array([0.5]))
    assert found.f1.value[0] == pytest.approx(4 / 7)
    assert found.negative_f1.value[0] == pytest.approx(2 / 5)
    assert found.prm_score.value[0] == pytest.approx(0.5 * 4 / 7 + 0.5 * 2 / 5)
    assert (found.steps, found.erroneous) == (6, 2)


def test_a_step_at_the_threshold_is_not_valid_as_in_prmbench():
    found = step_f1([np.array([0.5, 0.7])], [(0,)], np.array([0]), 1, np.array([0.5]))
    assert found.negative_f1.value[0] == 1.0 and found.f1.value[0] == 1.0


def test_multi_solutions_score_f1_alone():
    found = step_f1([np.array([0.9, 0.1])], [()], np.array([0]), 1, np.array([0.5]), negative=False)
    assert found.prm_score.value[0] == found.f1.value[0] == pytest.approx(2 / 3)


@pytest.mark.parametrize("seed", range(5))
def test_step_f1_matches_sklearn_on_random_solutions(seed):
    rng = np.random.default_rng(seed)
    scores = [rng.random(rng.integers(1, 12)) for _ in range(80)]
    erroneous = [
        tuple(sorted(set(rng.integers(0, len(s), rng.integers(0, 3)).tolist()))) for s in scores
    ]
    questions = rng.integers(0, 25, len(scores))
    thresholds = np.array([0.2, 0.5, 0.8])
    found = step_f1(scores, erroneous, questions, 25, thresholds)
    valid = np.concatenate(
        [[i not in e for i in range(len(s))] for s, e in zip(scores, erroneous, strict=True)]
    )
    flat = np.concatenate(scores)
    for t, threshold in enumerate(thresholds):
        predicted = flat > threshold
        assert found.f1.value[t] == pytest.approx(f1_score(valid, predicted))
        assert found.negative_f1.value[t] == pytest.approx(f1_score(~valid, ~predicted))
        per_question = found.prm_score.per_question()[t]
        kept = per_question[np.isfinite(per_question)]
        assert kept.size == np.unique(questions).size
        assert kept.mean() == pytest.approx(found.prm_score.value[t], abs=1e-12)
        # the ± is the plain standard error of the per-question values
        assert found.prm_score.stderr()[t] == pytest.approx(kept.std(ddof=1) / np.sqrt(kept.size))


def test_ratio_stderr_is_cochrans_clustered_ratio_variance():
    rng = np.random.default_rng(3)
    n, d = rng.integers(0, 5, 30).astype(float), rng.integers(1, 8, 30).astype(float)
    estimate = ratio(n, d, np.ones(30, bool))
    r = n.sum() / d.sum()
    residuals = n - r * d
    variance = 30 / 29 * np.sum(residuals**2) / d.sum() ** 2  # Cochran 1977, §6.4, clusters
    assert estimate.value == pytest.approx(r)
    assert estimate.stderr() == pytest.approx(np.sqrt(variance))


def _qwen_rule(scores, labels, splits, threshold):
    """ProcessBench's run_eval_prm_rlhflow.py: per split, accuracy on label != -1 and on
    label == -1 of prediction == label, F1 their harmonic mean (in percent there)."""
    found = {}
    for split in dict.fromkeys(splits):
        rows = [
            (first_flagged(s, threshold), label)
            for s, label, name in zip(scores, labels, splits, strict=True)
            if name == split
        ]
        error = [p == label for p, label in rows if label != -1]
        correct = [p == label for p, label in rows if label == -1]
        acc1, acc2 = np.mean(error) * 100, np.mean(correct) * 100
        found[split] = (acc1 / 100, acc2 / 100, 2 * acc1 * acc2 / (acc1 + acc2) / 100)
    return found


def test_processbench_f1_matches_the_qwen_rule():
    rng = np.random.default_rng(11)
    scores = [rng.random(rng.integers(1, 9)) for _ in range(120)]
    labels = [int(rng.choice([-1, *range(len(s))])) for s in scores]
    splits = [("gsm8k", "math")[i % 2] for i in range(120)]
    expected = _qwen_rule(scores, labels, splits, 0.4)
    for split, (acc1, acc2, f1) in expected.items():
        kept = [i for i, name in enumerate(splits) if name == split]
        found = first_error_scores(
            [scores[i] for i in kept],
            [labels[i] for i in kept],
            np.arange(len(kept)),
            len(kept),
            np.array([0.4]),
        )
        assert found.error_accuracy.value[0] == pytest.approx(acc1)
        assert found.correct_accuracy.value[0] == pytest.approx(acc2)
        assert found.f1.value[0] == pytest.approx(f1)


def test_processbench_f1_of_a_hand_example():
    # 3 erroneous solutions, 2 found; 2 correct, 1 flagged nothing: F1 = 2·(2/3)(1/2)/(7/6)
    scores = [
        np.array([0.9, 0.1]),  # label 1, flagged 1: hit
        np.array([0.2, 0.9]),  # label 1, flagged 0: miss
        np.array([0.1, 0.9]),  # label 0, flagged 0: hit
        np.array([0.9, 0.9]),  # correct, none flagged: hit
        np.array([0.9, 0.3]),  # correct, flagged 1: miss
    ]
    found = first_error_scores(scores, [1, 1, 0, -1, -1], np.arange(5), 5, np.array([0.5]))
    assert found.f1.value[0] == pytest.approx(2 * (2 / 3) * (1 / 2) / (2 / 3 + 1 / 2))


def test_vectorised_predictions_match_first_flagged():
    rng = np.random.default_rng(5)
    scores = [rng.random(rng.integers(1, 10)) for _ in range(200)]
    thresholds = np.linspace(0, 1, 11)
    found = predictions(scores, thresholds)
    for t, threshold in enumerate(thresholds):
        assert found[t].tolist() == [first_flagged(s, threshold) for s in scores]


def test_aggregations():
    scores = [np.array([0.5, 0.8, 0.6])]
    assert aggregate(scores, "min")[0] == 0.5
    assert aggregate(scores, "last")[0] == 0.6
    assert aggregate(scores, "product")[0] == pytest.approx(0.24)
    assert aggregate(scores, "mean")[0] == pytest.approx(19 / 30)


def test_auroc_matches_sklearn_and_delong():
    rng = np.random.default_rng(2)
    positive = rng.random(600) < 0.4
    scores = np.round(rng.normal(positive * 0.7, 1.0), 1)  # ties on purpose
    found = auroc(scores, positive, np.arange(600), 600)
    assert found.value == pytest.approx(roc_auc_score(positive, scores))
    # DeLong et al. (1988): var = s10²/m + s01²/n from the placements, each its own cluster
    pos, neg = scores[positive], scores[~positive]
    v10 = np.array([np.mean((x > neg) + 0.5 * (x == neg)) for x in pos])
    v01 = np.array([np.mean((pos > y) + 0.5 * (pos == y)) for y in neg])
    delong = np.sqrt(v10.var(ddof=1) / pos.size + v01.var(ddof=1) / neg.size)
    assert found.stderr() == pytest.approx(delong, rel=0.01)


def test_non_finite_step_scores_are_refused():
    with pytest.raises(MetricInputError, match="finite"):
        step_f1([np.array([0.1, np.nan])], [()], np.array([0]), 1, np.array([0.5]))
    with pytest.raises(MetricInputError, match="finite"):
        aggregate([np.array([np.inf])], "min")
    with pytest.raises(MetricInputError, match="one score per step"):
        first_error_scores([np.array([])], [-1], np.array([0]), 1, np.array([0.5]))
