"""Coverage of every interval rmaudit reports, in simulation with known truth.

For each metric that prints an interval — RETA and best-of-n (± stderr and bootstrap CI),
within-prompt pairwise accuracy, the NDR curve, preference-pair accuracy, the reliability
diagram's per-bin accuracy, and every regret-correlation cell — draw ``--datasets``
independent data sets from a world whose true value is known, compute the metric exactly as
rmaudit does, and count how often the interval holds the truth.  Two sizes each: a small
one and the size of the recipe that reports the metric.  Writes a Markdown table.

    python benchmarks/coverage.py [--datasets 300] [--jobs 1] [--out coverage.md]
        [--part means|reta-prompts|rm-bench|pairs|regret|all]

"± stderr" means value ± 1.96·stderr.  Truths:

* RETA(η): two truths.  "finite-N" is the expectation of the estimator at this pool size N
  (what RETA at this N measures: Eq. 5-6 averaged over subsets of size n ∈ [3N^⅔, 5N^⅔]),
  from 400,000 simulated responses; "limit" is Theorem 1's large-N value E[J | Y ≥ Θ(η)]/E[J].
  The interval targets the finite-N quantity.  ``--part reta-prompts`` measures both against
  the number of prompts (10 to 1,600 at N = 64): the gap to the limit is fixed while the
  standard error shrinks, so the coverage of the limit falls as prompts grow.
* best-of-n, pairwise accuracy, NDR: closed forms of the bivariate normal world (J ~ N(5, 1),
  Y = J + N(0, 1), correlation 1/√2).
* RM-Bench easy / normal / hard / average (± across records of 3 × 3 pairs): each record's
  pairs share an N(0, 1) effect on the logit of a correct pair; the truth is the closed form.
* pair accuracy: a Bernoulli(p) per pair; reliability diagram: the exact P(correct | bin) of
  a normal logit margin.
* regret correlation: each cell's value on 4,000 prompts of the same world (the proxies'
  population error metrics and NDRs, correlated across proxies).
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from scipy import integrate
from scipy.stats import norm

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run from a checkout

from _smoke import parse_args

from rmaudit.metrics import (
    accuracy,
    best_of_n,
    ece,
    ndr_curve,
    pairwise_accuracy,
    reta,
    style_accuracy_matrix,
    style_difficulty,
    style_difficulty_stderr,
)
from rmaudit.metrics.regret import ERROR_METRICS, regret_correlation
from rmaudit.metrics.regret._study_inputs import check_study_pools, split_pools
from rmaudit.metrics.regret.gold_proxy import correlation_rows, pair_values

TARGET = (0.92, 0.98)
MEAN, RHO = 5.0, 1.0 / np.sqrt(2.0)  # the means world: J ~ N(5, 1), Y = J + N(0, 1)


def covers(low, high, truth) -> bool:
    return bool(low - 1e-12 <= truth <= high + 1e-12)


# ---------------------------------------------------------------------------------------------
# Per-prompt means: RETA, best-of-n, pairwise accuracy, NDR


def expected_max(n: int) -> float:
    """E[max of n standard normals]."""
    value, _ = integrate.quad(lambda x: x * n * norm.pdf(x) * norm.cdf(x) ** (n - 1), -12, 12)
    return value


def reta_limit(eta: float) -> float:
    """Theorem 1: E[J | Y ≥ Θ(η)] / E[J] in the means world."""
    return 1.0 + RHO * norm.pdf(norm.ppf(1.0 - eta)) / (eta * MEAN)


def draw_means(rng, prompts, responses):
    oracle = MEAN + rng.normal(size=(prompts, responses))
    return oracle, oracle + rng.normal(size=oracle.shape)


MEAN_METRICS = {
    "RETA(1/4)": lambda j, y, s: reta(list(j), list(y), 0.25, seed=s),
    "RETA(1/16)": lambda j, y, s: reta(list(j), list(y), 1 / 16, seed=s),
    "BoN@4": lambda j, y, s: best_of_n(list(j), list(y), 4, seed=s),
    "BoN@16": lambda j, y, s: best_of_n(list(j), list(y), 16, seed=s),
    "pairwise accuracy": lambda j, y, s: pairwise_accuracy(list(j), list(y), seed=s),
    "NDR@4": lambda j, y, s: ndr_curve(list(j), list(y), [4], seed=s).point(0),
}


def mean_truths(responses: int) -> dict[str, dict[str, float]]:
    rng = np.random.default_rng(99)
    oracle, scores = draw_means(rng, 400_000 // responses, responses)
    finite = {
        eta: reta(list(oracle), list(scores), eta, bootstrap=2).value for eta in (0.25, 1 / 16)
    }
    return {
        "RETA(1/4)": {"finite-N": finite[0.25], "limit": reta_limit(0.25)},
        "RETA(1/16)": {"finite-N": finite[1 / 16], "limit": reta_limit(1 / 16)},
        "BoN@4": {"exact": MEAN + RHO * expected_max(4)},
        "BoN@16": {"exact": MEAN + RHO * expected_max(16)},
        "pairwise accuracy": {"exact": 0.5 + np.arcsin(RHO) / np.pi},
        "NDR@4": {"exact": RHO},
    }


def means_dataset(args) -> dict[str, tuple[float, float, float, float]]:
    prompts, responses, index = args
    oracle, scores = draw_means(np.random.default_rng([11, index]), prompts, responses)
    out = {}
    for name, metric in MEAN_METRICS.items():
        result = metric(oracle, scores, index)
        out[name] = (result.value, result.stderr, result.ci_low, result.ci_high)
    return out


def means_rows(sizes, datasets, jobs):
    rows = []
    for prompts, responses, size_label in sizes:
        truths = mean_truths(responses)
        results = run_all(means_dataset, [(prompts, responses, d) for d in range(datasets)], jobs)
        for name in MEAN_METRICS:
            values = np.array([r[name] for r in results])
            for truth_label, truth in truths[name].items():
                for interval, low, high in (
                    (
                        "± 1.96·stderr",
                        values[:, 0] - 1.96 * values[:, 1],
                        values[:, 0] + 1.96 * values[:, 1],
                    ),
                    ("bootstrap CI", values[:, 2], values[:, 3]),
                ):
                    rows.append(
                        row(
                            name,
                            interval,
                            f"{truth_label} {truth:.4f}",
                            size_label,
                            values[:, 0],
                            low,
                            high,
                            truth,
                        )
                    )
    return rows


#: RETA's coverage against the number of prompts, at N = 64 responses per prompt: the ± keeps
#: covering the finite-N quantity, while the fixed gap to Theorem 1's limit grows against a
#: standard error that shrinks as 1/√prompts
RETA_PROMPTS = (10, 20, 50, 100, 400, 1600)
RETA_ETAS = {"RETA(1/16)": 1 / 16, "RETA(1/4)": 0.25}


def reta_prompts_dataset(args) -> dict[str, tuple[float, float, float, float]]:
    prompts, responses, index = args
    oracle, scores = draw_means(np.random.default_rng([17, prompts, index]), prompts, responses)
    out = {}
    for name, eta in RETA_ETAS.items():
        result = reta(list(oracle), list(scores), eta, seed=index)
        out[name] = (result.value, result.stderr, result.ci_low, result.ci_high)
    return out


def reta_prompts_rows(responses, sizes, datasets, jobs, truth_responses=4_000_000):
    # the finite-N truth from 4,000,000 responses: its own error is far below the smallest ±
    oracle, scores = draw_means(np.random.default_rng(98), truth_responses // responses, responses)
    truths = {
        name: {
            "finite-N": reta(list(oracle), list(scores), eta, bootstrap=2).value,
            "limit": reta_limit(eta),
        }
        for name, eta in RETA_ETAS.items()
    }
    rows = []
    for prompts in sizes:
        args = [(prompts, responses, d) for d in range(datasets)]
        results = run_all(reta_prompts_dataset, args, jobs)
        for name in RETA_ETAS:
            values = np.array([r[name] for r in results])
            for truth_label, truth in truths[name].items():
                for interval, low, high in (
                    (
                        "± 1.96·stderr",
                        values[:, 0] - 1.96 * values[:, 1],
                        values[:, 0] + 1.96 * values[:, 1],
                    ),
                    ("bootstrap CI", values[:, 2], values[:, 3]),
                ):
                    size = f"{prompts:,} prompts × {responses}"
                    rows.append(
                        row(
                            name,
                            interval,
                            f"{truth_label} {truth:.4f}",
                            size,
                            values[:, 0],
                            low,
                            high,
                            truth,
                        )
                    )
    return rows


# ---------------------------------------------------------------------------------------------
# RM-Bench's easy / normal / hard: records of 3 × 3 pairs sharing a prompt

#: each style cell's logit of a correct pair (chosen style i, rejected style j): harder as the
#: rejected response gets more styled; each record adds its own N(0, 1) effect to all 9
RM_BENCH_LOGIT = np.array([[0.0, -1.0, -1.5], [1.0, 0.0, -1.0], [1.5, 1.0, 0.0]])
RM_BENCH_RECORDS = (20, 100, 798)


def rm_bench_dataset(args) -> dict[str, tuple[float, float]]:
    records, index = args
    rng = np.random.default_rng([19, records, index])
    effect = rng.normal(size=(records, 1, 1))
    correct = rng.random((records, 3, 3)) < norm.cdf(RM_BENCH_LOGIT + effect)
    chosen_style, rejected_style = np.divmod(np.tile(np.arange(9), records), 3)
    credit = correct.reshape(-1).astype(float)
    matrix = style_accuracy_matrix(credit, np.zeros_like(credit), chosen_style, rejected_style)
    levels = style_difficulty(matrix)
    record = np.repeat(np.arange(records), 9)
    stderr = style_difficulty_stderr(credit, chosen_style, rejected_style, record)
    found = {name: (getattr(levels, name), stderr[name]) for name in stderr}
    # the plain accuracy over all 9·records pairs: as if independent, and clustered by record
    for name, clusters in (("pairs as independent", None), ("clustered by prompt", record)):
        result = accuracy(credit, np.full(credit.size, 0.5), clusters=clusters)
        found[name] = (result.value, result.stderr, result.ci_low, result.ci_high)
    return found


def rm_bench_rows(sizes, datasets, jobs):
    # a record's effect u ~ N(0, 1): P(correct) = E Φ(a + u) = Φ(a / √2) per cell
    cells = norm.cdf(RM_BENCH_LOGIT / np.sqrt(2.0))
    lower = np.tril(np.ones((3, 3), bool), k=-1)
    truths = {
        "easy": cells[lower].mean(),
        "normal": np.diag(cells).mean(),
        "hard": cells[lower.T].mean(),
        "average": cells.mean(),
    }
    rows = []
    for records in sizes:
        results = run_all(rm_bench_dataset, [(records, d) for d in range(datasets)], jobs)
        size = f"{records} records × 9 pairs"
        for name in ("pairs as independent", "clustered by prompt"):
            values = np.array([r[name] for r in results])
            rows += accuracy_rows(f"pair accuracy, {name}", size, values, truths["average"])
        for name, truth in truths.items():
            values = np.array([r[name] for r in results])
            low = values[:, 0] - 1.96 * values[:, 1]
            high = values[:, 0] + 1.96 * values[:, 1]
            label = f"RM-Bench {name}"
            rows.append(
                row(
                    label,
                    "± 1.96·stderr",
                    f"exact {truth:.4f}",
                    size,
                    values[:, 0],
                    low,
                    high,
                    truth,
                )
            )
    return rows


# ---------------------------------------------------------------------------------------------
# Preference pairs: accuracy, reliability diagram


def accuracy_rows(name: str, size: str, values: np.ndarray, truth: float) -> list:
    """The rows of an accuracy's ± and Wilson CI; ``values``: (value, stderr, low, high) rows."""
    return [
        row(name, interval, f"exact {truth:.4g}", size, values[:, 0], low, high, truth)
        for interval, low, high in (
            (
                "± 1.96·stderr",
                values[:, 0] - 1.96 * values[:, 1],
                values[:, 0] + 1.96 * values[:, 1],
            ),
            ("Wilson CI", values[:, 2], values[:, 3]),
        )
    ]


