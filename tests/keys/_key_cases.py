"""What the stored-key test rebuilds: components with non-default options, every registered
component with its defaults, and the recipes of recipes/ and the tests' small recipe (their
texts as recorded are kept in the expected keys, so a later edit of a recipe is not a change
of keys).

Data files are written here, deterministically, into a temporary folder: a key that hashes a
file's content is then the same on every machine.  A key that holds a path (prompt and pair
sources keep theirs: their prompt and pair ids already depend on the content) holds the
temporary folder, written ``{tmp}`` in the expected identities; the installed wordfreq
version, which the vocabulary perturbers' identity holds, is written ``{wordfreq}``.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

from rmaudit import plugins
from rmaudit.components import KINDS, Component
from rmaudit.components.keys import canonical_json
from rmaudit.recipe import Recipe, load_recipe
from rmaudit.recipe.validation import validate_options

REPO = Path(__file__).resolve().parents[2]
EXPECTED = Path(__file__).with_name("expected_keys.json")

SCORES = "".join(json.dumps({"response_id": f"r{i}", "score": i / 4}) + "\n" for i in range(5))
RESPONSES = "".join(
    json.dumps({"prompt": f"question {q}", "response": f"answer {i} to {q}"}) + "\n"
    for q in range(2)
    for i in range(3)
)
PAIRS = "".join(
    json.dumps({"prompt": f"p{i}", "chosen": "good", "rejected": "bad", "subset": "chat"}) + "\n"
    for i in range(3)
)
HH = (
    json.dumps(
        {
            "chosen": "\n\nHuman: Hi?\n\nAssistant: Hello.",
            "rejected": "\n\nHuman: Hi?\n\nAssistant: Go away.",
        }
    )
    + "\n"
)
RM_BENCH = json.dumps(
    [
        {
            "id": 1,
            "subset": "chat",
            "prompt": "P",
            "chosen": ["c0", "c1", "c2"],
            "rejected": ["r0", "r1", "r2"],
        }
    ]
)
LLMBAR = json.dumps([{"input": "I", "output_1": "one", "output_2": "two", "label": 2}])
#: file name → content, written into the temporary folder before anything is built
FILES: dict[str, str] = {
    "scores.jsonl": SCORES,
    "scores-2.jsonl": SCORES.replace("0.25", "0.3"),
    "responses.jsonl": RESPONSES,
    "judge.txt": "Rate {answer} to {question} from 1 to 10.\n",
    "pairs.jsonl": PAIRS,
    "hh.jsonl": HH,
    "rm-bench.json": RM_BENCH,
    "llmbar.json": LLMBAR,
    "prompts.jsonl": json.dumps({"prompt": "What is 2 + 2?", "topic": "math"}) + "\n",
    "prompts.csv": "prompt,topic\nWhat is 2 + 2?,math\n",
    "prompts.parquet": "not read until the prompts are loaded",
    "questions.jsonl": json.dumps({"question_id": 1, "category": "math", "turns": ["a", "b"]})
    + "\n",
    "references.jsonl": json.dumps({"question_id": 1, "choices": [{"turns": ["x", "y"]}]}) + "\n",
    # what recipes/ reads from ../data and ../examples, relative to a copy of the recipes
    "data/hh-rlhf/helpful-base/test.jsonl.gz": "not read until the prompts are loaded",
    "data/helpful-benchmark.jsonl.gz": "not read until the benchmark is imported",
}

API = {"base_url": "https://api.example.com/v1"}


@dataclass(frozen=True)
class KeyCase:
    """A component built from a recipe-like table; ``{tmp}`` in a string is the data folder."""

    id: str
    kind: str
    table: dict[str, Any] = field(default_factory=dict)


NON_DEFAULT: tuple[KeyCase, ...] = (
    KeyCase(
        "hf-classifier/runtime-options",
        "reward_model",
        {
            "name": "hf-classifier",
            "model": "OpenAssistant/reward-model-deberta-v3-large-v2",
            "revision": "main",
            "dtype": "float16",
            "device": "cuda:1",
            "batch_size": 32,
            "max_batch_tokens": 8192,
            "attn_implementation": "sdpa",
            "max_length": 512,
            "truncation_side": "right",
            "head_aggregate": "index",
            "head_index": 1,
            "fallback_chat_template": "{{ messages }}",
        },
    ),
    KeyCase(
        "hf-classifier/device-map",
        "reward_model",
        {"name": "hf-classifier", "model": "org/rm", "device_map": "auto", "batch_size": 2},
    ),
    KeyCase(
        "dpo-implicit/reference",
        "reward_model",
        {
            "name": "dpo-implicit",
            "model": "org/dpo",
            "reference": "org/sft",
            "reference_revision": "v1",
            "aggregate": "mean",
            "beta": 0.1,
            "device": "cpu",
            "batch_size": 4,
        },
    ),
    KeyCase(
        "hf-causal-lm/sampling",
        "reference_policy",
        {
            "name": "hf-causal-lm",
            "model": "meta-llama/Llama-2-7b-chat-hf",
            "dtype": "bfloat16",
            "temperature": 0.7,
            "top_p": 0.9,
            "max_new_tokens": 64,
            "seed": 3,
            "device": "cuda",
            "batch_size": 16,
            "max_batch_tokens": 4096,
        },
    ),
    KeyCase(
        "llm-judge/operational-options",
        "oracle",
        {
            "name": "llm-judge",
            **API,
            "model": "gpt-4-turbo-2024-04-09",
            "template": "reta-multi",
            "samples": 3,
            "temperature": 0.5,
            "max_tokens": 32,
            "n_per_request": False,
            "scale": [0, 10],
            "expected_answer_tokens": 120,
            "api_key_env": "JUDGE_KEY",
            "concurrency": 4,
            "timeout_s": 5,
            "max_retries": 2,
            "cache": "{tmp}/cache.sqlite",
            "price": {"prompt": 10.0, "completion": 30.0},
        },
    ),
    KeyCase(
        "llm-judge/template-file",
        "oracle",
        {"name": "llm-judge", **API, "model": "judge", "template_file": "{tmp}/judge.txt"},
    ),
    KeyCase(
        "openai-chat/options",
        "reference_policy",
        {
            "name": "openai-chat",
            **API,
            "model": "policy",
            "temperature": 0.3,
            "top_p": 0.8,
            "max_tokens": 100,
            "system": "Be brief.",
            "seed": 5,
            "concurrency": 2,
            "cache": "{tmp}/cache.sqlite",
            "price": {"prompt": 1.0, "completion": 2.0},
        },
    ),
    KeyCase(
        "openai-embeddings/options",
        "embedder",
        {
            "name": "openai-embeddings",
            **API,
            "model": "text-embedding-3-small",
            "dimensions": 64,
            "batch_size": 8,
            "concurrency": 3,
            "timeout_s": 9,
        },
    ),
    KeyCase(
        "llm-paraphrase/options",
        "shift_perturber",
        {
            "name": "llm-paraphrase",
            **API,
            "model": "gpt-4o",
            "p": 0.3,
            "seed": 2,
            "temperature": 0.2,
            "max_tokens": 50,
            "template": "Say again: {prompt}",
            "concurrency": 5,
            "cache": "{tmp}/cache.sqlite",
        },
    ),
    KeyCase(
        "llm-rewrite/options",
        "shift_perturber",
        {"name": "llm-rewrite", **API, "model": "gpt-4o", "max_retries": 0},
    ),
    KeyCase(
        "translate/options",
        "shift_perturber",
        {
            "name": "translate",
            "model": "Helsinki-NLP/opus-mt-en-de",
            "p": 0.5,
            "seed": 1,
            "prefix": ">>deu<< ",
            "max_new_tokens": 20,
            "device": "cuda",
            "batch_size": 4,
        },
    ),
    KeyCase(
        "sentence-transformers/options",
        "embedder",
        {
            "name": "sentence-transformers",
            "model": "org/embedder",
            "device": "cpu",
            "batch_size": 7,
            "normalize": False,
        },
    ),
    KeyCase("tfidf-lsa/options", "embedder", {"name": "tfidf-lsa", "dims": 16, "seed": 4}),
    KeyCase(
        "scores-file/file",
        "reward_model",
        {"name": "scores-file", "path": "{tmp}/scores.jsonl", "score_field": "score"},
    ),
    KeyCase(
        "responses-file/file",
        "reference_policy",
        {"name": "responses-file", "path": "{tmp}/responses.jsonl"},
    ),
    KeyCase(
        "ensemble/members",
        "reward_model",
        {
            "name": "ensemble",
            "aggregate": "median",
            "members": [
                {"name": "simulated-rm", "seed": 1},
                {"name": "scores-file", "path": "{tmp}/scores-2.jsonl"},
                # "auto" was the dtype default everywhere when these keys were recorded; on CUDA
                # the default is bfloat16 now, a change of outputs that rightly changes keys
                {
                    "name": "hf-classifier",
                    "model": "org/rm",
                    "device": "cuda",
                    "dtype": "auto",
                    "batch_size": 3,
                },
            ],
        },
    ),
    KeyCase(
        "ensemble/nested-ensemble",
        "reward_model",
        {
            "name": "ensemble",
            "members": [
                {
                    "name": "ensemble",
                    "members": [
                        {"name": "simulated-rm"},
                        {"name": "simulated-rm", "bias": "length"},
                    ],
                },
                {"name": "simulated-rm", "seed": 9},
            ],
        },
    ),
    KeyCase(
        "synthetic-proxy/gold-file",
        "reward_model",
        {
            "name": "synthetic-proxy",
            "gold": {"name": "scores-file", "path": "{tmp}/scores.jsonl"},
            "sigma": 0.5,
            "loophole": "length",
            "flip": 0.1,
            "seed": 2,
        },
    ),
    KeyCase(
        "synthetic-proxy/gold-simulated",
        "reward_model",
        {
            "name": "synthetic-proxy",
            "gold": {"name": "simulated-rm", "noise": 0.5, "seed": 1},
            "sigma": 0.25,
            "seed": 1,
        },
    ),
    KeyCase(
        "bt-annotator/gold",
        "oracle",
        {
            "name": "bt-annotator",
            "gold": {"name": "hf-classifier", "model": "org/rm", "batch_size": 64},
            "beta": 0.2,
        },
    ),
    KeyCase(
        "rm-oracle/model",
        "oracle",
        {
            "name": "rm-oracle",
            "model": {
                "name": "hf-classifier",
                "model": "org/gold",
                "device": "cuda:0",
                "dtype": "auto",
                "batch_size": 12,
            },
            "transform": "sigmoid",
            "offset": 1.0,
        },
    ),
    KeyCase(
        "rm-oracle/ensemble",
        "oracle",
        {
            "name": "rm-oracle",
            "model": {
                "name": "ensemble",
                "members": [
                    {"name": "scores-file", "path": "{tmp}/scores.jsonl"},
                    {"name": "simulated-rm"},
                ],
            },
        },
    ),
    KeyCase(
        "word-insert/options",
        "shift_perturber",
        {"name": "word-insert", "p": 0.2, "seed": 3, "vocabulary_size": 500},
    ),
    KeyCase("word-perturb/options", "shift_perturber", {"name": "word-perturb", "p": 0.05}),
    KeyCase("char-noise/options", "shift_perturber", {"name": "char-noise", "p": 0.3, "seed": 1}),
    KeyCase("word-delete/options", "shift_perturber", {"name": "word-delete", "p": 0.4}),
    KeyCase(
        "pairs-file/mapping",
        "prompt_source",
        {
            "name": "pairs-file",
            "path": "{tmp}/pairs.jsonl",
            "subset": "subset",
            "on_bad_record": "reject",
        },
    ),
    KeyCase(
        "hh-pairs/file",
        "prompt_source",
        {"name": "hh-pairs", "path": "{tmp}/hh.jsonl", "subset": "helpful-base"},
    ),
    KeyCase("rm-bench/file", "prompt_source", {"name": "rm-bench", "path": "{tmp}/rm-bench.json"}),
    KeyCase("llmbar/file", "prompt_source", {"name": "llmbar", "path": "{tmp}/llmbar.json"}),
    KeyCase(
        "jsonl/file",
        "prompt_source",
        {"name": "jsonl", "path": "{tmp}/prompts.jsonl", "meta_fields": ["topic"]},
    ),
    KeyCase("csv/file", "prompt_source", {"name": "csv", "path": "{tmp}/prompts.csv"}),
    KeyCase("parquet/file", "prompt_source", {"name": "parquet", "path": "{tmp}/prompts.parquet"}),
    KeyCase(
        "hh/file",
        "prompt_source",
        {"name": "hh", "path": "{tmp}/hh.jsonl", "subset": "helpful-base", "strict": True},
    ),
    KeyCase(
        "mt-bench/files",
        "prompt_source",
        {
            "name": "mt-bench",
            "path": "{tmp}/questions.jsonl",
            "reference_path": "{tmp}/references.jsonl",
            "categories": ["math"],
        },
    ),
    KeyCase(
        "hf-dataset/options",
        "prompt_source",
        {
            "name": "hf-dataset",
            "dataset": "Anthropic/hh-rlhf",
            "data_dir": "helpful-base",
            "split": "test",
            "revision": "abc",
            "cache_dir": "{tmp}/hf-cache",
            "format": "hh",
        },
    ),
    KeyCase("kdpp/options", "prompt_sampler", {"name": "kdpp", "k": 10, "seed": 1, "scale": 2.0}),
    KeyCase(
        "regret-correlation/options",
        "metric",
        {"name": "regret-correlation", "gold": "oracle", "n": 8, "bootstrap": 50, "curves": False},
    ),
    KeyCase("best-k-of-n/options", "metric", {"name": "best-k-of-n", "n": 8, "k": 2}),
)


def default_cases() -> list[KeyCase]:
    """Every registered component whose options all have defaults, built with them."""
    cases = []
    for kind in KINDS:
        for entry in plugins.registered(kind):
            fields = entry.cls.Options.model_fields.values()
            if not any(f.is_required() for f in fields):
                cases.append(
                    KeyCase(
                        f"{entry.qualified_name}/defaults", kind, {"name": entry.qualified_name}
                    )
                )
    return cases


def write_files(folder: Path) -> None:
    for name, text in FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (folder / "examples").mkdir(exist_ok=True)
    shutil.copy(REPO / "examples" / "rewardbench-mini.jsonl", folder / "examples")
    # recipes go to folder/recipes, so their ../data and ../examples are the files above
    (folder / "recipes").mkdir(exist_ok=True)


def _filled(value: Any, folder: Path) -> Any:
    if isinstance(value, str):
        return value.replace("{tmp}", str(folder))
    if isinstance(value, dict):
        return {k: _filled(v, folder) for k, v in value.items()}
    if isinstance(value, list):
        return [_filled(v, folder) for v in value]
    return value


def build(case: KeyCase, folder: Path) -> Component:
    table = _filled(case.table, folder)
    name = table.pop("name")
    cls = plugins.resolve(case.kind, name).cls
    return cls(validate_options(cls, table, field=case.id, file=None, base_dir=folder))


def recipe_components(name: str, text: str, folder: Path) -> tuple[Recipe, dict[str, Component]]:
    """A recipe (its run key is a key too) and its components, by the field they were written at."""
    path = folder / "recipes" / name
    path.write_text(text, encoding="utf-8")
    recipe = load_recipe(path)
    specs = [
        recipe.source,
        recipe.sampler,
        recipe.embedder,
        recipe.policy,
        recipe.oracle,
        recipe.pair_source,
        recipe.perturber,
        *recipe.reward_models,
        *recipe.metrics,
    ]
    return recipe, {spec.field: spec.build() for spec in specs if spec is not None}


def run_identity(recipe: Recipe) -> dict[str, Any]:
    """What a recipe's run key hashes (:attr:`Recipe.run_key`)."""
    return recipe.run_identity()


def portable(identity: Any, folder: Path) -> Any:
    """An identity as JSON with the machine-specific parts written as placeholders."""
    text = canonical_json(identity).replace(json.dumps(str(folder))[1:-1], "{tmp}")
    if isinstance(identity, dict) and "wordfreq" in identity:
        text = text.replace(f'"wordfreq":"{version("wordfreq")}"', '"wordfreq":"{wordfreq}"')
    return json.loads(text)


def localised(identity: Any, folder: Path) -> Any:
    """The inverse of :func:`portable`, for this machine and this folder."""
    text = canonical_json(identity).replace("{tmp}", json.dumps(str(folder))[1:-1])
    return json.loads(
        text.replace('"wordfreq":"{wordfreq}"', f'"wordfreq":"{version("wordfreq")}"')
    )
