"""The regret study's inputs: checked pools, the held-out split, and the bootstrap weights."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rmaudit.errors import MetricInputError
from rmaudit.metrics._validation import check_pools
from rmaudit.metrics.regret._resampling import bootstrap_counts
from rmaudit.metrics.regret._rows import ArrayLike, Pools

__all__ = [
    "REGRET_STUDY_DESIGNS",
    "ArrayLike",
    "Split",
    "check_study_pools",
    "replicate_weights",
    "split_pools",
    "usable_prompts",
]

#: Which responses the error metrics and the regret are measured on, with a description.
REGRET_STUDY_DESIGNS: dict[str, str] = {
    "held-out-responses": "error metrics on a random half of each prompt's responses, "
    "regret (NDR) on the other half",
    "held-out-prompts": "error metrics on a random half of the prompts, regret (NDR) on the "
    "other half",
    "shared": "error metrics and regret (NDR) on the same responses (shared pools)",
}


def check_study_pools(
    pools_by_rm: Mapping[str, Sequence[ArrayLike]], golds: Sequence[str] | None
) -> tuple[dict[str, Pools], tuple[str, ...]]:
    """Every RM's pools as float arrays of one shape, and the gold labels."""
    if not isinstance(pools_by_rm, Mapping):
        raise MetricInputError(
            f"expected a mapping of RM label to per-prompt scores, got "
            f"{type(pools_by_rm).__name__}",
            field="scores",
        )
    if len(pools_by_rm) < 3:
        raise MetricInputError(
            f"expected at least 3 reward models (each gold needs >= 2 proxies to correlate "
            f"across), got {len(pools_by_rm)}",
            field="scores",
        )
    labels = list(pools_by_rm)
    first = labels[0]
    checked: dict[str, Pools] = {}
    for label in labels:
        try:
            _, pools = check_pools(pools_by_rm[first], pools_by_rm[label])
        except MetricInputError as error:
            raise MetricInputError(
                f"RM {label!r} and RM {first!r} must score the same pools; {error.problem}",
                field="scores",
                prompt_index=error.prompt_index,
            ) from None
        checked[label] = pools
    gold_labels = tuple(labels) if golds is None else tuple(golds)
    unknown = [g for g in gold_labels if g not in checked]
    if unknown or not gold_labels:
        raise MetricInputError(
            f"expected gold labels among {labels}, got {list(gold_labels)}", field="golds"
        )
    return checked, gold_labels


@dataclass(frozen=True)
class Split:
    """Per RM, the pools the error metrics are measured on and those the regret is measured
    on; ``metric_prompts`` / ``regret_prompts`` index the original prompts they come from."""

    design: str
    metric: dict[str, Pools]
    regret: dict[str, Pools]
    metric_prompts: np.ndarray
    regret_prompts: np.ndarray


#: Keys the pseudo-random halves of the held-out designs.
SPLIT_KEY = b"rmaudit-held-out"


def _content_order(items: list[np.ndarray]) -> np.ndarray:
    """Indices of ``items`` in a pseudo-random order that depends on their contents only:
    each item's key is a keyed hash of its bytes.  The halves therefore do not depend on how
    prompts or responses are listed (a metric treats a prompt's responses as a set), nor on
    the study's ``seed``, and are the same every run."""
    keys = [
        hashlib.blake2b(np.ascontiguousarray(item).tobytes(), digest_size=8, key=SPLIT_KEY).digest()
        for item in items
    ]
    return np.array(sorted(range(len(items)), key=keys.__getitem__), dtype=int)


def split_pools(pools: dict[str, Pools], design: str) -> Split:
    """Split the pools as ``design`` says (:data:`REGRET_STUDY_DESIGNS`): the same halves for
    every RM, drawn pseudo-randomly from the scores themselves (:func:`_content_order`)."""
    labels = list(pools)
    n_prompts = len(pools[labels[0]])
    everything = np.arange(n_prompts)
    if design == "shared":
        return Split(design, pools, pools, everything, everything)
    # per prompt, its responses' scores under every RM: (responses × RMs)
    table = [np.stack([pools[label][q] for label in labels], axis=1) for q in everything]
    if design == "held-out-prompts":
        if n_prompts < 4:
            raise MetricInputError(
                f"expected at least 4 prompts to split into two halves of "
                f"at least 2 (design 'held-out-prompts'), got {n_prompts}",
                field="design",
            )
        # a prompt's key must not depend on how its responses are listed: rows in sorted order
        order = _content_order([scores[np.lexsort(scores.T[::-1])] for scores in table])
        metric_prompts = np.sort(order[: n_prompts // 2])
        regret_prompts = np.sort(order[n_prompts // 2 :])
        return Split(
            design,
            {label: [p[q] for q in metric_prompts] for label, p in pools.items()},
            {label: [p[q] for q in regret_prompts] for label, p in pools.items()},
            metric_prompts,
            regret_prompts,
        )
    sizes = [pool.size for pool in pools[labels[0]]]
    if min(sizes) < 4:
        q = int(np.argmin(sizes))
        raise MetricInputError(
            f"prompt {q}: expected at least 4 responses to split into two halves of at least 2 "
            f"(design 'held-out-responses'; 'shared' needs 2), got {sizes[q]}",
            field="design",
            prompt_index=q,
        )
    halves = []
    for scores in table:
        order = _content_order(list(scores))
        half = scores.shape[0] // 2
        halves.append((np.sort(order[:half]), np.sort(order[half:])))
    metric = {
        label: [pool[h[0]] for pool, h in zip(p, halves, strict=True)] for label, p in pools.items()
    }
    regret = {
        label: [pool[h[1]] for pool, h in zip(p, halves, strict=True)] for label, p in pools.items()
    }
    return Split(design, metric, regret, everything, everything)


def usable_prompts(split: Split, gold: str) -> tuple[np.ndarray, np.ndarray]:
    """Masks over the metric prompts and the regret prompts: where ``gold`` ranks something
    (its scores are not all equal).  Under the designs that measure both on the same prompts
    a prompt is used for both or for neither."""
    metric = np.array([np.ptp(pool) > 0 for pool in split.metric[gold]])
    regret = np.array([np.ptp(pool) > 0 for pool in split.regret[gold]])
    if split.design != "held-out-prompts":
        metric = regret = metric & regret
    if not metric.any() or not regret.any():
        part = {
            "shared": "",
            "held-out-responses": " in either half of a prompt's responses",
            "held-out-prompts": " in one of the two halves of the prompts",
        }[split.design]
        raise MetricInputError(
            f"RM {gold!r} as gold ranks nothing: its scores are all equal on every prompt{part}",
            field="gold",
        )
    return metric, regret


def replicate_weights(split: Split, bootstrap: int, seed: int) -> np.ndarray:
    """(bootstrap × Q) prompt counts of each bootstrap replicate.  Under held-out prompts the
    two halves are independent samples and are redrawn separately (a stratified bootstrap)."""
    n_prompts = int(max(split.metric_prompts.max(), split.regret_prompts.max())) + 1
    if split.design != "held-out-prompts":
        return bootstrap_counts(n_prompts, bootstrap, seed)
    counts = np.zeros((bootstrap, n_prompts))
    for part, prompts in enumerate((split.metric_prompts, split.regret_prompts)):
        counts[:, prompts] = bootstrap_counts(prompts.size, bootstrap, seed + part)
    return counts
