"""The test-set design studies of Rethinking RM Evaluation (arXiv 2410.05584, Sec. 4), on a
synthetic normal world, as pure functions.

How should an RM test set be built so that its accuracy best predicts policy regret?  Each study
fixes a *downstream* world (:class:`~rmaudit.metrics.regret.world.RegretWorld`: a gold r* ~ N(0, 1)
per response and K proxies r_k = r* + σ_k z, Regressional Goodhart, Rethinking RM Evaluation (arXiv
2410.05584) Sec. 5, optionally with prompts that differ in difficulty and in how far proxy and gold
disagree, and correlated responses), whose best-of-n NDR on the downstream pools
(:func:`rmaudit.metrics.regret.ndr.ndr`, exact) is the regret to predict — and then draws many small
*test sets* from fresh prompts of the same world.  For each test-set design the proxies' pairwise
accuracy on the test set is correlated with their NDR across proxies (Spearman, as the paper's
figures), once per replicate; a row reports the mean over replicates, its standard error and the
2.5-97.5 % range of the replicates.

* :func:`responses_vs_prompts` — a fixed number of samples (prompt-response pairs) split
  into k responses per prompt × samples/k prompts (Rethinking RM Evaluation, Fig. 6).
* :func:`annotation_budget` — a fixed number of pairwise comparisons by a Bradley-Terry annotator
  with temperature β (Eq. 4) who ranks each prompt's k responses by merge sort; the proxies are
  scored against the annotator's ranking, not the gold (Rethinking RM Evaluation, Fig. 7).
* :func:`rank_bins` — one (chosen, rejected) pair per prompt, drawn from given bins of the
  gold ranking of a larger pool (Rethinking RM Evaluation, Fig. 4).

Everything is seeded; the defaults run in about a second.

>>> result = responses_vs_prompts(samples=32, ks=(2, 8), replicates=20, downstream_prompts=50)
>>> [row.setting["responses per prompt"] for row in result.rows]
[2, 8]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics._validation import check_integer
from rmaudit.metrics.regret._rows import _spearman_rows
from rmaudit.metrics.regret.ndr import ndr
from rmaudit.metrics.regret.world import RegretWorld


@dataclass(frozen=True)
class StudyRow:
    """One test-set design: its settings and the Spearman correlation of test-set accuracy
    with NDR across proxies (mean over replicates, its stderr, and the replicates' 95 % range)."""

    setting: dict[str, float | int]
    spearman: float
    stderr: float
    low: float
    high: float


@dataclass(frozen=True)
class StudyResult:
    kind: str
    title: str
    rows: list[StudyRow]
    ndr: tuple[float, ...]  # each proxy's downstream best-of-n NDR
    notes: dict[str, float | int | str] = field(default_factory=dict)


def _notes(world: RegretWorld, n: int, replicates: int, **more) -> dict[str, float | int | str]:
    notes: dict[str, float | int | str] = {
        "best-of-n": n,
        "proxies": len(world.sigmas),
        "replicates": replicates,
        **more,
    }
    if world.structured:
        notes |= {
            "difficulty": world.difficulty,
            "disagreement": world.disagreement,
            "response correlation": world.response_correlation,
        }
    return notes


def _check_ks(ks: Sequence[int], field: str = "ks") -> list[int]:
    values = [check_integer(k, field, minimum=2) for k in ks]
    if not values:
        raise MetricInputError("expected at least one number of responses per prompt", field=field)
    return values


def downstream_ndr(
    world: RegretWorld | None = None,
    *,
    prompts: int = 200,
    pool: int = 16,
    n: int = 16,
    seed: int = 0,
) -> np.ndarray:
    """Each proxy's best-of-n NDR on a downstream world of ``prompts`` × ``pool`` responses."""
    world = world or RegretWorld()
    prompts = check_integer(prompts, "downstream_prompts", minimum=1)
    gold, proxies = world.draw(
        np.random.default_rng([seed, 1]), prompts, check_integer(pool, "pool", minimum=2)
    )
    return np.array([ndr(list(gold), list(proxy), n, bootstrap=2).value for proxy in proxies])


def _accuracy(reference: np.ndarray, proxies: np.ndarray) -> np.ndarray:
    """Pairwise accuracy of each proxy (…, K, P, k) against ``reference`` (…, P, k): per prompt,
    the fraction of reference-ordered pairs the proxy orders alike, then averaged over prompts."""
    upper = np.triu_indices(reference.shape[-1], k=1)
    ref = np.sign(reference[..., :, None] - reference[..., None, :])[..., upper[0], upper[1]]
    got = np.sign(proxies[..., :, None] - proxies[..., None, :])[..., upper[0], upper[1]]
    ordered = ref != 0
    agree = ((ref[..., None, :, :] * got) > 0) & ordered[..., None, :, :]
    per_prompt = agree.sum(axis=-1) / np.maximum(ordered.sum(axis=-1), 1)[..., None, :]
    return per_prompt.mean(axis=-1)


def _row(setting: dict, accuracy: np.ndarray, regret: np.ndarray) -> StudyRow:
    """Spearman across proxies of accuracy (replicates × K) with NDR (K), over replicates."""
    rho = _spearman_rows(accuracy, np.broadcast_to(regret, accuracy.shape))
    low, high = np.percentile(rho, [2.5, 97.5])
    return StudyRow(
        setting,
        float(rho.mean()),
        float(rho.std(ddof=1) / np.sqrt(rho.size)),
        float(low),
        float(high),
    )


def responses_vs_prompts(
    samples: int = 64,
    ks: Sequence[int] = (2, 4, 8, 16),
    *,
    world: RegretWorld | None = None,
    replicates: int = 200,
    n: int = 16,
    downstream_prompts: int = 200,
    seed: int = 0,
) -> StudyResult:
    """Rethinking RM Evaluation, Fig. 6: at a fixed number of samples, more responses per prompt or
    more prompts?

    Each design has k responses for each of samples // k prompts; accuracy over every pair of
    a prompt's responses.  The seed finds more responses per prompt generally better.
    """
    world = world or RegretWorld()
    samples = check_integer(samples, "samples", minimum=2)
    ks = _check_ks(ks)
    too_big = [k for k in ks if k > samples]
    if too_big:
        raise MetricInputError(
            f"expected responses per prompt <= samples ({samples}), got {too_big[0]}", field="ks"
        )
    replicates = check_integer(replicates, "replicates", minimum=2)
    regret = downstream_ndr(world, prompts=downstream_prompts, n=n, seed=seed)
    rng = np.random.default_rng([seed, 6])
    rows = []
    for k in ks:
        prompts = samples // k
        gold, proxies = world.draw(rng, prompts, k, replicates)
        rows.append(
            _row(
                {"responses per prompt": k, "prompts": prompts, "samples": prompts * k},
                _accuracy(gold, proxies),
                regret,
            )
        )
    return StudyResult(
        "responses",
        f"{samples} samples: responses per prompt vs prompts (Rethinking RM Evaluation, Fig. 6)",
        rows,
        tuple(regret.tolist()),
        _notes(world, n, replicates),
    )


def merge_sort_cost(values: Sequence[float]) -> int:
    """Comparisons a top-down merge sort makes to order ``values`` (the annotation cost)."""
    items = list(values)
    if len(items) < 2:
        return 0
    middle = len(items) // 2
    left, right = sorted(items[:middle]), sorted(items[middle:])
    count = merge_sort_cost(items[:middle]) + merge_sort_cost(items[middle:])
    i = j = 0
    while i < len(left) and j < len(right):
        count += 1
        if left[i] <= right[j]:
            i += 1
        else:
            j += 1
    return count


def annotation_budget(
    budget: int = 256,
    ks: Sequence[int] = (2, 3, 4, 6, 8),
    *,
    beta: float = 0.5,
    world: RegretWorld | None = None,
    replicates: int = 100,
    n: int = 16,
    downstream_prompts: int = 200,
    seed: int = 0,
) -> StudyResult:
    """Rethinking RM Evaluation, Fig. 7: at a fixed annotation budget, more responses per prompt or
    more prompts?

    A Bradley-Terry annotator (P(i ≻ j) = σ((r*_i − r*_j)/β), Eq. 4) ranks each prompt's k
    responses by merge sort; every comparison costs one unit.  Prompts are added while their
    sort fits in ``budget``; the proxies' accuracy is measured against the annotator's
    ranking.  The annotator is the random-utility form of Bradley-Terry (label r* + β·Gumbel,
    whose pairwise comparisons follow Eq. 4 exactly and are mutually consistent, as the
    ``bt-annotator`` oracle).  The seed finds more responses better under best-of-n.

    In the plain normal world the trend is flat (a test set's accuracy estimates the same
    quantity whatever its shape); ``world`` adds the structure that can make the shape matter
    (:class:`~rmaudit.metrics.regret.world.RegretWorld`).
    """
    world = world or RegretWorld()
    budget = check_integer(budget, "budget", minimum=1)
    ks = _check_ks(ks)
    if not np.isfinite(beta) or beta <= 0:
        raise MetricInputError(f"expected a temperature beta > 0, got {beta!r}", field="beta")
    replicates = check_integer(replicates, "replicates", minimum=2)
    regret = downstream_ndr(world, prompts=downstream_prompts, n=n, seed=seed)
    rng = np.random.default_rng([seed, 7])
    rows = []
    for k in ks:
        accuracy = np.empty((replicates, len(world.sigmas)))
        prompts_used, cost_used = [], []
        for r in range(replicates):
            # every prompt costs at least one comparison: `budget` prompts always suffice
            gold, proxies = world.draw(rng, budget, k)
            labels = gold + beta * rng.gumbel(size=gold.shape)
            used, spent = 0, 0
            while used < budget:
                cost = merge_sort_cost(labels[used])
                if spent + cost > budget:
                    break
                spent += cost
                used += 1
            if not used:
                raise MetricInputError(
                    f"a budget of {budget} comparisons cannot rank even one "
                    f"prompt of {k} responses",
                    field="budget",
                )
            accuracy[r] = _accuracy(labels[:used], proxies[:, :used])
            prompts_used.append(used)
            cost_used.append(spent)
        rows.append(
            _row(
                {
                    "responses per prompt": k,
                    "prompts": float(np.mean(prompts_used)),
                    "comparisons": float(np.mean(cost_used)),
                },
                accuracy,
                regret,
            )
        )
    return StudyResult(
        "budget",
        f"{budget} pairwise comparisons by a BT annotator (β = {beta:g}): "
        "responses per prompt vs prompts (Rethinking RM Evaluation, Fig. 7)",
        rows,
        tuple(regret.tolist()),
        _notes(world, n, replicates, beta=beta),
    )


def rank_bins(
    bins: int = 5,
    pool: int = 20,
    prompts: int = 100,
    *,
    world: RegretWorld | None = None,
    replicates: int = 100,
    n: int = 16,
    downstream_prompts: int = 200,
    seed: int = 0,
) -> StudyResult:
    """Rethinking RM Evaluation, Fig. 4: which ranks should the chosen and rejected responses have?

    Each test prompt has ``pool`` responses sorted by gold and cut into ``bins`` equal bins
    (bin 1 = the lowest gold ranks); a design draws, per prompt, the chosen response from bin
    i and the rejected one from bin j ≤ i (two different responses; within one bin the better
    by gold is the chosen).  One row per (chosen bin, rejected bin).  The seed finds chosen
    responses of average rank against low-ranked rejected ones best for best-of-n.
    """
    world = world or RegretWorld()
    bins = check_integer(bins, "bins", minimum=1)
    pool = check_integer(pool, "pool", minimum=2)
    if pool % bins or pool // bins < 2:
        raise MetricInputError(
            f"expected a pool that splits into {bins} bins of at least 2 responses, got {pool}",
            field="pool",
        )
    prompts = check_integer(prompts, "prompts", minimum=1)
    replicates = check_integer(replicates, "replicates", minimum=2)
    regret = downstream_ndr(world, prompts=downstream_prompts, n=n, seed=seed)
    rng = np.random.default_rng([seed, 4])
    size = pool // bins
    gold, proxies = world.draw(rng, prompts, pool, replicates)
    order = np.argsort(gold, axis=-1)  # responses in ascending gold rank
    gold = np.take_along_axis(gold, order, axis=-1)
    proxies = np.take_along_axis(proxies, order[:, None], axis=-1)
    rows = []
    for chosen_bin in range(bins):
        for rejected_bin in range(chosen_bin + 1):
            a = chosen_bin * size + rng.integers(0, size, size=(replicates, prompts))
            b = rejected_bin * size + rng.integers(
                0, size - (chosen_bin == rejected_bin), size=(replicates, prompts)
            )
            if chosen_bin == rejected_bin:  # two different responses of one bin, better first
                b = np.where(b >= a, b + 1, b)
                a, b = np.maximum(a, b), np.minimum(a, b)
            picked = np.stack([b, a], axis=-1)  # (rejected, chosen) in gold order
            pair_gold = np.take_along_axis(gold, picked, axis=-1)
            pair_proxy = np.take_along_axis(proxies, picked[:, None], axis=-1)
            rows.append(
                _row(
                    {"chosen bin": chosen_bin + 1, "rejected bin": rejected_bin + 1},
                    _accuracy(pair_gold, pair_proxy),
                    regret,
                )
            )
    return StudyResult(
        "rank-bins",
        f"one pair per prompt from gold-rank bins of a pool of "
        f"{pool}, {prompts} prompts (Rethinking RM Evaluation, Fig. 4)",
        rows,
        tuple(regret.tolist()),
        _notes(world, n, replicates, bins=bins),
    )
