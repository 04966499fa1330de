"""``rmaudit report``: PNGs of every kind of stored curve with labelled axes, one colour per RM
and legends off the data, and a Markdown report that says what the DB says."""

from __future__ import annotations

import math
import re
import sqlite3
import textwrap

import numpy as np
import pytest
from _support import metric_rows, run_small_audit
from matplotlib.backends.backend_agg import FigureCanvasAgg
from scipy import integrate, stats

from rmaudit.display.formatting import format_value
from rmaudit.recipe import load_recipe
from rmaudit.report import REPORT_NAME, build_figures, default_out_dir
from rmaudit.results.run_index import open_for_reading, resolve_run
from rmaudit.results.summary import load_summary
from rmaudit.run import Runner
from rmaudit.store import Store

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

#: a benchmark with both best-of-n ranks, and pairs from it with a reliability diagram
FULL_RECIPE = """
title = "report audit"
[prompts.source]
name = "simulated-helpful"
[prompts.sampler]
name = "random"
k = 10
[responses]
per_prompt = 16
[responses.policy]
name = "simulated-policy"
[oracle]
name = "simulated-judge"
samples = 1
[pairs.source]
name = "benchmark-pairs"
[[reward_models]]
label = "honest"
name = "simulated-rm"
seed = 1
[[reward_models]]
label = "length"
name = "simulated-rm"
bias = "length"
seed = 2
[[reward_models]]
label = "weak"
name = "simulated-rm"
signal = 0.4
seed = 3
[[metrics]]
name = "reta-curve"
[[metrics]]
name = "best-of-n"
[[metrics]]
name = "best-of-n"
label = "2nd-best-of-n"
rank = 2
[[metrics]]
name = "calibration"
"""


@pytest.fixture(scope="module")
def audit_db(tmp_path_factory):
    db = run_small_audit(tmp_path_factory.mktemp("report"))
    conn = sqlite3.connect(db)
    with conn:  # a calibration-style curve, as a later metric stores one: it must get a plot too
        conn.execute("""insert into curves select run_id, rm_key, 'calibration', 'reliability',
                        'reliability diagram', point, 'confidence', x, value, stderr, ci_low,
                        ci_high from curves where key = 'reta_curve'""")
    conn.close()
    return db


@pytest.fixture(scope="module")
def full_db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("full-report")
    recipe = folder / "full.toml"
    recipe.write_text(textwrap.dedent(FULL_RECIPE), encoding="utf-8")
    db = folder / "full.db"
    store = Store.open(db)
    try:
        Runner(load_recipe(recipe), store).run()
    finally:
        store.close()
    return db


def figures(db):
    store = open_for_reading(db)
    try:
        return build_figures(load_summary(store, resolve_run(store, None)), store)
    finally:
        store.close()


def drawn(figure):
    """The figure laid out and drawn (legend and axes positions are final)."""
    FigureCanvasAgg(figure).draw()
    return figure


def legend_texts(figure) -> list[str]:
    (legend,) = figure.legends
    return [t.get_text() for t in legend.get_texts()]


def test_report_writes_a_png_per_kind_of_curve_and_the_markdown(rmaudit, audit_db, tmp_path):
    out = tmp_path / "report"
    result = rmaudit("report", str(audit_db), "--out", str(out))
    assert result.code == 0, result.err
    pngs = {"reta-curve.png", "best-of-n.png", "reliability.png"}  # named after what they show
    assert {p.name for p in out.iterdir()} == pngs | {REPORT_NAME}
    for name in pngs:
        assert (out / name).read_bytes()[:8] == PNG_MAGIC
        assert f"![{name.removesuffix('.png')}]({name})" in (out / REPORT_NAME).read_text()
    assert sorted(result.out.split()) == sorted(str(out / n) for n in pngs | {REPORT_NAME})


def test_the_default_folder_is_named_after_the_db(rmaudit, audit_db, tmp_path):
    db = tmp_path / "second audit.db"
    source, target = sqlite3.connect(audit_db), sqlite3.connect(db)
    source.backup(target)
    source.close(), target.close()
    assert default_out_dir(db) == tmp_path / "second audit-report"
    result = rmaudit("report", str(db))
    assert result.code == 0, result.err
    assert (tmp_path / "second audit-report" / REPORT_NAME).exists()


