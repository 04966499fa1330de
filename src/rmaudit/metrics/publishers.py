"""Judge scores under their publishers' own rules, to set beside rmaudit's (docs/judges.md,
"Real judges"): what a published table prints, computed from the published verdicts.

* **LLMBar** (*Evaluating Large Language Models at Evaluating Instruction Following*, arXiv
  2310.07641, Sec. 4 and its ``statistics.json``): each pair is judged with output 1 shown
  first and with output 2 shown first; an order's accuracy is the share of pairs whose
  verdict names the better output, a verdict that could not be read counting wrong; "Acc." is
  the mean of the two orders' accuracies, and "Agr." (positional agreement) the share of pairs
  whose two verdicts agree — two unread verdicts agreeing.
* **JudgeBench** (*JudgeBench: A Benchmark for Evaluating LLM-based Judges*, arXiv 2410.12784,
  Sec. 4 and ``utils/metrics.py``): each pair is judged as it is and with A and B swapped; the
  second decision is mapped back, and a pair counts correct when its decisions net at least one
  vote for the correct response (a tie beside a correct decision counts; inconsistent
  decisions, two ties and unparsed replies count wrong); the score is the share of pairs.
* **RewardMATH** (*Evaluating Robustness of Reward Models for Mathematical Reasoning*, arXiv
  2410.01729, Sec. 3.2 and ``src/evaluation/eval.py``: ``RewardMATHEvaluation``): per
  problem, one correct solution against the incorrect ones; its accuracy counts the problems
  whose correct solution scores strictly above every incorrect one ("w/ tie": at least as
  high), its MRR averages 1 / the correct solution's rank among all, sorted by score high
  first with a tie ranked below the incorrect solutions — over every record of the file.

>>> llmbar_figures([1, 2], ["1", "1"], ["1", None]).agreement
0.5
>>> judgebench_score(["A>B", "A>B"], [["A>B", "A=B"], ["A=B", "A=B"]]).correct
1
>>> rewardmath_figures([2.0, 1.0], [[1.0, 0.5], [1.0, 0.0]]).mrr
0.75
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: the group of figures over every record (beside the subsets, categories or aggregations)
OVERALL = "Overall"
#: a JudgeBench decision and the same decision with A and B swapped
_SWAPPED = {"A>B": "B>A", "B>A": "A>B"}


@dataclass(frozen=True)
class LLMBarFigures:
    """LLMBar's counts on one subset: pairs, correct in each order, agreeing."""

    pairs: int
    correct_first: int  # output 1 shown first ("correct_False")
    correct_second: int  # output 2 shown first ("correct_True")
    agree: int  # both verdicts the same ("equal")

    @property
    def accuracy_first(self) -> float:
        return self.correct_first / self.pairs

    @property
    def accuracy_second(self) -> float:
        return self.correct_second / self.pairs

    @property
    def accuracy(self) -> float:
        """ "Acc.": the mean of the two orders' accuracies ("correct_average")."""
        return (self.accuracy_first + self.accuracy_second) / 2

    @property
    def agreement(self) -> float:
        """ "Agr.": the share of pairs whose two verdicts agree."""
        return self.agree / self.pairs


def llmbar_figures(
    labels: Sequence[int], first: Sequence[str | None], second: Sequence[str | None]
) -> LLMBarFigures:
    """LLMBar's figures from each pair's label (1 or 2) and its winners ("1", "2" or None,
    unread) with output 1 shown first and with output 2 shown first."""
    if not len(labels) == len(first) == len(second) or not labels:
        raise ValueError("expected one label and two winners per pair, for at least one pair")
    truth = [str(label) for label in labels]
    return LLMBarFigures(
        len(truth),
        sum(w == t for w, t in zip(first, truth, strict=True)),
        sum(w == t for w, t in zip(second, truth, strict=True)),
        sum(a == b for a, b in zip(first, second, strict=True)),
    )


@dataclass(frozen=True)
class JudgeBenchScore:
    """JudgeBench's count on a set of pairs."""

    pairs: int
    correct: int

    @property
    def score(self) -> float:
        return self.correct / self.pairs


def judgebench_correct(label: str, games: Sequence[str | None]) -> bool:
    """Whether a pair counts correct: its decision on the pair as it is, then (when judged
    twice) its decision with A and B swapped, mapped back, net at least one vote for
    ``label``; a decision that is no verdict (None, a tie) votes for neither."""
    decisions = [games[0], *(_SWAPPED.get(d, d) if d else d for d in games[1:2])]
    votes = sum((d == label) - (d == _SWAPPED[label]) for d in decisions)
    return votes > 0


def judgebench_score(
    labels: Sequence[str], games: Sequence[Sequence[str | None]]
) -> JudgeBenchScore:
    """JudgeBench's score from each pair's label ("A>B" or "B>A") and its games' decisions."""
    if not labels or len(games) != len(labels):
        raise ValueError("expected each pair's label and decisions, for at least one pair")
    correct = sum(judgebench_correct(label, g) for label, g in zip(labels, games, strict=True))
    return JudgeBenchScore(len(labels), correct)


@dataclass(frozen=True)
class RewardMathFigures:
    """RewardMATH's counts on a file's records: problems, correct (strictly, and with ties),
    and the sum of the correct solutions' reciprocal ranks."""

    problems: int
    correct: int
    correct_with_ties: int
    reciprocal_ranks: float

    @property
    def accuracy(self) -> float:
        return self.correct / self.problems

    @property
    def accuracy_with_ties(self) -> float:
        return self.correct_with_ties / self.problems

    @property
    def mrr(self) -> float:
        return self.reciprocal_ranks / self.problems


def rewardmath_figures(
    correct: Sequence[float], incorrect: Sequence[Sequence[float]]
) -> RewardMathFigures:
    """RewardMATH's figures from each problem's correct solution's score and its incorrect
    solutions' scores.  The correct solution's rank is 1 + the incorrect solutions scored at
    least as high (a tie ranks it below them)."""
    if not correct or len(incorrect) != len(correct) or not all(incorrect):
        raise ValueError(
            "expected a correct and some incorrect scores per problem, for one at least"
        )
    above = [max(rest) for rest in incorrect]
    ranks = [
        1 + sum(s >= chosen for s in rest) for chosen, rest in zip(correct, incorrect, strict=True)
    ]
    return RewardMathFigures(
        len(correct),
        sum(c > a for c, a in zip(correct, above, strict=True)),
        sum(c >= a for c, a in zip(correct, above, strict=True)),
        sum(1 / rank for rank in ranks),
    )
