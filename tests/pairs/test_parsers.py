"""Preference-pair parsers: every record gives pairs or a located rejection, never nothing."""

from __future__ import annotations

import csv
import doctest
import gzip
import json

import pytest

from rmaudit.benchmark.pairs import (
    PARSERS,
    parse_hh,
    parse_llmbar,
    parse_pairs,
    parse_rm_bench,
    parsers,
    split_hh_dialogues,
)
from rmaudit.components import PairLoad, PairSource
from rmaudit.errors import BadInput


def write_jsonl(path, records):
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records),
        encoding="utf-8",
    )
    return path


def texts(pair) -> tuple[str, str, str]:
    """A pair's prompt, chosen and rejected texts."""
    return pair.prompt.text, pair.chosen.text, pair.rejected.text


def line(rejected) -> int:
    """The line a rejected record starts on (its ``where`` is ``file:line``)."""
    return int(rejected.where.rpartition(":")[2])


def accounted(result: PairLoad, records: int) -> None:
    """Every record is parsed or rejected, and the pairs come from the parsed records."""
    assert result.records == records
    assert result.parsed + len(result.rejected) == records
    assert len({p.meta["line"] for p in result.pairs}) == result.parsed
    assert not {p.meta["line"] for p in result.pairs} & {line(r) for r in result.rejected}


# ---------------------------------------------------------------------------------------------
# Generic


def test_generic_jsonl_with_field_mapping(tmp_path):
    path = write_jsonl(
        tmp_path / "p.jsonl",
        [
            {"q": "Why?", "good": "Because.", "bad": "No.", "cat": "chat", "id": 7},
            {"q": "How?", "good": "Like so.", "bad": "Dunno.", "cat": "code"},
        ],
    )
    result = parse_pairs(path, prompt="q", chosen="good", rejected="bad", subset="cat")
    assert result.pairs[0] == PairSource.text_pair(
        "Why?", "Because.", "No.", "chat", {"id": 7, "line": 1}
    )  # keyed by their texts, as every pair source keys a pair of texts
    assert result.pairs[1].subset == "code"
    accounted(result, 2)


def test_generic_rejections_name_line_reason_field(tmp_path):
    path = write_jsonl(
        tmp_path / "p.jsonl",
        [
            {"prompt": "a", "chosen": "x", "rejected": "y"},
            "{not json",
            "",  # blank lines are not records
            {"prompt": "a", "chosen": "x"},
            {"prompt": "a", "chosen": "  ", "rejected": "y"},
            {"prompt": "a", "chosen": "x", "rejected": "x"},
            {"prompt": "a", "chosen": 3, "rejected": "y"},
            [1, 2],
            {"prompt": "", "chosen": "x", "rejected": "y"},
        ],
    )
    result = parse_pairs(path)
    got = [(line(r), r.reason, r.field) for r in result.rejected]
    assert got == [
        (2, "malformed record", None),
        (4, "missing field", "rejected"),
        (5, "empty response", "chosen"),
        (6, "identical responses", "rejected"),
        (7, "not a string", "chosen"),
        (8, "not an object", None),
        (9, "empty prompt", "prompt"),
    ]
    assert result.rejected[0].where == f"{path}:2"  # the file as given, then the line
    accounted(result, 8)


def test_strict_raises_with_file_line_field_value(tmp_path):
    path = write_jsonl(
        tmp_path / "p.jsonl",
        [
            {"prompt": "a", "chosen": "x", "rejected": "y"},
            {"prompt": "a", "chosen": "x", "rejected": ""},
        ],
    )
    with pytest.raises(BadInput) as caught:
        parse_pairs(path, strict=True)
    assert str(caught.value) == f"{path}:2: rejected: empty response (got '')"
    with pytest.raises(BadInput, match=r"p.jsonl:1: rejected: missing field$"):
        parse_pairs(write_jsonl(path, [{"prompt": "a", "chosen": "x"}]), strict=True)


def test_generic_csv_and_gzip_json_array(tmp_path):
    path = tmp_path / "p.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["prompt", "chosen", "rejected"])
        writer.writerow(["multi\nline prompt", "yes", "no"])
        writer.writerow(["b", "", "no"])
        writer.writerow(["c", "yes", "no", "extra"])
        writer.writerow(["d", "yes", "no"])
    result = parse_pairs(path)
    assert result.pairs[0].prompt.text == "multi\nline prompt"
    assert [(line(r), r.reason) for r in result.rejected] == [
        (4, "empty response"),
        (5, "malformed record"),
    ]
    assert result.pairs[-1].meta["line"] == 6
    accounted(result, 4)

    array = tmp_path / "p.json.gz"
    with gzip.open(array, "wt", encoding="utf-8") as handle:
        json.dump(
            [
                {"prompt": "a", "chosen": "x", "rejected": "y"},
                {"prompt": "b", "chosen": "x", "rejected": "y"},
            ],
            handle,
            indent=2,
        )
    result = parse_pairs(array)
    assert [p.meta["line"] for p in result.pairs] == [2, 7]
    accounted(result, 2)