def test_every_axis_has_labels_and_a_legend_of_the_rms(audit_db):
    made = figures(audit_db)
    assert set(made) == {"reta-curve.png", "best-of-n.png", "reliability.png"}
    for name, figure in made.items():
        for ax in figure.axes:
            assert ax.get_xlabel(), name
            assert len(ax.collections) == 2, name  # one stderr band per RM
        assert figure.axes[0].get_ylabel(), name
        assert legend_texts(figure) == ["honest", "length"], name
    reta = made["reta-curve.png"].axes[0]
    assert "log₂ η" in reta.get_xlabel() and reta.get_ylabel().startswith("RETA")
    assert reta.lines[0].get_xdata()[0] == pytest.approx(1.0)  # η = 1/2 → −log2 η = 1
    by_n, by_kl = made["best-of-n.png"].axes
    assert by_n.get_xscale() == "log" and by_n.get_xlabel().startswith("n")
    assert by_kl.get_xlabel().startswith("KL(best-of-n")
    assert by_n.get_ylabel().startswith("oracle score of the RM's pick")
    assert by_kl.lines[0].get_xdata()[-1] == pytest.approx(math.log(16) - 15 / 16)  # KL at n = N
    assert made["reliability.png"].axes[0].get_xlabel() == "confidence"


def test_the_reliability_diagram_has_the_diagonal_and_says_accuracy(full_db):
    figure = figures(full_db)["reliability-diagram.png"]
    ax, counts = figure.axes  # below: the pairs in each bin
    diagonal = next(
        line for line in ax.lines if line.get_label().startswith("perfectly calibrated")
    )
    x, y = diagonal.get_xdata(), diagonal.get_ydata()
    assert list(x) == list(y) and min(x) <= 0.5 and max(x) == 1.0  # y = x over the confidences
    assert ax.get_ylabel() == "accuracy in the bin"
    assert counts.get_xlabel().startswith("mean confidence")


def second_best_kl(n: int) -> float:
    """KL(2nd-best-of-n ‖ base) by numerical integration of f log f, f the density of the
    chosen response's reward quantile: the (n−1)-th order statistic of n uniforms."""
    density = stats.beta(n - 1, 2).pdf
    value, _ = integrate.quad(
        lambda u: density(u) * np.log(density(u)) if density(u) > 0 else 0.0, 0, 1, limit=200
    )
    return value


def test_the_2nd_best_of_n_figure_has_its_own_kl_axis_and_labels(full_db):
    figure = figures(full_db)["2nd-best-of-n.png"]
    by_n, by_kl = figure.axes
    assert by_kl.get_xlabel().startswith("KL(2nd-best-of-n")
    # a label is wrapped to the figure's width: read it as one line
    assert " ".join(by_n.get_ylabel().split()).startswith("oracle score of the RM's 2nd favourite")
    assert "RM's pick" not in by_n.get_ylabel()
    ns = np.rint(by_n.lines[0].get_xdata()).astype(int)
    assert ns.tolist() == [2, 4, 8, 16]
    expected = [second_best_kl(n) for n in ns]
    assert by_kl.lines[0].get_xdata() == pytest.approx(expected, abs=1e-7)
    # not the best-of-n formula, which differs for every n > 2
    assert not np.allclose(by_kl.lines[0].get_xdata()[1:], np.log(ns[1:]) - (ns[1:] - 1) / ns[1:])
    # a Monte Carlo check of the same quantity at n = 4: E[log f(U)], U the 2nd best of 4 uniforms
    rng = np.random.default_rng(0)
    u = np.sort(rng.random((200_000, 4)), axis=1)[:, -2]
    assert np.mean(stats.beta(3, 2).logpdf(u)) == pytest.approx(expected[1], abs=0.01)


def test_each_rm_keeps_one_colour_in_every_figure(full_db):
    made = figures(full_db)
    assert set(made) == {
        "reta-curve.png",
        "best-of-n.png",
        "2nd-best-of-n.png",
        "reliability-diagram.png",
    }
    colours: dict[str, set] = {}
    for figure in made.values():
        for ax in figure.axes:
            for line in ax.lines:
                if line.get_label() in ("honest", "length", "weak"):
                    colours.setdefault(line.get_label(), set()).add(line.get_color())
    assert set(colours) == {"honest", "length", "weak"}
    assert all(len(c) == 1 for c in colours.values()), colours  # one colour per RM everywhere
    assert len({next(iter(c)) for c in colours.values()}) == 3  # and a different one for each


def test_no_legend_covers_data(full_db, audit_db):
    for name, figure in {**figures(full_db), **figures(audit_db)}.items():
        drawn(figure)
        for legend in figure.legends:
            box = legend.get_window_extent()
            for ax in figure.axes:
                assert not box.overlaps(ax.get_window_extent()), name
        assert all(ax.get_legend() is None for ax in figure.axes), name  # none inside an axes


