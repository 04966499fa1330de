"""Hand-built data folders in the layouts the recorded judges' publishers released
(LLMBar's evaluators, JudgeBench's outputs), for the tests of ``--recorded-judges``; and the
publishers' rules written out again from their definitions, to check rmaudit's against."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import numpy as np

#: (folder under llmbar/LLMBar, the llmbar suite's subset name)
LLMBAR_SUBSETS = (
    ("Natural", "llmbar-natural"),
    ("Adversarial/Neighbor", "llmbar-adver-neighbor"),
    ("Adversarial/GPTInst", "llmbar-adver-GPTInst"),
    ("Adversarial/GPTOut", "llmbar-adver-GPTOut"),
    ("Adversarial/Manual", "llmbar-adver-manual"),
)
PROCESSED_SUBSETS = (("MT-Bench", "mt-bench"), ("FairEval", "faireval"), ("LLMEval2", "llmeval2"))
PAIRS_PER_SUBSET = 6
JUDGEBENCH_SOURCES = (
    "mmlu-pro-law",
    "mmlu-pro-math",
    "livebench-reasoning",
    "livebench-math",
    "livecodebench",
    "mmlu-pro-physics",
    "livebench-reasoning",
    "livecodebench",
)


def llmbar_dataset(root: Path, folders=LLMBAR_SUBSETS, base: str = "LLMBar") -> dict[str, list]:
    """Each subset's dataset.json under ``root/llmbar/BASE/FOLDER``: its records by folder."""
    found = {}
    for folder, _ in folders:
        records = [
            {
                "input": f"{folder} question {i}?",
                "output_1": f"answer {i} " + "long " * (i % 3),
                "output_2": f"other answer {i} " + "longer " * ((i + 1) % 4),
                "label": 1 + (i + len(folder)) % 2,
            }
            for i in range(PAIRS_PER_SUBSET)
        ]
        path = root / "llmbar" / base / folder / "dataset.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(records), encoding="utf-8")
        found[folder] = records
    return found


def llmbar_winners(records: list[dict], seed: int) -> list[tuple[str | None, str | None]]:
    """Winners in both orders mixing right, wrong, position-biased and unparsed verdicts."""
    kinds = [
        lambda label: (label, label),
        lambda label: ("1", "1"),
        lambda label: (None, label),
        lambda label: (_other(label), _other(label)),
        lambda label: (None, None),
        lambda label: ("2", "1"),
    ]
    return [kinds[(i + seed) % len(kinds)](str(r["label"])) for i, r in enumerate(records)]


def llmbar_ratings(records: list[dict], seed: int) -> list[tuple[str, str]]:
    """Ratings of output_1 and output_2: higher, lower, equal, or not given (empty)."""
    kinds = [("8", "3"), ("2", "7"), ("5", "5"), ("", "6"), ("10", "9"), ("4", "4")]
    return [kinds[(i + seed) % len(kinds)] for i in range(len(records))]


def rated_winners(ratings: tuple[str, str]) -> tuple[str, str]:
    """LLMBar's winners from a rating judge's ratings: 1 in the first order when it rated
    output 1 higher, 2 in the swapped order when output 2 higher (a tie: 2, then 1)."""
    one, two = (float(r) if r else -1.0 for r in ratings)
    return ("1" if one > two else "2"), ("2" if two > one else "1")


