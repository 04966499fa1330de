"""The suites of RewardMATH's recorded models (:mod:`.math_presets`) as recipes
(docs/rewardmath.md): each results file of the suite's folder one model (``--recorded-judges``),
and the benchmark's texts where they are found.

The texts are looked for in the data folder (the suite's ``texts`` mirror path), then in the
Hugging Face cache of the suite's hub dataset (``RewardMATH/RewardMATH``: every JSON, JSON
Lines or Parquet file of the cached snapshot but the pairwise ones; ``hf download
RewardMATH/RewardMATH --repo-type dataset`` puts it there), then — RewardBench's math subset —
in the results files of the per-solution schema, which carry their solutions' steps.  Texts
are used where they hold every problem of the suite's first results file with its solutions
(a sample, as the data folder's, does not); without them the ``length`` baseline is left out
and only recorded scores (and ``random``) can be audited."""

from __future__ import annotations

import gzip
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from rmaudit.benchmark.layouts import expand
from rmaudit.benchmark.recorded.rewardmath import Layout, model_label, read_scores, read_texts
from rmaudit.benchmark.recorded.rewardmath_benchmark import file_problems
from rmaudit.errors import BadInput

from .data import Located
from .model_arguments import LENGTH_BASELINE
from .suite import HubSource, Suite

#: the reward model of one recorded results file
RECORDED_RM = "rewardmath-scores"
#: the models a suite without texts can audit: recorded scores, and random
WITHOUT_TEXTS = (RECORDED_RM, "random")
#: a per-solution results file's field that holds its steps, looked for in its first bytes
_STEPS_FIELD = b'"eval_solution"'


def is_math(suite: Suite) -> bool:
    return suite.recorded is not None and suite.recorded.layout == "rewardmath"


def results_files(suite: Suite, located: Located) -> list[Path]:
    """The suite's results files in its folder (a file both gzipped and not: once)."""
    assert suite.benchmark is not None
    root = located.root / suite.benchmark_root
    try:
        found = expand(root, suite.benchmark["results"], "results")
    except BadInput:  # the folder holds none
        return []
    kept: dict[str, Path] = {}
    for path in found:
        kept.setdefault(path.name.removesuffix(".gz"), path)
    return list(kept.values())


def recorded_tables(suite: Suite, located: Located) -> tuple[dict[str, Any], ...]:
    """One ``rewardmath-scores`` table per results file, labelled by its model."""
    layout = _layout(suite)
    return tuple(
        {"label": model_label(path), "name": RECORDED_RM, "path": str(path), "layout": layout}
        for path in results_files(suite, located)
    )


@dataclass(frozen=True)
class MathBenchmark:
    """A math suite's benchmark table and its models, the texts decided."""

    benchmark: dict[str, Any]
    models: list[dict[str, Any]]


def math_benchmark_table(
    suite: Suite, located: Located, models: list[dict[str, Any]]
) -> MathBenchmark:
    """The benchmark table with the texts found (none: ``length`` left out)."""
    assert suite.benchmark is not None
    texts = find_texts(suite, located)
    table = {**suite.benchmark, "root": str(located.root / suite.benchmark_root)}
    if texts is not None:
        return MathBenchmark({**table, "texts": [str(texts)]}, models)
    return MathBenchmark(table, [m for m in models if m.get("name") != LENGTH_BASELINE])


def without_texts(suite: Suite, located: Located, models: list[dict[str, Any]]) -> str | None:
    """Why ``models`` cannot be audited on ``suite`` here (None: they can): a model reading
    the solutions' texts, where none were found."""
    reading = [
        m["label"]
        for m in models
        if m.get("name") not in WITHOUT_TEXTS and m.get("name") != LENGTH_BASELINE
    ]
    if not reading or find_texts(suite, located) is not None:
        return None
    return (
        f"suite {suite.name}: no texts of its solutions here, so {', '.join(reading)} cannot "
        f"read them; audit recorded scores with --recorded-judges, or put the texts "
        f"{_where_texts(suite)}"
    )


def _where_texts(suite: Suite) -> str:
    places = []
    if suite.texts is not None:
        places.append(f"at DATA_DIR/{suite.texts.mirror}")
    if suite.texts_hub is not None:
        places.append(
            f"in the Hugging Face cache (hf download {suite.texts_hub.repo} --repo-type dataset)"
        )
    return " or ".join(places) or "in the per-solution results files"


def find_texts(suite: Suite, located: Located) -> Path | None:
    """The first texts file found that holds the suite's problems, or None (memoised while
    the files it read are unchanged: the plan asks twice)."""
    results = results_files(suite, located)
    if not results:
        return None
    candidates = _candidates(suite, located, results)
    stamp = tuple(_stamp(p) for p in [results[0], *candidates])
    if stamp not in _FOUND:
        _FOUND[stamp] = _covering(results[0], candidates, _layout(suite))
    return _FOUND[stamp]


#: find_texts's answers, by the stamps of the files it read
_FOUND: dict[tuple[tuple[str, int, int], ...], Path | None] = {}


def _stamp(path: Path) -> tuple[str, int, int]:
    found = path.stat()
    return str(path), found.st_size, found.st_mtime_ns


def _covering(first: Path, candidates: list[Path], layout: Layout) -> Path | None:
    wanted = file_problems(read_scores(first, layout)).solutions
    for candidate in candidates:
        try:
            held = read_texts(candidate, layout).problems
        except BadInput:  # another file of the snapshot (its metadata): not the texts
            continue
        if all(held.get(key) == solutions for key, solutions in wanted.items()):
            return candidate
    return None


def _candidates(suite: Suite, located: Located, results: list[Path]) -> list[Path]:
    found = []
    if suite.texts is not None:
        local = located.root / suite.texts.mirror
        found += [p for p in (local, local.with_name(local.name + ".gz")) if p.is_file()]
    if suite.texts_hub is not None:
        found += cached_hub_files(suite.texts_hub)
    return found + [path for path in results if _holds_steps(path)]


def cached_hub_files(hub: HubSource) -> list[Path]:
    """The data files of a hub dataset's cached snapshot at the revision (none: not cached);
    its pairwise files aside."""
    cache = os.environ.get("HF_HUB_CACHE") or _default_cache()
    folder = Path(cache) / f"datasets--{hub.repo.replace('/', '--')}"
    ref = folder / "refs" / hub.revision
    commit = ref.read_text().strip() if ref.is_file() else hub.revision
    snapshot = folder / "snapshots" / commit
    if not snapshot.is_dir():
        return []
    endings = (".json", ".jsonl", ".parquet")
    return sorted(
        p
        for p in snapshot.rglob("*")
        if p.is_file()
        and p.name.removesuffix(".gz").endswith(endings)
        and "pairwise" not in p.name.lower()
    )


def _default_cache() -> str:
    try:
        from huggingface_hub import constants
    except ImportError:  # the hub client comes with the datasets and hf extras
        return str(Path.home() / ".cache" / "huggingface" / "hub")
    return str(constants.HF_HUB_CACHE)


def _holds_steps(path: Path) -> bool:
    """Whether a results file is of the per-solution schema, with its solutions' steps."""
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as handle:
            return _STEPS_FIELD in handle.read(1 << 14)
    except (OSError, EOFError, zlib.error):  # read again, and named, as a results file
        return False


def _layout(suite: Suite) -> Layout:
    assert suite.benchmark is not None and suite.benchmark["layout"] in get_args(Layout)
    return suite.benchmark["layout"]
