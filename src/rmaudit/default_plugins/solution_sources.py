"""Built-in solution sources (docs/prm.md): the step-labelled solutions of PRMBench and of
ProcessBench, read as their public files hold them.

``prmbench`` reads the test files of PRMBench (Song et al. 2025, arXiv 2501.03124;
github.com/ssmisya/PRMBench, ``mr_eval/tasks/prmtest_classified/data/``): the PRM is shown
``modified_question`` and ``modified_process`` (as ``mr_eval``'s ``load_data_function``
does), and ``error_steps`` (1-based) mark its erroneous steps; ``classification`` is the
error class.  ``processbench`` reads ProcessBench's splits (Zheng et al. 2024, arXiv
2412.06559; hf.co/datasets/Qwen/ProcessBench): ``problem``, ``steps``, ``label`` (the first
wrong step, 0-based, −1 for none) and ``final_answer_correct``; a file's name is its split.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from rmaudit import hookimpl
from rmaudit.benchmark import solution_rows as rows
from rmaudit.benchmark.tabular import read_rows
from rmaudit.components import (
    ComponentOptions,
    LabelledSolution,
    Solution,
    SolutionSource,
    Source,
)
from rmaudit.components.options import DataFile, file_source
from rmaudit.errors import BadInput

_DATA = Field(
    "", description="where the data came from (a suite's pinned source and version), kept"
)


class SolutionFilesOptions(ComponentOptions):
    files: list[DataFile] = Field(
        min_length=1, description="the data files (JSON Lines or a JSON array, optionally .gz)"
    )
    data: str = _DATA


class _SolutionFiles(SolutionSource[SolutionFilesOptions]):
    """A source that reads its solutions from its files once, in order."""

    Options = SolutionFilesOptions

    def __init__(self, options: SolutionFilesOptions | None = None) -> None:
        super().__init__(options)
        self._loaded: list[LabelledSolution] | None = None

    def load_solutions(self) -> list[LabelledSolution]:
        if self._loaded is None:
            self._loaded = [
                self.solution(path, where, record)
                for path in self.options.files
                for where, record in read_rows(path)
            ]
            if not self._loaded:
                raise BadInput("no solutions in the files", field="files")
        return self._loaded

    def sources(self) -> tuple[Source, ...]:
        """The data files, for the run's provenance."""
        return tuple(file_source("solutions", path) for path in self.options.files)

    def solution(self, path: Path, where: str, record: dict) -> LabelledSolution:
        raise NotImplementedError


class PRMBench(_SolutionFiles):
    """PRMBench's test solutions (ssmisya/PRMBench): each modified solution with its
    erroneous steps marked, by error class (multi_solutions: every step valid)."""

    name = "prmbench"
    labels = ("erroneous_steps", "first_error")

    def solution(self, path: Path, where: str, record: dict) -> LabelledSolution:
        steps = rows.steps(record, "modified_process", where)
        marked = rows.whole_list(record, "error_steps", where, minimum=1)
        # PRMBench's own evaluation reads the labels of the steps there are: a marked step
        # past the last one counts nowhere (43 of its 3,013 solutions mark one)
        erroneous = tuple(sorted({step - 1 for step in marked if step <= len(steps)}))
        subset = rows.text(record, "classification", where)
        return LabelledSolution(
            ref=f"{subset}/{rows.text(record, 'idx', where)}",
            solution=Solution(rows.text(record, "modified_question", where), steps),
            subset=subset,
            erroneous=erroneous,
            first_error=erroneous[0] if erroneous else -1,
            # the problem before its modification: several classes modify one problem
            problem=rows.text(record, "question", where),
            meta={"error_steps": marked, "file": path.name},
        )


class ProcessBench(_SolutionFiles):
    """ProcessBench's solutions (Qwen/ProcessBench), one file per split (gsm8k.json, …):
    each with its first wrong step (−1: none) and whether its final answer is correct."""

    name = "processbench"
    labels = ("first_error", "final_answer")

    def solution(self, path: Path, where: str, record: dict) -> LabelledSolution:
        steps = rows.steps(record, "steps", where)
        label = rows.whole(record, "label", where, minimum=-1)
        if label >= len(steps):
            raise BadInput(
                f"the first wrong step must be one of the {len(steps)} steps (0-based) or -1",
                file=where,
                field="label",
                value=label,
            )
        return LabelledSolution(
            ref=rows.text(record, "id", where),
            solution=Solution(rows.text(record, "problem", where), steps),
            subset=split_name(path),
            erroneous=(label,) if label >= 0 else (),
            first_error=label,
            final_answer_correct=rows.flag(record, "final_answer_correct", where),
            meta={"generator": record.get("generator")} if "generator" in record else {},
        )


def split_name(path: Path) -> str:
    """``gsm8k`` of ``gsm8k.json``, ``gsm8k.jsonl.gz`` and the like."""
    name = path.name.removesuffix(".gz")
    for ending in (".jsonl", ".json"):
        name = name.removesuffix(ending)
    return name


@hookimpl
def register_prompt_sources(register):
    register(PRMBench)
    register(ProcessBench)
