"""Hostile strings — markup, control characters, bidirectional-text controls, emoji, mathtext,
Markdown, 100 KB lines — in every place text from data reaches the screen: the run's title,
RM labels, prompts, responses and pair subsets.  ``hostile_audit`` builds a real DB with them
(a recipe run, then prompts and responses rewritten in the DB), for the CLI, TUI and report
tests."""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path

from rmaudit.recipe import load_recipe
from rmaudit.run import Runner
from rmaudit.store import Store

#: Rich/Textual markup that crashed the TUI (an unmatched close tag), made a link or an action
MARKUP = (
    "[/]",
    "[link=file:///etc/passwd]passwd[/link]",
    "[@click=app.quit]quit[/]",
    "[bold red]loud[/bold red]",
    "[tui]",
)
#: what a terminal acts on: an escape sequence, bell, carriage return, backspace, NUL
CONTROL = "esc\x1b[31mred\x1b[0m bell\x07 cr\rback\x08 nul\x00"
#: a right-to-left override (it reorders what follows on a terminal), a mark, Arabic text
BIDI = "\u202eevil\u202c \u200fmark مرحبا zero\u200bwidth\ufeffmark"
EMOJI = "🤖👍🏽👨‍👩‍👧"
#: matplotlib's mathtext (an unbalanced $ fails to draw) and Markdown
MATHTEXT = "$x^2$ $unbalanced"
MARKDOWN = "<script>alert(1)</script> | pipe | ![img](http://example.com/x.png) *bold*"
#: 100 KB without a break, then a marker to find its end
LONG = "x" * 100_000 + "END"

#: one string with all of them but the long line
ALL = " ".join([*MARKUP, CONTROL, BIDI, EMOJI, MATHTEXT, MARKDOWN])
#: how the control characters must be shown: visible escapes, never sent to the terminal
SHOWN_CONTROL = "esc⟨U+001B⟩[31mred⟨U+001B⟩[0m bell⟨U+0007⟩ cr⟨U+000D⟩back⟨U+0008⟩ nul⟨U+0000⟩"
SHOWN_BIDI = "⟨U+202E⟩evil⟨U+202C⟩ ⟨U+200F⟩mark مرحبا zero⟨U+200B⟩width⟨U+FEFF⟩mark"

#: the RMs' labels (each unique); the first starts with markup so a table shows it whole
LABELS = (
    f"{MARKUP[0]} {MARKUP[1]} {MARKUP[2]} {EMOJI}",
    f"{MATHTEXT} {MARKDOWN}",
    f"{CONTROL} {BIDI}",
    "long " + LONG,
)
TITLE = " ".join(
    (MARKUP[1], MARKUP[2], MARKUP[0], MARKUP[3], MARKUP[4], CONTROL, BIDI, EMOJI, MATHTEXT, LONG)
)
SUBSETS = (MARKUP[0] + " subset", MARKUP[2] + " " + EMOJI)


def toml_string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's (\\uXXXX for control characters)."""
    return json.dumps(text, ensure_ascii=False)


def _recipe(pairs_file: Path) -> str:
    rms = "\n".join(
        f"""
        [[reward_models]]
        label = {toml_string(label)}
        name = "simulated-rm"
        seed = {seed}
        """
        for seed, label in enumerate(LABELS, start=1)
    )
    return textwrap.dedent(f"""
        title = {toml_string(TITLE)}
        [prompts.source]
        name = "simulated-helpful"
        [prompts.sampler]
        name = "random"
        k = 3
        [responses]
        per_prompt = 4
        [responses.policy]
        name = "simulated-policy"
        [oracle]
        name = "simulated-judge"
        samples = 1
        [pairs.source]
        name = "pairs-file"
        path = {toml_string(str(pairs_file))}
        subset = "subset"
        [pairs.shift]
        levels = [0, 0.5]
        targets = ["response"]
        [pairs.shift.perturber]
        name = "word-perturb"
        [[metrics]]
        name = "reta"
        eta = 0.25
        [[metrics]]
        name = "reta-curve"
        [[metrics]]
        name = "best-of-n"
        [[metrics]]
        name = "pair-accuracy"
        [[metrics]]
        name = "calibration"
        [[metrics]]
        name = "shift-curves"
        """) + textwrap.dedent(rms)


def hostile_recipe(folder: Path) -> Path:
    """The hostile recipe and its pair file, written into ``folder``."""
    pairs = folder / "pairs.jsonl"
    records = [
        {
            "prompt": ALL,
            "chosen": f"{ALL} chosen",
            "rejected": f"{LONG} rejected",
            "subset": SUBSETS[0],
        },
        {
            "prompt": f"{LONG} prompt",
            "chosen": f"{CONTROL} chosen",
            "rejected": f"{MARKUP[1]} rejected",
            "subset": SUBSETS[1],
        },
        {
            "prompt": f"{EMOJI} {BIDI}",
            "chosen": MARKDOWN,
            "rejected": MATHTEXT,
            "subset": SUBSETS[0],
        },
    ]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    recipe = folder / "hostile.toml"
    recipe.write_text(_recipe(pairs), encoding="utf-8")
    return recipe


def hostile_audit(folder: Path) -> Path:
    """Run the hostile recipe into ``folder/hostile.db`` and put hostile text in its prompts
    and responses too; returns the DB."""
    db = folder / "hostile.db"
    store = Store.open(db)
    try:
        Runner(load_recipe(hostile_recipe(folder)), store).run()
    finally:
        store.close()
    conn = sqlite3.connect(db)
    with conn:  # the benchmark's prompts and responses, as a model or a data file could write them
        conn.execute(
            """update prompts set text = ? || ' ' || id where id in
                        (select prompt_id from selections)""",
            [ALL],
        )
        conn.execute("update responses set text = ? where sample_index = 0", [ALL])
        conn.execute("update responses set text = ? where sample_index = 1", [LONG])
    conn.close()
    return db
