"""Hand-built folders in the layout of RewardMATH's published results (``rewardmath/results/``
of rmaudit's shared data folder), for the tests of the ``rewardmath`` and ``rewardbench-math``
suites; and RewardMATH's rule written out again from its definition (its ``eval.py``: sort the
scores with their labels, high first, "rej" before "cho" on a tie), to check rmaudit's
against."""

from __future__ import annotations

import gzip
import json
from itertools import combinations
from math import comb
from pathlib import Path

import numpy as np

CORRECT = "human_to_GPT-4"
#: the incorrect solutions' names of a problem, one model's twice (as 77 real problems have)
INCORRECT = (
    "modified_with_GPT-4",
    "gpt-3.5-turbo-0125",
    "google/gemma-7b-it",
    "google/gemma-7b-it",
    "meta-llama/Meta-Llama-3-8B-Instruct",
    "Qwen/Qwen1.5-7B-Chat",
    "microsoft/Phi-3-medium-4k-instruct",
    "claude-3-sonnet-20240229",
    "mistralai/Mixtral-8x7B-Instruct-v0.1",
)
PROBLEMS = 12
AGGREGATIONS = ("min", "max", "prod", "geometric_mean", "mean", "mean_logit", "mean_odd", "last")


def problem(i: int) -> str:
    return f"Problem {i}: what is {i} + {i}?"


def write(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(json.dumps(records).encode()))
    return path


def folder(root: Path) -> Path:
    return root / "rewardmath" / "results" / "RewardMATH"


def classifier(root: Path, name: str, seed: int, *, duplicate: bool = False) -> Path:
    """A classifier's floats; some problems with the correct solution tied with an incorrect."""
    rng = np.random.default_rng(seed)
    records = []
    for i in range(PROBLEMS):
        scores = rng.normal(0, 1, 10).round(3)
        scores[0] += 0.8
        if i % 4 == 1:
            scores[3] = scores[0]  # a tie at the top
        records.append(_record(i, scores.tolist()))
    if duplicate:  # an API judge's file records two problems twice, identically
        records += [records[2], records[5]]
    return write(folder(root) / f"{name}_reward.json.gz", records)


def rating(root: Path, name: str, seed: int) -> Path:
    """A rating judge's integers 1–10: ties everywhere."""
    rng = np.random.default_rng(seed)
    records = []
    for i in range(PROBLEMS):
        ratings = rng.integers(3, 9, 10)
        ratings[0] = min(10, ratings[0] + 2)
        records.append(_record(i, [int(r) for r in ratings]))
    return write(folder(root) / f"{name}_reward.json.gz", records)


def prm(root: Path, name: str, seed: int) -> Path:
    """A PRM's step scores in (0, 1), 1 to 6 steps per solution."""
    rng = np.random.default_rng(seed)
    records = []
    for i in range(PROBLEMS):
        steps = [rng.uniform(0.05, 0.95, rng.integers(1, 7)).round(4).tolist() for _ in range(10)]
        steps[0] = [min(0.99, s + 0.2) for s in steps[0]]
        records.append(_record(i, steps))
    return write(folder(root) / f"{name}_reward.json.gz", records)


def pairwise(root: Path, name: str, seed: int) -> Path:
    """A pairwise judge's verdicts on the correct solution against each incorrect one, an
    unparsed one among them."""
    rng = np.random.default_rng(seed)
    records = []
    for i in range(PROBLEMS):
        shown = [str(s) for s in rng.choice(["A", "B"], 9)]
        verdicts: list[str | None] = [
            s if rng.random() < 0.8 else ("B" if s == "A" else "A") for s in shown
        ]
        if i == 3:
            verdicts[4] = None
        if i == 7:
            verdicts = list(shown)  # all nine won
        records.append(
            {
                "problem": problem(i),
                "solution_reference": list(INCORRECT),
                "score": verdicts,
                "chosen_position": shown,
            }
        )
    return write(folder(root) / f"{name}_pairwise_reward.json.gz", records)


def _record(i: int, score: list) -> dict:
    return {"problem": problem(i), "solution_reference": [CORRECT, *INCORRECT], "score": score}


def correct_and_incorrect(record: dict) -> tuple[float, list[float], bool]:
    """A direct record's scores as the publisher splits them (True: steps to aggregate)."""
    names, scores = record["solution_reference"], record["score"]
    right = names.index(CORRECT)
    return scores[right], [s for j, s in enumerate(scores) if j != right], False


def pairwise_scores(record: dict) -> tuple[float, list[float]]:
    """The publisher's: the correct solution 1 + its wins, an incorrect one 1 if beaten, else
    len + 2 (a None verdict never equals its letter)."""
    won = [v == c for v, c in zip(record["score"], record["chosen_position"], strict=True)]
    return 1 + sum(won), [1 if w else len(won) + 2 for w in won]


