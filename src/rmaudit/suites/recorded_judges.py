"""``rmaudit audit --recorded-judges``: every judge run elsewhere whose published outputs lie
under a suite's data folder, as the suite's models — one recipe table per judge configuration
(docs/judges.md, "Real judges"):

* LLMBar's layout (suites ``llmbar``, ``llmbar-processed``): beside each subset's
  ``dataset.json``, ``evaluators/<LLM>/<strategy>/result.json[.gz]``; each configuration is an
  ``llmbar-judge`` labelled ``<LLM>/<strategy>``, reading its ratings for a ``Rating*``
  strategy.  A configuration recorded on only some of the suite's subsets is audited on
  those, in a run of its own (the suite narrowed to them, named ``SUITE@SUBSET+...``).
* RewardMATH's layout (suites ``rewardmath``, ``rewardbench-math``): the suite's results
  folder, ``<model>_reward.json[.gz]`` (``rewardbench_<model>.json[.gz]``); each file a
  ``rewardmath-scores`` labelled by its model (:mod:`.math_suites`).
* JudgeBench's layout (suite ``judgebench``): ``judgebench/outputs/dataset=judgebench,
  response_model=<M>,judge_name=<N>,judge_model=<J>.jsonl[.gz]`` for the suite's response
  model M; each file a ``judgebench-judge`` — a ``judgebench-rm`` where N is
  ``reward_model`` — labelled ``<J>`` (``<N>/<J>`` where two judges share a model).

``--print-recipe`` prints the tables: the recipe equivalent of the flag.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rmaudit.benchmark.recorded.judgebench import OUTPUTS, REWARD_MODEL, output_name
from rmaudit.benchmark.recorded.llmbar import EVALUATORS, result_file
from rmaudit.errors import BadInput

from . import SUITES, Suite
from .data import Located
from .judge_arguments import JUDGEBENCH_JUDGE, JUDGEBENCH_RM, LLMBAR_JUDGE
from .math_suites import recorded_tables

FLAG = "--recorded-judges"


@dataclass(frozen=True)
class RecordedRun:
    """One run of a suite with recorded judges: the suite (narrowed to the subsets its judges
    were recorded on), its data, the judges' recipe tables, and what to say about it."""

    suite: Suite
    located: Located
    tables: tuple[dict[str, Any], ...]
    note: str | None = None


def recorded_runs(suite: Suite, located: Located) -> list[RecordedRun]:
    """The runs that audit every recorded judge of ``suite`` found with its data; none found
    is ``BadInput``."""
    if suite.recorded is None:
        known = ", ".join(s.name for s in SUITES.values() if s.recorded is not None)
        raise BadInput(
            f"suite {suite.name} has no recorded judges rmaudit reads (those that have: {known})",
            field=FLAG,
        )
    if suite.recorded.layout == "llmbar":
        plans = _llmbar_plans(suite, located)
    elif suite.recorded.layout == "rewardmath":
        tables = recorded_tables(suite, located)
        plans = [RecordedRun(suite, located, tables)] if tables else []
    else:
        plans = _judgebench_plans(suite, located)
    if not plans:
        raise BadInput(
            f"no recorded judges for suite {suite.name} under {located.root}: expected "
            f"{suite.recorded.where}",
            field=FLAG,
        )
    return plans


def _llmbar_plans(suite: Suite, located: Located) -> list[RecordedRun]:
    """One plan for the configurations recorded on every subset, one per narrower set."""
    found: dict[str, dict[int, Path]] = defaultdict(dict)
    for index, path in enumerate(located.paths):
        evaluators = path.parent / EVALUATORS
        for folder in _folders(evaluators):
            for strategy in _folders(folder):
                result = result_file(strategy)
                if result is not None:
                    found[f"{folder.name}/{strategy.name}"][index] = result
    by_cover: dict[tuple[int, ...], list[str]] = defaultdict(list)
    for label, results in found.items():
        by_cover[tuple(sorted(results))].append(label)
    everything = tuple(range(len(located.paths)))
    plans = []
    for cover in sorted(by_cover, key=lambda c: (c != everything, c)):
        labels = by_cover[cover]
        tables = tuple(
            {
                "label": label,
                "name": LLMBAR_JUDGE,
                "results": [str(found[label][i]) for i in cover],
                **({"from_ratings": True} if label.split("/")[-1].startswith("Rating") else {}),
            }
            for label in labels
        )
        if cover == everything:
            plans.append(RecordedRun(suite, located, tables))
        else:
            plans.append(_narrowed(suite, located, cover, tables))
    return plans


def _narrowed(
    suite: Suite, located: Located, cover: tuple[int, ...], tables: tuple[dict[str, Any], ...]
) -> RecordedRun:
    """The suite on the subsets ``cover`` only, for the judges recorded on those alone."""
    subsets = [str(suite.files[i].options.get("subset", i)) for i in cover]
    name = f"{suite.name}@{'+'.join(subsets)}"
    labels = ", ".join(t["label"] for t in tables)
    narrowed = replace(
        suite,
        name=name,
        title=f"{suite.title} — {', '.join(subsets)} only",
        size=f"the {len(cover)} of {len(suite.files)} subsets {labels} were recorded on",
        files=tuple(suite.files[i] for i in cover),
    )
    return RecordedRun(
        narrowed,
        replace(located, paths=tuple(located.paths[i] for i in cover)),
        tables,
        f"{labels}: recorded on {', '.join(subsets)} only (of suite {suite.name}'s "
        f"{len(suite.files)} subsets): audited on those, as suite {name}",
    )


def _judgebench_plans(suite: Suite, located: Located) -> list[RecordedRun]:
    responses = Path(suite.files[0].mirror).name.split(".jsonl")[0]
    outputs = located.paths[0].parent / OUTPUTS
    files: dict[str, tuple[Path, str, str]] = {}
    for path in sorted(outputs.iterdir()) if outputs.is_dir() else ():
        name = output_name(path)
        if name is None or name.response_model != responses or not path.is_file():
            continue
        stem = path.name.removesuffix(".gz")  # a file both gzipped and not is read once
        files.setdefault(stem, (path, name.judge_name, name.judge_model))
    shared = Counter(model for _, _, model in files.values())
    tables = tuple(
        {
            "label": model if shared[model] == 1 else f"{judge}/{model}",
            "name": JUDGEBENCH_RM if judge == REWARD_MODEL else JUDGEBENCH_JUDGE,
            "path": str(path),
        }
        for path, judge, model in files.values()
    )
    return [RecordedRun(suite, located, tables)] if tables else []


def _folders(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


def suite_runs(
    found: Sequence[tuple[Suite, Located]], *, recorded: bool, named: bool
) -> tuple[list[RecordedRun], list[str]]:
    """Each suite's runs — itself alone, or (``recorded``) with its recorded judges — and a
    line for each suite left out: one not ``named`` by ``--suite`` whose data holds no
    recorded judges (a named one is ``BadInput``, as is finding none at all)."""
    if not recorded:
        return [RecordedRun(suite, located, ()) for suite, located in found], []
    plans, skipped, refused = [], [], []
    for suite, located in found:
        try:
            plans += recorded_runs(suite, located)
        except BadInput as error:
            if named:
                raise
            refused.append(error)
            skipped.append(f"skipped suite {suite.name}: {error.problem}")
    if not plans:
        raise refused[0] if refused else BadInput("no suite with recorded judges", field=FLAG)
    return plans, skipped