def pair_dataset(args):
    pairs, p, index = args
    rng = np.random.default_rng([12, index])
    right = rng.random(pairs) < p
    chosen = np.where(right, 1.0, 0.0) + 0.01 * rng.random(pairs)
    result = accuracy(chosen, 1.0 - np.where(right, 1.0, 0.0) + 0.01 * rng.random(pairs))
    return result.value, result.stderr, result.ci_low, result.ci_high


#: The reliability-diagram world: the RM's logit margin chosen − rejected is N(0.8, 1.5²).
MARGIN_MEAN, MARGIN_SD, BINS = 0.8, 1.5, 10


def bin_truths() -> np.ndarray:
    """P(margin > 0 | confidence σ(|margin|) in bin m), bins of equal confidence width."""
    edges = np.linspace(0.0, 1.0, BINS + 1)
    margin_edges = np.log(np.clip(edges, 0.5, 1 - 1e-12) / (1 - np.clip(edges, 0.5, 1 - 1e-12)))
    cdf = lambda x: norm.cdf((x - MARGIN_MEAN) / MARGIN_SD)  # noqa: E731
    right = cdf(margin_edges[1:]) - cdf(margin_edges[:-1])
    wrong = cdf(-margin_edges[:-1]) - cdf(-margin_edges[1:])
    with np.errstate(invalid="ignore"):
        return right / (right + wrong)


