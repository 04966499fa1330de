"""``rmaudit audit``: suites built into recipes, their data found under --data-dir or in a
Hugging Face cache prepared here (offline), scores from a file computed independently.

The fixtures are tiny files in the layout of rmaudit's shared data folder; nothing here reads
that folder or reaches the hub."""

from __future__ import annotations

import gzip
import hashlib
import json
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from rmaudit.components.keys import prompt_id, text_response_id
from rmaudit.errors import BadInput
from rmaudit.suites import SUITES
from rmaudit.suites.build import to_toml
from rmaudit.suites.data import locate
from rmaudit.suites.model_arguments import model_tables

LLMBAR_FOLDERS = (
    "Natural",
    "Adversarial/Neighbor",
    "Adversarial/GPTInst",
    "Adversarial/GPTOut",
    "Adversarial/Manual",
)


def llmbar_records(folder: str) -> list[dict]:
    """Three pairs per subset; label alternates, lengths differ so a length RM is not 50%."""
    return [
        {
            "input": f"{folder} question {i}?",
            "output_1": "yes" + " indeed" * i,
            "output_2": f"a longer answer number {i} " * (1 + i % 2),
            "label": 1 + i % 2,
        }
        for i in range(3)
    ]


def write_llmbar(root: Path) -> list[tuple[str, str, str]]:
    """The fixture mirror; returns every (prompt, chosen, rejected)."""
    pairs = []
    for folder in LLMBAR_FOLDERS:
        path = root / "llmbar" / "LLMBar" / folder / "dataset.json"
        path.parent.mkdir(parents=True)
        records = llmbar_records(folder)
        path.write_text(json.dumps(records), encoding="utf-8")
        for r in records:
            good, bad = (
                (r["output_1"], r["output_2"])
                if r["label"] == 1
                else (r["output_2"], r["output_1"])
            )
            pairs.append((r["input"], good, bad))
    return pairs


def length_scores(path: Path, pairs: list[tuple[str, str, str]]) -> Path:
    """A scores file (rmaudit ids, and the texts) giving each response its length in characters."""
    rows = {}
    for prompt, *responses in pairs:
        for text in responses:
            rid = text_response_id(prompt_id(prompt), text)
            rows[rid] = {
                "response_id": rid,
                "prompt": prompt,
                "response": text,
                "score": float(len(text)),
            }
    path.write_text("".join(json.dumps(r) + "\n" for r in rows.values()), encoding="utf-8")
    return path


def brute_accuracy(pairs: list[tuple[str, str, str]]) -> float:
    """RewardBench's accuracy of the length scorer: a tie is a loss."""
    return sum(len(good) > len(bad) for _, good, bad in pairs) / len(pairs)


