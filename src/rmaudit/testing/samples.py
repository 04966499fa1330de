"""Small sample inputs for the conformance checks, and for plugin authors' own tests: prompts,
responses, a benchmark as metrics see it, and preference pairs with a shift sweep."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rmaudit.components import (
    JudgedPairs,
    LabelledSolution,
    MetricInputs,
    PairInputs,
    Prompt,
    Response,
    Solution,
    StepInputs,
    Verdict,
)
from rmaudit.components.keys import prompt_id, response_id
from rmaudit.components.vocabulary import SHIFT_TARGETS

__all__ = [
    "sample_benchmark",
    "sample_pairs",
    "sample_prompts",
    "sample_responses",
    "sample_solutions",
    "sample_step_inputs",
    "sample_texts",
]


_SAMPLE_PROMPTS = (
    ("How do I keep basil alive on a windowsill?", {"topic": "gardening"}),
    ("Explain what a hash table is to a new programmer.", {"topic": "programming"}),
    ("What is 17 + 25?", {"topic": "arithmetic"}),
    ("Write a two-line poem about rain.", {"topic": "writing"}),
)
_SAMPLE_ANSWERS = (
    "Sure.",
    "Give it six hours of sun, water when the top soil is dry, and pinch off the flowers.",
    "Great question! I think the answer is probably 42, but you should double-check.",
    "A hash table stores values in buckets chosen by a hash of the key, so lookups take "
    "constant time on average; collisions are resolved by chaining or open addressing. " * 3,
)


def sample_prompts() -> list[Prompt]:
    """A few varied prompts with metadata, for checks that need prompts."""
    return [Prompt(prompt_id(text), text, dict(meta)) for text, meta in _SAMPLE_PROMPTS]


def sample_responses(prompts: Sequence[Prompt]) -> list[Response]:
    """Responses of varied length and style to each prompt (ids as a policy would get)."""
    return [
        Response(response_id("conformance", p.id, i), p.id, i, text)
        for p in prompts
        for i, text in enumerate(_SAMPLE_ANSWERS)
    ]


def sample_texts() -> list[str]:
    """The prompts' and the responses' texts, for components that map text to text."""
    return [text for text, _ in _SAMPLE_PROMPTS] + list(_SAMPLE_ANSWERS)


def sample_benchmark(prompts: int = 6, per_prompt: int = 32, seed: int = 0) -> MetricInputs:
    """A benchmark as metrics see it: oracle scores on a 1-10 scale (positive prompt means,
    which RETA needs) and RM scores that track them with noise; no ties."""
    rng = np.random.default_rng(seed)
    oracle = tuple(rng.uniform(1.0, 10.0, per_prompt) for _ in range(prompts))
    scores = tuple(j + rng.normal(0.0, 2.0, per_prompt) for j in oracle)
    return MetricInputs(tuple(f"prompt-{q}" for q in range(prompts)), oracle, scores)


_SAMPLE_SUBSETS = (
    "alpacaeval-easy",
    "llmbar-natural",
    "refusals-dangerous",
    "math-prm",
    "hep-python",
)


def sample_pairs(
    pairs: int = 90, seed: int = 0, levels: Sequence[float] = (0.0, 0.25, 0.5)
) -> PairInputs:
    """Preference pairs for pair metrics (``scope = "pairs"``): random logits, RewardBench
    subsets, every RM-Bench style combination in ``meta`` (nine pairs to a prompt), and a shift
    sweep over every target in which the logits get noisier as the level grows."""
    rng = np.random.default_rng(seed)
    chosen, rejected = rng.normal(0.5, 1.0, pairs), rng.normal(0.0, 1.0, pairs)
    sweep: dict[str, dict[float, tuple[np.ndarray, np.ndarray]]] = {
        target: {
            float(p): (chosen + p * rng.normal(0, 2, pairs), rejected + p * rng.normal(0, 2, pairs))
            for p in levels
        }
        for target in SHIFT_TARGETS
    }
    return PairInputs(
        tuple(f"pair-{i}" for i in range(pairs)),
        chosen,
        rejected,
        tuple(_SAMPLE_SUBSETS[i % len(_SAMPLE_SUBSETS)] for i in range(pairs)),
        tuple({"chosen_style": i % 3, "rejected_style": i // 3 % 3} for i in range(pairs)),
        sweep,
        tuple(f"prompt-{i // 9}" for i in range(pairs)),  # RM-Bench: 9 style pairs a prompt
        verdicts=sample_verdicts(chosen - rejected, seed=seed),
    )


def sample_step_inputs(solutions: int = 40, problems: int = 12, seed: int = 0) -> StepInputs:
    """Step-labelled solutions as step metrics see them (``scope = "steps"``): 2 to 9 steps
    each, two thirds with erroneous steps (the first of them ``first_error``), three subsets,
    several solutions to a problem, a final answer correct exactly where no step is
    erroneous, and step scores in [0, 1] that run higher on valid steps."""
    rng = np.random.default_rng(seed)
    found, scores = [], []
    for i in range(solutions):
        count = int(rng.integers(2, 10))
        wrong: tuple[int, ...] = ()
        if i % 3:
            wrong = tuple(sorted({int(x) for x in rng.integers(0, count, int(rng.integers(1, 3)))}))
        marked = np.isin(np.arange(count), wrong)
        scores.append(np.clip(rng.normal(np.where(marked, 0.35, 0.65), 0.25), 0.0, 1.0))
        found.append(
            LabelledSolution(
                ref=f"solution-{i}",
                solution=Solution(
                    f"problem {i % problems}", tuple(f"step {k}" for k in range(count))
                ),
                subset=("arithmetic", "algebra", "geometry")[i % 3 if i % 2 else (i + 1) % 3],
                erroneous=wrong,
                first_error=wrong[0] if wrong else -1,
                final_answer_correct=not wrong,
            )
        )
    return StepInputs(tuple(found), tuple(scores), tuple(prompt_id(s.cluster) for s in found))


def sample_verdicts(margins: np.ndarray, seed: int = 0) -> JudgedPairs:
    """A pairwise judge's verdicts in both orders on pairs with these logit margins: it prefers
    the chosen answer with probability sigmoid(margin) in either order, ties 1 time in 10, and
    reports those probabilities as its log-probabilities."""
    rng = np.random.default_rng(seed + 1)
    p_chosen = 1.0 / (1.0 + np.exp(-margins))

    def draw(p_first: np.ndarray) -> tuple[Verdict, ...]:
        u = rng.random(p_first.size)
        return tuple(
            "tie" if x > 0.9 else "first" if x < 0.9 * p else "second"
            for x, p in zip(u, p_first, strict=True)
        )

    first_cf, first_rf = 0.9 * p_chosen + 0.05, 0.9 * (1 - p_chosen) + 0.05
    return JudgedPairs(draw(p_chosen), draw(1 - p_chosen), first_cf, first_rf, from_logprobs=True)


def sample_solutions() -> list[Solution]:
    """Five short math solutions of one to five steps, of varied lengths."""
    return [
        Solution("What is 17 + 25?", ("17 + 25 = 42.",)),
        Solution(
            "Find x if 2x + 3 = 11.",
            ("Subtract 3 from both sides: 2x = 8.", "Divide both sides by 2: x = 4."),
        ),
        Solution(
            "A circle has radius 3. What is its area?",
            ("The area of a circle is pi r^2.", "r^2 = 9.", "So the area is 9 pi, about 28.27."),
        ),
        Solution(
            "How many minutes are in 2.5 hours?",
            ("One hour has 60 minutes.", "2.5 x 60 = 150.", "The answer is 150."),
        ),
        Solution(
            "Is 91 prime?",
            ("Try small divisors.", "91 / 2 is not whole.", "91 / 3 is not whole.", "91 / 5 no.")
            + ("91 = 7 x 13, so 91 is not prime.",),
        ),
    ]
