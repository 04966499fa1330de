"""The HTML report's worst pairs of a pairwise judge: each shown pair with the judge's verdict
and reply in both orders, as stored, escaped (replies rewritten in the DB to hostile strings,
as tests/_hostile.py does for prompts), a long reply cut with a count."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from _hostile import ALL, MARKDOWN, MARKUP
from test_report_html import report, worst_by_rm

from rmaudit.display.formatting import visible
from rmaudit.recipe import load_recipe
from rmaudit.report.worst import REPLY_MAX
from rmaudit.run import Runner
from rmaudit.store import Store

ROOT = Path(__file__).resolve().parents[1]
RECIPE = """
title = "a judge on pairs"
[pairs.source]
name = "pairs-file"
path = "{path}"
subset = "subset"
[[reward_models]]
label = "first-biased judge"
name = "sim-judge-first"
[[metrics]]
name = "judge-audit"
"""
LONG_REPLY = "because " * 1_000 + "[[A]]"


@pytest.fixture(scope="module")
def judged_db(tmp_path_factory):
    """A pair run of a pairwise judge whose stored replies are then made hostile: one long,
    the others every hostile string."""
    folder = tmp_path_factory.mktemp("html-judge")
    recipe = folder / "judge.toml"
    examples = ROOT / "examples" / "rewardbench-mini.jsonl"
    recipe.write_text(RECIPE.replace("{path}", str(examples)), encoding="utf-8")
    db = folder / "judge.db"
    store = Store.open(db)
    try:
        Runner(load_recipe(recipe), store).run()
    finally:
        store.close()
    with sqlite3.connect(db) as conn:
        keys = [k for (k,) in conn.execute("select shown_key from judge_verdicts order by 1")]
        for i, key in enumerate(keys):
            reply = LONG_REPLY if i % 3 == 0 else f"<b>showing {i}</b> {ALL} [[A]]"
            conn.execute("update judge_verdicts set reply = ? where shown_key = ?", [reply, key])
    return db


def stored_verdicts(db: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(prompt text, first text) → (verdict, reply) of each showing."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "select p.text, a.text, v.verdict, v.reply from judge_verdicts v"
            " join prompts p on p.id = v.prompt_id join responses a on a.id = v.first_id"
        ).fetchall()
    return {(prompt, first): (verdict, reply) for prompt, first, verdict, reply in rows}


def test_each_worst_pair_shows_the_judges_verdict_and_reply_in_both_orders(
    rmaudit, judged_db, tmp_path
):
    out = tmp_path / "report"
    page = report(rmaudit, judged_db, out)
    raw = (out / "report.html").read_text(encoding="utf-8")
    (items,) = worst_by_rm(page).values()
    assert items
    stored = stored_verdicts(judged_db)
    mark = {"first": "A", "second": "B", "tie": "C", "unparsed": "no verdict"}
    cut = 0
    for item in items:
        prompt = item.find("pre", "prompt")[0].text()
        captions = [c.text() for c in item.find("p", "caption")]
        texts = [t.text() for t in item.find("pre") if "prompt" not in t.attrs.get("class", "")]
        assert len(captions) == 4 and captions[:2] == ["chosen", "rejected"]
        chosen, rejected = texts[:2]
        for caption, text, first in zip(captions[2:], texts[2:], (chosen, rejected), strict=True):
            verdict, reply = stored[(prompt, first)]
            order = "chosen" if first == chosen else "rejected"
            assert caption == f"judge, {order} shown first: verdict {mark[verdict]}"
            if len(reply) > REPLY_MAX:
                cut += 1
                assert text == f"{reply[:REPLY_MAX]}… ({len(reply) - REPLY_MAX:,} more characters)"
            else:
                assert text == visible(reply)
    assert cut
    # worst first: the credit over both orders (wrong in both first), then the margin
    badges = [item.find("span", "badge")[0].text() for item in items]
    ranked = [
        tuple(float(x) for x in re.fullmatch(r"credit (\S+) · margin (\S+)", b).groups())
        for b in badges
    ]
    assert ranked == sorted(ranked) and all(credit <= 0.5 for credit, _ in ranked)
    # markup from a reply is text: no <b> element, one script (the page's own search)
    assert not page.find("b") and len(page.find("script")) == 1
    assert "&lt;b&gt;showing" in raw and MARKDOWN in page.text() and MARKUP[1] in page.text()
    assert not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b\u202e\ufeff]", raw)
