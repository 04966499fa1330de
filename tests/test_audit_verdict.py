"""``rmaudit audit``'s verdict (a model must beat ``length``, ``random`` and chance, the ±
taken into account), its results file and JSON (value, ±, interval, n, skipped, data), and
its own default store.  Expected outcomes are recomputed here from the fixture's pairs."""

from __future__ import annotations

import csv
import hashlib
import json
import math
import shutil
import statistics
import subprocess
from pathlib import Path

import pytest
from test_audit import brute_accuracy, write_llmbar


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    """An audit writes its DB (by default rmaudit-audit.db) and its results file into the current
    folder."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def llmbar(tmp_path):
    data = tmp_path / "data"
    return data, write_llmbar(data)


def right_on(path: Path, pairs, right: set[int]) -> Path:
    """Scores (by text) that order pair i correctly exactly when i is in ``right``."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["prompt", "response", "score"])
        for i, (prompt, good, bad) in enumerate(pairs):
            writer.writerow([prompt, good, float(i in right)])
            writer.writerow([prompt, bad, float(i not in right)])
    return path


def mean_stderr(credits: list[float]) -> tuple[float, float]:
    return statistics.fmean(credits), statistics.stdev(credits) / math.sqrt(len(credits))


def expected_paired(model: list[float], bar: list[float]) -> str:
    """Above / below / within a baseline on the paired difference's 95% interval (Student's t
    over the pairs, each its own prompt here), recomputed from the per-pair credits."""
    from scipy import stats

    differences = [a - b for a, b in zip(model, bar, strict=True)]
    mean = statistics.fmean(differences)
    half = stats.t.ppf(0.975, len(differences) - 1) * statistics.stdev(differences)
    half /= math.sqrt(len(differences))
    return "above" if mean - half > 0 else "below" if mean + half < 0 else "within"


def expected_outcome(model: tuple[float, float], bar: tuple[float, float]) -> str:
    difference = model[0] - bar[0]
    margin = 1.96 * math.hypot(model[1], bar[1])
    return "above" if difference > margin else "below" if difference < -margin else "within"


def audit(rmaudit, data: Path, *models: str, extra: tuple[str, ...] = ()):
    done = rmaudit("audit", *models, "--suite", "llmbar", "--data-dir", str(data), *extra)
    assert done.code == 0, done.err
    return done


def test_a_model_above_length_but_not_above_chance_does_not_pass(rmaudit, llmbar, tmp_path):
    data, pairs = llmbar
    length_credits = [float(len(good) > len(bad)) for _, good, bad in pairs]
    length = mean_stderr(length_credits)
    right = set(range(7))  # 7 of 15: above length's value, below chance's, as on RM-Bench
    assert length[0] < len(right) / len(pairs) < 0.5
    credits = [float(i in right) for i in range(len(pairs))]
    model = mean_stderr(credits)
    scores = right_on(tmp_path / "middling.csv", pairs, right)
    done = audit(rmaudit, data, f"scores:{scores}", extra=("--json",))
    (suite,) = json.loads(done.out)["suites"]
    models = {m["label"]: m for m in suite["models"]}
    middling = models["middling"]
    assert middling["passes"] is False
    against = {c["bar"]: c for c in middling["against"]}
    assert list(against) == ["length", "random", "chance"]
    # length on the paired difference, chance on the model's own ±; random is no bar
    assert against["length"]["outcome"].startswith(expected_paired(credits, length_credits))
    difference = against["length"]["paired"]["difference"]
    assert difference == pytest.approx(model[0] - length[0], abs=1e-12)
    assert against["chance"]["outcome"].startswith(expected_outcome(model, (0.5, 0.0)))
    assert [c["required"] for c in middling["against"]] == [True, False, True]
    assert against["random"]["paired"] is not None
    shown = audit(rmaudit, data, f"scores:{scores}")
    line = next(x for x in shown.out.splitlines() if "middling does not pass" in x)
    assert line.startswith("⚠ llmbar:") and "chance (0.5000)" in line


def test_a_perfect_model_passes_every_bar(rmaudit, llmbar, tmp_path):
    data, pairs = llmbar
    scores = right_on(tmp_path / "oracle.csv", pairs, set(range(len(pairs))))
    done = audit(rmaudit, data, f"scores:{scores}", extra=("--json",))
    (suite,) = json.loads(done.out)["suites"]
    oracle = next(m for m in suite["models"] if m["label"] == "oracle")
    for comparison in oracle["against"]:
        bar = (comparison["value"], comparison["stderr"] or 0.0)
        assert comparison["outcome"] == expected_outcome((1.0, 0.0), bar) == "above"
    assert oracle["passes"] is True
    shown = audit(rmaudit, data, f"scores:{scores}")
    assert "✓ llmbar: oracle passes on accuracy 1.0000" in shown.out
    # the hint sends the user to their own model, never to a baseline
    (hint,) = [x for x in shown.out.splitlines() if x.startswith("Next:")]
    assert "is oracle;" in hint


def test_baselines_alone_state_the_bars_and_point_at_no_baseline(rmaudit, llmbar):
    data, pairs = llmbar
    done = audit(rmaudit, data, "length", "random")
    (hint,) = [x for x in done.out.splitlines() if x.startswith("Next:")]
    assert "length" not in hint and "random" not in hint
    length = mean_stderr([float(len(good) > len(bad)) for _, good, bad in pairs])
    assert (
        # ≈: an accuracy over 15 pairs this far from ½ has an approximate ±
        f"llmbar: a model passes by beating each of length {length[0]:.4f} ± {length[1]:.4f} ≈, "
        in done.out
    )
    # the highest bar is named (length or chance: random is a reference, not a bar)
    (suite,) = json.loads((Path.cwd() / "rmaudit-audit.results.json").read_text())["suites"]
    bars = {m["label"]: m["metrics"]["accuracy"]["value"] for m in suite["models"]}
    highest = max([("length", bars["length"]), ("chance", 0.5)], key=lambda bar: bar[1])[0]
    assert f"(the highest: {highest}) on accuracy" in done.out
    assert "is shown for reference, not a bar" in done.out


