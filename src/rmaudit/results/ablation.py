"""The RETA paper's normalizer ablation (RETA paper, arXiv 2504.14838, Sec. 4.3, Fig. 4), from
stored data.

RETA divides each prompt's top-η oracle mean by the prompt's mean oracle score.  Sec. 4.3
asks what that buys: without it, a prompt's RETA tracks how hard the prompt is — how
perplexed the policy is answering it — rather than how well the RM ranks its responses.
The prompt perplexity is the mean, over the prompt's responses, of PPL_θ(a | q), the
perplexity of the response under the policy that wrote it.

:func:`normalizer_ablation` reads a stored run — responses whose meta holds their
perplexity (``hf-causal-lm`` stores it; a ``responses-file`` column named ``perplexity``
works too), oracle labels and RM scores — and computes per prompt RETA(η) with and without
the normalizer, and the correlation of each with prompt perplexity.  ``rmaudit ablation
normalizer DB`` prints it.  No model runs and nothing is written to the DB.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats

from rmaudit.errors import BadInput, MetricInputError
from rmaudit.metrics import reta
from rmaudit.results.browse import top_eta
from rmaudit.results.run_index import resolve_run
from rmaudit.store import Store
from rmaudit.store.records import BenchmarkRow

#: correlation statistics reported, by name
CORRELATIONS = {"spearman": "Spearman ρ", "pearson": "Pearson r"}


def response_perplexity(meta: Mapping[str, Any]) -> float | None:
    """PPL_θ(a | q) of one response from its stored meta, or None when it has none.

    A multi-turn response (``turn_logprobs`` and ``turn_new_tokens``, as ``hf-causal-lm``
    stores them) gives the perplexity of all its answers' tokens together; otherwise
    ``perplexity``, or ``exp(-logprob / new_tokens)``.
    """
    logprobs, tokens = meta.get("turn_logprobs"), meta.get("turn_new_tokens")
    if isinstance(logprobs, list) and isinstance(tokens, list) and logprobs and sum(tokens) > 0:
        return math.exp(-sum(logprobs) / sum(tokens))
    value = meta.get("perplexity")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    logprob, new_tokens = meta.get("logprob"), meta.get("new_tokens")
    if isinstance(logprob, (int, float)) and isinstance(new_tokens, int) and new_tokens > 0:
        return math.exp(-logprob / new_tokens)
    return None


@dataclass(frozen=True)
class Correlation:
    statistic: float
    p_value: float


@dataclass(frozen=True)
class RMAblation:
    """One RM's per-prompt RETA(η) with and without the normalizer, and their correlations
    with prompt perplexity (keys: ``(normalized, statistic)``)."""

    label: str
    rm_key: str
    normalized: np.ndarray
    unnormalized: np.ndarray
    correlations: dict[tuple[bool, str], Correlation]

    def per_prompt(self, normalized: bool) -> np.ndarray:
        return self.normalized if normalized else self.unnormalized


@dataclass(frozen=True)
class NormalizerAblation:
    run_id: str
    eta: float
    prompt_ids: tuple[str, ...]
    perplexity: np.ndarray  # per prompt: mean PPL of its responses
    reward_models: tuple[RMAblation, ...]
    simulated: bool


def correlate(x: npt.ArrayLike, y: npt.ArrayLike) -> dict[str, Correlation]:
    """Spearman and Pearson correlation of x with y (NaN when either is constant)."""
    xs, ys = np.asarray(x, float), np.asarray(y, float)
    if len(xs) < 3 or np.ptp(xs) == 0 or np.ptp(ys) == 0:
        return {name: Correlation(math.nan, math.nan) for name in CORRELATIONS}
    spearman = stats.spearmanr(xs, ys)
    pearson = stats.pearsonr(xs, ys)
    return {
        "spearman": Correlation(float(spearman.statistic), float(spearman.pvalue)),
        "pearson": Correlation(float(pearson.statistic), float(pearson.pvalue)),
    }


def reta_with_and_without_normalizer(
    oracle: Sequence[np.ndarray], scores: Sequence[np.ndarray], eta: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per-prompt RETA(η) (exact expectation, the paper's n range), normalized and raw."""
    raw = reta(oracle, scores, eta, normalize=False, bootstrap=1).per_prompt
    try:
        normalized = reta(oracle, scores, eta, normalize=True, bootstrap=1).per_prompt
    except MetricInputError as error:
        raise BadInput(
            f"normalized RETA needs a positive mean oracle score per prompt: {error}",
            field="oracle",
        ) from None
    return np.asarray(normalized, float), np.asarray(raw, float)