def audit_llmbar(rmaudit, data: Path, *args: str, db: Path | None = None):
    """``rmaudit audit ARGS --suite llmbar --data-dir DATA [--db DB]``: the audit most tests
    here run, on the fixture's LLMBar files."""
    where = ["--db", str(db)] if db is not None else []
    return rmaudit("audit", *args, "--suite", "llmbar", "--data-dir", str(data), *where)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    """An audit writes its DB and results file into the current folder: keep them in tmp_path."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def llmbar(tmp_path):
    data = tmp_path / "data"
    pairs = write_llmbar(data)
    return data, pairs, length_scores(tmp_path / "lengths.jsonl", pairs)


def test_llmbar_suite_accuracy_matches_brute_force_and_rerun_scores_nothing(
    rmaudit, llmbar, tmp_path
):
    data, pairs, scores = llmbar
    db = tmp_path / "audit.db"
    first = audit_llmbar(rmaudit, data, f"scores:{scores}", "--json", db=db)
    assert first.code == 0, first.err
    result = json.loads(first.out)
    (suite,) = result["suites"]
    # the fixture's files are not LLMBar's: the run says so instead of naming LLMBar's commit
    origin = SUITES["llmbar"].origin
    assert suite["suite"] == "llmbar"
    assert suite["data"]["version"] == f"local files under {data.resolve()}, not those of {origin}"
    model = next(m for m in suite["models"] if m["label"] == "lengths")
    assert model["metrics"]["accuracy"]["value"] == pytest.approx(brute_accuracy(pairs))
    assert "new work: 15 pairs" in first.err
    again = audit_llmbar(rmaudit, data, f"scores:{scores}", "--json", db=db)
    assert again.code == 0, again.err
    assert "new work: none" in again.err
    assert json.loads(again.out)["suites"][0]["models"] == suite["models"]


def test_printed_recipe_runs_as_a_recipe_with_the_same_numbers(rmaudit, llmbar, tmp_path):
    data, pairs, scores = llmbar
    printed = audit_llmbar(rmaudit, data, f"scores:{scores}", "--print-recipe")
    assert printed.code == 0, printed.err
    recipe = tmp_path / "llmbar.toml"
    recipe.write_text(printed.out, encoding="utf-8")
    assert not (tmp_path / "rmaudit.db").exists()  # printing runs nothing
    ran = rmaudit("run", str(recipe), "--db", str(tmp_path / "by-recipe.db"))
    assert ran.code == 0, ran.err
    row = next(line for line in ran.out.splitlines() if line.startswith("│ lengths"))
    assert f"{brute_accuracy(pairs):.4f}" in row


def test_default_runs_every_suite_with_data_and_skips_the_rest(
    rmaudit, llmbar, tmp_path, monkeypatch
):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    data, _, scores = llmbar
    done = rmaudit(
        "audit",
        f"scores:{scores}",
        "--data-dir",
        str(data),
        "--db",
        str(tmp_path / "a.db"),
        "--json",
    )
    assert done.code == 0, done.err
    assert [s["suite"] for s in json.loads(done.out)["suites"]] == ["llmbar"]
    for name in ("rewardbench", "rm-bench", "hh"):
        assert f"skipped suite {name}: no data found" in done.err


def test_missing_data_of_a_named_suite_is_one_line_and_exit_2(
    rmaudit, llmbar, tmp_path, monkeypatch
):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    _, _, scores = llmbar
    db = tmp_path / "none.db"
    for suite, fetch in (
        ("rm-bench", "github.com/THU-KEG/RM-Bench"),
        ("rewardbench", "hf.co/datasets/allenai/reward-bench"),
    ):
        done = rmaudit(
            "audit",
            f"scores:{scores}",
            "--suite",
            "llmbar",
            "--suite",
            suite,
            "--data-dir",
            str(tmp_path / "data"),
            "--db",
            str(db),
        )
        assert done.code == 2
        assert len(done.err.strip().splitlines()) == 1
        assert f"no data for suite {suite!r}" in done.err and fetch in done.err
        assert not db.exists()  # checked before anything ran, the llmbar suite included


def test_no_data_found_without_data_dir_says_to_pass_one(rmaudit, llmbar, tmp_path, monkeypatch):
    """Forgetting --data-dir names --data-dir first (not the first suite's download), and the
    folder an earlier audit in the DB read; an empty --data-dir is named as the place looked."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    data, _, scores = llmbar
    db = tmp_path / "a.db"
    done = rmaudit("audit", "length", "--db", str(db))
    assert done.code == 2 and not db.exists()
    (line,) = done.err.strip().splitlines()
    assert line.startswith("Error: no suite's data was found: pass --data-dir DATA_DIR"), line
    assert "rewardbench" not in line
    assert audit_llmbar(rmaudit, data, f"scores:{scores}", db=db).code == 0
    done = rmaudit("audit", "length", "--db", str(db))
    (line,) = done.err.strip().splitlines()
    assert line.endswith(f"an audit in {db} read {data}: --data-dir {data}"), line
    empty = tmp_path / "empty"
    empty.mkdir()
    done = rmaudit("audit", "length", "--data-dir", str(empty), "--db", str(db))
    (line,) = done.err.strip().splitlines()
    assert f"--data-dir: no suite's data was found under {empty}" in line, line


@pytest.mark.parametrize(
    "model, said",
    [
        ("/no/such/model", "no such folder; not a Hugging Face id"),
        ("./no-such-folder", "no such folder; not a Hugging Face id"),
        ("lenght", "no such folder or baseline; did you mean length?"),
        ("randon", "no such folder or baseline; did you mean random?"),
    ],
)
def test_a_model_that_is_not_there_is_one_line_naming_it_and_nothing_is_written(
    model, said, rmaudit, llmbar, tmp_path
):
    data, _, _ = llmbar
    db = tmp_path / "audit.db"
    done = audit_llmbar(rmaudit, data, model, db=db)
    assert done.code == 2, done
    (line,) = done.err.splitlines()
    assert line.startswith(f"Error: MODEL: {said}") and line.endswith(f"(got {model!r})"), line
    assert not db.exists()


@pytest.mark.parametrize("stored", ["as pinned", "gzipped", "edited"])
def test_a_mirror_is_recorded_as_the_pinned_source_only_with_its_files(stored, tmp_path):
    """A suite whose pinned files are the fixture's (their SHA-256, computed here): found as
    they are, or gzipped, the run records the pinned source; edited, the folder."""
    data = tmp_path / "data"
    write_llmbar(data)
    llmbar = SUITES["llmbar"]
    files = tuple(
        replace(f, sha256=hashlib.sha256((data / f.mirror).read_bytes()).hexdigest())
        for f in llmbar.files
    )
    natural = data / files[0].mirror
    if stored == "gzipped":
        natural.with_name(natural.name + ".gz").write_bytes(gzip.compress(natural.read_bytes()))
        natural.unlink()
        files = (replace(files[0], mirror=files[0].mirror + ".gz"), *files[1:])
    elif stored == "edited":
        natural.write_text(natural.read_text().replace("question", "query"))

    located = locate(replace(llmbar, files=files), data, download=False)

    expected = {
        "as pinned": llmbar.origin,
        "gzipped": llmbar.origin,
        "edited": f"local files under {data.resolve()}, not those of {llmbar.origin}",
    }
    assert located.version == expected[stored]


def rewardbench_cache(cache: Path, commit: str) -> list[tuple[str, str, str]]:
    """A Hugging Face cache holding allenai/reward-bench's filtered split at ``commit``."""
    pa = pytest.importorskip("pyarrow")
    parquet = pytest.importorskip("pyarrow.parquet")
    repo = cache / "datasets--allenai--reward-bench"
    path = repo / "snapshots" / commit / "data" / "filtered-00000-of-00001.parquet"
    path.parent.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    rows = [
        {
            "prompt": f"q{i}",
            "chosen": "good " * (1 + i % 3),
            "rejected": "bad " * (2 - i % 2),
            "subset": subset,
            "id": i,
        }
        for i, subset in enumerate(
            [
                "alpacaeval-easy",
                "mt-bench-hard",
                "refusals-dangerous",
                "math-prm",
                "hep-python",
                "llmbar-natural",
            ]
            * 2
        )
    ]
    parquet.write_table(pa.Table.from_pylist(rows), path)
    return [(r["prompt"], r["chosen"], r["rejected"]) for r in rows]


def test_rewardbench_from_the_hub_cache_offline_records_the_commit(rmaudit, tmp_path, monkeypatch):
    commit = "0123456789abcdef0123456789abcdef01234567"
    pairs = rewardbench_cache(tmp_path / "hub", commit)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    scores = length_scores(tmp_path / "lengths.jsonl", pairs)
    done = rmaudit(
        "audit",
        f"scores:{scores}",
        "--suite",
        "rewardbench",
        "--db",
        str(tmp_path / "rb.db"),
        "--json",
    )
    assert done.code == 0, done.err
    (suite,) = json.loads(done.out)["suites"]
    assert suite["data"]["version"] == f"hf.co/datasets/allenai/reward-bench@{commit}"
    (model,) = [m for m in suite["models"] if m["label"] == "lengths"]
    assert model["metrics"]["accuracy"]["value"] == pytest.approx(brute_accuracy(pairs))
    assert 0 <= model["metrics"]["section score"]["value"] <= 1


def test_list_suites_is_a_line_per_suite_cut_at_a_word_and_one_suite_has_its_details(
    rmaudit, llmbar, monkeypatch, tmp_path
):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("COLUMNS", "80")
    data, _, _ = llmbar
    done = rmaudit("audit", "--list-suites", "--data-dir", str(data))
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    rows = {line.split()[0]: line for line in lines if line.startswith("  ")}
    assert list(rows) == list(SUITES) and len(lines) == len(SUITES) + 2
    assert max(len(line) for line in lines) <= 80
    for name, suite in SUITES.items():
        found, title = rows[name].split(maxsplit=2)[1:]
        assert found == ("found" if name == "llmbar" else "hub" if suite.hub else "no")
        # the title whole, or cut after a whole word
        assert title == suite.title or (
            title.endswith("…")
            and suite.title.startswith(title[:-1])
            and suite.title[len(title) - 1] in " ,;:"
        ), title
    detail = rmaudit(
        "audit",
        "--list-suites",
        "--suite",
        "llmbar",
        "--suite",
        "rm-bench",
        "--data-dir",
        str(data),
    )
    assert detail.code == 0, detail.err
    text = " ".join(detail.out.split())  # the details wrap at words
    for name in ("llmbar", "rm-bench"):
        suite = SUITES[name]
        assert f"{name}: {suite.title}" in text and f"size: {suite.size}" in text
        assert f"measures: {suite.measures}" in text
    # llmbar's data is found there (a path longer than its column is folded, not cut)
    assert f"found:{data}" in "".join(detail.out.split())
    assert "rewardbench:" not in text


def test_list_suites_without_data_dir_names_the_folder_an_audit_in_the_db_read(
    rmaudit, llmbar, monkeypatch, tmp_path
):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("COLUMNS", "1000")  # wide enough for a row on one line: its path whole
    data, _, scores = llmbar
    db = tmp_path / "audit.db"
    before = rmaudit("audit", "--list-suites", "--db", str(db))
    assert before.code == 0 and not db.exists()
    assert "llmbar           no" in before.out
    ran = audit_llmbar(rmaudit, data, f"scores:{scores}", db=db)
    assert ran.code == 0, ran.err

    listed = rmaudit("audit", "--list-suites", "--db", str(db))
    named = rmaudit(
        "audit", "--list-suites", "--suite", "llmbar", "--suite", "rm-bench", "--db", str(db)
    )

    assert listed.code == 0 and named.code == 0, listed.err + named.err
    assert "llmbar           earlier" in listed.out and "rm-bench         no" in listed.out
    found = [line for line in named.out.splitlines() if "found:" in line]
    assert f"under {data.resolve()}, which an audit in {db} read: pass --data-dir" in found[0]
    assert "no: fetch" in found[1]  # its data is in no folder an audit read


def test_report_writes_each_suite_and_an_index(rmaudit, llmbar, tmp_path):
    pytest.importorskip("matplotlib")
    data, _, scores = llmbar
    out = tmp_path / "report"
    done = audit_llmbar(
        rmaudit, data, f"scores:{scores}", "--report", str(out), db=tmp_path / "r.db"
    )
    assert done.code == 0, done.err
    assert (out / "llmbar" / "report.md").is_file()
    index = (out / "report.md").read_text(encoding="utf-8")
    assert "(llmbar/report.md)" in index and "`lengths`" in index
    page = (out / "report.html").read_text(encoding="utf-8")  # every suite on one page to share
    assert "<p class=suite>suite llmbar</p>" in page and page.count("<section ") == 1


def test_model_arguments_become_reward_model_tables(tmp_path):
    folder = tmp_path / "my-rm"
    folder.mkdir()
    tables = model_tables(
        [str(folder), "org/rm", str(folder)],
        {"max_length": 64, "dtype": None, "trust_remote_code": False},
        None,
    )
    assert [t["label"] for t in tables[:3]] == ["my-rm", "org/rm", "my-rm (2)"]
    assert tables[0] == {
        "label": "my-rm",
        "name": "hf-classifier",
        "model": str(folder.resolve()),
        "max_length": 64,
    }
    (dpo,) = model_tables(["org/policy"], {}, "org/ref")[:1]
    assert dpo["name"] == "dpo-implicit" and dpo["reference"] == "org/ref"
    with pytest.raises(BadInput, match="--max-length"):
        model_tables(["length"], {"max_length": 64}, None)
    with pytest.raises(BadInput, match="scores file not found"):
        model_tables([f"scores:{tmp_path / 'nope.jsonl'}"], {}, None)


def test_toml_writer_round_trips_what_a_suite_recipe_holds():
    table = {
        "title": 'quotes " and \\ and\nnewline, ünïcode ☃',
        "batch_size": 8,
        "pairs": {
            "source": {
                "name": "combined-pairs",
                "sample": None,
                "ratio": 0.25,
                "sources": [{"name": "a", "flag": True}, {"name": "b", "xs": [1, 2]}],
            },
            "shift": {"perturber": {"name": "word-perturb"}},
        },
        "reward_models": [{"label": "odd key", "name": "x", "weird-key.x": 1}],
    }
    parsed = tomllib.loads(to_toml(table))
    del table["pairs"]["source"]["sample"]  # None is left out: TOML has no null
    assert parsed == table


def test_combined_pairs_samples_each_source_reproducibly(tmp_path):
    from rmaudit.recipe import component_spec

    pairs_file = tmp_path / "p.jsonl"
    pairs_file.write_text(
        "".join(
            json.dumps({"prompt": f"p{i}", "chosen": f"c{i}", "rejected": f"r{i}"}) + "\n"
            for i in range(20)
        )
    )
    raw = {
        "name": "combined-pairs",
        "sample": 5,
        "seed": 3,
        "sources": [
            {"name": "pairs-file", "path": str(pairs_file)},
            {"name": "pairs-file", "path": str(pairs_file)},
        ],
    }
    spec = component_spec("prompt_source", raw, field="pairs.source", file=None, base_dir=None)
    loaded = spec.build().load_pairs(None)
    first, second = loaded.pairs[:5], loaded.pairs[5:]
    assert len(loaded.pairs) == 10 and loaded.records == 40
    indices = [int(p.prompt.text[1:]) for p in first]
    assert indices == sorted(indices) and len(set(indices)) == 5  # file order, no repeats
    assert [p.prompt.text for p in first] != [p.prompt.text for p in second]  # drawn apart
    assert [p.prompt.text for p in spec.build().load_pairs(None).pairs] == [
        p.prompt.text for p in loaded.pairs
    ]
    with pytest.raises(BadInput, match="not a pair source that reads its own data"):
        component_spec(
            "prompt_source",
            {"name": "combined-pairs", "sources": ["benchmark-pairs"]},
            field="pairs.source",
            file=None,
            base_dir=None,
        )


def test_pair_files_may_be_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    parquet = pytest.importorskip("pyarrow.parquet")
    from rmaudit.benchmark.pairs import parse_pairs

    path = tmp_path / "pairs.parquet"
    parquet.write_table(
        pa.Table.from_pylist(
            [
                {"prompt": "p", "chosen": "c", "rejected": "r"},
                {"prompt": "q", "chosen": "", "rejected": "r"},
            ]
        ),
        path,
    )
    result = parse_pairs(path)
    assert [(p.prompt.text, p.chosen.text) for p in result.pairs] == [("p", "c")]
    assert [(r.where, r.reason) for r in result.rejected] == [(f"{path}:2", "empty response")]
    (tmp_path / "bad.parquet").write_bytes(b"not parquet")
    with pytest.raises(BadInput, match="cannot read the Parquet file"):
        parse_pairs(tmp_path / "bad.parquet")


def text_scores(path: Path, pairs: list[tuple[str, str, str]], score) -> Path:
    """A CSV of prompt, response, score — natural keys only, no ids; texts carry the
    whitespace and line endings that matching by text forgives."""
    import csv

    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["prompt", "response", "score"])
        for prompt, good, bad in pairs:
            writer.writerow([f"  {prompt}\r\n", good, score(good, True)])
            writer.writerow([prompt, f"{bad}\n", score(bad, False)])
    return path