def test_every_audit_writes_its_results_file_with_the_numbers_behind_them(
    rmaudit, llmbar, tmp_path
):
    data, pairs = llmbar
    done = audit(rmaudit, data, "length", extra=("--details",))  # the closing table
    assert "results: rmaudit-audit.results.json" in done.err
    written = json.loads((tmp_path / "rmaudit-audit.results.json").read_text(encoding="utf-8"))
    (suite,) = written["suites"]
    length = next(m for m in suite["models"] if m["label"] == "length")["metrics"]["accuracy"]
    credits = [float(len(good) > len(bad)) for _, good, bad in pairs]
    value, stderr = mean_stderr(credits)
    assert length["value"] == pytest.approx(brute_accuracy(pairs))
    assert length["stderr"] == pytest.approx(stderr)
    assert length["ci_low"] <= value <= length["ci_high"]
    assert (length["n"], length["unit"], length["skipped"]) == (len(pairs), "pairs", 0)
    digests = {Path(f["location"]).resolve(): f["sha256"] for f in length["data"]["files"]}
    on_disk = {
        path.resolve(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in data.rglob("dataset.json")
    }
    assert digests == on_disk
    # the closing table keeps the ±
    assert f"accuracy {value:.4f} ± {stderr:.4f}" in done.out
    # with --report DIR the file goes beside the report, and --json prints the same
    report = tmp_path / "report"
    pytest.importorskip("matplotlib")
    again = audit(rmaudit, data, "length", extra=("--report", str(report), "--json"))
    beside = json.loads((report / "rmaudit-audit.results.json").read_text(encoding="utf-8"))
    assert beside == json.loads(again.out) and beside["suites"] == written["suites"]


def test_audits_have_their_own_default_store(rmaudit, llmbar, tmp_path):
    data, _ = llmbar
    done = audit(rmaudit, data, "length")
    assert (tmp_path / "rmaudit-audit.db").is_file()
    assert not (tmp_path / "rmaudit.db").exists()  # rmaudit run's default stays apart
    assert "stored in rmaudit-audit.db" in done.out


def write_rm_bench(data: Path) -> list[dict]:
    """Two records per RM-Bench file, styles of growing length, some rejected ones longer."""
    records = []
    for n, domain in enumerate(("chat", "code", "safety-refuse", "safety-response")):
        path = data / "rm-bench" / f"{domain}_filtered.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        mine = [
            {
                "id": i,  # ids repeat across files, as RM-Bench's do
                "subset": domain,
                "prompt": f"{domain} prompt {i}",
                "chosen": [f"good {domain} {i} " + "x" * (k * 5 + i) for k in range(3)],
                "rejected": [f"bad {domain} {i} " + "y" * (k * 4 + 3 * n) for k in range(3)],
            }
            for i in range(2)
        ]
        path.write_text(json.dumps(mine), encoding="utf-8")
        records += mine
    return records


def test_rm_bench_levels_carry_a_plus_minus_across_prompts(rmaudit, tmp_path):
    data = tmp_path / "data"
    records = write_rm_bench(data)
    done = rmaudit("audit", "length", "--suite", "rm-bench", "--data-dir", str(data), "--json")
    assert done.code == 0, done.err
    (suite,) = json.loads(done.out)["suites"]
    average = next(m for m in suite["models"] if m["label"] == "length")["metrics"]["average"]
    # each record's share of its 9 pairs that length gets right: a tie is a loss
    per_record = [
        statistics.fmean(
            float(len(good) > len(bad)) for good in r["chosen"] for bad in r["rejected"]
        )
        for r in records
    ]
    assert average["value"] == pytest.approx(statistics.fmean(per_record))
    assert average["stderr"] == pytest.approx(
        statistics.stdev(per_record) / math.sqrt(len(records))
    )
    assert (average["n"], average["unit"]) == (len(records), "prompts")


def test_each_db_keeps_its_own_results_file_and_replacing_another_audits_says_so(
    rmaudit, llmbar, tmp_path
):
    data, _ = llmbar
    (tmp_path / "one").mkdir()
    first = audit(rmaudit, data, "length", extra=("--db", "one/a.db"))
    second = audit(rmaudit, data, "random", extra=("--db", "one/b.db"))
    assert "results: one/a.results.json" in first.err and "note:" not in first.err
    assert "results: one/b.results.json" in second.err and "note:" not in second.err
    # two DBs in one folder: neither audit's numbers overwrite the other's
    for name, model in (("a", "length"), ("b", "random")):
        written = json.loads((tmp_path / "one" / f"{name}.results.json").read_text())
        assert written["db"] == f"one/{name}.db"
        assert model in {m["label"] for m in written["suites"][0]["models"]}
    again = audit(rmaudit, data, "length", extra=("--db", "one/a.db"))
    assert "note:" not in again.err  # the same audit's file: replaced without a word
    other = audit(
        rmaudit, data, "length", extra=("--db", "two.db", "--results", "one/a.results.json")
    )
    assert "note: one/a.results.json held the results of the audit in one/a.db" in other.err
    assert json.loads((tmp_path / "one" / "a.results.json").read_text())["db"] == "two.db"


def test_the_repository_keeps_results_files_out_of_git():
    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout")
    names = ["rmaudit-audit.results.json", "sub/a.results.json", "audit-results.json"]
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", *names],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout.split() == names
