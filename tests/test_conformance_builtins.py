"""Every built-in component passes the conformance kit that plugin authors run (rmaudit.testing).

Parametrised over the registry, not a hand-kept list, so a new built-in is checked the moment
it is registered (as torchmetrics and scikit-learn check every estimator), one test per
(component, check).  A component whose options have required fields needs an entry in
EXAMPLE_OPTIONS.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_real_prompt_sources import HH

from rmaudit import plugins
from rmaudit.components import KINDS
from rmaudit.recipe.validation import validate_options
from rmaudit.testing import (
    check_names,
    run_check,
    sample_prompts,
    sample_responses,
    sample_solutions,
)
from rmaudit.testing.conformance import KINDS as KIT_KINDS
from rmaudit.testing.conformance import kind_of


def _scores_file(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "scores.jsonl"
    responses = sample_responses(sample_prompts())
    path.write_text(
        "".join(
            json.dumps({"response_id": r.id, "score": i / 7}) + "\n"
            for i, r in enumerate(responses)
        )
    )
    return {"path": str(path)}


def _labels_file(tmp_path: Path) -> dict[str, Any]:
    """Labels keyed by prompt + response text, as a user brings them."""
    path = tmp_path / "labels.jsonl"
    responses = sample_responses(sample_prompts())
    texts = {p.id: p.text for p in sample_prompts()}
    path.write_text(
        "".join(
            json.dumps({"prompt": texts[r.prompt_id], "response": r.text, "label": 1 + i / 7})
            + "\n"
            for i, r in enumerate(responses)
        )
    )
    return {"path": str(path), "match": "text"}


def _verdicts_file(tmp_path: Path) -> dict[str, Any]:
    """Verdicts for the pairs the kit shows a pairwise judge (consecutive responses of a
    sample prompt, in both orders), the longer answer preferred."""
    from rmaudit.testing import sample_prompts, sample_responses

    prompts = {p.id: p for p in sample_prompts()}
    responses = sample_responses(list(prompts.values()))
    rows = [
        {
            "prompt": prompts[a.prompt_id].text.strip(),
            "answer_a": x.text,
            "answer_b": y.text,
            "verdict": "A"
            if len(x.text) > len(y.text)
            else "B"
            if len(y.text) > len(x.text)
            else "C",
        }
        for a, b in zip(responses[::2], responses[1::2], strict=False)
        if a.prompt_id == b.prompt_id
        for x, y in ((a, b), (b, a))
    ]
    path = tmp_path / "verdicts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return {"path": str(path)}


def _kit_pairs() -> list[tuple[str, str, str]]:
    """(prompt, a, b) of each pair the kit shows a pairwise judge (consecutive responses of a
    sample prompt), the prompt stripped as a judge is shown it."""
    prompts = {p.id: p for p in sample_prompts()}
    responses = sample_responses(list(prompts.values()))
    return [
        (prompts[a.prompt_id].text.strip(), a.text, b.text)
        for a, b in zip(responses[::2], responses[1::2], strict=False)
        if a.prompt_id == b.prompt_id
    ]


def _llmbar_results(tmp_path: Path) -> dict[str, Any]:
    """An LLMBar result.json for the kit's pairs: the longer answer wins in both orders."""
    records = [
        {
            "input": prompt,
            "output_1": a,
            "output_2": b,
            "label": 1,
            "results": [
                {
                    "swap = False": {"winner": "1" if len(a) >= len(b) else "2"},
                    "swap = True": {"winner": "1" if len(a) > len(b) else "2"},
                }
            ],
        }
        for prompt, a, b in _kit_pairs()
    ]
    path = tmp_path / "result.json"
    path.write_text(json.dumps(records))
    return {"results": [str(path)]}


