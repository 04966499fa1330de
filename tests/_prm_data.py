"""Small data folders in the layouts of PRMBench's test files and of ProcessBench's hub files
(docs/prm.md), written by the tests that audit process reward models: ``DATA_DIR/prmbench/``
with PRMBench's 17 file names, ``DATA_DIR/processbench/<split>.json`` (JSON arrays, the hub's
schema).  Deterministic; ``hostile`` puts markup, escapes and control characters in the
texts."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

from _hostile import CONTROL, MARKDOWN, MARKUP

from rmaudit.suites import PRMBENCH_CLASSES, PROCESSBENCH_SPLITS

#: markup, an escape sequence and HTML in one string (tests/_hostile.py)
HOSTILE = f"{MARKUP[1]} {MARKUP[2]} {CONTROL} {MARKDOWN}"


def _steps(rng: random.Random, count: int, tag: str, hostile: bool, words: int = 30) -> list[str]:
    vocabulary = ["so", "then", "we", "add", "the", "terms", "and", "divide", "by", "two"]
    steps = [
        f"{k + 1}. {tag} " + " ".join(rng.choice(vocabulary) for _ in range(rng.randint(3, words)))
        for k in range(count)
    ]
    if hostile:
        steps[0] += " " + HOSTILE
    return steps


def write_prmbench(
    root: Path, per_file: int = 4, seed: int = 0, hostile: bool = False, words: int = 30
) -> Path:
    """``root/prmbench/`` with every PRMBench file name, ``per_file`` items each (multi-
    solutions: 2·per_file), several items to a problem, each step of 3 to ``words`` words;
    returns ``root``."""
    rng = random.Random(seed)
    folder = root / "prmbench"
    folder.mkdir(parents=True, exist_ok=True)
    names = [
        (f"prm800k_test_{part}_4o_{name}", name)
        for name in PRMBENCH_CLASSES
        for part in ("p1", "p2")
    ]
    names.append(("prm_test_p12_multi_solutions", "multi_solutions"))
    for stem, classification in names:
        rows = []
        for i in range(per_file * (2 if classification == "multi_solutions" else 1)):
            count = rng.randint(2, 9)
            wrong = (
                []
                if classification == "multi_solutions"
                else sorted({rng.randint(1, count) for _ in range(rng.randint(1, 3))})
            )
            hostile_head = f"{HOSTILE} " if hostile else ""
            problem = f"{hostile_head}problem {i % 3}: what is {i % 3} + {i % 3}?"
            rows.append(
                {
                    "original_question": problem,
                    "modified_question": f"{problem} ({classification})",
                    "original_process": _steps(rng, 2, "original", False),
                    "modified_process": _steps(rng, count, classification, hostile, words),
                    "modified_steps": wrong,
                    "error_steps": wrong,
                    "reason": "made up",
                    "idx": f"prm_test_{stem[-4:]}_{i}",
                    "question": problem,
                    "classification": classification,
                }
            )
        text = "".join(json.dumps(row) + "\n" for row in rows)
        (folder / f"{stem}.jsonl.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
    return root


def write_processbench(root: Path, per_split: int = 12, seed: int = 0, words: int = 30) -> Path:
    """``root/processbench/<split>.json`` for ProcessBench's four splits, each step of 3 to
    ``words`` words; returns ``root``."""
    rng = random.Random(seed)
    folder = root / "processbench"
    folder.mkdir(parents=True, exist_ok=True)
    for split in PROCESSBENCH_SPLITS:
        rows = []
        for i in range(per_split):
            count = rng.randint(2, 8)
            label = rng.choice([-1, -1, *range(count)])
            rows.append(
                {
                    "id": f"{split}-{i}",
                    "generator": "toy",
                    "problem": f"{split} problem {i // 2}",
                    "steps": _steps(rng, count, split, False, words),
                    "final_answer_correct": label == -1 or rng.random() < 0.2,
                    "label": label,
                }
            )
        (folder / f"{split}.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return root
