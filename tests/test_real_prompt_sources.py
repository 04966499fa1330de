"""Prompt sources for real prompt sets, the responses-file policy and the rm-oracle, on small
fixture files written here (HH extraction rule, MT-bench's two turns, field mapping)."""

from __future__ import annotations

import gzip
import json
import sys

import pytest

from rmaudit.components import Prompt, Response
from rmaudit.components.keys import prompt_id
from rmaudit.errors import BadInput
from rmaudit.plugins import resolve
from rmaudit.recipe.validation import validate_options


def build(kind, name, tmp_path, **options):
    cls = resolve(kind, name).cls
    return cls(validate_options(cls, options, field=name, file=None, base_dir=tmp_path))


HH = [
    # one turn, differing final replies
    {
        "chosen": "\n\nHuman: How do I boil an egg?\n\nAssistant: Simmer it for 9 minutes.",
        "rejected": "\n\nHuman: How do I boil an egg?\n\nAssistant: Eggs are round.",
    },
    # two turns; the rejected side has an excess round after the compared reply
    {
        "chosen": "\n\nHuman: Recommend a book.\n\nAssistant: Which genre?\n\nHuman: Sci-fi."
        "\n\nAssistant: Try Solaris.",
        "rejected": "\n\nHuman: Recommend a book.\n\nAssistant: Which genre?\n\nHuman: Sci-fi."
        "\n\nAssistant: Dune.\n\nHuman: Thanks\n\nAssistant: Bye",
    },
    # identical dialogues: the extraction rule rejects the record
    {
        "chosen": "\n\nHuman: Hi\n\nAssistant: Hello",
        "rejected": "\n\nHuman: Hi\n\nAssistant: Hello",
    },
]


def test_hh_prompts_are_the_context_before_the_compared_reply(tmp_path):
    path = tmp_path / "test.jsonl.gz"
    with gzip.open(path, "wt") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in HH)
    loaded = build("prompt_source", "hh", tmp_path, path=str(path), subset="helpful-base").load()
    assert [text for text, _ in loaded] == [
        "\n\nHuman: How do I boil an egg?",
        "\n\nHuman: Recommend a book.\n\nAssistant: Which genre?\n\nHuman: Sci-fi.",
    ]
    first, second = (meta for _, meta in loaded)
    assert first["reference"] == "Simmer it for 9 minutes." and first["subset"] == "helpful-base"
    assert second["reference"] == "Try Solaris." and second["context_turns"] == 3
    assert second["messages"] == [
        {"role": "user", "content": "Recommend a book."},
        {"role": "assistant", "content": "Which genre?"},
        {"role": "user", "content": "Sci-fi."},
    ]
    with pytest.raises(BadInput, match="test.jsonl.gz:3"):
        build("prompt_source", "hh", tmp_path, path=str(path), strict=True).load()


def test_mt_bench_prompt_sets_keep_both_turns_and_their_references(tmp_path):
    questions = tmp_path / "question.jsonl"
    questions.write_text(
        "".join(
            json.dumps(q) + "\n"
            for q in [
                {
                    "question_id": 81,
                    "category": "writing",
                    "turns": ["Write a blog post.", "Rewrite it."],
                },
                {
                    "question_id": 101,
                    "category": "reasoning",
                    "turns": ["Who is second?", "And last?"],
                    "reference": ["inline 1", "inline 2"],
                },
                {"question_id": 111, "category": "math", "turns": ["Area?", "Perimeter?"]},
            ]
        )
    )
    answers = tmp_path / "gpt-4.jsonl"
    answers.write_text(
        json.dumps({"question_id": 111, "choices": [{"turns": ["A = 2", "P = 6"]}]}) + "\n"
    )
    loaded = build(
        "prompt_source", "mt-bench", tmp_path, path=str(questions), reference_path=str(answers)
    ).load()
    assert loaded[0] == (
        "[Turn 1] Write a blog post.\n\n[Turn 2] Rewrite it.",
        {"question_id": 81, "category": "writing", "turns": ["Write a blog post.", "Rewrite it."]},
    )
    assert loaded[1][1]["reference"] == ["inline 1", "inline 2"]
    assert loaded[2][1]["reference"] == ["A = 2", "P = 6"]
    only = build(
        "prompt_source", "mt-bench", tmp_path, path=str(questions), categories=["math"]
    ).load()
    assert [m["question_id"] for _, m in only] == [111]