def _judgebench_outputs(tmp_path: Path, scores: bool) -> dict[str, Any]:
    """A JudgeBench outputs file: the kit's pairs judged (the longer answer preferred), or
    every sample response in a pair with its score (its length)."""
    prompts = {p.id: p for p in sample_prompts()}
    responses = sample_responses(list(prompts.values()))
    if scores:
        by_prompt: dict[str, list[str]] = {}
        for r in responses:
            by_prompt.setdefault(prompts[r.prompt_id].text.strip(), []).append(r.text)
        pairs = [
            (p, texts[i], texts[(i + 1) % len(texts)])
            for p, texts in by_prompt.items()
            for i in range(len(texts))
        ]
    else:
        pairs = _kit_pairs()

    def game(a: str, b: str) -> dict[str, Any]:
        decision = "A>B" if len(a) > len(b) else "B>A" if len(b) > len(a) else "A=B"
        return {"judgment": {"scores": [len(a) / 10, len(b) / 10]}, "decision": decision}

    rows = [
        {
            "pair_id": str(i),
            "source": "mmlu-pro-law",
            "question": prompt,
            "response_A": a,
            "response_B": b,
            "label": "A>B",
            "judgments": [game(a, b), game(b, a)],
        }
        for i, (prompt, a, b) in enumerate(pairs)
    ]
    path = tmp_path / "outputs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return {"path": str(path)}