def write_evaluator(
    root: Path,
    folder: str,
    judge: str,
    records: list[dict],
    winners: list[tuple[str | None, str | None]],
    ratings: list[tuple[str, str]] | None = None,
    base: str = "LLMBar",
) -> Path:
    """An evaluator's result.json.gz as LLMBar writes it, and its statistics.json.gz computed
    from the definitions (:func:`llmbar_statistics`)."""
    results = []
    for i, (record, (first, second)) in enumerate(zip(records, winners, strict=True)):
        last: dict[str, Any] = {
            "swap = False": {"completion": [f"Output ({first})", "stop"], "winner": first},
            "swap = True": {"completion": [f"Output ({second})", "stop"], "winner": second},
        }
        if ratings is not None:
            last["score_1"] = [ratings[i][0], "stop"]
            last["score_2"] = [ratings[i][1], "stop"]
        results.append({**record, "results": [{"earlier": "entry"}, last]})
    folder_path = root / "llmbar" / base / folder / "evaluators" / judge
    folder_path.mkdir(parents=True, exist_ok=True)
    path = folder_path / "result.json.gz"
    path.write_bytes(gzip.compress(json.dumps(results).encode()))
    statistics = llmbar_statistics([r["label"] for r in records], winners)
    (folder_path / "statistics.json.gz").write_bytes(gzip.compress(json.dumps(statistics).encode()))
    return path


def llmbar_statistics(labels: list[int], winners: list[tuple[str | None, str | None]]) -> dict:
    """statistics.json's figures, as LLMBar prints them: counts and percentages."""
    n = len(labels)
    first = sum(w[0] == str(label) for label, w in zip(labels, winners, strict=True))
    second = sum(w[1] == str(label) for label, w in zip(labels, winners, strict=True))
    equal = sum(w[0] == w[1] for w in winners)
    return {
        "correct_False": f"{first} / {n} = {100 * first / n}%",
        "correct_True": f"{second} / {n} = {100 * second / n}%",
        "correct_average": f"{100 * (first + second) / 2 / n}%",
        "equal": f"{equal} / {n} = {100 * equal / n}%",
    }


def matches_statistics(figures: dict, statistics: dict) -> bool:
    """Whether rmaudit's publisher figures of a subset are a statistics.json's, to its
    printed precision: counts exactly, percentages to every digit printed."""

    def fraction(text: str) -> tuple[int, int, float]:
        found = re.fullmatch(r"(\d+) / (\d+) = ([\d.]+)%", text)
        assert found, text
        return int(found[1]), int(found[2]), float(found[3])

    n = figures["pairs"]
    checks = [
        (
            fraction(statistics["correct_False"]),
            figures["correct_first"],
            figures["accuracy_first"],
        ),
        (
            fraction(statistics["correct_True"]),
            figures["correct_second"],
            figures["accuracy_second"],
        ),
        (fraction(statistics["equal"]), figures["agree"], figures["agreement"]),
    ]
    average = float(statistics["correct_average"].rstrip("%"))
    return all(
        (count, total) == (expected, n) and _printed(percent, 100 * share)
        for (count, total, percent), expected, share in checks
    ) and _printed(average, 100 * figures["accuracy"])


def _printed(printed: float, value: float) -> bool:
    """``value`` agrees with a percentage printed by Python's float repr."""
    return abs(printed - value) <= 1e-9 * max(1.0, abs(value))


def _other(label: str) -> str:
    return "2" if label == "1" else "1"


def judgebench_pairs(root: Path, responses: str = "gpt-4o-2024-05-13") -> list[dict]:
    """A JudgeBench pairs file of a response model's pairs, one or two per category."""
    pairs = [
        {
            "pair_id": f"{responses}-{i}",
            "original_id": str(i),
            "source": source,
            "question": f"{responses} question {i}?",
            "response_model": responses,
            "response_A": f"response A{i} by {responses}",
            "response_B": f"response B{i} by {responses} " + "and more " * (i % 3),
            "label": "A>B" if i % 3 else "B>A",
        }
        for i, source in enumerate(JUDGEBENCH_SOURCES)
    ]
    path = root / "judgebench" / f"{responses}.jsonl.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress("".join(json.dumps(p) + "\n" for p in pairs).encode()))
    return pairs


#: decisions of a judge's two games (as shown), cycling over the pairs: right twice, right and
#: a tie, inconsistent, a tie twice, unparsed, a failed second game, wrong twice
JUDGE_GAMES = [
    ("right", "right"),
    ("right", "A=B"),
    ("A>B", "A>B"),
    ("A=B", "A=B"),
    (None, "right"),
    ("right", "failed"),
    ("wrong", "wrong"),
    ("A=B", "right"),
]