def normalizer_ablation(
    store: Store,
    run_id: str | None = None,
    *,
    eta: float | None = None,
    reward_models: Sequence[str] | None = None,
) -> NormalizerAblation:
    """The Sec. 4.3 ablation for a stored run (the latest when ``run_id`` is None).

    ``eta`` defaults to that of the run's first RETA result (else 0.25); ``reward_models``
    (recipe labels) to all of the run's RMs.
    """
    run_id = resolve_run(store, run_id)
    run = store.read.run(run_id)
    bench = store.items.benchmark(run.benchmark_id) if run.benchmark_id else None
    if bench is None:
        raise BadInput(
            "the run audits no benchmark (a pairs-only run has no prompts to ablate over)",
            file=store.path,
            field="run",
            value=run_id,
        )
    eta = top_eta(store, run_id) if eta is None else eta
    if not 0 < eta < 1:
        raise BadInput("expected 0 < η < 1", field="eta", value=eta)
    _refuse_unlabelled(store, bench, run_id)
    rows = store.items.benchmark_labels(bench)
    if not rows:
        raise BadInput(
            "the run's benchmark has no labelled responses",
            file=store.path,
            field="run",
            value=run_id,
        )
    labelled = _labelled_prompts(store, rows)
    stored = store.read.reward_models(run_id)
    labels = [label for label, _ in stored]
    wanted = list(reward_models) if reward_models else labels
    unknown = [label for label in wanted if label not in labels]
    if unknown:
        raise BadInput(
            f"no such reward model in the run (it has {', '.join(labels)})",
            field="--rm",
            value=unknown[0],
        )
    results = tuple(
        _rm_ablation(store, run_id, label, rm_key, labelled, eta)
        for label, rm_key in stored
        if label in wanted
    )
    return NormalizerAblation(
        run_id,
        float(eta),
        labelled.prompt_ids,
        labelled.perplexity,
        results,
        run.simulated,
    )


def _refuse_unlabelled(store: Store, bench: BenchmarkRow, run_id: str) -> None:
    """BadInput unless the benchmark's design (if any) drew every response: per-prompt RETA
    without its normalizer has no estimator from a labelled subset (docs/budget.md)."""
    if bench.design is None:
        return
    labelled, responses = store.read.label_coverage(bench)
    if labelled < responses:
        raise BadInput(
            f"the normalizer ablation needs every response labelled; the run's label design "
            f"labelled {labelled:,} of {responses:,}",
            file=store.path,
            field="run",
            value=run_id,
        )


@dataclass(frozen=True)
class _LabelledPrompts:
    """The benchmark's prompts as the ablation reads them: each prompt's responses (ids), their
    oracle scores and the prompt's mean perplexity."""

    prompt_ids: tuple[str, ...]
    responses: dict[str, list[str]]
    oracle: list[np.ndarray]
    perplexity: np.ndarray


def _labelled_prompts(store: Store, rows: Sequence[tuple]) -> _LabelledPrompts:
    """The labelled responses grouped by prompt; a response without a perplexity is BadInput."""
    responses: dict[str, list[str]] = {}
    oracle: dict[str, list[float]] = {}
    perplexities: dict[str, list[float]] = {}
    for pid, rid, score, meta in rows:
        ppl = response_perplexity(meta)
        if ppl is None:
            raise BadInput(
                "a response has no stored perplexity under its policy (meta "
                "'perplexity'; hf-causal-lm stores it, a responses file can give it "
                "as a column)",
                file=store.path,
                field="responses",
                value=rid,
            )
        responses.setdefault(pid, []).append(rid)
        oracle.setdefault(pid, []).append(score)
        perplexities.setdefault(pid, []).append(ppl)
    prompt_ids = tuple(responses)
    return _LabelledPrompts(
        prompt_ids,
        responses,
        [np.array(oracle[pid], float) for pid in prompt_ids],
        np.array([np.mean(perplexities[pid]) for pid in prompt_ids]),
    )


def _rm_ablation(
    store: Store, run_id: str, label: str, rm_key: str, labelled: _LabelledPrompts, eta: float
) -> RMAblation:
    """One RM's RETA(η) per prompt with and without the normalizer, correlated with perplexity."""
    scores = store.items.scores(rm_key)
    responses = labelled.responses
    missing = next(
        (rid for pid in labelled.prompt_ids for rid in responses[pid] if rid not in scores), None
    )
    if missing is not None:
        raise BadInput(
            f"{label} has not scored every response (was the run finished?)",
            field="run",
            value=run_id,
        )
    score_arrays = [
        np.array([scores[rid] for rid in responses[pid]], float) for pid in labelled.prompt_ids
    ]
    try:
        normalized, raw = reta_with_and_without_normalizer(labelled.oracle, score_arrays, eta)
    except MetricInputError as error:
        raise BadInput(
            f"cannot compute RETA for {label}: {error}", field="eta", value=eta
        ) from None
    correlations = {
        (flag, name): value
        for flag, per_prompt in ((True, normalized), (False, raw))
        for name, value in correlate(per_prompt, labelled.perplexity).items()
    }
    return RMAblation(label, rm_key, normalized, raw, correlations)
