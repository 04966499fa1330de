"""Parser limits in every reader of data files (issue 52, item 5): an integer of 400 digits
(past a float: OverflowError where it is taken as a number), one of 5,000 (past Python's limit
on converting one: ValueError), ``[`` × 100,000 (RecursionError) and a gzip whose body does not
inflate (zlib's "invalid distance too far back").  Each is exit code 2 and one line naming the
file and the problem, and nothing written: in scores files, step scores, RewardBench 2's
published scores, LLMBar's and JudgeBench's recorded judges, a suite's pair files and
``rmaudit import``."""

from __future__ import annotations

import gzip
import json
import random
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _prm_data import write_prmbench
from _rb2_data import write_rb2
from _recorded import (
    LLMBAR_SUBSETS,
    judgebench_outputs,
    judgebench_pairs,
    llmbar_dataset,
    llmbar_winners,
    write_evaluator,
)

#: a JSON value that stands for the number a payload puts in a record
NUMBER = "@NUMBER@"
PAYLOADS = {
    "an integer of 400 digits": ("1" * 400, "a number too large: an integer of 400 digits"),
    "an integer of 5,000 digits": ("1" * 5000, "a number too large: an integer of 5,000 digits"),
    "[ 100,000 times": (None, "nested deeper than the JSON parser reads"),
    "a corrupt gzip body": (None, "corrupt gzip data"),
}


def corrupt_gzip(data: bytes) -> bytes:
    """``data`` gzipped, then bytes of the compressed body flipped until it fails to inflate
    (not merely its checksum)."""
    packed = gzip.compress(data, mtime=0)
    rng = random.Random(0)
    while True:
        broken = bytearray(packed)
        for _ in range(5):
            broken[rng.randrange(20, len(broken) - 12)] ^= 0xFF
        try:
            gzip.decompress(bytes(broken))
        except zlib.error:
            return bytes(broken)
        except (OSError, EOFError):
            continue


def with_number(records: Any, put: Callable[[Any], None], number: str) -> str:
    """The records as JSON, where ``put`` set the sentinel, holding ``number``."""
    put(records)
    return json.dumps(records).replace(json.dumps(NUMBER), number)


def jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def payload_of(name: str, good: Callable[[str | None], str], lines: bool) -> bytes:
    """A gzipped file's bytes for a payload: ``good(number)`` is the file's text with the
    number in place (``good(None)``: as it was); nesting is a line of its own (JSON Lines, its
    second) or the whole file."""
    number, _ = PAYLOADS[name]
    if name == "a corrupt gzip body":
        return corrupt_gzip(good(None).encode())
    if number is not None:
        text = good(number)
    elif lines:
        first, *rest = good(None).splitlines()
        text = "\n".join([first, "[" * 100_000, *rest]) + "\n"
    else:
        text = "[" * 100_000
    return gzip.compress(text.encode())


# -- the readers: each writes its data under `root` and returns (argv, the file at fault) ----
Reader = Callable[[Path, str], tuple[list[str], Path]]


def scores_file(root: Path, payload: str) -> tuple[list[str], Path]:
    llmbar_dataset(root)
    rows = [{"prompt": "p", "response": f"r{i}", "score": 0.5 + i} for i in range(3)]

    def good(number: str | None) -> str:
        lines = [json.dumps(row) for row in rows]
        if number is not None:
            lines[1] = with_number(dict(rows[1]), lambda r: r.update(score=NUMBER), number)
        return "\n".join(lines) + "\n"

    path = root / "scores.jsonl.gz"
    path.write_bytes(payload_of(payload, good, lines=True))
    return [f"scores:{path}", "--suite", "llmbar"], path


