"""The scoring checks' cost against the scoring they precede (issue 32; target: at most 5 % of a
suite's scoring time), per real suite, with a small CPU model.

Per suite found under ``--data-dir`` (the layout of rmaudit's shared data folder): the items
``rmaudit audit`` would score (the suite's default sample; shifted copies included), made
by the suite's own recipe in a fresh SQLite file; the model is bench_gpu.py's ``cpu`` preset
``llama-5m`` (a random-weight 5M-parameter Llama classifier, 4,096 positions) with a
byte-level BPE trained on the suite's texts and a chat template — loaded as ``hf-classifier``
loads any checkpoint, CPU defaults (batches of 8 rows), one thread.  Timed, as the process's
CPU time (so other jobs on a shared machine slow both alike rather than one of them): the
checks on the run's sample (its size from the suite's,
``rmaudit.run.scoring_checks.sample_size``, the longest and shortest included), not counting
the model's loading, and the scoring of every item in calls of 256 (the recipe's batch size),
or of the first ``--max-items`` of a seeded shuffle, extrapolated to every item by their
characters (marked ``≈``).  The run keeps the sample's scores from the checks, so their cost
is the checks' time less what scoring those items costs in the full scoring (its time ×
their share of the characters); the model's one-time warm-up (its first forward passes) is
paid before either is timed.  Also timed: what the RM's report cost before it took its
batch dependence from the checks — the run's first ``batch_dependence_sample`` (16) inputs
outside the sample re-scored alone after the run (as a run with ``--no-scoring-checks`` still
does, by the same code) — so the whole run's extra scoring before (the checks' cost plus
that re-scoring) and after (the checks' cost alone).  Checks, scoring and re-scoring
alternate ``--repeats`` times; the table gives the median and the range of each.

    python benchmarks/bench_scoring_checks.py                   # every suite found, CPU
    python benchmarks/bench_scoring_checks.py --suites llmbar --max-items 0
    python benchmarks/bench_scoring_checks.py --smoke           # synthetic texts, seconds
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "src"))  # run from a checkout
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from _smoke import parse_args  # noqa: E402
from bench_gpu import PRESETS, build_model, pairs_of, synthetic_records, tokenizers_for  # noqa: E402

from rmaudit.components.scoring_checks import CheckSettings  # noqa: E402
from rmaudit.default_plugins.huggingface import HFClassifier  # noqa: E402
from rmaudit.default_plugins.huggingface.checks import batch_invariance_of  # noqa: E402
from rmaudit.recipe.validation import validate_options  # noqa: E402
from rmaudit.run import Runner  # noqa: E402
from rmaudit.run.scoring_checks import draw_sample, sample_size  # noqa: E402
from rmaudit.store import Store  # noqa: E402
from rmaudit.suites import SUITES  # noqa: E402
from rmaudit.suites.build import suite_recipe, suite_table  # noqa: E402
from rmaudit.suites.data import locate  # noqa: E402
from rmaudit.suites.model_arguments import model_tables  # noqa: E402

DATA = ROOT.parent.parent / "shared" / "data"
CALL_ITEMS = 256  # the recipe's batch size: items per score() call on CPU


def suite_items(name: str, data_dir: Path, folder: Path) -> list | None:
    """Every (prompt, response) ``rmaudit audit --suite NAME`` scores, or None without data."""
    suite = SUITES[name]
    located = locate(suite, data_dir, download=False)
    if located is None:
        return None
    tables = model_tables(["length"], {}, None, match="text", columns={})
    recipe = suite_recipe(suite, suite_table(suite, located, tables, sample=suite.sample))
    store = Store.open(folder / f"{name}.db")
    try:
        return Runner(recipe, store).items_to_score()
    finally:
        store.close()


def classifier(items: list, folder: Path, preset: str) -> HFClassifier:
    texts = [t for prompt, response in items[:4000] for t in (prompt.text, response.text)]
    (family, sizes), *_ = [value for value in PRESETS[preset].values()]
    tokenizer = tokenizers_for(texts, sizes["vocab_size"])[family]
    build_model(family, sizes, tokenizer, folder, "cpu", torch.float32, save_weights=True)
    options = {"model": str(folder), "device": "cpu"}
    return HFClassifier(
        validate_options(HFClassifier, options, field="x", file=None, base_dir=None)
    )


@dataclass(frozen=True)
class Repeat:
    """One repeat's CPU seconds: the checks, the scoring (extrapolated to every item), the
    checks' cost (their time less that of the scores the run keeps from them) and the
    report's re-scoring after the run, which the checks' figures now replace."""

    checks_s: float
    scoring_s: float
    extra_s: float
    rescoring_s: float

    @property
    def overhead(self) -> float:
        """The whole run's extra scoring now: the checks' cost."""
        return self.extra_s / self.scoring_s

    @property
    def overhead_before(self) -> float:
        """The whole run's extra scoring before: the checks' cost and the re-scoring."""
        return (self.extra_s + self.rescoring_s) / self.scoring_s


def measure(name: str, items: list, folder: Path, args) -> dict:
    rm = classifier(items, folder / f"{name}-model", args.preset)
    sizes = [len(p.text) + len(r.text) for p, r in items]
    ids = [r.id for _, r in items]
    by_id = dict(zip(ids, items, strict=True))
    sample = draw_sample(ids, sizes, sample_size(len(ids), args.sample), CheckSettings.seed)
    # a model's first forward passes pay a one-time warm-up, which the run's first batches
    # pay with or without the checks: paid here, untimed, before either
    rm.score([by_id[i] for i in sample[1:2]] * 2)
    order = np.random.default_rng(0).permutation(len(items))
    timed = order if not args.max_items else order[: args.max_items]
    scale = sum(sizes) / sum(sizes[i] for i in timed)
    kept = sum(len(by_id[i][0].text) + len(by_id[i][1].text) for i in sample) / sum(sizes)
    # the report's sample before: the first inputs the run scored itself, in the stage's order
    sampled = set(sample)
    first = [item for item in items if item[1].id not in sampled]
    first = first[: rm.options.batch_dependence_sample]
    first_scores = rm.score(first)
    repeats = []
    for _ in range(args.repeats):  # alternating, so a change of load weighs on both
        started = time.process_time()
        checks = rm.scoring_checks([by_id[i] for i in sample])
        checks_s = time.process_time() - started
        assert len(checks.scores) == len(sample)  # kept by the run
        started = time.process_time()
        for start in range(0, len(timed), CALL_ITEMS):
            rm.score([items[i] for i in timed[start : start + CALL_ITEMS]])
        scoring_s = (time.process_time() - started) * scale
        started = time.process_time()
        batch_invariance_of(rm, first, first_scores)
        rescoring_s = time.process_time() - started
        repeats.append(Repeat(checks_s, scoring_s, checks_s - kept * scoring_s, rescoring_s))
    return {
        "suite": name,
        "items": len(items),
        "sample": len(sample),
        "repeats": repeats,
        "extrapolated": len(timed) < len(items),
        "statuses": " ".join(f"{c.name}: {c.status}" for c in checks.checks),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--suites", nargs="*", default=list(SUITES))
    parser.add_argument("--preset", default="cpu", choices=list(PRESETS))
    parser.add_argument(
        "--sample", type=int, default=None, help="items checked (default: from the suite's size)"
    )
    parser.add_argument(
        "--max-items", type=int, default=1000, help="items scored, then extrapolated (0: all)"
    )
    parser.add_argument("--repeats", type=int, default=5, help="checks and scoring, alternating")
    args = parse_args(
        parser, {"suites": [], "preset": "smoke", "sample": 16, "max_items": 0, "repeats": 1}
    )
    torch.set_num_threads(1)  # on a shared machine more threads spin against each other
    print(
        f"CPU seconds, median (range) of {args.repeats} alternating repeats; load average "
        f"{os.getloadavg()[0]:.1f} at the start"
    )
    print(
        "| suite | items scored | scoring | sample | checks | less the kept scores "
        "| overhead | each repeat's overhead | report's re-scoring (before) "
        "| whole-run extra before → after | checks |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if not args.suites:  # --smoke: synthetic texts, no data needed
            print_row(measure("synthetic", pairs_of(synthetic_records(80)), folder, args))
        for name in args.suites:
            items = suite_items(name, args.data_dir, folder)
            if items is None:
                print(f"{name}: no data under {args.data_dir}; skipped", flush=True)
                continue
            print_row(measure(name, items, folder, args))


def _median_range(values: list[float], unit: str, mark: str) -> str:
    low, high = min(values), max(values)
    spread = f" ({low:{unit}}–{high:{unit}})" if len(values) > 1 else ""
    return f"{mark}{statistics.median(values):{unit}}{spread}"


def print_row(r: dict) -> None:
    mark = "≈ " if r["extrapolated"] else ""
    repeats = r["repeats"]
    each = ", ".join(f"{x.overhead:.1%}" for x in repeats)
    print(
        f"| {r['suite']} | {r['items']:,} "
        f"| {_median_range([x.scoring_s for x in repeats], '.1f', mark)} s | {r['sample']} "
        f"| {_median_range([x.checks_s for x in repeats], '.2f', '')} s "
        f"| {_median_range([x.extra_s for x in repeats], '.2f', mark)} s "
        f"| {_median_range([x.overhead for x in repeats], '.1%', mark)} | {each} "
        f"| {_median_range([x.rescoring_s for x in repeats], '.2f', '')} s "
        f"| {_median_range([x.overhead_before for x in repeats], '.1%', mark)} → "
        f"{_median_range([x.overhead for x in repeats], '.1%', mark)} "
        f"| {r['statuses']} |",
        flush=True,
    )


if __name__ == "__main__":
    main()