def reliability_dataset(args):
    """Per bin: (count, accuracy, low, high) of the calibration metric's diagram."""
    pairs, index = args
    margin = np.random.default_rng([13, index]).normal(MARGIN_MEAN, MARGIN_SD, pairs)
    result = ece(margin, np.zeros(pairs), n_bins=BINS)
    low, high = result.accuracy_interval()
    return result.count, result.accuracy, low, high


#: pairs of one prompt share a N(0, 1) part of their margin (the rest N(0, 1.5² − 1)), so the
#: margins are N(0.8, 1.5²) as above, and the bins' truths the same, but not independent
SHARED_SD, PAIRS_PER_PROMPT = 1.0, 9


def clustered_reliability_dataset(args):
    """The diagram's bins over prompts of 9 pairs: as if independent, and clustered by prompt."""
    pairs, index = args
    rng = np.random.default_rng([15, index])
    prompts = np.arange(pairs) // PAIRS_PER_PROMPT
    shared = rng.normal(0.0, SHARED_SD, prompts[-1] + 1)[prompts]
    own = rng.normal(0.0, np.sqrt(MARGIN_SD**2 - SHARED_SD**2), pairs)
    margin = MARGIN_MEAN + shared + own
    found = {}
    for name, clusters in (("as if independent", None), ("clustered by prompt", prompts)):
        result = ece(margin, np.zeros(pairs), n_bins=BINS, clusters=clusters)
        found[name] = (result.count, result.accuracy, *result.accuracy_interval())
    return found