def test_csv_and_jsonl_prompts_map_fields(tmp_path):
    (tmp_path / "p.csv").write_text("id,question,topic\n1,What is 2+2?,math\n2,Say hi,chat\n")
    loaded = build(
        "prompt_source", "csv", tmp_path, path="p.csv", text_field="question", meta_fields=["topic"]
    ).load()
    assert loaded == [("What is 2+2?", {"topic": "math"}), ("Say hi", {"topic": "chat"})]
    with gzip.open(tmp_path / "p.jsonl.gz", "wt") as handle:
        handle.write('{"q": "Hello?", "lang": "en"}\n\n{"q": ""}\n')
    with pytest.raises(BadInput, match=r"p.jsonl.gz:3: q: expected a non-empty string"):
        build("prompt_source", "jsonl", tmp_path, path="p.jsonl.gz", text_field="q").load()


def test_parquet_prompts(tmp_path):
    pq = pytest.importorskip(
        "pyarrow.parquet", reason="the parquet extra (pyarrow) is not installed"
    )
    import pyarrow as pa

    pq.write_table(pa.table({"prompt": ["A?", "B?"], "topic": ["x", "y"]}), tmp_path / "p.parquet")
    assert build("prompt_source", "parquet", tmp_path, path="p.parquet").load() == [
        ("A?", {"topic": "x"}),
        ("B?", {"topic": "y"}),
    ]


@pytest.mark.parametrize(
    "module, name, options, message",
    [
        ("pyarrow", "parquet", {"path": "p.parquet"}, "pip install 'rmaudit[parquet]'"),
        ("datasets", "hf-dataset", {"dataset": "Anthropic/hh-rlhf"}, "needs the datasets package"),
    ],
)
def test_sources_whose_package_is_missing_say_what_to_install(
    tmp_path, monkeypatch, module, name, options, message
):
    (tmp_path / "p.parquet").write_bytes(b"")
    monkeypatch.setitem(sys.modules, module, None)  # makes the import fail, installed or not
    monkeypatch.setitem(sys.modules, f"{module}.parquet", None)
    with pytest.raises(BadInput, match=message.replace("[", r"\[").replace("]", r"\]")):
        build("prompt_source", name, tmp_path, **options).load()