def step_scores(root: Path, payload: str) -> tuple[list[str], Path]:
    write_prmbench(root, per_file=1)
    rows = [{"question": f"q{i}", "steps": ["a", "b"], "step_scores": [0.5, 0.25]} for i in (1, 2)]

    def good(number: str | None) -> str:
        lines = [json.dumps(row) for row in rows]
        if number is not None:
            edit = dict(rows[1], step_scores=[0.5, NUMBER])
            lines[1] = json.dumps(edit).replace(json.dumps(NUMBER), number)
        return "\n".join(lines) + "\n"

    path = root / "steps.jsonl.gz"
    path.write_bytes(payload_of(payload, good, lines=True))
    return [f"step-scores:{path}", "--suite", "prmbench"], path


def rb2_scores(root: Path, payload: str) -> tuple[list[str], Path]:
    pytest.importorskip("pyarrow")
    rows = write_rb2(root)
    columns = {
        "id": [row["id"] for row in rows],
        "subset": [row["subset"] for row in rows],
        "scores": [[1.0] * (len(row["chosen"]) + len(row["rejected"])) for row in rows],
    }

    def good(number: str | None) -> str:
        if number is None:
            return json.dumps(columns)
        return with_number(
            json.loads(json.dumps(columns)), lambda c: c["scores"][0].append(NUMBER), number
        )

    path = root / "rb2.json.gz"
    path.write_bytes(payload_of(payload, good, lines=False))
    return [f"rb2-scores:{path}", "--suite", "rewardbench-2"], path


def llmbar_judge(root: Path, payload: str) -> tuple[list[str], Path]:
    records = llmbar_dataset(root)
    path = Path()
    for folder, _ in LLMBAR_SUBSETS:
        winners = llmbar_winners(records[folder], 0)
        path = write_evaluator(root, folder, "Judge/Vanilla", records[folder], winners)
    results = json.loads(gzip.decompress(path.read_bytes()))

    def good(number: str | None) -> str:
        if number is None:
            return json.dumps(results)
        return with_number(
            json.loads(json.dumps(results)), lambda r: r[2].update(label=NUMBER), number
        )

    path.write_bytes(payload_of(payload, good, lines=False))
    return ["--recorded-judges", "--suite", "llmbar"], path


def judgebench_judge(root: Path, payload: str) -> tuple[list[str], Path]:
    pairs = judgebench_pairs(root)
    written = judgebench_outputs(root, pairs, "arena_hard", "judge-model")
    rows = [json.loads(line) for line in written.read_text().splitlines()]
    written.unlink()
    path = written.with_name(written.name + ".gz")

    def good(number: str | None) -> str:
        if number is None:
            return jsonl(rows)
        edit = json.loads(json.dumps(rows[1]))
        lines = jsonl(rows).splitlines()
        lines[1] = with_number(edit, lambda r: r["judgments"][0].update(decision=NUMBER), number)
        return "\n".join(lines) + "\n"

    path.write_bytes(payload_of(payload, good, lines=True))
    return ["--recorded-judges", "--suite", "judgebench"], path


def pair_file(root: Path, payload: str) -> tuple[list[str], Path]:
    """A suite's own pairs: HH-RLHF's JSON Lines (gzipped, as they lie)."""
    rows = [
        {
            "chosen": f"\n\nHuman: q{i}\n\nAssistant: yes",
            "rejected": f"\n\nHuman: q{i}\n\nAssistant: no",
        }
        for i in range(4)
    ]
    for part in ("helpful-base", "harmless-base"):
        folder = root / "hh-rlhf" / part
        folder.mkdir(parents=True)
        (folder / "test.jsonl.gz").write_bytes(gzip.compress(jsonl(rows).encode()))

    def good(number: str | None) -> str:
        if number is None:
            return jsonl(rows)
        lines = jsonl(rows).splitlines()
        lines[1] = with_number(dict(rows[1]), lambda r: r.update(extra=NUMBER), number)
        return "\n".join(lines) + "\n"

    path = root / "hh-rlhf/harmless-base/test.jsonl.gz"
    path.write_bytes(payload_of(payload, good, lines=True))
    return ["length", "--suite", "hh"], path