def parse_table(markdown: str) -> tuple[list[str], dict[str, list[str]]]:
    """The leaderboard: the first table after its heading."""
    section = re.split(r"\n\n(?:- |## )", markdown.split("## Leaderboard")[1])[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    split = [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]
    return split[0], {row[0]: row[1:] for row in split[1:]}


def test_the_markdown_table_matches_the_stored_metrics(rmaudit, audit_db, tmp_path):
    assert rmaudit("report", str(audit_db), "--out", str(tmp_path)).code == 0
    markdown = (tmp_path / REPORT_NAME).read_text()
    assert "**SIMULATED.**" in markdown
    headers, table = parse_table(markdown)
    assert headers[:5] == ["model", "RETA(1/4) ↑", "95% CI", "group", "rank"]
    assert headers[6] == "pairwise acc ↑"
    # best-of-n is an oracle score: its header says the oracle's range on this benchmark
    low, high = (
        sqlite3.connect(audit_db)
        .execute("select min(score), max(score) from oracle_labels")
        .fetchone()
    )
    assert headers[5] == f"BoN@4 ↑ [{low:.1f}–{high:.1f}]"
    column = {"reta@0.25": 0, "bon@4": 4, "pairwise_accuracy": 5}
    rows = metric_rows(audit_db)
    assert {label for label, *_ in rows} == set(table) == {"honest", "length"}
    for label, _, key, value, stderr in rows:
        assert table[label][column[key]] == f"{value:.4f} ± {stderr:.4f}"


def test_the_markdown_has_the_legend_the_curve_tables_and_the_recipe(rmaudit, full_db, tmp_path):
    assert rmaudit("report", str(full_db), "--out", str(tmp_path)).code == 0
    markdown = (tmp_path / REPORT_NAME).read_text()
    assert "- RETA(η): mean oracle score" in markdown and "1 = a random RM" in markdown
    assert "- ±: standard error across prompts" in markdown
    # a file has no sparkline and is not a terminal: no line about either
    assert "sparkline" not in markdown and "Next: rmaudit tui" not in markdown
    assert "## RETA curve" in markdown and "| reward model | η = 1/2 |" in markdown
    conn = sqlite3.connect(full_db)
    value, stderr = conn.execute(
        """select c.value, c.stderr from curves c join run_reward_models m on m.rm_key = c.rm_key
           where m.label = 'honest' and c.key = 'reta_curve' and c.point = 0"""
    ).fetchone()
    recipe_text = conn.execute("select recipe_text from runs").fetchone()[0]
    conn.close()
    curve_table = markdown.split("## RETA curve")[1]
    row = next(line for line in curve_table.splitlines() if line.startswith("| honest | "))
    assert row.split(" | ")[1] == f"{value:.3f} ± {stderr:.3f}"
    assert "## Recipe" in markdown and recipe_text.strip() in markdown
    assert "```toml" in markdown


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
                          value, stderr, ci_low, ci_high, higher_is_better) select id, '', 'regret',
                          'kendall', 'Kendall τ', '{}', 0.5, 0.1, 0.3, 0.7, 1 from runs""")
        target.execute("""insert into curves select run_id, '', metric, key, label, point, x_label,
                          x, value, stderr, ci_low, ci_high from curves where key = 'reliability'
                          and rm_key = (select rm_key from run_reward_models where label =
                          'honest')""")
    source.close(), target.close()
    assert rmaudit("report", str(db), "--out", str(tmp_path / "out")).code == 0
    markdown = (tmp_path / "out" / REPORT_NAME).read_text()
    assert "## Across reward models" in markdown
    assert "| regret | Kendall τ | 0.5000 ± 0.1000 | [0.300, 0.700] |" in markdown
    assert legend_texts(figures(db)["reliability.png"]) == ["honest", "length", "across RMs"]


def test_a_run_of_many_rms_draws_the_top_six_reta_curves_in_six_colours(tmp_path):
    """Past ten RMs the RETA figure keeps the six whose curve is highest on average (read
    here from the stored points), each in a colour of its own."""
    models = "".join(
        f'\n[[reward_models]]\nlabel = "rm{i:02d}"\nname = "simulated-rm"\n'
        f"signal = {0.05 + 0.08 * i:.2f}\nseed = {i + 1}\n"
        for i in range(12)
    )
    head = FULL_RECIPE.split("[[reward_models]]")[0]
    recipe = tmp_path / "many.toml"
    recipe.write_text(head + models + '\n[[metrics]]\nname = "reta-curve"\n', encoding="utf-8")
    db = tmp_path / "many.db"
    store = Store.open(db)
    try:
        Runner(load_recipe(recipe), store).run()
    finally:
        store.close()
    rows = sqlite3.connect(db).execute(
        "select m.label, avg(c.value) from curves c join run_reward_models m "
        "on m.rm_key = c.rm_key and m.run_id = c.run_id where c.key = 'reta_curve' "
        "group by m.label"
    )
    means = dict(rows.fetchall())
    assert len(means) == 12
    top = sorted(means, key=lambda label: -means[label])[:6]
    (ax,) = figures(db)["reta-curve.png"].axes
    shown = [line for line in ax.lines if line.get_label() in means]
    assert sorted(line.get_label() for line in shown) == sorted(top)
    assert len({line.get_color() for line in shown}) == 6
    assert "6 of 12" in ax.get_title()
