"""Preference-pair metrics (Rethinking RM Evaluation, RewardBench, RMs Under Distribution Shift)
against independent computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp, softmax
from sklearn.metrics import roc_auc_score

from rmaudit.errors import MetricInputError
from rmaudit.metrics import (
    REWARDBENCH,
    MetricResult,
    accuracy,
    auroc,
    bt_ece,
    confidence,
    ece,
    energy_score,
    fpr_at_95_tpr,
    section_score,
    style_accuracy_matrix,
    style_difficulty,
    style_difficulty_stderr,
    subset_accuracy,
)


def random_pairs(seed, n=500, scale=2.0, rounding=None):
    rng = np.random.default_rng(seed)
    chosen = rng.normal(0.5, scale, n)
    rejected = rng.normal(0.0, scale, n)
    if rounding is not None:  # coarse scores make ties
        chosen, rejected = np.round(chosen, rounding), np.round(rejected, rounding)
    return chosen, rejected


def loop_ece(chosen, rejected, n_bins, tie_credit=0.0):
    """RMs Under Distribution Shift (arXiv 2311.14743), Sec. 3.1, written out: I_1 = [0, 1/M], I_m =
    ((m-1)/M, m/M]."""
    members = [[] for _ in range(n_bins)]
    for c, r in zip(chosen, rejected, strict=True):
        conf = max(math.exp(c), math.exp(r)) / (math.exp(c) + math.exp(r))
        correct = 1.0 if c > r else (tie_credit if c == r else 0.0)
        for m in range(1, n_bins + 1):
            low, high = (m - 1) / n_bins, m / n_bins
            if (m == 1 and 0 <= conf <= high) or low < conf <= high:
                members[m - 1].append((conf, correct))
                break
    total = 0.0
    for bin_members in members:
        if bin_members:
            mean_conf = sum(c for c, _ in bin_members) / len(bin_members)
            acc = sum(a for _, a in bin_members) / len(bin_members)
            total += len(bin_members) / len(chosen) * abs(mean_conf - acc)
    return total, [len(b) for b in members]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("n_bins", [1, 3, 10, 15])
def test_ece_equals_loop(seed, n_bins):
    chosen, rejected = random_pairs(seed, n=300)
    result = ece(chosen, rejected, n_bins=n_bins)
    expected, counts = loop_ece(chosen, rejected, n_bins)
    assert result.value == pytest.approx(expected, abs=1e-12)
    assert result.count.tolist() == counts
    assert result.bin_edges == pytest.approx(np.linspace(0, 1, n_bins + 1))


@pytest.mark.parametrize(("ties", "credit"), [("loss", 0.0), ("half", 0.5)])
def test_ece_with_ties_equals_loop(ties, credit):
    chosen, rejected = random_pairs(7, n=400, scale=0.5, rounding=1)
    assert (chosen == rejected).any()
    assert ece(chosen, rejected, ties=ties).value == pytest.approx(
        loop_ece(chosen, rejected, 10, credit)[0], abs=1e-12
    )


def test_reliability_diagram_per_bin():
    # confidences σ(2) ≈ 0.881 (twice, one right one wrong), 0.5 (a tie), σ(3) ≈ 0.953
    result = ece([2.0, 0.0, 1.0, 3.0], [0.0, 2.0, 1.0, 0.0])
    assert result.count.tolist() == [0, 0, 0, 0, 1, 0, 0, 0, 2, 1]
    assert result.accuracy[4] == 0.0 and result.accuracy[8] == 0.5 and result.accuracy[9] == 1.0
    assert result.mean_confidence[8] == pytest.approx(1 / (1 + math.exp(-2)))
    assert np.isnan(result.accuracy[0]) and np.isnan(result.mean_confidence[0])
    expected = (0.5 + 2 * abs(1 / (1 + math.exp(-2)) - 0.5) + abs(1 / (1 + math.exp(-3)) - 1)) / 4
    assert result.value == pytest.approx(expected)


def test_perfectly_calibrated_bin_has_zero_error():
    # ten pairs at confidence σ(ln 4) = 0.8, eight of them right
    margin = math.log(4.0)
    chosen = np.array([margin] * 8 + [0.0] * 2)
    rejected = np.array([0.0] * 8 + [margin] * 2)
    assert ece(chosen, rejected).value == pytest.approx(0.0, abs=1e-12)


def loop_bt_ece(chosen, rejected, edges, tie_credit=0.0):
    """Rethinking RM Evaluation (arXiv 2410.05584), App. 8.3, written out: margin bins [e0, e1],
    (e1, e2], ...; conf = σ(|Δ|)."""
    n_bins = len(edges) - 1
    members = [[] for _ in range(n_bins)]
    for c, r in zip(chosen, rejected, strict=True):
        margin = abs(c - r)
        correct = 1.0 if c > r else (tie_credit if c == r else 0.0)
        index = next(m for m in range(n_bins) if margin <= edges[m + 1] or m == n_bins - 1)
        members[index].append((1 / (1 + math.exp(-margin)), correct))
    return sum(
        len(b) / len(chosen) * abs(sum(a for _, a in b) / len(b) - sum(c for c, _ in b) / len(b))
        for b in members
        if b
    ), [len(b) for b in members]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n_bins", [1, 5, 10])
def test_bt_ece_equals_loop(seed, n_bins):
    chosen, rejected = random_pairs(seed, n=250, rounding=1)
    margins = np.abs(chosen - rejected)
    for binning, edges in [
        ("quantile", np.quantile(margins, np.linspace(0, 1, n_bins + 1))),
        ("uniform", np.linspace(0, margins.max(), n_bins + 1)),
    ]:
        result = bt_ece(chosen, rejected, n_bins=n_bins, binning=binning)
        expected, counts = loop_bt_ece(chosen, rejected, edges)
        assert result.value == pytest.approx(expected, abs=1e-12)
        assert result.count.tolist() == counts
        assert result.bin_edges == pytest.approx(edges)


def test_bt_ece_quantile_bins_hold_equal_counts():
    chosen, rejected = random_pairs(11, n=1000)
    assert bt_ece(chosen, rejected).count.tolist() == [100] * 10


def test_bt_ece_margin_bins_hand_built():
    # 4 small margins, all right (under-confident); 4 margins of 5, half right
    # (over-confident); one huge margin, right
    margins = np.array([0.1] * 4 + [5.0] * 4 + [1000.0])
    right = np.array([True] * 4 + [True, True, False, False] + [True])
    chosen, rejected = np.where(right, margins, 0.0), np.where(right, 0.0, margins)
    small, large = 1 / (1 + math.exp(-0.1)), 1 / (1 + math.exp(-5.0))
    quantile = bt_ece(chosen, rejected, n_bins=3)
    assert quantile.count.tolist() == [4, 4, 1]
    assert quantile.value == pytest.approx((4 * (1 - small) + 4 * (large - 0.5)) / 9)
    uniform = bt_ece(chosen, rejected, n_bins=3, binning="uniform")
    assert uniform.count.tolist() == [8, 0, 1]  # the outlier stretches equal widths
    assert uniform.value == pytest.approx(abs(4 * small + 4 * large - 6) / 9)
    assert quantile.value > 4 * uniform.value  # coarse bins let errors of opposite sign cancel


def test_msp_is_max_softmax():
    chosen, rejected = random_pairs(1, n=200, scale=5.0)
    expected = softmax(np.stack([chosen, rejected], axis=1), axis=1).max(axis=1)
    assert confidence(chosen, rejected) == pytest.approx(expected, rel=1e-12)
    assert confidence([800.0, -800.0], [-800.0, 800.0]).tolist() == [1.0, 1.0]


def test_energy_is_negative_logsumexp():
    chosen, rejected = random_pairs(2, n=200, scale=30.0)
    expected = -logsumexp(np.stack([chosen, rejected], axis=1), axis=1)
    assert energy_score(chosen, rejected) == pytest.approx(expected, rel=1e-12)
    big = energy_score([1000.0], [1000.0])[0]  # e^1000 overflows; the stable form does not
    assert big == pytest.approx(-1000.0 - math.log(2.0))


@pytest.mark.parametrize("seed", range(6))
def test_auroc_equals_sklearn_with_ties(seed):
    rng = np.random.default_rng(seed)
    ind = rng.integers(0, 8, size=rng.integers(1, 60)).astype(float)
    ood = rng.integers(0, 6, size=rng.integers(1, 60)).astype(float)
    labels = np.r_[np.ones(ind.size), np.zeros(ood.size)]
    assert auroc(ind, ood) == pytest.approx(roc_auc_score(labels, np.r_[ind, ood]), abs=1e-12)


def test_auroc_direction_and_extremes():
    assert auroc([5.0, 6.0], [1.0, 2.0]) == 1.0  # ID scores higher: perfect
    assert auroc([1.0, 2.0], [5.0, 6.0]) == 0.0
    assert auroc([1.0, 1.0], [1.0]) == 0.5


def brute_force_fpr95(ind, ood):
    """Scan every candidate threshold; take the largest one whose TPR is at least 95%."""
    best = None
    for t in sorted(set(ind) | set(ood)):
        if np.mean(np.asarray(ind) >= t) >= 0.95:
            best = t
    return float(np.mean(np.asarray(ood) >= best))


def test_fpr95_hand_built():
    ind = np.arange(1.0, 21.0)  # 20 ID scores: accepting 19 of them means t = 2
    assert fpr_at_95_tpr(ind, [0.0, 1.0, 1.5, 3.0]) == 0.25  # only 3.0 >= 2
    assert fpr_at_95_tpr(ind, [2.0, 2.0, 0.0, 0.0]) == 0.5  # OOD tied with t is accepted
    # 100 ID scores 1..100: t = 6, the 95th largest
    assert fpr_at_95_tpr(np.arange(1.0, 101.0), [5.0, 5.99, 6.0, 50.0]) == 0.5
    # ties in ID at the threshold: all four 1.0s are accepted, TPR = 100% > 95%
    assert fpr_at_95_tpr([1.0, 1.0, 1.0, 1.0, 9.0] * 4, [1.0, 0.5]) == 0.5
    assert fpr_at_95_tpr([3.0], [3.0, 2.0, 4.0]) == pytest.approx(2 / 3)


@pytest.mark.parametrize("seed", range(20))
def test_fpr95_equals_threshold_scan(seed):
    rng = np.random.default_rng(seed)
    ind = rng.integers(0, 30, size=rng.integers(1, 120)).astype(float)
    ood = rng.integers(0, 25, size=rng.integers(1, 80)).astype(float)
    assert fpr_at_95_tpr(ind, ood) == brute_force_fpr95(ind, ood)


def test_accuracy_tie_policies():
    chosen, rejected = [3.0, 1.0, 0.0, 2.0], [1.0, 2.0, 0.0, 2.0]
    assert accuracy(chosen, rejected).value == 0.25
    assert accuracy(chosen, rejected, ties="half").value == 0.5
    assert accuracy(chosen, rejected, ties="half").per_prompt.tolist() == [1.0, 0.0, 0.5, 0.5]


def test_accuracy_uncertainty():
    chosen, rejected = random_pairs(5, n=20_000, scale=1.0, rounding=0)
    result = accuracy(chosen, rejected, ties="half")
    credit = result.per_prompt
    assert result.stderr == pytest.approx(credit.std(ddof=1) / np.sqrt(credit.size))
    # a large sample: Wilson's interval is the normal one (to within the tie credits' share)
    assert result.ci_low == pytest.approx(result.value - 1.96 * result.stderr, abs=2e-3)
    assert result.ci_high == pytest.approx(result.value + 1.96 * result.stderr, abs=2e-3)


@pytest.mark.parametrize("n", [5, 28, 400])
def test_accuracy_interval_is_scipys_wilson_interval(n):
    chosen, rejected = random_pairs(n, n=n, scale=0.3)
    result = accuracy(chosen, rejected)
    wins = int(round(result.value * n))
    expected = stats.binomtest(wins, n).proportion_ci(0.95, method="wilson")
    assert (result.ci_low, result.ci_high) == pytest.approx((expected.low, expected.high))
    assert result.ci_low <= result.value <= result.ci_high
    everything = accuracy(np.ones(n), np.zeros(n))  # accuracy 1: the interval is not a point
    assert everything.ci_high == 1.0 and everything.ci_low < 1.0


def test_subset_accuracy_splits_pairs():
    result = subset_accuracy([1, 0, 1, 2, 5], [0, 1, 1, 1, 0], ["b", "a", "b", "a", "c"])
    assert list(result) == ["b", "a", "c"]
    assert result["b"].value == 0.5 and result["a"].value == 0.5 and result["c"].value == 1.0
    assert result["a"].per_prompt.size == 2
    assert subset_accuracy([1, 1], [1, 0], ["x", "x"], ties="half")["x"].value == 0.75


def test_rewardbench_section_score_hand_computed():
    accuracies = {subset: 1.0 for subsets in REWARDBENCH.sections.values() for subset in subsets}
    accuracies["alpacaeval-easy"] = 0.0  # Chat: 100 of 358 prompts wrong
    accuracies["math-prm"] = 0.5  # Reasoning: math counts 984 of 1968
    accuracies["shp"] = 0.0  # Prior Sets: plain mean of four
    result = section_score(accuracies, "rewardbench")
    chat, reasoning, prior = 258 / 358, 0.75, 0.75
    assert result.sections["Chat"] == pytest.approx(chat)
    assert result.sections["Chat Hard"] == result.sections["Safety"] == 1.0
    assert result.sections["Reasoning"] == pytest.approx(reasoning)
    assert result.sections["Prior Sets"] == pytest.approx(prior)
    assert result.score == pytest.approx((chat + 1 + 1 + reasoning + 0.5 * prior) / 4.5)
    assert result.missing_subsets == () and result.unassigned_subsets == ()


def test_rewardbench_without_prior_sets_averages_four_sections():
    accuracies = {
        s: 0.5 for name in ("Chat", "Chat Hard", "Safety") for s in REWARDBENCH.sections[name]
    }
    accuracies |= {"math-prm": 1.0, "hep-go": 0.0, "my-extra": 0.3}  # Reasoning: 984 vs 164
    result = section_score(accuracies)
    assert result.sections["Reasoning"] == pytest.approx(984 / 1148)
    assert "Prior Sets" not in result.sections
    assert result.score == pytest.approx((0.5 * 3 + 984 / 1148) / 4)
    assert "hep-cpp" in result.missing_subsets and "anthropic_hhh" in result.missing_subsets
    assert result.unassigned_subsets == ("my-extra",)


def test_section_score_list_form_weights_by_pairs():
    subsets = subset_accuracy([1, 1, 1, 0, 0, 1], [0, 0, 0, 1, 1, 0], list("aaabbc"))
    result = section_score(subsets, {"S": ["a", "b"], "T": ["c"]}, weights={"T": 3})
    assert result.sections == {"S": pytest.approx(3 / 5), "T": 1.0}
    assert result.score == pytest.approx((3 / 5 + 3 * 1.0) / 4)
    with pytest.raises(MetricInputError, match="expected a MetricResult"):
        section_score({"a": 0.5}, {"S": ["a"]})


def test_rm_bench_style_matrix_and_difficulty():
    rng = np.random.default_rng(0)
    chosen, rejected = rng.normal(size=90), rng.normal(size=90)
    cs, rs = np.repeat(np.arange(9) // 3, 10), np.repeat(np.arange(9) % 3, 10)
    matrix = style_accuracy_matrix(chosen, rejected, cs, rs)
    for i in range(3):
        for j in range(3):
            rows = (cs == i) & (rs == j)
            assert matrix[i, j] == np.mean(chosen[rows] > rejected[rows])
    d = style_difficulty(matrix)
    assert d.hard == pytest.approx((matrix[0, 1] + matrix[0, 2] + matrix[1, 2]) / 3)
    assert d.easy == pytest.approx((matrix[1, 0] + matrix[2, 0] + matrix[2, 1]) / 3)
    assert d.normal == pytest.approx(np.trace(matrix) / 3)
    assert d.average == pytest.approx(matrix.mean())
    with pytest.raises(MetricInputError, match="at least one pair per style"):
        style_accuracy_matrix([1.0], [0.0], [0], [2])


def test_rm_bench_levels_have_a_standard_error_across_records():
    rng = np.random.default_rng(4)
    records = 30
    credit = (rng.random(records * 9) < 0.6).astype(float)
    order = rng.permutation(records * 9)  # the pairs of a record need not be adjacent
    record = np.repeat(np.arange(records), 9)[order]
    chosen_style, rejected_style = (
        (np.tile(np.arange(9), records)[order] // 3),
        (np.tile(np.arange(9), records)[order] % 3),
    )
    se = style_difficulty_stderr(credit, chosen_style, rejected_style, [f"r{r}" for r in record])
    levels = {
        "easy": lambda i, j: i > j,
        "normal": lambda i, j: i == j,
        "hard": lambda i, j: i < j,
        "average": lambda i, j: True,
    }
    for name, in_level in levels.items():
        means = [
            np.mean(
                [
                    credit[k]
                    for k in range(records * 9)
                    if record[k] == r and in_level(chosen_style[k], rejected_style[k])
                ]
            )
            for r in range(records)
        ]
        assert se[name] == pytest.approx(np.std(means, ddof=1) / np.sqrt(records)), name
        # with one pair per cell and record, the mean of record means is the matrix's value
        matrix = style_accuracy_matrix(credit, np.zeros(records * 9), chosen_style, rejected_style)
        assert np.mean(means) == pytest.approx(getattr(style_difficulty(matrix), name))
    # a record missing a cell (pairs sampled, not records): no standard error
    partial = style_difficulty_stderr(credit[1:], chosen_style[1:], rejected_style[1:], record[1:])
    assert all(np.isnan(v) for v in partial.values())


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: accuracy([1.0, np.nan], [0.0, 0.0]), "expected finite scores, got nan at index 1"),
        (lambda: accuracy([1.0], [np.inf]), "expected finite scores, got inf"),
        (
            lambda: accuracy([1.0, 2.0], [0.0]),
            r"expected one rejected score per chosen score \(2\), got 1",
        ),
        (lambda: accuracy([], []), "expected at least one score, got none"),
        (lambda: accuracy([[1.0]], [[0.0]]), "expected a 1-D array"),
        (lambda: accuracy(["a"], ["b"]), "expected real numbers"),
        (lambda: accuracy([1.0], [0.0], ties="draw"), "expected 'loss' or 'half', got 'draw'"),
        (lambda: ece([1.0], [0.0], n_bins=0), "expected an integer >= 1, got 0"),
        (lambda: bt_ece([1.0], [0.0], binning="log"), "expected 'quantile' or 'uniform'"),
        (lambda: auroc([], [1.0]), "expected at least one score"),
        (lambda: fpr_at_95_tpr([1.0], [np.nan]), "expected finite scores"),
        (
            lambda: subset_accuracy([1.0], [0.0], ["a", "b"]),
            r"expected one label per pair \(1\), got 2",
        ),
        (lambda: section_score({"a": 1.5}, {"S": {"a": 1}}), "expected an accuracy in"),
        (
            lambda: section_score({"a": 1.0}, "rewardbench2"),
            "expected a section mapping or 'rewardbench'",
        ),
        (
            lambda: section_score({"a": 1.0}, {"S": {"a": 1}}, weights={"T": 1}),
            "unknown section 'T'",
        ),
        (
            lambda: section_score({"x": 1.0}, {"S": {"a": 1}}),
            "expected an accuracy for at least one",
        ),
        (lambda: style_difficulty(np.ones((2, 3))), "expected a square matrix"),
    ],
)
def test_bad_input_says_expected_and_got(call, message):
    with pytest.raises(MetricInputError, match=message):
        call()


def test_results_are_metric_results():
    assert isinstance(accuracy([1.0], [0.0]), MetricResult)


# -- pairs that share a prompt: the cluster-robust standard error ---------------------------


def test_clustered_stderr_is_the_plain_one_with_one_pair_per_prompt():
    credit = (np.random.default_rng(3).random(40) < 0.7).astype(float)
    plain = accuracy(credit, np.zeros(40) + 0.5)
    clustered = accuracy(credit, np.zeros(40) + 0.5, clusters=[f"q{i}" for i in range(40)])
    assert clustered.stderr == pytest.approx(plain.stderr, rel=1e-12)
    assert (clustered.ci_low, clustered.ci_high) == pytest.approx((plain.ci_low, plain.ci_high))


def test_clustered_stderr_with_equal_clusters_is_the_stderr_of_the_prompt_means():
    rng = np.random.default_rng(4)
    credit = (rng.random((30, 9)) < stats.norm.cdf(rng.normal(size=(30, 1)))).astype(float)
    prompts = np.repeat(np.arange(30), 9)
    result = accuracy(credit.ravel(), np.full(credit.size, 0.5), clusters=prompts.tolist())
    means = credit.mean(axis=1)
    assert result.stderr == pytest.approx(means.std(ddof=1) / math.sqrt(30), rel=1e-12)


def test_clustered_stderr_equals_statsmodels_cluster_robust_stderr():
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 8, size=25)  # prompts with 1 to 7 pairs
    prompts = np.repeat(np.arange(25), sizes)
    effect = rng.normal(size=25)[prompts]
    chosen, rejected = rng.normal(size=prompts.size) + effect, rng.normal(size=prompts.size)
    result = accuracy(chosen, rejected, clusters=[f"p{q}" for q in prompts])
    credit = (chosen > rejected).astype(float)
    fit = sm.OLS(credit, np.ones(credit.size)).fit(cov_type="cluster", cov_kwds={"groups": prompts})
    assert result.stderr == pytest.approx(fit.bse[0], rel=1e-10)
    # the interval is Wilson's at the effective count: never narrower than the plain one
    plain = accuracy(chosen, rejected)
    assert result.ci_low <= plain.ci_low and result.ci_high >= plain.ci_high


def test_a_subsets_clustered_stderr_uses_only_its_own_prompts():
    credit = np.array([1, 1, 0, 0, 1, 0, 1, 1], dtype=float)
    subsets = ["a"] * 4 + ["b"] * 4
    prompts = ["x", "x", "y", "y", "z", "w", "v", "v"]
    results = subset_accuracy(credit, np.full(8, 0.5), subsets, clusters=prompts)
    assert results["a"].stderr == pytest.approx(0.5)  # two prompts: all right, all wrong
    b = credit[4:]
    sums = np.array([b[0] - b.mean(), b[1] - b.mean(), b[2:].sum() - 2 * b.mean()])
    assert results["b"].stderr == pytest.approx(math.sqrt(3 / 2 * (sums**2).sum()) / 4)


def test_one_prompt_leaves_the_clustered_stderr_undefined_and_the_interval_wide():
    result = accuracy([1.0, 0.0, 1.0], [0.0, 1.0, 0.0], clusters=["q", "q", "q"])
    assert math.isnan(result.stderr) and result.value == pytest.approx(2 / 3)
    z = stats.norm.ppf(0.975)  # Wilson's interval of 2/3 over a single independent unit
    centre, half = (2 / 3 + z * z / 2) / (1 + z * z), z / (1 + z * z) * math.sqrt(2 / 9 + z * z / 4)
    assert (result.ci_low, result.ci_high) == pytest.approx((centre - half, centre + half))


def test_ece_bins_count_clustered_pairs_by_their_design_effect():
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(6)
    prompts = np.repeat(np.arange(60), 9)
    margin = 0.8 + rng.normal(size=60)[prompts] + rng.normal(0, 1.1, prompts.size)
    plain = ece(margin, np.zeros(prompts.size))
    clustered = ece(margin, np.zeros(prompts.size), clusters=prompts.tolist())
    assert plain.effective_count is None and clustered.value == plain.value
    bins = np.clip(np.ceil(stats.logistic.cdf(np.abs(margin)) * 10) - 1, 0, 9).astype(int)
    for b in np.flatnonzero(clustered.count > 1):
        y = (margin[bins == b] > 0).astype(float)
        groups = np.unique(prompts[bins == b], return_inverse=True)[1]
        if y.std() == 0 or groups.max() == 0:
            continue
        fit = sm.OLS(y, np.ones(y.size)).fit(cov_type="cluster", cov_kwds={"groups": groups})
        deff = max((fit.bse[0] / (y.std(ddof=1) / math.sqrt(y.size))) ** 2, 1.0)
        assert clustered.effective_count[b] == pytest.approx(y.size / deff, rel=1e-9)
    # one pair per prompt: the plain counts, and the plain Wilson intervals
    single = ece(margin, np.zeros(prompts.size), clusters=list(range(prompts.size)))
    assert np.allclose(single.effective_count, single.count)
    assert np.allclose(single.accuracy_interval(), plain.accuracy_interval(), equal_nan=True)