READERS: dict[str, Reader] = {
    "scores file": scores_file,
    "step scores": step_scores,
    "RewardBench 2 scores": rb2_scores,
    "LLMBar recorded judge": llmbar_judge,
    "JudgeBench outputs": judgebench_judge,
}


@pytest.mark.parametrize("payload", list(PAYLOADS))
@pytest.mark.parametrize("reader", list(READERS))
def test_a_parser_limit_in_an_audit_s_file_is_one_line_naming_it(
    reader, payload, rmaudit, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    argv, path = READERS[reader](data, payload)
    db = tmp_path / "a.db"
    done = rmaudit("audit", *argv, "--data-dir", str(data), "--db", str(db))
    assert done.code == 2, done.err
    (line,) = done.err.strip().splitlines()
    assert str(path) in line and PAYLOADS[payload][1] in line, line
    assert not db.exists()


@pytest.mark.parametrize("payload", list(PAYLOADS))
def test_a_parser_limit_in_a_suite_s_pairs_is_a_rejected_line_or_one_line(
    payload, rmaudit, tmp_path, monkeypatch
):
    """A pair file's line that does not parse is a rejected record, counted and named, as any
    malformed line is (benchmark/pairs/parsers.py); a file that does not inflate stops."""
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    argv, path = pair_file(data, payload)
    done = rmaudit("audit", *argv, "--data-dir", str(data), "--db", str(tmp_path / "a.db"))
    reason = PAYLOADS[payload][1]
    if payload == "a corrupt gzip body":
        assert done.code == 2, done.err
        (line,) = done.err.strip().splitlines()
        assert str(path) in line and reason in line, line
    else:
        assert done.code == 0, done.err
        assert "1 rejected (stored in the failures table)" in done.err
        assert f"{path}:2: malformed record (got '{reason}')" in done.err


HEADER = {
    "format": "rmaudit-benchmark",
    "format_version": 1,
    "benchmark": {"policy_key": "p", "oracle_key": "o", "title": "t"},
}
RECORD = {
    "prompt": {"text": "Q?", "meta": {}},
    "responses": [
        {"sample_index": i, "text": f"A{i}", "meta": {}, "label": {"score": 1.0, "samples": [1.0]}}
        for i in range(2)
    ],
}


@pytest.mark.parametrize("payload", list(PAYLOADS))
def test_a_parser_limit_in_an_import_file_is_one_line_naming_it(payload, rmaudit, tmp_path):
    def good(number: str | None) -> str:
        record = json.dumps(RECORD)
        if number is not None:
            edit = json.loads(record)
            record = with_number(
                edit, lambda r: r["responses"][0]["label"].update(score=NUMBER), number
            )
        return json.dumps(HEADER) + "\n" + record + "\n"

    path = tmp_path / "bench.jsonl.gz"
    path.write_bytes(payload_of(payload, good, lines=True))
    db = tmp_path / "a.db"
    done = rmaudit("import", str(path), "--db", str(db))
    assert done.code == 2, done.err
    (line,) = done.err.strip().splitlines()
    assert str(path) in line and PAYLOADS[payload][1] in line, line
    assert not db.exists()


def test_a_csv_field_past_the_csv_module_s_limit_is_one_line_naming_it(rmaudit, tmp_path):
    data = tmp_path / "data"
    llmbar_dataset(data)
    path = tmp_path / "scores.csv"
    path.write_text("prompt,response,score\np,r,1.0\n" + "x" * 200_000 + ",r,2.0\n")
    db = tmp_path / "a.db"
    done = rmaudit(
        "audit",
        f"scores:{path}",
        "--suite",
        "llmbar",
        "--data-dir",
        str(data),
        "--db",
        str(db),
        "--results",
        str(tmp_path / "results.json"),
    )
    assert done.code == 2, done.err
    (line,) = done.err.strip().splitlines()
    assert f"{path}:3: invalid CSV (field larger than field limit" in line, line
    assert not db.exists()
