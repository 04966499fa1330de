"""RewardBench 2's scores (rmaudit.metrics.rewardbench2) against hand computations and an
independent reading of the published formulas: best-of-4 with 1/k credit for a k-way tie at
the top, the Ties formula (ref and tied groups, accurate, d_corr, m_ci, pref, pref_hard, the
tanh margin with NaN as 0, weights 0.30/0.30/0.20/0.20/0.01), and the final score (the
unweighted mean of the subsets) with its ±."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from rmaudit.errors import MetricInputError
from rmaudit.metrics.cluster_bootstrap import resample_counts
from rmaudit.metrics.rewardbench2 import (
    RowPlace,
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
    score = rewardbench2_score(rows)
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
    score = rewardbench2_score((*math_rows, *focus_rows, *HAND))
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
    # MOVER: each subset's distance to its bounds, root-sum-squared over the subsets
    below = math.sqrt(sum((s.value - s.ci_low) ** 2 for s in score.subsets)) / 3
    above = math.sqrt(sum((s.ci_high - s.value) ** 2 for s in score.subsets)) / 3
    assert (final.ci_low, final.ci_high) == pytest.approx(
        (final.value - below, final.value + above), abs=1e-15
    )
    assert np.mean(list(final.units.values())) == pytest.approx(final.value)
    assert set(final.strata.values()) == {"Math", "Focus", "Ties"}


def test_rows_come_back_from_their_pairs_in_any_order():
    # row r1: 1 correct (score 5) × 3 incorrect; row r2: 2 correct × 1 incorrect
    places = [RowPlace("r1", "r1", 0, j, 1, 3) for j in range(3)] + [
        RowPlace("r2", "x", i, 0, 2, 1) for i in range(2)
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
            [places[i] for i in pick],
        )
        assert [(r.unit, r.correct.tolist(), r.incorrect.tolist(), r.missing) for r in rows] == [
            ("row r1", [5.0], [1.0, 2.0, 5.0], ""),
            ("row r2", [7.0, 8.0], [0.0], ""),
        ]
    (partial,) = rows_from_pairs(chosen[:2], rejected[:2], subsets[:2], places[:2])
    assert partial.unit == "row r1" and partial.missing.startswith("1 of 1 correct and 2 of 3")
    assert rewardbench2_score([partial]).left_out == {"row r1": partial.missing}
    with pytest.raises(MetricInputError, match="finite"):
        rows_from_pairs(np.array([np.nan]), np.array([0.0]), ["Math"], [None])


def test_a_place_comes_back_from_the_meta_the_store_keeps():
    """The store keeps a pair's place as its fields in the pair's meta (the views read it back);
    a meta of other data names no place, and its pair is a row of its own."""
    place = RowPlace("data.jsonl:7", "ref:3", 0, 2, 1, 3)
    assert RowPlace.of({**dataclasses.asdict(place), "line": 7}) == place
    for other in (
        {},
        {"line": 7},
        {"row": 4, "id": "x"},
        {**dataclasses.asdict(place), "correct": "0"},
    ):
        assert RowPlace.of(other) is None


def test_a_ties_score_near_1_over_few_questions_is_marked_approximate():
    """n·min(value, 1 − value) < 10 over the questions: the rule whose coverage
    benchmarks/rewardbench2.md measures (the ± 0.924 for a strong rating judge there)."""
    perfect = [
        ties_row(f"{k}:{q}", [9.0, 8.0][: 1 + (k == "tied")], [1.0])
        for q in range(20)
        for k in ("ref", "tied")
    ]
    (near_one,) = rewardbench2_score(perfect).subsets
    assert near_one.value > 0.9 and "approximate" in near_one.approximate
    middling = random_ties(np.random.default_rng(0), 60, ratings=False)
    (middle,) = rewardbench2_score(middling).subsets
    assert 60 * min(middle.value, 1 - middle.value) >= 10 and middle.approximate == ""


def _best_of_four_with_misses(size: int, misses: int) -> list[ScoredRow]:
    """``size`` rows whose correct completion is alone on top but in ``misses`` of them."""
    return best_of_four_rows(
        "Math", [[0.0, 1.0, 0.5, 0.2]] * misses + [[1.0, 0.0, 0.5, 0.2]] * (size - misses)
    )


@pytest.mark.parametrize("size", [160, 475])
@pytest.mark.parametrize("accuracy", [0.99, 0.995, 0.999])
def test_a_best_of_four_interval_near_a_perfect_score_covers_exactly(size, accuracy):
    """The exact coverage over the binomial count of misses (scipy's pmf, not simulation): a
    subset whose rows are right with probability 0.99-0.999 has its interval hold the true
    accuracy at least 0.93 of the time (a bootstrap over the rows covered 0.10-0.84 there:
    with no miss seen it is [1, 1])."""
    from scipy import stats

    covered = 0.0
    for misses in range(int(stats.binom.isf(1e-9, size, 1 - accuracy)) + 1):
        (subset,) = rewardbench2_score(_best_of_four_with_misses(size, misses)).subsets
        assert subset.value == pytest.approx(1 - misses / size)
        if subset.ci_low <= accuracy <= subset.ci_high:
            covered += stats.binom.pmf(misses, size, 1 - accuracy)
    assert covered >= 0.93


def test_a_perfect_scorer_gets_intervals_at_the_edge_and_every_pm_marked():
    """Every subset right on every row: Wilson's interval at 0 misses, [n/(n + z²), 1] (its
    closed form), never [1, 1]; Ties and the final score an interval reaching below their value;
    every ± (0 here) marked approximate, the final score's too."""
    from scipy import stats

    z = stats.norm.ppf(0.975)
    rows = [*_best_of_four_with_misses(160, 0)]
    rows += best_of_four_rows("Focus", [[1.0, 0.0, 0.5, 0.2]] * 495)
    rows += [
        ties_row(f"{kind}:{q}", [9.0 + 0.01 * q, 9.0][: 1 + (kind == "tied")], [1.0, 2.0])
        for q in range(51)
        for kind in ("ref", "tied")
    ]
    score = rewardbench2_score(rows)
    by_name = {s.subset: s for s in score.subsets}
    for name, size in (("Math", 160), ("Focus", 495)):
        s = by_name[name]
        assert (s.value, s.stderr) == (1.0, 0.0)
        assert (s.ci_low, s.ci_high) == pytest.approx((size / (size + z * z), 1.0), rel=1e-12)
        assert "approximate" in s.approximate
    ties = by_name["Ties"]
    assert ties.value > 1.0 and ties.ci_high <= 1.01
    assert ties.ci_low < 0.99 and "approximate" in ties.approximate
    final = score.final
    assert final is not None and final.ci_low < final.value - 0.005 < final.ci_high
    assert "approximate" in final.approximate


