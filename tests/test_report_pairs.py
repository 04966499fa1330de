"""The report's figures of preference-pair runs: accuracy per subset with its Wilson 95% CI,
RM-Bench's chosen-style × rejected-style heat map, and the reliability diagram's pairs per bin,
each checked against the stored scores recomputed here."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from _support import PAIR_RECIPE
from matplotlib.colors import to_rgb
from scipy.stats import norm

from rmaudit.metrics import style_difficulty
from rmaudit.recipe import load_recipe
from rmaudit.report import build_figures
from rmaudit.report.markdown import shift_tables
from rmaudit.results.run_index import open_for_reading, resolve_run
from rmaudit.results.summary import load_summary
from rmaudit.run import Runner
from rmaudit.store import Store

ROOT = Path(__file__).resolve().parents[1]
STYLES = ("concise", "detailed", "detailed markdown")

RM_BENCH_RECIPE = """
title = "rm-bench styles"
[pairs.source]
name = "rm-bench"
path = "{path}"
[[reward_models]]
label = "honest"
name = "simulated-rm"
[[reward_models]]
label = "length-biased"
name = "simulated-rm"
bias = "length"
seed = 1
[[metrics]]
name = "pair-accuracy"
[[metrics]]
name = "rm-bench"
"""

RM_BENCH_TIES_RECIPE = """
title = "rm-bench ties"
[pairs.source]
name = "rm-bench"
path = "{path}"
[[reward_models]]
label = "length"
name = "length"
[[metrics]]
name = "rm-bench"
ties = "half"
"""


def rm_bench_records(n: int = 12) -> list[dict]:
    """RM-Bench records (three styles of a right and a wrong answer) in two subsets."""
    return [
        {
            "id": i,
            "prompt": f"Describe lighthouse number {i}.",
            "subset": "chat" if i % 3 else "safety",
            "chosen": [
                f"Lighthouse {i} guides ships.",
                f"Lighthouse {i} guides ships with a bright lamp at night, every night.",
                f"**Lighthouse {i}**\n- guides ships\n- a bright lamp\n- every night",
            ],
            "rejected": [
                f"Lighthouse {i} is a bakery.",
                f"Lighthouse {i} is a bakery that sells bread every single day of the week.",
                f"**Lighthouse {i}**\n- a bakery\n- sells bread\n- every day",
            ],
        }
        for i in range(n)
    ]


def run(folder: Path, recipe_text: str) -> Path:
    recipe = folder / "recipe.toml"
    recipe.write_text(recipe_text, encoding="utf-8")
    db = folder / "audit.db"
    store = Store.open(db)
    try:
        Runner(load_recipe(recipe), store).run()
    finally:
        store.close()
    return db


@pytest.fixture(scope="module")
def rm_bench_db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rm-bench")
    data = folder / "rm-bench.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rm_bench_records()), encoding="utf-8")
    return run(folder, RM_BENCH_RECIPE.replace("{path}", str(data)))


@pytest.fixture(scope="module")
def rm_bench_ties_db(tmp_path_factory):
    """RM-Bench pairs whose concise answers are equally long, scored by length, ties at half."""
    folder = tmp_path_factory.mktemp("rm-bench-ties")
    records = rm_bench_records()
    for record in records:
        chosen = record["chosen"][0]
        record["rejected"][0] = chosen.replace("guides ships", "bakes breads")
    data = folder / "rm-bench.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    recipe = RM_BENCH_TIES_RECIPE.replace("{path}", str(data))
    return run(folder, recipe)


@pytest.fixture(scope="module")
def pairs_db(tmp_path_factory):
    examples = ROOT / "examples" / "rewardbench-mini.jsonl"
    return run(tmp_path_factory.mktemp("pairs"), PAIR_RECIPE.replace("{path}", str(examples)))


def figures(db: Path):
    store = open_for_reading(db)
    try:
        return build_figures(load_summary(store, resolve_run(store, None)), store)
    finally:
        store.close()


def pair_scores(db: Path, *, prompts: bool = False) -> list[tuple]:
    """(RM label, subset, chosen score, rejected score, meta) of every unshifted pair; with
    ``prompts``, the pair's prompt id after them."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            """select m.label, p.subset, c.score, r.score, p.meta, p.prompt_id from pairs p
               join rm_scores c on c.response_id = p.chosen_id
               join rm_scores r on r.response_id = p.rejected_id and r.rm_key = c.rm_key
               join run_reward_models m on m.rm_key = c.rm_key where p.shift_level is null"""
        ).fetchall()
    finally:
        conn.close()
    return [
        (label, subset, c, r, json.loads(meta or "{}"), *([prompt] if prompts else []))
        for label, subset, c, r, meta, prompt in rows
    ]


def wilson(successes: int, n: int) -> tuple[float, float]:
    """Wilson's 95% score interval, from its textbook formula."""
    z, p = norm.ppf(0.975), successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def clustered_wilson(right: list[bool], prompts: list[str]) -> tuple[float, float]:
    """Wilson's interval at the effective count n / deff, the design effect from statsmodels'
    cluster-robust standard error of the mean (pairs of one prompt are not independent)."""
    sm = pytest.importorskip("statsmodels.api")
    y = np.asarray(right, dtype=float)
    groups = np.unique(prompts, return_inverse=True)[1]
    fit = sm.OLS(y, np.ones(y.size)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    plain = y.std(ddof=1) / math.sqrt(y.size)
    effective = y.size / max((fit.bse[0] / plain) ** 2, 1.0) if plain > 0 else y.size
    return wilson(y.mean() * effective, effective)


def test_accuracy_per_subset_has_each_rms_value_and_wilson_interval(rm_bench_db):
    figure = figures(rm_bench_db)["accuracy-per-subset.png"]
    (ax,) = figure.axes
    names = [t.get_text() for t in ax.get_yticklabels()]
    assert names[0] == "all pairs" and sorted(names[1:]) == ["chat", "safety"]
    scores = pair_scores(rm_bench_db, prompts=True)
    containers = {c.get_label(): c for c in ax.containers}
    assert set(containers) == {"honest", "length-biased"}
    widened = []
    for label, container in containers.items():
        line, _, (bars,) = container.lines
        for row, subset in enumerate([None, *names[1:]]):
            mine = [
                (c > r, q) for rm, s, c, r, _, q in scores if rm == label and subset in (None, s)
            ]
            right, prompts = [r for r, _ in mine], [q for _, q in mine]
            # RM-Bench's nine pairs of a prompt are clustered: the interval is the design-effect
            # Wilson, never narrower than the plain one
            low, high = clustered_wilson(right, prompts)
            plain_low, plain_high = wilson(sum(right), len(right))
            assert low <= plain_low + 1e-12 and high >= plain_high - 1e-12
            widened.append(high - low > plain_high - plain_low + 1e-6)
            assert line.get_xdata()[row] == pytest.approx(sum(right) / len(right))
            (x_low, _), (x_high, _) = bars.get_segments()[row]
            assert (x_low, x_high) == pytest.approx((low, high), abs=1e-9)
    assert any(widened)
    assert all(not t.get_parse_math() for t in ax.get_yticklabels())


def test_the_rm_bench_heat_map_is_each_rms_style_matrix(rm_bench_db):
    figure = figures(rm_bench_db)["rm-bench-styles.png"]
    panels = [ax for ax in figure.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["honest", "length-biased"]
    scores = pair_scores(rm_bench_db)
    conn = sqlite3.connect(rm_bench_db)
    stored = dict(
        ((label, key), value)
        for label, key, value in conn.execute(
            """select m.label, r.key, r.value from metric_results r join run_reward_models m
               on m.rm_key = r.rm_key where r.key like 'rm_bench_%'"""
        )
    )
    conn.close()
    for ax in panels:
        label = ax.get_title()
        matrix = np.zeros((3, 3))
        for i in range(3):
            for j in range(3):
                cell = [
                    c > r
                    for rm, _, c, r, meta in scores
                    if rm == label and (meta["chosen_style"], meta["rejected_style"]) == (i, j)
                ]
                matrix[i, j] = np.mean(cell)
                (text,) = [t.get_text() for t in ax.texts if t.get_position() == (j, i)]
                assert text == f"{matrix[i, j]:.2f}\n{len(cell)} pairs"
        assert np.asarray(ax.images[0].get_array()) == pytest.approx(matrix)
        # wrapped to fit the matrix's columns: read as one line
        assert [" ".join(t.get_text().split()) for t in ax.get_yticklabels()] == list(STYLES)
        # the heat map is the matrix the rm-bench metric's easy / normal / hard come from
        difficulty = style_difficulty(matrix)
        for level in ("easy", "normal", "hard"):
            assert stored[(label, f"rm_bench_{level}")] == pytest.approx(getattr(difficulty, level))


def test_the_heat_map_credits_a_tie_as_the_rm_bench_metric_does(rm_bench_ties_db):
    (panel,) = [
        ax for ax in figures(rm_bench_ties_db)["rm-bench-styles.png"].axes if ax.get_title()
    ]
    credit = {(i, j): [] for i in range(3) for j in range(3)}
    for _, _, c, r, meta in pair_scores(rm_bench_ties_db):
        credit[(meta["chosen_style"], meta["rejected_style"])].append(
            1.0 if c > r else 0.5 * (c == r)
        )
    matrix = np.array([[np.mean(credit[(i, j)]) for j in range(3)] for i in range(3)])
    assert matrix[0, 0] == 0.5  # equally long concise answers: every pair a tie, half credit
    assert np.asarray(panel.images[0].get_array()) == pytest.approx(matrix)
    conn = sqlite3.connect(rm_bench_ties_db)
    stored = dict(conn.execute("select key, value from metric_results where key like 'rm_bench_%'"))
    conn.close()
    difficulty = style_difficulty(matrix)
    for level in ("easy", "normal", "hard"):
        assert stored[f"rm_bench_{level}"] == pytest.approx(getattr(difficulty, level))


def test_the_reliability_diagram_shows_how_many_pairs_each_bin_holds(pairs_db):
    figure = figures(pairs_db)["reliability-diagram.png"]
    diagram, counts = figure.axes
    assert " ".join(counts.get_ylabel().split()) == "pairs in the bin"  # wrapped to the panel
    assert counts.get_yscale() == "log"
    scores = pair_scores(pairs_db)
    for container in counts.containers:
        colour = container.patches[0].get_facecolor()[:3]
        (label,) = [
            line.get_label()
            for line in diagram.lines
            if np.allclose(to_rgb(line.get_color()), colour)
        ]
        margins = np.array([c - r for rm, _, c, r, _ in scores if rm == label])
        confidence = 1 / (1 + np.exp(-np.abs(margins)))  # the RM's confidence in its pick
        # bins [0, 0.1], (0.1, 0.2], …, (0.9, 1] as RMs Under Distribution Shift draws them
        histogram = np.bincount(np.clip(np.ceil(confidence * 10) - 1, 0, 9).astype(int))
        heights = [bar.get_height() for bar in container.patches]
        assert heights == histogram[histogram > 0].tolist()
        assert sum(heights) == len(margins)


def test_the_reliability_band_is_each_bins_wilson_interval(pairs_db):
    figure = figures(pairs_db)["reliability-diagram.png"]
    diagram = figure.axes[0]
    assert "Wilson 95%" in diagram.get_title()
    scores = pair_scores(pairs_db)
    bands = {
        to_rgb(band.get_facecolor()[0][:3]): band.get_paths()[0].vertices
        for band in diagram.collections
    }
    for line in diagram.lines[1:]:  # the diagonal first, then one line per RM
        margins = np.array([c - r for rm, _, c, r, _ in scores if rm == line.get_label()])
        confidence = 1 / (1 + np.exp(-np.abs(margins)))
        right = margins > 0
        bins = np.clip(np.ceil(confidence * 10) - 1, 0, 9).astype(int)
        vertices = bands[to_rgb(line.get_color())]
        for b in np.unique(bins):
            low, high = wilson(int(right[bins == b].sum()), int((bins == b).sum()))
            x = confidence[bins == b].mean()
            at_x = vertices[np.isclose(vertices[:, 0], x), 1]
            assert min(at_x) == pytest.approx(low) and max(at_x) == pytest.approx(high)


def test_a_figure_title_promises_a_band_only_where_one_is_drawn():
    from rmaudit.report.figures import band_drawn
    from rmaudit.results.summary import Curve, RunSummary

    x = np.array([0.0, 0.25])
    with_band = Curve("accuracy", "p", x, np.array([0.7, 0.6]), np.array([0.02, 0.03]))
    without = Curve("ECE", "p", x, np.array([0.1, 0.2]), np.array([np.nan, np.nan]))
    summary = RunSummary({}, {}, [("rm", "k")])
    summary.curves = {("k", "shift", "acc"): with_band, ("k", "shift", "ece"): without}
    assert band_drawn(summary, {("shift", "acc")}) == "±1 stderr"
    assert "no interval" in band_drawn(summary, {("shift", "ece")})


def test_the_markdown_shift_tables_give_each_point_its_stored_standard_error(pairs_db):
    store = open_for_reading(pairs_db)
    try:
        summary = load_summary(store, resolve_run(store, None))
    finally:
        store.close()
    cells = [
        cell.strip()
        for line in shift_tables(summary)
        if line.startswith("|") and "---" not in line and "reward model" not in line
        for cell in line.strip("|").split("|")[2:]
    ]
    with sqlite3.connect(pairs_db) as db:
        stored = db.execute(
            "select value, stderr from curves where key like 'shift_%' and stderr is not null"
        ).fetchall()
    with_stderr = [c for c in cells if " ± " in c]
    assert with_stderr and len(with_stderr) == len(cells)  # every point here has a stderr
    for cell in with_stderr:
        value, stderr = (float(x) for x in cell.split(" ± "))
        assert any(abs(value - v) < 5e-4 and abs(stderr - s) < 5e-4 for v, s in stored), cell