def reliability_row(name: str, size: str, results: list, datasets: int) -> dict:
    """Coverage of the bins' Wilson intervals of the truth P(correct | bin), over all filled
    bins, and in the worst bin that a tenth of the data sets fill."""
    hits, total, worst = 0, 0, 1.0
    for m, truth in enumerate(bin_truths()):
        held = [covers(low[m], high[m], truth) for count, _, low, high in results if count[m] > 0]
        if len(held) >= datasets // 10:
            worst = min(worst, float(np.mean(held)))
        hits, total = hits + sum(held), total + len(held)
    return {
        "metric": name,
        "interval": "Wilson 95%",
        "truth": "exact P(correct | bin)",
        "size": size,
        "coverage": hits / total,
        "width": float("nan"),
        "bias": f"worst filled bin {worst:.3f}",
    }


def pairs_rows(sizes, datasets, jobs):
    rows = []
    for pairs, size_label in sizes:
        for p in (0.75, 0.95):
            values = np.array(run_all(pair_dataset, [(pairs, p, d) for d in range(datasets)], jobs))
            rows += accuracy_rows(f"pair accuracy (p = {p})", size_label, values, p)
        results = run_all(reliability_dataset, [(pairs, d) for d in range(datasets)], jobs)
        rows.append(
            reliability_row("reliability diagram, per-bin accuracy", size_label, results, datasets)
        )
        clustered = run_all(
            clustered_reliability_dataset, [(pairs, d) for d in range(datasets)], jobs
        )
        for name in ("as if independent", "clustered by prompt"):
            rows.append(
                reliability_row(
                    f"reliability diagram, 9 pairs a prompt, {name}",
                    size_label,
                    [r[name] for r in clustered],
                    datasets,
                )
            )
    return rows