def judgebench_outputs(
    root: Path, pairs: list[dict], judge_name: str, judge_model: str, *, scores: bool = False
) -> Path:
    """An outputs file as run_judge.py writes it: each pair with its two games."""
    records = []
    for i, pair in enumerate(pairs):
        if scores:
            a, b = 1.0 + (i % 3), 2.0 - (i % 2) * 1.5
            games: list[Any] = [_rm_game(a, b), _rm_game(b, a)]
        else:
            kinds = JUDGE_GAMES[(i + len(judge_model)) % len(JUDGE_GAMES)]
            games = [_game(pair["label"], kind, swapped) for swapped, kind in enumerate(kinds)]
        records.append({**pair, "judge_name": judge_name, "judgments": games})
    name = (
        f"dataset=judgebench,response_model={pairs[0]['response_model']},"
        f"judge_name={judge_name},judge_model={judge_model}.jsonl"
    )
    path = root / "judgebench" / "outputs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _game(label: str, kind: str | None, swapped: int) -> dict | None:
    """A game whose decision (as shown) is right or wrong about ``label``, or as written."""
    if kind == "failed":
        return None
    flip = {"A>B": "B>A", "B>A": "A>B"}
    right = flip[label] if swapped else label
    decision = {"right": right, "wrong": flip[right]}.get(kind, kind)  # type: ignore[arg-type]
    return {"judgment": {"response": f"my verdict: [[{decision}]]"}, "decision": decision}


def _rm_game(first: float, second: float) -> dict:
    return {
        "judgment": {"judge_model": "rm", "scores": [first, second]},
        "decision": "A>B" if first > second else "B>A",
    }


def judgebench_rule(label: str, games: list[str | None]) -> bool:
    """JudgeBench's rule written out: +1 for each decision (the second mapped back) naming the
    correct response, −1 for each naming the other; correct when the sum is positive."""
    back = {"A>B": "B>A", "B>A": "A>B", "A=B": "A=B", None: None}
    decisions = [games[0], back.get(games[1], games[1])] if len(games) > 1 else games[:1]
    wrong = back[label]
    return sum(1 if d == label else -1 if d == wrong else 0 for d in decisions) > 0


#: LLMBar's release: 5 models × up to 15 prompting strategies, 65 configurations
FAMILIES = ("Alpha", "Bravo", "Charlie", "Delta", "Echo")
STRATEGIES = tuple(f"Strategy_{i}" for i in range(13))
MANY_PAIRS = 40


def many_judges(root: Path) -> dict[str, float]:
    """LLMBar's five subsets of 40 pairs, and 65 judges from about right to about wrong,
    some of them with pairs left unparsed in both orders; each judge's share of pairs right."""
    rng = np.random.default_rng(7)
    accuracy = {}
    records = {}
    for folder, _ in LLMBAR_SUBSETS:
        records[folder] = [
            {
                "input": f"{folder} question {i}?",
                "output_1": f"answer {i} " + "long " * (i % 3),
                "output_2": f"other answer {i} " + "longer " * ((i + 1) % 4),
                "label": 1 + (i + len(folder)) % 2,
            }
            for i in range(MANY_PAIRS)
        ]
        path = root / "llmbar" / "LLMBar" / folder / "dataset.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(records[folder]), encoding="utf-8")
    judges = [f"{family}/{strategy}" for family in FAMILIES for strategy in STRATEGIES]
    for index, judge in enumerate(judges):
        right = 0.95 - 0.7 * index / (len(judges) - 1)
        unparsed = 0.03 if index % 4 == 0 else 0.0
        for folder, _ in LLMBAR_SUBSETS:
            winners = []
            for record in records[folder]:
                label, other = str(record["label"]), str(3 - record["label"])
                draw = rng.random()
                winner = None if draw < unparsed else label if draw < right else other
                winners.append((winner, winner))
            write_evaluator(root, folder, judge, records[folder], winners)
        accuracy[judge] = right
    return accuracy
