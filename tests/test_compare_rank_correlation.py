"""``rmaudit compare DB RUN_A RUN_B --rank-correlation``: two runs' shared models ranked
against each other, checked against scipy's correlations of the stored accuracies."""

from __future__ import annotations

import json
import sqlite3

import pytest
from scipy.stats import kendalltau, spearmanr
from test_audit import write_llmbar
from test_compare import scores_file


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def audit_models(rmaudit, tmp_path, data, pairs, folder: str, right: dict[str, set[int]]):
    """One audit of a scores file per model (named by its key), right on the pairs given."""
    (tmp_path / folder).mkdir()
    files = [scores_file(tmp_path / folder / f"{m}.csv", pairs, r) for m, r in right.items()]
    done = rmaudit(
        "audit", *(f"scores:{f}" for f in files), "--suite", "llmbar", "--data-dir", str(data),
        "--db", "audit.db",
    )  # fmt: skip
    assert done.code == 0, done.err


def test_rank_correlation_of_two_runs_equals_scipys_on_their_accuracies(rmaudit, tmp_path):
    data = tmp_path / "data"
    pairs = write_llmbar(data)
    n = len(pairs)
    first = {"a": set(range(n)), "b": set(range(n - 4)), "c": set(range(5)), "d": {0}}
    second = {"a": set(range(n - 2)), "b": set(range(n)), "c": {0, 1}, "e": set(range(3))}
    audit_models(rmaudit, tmp_path, data, pairs, "first", first)
    audit_models(rmaudit, tmp_path, data, pairs, "second", second | {"dd": set(range(9))})
    runs = [r[0] for r in sqlite3.connect("audit.db").execute("select id from runs order by rowid")]
    done = rmaudit("compare", "audit.db", *runs, "--rank-correlation", "--same", "d=dd", "--json")
    assert done.code == 0, done.err
    body = json.loads(done.out)
    headline = body["agreements"][0]
    assert headline["models"] == ["a", "b", "c", "d = dd"]
    accuracy_first = [len(first[m]) / n for m in "abcd"]
    accuracy_second = [len(r) / n for r in (second["a"], second["b"], second["c"], range(9))]
    rho = spearmanr(accuracy_first, accuracy_second).statistic
    tau = kendalltau(accuracy_first, accuracy_second).statistic
    assert headline["spearman"]["value"] == pytest.approx(rho)
    assert headline["kendall"]["value"] == pytest.approx(tau)
    low, high = headline["spearman"]["ci_low"], headline["spearman"]["ci_high"]
    assert -1 <= low <= rho <= high <= 1
    assert headline["units"] == [n, n]
    shown = rmaudit("compare", "audit.db", *runs, "--rank-correlation", "--same", "d=dd")
    assert shown.code == 0, shown.err
    assert "Spearman" in shown.out and f"{rho:+.3f}" in shown.out


@pytest.mark.parametrize(
    ("extra", "field"),
    [(("--same", "nonsense"), "--same"), ((), "RUN")],
)
def test_rank_correlation_refuses_bad_options_in_one_line(rmaudit, tmp_path, extra, field):
    data = tmp_path / "data"
    pairs = write_llmbar(data)
    audit_models(rmaudit, tmp_path, data, pairs, "first", {"a": {0}, "b": {1, 2}, "c": set()})
    (run,) = [r[0] for r in sqlite3.connect("audit.db").execute("select id from runs")]
    runs = (run, run) if extra else (run,)
    done = rmaudit("compare", "audit.db", *runs, "--rank-correlation", *extra)
    assert done.code == 2
    assert field in done.err and len(done.err.strip().splitlines()) == 1