def test_malformed_json_array_raises_at_its_line(tmp_path):
    path = tmp_path / "p.json"
    path.write_text('[\n {"prompt": "a", "chosen": "x", "rejected": "y"},\n {"prompt": oops}\n]')
    with pytest.raises(BadInput, match=r"p.json:3: invalid JSON array"):
        parse_pairs(path)


def test_empty_files(tmp_path):
    for name, text in (("e.jsonl", ""), ("e.json", "[]"), ("e.csv", "prompt,chosen,rejected\n")):
        path = tmp_path / name
        path.write_text(text)
        result = parse_pairs(path)
        assert (result.pairs, result.rejected, result.records) == ([], [], 0)


# ---------------------------------------------------------------------------------------------
# Anthropic HH


def hh(*turns):
    return "".join(f"\n\n{role}: {text}" for role, text in turns)


def test_hh_single_and_multi_turn(tmp_path):
    path = write_jsonl(
        tmp_path / "hh.jsonl",
        [
            {
                "chosen": hh(("Human", "Hi?"), ("Assistant", "Hello!")),
                "rejected": hh(("Human", "Hi?"), ("Assistant", "Go away.")),
            },
            {
                "chosen": hh(
                    ("Human", "Q1"), ("Assistant", "A1"), ("Human", "Q2"), ("Assistant", "Good")
                ),
                "rejected": hh(
                    ("Human", "Q1"), ("Assistant", "A1"), ("Human", "Q2"), ("Assistant", "Bad")
                ),
            },
        ],
    )
    result = parse_hh(path, subset="helpful-base")
    first, second = result.pairs
    assert texts(first) == ("\n\nHuman: Hi?", "Hello!", "Go away.")
    assert texts(second) == ("\n\nHuman: Q1\n\nAssistant: A1\n\nHuman: Q2", "Good", "Bad")
    assert second.subset == "helpful-base"
    assert second.meta == {"turns": 3, "excess_turns": {"chosen": 0, "rejected": 0}, "line": 2}
    accounted(result, 2)


def test_hh_excess_rounds_are_removed():
    # the rejected response carries a stray extra Assistant header and another round
    chosen = hh(("Human", "Q"), ("Assistant", "Good answer"))
    rejected = hh(
        ("Human", "Q"),
        ("Assistant", "Meh"),
        ("Assistant", "more"),
        ("Human", "Q2"),
        ("Assistant", "A2"),
    )
    prompt, good, bad, meta = split_hh_dialogues(chosen, rejected)
    assert (prompt, good, bad) == ("\n\nHuman: Q", "Good answer", "Meh")
    assert meta["excess_turns"] == {"chosen": 0, "rejected": 3}


def test_hh_rejections(tmp_path):
    same = hh(("Human", "Q"), ("Assistant", "A"))
    path = write_jsonl(
        tmp_path / "hh.jsonl",
        [
            {"chosen": same, "rejected": same},
            {
                "chosen": hh(("Human", "Q1"), ("Assistant", "A")),
                "rejected": hh(("Human", "Q2"), ("Assistant", "A")),
            },
            {"chosen": same, "rejected": same + hh(("Human", "more?"), ("Assistant", "yes"))},
            {
                "chosen": hh(("Human", "Q"), ("Assistant", "A")),
                "rejected": hh(("Human", "Q"), ("Assistant", " ")),
            },
            {"chosen": "no markers at all", "rejected": same},
            {"chosen": same},
        ],
    )
    result = parse_hh(path)
    assert [(line(r), r.reason) for r in result.rejected] == [
        (1, "identical responses"),
        (2, "dialogues differ in a human turn"),
        (3, "no diverging assistant turn"),
        (4, "empty response"),
        (5, "not an HH dialogue"),
        (6, "missing field"),
    ]
    accounted(result, 6)


# ---------------------------------------------------------------------------------------------
# RM-Bench


def test_rm_bench_gives_nine_styled_pairs(tmp_path):
    record = {
        "id": 4,
        "subset": "alpacaeval",
        "prompt": "P",
        "chosen": ["c0", "c1", "c2"],
        "rejected": ["r0", "r1", "r2"],
    }
    path = tmp_path / "chat_filtered.json"
    path.write_text(
        json.dumps(
            [
                record,
                {**record, "rejected": ["r0", "r1"]},
                {**record, "chosen": ["c0", "", "c2"]},
                {**record, "rejected": ["r0", "c1", "r2"]},
            ],
            indent=4,
        )
    )
    result = parse_rm_bench(path)
    assert len(result.pairs) == 9
    styles = {(p.meta["chosen_style"], p.meta["rejected_style"]): p for p in result.pairs}
    assert set(styles) == {(i, j) for i in range(3) for j in range(3)}
    assert (*texts(styles[0, 2])[1:], styles[0, 2].subset) == ("c0", "r2", "alpacaeval")
    assert styles[0, 2].meta["id"] == 4
    assert [(r.reason, r.field) for r in result.rejected] == [
        ("not a list of 3 responses", "rejected"),
        ("empty response", "chosen[1]"),
        ("identical responses", "rejected[1]"),
    ]
    accounted(result, 4)