def audit_json(rmaudit, scores: Path, data: Path, db: Path) -> tuple[dict, str]:
    done = audit_llmbar(rmaudit, data, f"scores:{scores}", "--json", db=db)
    assert done.code == 0, done.err
    (suite,) = json.loads(done.out)["suites"]
    return {m["label"]: m for m in suite["models"]}, done.err


def test_scores_keyed_by_prompt_and_response_text(rmaudit, llmbar, tmp_path):
    data, pairs, _ = llmbar
    scores = text_scores(tmp_path / "by-text.csv", pairs, lambda text, _: float(len(text)))
    models, _ = audit_json(rmaudit, scores, data, tmp_path / "t.db")
    assert models["by-text"]["metrics"]["accuracy"]["value"] == pytest.approx(brute_accuracy(pairs))
    # the same scores under --match rmaudit-id: the file has no response_id column
    done = audit_llmbar(
        rmaudit, data, f"scores:{scores}", "--match", "rmaudit-id", db=tmp_path / "ids.db"
    )
    assert done.code == 2 and "response_id" in done.err


def test_a_model_worse_than_length_is_flagged(rmaudit, llmbar, tmp_path):
    data, pairs, _ = llmbar
    assert brute_accuracy(pairs) > 0  # length gets some pairs right
    scores = text_scores(tmp_path / "backwards.csv", pairs, lambda _, chosen: float(not chosen))
    models, _ = audit_json(rmaudit, scores, data, tmp_path / "f.db")
    assert models["backwards"]["metrics"]["accuracy"]["value"] == 0.0
    assert models["length"]["metrics"]["accuracy"]["value"] == pytest.approx(brute_accuracy(pairs))
    assert models["backwards"]["passes"] is False
    assert models["length"]["baseline"] and models["length"]["passes"] is None
    shown = audit_llmbar(rmaudit, data, f"scores:{scores}", db=tmp_path / "f.db")
    assert "⚠ llmbar: backwards does not pass on accuracy 0.0000" in shown.out
    assert "new work: none" in shown.err


def test_baselines_sit_beside_every_model_once(rmaudit, llmbar, tmp_path):
    data, _, scores = llmbar
    done = audit_llmbar(
        rmaudit, data, "random", "length", f"scores:{scores}", "--json", db=tmp_path / "b.db"
    )
    assert done.code == 0, done.err
    (suite,) = json.loads(done.out)["suites"]
    assert [(m["label"], m["baseline"]) for m in suite["models"]] == [
        ("random", True),
        ("length", True),
        ("lengths", False),
    ]
    assert [t["label"] for t in model_tables([], {}, None)] == ["length", "random"]