def _near_perfect_ties(rng: np.random.Generator, questions: int, slip: float) -> list[ScoredRow]:
    """Each group in order but with probability ``slip`` (its best incorrect answer then on
    top); a tied group's correct answers 1 apart, far below the gap to the incorrect ones."""
    rows = []
    for q in range(questions):
        for kind, correct in (("ref", [10.0]), ("tied", [10.0, 9.0])):
            incorrect = [2.0, 12.0 if rng.random() < slip else 3.0]
            rows.append(ties_row(f"{kind}:{q}", correct, incorrect))
    return rows


def test_a_ties_interval_near_a_perfect_score_covers():
    """51 questions whose groups slip out of order with probability 0.005: the truth is the
    formula's expectation, by hand (a slipped group is inaccurate and fails pref_hard, a
    slipped tied group pref too), and the interval holds it in at least 0.9 of 200 seeded
    data sets (the bootstrap over questions: a point whenever nothing slipped)."""
    slip, q = 0.005, 51
    ok = 1 - slip
    both = ok * ok  # neither group slipped
    # margin per question: tanh(min(m_ci(ref), m_ci(tied)) / d_corr − 1), d_corr 1; m_ci in
    # order 7 (ref) and 6 (tied), slipped −2 (ref) and −3 (tied)
    margin = both * math.tanh(6 - 1) + ok * slip * math.tanh(-2 - 1) + slip * math.tanh(-3 - 1)
    truth = 0.3 * ok + 0.3 * ok + 0.2 * ok + 0.2 * both + 0.01 * margin
    rng = np.random.default_rng(7)
    covered = 0
    for _ in range(200):
        (ties,) = rewardbench2_score(_near_perfect_ties(rng, q, slip)).subsets
        covered += ties.ci_low <= truth <= ties.ci_high
    assert covered / 200 >= 0.9