def aggregate(steps: list[float], how: str) -> float:
    """RewardMATH's ``_calculate_final_reward``, written again."""
    if how == "min":
        return min(steps)
    if how == "max":
        return max(steps)
    if how in ("prod", "geometric_mean"):
        product = 1.0
        for s in steps:
            product *= s
        return product if how == "prod" else product ** (1 / len(steps))
    if how == "mean":
        return sum(steps) / len(steps)
    p = np.array(steps)
    if how == "mean_logit":
        return float(1 / (1 + np.exp(-np.mean(np.log(p / (1 - p))))))
    if how == "mean_odd":
        return float(np.maximum(0, np.mean(p / (1 - p))))
    return steps[-1]


def publisher(pairs: list[tuple[float, list[float]]]) -> dict[str, float]:
    """Accuracy, accuracy with ties and MRR from (correct, incorrect scores) per record."""
    correct = with_ties = 0
    reciprocal = []
    for chosen, rejected in pairs:
        correct += chosen > max(rejected)
        with_ties += chosen >= max(rejected)
        ordered = sorted(
            [(s, "rej") for s in rejected] + [(chosen, "cho")], key=lambda x: x, reverse=True
        )
        reciprocal.append(1 / (1 + [label for _, label in ordered].index("cho")))
    n = len(pairs)
    return {
        "accuracy": correct / n,
        "accuracy_with_ties": with_ties / n,
        "mrr": sum(reciprocal) / n,
    }


def best_of_k(scores: list[float], k: int) -> float:
    """The chance that the top pick among k of the ten (every subset, ties broken uniformly)
    is the correct one, the first solution."""
    total = 0.0
    for subset in combinations(range(len(scores)), k):
        if 0 not in subset:
            continue
        top = max(scores[j] for j in subset)
        tied = sum(scores[j] == top for j in subset)
        total += (scores[0] == top) / tied
    return total / comb(len(scores), k)


def reta(scores: list[float], eta: float) -> float:
    """RETA(η) at n = N = 10: the correct solution's chance to be in the top m = η·10 (ties in
    random order) over m, divided by the mean correctness 1/10."""
    m = round(eta * len(scores))
    above = sum(s > scores[0] for s in scores[1:])
    tied = sum(s == scores[0] for s in scores[1:])
    chance = min(1.0, max(0.0, (m - above) / (tied + 1)))
    return chance / m * len(scores)


def steps_of(i: int, j: int) -> list[str]:
    """The steps of solution j of problem i: lengths differ from solution to solution."""
    return [f"Step {k} of solution {j}: " + "x" * ((i + 3 * j + k) % 7) for k in range(1 + j % 3)]


def direct_texts(path: Path, problems: range = range(PROBLEMS)) -> Path:
    """The benchmark's texts in the hub dataset's per-solution schema (as the shared sample
    ``dataset/benchmark/RewardMATH_direct.json``): a problem's ten solutions consecutive."""
    rows = []
    for i in problems:
        for j, name in enumerate([CORRECT, *INCORRECT]):
            rows.append(
                {
                    "problem": problem(i),
                    "answer": str(2 * i),
                    "eval_solution": steps_of(i, j),
                    "solution_reference": name,
                    "solution_type": "chosen" if j == 0 else "rejected",
                    "subject": "Algebra",
                    "level": "1",
                    "problem_id": str(i),
                    "id": str(len(rows)),
                }
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def hub_snapshot(cache: Path, commit: str = "0123abcd" * 5) -> Path:
    """The Hugging Face cache's layout of hf.co/datasets/RewardMATH/RewardMATH at main."""
    repo = cache / "datasets--RewardMATH--RewardMATH"
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    return repo / "snapshots" / commit


def rewardbench(root: Path) -> dict[str, Path]:
    """RewardBench math-prm results as the publisher's three shapes hold them: an RM naming
    its solutions human_to_GPT-4 / modified_with_GPT-4, one naming them chosen / rejected,
    and a PRM's per-solution records with the solutions' steps."""
    base = root / "rewardmath" / "results" / "Rewardbench"
    rng = np.random.default_rng(11)
    files = {}
    for name, names in (
        ("ArmoRM", [CORRECT, "modified_with_GPT-4"]),
        ("beaver", ["chosen", "rejected"]),
    ):
        records = []
        for i in range(PROBLEMS):
            scores = rng.normal(0, 1, 2).round(2).tolist()
            if i % 5 == 0:
                scores[1] = scores[0]
            order = [0, 1] if i % 2 else [1, 0]  # the correct solution listed second at times
            records.append(
                {
                    "problem": problem(i),
                    "solution_reference": [names[k] for k in order],
                    "score": [scores[k] for k in order],
                }
            )
        files[name] = write(base / f"rewardbench_{name}.json.gz", records)
    rows = []
    for i in range(PROBLEMS):
        for j, kind in enumerate(("chosen", "rejected")):
            rows.append(
                {
                    "problem": problem(i),
                    "eval_solution": steps_of(i, 4 * j),
                    "subject": "Algebra",
                    "level": "1",
                    "output": {"step_scores": rng.uniform(0.1, 0.9, 1 + j).round(3).tolist()},
                    "problem_id": i,
                    "solution_type": kind,
                }
            )
    files["Math_Shepherd"] = write(base / "rewardbench_Math_Shepherd.json.gz", rows)
    return files