@pytest.fixture
def offline_datasets(monkeypatch, tmp_path):
    """The datasets package with the hub switched off and its cache in tmp_path: anything
    that would reach the network fails instead."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    datasets = pytest.importorskip("datasets")
    # the package reads the variables once, at import: set what an earlier import read
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")
    return datasets


def test_hf_dataset_loads_a_builder_over_local_files_offline(tmp_path, offline_datasets):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "test.jsonl").write_text(
        "".join(
            json.dumps(r) + "\n"
            for r in [
                {"question": "What is 2+2?", "topic": "math", "id": 1},
                {"question": "Say hi", "topic": "chat", "id": 2},
            ]
        )
    )
    # data_files relative to the recipe's folder, as a {split: files} mapping
    loaded = build(
        "prompt_source",
        "hf-dataset",
        tmp_path,
        dataset="json",
        data_files={"test": "data/test.jsonl"},
        text_field="question",
        meta_fields=["topic"],
    ).load()
    assert loaded == [("What is 2+2?", {"topic": "math"}), ("Say hi", {"topic": "chat"})]
    (tmp_path / "hh.jsonl").write_text("".join(json.dumps(r) + "\n" for r in HH))
    hh = build(
        "prompt_source",
        "hf-dataset",
        tmp_path,
        dataset="json",
        data_files=["hh.jsonl"],
        split="train",
        format="hh",
    ).load()
    # the RETA extraction rule, as the hh source applies it (the third record is rejected)
    assert [text for text, _ in hh] == [
        "\n\nHuman: How do I boil an egg?",
        "\n\nHuman: Recommend a book.\n\nAssistant: Which genre?\n\nHuman: Sci-fi.",
    ]
    assert hh[1][1]["reference"] == "Try Solaris."
    with pytest.raises(BadInput, match="cannot load the dataset"):
        build(
            "prompt_source",
            "hf-dataset",
            tmp_path,
            dataset="json",
            data_files=["hh.jsonl"],
            split="test",
        ).load()
    # a hub name cannot be fetched offline: a one-line BadInput, no network
    with pytest.raises(BadInput, match="cannot load the dataset"):
        build("prompt_source", "hf-dataset", tmp_path, dataset="nobody/no-such-dataset").load()


def test_hf_dataset_loads_a_folder_saved_to_disk(tmp_path, offline_datasets):
    rows = {"prompt": ["A?", "B?", "C?"], "topic": ["x", "y", "z"]}
    offline_datasets.DatasetDict({"test": offline_datasets.Dataset.from_dict(rows)}).save_to_disk(
        str(tmp_path / "saved")
    )
    loaded = build("prompt_source", "hf-dataset", tmp_path, dataset="saved").load()
    assert loaded == [("A?", {"topic": "x"}), ("B?", {"topic": "y"}), ("C?", {"topic": "z"})]
    with pytest.raises(BadInput, match="no split 'validation'; the dataset has test"):
        build("prompt_source", "hf-dataset", tmp_path, dataset="saved", split="validation").load()
    offline_datasets.Dataset.from_dict(rows).save_to_disk(str(tmp_path / "one-split"))
    assert len(build("prompt_source", "hf-dataset", tmp_path, dataset="one-split").load()) == 3


def test_responses_file_serves_each_prompts_samples_in_file_order(tmp_path):
    (tmp_path / "r.jsonl").write_text(
        "".join(
            json.dumps(r) + "\n"
            for r in [
                {"prompt": "Q1", "response": "a", "model": "m"},
                {"prompt": "Q2", "response": "b"},
                {"prompt": "Q1", "response": "c"},
            ]
        )
    )
    policy = build("reference_policy", "responses-file", tmp_path, path="r.jsonl")
    q1, q2 = Prompt(prompt_id("Q1"), "Q1"), Prompt(prompt_id("Q2"), "Q2")
    assert [g.text for g in policy.generate([(q1, 1), (q2, 0), (q1, 0)])] == ["c", "b", "a"]
    assert policy.generate([(q1, 0)])[0].meta == {"model": "m"}
    with pytest.raises(BadInput, match="no response with sample index 1 for prompt"):
        policy.generate([(q2, 1)])


def test_rm_oracle_scores_are_the_gold_rms_through_the_transform(tmp_path):
    gold = {"name": "simulated-rm", "seed": 3}
    prompt = Prompt(prompt_id("Q"), "Q")
    batch = [
        (prompt, Response(f"r{i}", prompt.id, i, text))
        for i, text in enumerate(["Short.", "A longer, more careful answer to Q."])
    ]
    raw = build("reward_model", "simulated-rm", tmp_path, seed=3).score(batch)
    oracle = build("oracle", "rm-oracle", tmp_path, model=gold, transform="sigmoid", offset=1.0)
    labels = oracle.label(batch)
    assert [label.score for label in labels] == pytest.approx(
        [1 + 1 / (1 + 2.718281828459045**-s) for s in raw]
    )
    assert oracle.simulated  # a simulated gold RM makes a simulated benchmark
    assert oracle.key != build("oracle", "rm-oracle", tmp_path, model={"name": "simulated-rm"}).key
