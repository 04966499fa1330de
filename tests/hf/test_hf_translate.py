"""The translate perturber (lingual shift, RMs Under Distribution Shift, arXiv 2311.14743, Sec. 4)
with a tiny offline seq2seq model."""

from __future__ import annotations

import json
import sqlite3
import textwrap

import numpy as np
import pytest

pytest.importorskip("torch")

import _tiny_hf  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

from rmaudit.benchmark.perturb import selected  # noqa: E402
from rmaudit.default_plugins.rewrite_perturbers import Translate  # noqa: E402
from rmaudit.errors import BadInput  # noqa: E402
from rmaudit.recipe import load_recipe  # noqa: E402
from rmaudit.recipe.validation import validate_options  # noqa: E402
from rmaudit.run import Runner  # noqa: E402
from rmaudit.store import Store  # noqa: E402

TEXTS = [
    "How do I keep basil alive?",
    "A hash table stores values in buckets.",
    "What is 17 + 25?",
    "Rain taps the glass; the garden drinks.",
    "Sure.",
]


@pytest.fixture(scope="module")
def translator_path(tmp_path_factory) -> str:
    return str(_tiny_hf.build_seq2seq(tmp_path_factory.mktemp("tiny-mt")))


@pytest.fixture(autouse=True)
def fresh_models():
    """Each test loads its models and translates afresh (translation memoises per model)."""
    from rmaudit.backends.hf import translation

    translation._LOADED.clear()
    yield
    translation._LOADED.clear()


def translator(path: str, **options) -> Translate:
    raw = {"model": path, "device": "cpu", "max_new_tokens": 8, "p": 1.0, **options}
    return Translate(validate_options(Translate, raw, field="x", file=None, base_dir=None))


def independent_generate(path: str, text: str, **kwargs) -> str:
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(path).eval()
    encoded = tokenizer(text, return_tensors="pt")
    with torch.inference_mode():
        out = model.generate(**encoded, do_sample=False, num_beams=1, **kwargs)
    return tokenizer.decode(out[0], skip_special_tokens=True).strip()


def test_translation_equals_an_independent_greedy_generate(translator_path):
    component = translator(translator_path, batch_size=1, target_lang="__de__")
    forced = transformers.AutoTokenizer.from_pretrained(translator_path).convert_tokens_to_ids(
        "__de__"
    )
    for text in TEXTS[:3]:
        assert component.perturb(text, seed=0) == independent_generate(
            translator_path, text, max_new_tokens=8, forced_bos_token_id=forced
        )
    prefixed = translator(translator_path, batch_size=1, prefix="translate English to German: ")
    assert prefixed.perturb(TEXTS[0], seed=0) == independent_generate(
        translator_path, "translate English to German: " + TEXTS[0], max_new_tokens=8
    )


def test_translation_is_deterministic_and_independent_of_the_batch(translator_path):
    component = translator(translator_path, batch_size=4)
    from rmaudit.backends.hf import translation

    first = component.perturb_batch(TEXTS, seed=3)
    assert component.perturb_batch(TEXTS, seed=3) == first
    translation._LOADED.clear()  # translate again, one text per generate call
    assert (
        translator(translator_path, batch_size=1).perturb_batch(TEXTS[::-1], seed=3) == first[::-1]
    )
    assert all(out != text for out, text in zip(first, TEXTS, strict=True))


def test_p_is_the_probability_a_text_is_translated(translator_path):
    texts = [f"example {i} of a text" for i in range(60)]
    assert translator(translator_path, p=0.0).perturb_batch(texts, seed=1) == texts
    everything = translator(translator_path, p=1.0).perturb_batch(texts, seed=1)
    half = translator(translator_path, p=0.5).perturb_batch(texts, seed=1)
    more = translator(translator_path, p=0.8).perturb_batch(texts, seed=1)
    for i, text in enumerate(texts):
        chosen = selected("translate", text, 0.5, seed=(0, 1))
        assert half[i] == (everything[i] if chosen else text)
        if chosen:  # nested levels: translated at 0.5 means translated, identically, at 0.8
            assert more[i] == everything[i]
    # the selection's rate: a binomial 99% interval over many texts
    hits = sum(selected("translate", f"text {i}", 0.3, seed=(0, 0)) for i in range(5000))
    assert 1415 <= hits <= 1585
    assert translator(translator_path).perturb("   ", seed=0) == "   "


def test_options_and_errors(translator_path):
    component = translator(translator_path, target_lang="__xx__")
    with pytest.raises(BadInput, match="target_lang"):
        component.perturb("hello", seed=0)
    with pytest.raises(BadInput, match="src_lang"):
        translator(translator_path, source_lang="eng_Latn").perturb("hello", seed=0)
    # where it runs is not what it outputs: the key ignores device and batch size
    assert (
        translator(translator_path, batch_size=2).key
        == translator(translator_path, batch_size=9, device=None).key
    )
    assert translator(translator_path).options.trust_remote_code is False


def test_a_shift_sweep_translates_responses(translator_path, tmp_path):
    records = [
        {
            "prompt": f"Question {i}?",
            "chosen": f"A careful answer number {i}.",
            "rejected": f"No {i}.",
        }
        for i in range(12)
    ]
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    recipe = tmp_path / "r.toml"
    recipe.write_text(
        textwrap.dedent(f"""
        [pairs.source]
        name = "pairs-file"
        path = "pairs.jsonl"

        [pairs.shift]
        levels = [0, 0.5, 1]
        targets = ["response"]
        seed = 2

        [pairs.shift.perturber]
        name = "translate"
        model = {json.dumps(translator_path)}
        device = "cpu"
        max_new_tokens = 6

        [[reward_models]]
        name = "simulated-rm"

        [[metrics]]
        name = "shift-curves"
        """)
    )
    db = tmp_path / "audit.db"
    store = Store.open(db)
    try:
        Runner(load_recipe(recipe), store).run()
        again = Runner(load_recipe(recipe), store).run()
    finally:
        store.close()
    assert all(c.pending == 0 for c in again.counts), again.counts
    conn = sqlite3.connect(db)
    rows = conn.execute("""select p.shift_level, c.text, oc.text from pairs p
                           join pairs o on o.id = p.original_pair_id
                           join responses c on c.id = p.chosen_id
                           join responses oc on oc.id = o.chosen_id""").fetchall()
    curve = conn.execute(
        "select x from curves where key = 'shift_accuracy_response' order by point"
    ).fetchall()
    conn.close()
    assert len(rows) == 2 * len(records)
    for level in (0.5, 1.0):
        component = translator(translator_path, p=level, max_new_tokens=6)
        for _, shifted, original in (r for r in rows if r[0] == level):
            assert shifted == component.perturb(original, seed=2)
    assert all(shifted != original for level, shifted, original in rows if level == 1.0)
    np.testing.assert_allclose([x for (x,) in curve], [0, 0.5, 1])
