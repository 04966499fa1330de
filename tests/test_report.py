"""``rmaudit report``: PNGs of every stored curve with labelled axes and legends, and a
Markdown leaderboard that says what the DB says."""

from __future__ import annotations

import math
import sqlite3

import pytest

from _support import metric_rows, run_small_audit
from rmaudit.browse import open_for_reading, resolve_run
from rmaudit.formatting import format_value
from rmaudit.report import REPORT_NAME, build_figures
from rmaudit.results import load_summary

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def audit_db(tmp_path_factory):
    db = run_small_audit(tmp_path_factory.mktemp("report"))
    conn = sqlite3.connect(db)
    with conn:  # a calibration-style curve, as a later metric stores one: it must get a plot too
        conn.execute("""insert into curves select run_id, rm_key, 'calibration', 'reliability',
                        'reliability diagram', point, 'confidence', x, value, stderr, ci_low, ci_high
                        from curves where key = 'reta_curve'""")
    conn.close()
    return db


def figures(db):
    store = open_for_reading(db)
    try:
        return build_figures(load_summary(store, resolve_run(store, None)))
    finally:
        store.close()


def test_report_writes_a_png_per_curve_and_the_markdown(rmaudit, audit_db, tmp_path):
    out = tmp_path / "report"
    result = rmaudit("report", str(audit_db), "--out", str(out))
    assert result.code == 0, result.err
    pngs = {"reta-curve-reta_curve.png", "best-of-n-bon_curve.png", "calibration-reliability.png"}
    assert {p.name for p in out.iterdir()} == pngs | {REPORT_NAME}
    for name in pngs:
        assert (out / name).read_bytes()[:8] == PNG_MAGIC
        assert f"![{name.removesuffix('.png')}]({name})" in (out / REPORT_NAME).read_text()
    assert sorted(result.out.split()) == sorted(str(out / n) for n in pngs | {REPORT_NAME})


def test_every_axis_has_labels_and_a_legend_of_the_rms(audit_db):
    made = figures(audit_db)
    assert set(made) == {"reta-curve-reta_curve.png", "best-of-n-bon_curve.png",
                         "calibration-reliability.png"}
    for name, figure in made.items():
        for ax in figure.axes:
            assert ax.get_xlabel() and ax.get_ylabel(), name
            assert [t.get_text() for t in ax.get_legend().get_texts()] == ["honest", "length"], name
            assert len(ax.collections) == 2, name  # one stderr band per RM
    reta = made["reta-curve-reta_curve.png"].axes[0]
    assert "log₂ η" in reta.get_xlabel() and reta.get_ylabel().startswith("RETA")
    assert reta.lines[0].get_xdata()[0] == pytest.approx(1.0)  # η = 1/2 → −log2 η = 1
    by_n, by_kl = made["best-of-n-bon_curve.png"].axes
    assert by_n.get_xscale() == "log" and by_n.get_xlabel().startswith("n")
    assert by_kl.get_xlabel().startswith("KL")
    assert by_kl.lines[0].get_xdata()[-1] == pytest.approx(math.log(16) - 15 / 16)  # KL at n = N
    assert made["calibration-reliability.png"].axes[0].get_xlabel() == "confidence"


def parse_table(markdown: str) -> tuple[list[str], dict[str, list[str]]]:
    rows = [line for line in markdown.splitlines() if line.startswith("| ")]
    split = [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]
    return split[0], {row[0]: row[1:] for row in split[1:]}


def test_the_markdown_table_matches_the_stored_metrics(rmaudit, audit_db, tmp_path):
    assert rmaudit("report", str(audit_db), "--out", str(tmp_path)).code == 0
    markdown = (tmp_path / REPORT_NAME).read_text()
    assert "**SIMULATED.**" in markdown
    headers, table = parse_table(markdown)
    assert headers == ["reward model", "RETA(1/4) ↑", "BoN@4 ↑", "pairwise acc ↑"]
    column = {"reta@0.25": 0, "bon@4": 1, "pairwise_accuracy": 2}
    rows = metric_rows(audit_db)
    assert {label for label, *_ in rows} == set(table) == {"honest", "length"}
    for label, _, key, value, stderr in rows:
        assert table[label][column[key]] == f"{value:.4f} ± {stderr:.4f}"
        shown_value, shown_stderr = (float(x) for x in table[label][column[key]].split(" ± "))
        assert shown_value == pytest.approx(value, abs=5e-5)
        assert shown_stderr == pytest.approx(stderr, abs=5e-5)


def test_a_real_run_is_not_marked_simulated(rmaudit, audit_db, tmp_path):
    db = tmp_path / "real.db"
    source, target = sqlite3.connect(audit_db), sqlite3.connect(db)
    source.backup(target)
    with target:
        target.execute("update runs set simulated = 0")
    source.close(), target.close()
    assert rmaudit("report", str(db), "--out", str(tmp_path / "out")).code == 0
    assert "SIMULATED" not in (tmp_path / "out" / REPORT_NAME).read_text()


def test_format_value_leaves_missing_values_visible():
    assert format_value(float("nan"), 0.1) == "—"
    assert format_value(1.5, float("nan")) == "1.5000"


def test_run_option_takes_a_prefix_and_rejects_unknown_runs(rmaudit, audit_db, tmp_path):
    run_id = sqlite3.connect(audit_db).execute("select id from runs").fetchone()[0]
    assert rmaudit("report", str(audit_db), "--run", run_id[:6], "--out", str(tmp_path)).code == 0
    missing = rmaudit("report", str(audit_db), "--run", "zzzz", "--out", str(tmp_path / "x"))
    assert missing.code == 2 and "no such run" in missing.err and "'zzzz'" in missing.err


def test_results_across_rms_get_their_table_and_their_line(rmaudit, audit_db, tmp_path):
    db = tmp_path / "run-level.db"
    source, target = sqlite3.connect(audit_db), sqlite3.connect(db)
    source.backup(target)
    with target:  # a metric across RMs (scope = "run") stores its results under rm_key ''
        target.execute("""insert into metric_results (run_id, rm_key, metric, key, label, params,
                          value, stderr, ci_low, ci_high, higher_is_better)
                          select id, '', 'regret', 'kendall', 'Kendall τ', '{}', 0.5, 0.1, 0.3, 0.7, 1
                          from runs""")
        target.execute("""insert into curves select run_id, '', metric, key, label, point, x_label,
                          x, value, stderr, ci_low, ci_high from curves where key = 'reliability'
                          and rm_key = (select rm_key from run_reward_models where label = 'honest')""")
    source.close(), target.close()
    assert rmaudit("report", str(db), "--out", str(tmp_path / "out")).code == 0
    markdown = (tmp_path / "out" / REPORT_NAME).read_text()
    assert "## Across reward models" in markdown
    assert "| regret | Kendall τ | 0.5000 ± 0.1000 | [0.300, 0.700] |" in markdown
    legend = figures(db)["calibration-reliability.png"].axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["honest", "length", "across RMs"]
