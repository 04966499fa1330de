"""RewardMATH (or RewardBench's math subset) as a labelled benchmark: each problem a prompt,
its solutions the responses, the oracle their correctness (1 for the correct solution, 0 for
the others) — the best-of-n shape RETA was made for (docs/rewardmath.md).

The problems and their solutions come from the recorded results files themselves: every file
must hold the same problems, each with the same solutions, as those that most of the files
hold; a file that does not is ``BadInput`` naming it.  The solutions' texts come from a texts
file in the hub dataset's schema (:func:`~.rewardmath.read_texts`) where one covers every
problem; without texts, a response's text says which solution it stands for, and only scores
recorded elsewhere can be audited on it.  The benchmark's keys hash its problems and
solutions (and its texts), not the files they were read from: a results file of one more
model keys the same benchmark."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rmaudit.components import BenchmarkContent, Source
from rmaudit.components.keys import content_key
from rmaudit.components.options import file_source
from rmaudit.errors import BadInput

from . import shortened
from .rewardmath import (
    CHOSEN,
    CORRECT,
    Layout,
    RecordedScores,
    SolutionTexts,
    read_scores,
    read_texts,
)

#: a response's text when the benchmark's texts were not loaded
NO_TEXT = "[text not loaded: solution {key} of the recorded results]"
#: the meta key under which a response holds its solution's key
SOLUTION = "solution"


@dataclass(frozen=True)
class Problems:
    """A benchmark's problems: each one's text and its solutions' keys, in order."""

    texts: dict[str, str]  # problem key → the problem's text
    solutions: dict[str, tuple[str, ...]]  # problem key → its solutions' keys

    def signature(self) -> str:
        return content_key(sorted((key, list(s)) for key, s in self.solutions.items()))


def correct_key(layout: Layout) -> str:
    """The key of a problem's correct solution."""
    return CHOSEN if layout == "rewardbench" else CORRECT


def file_problems(scores: RecordedScores) -> Problems:
    """A results file's problems; a problem recorded twice must list the same solutions."""
    texts: dict[str, str] = {}
    solutions: dict[str, tuple[str, ...]] = {}
    for record in scores.problems:
        found = record.all_solutions()
        earlier = solutions.setdefault(record.key, found)
        texts.setdefault(record.key, record.problem)
        if earlier != found:
            raise BadInput(
                f"the problem {shortened(record.problem)} is recorded twice, with different "
                "solutions",
                file=record.where,
                field="solution_reference",
            )
    return Problems(texts, solutions)


def suite_problems(files: Sequence[RecordedScores]) -> Problems:
    """The problems most of the files hold (the first file's on a tie); a file holding others
    is ``BadInput``."""
    found = [file_problems(f) for f in files]
    counts = Counter(p.signature() for p in found)
    best = max(counts.values())
    chosen = next(p for p in found if counts[p.signature()] == best)
    for scores, problems in zip(files, found, strict=True):
        if problems.signature() != chosen.signature():
            raise BadInput(
                _not_the_suites(problems, chosen, best, len(files)), file=str(scores.path)
            )
    return chosen


def _not_the_suites(problems: Problems, suite: Problems, holding: int, files: int) -> str:
    """Why a file's problems are not the suite's."""
    extra = [k for k in problems.solutions if k not in suite.solutions]
    lacking = [k for k in suite.solutions if k not in problems.solutions]
    theirs = f"the {len(suite.solutions)} problems {holding} of the {files} results files hold"
    if extra:
        return (
            f"its problems are not the suite's: {len(extra)} of its {len(problems.solutions)} "
            f"are not among {theirs} (first: {shortened(problems.texts[extra[0]])})"
        )
    if lacking:
        return (
            f"its problems are not the suite's: it lacks {len(lacking)} of {theirs} (first: "
            f"{shortened(suite.texts[lacking[0]])})"
        )
    differing = next(k for k, s in problems.solutions.items() if s != suite.solutions[k])
    return (
        f"the solutions of the problem {shortened(problems.texts[differing])} are not those "
        f"that {holding} of the {files} results files list"
    )


def math_benchmark(
    results: Sequence[Path], texts: Sequence[Path], layout: Layout, *, title: str
) -> BenchmarkContent:
    """The benchmark of the results files' problems (or, without results files, of the
    texts'), with the texts of the first texts file: it must hold every problem."""
    if not results and not texts:
        raise BadInput("no results file and no texts: nothing to read the problems from")
    read = read_texts(texts[0], layout) if texts else None
    if results:
        problems = suite_problems([read_scores(path, layout) for path in results])
    else:
        assert read is not None
        problems = Problems({k: k for k in read.problems}, read.problems)
    notes = []
    if read is None:
        notes.append(
            "no texts: each response stands for its solution by name, so only scores recorded "
            "elsewhere (and random) can be audited"
        )
    else:
        _check_covers(read, problems)
    sources = [file_source("prompts and responses", path) for path in results]
    if read is not None:
        sources.insert(0, file_source("prompts and responses", read.path))
    return _content(problems, read, layout, title, sources, notes)


def _check_covers(texts: SolutionTexts, problems: Problems) -> None:
    for key, solutions in problems.solutions.items():
        if texts.problems.get(key) != solutions:
            held = "lacks the problem" if key not in texts.problems else "holds other solutions of"
            raise BadInput(
                f"the texts file {held} {shortened(problems.texts[key])} (a sample?)",
                file=str(texts.path),
            )


def _content(
    problems: Problems,
    texts: SolutionTexts | None,
    layout: Layout,
    title: str,
    sources: list[Source],
    notes: list[str],
) -> BenchmarkContent:
    right = correct_key(layout)
    records = [
        {
            "prompt": {"text": problems.texts[key], "meta": {}},
            "responses": [
                {
                    "text": NO_TEXT.format(key=solution)
                    if texts is None
                    else texts.texts[key, solution],
                    "sample_index": index,
                    "meta": {SOLUTION: solution},
                    "label": {"score": 1.0 if solution == right else 0.0},
                }
                for index, solution in enumerate(solutions)
            ],
        }
        for key, solutions in problems.solutions.items()
    ]
    signature = problems.signature()
    text_digest = None if texts is None else content_key(sorted(texts.texts.items()))
    policy_key = content_key("rewardmath-solutions", layout, signature, text_digest)
    oracle_key = content_key("rewardmath-correctness", layout, signature)
    described = f"correctness: the {right} solution 1, the others 0 (the publisher's names)"
    header: dict[str, Any] = {
        "title": title,
        "policy_key": policy_key,
        "oracle_key": oracle_key,
        "simulated": False,
        "components": {
            policy_key: _component("reference_policy", "rewardmath-solutions", layout, texts),
            oracle_key: _component("oracle", "rewardmath-correctness", layout, None),
        },
    }
    return BenchmarkContent(header, records, tuple(notes), tuple(sources), described)


def _component(kind: str, name: str, layout: Layout, texts: SolutionTexts | None) -> dict:
    options: dict[str, Any] = {"layout": layout}
    if texts is not None:
        options["texts"] = texts.path.name
    return {"kind": kind, "name": name, "version": 1, "options": options, "simulated": False}