# ---------------------------------------------------------------------------------------------
# LLMBar


def test_llmbar_label_picks_chosen(tmp_path):
    path = tmp_path / "dataset.json"
    path.write_text(
        json.dumps(
            [
                {"input": "I", "output_1": "one", "output_2": "two", "label": 2},
                {"input": "I", "output_1": "one", "output_2": "two", "label": 1},
                {"input": "I", "output_1": "one", "output_2": "two", "label": 3},
                {"input": "I", "output_1": "one", "output_2": "two", "label": "1"},
                {"input": "I", "output_1": "one", "output_2": "two", "label": True},
                {"input": "I", "output_1": "one", "output_2": "two"},
            ],
            indent=2,
        )
    )
    result = parse_llmbar(path, subset="llmbar-natural")
    assert [(*texts(p)[1:], p.meta["label"]) for p in result.pairs] == [
        ("two", "one", 2),
        ("one", "two", 1),
    ]
    assert result.pairs[0].subset == "llmbar-natural"
    assert [(r.reason, r.value) for r in result.rejected] == [
        ("label outside {1, 2}", 3),
        ("label outside {1, 2}", "1"),
        ("label outside {1, 2}", True),
        ("missing field", None),
    ]
    accounted(result, 6)
    with pytest.raises(
        BadInput, match=r"dataset.json:\d+: label: label outside \{1, 2\} \(got 3\)"
    ):
        parse_llmbar(path, strict=True)


def test_a_record_equal_to_an_earlier_one_is_rejected_naming_it(tmp_path):
    """A duplicated record would give its pairs twice: it is a rejection naming the record it
    repeats (the same pair shown in the other order is another record, and kept)."""
    records = [
        {"input": "I", "output_1": "one", "output_2": "two", "label": 2},
        {"input": "J", "output_1": "one", "output_2": "two", "label": 1},
        {"label": 2, "output_2": "two", "output_1": "one", "input": "I"},
        {"input": "I", "output_1": "two", "output_2": "one", "label": 1},
    ]
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps(records))
    result = parse_llmbar(path, subset="llmbar-natural")
    assert [texts(p) for p in result.pairs] == [
        ("I", "two", "one"),
        ("J", "one", "two"),
        ("I", "two", "one"),
    ]
    assert [(r.reason, r.value) for r in result.rejected] == [
        ("duplicate record", "the same as record 1")
    ]
    with pytest.raises(
        BadInput, match=r"dataset.json:1: duplicate record \(got 'the same as record 1'\)"
    ):
        parse_llmbar(path, strict=True)
    hh = write_jsonl(
        tmp_path / "hh.jsonl",
        [{"chosen": "\n\nHuman: q\n\nAssistant: a", "rejected": "\n\nHuman: q\n\nAssistant: b"}]
        * 2,
    )
    result = parse_hh(hh)
    assert [(line(r), r.reason, r.value) for r in result.rejected] == [
        (2, "duplicate record", "the same as record 1")
    ]
    accounted(result, 2)


def test_parsers_by_name():
    assert PARSERS == {
        "pairs": parse_pairs,
        "hh": parse_hh,
        "rm-bench": parse_rm_bench,
        "llmbar": parse_llmbar,
    }


def test_docstring_examples_run():
    assert doctest.testmod(parsers).failed == 0


def test_judgebench_pairs_by_category_the_correct_response_chosen(tmp_path):
    from rmaudit.benchmark.pairs import parse_judgebench

    records = [
        {"source": "mmlu-pro-law", "question": "q1", "response_A": "a", "response_B": "b"},
        {"source": "livebench-reasoning", "question": "q2", "response_A": "c", "response_B": "d"},
        {"source": "livebench-math", "question": "q3", "response_A": "e", "response_B": "f"},
        {"source": "livecodebench", "question": "q4", "response_A": "g", "response_B": "h"},
        {"source": "other-set", "question": "q5", "response_A": "i", "response_B": "j"},
    ]
    labels = ["A>B", "B>A", "A>B", "B>A", "A>B"]
    path = tmp_path / "judgebench.jsonl"
    write_jsonl(
        path,
        [
            {**r, "label": label, "pair_id": str(i)}
            for i, (r, label) in enumerate(zip(records, labels, strict=True))
        ]
        + [{**records[0], "label": "A=B"}, {**records[0], "response_B": "a", "label": "A>B"}],
    )
    result = parse_judgebench(path)
    assert [p.subset for p in result.pairs] == [
        "Knowledge",
        "Reasoning",
        "Math",
        "Coding",
        "other-set",
    ]
    assert [texts(p)[1:] for p in result.pairs[:2]] == [("a", "b"), ("d", "c")]
    assert result.pairs[1].meta == {
        "pair_id": "1",
        "source": "livebench-reasoning",
        "label": "B>A",
        "line": 2,
    }
    assert [(line(r), r.reason) for r in result.rejected] == [
        (6, 'label neither "A>B" nor "B>A"'),
        (7, "identical responses"),
    ]
    with pytest.raises(BadInput, match=r"judgebench.jsonl:6: label: label neither"):
        parse_judgebench(path, strict=True)
