"""Labelling on a budget, on real data: AlpacaEval best-of-16 (reward-bench's bon_eval files),
whose 805 prompts have 11 responses labelled by GPT-4-turbo.  Hide the labels, label 4 of 11
per prompt by each design, and see how often the interval covers the full-label value (all 11
labels) and how much wider it is.

    python benchmarks/budget_alpacaeval.py [--data-dir ../shared/data] [--redraws 300] [--smoke]

RMs: ``length`` (characters, rmaudit's baseline) and ``noisy-oracle``, an RM whose score is the
GPT-4-turbo preference plus Gaussian noise of the preferences' own spread (a good RM, correlated
about 0.7 with the oracle; fixed once, before any draw).  The rm-guided design is guided by
``length``; the cheap judge is ``noisy-oracle``'s score.  Only prompts with 11 labelled responses
are kept.  The prompts are fixed, so the interval (which also covers the spread between prompts)
is conservative for the full-label value of these prompts: coverage above 0.95 is expected.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from _smoke import parse_args

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run from a checkout

from rmaudit.benchmark.layouts import alpacaeval, expand
from rmaudit.metrics import best_of_n, pairwise_accuracy, reta
from rmaudit.metrics.budget import (
    budget_best_of_n,
    budget_pairwise_accuracy,
    budget_reta,
    guide_importance,
    rm_guided_inclusion,
    select,
)

LABELLED = 11
LABELS_PER_PROMPT = 4


def load(data_dir: Path) -> tuple[list[np.ndarray], dict[str, list[np.ndarray]]]:
    root = data_dir / "reward-bench-bon"
    content = alpacaeval(
        expand(root, ["alpaca_eval_n16/tulu-2-dpo-13b.*.json.gz"], "outputs"),
        expand(
            root,
            [
                "alpaca_eval_n16/annotations_ref_GPT35t/"
                "tulu-2-dpo-13b.*.weighted_alpaca_eval_gpt4_turbo.annotations.json.gz"
            ],
            "annotations",
        ),
        title="AlpacaEval best-of-16",
    )
    oracle, length = [], []
    for record in content.records:
        labelled = [r for r in record["responses"] if r["label"]["score"] is not None]
        if len(labelled) != LABELLED:
            continue
        oracle.append(np.array([r["label"]["score"] for r in labelled], float))
        length.append(np.array([len(r["text"]) for r in labelled], float))
    rng = np.random.default_rng(2026)
    spread = np.concatenate(oracle).std()
    noisy = [pool + rng.normal(0, spread, pool.size) for pool in oracle]
    return oracle, {"length": length, "noisy-oracle": noisy}


def made_up() -> tuple[list[np.ndarray], dict[str, list[np.ndarray]]]:
    """For ``--smoke`` (the test suite has no public data): 60 prompts of 11 made-up responses
    with preference-like labels in [0, 1], in the shapes :func:`load` returns."""
    rng = np.random.default_rng(0)
    oracle = [rng.beta(1, 2, LABELLED) for _ in range(60)]
    length = [rng.integers(100, 3000, LABELLED).astype(float) for _ in oracle]
    noisy = [pool + rng.normal(0, 0.3, pool.size) for pool in oracle]
    return oracle, {"length": length, "noisy-oracle": noisy}


def estimates(oracle, scores, inclusion, design, predictions, auxiliary, ordered):
    """RETA(1/4) and BoN@4 on every prompt given (each has two labels or more); pairwise
    accuracy on those whose labels differ (``ordered``), as a run skips the others."""

    def on(pools):
        return None if pools is None else [pools[q] for q in ordered]

    options = {"design": design, "bootstrap": 1}
    known = {"predictions": predictions, "auxiliary": auxiliary}
    known_ordered = {"predictions": on(predictions), "auxiliary": [on(a) for a in auxiliary]}
    return {
        "RETA(1/4)": budget_reta(oracle, scores, inclusion, 0.25, **options, **known),
        "BoN@4": budget_best_of_n(oracle, scores, inclusion, 4, **options, **known),
        "pairwise accuracy": budget_pairwise_accuracy(
            on(oracle), on(scores), on(inclusion), **options, **known_ordered
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--redraws", type=int, default=300)
    args = parse_args(parser, {"redraws": 2})
    oracle, rms = made_up() if args.smoke else load(args.data_dir)
    k = len(oracle)
    full = {}
    for rm, scores in rms.items():
        keep = [q for q in range(k) if np.ptp(oracle[q]) > 0]  # pairwise needs an ordered pair
        full[(rm, "RETA(1/4)")] = reta(oracle, scores, 0.25)
        full[(rm, "BoN@4")] = best_of_n(oracle, scores, 4)
        full[(rm, "pairwise accuracy")] = pairwise_accuracy(
            [oracle[q] for q in keep], [scores[q] for q in keep]
        )
    print(f"{k} prompts with {LABELLED} labelled responses; label {LABELS_PER_PROMPT} of them")
    print()
    print("| design | RM | metric | full-label value | coverage | width / full | mean error |")
    print("|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for design, cheap in (
        ("uniform", False),
        ("uniform", True),
        ("rm-guided", False),
        ("rm-guided", True),
    ):
        found: dict[tuple, list] = {}
        for _ in range(args.redraws):
            draws, inclusion = [], []
            for q in range(k):
                if design == "uniform":
                    pi = np.full(LABELLED, LABELS_PER_PROMPT / LABELLED)
                else:
                    pi = rm_guided_inclusion(
                        guide_importance(rms["length"][q][None]), LABELS_PER_PROMPT
                    )
                mask = select(design, rng.uniform(size=LABELLED), pi)
                draws.append(np.where(mask, oracle[q], np.nan))
                inclusion.append(pi)
            usable = [q for q in range(k) if np.count_nonzero(~np.isnan(draws[q])) >= 2]
            for rm, scores in rms.items():
                labelled = [draws[q] for q in usable]
                ordered = [
                    i for i, pool in enumerate(labelled) if np.ptp(pool[~np.isnan(pool)]) > 0
                ]
                others = [[pools[q] for q in usable] for name, pools in rms.items() if name != rm]
                predictions = [rms["noisy-oracle"][q] for q in usable] if cheap else None
                results = estimates(
                    labelled,
                    [scores[q] for q in usable],
                    [inclusion[q] for q in usable],
                    design,
                    predictions,
                    others,
                    ordered,
                )
                for metric, result in results.items():
                    found.setdefault((rm, metric), []).append((result.value, result.stderr))
        for (rm, metric), values in found.items():
            value, stderr = np.array(values).T
            truth = full[(rm, metric)]
            covered = np.mean(np.abs(value - truth.value) <= 1.959964 * stderr)
            ratio = np.mean(stderr) / truth.stderr
            label = f"{design}{' + cheap judge' if cheap else ''}"
            print(
                f"| {label} | {rm} | {metric} | {truth.value:.4f} ± {truth.stderr:.4f} | "
                f"{covered:.3f} | {ratio:.2f} | {np.mean(value - truth.value):+.4f} |"
            )


if __name__ == "__main__":
    main()
