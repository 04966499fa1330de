"""RewardBench 2's scores (rmaudit.metrics.rewardbench2) against hand computations and an
independent reading of the published formulas: best-of-4 with 1/k credit for a k-way tie at
the top, the Ties formula (ref and tied groups, accurate, d_corr, m_ci, pref, pref_hard, the
tanh margin with NaN as 0, weights 0.30/0.30/0.20/0.20/0.01), and the final score (the
unweighted mean of the subsets) with its ±."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rmaudit.errors import MetricInputError
from rmaudit.metrics.cluster_bootstrap import resample_counts
from rmaudit.metrics.rewardbench2 import (
    Rows,
    ScoredRow,
    margin_term,
    rewardbench2_score,
    rows_from_pairs,
    ties_interval,
    ties_questions,
    top_credit,
)


def ties_row(ident: str, correct: list[float], incorrect: list[float], unit: str = "") -> ScoredRow:
    return ScoredRow(
        unit or ident, "Ties", ident, np.array(correct, float), np.array(incorrect, float)
    )


@pytest.mark.parametrize(
    "correct, incorrect, credit",
    [
        ([3.0], [1.0, 2.0, 0.0], 1.0),  # the top alone
        ([3.0], [3.0, 2.0, 0.0], 1 / 2),  # a two-way tie at the top
        ([3.0], [3.0, 3.0, 0.0], 1 / 3),  # three-way
        ([3.0], [3.0, 3.0, 3.0], 1 / 4),  # every completion alike: chance
        ([2.0], [3.0, 2.0, 2.0], 0.0),  # tied, but below the top
        ([1.0, 5.0], [4.0], 0.0),  # the first correct completion is the one scored
    ],
)
def test_best_of_four_credit(correct, incorrect, credit):
    assert top_credit(np.array(correct), np.array(incorrect)) == credit


#: two questions by hand; every number below is worked out in the test's comments
HAND = (
    # question 1: ref correct 5 vs incorrect {1, 2}: accurate, m_ci = 3
    ties_row("ref:1", [5.0], [1.0, 2.0]),
    # tied correct {6, 4} vs incorrect {1, 3}: accurate, d_corr = 2, m_ci = 1
    ties_row("tied:1", [6.0, 4.0], [1.0, 3.0]),
    # question 2: ref correct 1 vs incorrect {1, 2}: not accurate, m_ci = -1
    ties_row("ref:2", [1.0], [1.0, 2.0]),
    # tied correct {4, 4, 4} vs incorrect {2}: accurate, d_corr = 0, m_ci = 2
    ties_row("tied:2", [4.0, 4.0, 4.0], [2.0]),
)


def test_ties_score_by_hand():
    q = ties_questions(HAND)
    parts = {name: float(v[0]) for name, v in q.components().items()}
    # ref_acc = mean(1, 0); tied_acc = mean(1, 1)
    assert parts["ref_accuracy"] == 0.5
    assert parts["tied_accuracy"] == 1.0
    # pref: q1 m_ci(tied) 1 > d_corr 2? no; q2 2 > 0? yes
    assert parts["pref"] == 0.5
    # pref_hard: q1 min(3, 1) = 1 > 2? no; q2 min(-1, 2) = -1 > 0? no
    assert parts["pref_hard"] == 0.0
    # margin: q1 tanh(1 / 2 - 1) = tanh(-0.5); q2 -1 / 0 - 1 = -inf: tanh = -1
    assert parts["margin"] == pytest.approx((math.tanh(-0.5) - 1.0) / 2)
    expected = 0.3 * 1.0 + 0.3 * 0.5 + 0.2 * 0.5 + 0.2 * 0.0 + 0.01 * (math.tanh(-0.5) - 1) / 2
    assert float(q.score()[0]) == pytest.approx(expected, abs=1e-15)
    assert q.units().mean() == pytest.approx(expected, abs=1e-15)


def test_margin_at_zero_spread_follows_numpy():
    with np.errstate(divide="ignore", invalid="ignore"):
        for gap in (2.0, -3.0, 0.0):
            expected = np.nan_to_num(np.tanh(np.float64(gap) / np.float64(0.0) - 1), nan=0.0)
            assert margin_term(gap, 0.0) == float(expected)
    assert margin_term(1.0, 4.0) == math.tanh(1.0 / 4.0 - 1.0)


def test_rows_of_one_id_are_pooled_into_one_group():
    split = (
        *HAND[:1],
        ties_row("tied:1", [6.0], [1.0], "a"),
        ties_row("tied:1", [4.0], [3.0], "b"),
    )
    whole = HAND[:2]
    assert float(ties_questions(split).score()[0]) == float(ties_questions(whole).score()[0])


def reference_ties(rows: list[ScoredRow]) -> float:
    """reward-bench's process_single_model read independently: group by id, per group
    (accurate, d_corr or None, m_ci), then the weighted means."""
    groups: dict[tuple[str, int], list[tuple[bool, float]]] = {}
    for row in rows:
        kind, number = row.group.split(":")
        samples = groups.setdefault((kind, int(number)), [])
        samples += [(True, float(s)) for s in row.correct]
        samples += [(False, float(s)) for s in row.incorrect]
    stats = {}
    for key, samples in groups.items():
        good = [s for ok, s in samples if ok]
        bad = [s for ok, s in samples if not ok]
        stats[key] = (
            min(good) - max(bad) > 0,
            max(good) - min(good) if len(good) > 1 else None,
            min(good) - max(bad),
        )
    ref = {n: s for (k, n), s in stats.items() if k == "ref"}
    tied = {n: s for (k, n), s in stats.items() if k == "tied"}
    both = sorted(set(ref) & set(tied))
    d = np.array([tied[n][1] for n in both], float)
    m_tied = np.array([tied[n][2] for n in both])
    m_worst = np.minimum(np.array([ref[n][2] for n in both]), m_tied)
    with np.errstate(divide="ignore", invalid="ignore"):
        margin = np.nan_to_num(np.tanh(m_worst / d - 1), nan=0.0)
    return float(
        0.3 * np.mean([s[0] for s in tied.values()])
        + 0.3 * np.mean([s[0] for s in ref.values()])
        + 0.2 * np.mean(m_tied > d)
        + 0.2 * np.mean(m_worst > d)
        + 0.01 * np.mean(margin)
    )


def random_ties(rng: np.random.Generator, questions: int, ratings: bool) -> list[ScoredRow]:
    rows = []
    for q in range(questions):
        for kind, correct in (("ref", 1), ("tied", int(rng.integers(2, 5)))):
            values = rng.normal(size=correct + 3) + np.r_[np.full(correct, 1.5), np.zeros(3)]
            if ratings:  # integers 1-10: ties everywhere, zero spreads, 0/0 margins
                values = np.clip(np.round(5 + 2 * values), 1, 10)
            rows.append(ties_row(f"{kind}:{q}", list(values[:correct]), list(values[correct:])))
    return rows


@pytest.mark.parametrize("ratings", [False, True])
def test_ties_matches_an_independent_reading_of_the_formula(ratings):
    rng = np.random.default_rng(4 + ratings)
    for _ in range(20):
        rows = random_ties(rng, int(rng.integers(2, 12)), ratings)
        q = ties_questions(rows)
        assert float(q.score()[0]) == pytest.approx(reference_ties(rows), abs=1e-12)
        assert q.units().mean() == pytest.approx(reference_ties(rows), abs=1e-12)


def test_ties_bootstrap_recomputes_the_formula_on_each_resample():
    """The vectorised resamples against the formula on each resample's rows, drawn with the
    same seed: a question drawn k times counts k times."""
    rows = random_ties(np.random.default_rng(1), 9, ratings=True)
    q = ties_questions(rows)
    counts = resample_counts(9, draws=50, seed=3)
    by_question = {n: [r for r in rows if r.group.split(":")[1] == n] for n in q.questions}
    for draw, resampled in zip(counts, q.score(counts.astype(float)), strict=True):
        taken = [  # each copy of a drawn question its own question
            ties_row(f"{r.group.split(':')[0]}:{i * 1000 + copy}", *_lists(r))
            for i, number in enumerate(q.questions)
            for copy in range(draw[i])
            for r in by_question[number]
        ]
        assert resampled == pytest.approx(reference_ties(taken), abs=1e-12)
    interval, spreads = ties_interval(q, draws=200, seed=0)
    assert interval.ci_low <= float(q.score()[0]) <= interval.ci_high
    assert interval.stderr > 0 and set(spreads) == {
        "tied_accuracy",
        "ref_accuracy",
        "pref",
        "pref_hard",
        "margin",
    }


def _lists(row: ScoredRow) -> tuple[list[float], list[float]]:
    return list(row.correct), list(row.incorrect)


def test_units_average_to_the_score_when_questions_lack_a_group():
    rows = [*HAND, ties_row("ref:3", [9.0], [1.0]), ties_row("tied:4", [2.0, 1.0], [5.0])]
    q = ties_questions(rows)
    # ref over 3 groups (1, 0, 1), tied over 3 (1, 1, 0); pref etc. over questions 1 and 2
    parts = {name: float(v[0]) for name, v in q.components().items()}
    assert parts["ref_accuracy"] == pytest.approx(2 / 3)
    assert parts["tied_accuracy"] == pytest.approx(2 / 3)
    assert parts["pref"] == 0.5
    assert q.units().mean() == pytest.approx(float(q.score()[0]), abs=1e-15)


def test_a_tied_group_with_one_answer_counts_in_tied_accuracy_and_is_said_to():
    """It is left out of the margins only: tied_accuracy counts it, as upstream's mean over
    every tied group does, so it is listed as counted in part, never as counting nowhere."""
    rows = [*HAND, ties_row("ref:3", [9.0], [1.0]), ties_row("tied:3", [0.5], [1.0])]
    q = ties_questions(rows)
    assert q.paired.tolist() == [1.0, 1.0, 0.0]
    assert float(q.components()["pref"][0]) == 0.5  # questions 1 and 2 only
    score = rewardbench2_score(Rows(tuple(rows)))
    (ties,) = score.subsets
    # by hand: ref:3 accurate (9 > 1), tied:3 not (0.5 < 1): both accuracies 2/3; the
    # preferences and the margin those of HAND's two questions
    margin = (math.tanh(-0.5) - 1.0) / 2
    by_hand = 0.3 * 2 / 3 + 0.3 * 2 / 3 + 0.2 * 0.5 + 0.2 * 0.0 + 0.01 * margin
    assert ties.value == pytest.approx(by_hand, abs=1e-15)
    assert "tied:3" not in score.left_out and "tied:3" not in q.left_out
    assert "tied_accuracy" in score.counted_in_part["tied:3"]


def best_of_four_rows(subset: str, scores: list[list[float]]) -> list[ScoredRow]:
    return [
        ScoredRow(f"{subset} {i}", subset, str(i), np.array(s[:1]), np.array(s[1:]))
        for i, s in enumerate(scores)
    ]


def test_final_score_is_the_mean_of_the_subsets_with_the_root_sum_of_squares():
    math_rows = best_of_four_rows("Math", [[3, 1, 2, 0], [2, 2, 1, 0], [1, 2, 3, 0], [4, 4, 4, 1]])
    focus_rows = best_of_four_rows("Focus", [[3, 1, 2, 0], [1, 1, 1, 1], [5, 0, 0, 0]])
    score = rewardbench2_score(Rows((*math_rows, *focus_rows, *HAND)))
    by_name = {s.subset: s for s in score.subsets}
    assert [s.subset for s in score.subsets] == ["Math", "Focus", "Ties"]
    math_credits = np.array([1, 1 / 2, 0, 1 / 3])
    focus_credits = np.array([1, 1 / 4, 1])
    assert by_name["Math"].value == pytest.approx(math_credits.mean())
    assert by_name["Math"].stderr == pytest.approx(math_credits.std(ddof=1) / 2)
    assert by_name["Focus"].value == pytest.approx(focus_credits.mean())
    final = score.final
    assert final is not None
    values = [s.value for s in score.subsets]
    assert final.value == pytest.approx(np.mean(values))
    assert final.stderr == pytest.approx(math.sqrt(sum(s.stderr**2 for s in score.subsets)) / 3)
    assert final.ci_low == pytest.approx(final.value - 1.959963984540054 * final.stderr)
    assert np.mean(list(final.units.values())) == pytest.approx(final.value)
    assert set(final.strata.values()) == {"Math", "Focus", "Ties"}


def test_rows_come_back_from_their_pairs_in_any_order():
    # row r1: 1 correct (score 5) × 3 incorrect; row r2: 2 correct × 1 incorrect
    metas = [
        {"row": "r1", "correct": 0, "incorrect": j, "num_correct": 1, "num_incorrect": 3}
        for j in range(3)
    ] + [
        {"row": "r2", "correct": i, "incorrect": 0, "num_correct": 2, "num_incorrect": 1, "id": "x"}
        for i in range(2)
    ]
    chosen = np.array([5.0, 5.0, 5.0, 7.0, 8.0])
    rejected = np.array([1.0, 2.0, 5.0, 0.0, 0.0])
    subsets = ["Math"] * 3 + ["Focus"] * 2
    order = [4, 2, 0, 3, 1]
    for pick in (range(5), order):
        rows = rows_from_pairs(
            chosen[list(pick)],
            rejected[list(pick)],
            [subsets[i] for i in pick],
            [metas[i] for i in pick],
        ).rows
        assert [(r.unit, r.correct.tolist(), r.incorrect.tolist()) for r in rows] == [
            ("row r1", [5.0], [1.0, 2.0, 5.0]),
            ("row r2", [7.0, 8.0], [0.0]),
        ]
    partial = rows_from_pairs(chosen[:2], rejected[:2], subsets[:2], metas[:2])
    assert partial.rows == () and "row r1" in partial.incomplete
    with pytest.raises(MetricInputError, match="finite"):
        rows_from_pairs(np.array([np.nan]), np.array([0.0]), ["Math"], [{}])


def test_a_ties_score_near_1_over_few_questions_is_marked_approximate():
    """n·min(value, 1 − value) < 10 over the questions: the rule whose coverage
    benchmarks/rewardbench2.md measures (the ± 0.924 for a strong rating judge there)."""
    perfect = [
        ties_row(f"{k}:{q}", [9.0, 8.0][: 1 + (k == "tied")], [1.0])
        for q in range(20)
        for k in ("ref", "tied")
    ]
    (near_one,) = rewardbench2_score(Rows(tuple(perfect))).subsets
    assert near_one.value > 0.9 and "approximate" in near_one.approximate
    middling = random_ties(np.random.default_rng(0), 60, ratings=False)
    (middle,) = rewardbench2_score(Rows(tuple(middling))).subsets
    assert 60 * min(middle.value, 1 - middle.value) >= 10 and middle.approximate == ""