# ---------------------------------------------------------------------------------------------
# Regret correlation


def regret_family(rng, prompts, responses):
    """The numpy twin of recipes/regret.toml: an oracle J, a gold RM J + 0.5 z, proxies of it
    with noise σ = 0.25 … 8, one with a lottery loophole, one with 20 % flipped responses."""
    oracle = rng.normal(size=(prompts, responses))
    gold = oracle + 0.5 * rng.normal(size=oracle.shape)
    pools = {"[oracle]": oracle, "gold": gold}
    for sigma in (0.25, 0.5, 1, 2, 4, 8):
        pools[f"σ={sigma}"] = gold + sigma * rng.normal(size=oracle.shape)
    pools["lottery"] = (
        gold + 0.5 * rng.normal(size=oracle.shape) + 4.0 * (rng.random(oracle.shape) < 0.1)
    )
    flipped = np.where(rng.random(oracle.shape) < 0.2, -gold, gold)
    pools["flipped"] = flipped + 0.5 * rng.normal(size=oracle.shape)
    return {label: list(values) for label, values in pools.items()}


def regret_inputs(pools, mode):
    if mode == "oracle":
        return pools, ["[oracle]"]
    return {k: v for k, v in pools.items() if k != "[oracle]"}, None


def regret_truths(responses, mode, design, prompts):
    pools, golds = regret_inputs(regret_family(np.random.default_rng(98), prompts, responses), mode)
    checked, gold_labels = check_study_pools(pools, golds)
    split = split_pools(checked, design)
    n = min(pool.size for pool in next(iter(split.regret.values())))
    error, regret = pair_values(
        split, gold_labels, tuple(ERROR_METRICS), n, np.ones((1, prompts)), n_bins=10, seed=0
    )
    cells = correlation_rows(error, regret, tuple(checked), gold_labels)
    return {
        cell: dict(zip(gold_labels, values[0].tolist(), strict=True))
        for cell, values in cells.items()
    }


def regret_dataset(args):
    prompts, responses, mode, design, index = args
    pools, golds = regret_inputs(
        regret_family(np.random.default_rng([14, index]), prompts, responses), mode
    )
    study = regret_correlation(pools, golds=golds, design=design, bootstrap=200, seed=index)
    return {
        cell: (e.value, e.ci_low, e.ci_high, study.averaged)
        for cell, e in study.correlation.items()
    }


