"""The suites of RewardMATH's recorded models (docs/rewardmath.md): RewardMATH itself — one
correct solution against nine incorrect ones per MATH problem — and RewardBench's math subset
as the same authors scored it (one against one)."""

from __future__ import annotations

from rmaudit.benchmark.recorded.rewardmath import CORRECT
from rmaudit.components.vocabulary import reta_key

from .suite import Headline, HubSource, RecordedJudges, Suite, SuiteFile

#: RewardMATH's results files of the pinned commit, under the data folder
_ORIGIN = "github.com/kimsh0507/RewardMATH_official@cde06ab"
_FETCH = (
    "results/RewardMATH/ and results/Rewardbench/ of github.com/kimsh0507/RewardMATH_official "
    "into DATA_DIR/rewardmath/results/ (gzipped or not)"
)
#: RewardMATH's η grid: the top 1, 2, …, 9 of the ten solutions (η = 1 is RETA 1 by definition)
REWARDMATH_ETAS = tuple(round(k / 10, 1) for k in range(1, 10))
#: E[1/rank] of the correct one of ten solutions in random order: H_10 / 10
_MRR_OF_10 = sum(1 / k for k in range(1, 11)) / 10
_MEASURES = (
    "RETA({eta}), the RETA curve, best-of-k for k = 1…{n} (exact), the one-to-many accuracy "
    "(the correct solution above every incorrect one; with ties; the tie rate), MRR and the "
    "pairwise accuracy of the correct solution against each incorrect one; beside them the "
    "publisher's accuracy and MRR"
)


def _metrics(solutions: int, etas: tuple[float, ...]) -> tuple[dict, ...]:
    sizes = list(range(1, solutions + 1))
    return (
        {"name": "reta", "eta": etas[0]},
        {"name": "reta-curve", "etas": list(etas)},
        {"name": "best-of-n", "n": sizes},
        {"name": "one-to-many"},
        {"name": "pairwise-accuracy"},
    )


def _headlines(eta: float, eta_name: str, solutions: int, mrr: float) -> tuple[Headline, ...]:
    return (
        Headline("reta", reta_key(eta), f"RETA({eta_name})", chance=1.0),
        Headline("one-to-many", "one_to_many", "acc", chance=1 / solutions),
        Headline("one-to-many", "one_to_many_ties", "acc w/ tie"),
        Headline("one-to-many", "tie_rate", "tie rate"),
        Headline("one-to-many", "mrr", "MRR", chance=mrr),
        Headline("pairwise-accuracy", "pairwise_accuracy", "pairwise acc", chance=0.5),
    )


_REWARDMATH = Suite(
    name="rewardmath",
    title="RewardMATH: one correct solution against nine incorrect ones, per MATH problem",
    measures=_MEASURES.format(eta="1/10", n=10),
    size=f"483 MATH problems × 10 solutions ({CORRECT} correct, 9 incorrect)",
    origin=f"{_ORIGIN} (results/RewardMATH/)",
    fetch=_FETCH,
    files=(SuiteFile("rewardmath/results/RewardMATH/", "rewardmath"),),
    benchmark={
        "name": "rewardmath",
        "title": "RewardMATH (483 problems × 10 solutions), correctness oracle",
        "missing_hint": f"fetch {_FETCH}",
        "results": ["results/RewardMATH/*_reward.json*"],
        "layout": "rewardmath",
    },
    benchmark_root="rewardmath",
    metrics=_metrics(10, REWARDMATH_ETAS),
    headlines=_headlines(0.1, "1/10", 10, _MRR_OF_10),
    recorded=RecordedJudges(
        "rewardmath", "DATA_DIR/rewardmath/results/RewardMATH/MODEL_reward.json[.gz]"
    ),
    texts=SuiteFile("rewardmath/dataset/benchmark/RewardMATH_direct.json", "rewardmath"),
    texts_hub=HubSource("RewardMATH/RewardMATH"),
)

_REWARDBENCH_MATH = Suite(
    name="rewardbench-math",
    title="RewardBench's math-prm subset, as RewardMATH's authors scored it: one correct "
    "solution against one incorrect",
    measures=_MEASURES.format(eta="1/2", n=2),
    size="447 problems × 2 solutions (RewardBench's chosen and rejected)",
    origin=f"{_ORIGIN} (results/Rewardbench/)",
    fetch=_FETCH,
    files=(SuiteFile("rewardmath/results/Rewardbench/", "rewardmath"),),
    benchmark={
        "name": "rewardmath",
        "title": "RewardBench math-prm (447 problems × 2 solutions), correctness oracle",
        "missing_hint": f"fetch {_FETCH}",
        "results": ["results/Rewardbench/rewardbench_*.json*"],
        "layout": "rewardbench",
    },
    benchmark_root="rewardmath",
    metrics=_metrics(2, (0.5,)),
    headlines=_headlines(0.5, "1/2", 2, 0.75),
    recorded=RecordedJudges(
        "rewardmath", "DATA_DIR/rewardmath/results/Rewardbench/rewardbench_MODEL.json[.gz]"
    ),
)

#: in the order ``rmaudit audit`` runs and lists them
MATH_SUITES = (_REWARDMATH, _REWARDBENCH_MATH)