def _step_scores(tmp_path: Path) -> dict[str, Any]:
    """The kit's sample solutions with a score per step (its length)."""
    path = tmp_path / "step-scores.jsonl"
    rows = [
        {
            "question": s.question,
            "steps": list(s.steps),
            "step_scores": [len(t) / 10 for t in s.steps],
        }
        for s in sample_solutions()
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return {"path": str(path)}


def _generic_benchmark(tmp_path: Path) -> dict[str, Any]:
    """The sample responses as a generic-layout benchmark file with one RM's scores."""
    path = tmp_path / "bench.jsonl"
    responses = sample_responses(sample_prompts())
    records = []
    for prompt in sample_prompts():
        mine = [r for r in responses if r.prompt_id == prompt.id]
        records.append(
            {
                "prompt": prompt.text,
                "responses": [r.text for r in mine],
                "oracle": [1.0] * len(mine),
                "scores": {"mine": [len(r.text) / 10 for r in mine]},
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return {"path": str(path), "rm": "mine"}


def _rb2_scores(tmp_path: Path) -> dict[str, Any]:
    """The sample prompts as RewardBench 2 rows (the first sample answer chosen, the others
    rejected) and a published per-item file scoring each answer by its length."""
    pa = pytest.importorskip("pyarrow")
    parquet = pytest.importorskip("pyarrow.parquet")
    answers = [r.text for r in sample_responses(sample_prompts()[:1])]
    rows = [
        {"id": str(i), "prompt": p.text, "chosen": answers[:1], "rejected": answers[1:],
         "subset": "Focus"}
        for i, p in enumerate(sample_prompts())
    ]  # fmt: skip
    data = tmp_path / "rb2.parquet"
    parquet.write_table(pa.Table.from_pylist(rows), data)
    scores = [[len(a) / 100 for a in answers] for _ in rows]
    path = tmp_path / "published.json"
    path.write_text(json.dumps({"id": [r["id"] for r in rows], "subset": ["Focus"] * len(rows),
                                "scores": scores, "model": "org/rm"}))  # fmt: skip
    return {"path": str(path), "data": str(data)}


def _responses_file(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "responses.jsonl"
    path.write_text(
        "".join(
            json.dumps({"prompt": p.text, "response": f"answer {i} to {p.text}"}) + "\n"
            for p in sample_prompts()
            for i in range(3)
        )
    )
    return {"path": str(path)}


def _tiny_hf(model: str, **options: Any) -> Callable[[Path], dict[str, Any]]:
    """Options naming tiny Hugging Face models built into tmp_path (tests/_tiny_hf.py); string
    options that name another tiny model (a DPO reference) become its folder too."""

    def build(tmp_path: Path) -> dict[str, Any]:
        pytest.importorskip("torch")
        import _tiny_hf

        folder = lambda name: str(_tiny_hf.build(name, tmp_path))  # noqa: E731
        return {
            "model": folder(model),
            **{
                key: folder(value) if value in _tiny_hf.MODELS else value
                for key, value in options.items()
            },
        }

    return build


def _tiny_prm(model: str, **options: Any) -> Callable[[Path], dict[str, Any]]:
    """Options naming a tiny process reward model built into tmp_path (tests/_tiny_prm.py)."""

    def build(tmp_path: Path) -> dict[str, Any]:
        pytest.importorskip("torch")
        import _tiny_prm

        return {"model": str(_tiny_prm.build(model, tmp_path)), **options}

    return build


def _tiny_seq2seq(tmp_path: Path) -> str:
    pytest.importorskip("torch")
    import _tiny_hf

    return str(_tiny_hf.build_seq2seq(tmp_path))


def _lines(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def _kit_pair_rows() -> list[dict[str, str]]:
    return [{"prompt": p, "chosen": a, "rejected": b} for p, a, b in _kit_pairs()]


def _rm_bench(tmp_path: Path) -> dict[str, Any]:
    rows = [
        {"prompt": p, "chosen": [a, a + " (detailed)", a + " **(md)**"],
         "rejected": [b, b + " (detailed)", b + " **(md)**"], "subset": "chat"}
        for p, a, b in _kit_pairs()
    ]  # fmt: skip
    return {"path": _lines(tmp_path / "rm-bench.jsonl", rows)}


def _prm_files(which: str) -> Callable[[Path], dict[str, Any]]:
    def build(tmp_path: Path) -> dict[str, Any]:
        import _prm_data

        if which == "prmbench":
            folder = _prm_data.write_prmbench(tmp_path, per_file=1) / "prmbench"
        else:
            folder = _prm_data.write_processbench(tmp_path, per_split=2) / "processbench"
        return {"files": [str(path) for path in sorted(folder.iterdir())]}

    return build


def _llmbar(tmp_path: Path) -> dict[str, Any]:
    import _recorded

    _recorded.llmbar_dataset(tmp_path, folders=_recorded.LLMBAR_SUBSETS[:1])
    return {"path": str(next((tmp_path / "llmbar").rglob("dataset.json")))}


def _judgebench(tmp_path: Path) -> dict[str, Any]:
    import _recorded

    _recorded.judgebench_pairs(tmp_path)
    return {"path": str(next((tmp_path / "judgebench").iterdir()))}


def _rewardbench_2(tmp_path: Path) -> dict[str, Any]:
    import _rb2_data

    _rb2_data.write_rb2(tmp_path)
    return {"path": str(tmp_path / _rb2_data.DATA)}


def _prompts_parquet(tmp_path: Path) -> dict[str, Any]:
    pa = pytest.importorskip("pyarrow")
    parquet = pytest.importorskip("pyarrow.parquet")
    prompts = sample_prompts()
    table = {"prompt": [p.text for p in prompts], "topic": [p.meta["topic"] for p in prompts]}
    parquet.write_table(pa.table(table), tmp_path / "prompts.parquet")
    return {"path": str(tmp_path / "prompts.parquet")}


def _prompts_csv(tmp_path: Path) -> dict[str, Any]:
    rows = "".join(f'"{p.text}",{p.meta["topic"]}\n' for p in sample_prompts())
    (tmp_path / "prompts.csv").write_text("prompt,topic\n" + rows)
    return {"path": str(tmp_path / "prompts.csv"), "meta_fields": ["topic"]}


def _mt_bench(tmp_path: Path) -> dict[str, Any]:
    questions = [
        {"question_id": 81, "category": "writing", "turns": ["Write a blog post.", "Shorter."]},
        {"question_id": 111, "category": "math", "turns": ["Area?", "Perimeter?"]},
    ]
    return {"path": _lines(tmp_path / "question.jsonl", questions)}


def _hf_dataset(tmp_path: Path) -> dict[str, Any]:
    datasets = pytest.importorskip("datasets")
    rows = {"prompt": [p.text for p in sample_prompts()]}
    datasets.Dataset.from_dict(rows).save_to_disk(str(tmp_path / "saved"))
    return {"dataset": str(tmp_path / "saved")}


def _alpacaeval(tmp_path: Path) -> dict[str, Any]:
    from test_alpacaeval_source import made_up_files

    made_up_files(tmp_path / "data")
    return {
        "root": str(tmp_path / "data"),
        "outputs": ["policy.*.json*"],
        "annotations": ["ann/*.annotations.json"],
    }


def _rewardmath(tmp_path: Path) -> dict[str, Any]:
    """RewardMATH results: each sample prompt a problem, a classifier's ten scores."""
    import _rewardmath

    records = [
        {
            "problem": p.text,
            "solution_reference": [_rewardmath.CORRECT, *_rewardmath.INCORRECT],
            "score": [float(len(p.text) % (i + 2)) for i in range(10)],
        }
        for p in sample_prompts()
    ]
    return {"path": str(_rewardmath.write(tmp_path / "m_reward.json.gz", records))}


def _rewardmath_items(tmp_path: Path) -> dict[str, Any]:
    """The kit's items for a recorded RewardMATH model: each sample prompt's ten solutions,
    named as its results file names them."""
    import _rewardmath

    from rmaudit.components import Response

    names = [_rewardmath.CORRECT, *_rewardmath.INCORRECT]
    return {
        "pairs": [
            (p, Response(f"{p.id}-{i}", p.id, i, f"solution {i}", {"solution": name}))
            for p in sample_prompts()
            for i, name in enumerate(names)
        ]
    }


def _rb2_items(tmp_path: Path) -> dict[str, Any]:
    """The kit's items for a model's published RewardBench 2 scores: the completions of the
    data rows ``_rb2_scores`` wrote, as the rewardbench-2 pair source keys them (published
    scores are matched by row and position, so by rmaudit's response ids, not by text)."""
    from rmaudit.benchmark.pairs.rewardbench2 import read_rewardbench2

    data = read_rewardbench2(tmp_path / "rb2.parquet")
    pairs = {
        response.id: (pair.prompt, response)
        for pair in data.pairs(data.rows, seed=0)
        for response in (pair.chosen, pair.rejected)
    }
    return {"pairs": list(pairs.values())}


#: component name (or kind:name, where two kinds share it) → options for the check (a
#: function of tmp_path when it needs files)
EXAMPLE_OPTIONS: dict[str, Callable[[Path], dict[str, Any]]] = {
    "best-k-of-n": lambda tmp_path: {"n": 8, "k": 2},
    "labels-file": _labels_file,
    "benchmark-scores": _generic_benchmark,
    "step-scores": _step_scores,
    "ensemble": lambda tmp_path: {
        "members": [{"name": "simulated-rm", "seed": 1}, {"name": "simulated-rm", "bias": "length"}]
    },
    "scores-file": _scores_file,
    "rb2-scores": _rb2_scores,
    "hf-classifier": _tiny_hf("llama-rm"),
    "dpo-implicit": _tiny_hf("gpt2-lm", reference="gpt2-lm-ref"),
    "hf-causal-lm": _tiny_hf("llama-lm", max_new_tokens=6),
    "hf-judge-rm": _tiny_hf("llama-lm"),
    "verdicts-file": _verdicts_file,
    "llmbar-judge": _llmbar_results,
    "judgebench-judge": lambda tmp_path: _judgebench_outputs(tmp_path, scores=False),
    "judgebench-rm": lambda tmp_path: _judgebench_outputs(tmp_path, scores=True),
    "synthetic-proxy": lambda tmp_path: {
        "gold": {"name": "simulated-rm", "seed": 1},
        "sigma": 0.5,
        "loophole": "lottery",
    },
    "bt-annotator": lambda tmp_path: {"gold": {"name": "simulated-rm", "seed": 1}, "beta": 0.5},
    "rm-oracle": lambda tmp_path: {
        "model": {"name": "simulated-rm", "seed": 1},
        "transform": "sigmoid",
    },
    "responses-file": _responses_file,
    "hf-prm-classifier": _tiny_prm("token-prm"),
    "hf-prm-step-tag": _tiny_prm("tag-prm"),
    "translate": lambda tmp_path: {"model": _tiny_seq2seq(tmp_path), "p": 0.5, "max_new_tokens": 6},
    "prmbench": _prm_files("prmbench"),
    "processbench": _prm_files("processbench"),
    "pairs-file": lambda tmp_path: {"path": _lines(tmp_path / "pairs.jsonl", _kit_pair_rows())},
    "hh-pairs": lambda tmp_path: {
        "path": _lines(tmp_path / "hh.jsonl", HH),
        "on_bad_record": "reject",
    },
    "hh": lambda tmp_path: {"path": _lines(tmp_path / "hh.jsonl", HH)},
    "pair_source:rm-bench": _rm_bench,
    "llmbar": _llmbar,
    "judgebench": _judgebench,
    "pair_source:rewardbench-2": _rewardbench_2,
    "combined-pairs": lambda tmp_path: {
        "sources": [
            {"name": "pairs-file", "path": _lines(tmp_path / "pairs.jsonl", _kit_pair_rows())},
            {"name": "hh-pairs", "path": _lines(tmp_path / "hh.jsonl", HH[:2])},
        ]
    },
    "jsonl": lambda tmp_path: {
        "path": _lines(tmp_path / "prompts.jsonl", [{"prompt": p.text} for p in sample_prompts()])
    },
    "csv": _prompts_csv,
    "parquet": _prompts_parquet,
    "mt-bench": _mt_bench,
    "hf-dataset": _hf_dataset,
    "alpacaeval": _alpacaeval,
    "benchmark-jsonl": lambda tmp_path: {"path": _generic_benchmark(tmp_path)["path"]},
    "prompt_sampler:random": lambda tmp_path: {"k": 2},
    "rewardmath-scores": _rewardmath,
    "rewardmath": lambda tmp_path: {
        "root": str(tmp_path),
        "results": [Path(_rewardmath(tmp_path)["path"]).name],
    },
    "stratified": lambda tmp_path: {"k": 2},
    "kdpp": lambda tmp_path: {"k": 2},
}

#: component name → tolerances for check_component: float32 models in padded batches of
#: other shapes differ in the last bits from the same input alone (~1e-7 relative)
CHECK_TOLERANCES: dict[str, dict[str, float]] = {
    "hf-classifier": {"rtol": 0.0, "atol": 1e-5},
    "dpo-implicit": {"rtol": 1e-5, "atol": 1e-5},
    "hf-prm-classifier": {"rtol": 0.0, "atol": 1e-6},
    "hf-prm-step-tag": {"rtol": 0.0, "atol": 1e-6},
}

#: component name → what its kind's check is given beyond the kit's samples
CHECK_INPUTS: dict[str, Callable[[Path], dict[str, Any]]] = {
    "rewardmath-scores": _rewardmath_items,
    "rb2-scores": _rb2_items,
}

#: Components that call an HTTP API: checked against a local server in tests/api/ (the served
#: reward models in tests/api/test_served_rm_faults.py and tests/hf/test_served_rm.py).
CHECKED_ELSEWHERE = {
    "llm-judge",
    "openai-chat",
    "llm-paraphrase",
    "llm-rewrite",
    "llm-judge-rm",
    "openai-embeddings",
    "vllm-pooling",
    "vllm-classify",
    "openrlhf-rm",
    "sglang-classify",
}


def builtin_components() -> list[type]:
    """Every built-in component of every registered kind (a pair or solution source is
    registered as a prompt source)."""
    return [
        entry.cls
        for kind in KINDS
        for entry in plugins.registered(kind)
        if entry.source == plugins.BUILTIN_SOURCE
    ]


def builtin_checks():
    return [
        pytest.param(cls, check, id=f"{kind_of(cls)}:{cls.name}-{check}")
        for cls in builtin_components()
        for check in check_names(cls)
    ]


@pytest.mark.parametrize(("cls", "check"), builtin_checks())
def test_builtin_component_conforms(cls, check, tmp_path):
    if cls.name in CHECKED_ELSEWHERE:
        pytest.skip("calls an HTTP API: checked against a local server in tests/api/")
    by_name = EXAMPLE_OPTIONS.get(cls.name, lambda _: {})
    raw = EXAMPLE_OPTIONS.get(f"{kind_of(cls)}:{cls.name}", by_name)(tmp_path)
    options = validate_options(cls, raw, field=cls.name, file=None, base_dir=tmp_path)
    given = CHECK_INPUTS.get(cls.name, lambda _: {})(tmp_path)
    run_check(cls(options), check, **given, **CHECK_TOLERANCES.get(cls.name, {}))


def test_every_kind_has_built_ins_the_kit_checks():
    """All twelve kinds of docs/architecture.md's "Plugin kinds" have checks, and each has a
    built-in checked here."""
    checked = {kind_of(cls) for cls in builtin_components() if cls.name not in CHECKED_ELSEWHERE}
    assert len(KIT_KINDS) == 12
    assert checked == set(KIT_KINDS)