def regret_rows(sizes, datasets, jobs, truth_prompts, design="held-out-responses"):
    rows = []
    for prompts, responses, size_label in sizes:
        for mode in ("oracle", "each"):
            truths = regret_truths(responses, mode, design, truth_prompts)
            results = run_all(
                regret_dataset,
                [(prompts, responses, mode, design, d) for d in range(datasets)],
                jobs,
            )
            for cell, per_gold in truths.items():
                values = np.array([r[cell][:3] for r in results])
                # the truth of each data set's cell: the mean over the golds it averaged
                truth = np.array([np.mean([per_gold[g] for g in r[cell][3]]) for r in results])
                statistic, metric = cell
                rows.append(
                    row(
                        f"{'N×N' if mode == 'each' else 'oracle gold'}: "
                        f"{ERROR_METRICS[metric]} · {statistic}",
                        "bias-corrected CI",
                        f"{truth.mean():.3f}",
                        size_label,
                        values[:, 0],
                        values[:, 1],
                        values[:, 2],
                        truth,
                    )
                )
    return rows


# ---------------------------------------------------------------------------------------------


def row(metric, interval, truth_label, size, values, low, high, truth):
    truth = np.broadcast_to(truth, values.shape)
    held = (low - 1e-12 <= truth) & (truth <= high + 1e-12)
    return {
        "metric": metric,
        "interval": interval,
        "truth": truth_label,
        "size": size,
        "coverage": float(held.mean()),
        "width": float(np.mean(high - low)),
        "bias": f"{np.mean(values - truth):+.4f}",
    }


def run_all(function, arguments, jobs):
    if jobs <= 1:
        return [function(a) for a in arguments]
    with ProcessPoolExecutor(jobs) as pool:
        return list(pool.map(function, arguments, chunksize=4))


def markdown(rows) -> str:
    lines = [
        "| metric | interval | truth | size | coverage | mean width | mean error |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        flag = "" if TARGET[0] <= r["coverage"] <= TARGET[1] else " ≈"
        lines.append(
            f"| {r['metric']} | {r['interval']} | {r['truth']} | {r['size']} | "
            f"{r['coverage']:.3f}{flag} | {r['width']:.3f} | {r['bias']} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=int, default=300)
    parser.add_argument(
        "--part",
        choices=("means", "reta-prompts", "rm-bench", "pairs", "regret", "all"),
        default="all",
    )
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--small-only", action="store_true", help="only the small size of each")
    parser.add_argument(
        "--regret-truth-prompts",
        type=int,
        default=4000,
        help="prompts of the regret study's truth (its own error far below the smallest CI)",
    )
    args = parse_args(parser, {"datasets": 3, "small_only": True, "regret_truth_prompts": 100})
    sizes = slice(0, 1) if args.small_only else slice(None)
    started = time.time()
    rows = []
    if args.part in ("means", "all"):
        rows += means_rows(
            [(24, 64, "24 prompts × 64"), (100, 256, "100 × 256 (helpful.toml)")][sizes],
            args.datasets,
            args.jobs,
        )
    if args.part in ("reta-prompts", "all"):
        rows += (
            reta_prompts_rows(64, RETA_PROMPTS[:2], args.datasets, args.jobs, 400_000)
            if args.small_only
            else reta_prompts_rows(64, RETA_PROMPTS, args.datasets, args.jobs)
        )
    if args.part in ("rm-bench", "all"):
        rows += rm_bench_rows(
            RM_BENCH_RECORDS[:1] if args.small_only else RM_BENCH_RECORDS, args.datasets, args.jobs
        )
    if args.part in ("pairs", "all"):
        rows += pairs_rows(
            [(28, "28 pairs"), (1293, "1,293 pairs (shift.toml)")][sizes], args.datasets, args.jobs
        )
    if args.part in ("regret", "all"):
        rows += regret_rows(
            [(30, 8, "30 prompts × 8"), (120, 16, "120 × 16 (regret.toml)")][sizes],
            args.datasets,
            args.jobs,
            args.regret_truth_prompts,
        )
    table = markdown(rows)
    footer = (
        f"\n\n{args.datasets} data sets per row; ≈: coverage outside "
        f"[{TARGET[0]}, {TARGET[1]}]; {time.time() - started:.0f} s"
    )
    print(table + footer)
    if args.out:
        args.out.write_text(table + footer + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
