"""The publishers' own rules (rmaudit.metrics.publishers) against hand-worked cases and, for
JudgeBench, every combination of two decisions against its rule written out independently."""

from __future__ import annotations

import itertools

import pytest
from _recorded import judgebench_rule

from rmaudit.metrics.publishers import judgebench_correct, judgebench_score, llmbar_figures


def test_llmbar_counts_an_unparsed_verdict_wrong_and_two_unparsed_as_agreeing():
    # label, winner with output 1 first, winner with output 2 first
    pairs = [(1, "1", "1"), (2, "1", "2"), (1, None, None), (2, "2", "1"), (1, None, "1")]
    figures = llmbar_figures(*(list(column) for column in zip(*pairs, strict=True)))
    assert (figures.pairs, figures.correct_first, figures.correct_second) == (5, 2, 3)
    assert figures.agree == 2  # the first pair ("1" twice) and the third (unparsed twice)
    assert figures.accuracy == pytest.approx((2 / 5 + 3 / 5) / 2)
    assert figures.agreement == pytest.approx(2 / 5)


def test_llmbar_needs_a_label_and_two_winners_per_pair():
    with pytest.raises(ValueError, match="one label and two winners"):
        llmbar_figures([1, 2], ["1"], ["1", "2"])
    with pytest.raises(ValueError):
        llmbar_figures([], [], [])


DECISIONS = ("A>B", "B>A", "A=B", None, "A<<B")


@pytest.mark.parametrize("label", ["A>B", "B>A"])
def test_judgebench_every_pair_of_decisions_follows_its_rule(label):
    for first, second in itertools.product(DECISIONS, repeat=2):
        games = [first, second]
        assert judgebench_correct(label, games) == judgebench_rule(label, games), games
    for first in DECISIONS:
        assert judgebench_correct(label, [first]) == (first == label)


def test_judgebench_hand_worked_cases():
    # (games as shown, correct?): the swapped game's "B>A" is "A>B" mapped back
    cases = [
        (["A>B", "B>A"], True),  # right in both orders
        (["A>B", "A>B"], False),  # the first answer shown each time: inconsistent
        (["A=B", "B>A"], True),  # a tie beside a right verdict
        (["A=B", "A=B"], False),  # two ties
        ([None, "B>A"], True),  # unparsed beside a right verdict
        (["B>A", "A>B"], False),  # wrong twice
    ]
    score = judgebench_score(["A>B"] * len(cases), [games for games, _ in cases])
    assert score.correct == sum(right for _, right in cases)
    assert score.score == pytest.approx(3 / 6)
    for games, right in cases:
        assert judgebench_correct("A>B", games) is right, games
    with pytest.raises(ValueError):
        judgebench_score(["A>B"], [])
