"""The scoring checks inside ``rmaudit audit``: the block printed and written to
the results file, stored in the run and reused by a rerun, ``--show-input``, ``--strict``
stopping before any score with every finding of every model, ``--no-scoring-checks`` stored
as skipped, a failed check in the model's verdict, and checks that follow the scoring
settings (tests/hf/test_scoring_checks_resume.py)."""

from __future__ import annotations

import gzip
import json
import sqlite3
import tomllib

import pytest

torch = pytest.importorskip("torch")

import _tiny_defects  # noqa: E402

from rmaudit.components.scoring_checks import CHECK_NAMES  # noqa: E402

PAIRS = [
    ("How do I boil an egg?", "Simmer it for nine minutes, then cool it.", "Eggs are food."),
    ("What is 17 + 25?", "42.", "It is probably 40 or so, hard to say."),
    ("Name a primary colour.", "Red is one.", "Colours are nice."),
    ("Write a haiku about rain.", "Rain taps the glass / the garden drinks", "No."),
]


def write_hh(root):
    for subset in ("helpful-base", "harmless-base"):
        path = root / "hh-rlhf" / subset / "test.jsonl.gz"
        path.parent.mkdir(parents=True)
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            for prompt, chosen, rejected in PAIRS:
                context = f"\n\nHuman: {prompt} ({subset})\n\nAssistant:"
                record = {"chosen": f"{context} {chosen}", "rejected": f"{context} {rejected}"}
                handle.write(json.dumps(record) + "\n")


@pytest.fixture
def audit(rmaudit, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_hh(tmp_path / "data")

    def run(model: str, *flags: str):
        return rmaudit(
            "audit",
            model,
            "--suite",
            "hh",
            "--data-dir",
            str(tmp_path / "data"),
            "--db",
            str(tmp_path / "audit.db"),
            *flags,
        )

    return run


def stored_checks(db) -> dict[str, tuple[str, str]]:
    with sqlite3.connect(db) as connection:
        return {
            label: (status, checks)
            for label, status, checks in connection.execute(
                "select label, status, checks from scoring_checks"
            )
        }


def test_audit_prints_stores_and_reuses_the_checks(audit, tiny_models, tmp_path):
    first = audit(tiny_models["gpt2-rm"], "--show-input", "--scoring-checks-sample", "16")
    assert first.code == 0, first.err
    assert "scoring checks\ngpt2-rm: pass on 16 sampled items" in first.out
    for name in CHECK_NAMES:
        assert f"pass  {name}: " in first.out
    assert "gpt2-rm: one sampled input as the model reads it:\n<|user|>" in first.err
    results = json.loads((tmp_path / "audit.results.json").read_text(encoding="utf-8"))
    models = {m["label"]: m for m in results["suites"][0]["models"]}
    checks = models["gpt2-rm"]["scoring_checks"]
    assert checks["status"] == "pass" and checks["sample_size"] == 16 and checks["trustworthy"]
    assert [c["name"] for c in checks["checks"]] == list(CHECK_NAMES)
    assert checks["checks"][4]["figures"]["inputs over max_length"] == 0
    assert checks["settings"]["batch_size"] is None and checks["settings"]["device"] == "cpu"
    assert models["gpt2-rm"]["untrusted"] is None
    assert models["length"]["scoring_checks"] is None  # a baseline has no model to check
    stored = stored_checks(tmp_path / "audit.db")
    assert set(stored) == {"gpt2-rm"} and stored["gpt2-rm"][0] == "pass"

    again = audit(tiny_models["gpt2-rm"], "--scoring-checks-sample", "16")
    assert again.code == 0, again.err
    assert "new work: none" in again.err
    # the same checks, read back rather than redone (a redo would time itself anew)
    assert stored_checks(tmp_path / "audit.db") == stored


def stored_scores(db) -> dict[tuple[str, str], float]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute("select response_id, rm_key, score from rm_scores")
        return {(response, rm): score for response, rm, score in rows}


def test_the_run_keeps_the_checks_scores_as_it_would_score_them(audit, tiny_models, tmp_path):
    """The sample's scores come from the checks, the rest from the scoring: every stored
    score agrees with a run that skips the checks and scores every item itself."""
    assert audit(tiny_models["gpt2-rm"], "--scoring-checks-sample", "6").code == 0
    unchecked = tmp_path / "unchecked.db"
    assert audit(tiny_models["gpt2-rm"], "--no-scoring-checks", "--db", str(unchecked)).code == 0
    kept, scored = stored_scores(tmp_path / "audit.db"), stored_scores(unchecked)
    assert kept.keys() == scored.keys() and len(kept) >= 32
    assert max(abs(kept[k] - scored[k]) for k in kept) <= 1e-5 * max(map(abs, scored.values()))


def test_strict_stops_a_defective_model_before_its_scores(audit, tmp_path):
    model = _tiny_defects.build_pooled(tmp_path / "models", pool_last_position=True)
    result = audit(str(model), "--trust-remote-code", "--strict", "--scoring-checks-sample", "12")
    assert result.code == 2, result.err
    error = result.err.strip().splitlines()[-1]
    assert "scoring check 'batch invariance' of last-token-rm is fail" in error
    assert "fix: set batch_size = 1 (--batch-size 1)" in error
    # the suite's items come from files: the checks ran in the plan, the DB was never made
    assert "nothing was written" in error and not (tmp_path / "audit.db").exists()


def test_a_gpt2_style_template_closing_with_its_bos_passes_strict_and_its_fix_clears_it(
    audit, tmp_path
):
    """One token as BOS and EOS (GPT-2's <|endoftext|>): a template that closes each turn with
    it passes --strict; one that closes none warns, and the fixed template it prints, given
    back as --chat-template, passes --strict."""
    models = tmp_path / "models"
    closed = _tiny_defects.build_shared_eos(models, closes=True)
    assert audit(str(closed), "--strict", "--db", str(tmp_path / "closed.db")).code == 0
    unclosed = _tiny_defects.build_shared_eos(models, closes=False)
    found = audit(str(unclosed))
    assert found.code == 0, found.err
    results = json.loads((tmp_path / "audit.results.json").read_text(encoding="utf-8"))
    (model,) = [m for m in results["suites"][0]["models"] if m["label"] == unclosed.name]
    (check,) = [c for c in model["scoring_checks"]["checks"] if c["name"] == "template"]
    assert check["status"] == "warn" and "--chat-template" in check["fix"], check
    fixed = audit(
        str(unclosed),
        "--strict",
        "--chat-template",
        check["figures"]["fixed template"],
        "--db",
        str(tmp_path / "fixed.db"),
    )
    assert fixed.code == 0, fixed.err


def test_strict_with_a_clean_and_a_defective_model_stores_no_score(audit, tmp_path):
    """The clean model listed first: --strict still checks both before storing anything,
    names every finding of the defective one (dropout: batch invariance and determinism)
    and leaves the DB as it was, byte for byte."""
    assert audit("length").code == 0  # a DB with the baselines' scores already in it
    before = (tmp_path / "audit.db").read_bytes()
    clean = _tiny_defects.build_pooled(tmp_path / "models", pool_last_position=False)
    noisy = _tiny_defects.build_pooled(tmp_path / "models", pool_last_position=False, dropout=0.5)
    result = audit(str(clean), str(noisy), "--trust-remote-code", "--strict")
    assert result.code == 2, result.err
    error = result.err.strip().splitlines()[-1]
    assert "scoring check 'batch invariance' of dropout-rm is fail" in error
    assert "scoring check 'determinism' of dropout-rm is warn" in error
    assert "mask-token-rm" not in error
    assert (tmp_path / "audit.db").read_bytes() == before


def test_a_failed_check_is_part_of_the_model_s_verdict(audit, tmp_path):
    """A tokenizer that claims 12 tokens cuts the responses: without --strict the model is
    scored, and its verdict says its scores are not to be trusted — in the summary, the
    closing table, the results file and report.html."""
    pytest.importorskip("matplotlib")
    model = _tiny_defects.build_short_limit(tmp_path / "models", limit=12)
    result = audit(str(model), "--report", str(tmp_path / "report"))
    assert result.code == 0, result.err
    said = "⚠ scores not trustworthy: truncation: max_length 12 cuts the response of"
    assert said in result.out
    verdict = next(
        line for line in result.out.splitlines() if "short-limit-rm does not pass" in line
    )
    assert "(scores not trustworthy: truncation: max_length 12 cuts" in verdict
    results = json.loads((tmp_path / "report" / "audit.results.json").read_text("utf-8"))
    entry = next(m for m in results["suites"][0]["models"] if m["label"] == "short-limit-rm")
    assert entry["passes"] is False and entry["untrusted"].startswith(said)
    assert entry["scoring_checks"]["trustworthy"] is False
    html = (tmp_path / "report" / "report.html").read_text("utf-8")
    assert "scores not trustworthy: truncation: max_length 12" in html


def test_no_scoring_checks_is_stored_as_skipped(audit, tiny_models, tmp_path):
    result = audit(tiny_models["gpt2-rm"], "--no-scoring-checks")
    assert result.code == 0, result.err
    assert "gpt2-rm: skipped (--no-scoring-checks)" in result.out
    assert stored_checks(tmp_path / "audit.db")["gpt2-rm"][0] == "skipped"


def test_the_tui_shows_the_checks_under_the_leaderboard(audit, tiny_models, tmp_path):
    pytest.importorskip("textual")
    import asyncio

    from rmaudit.tui.app import AuditApp
    from rmaudit.tui.screens.leaderboard import LeaderboardScreen

    model = _tiny_defects.build_double_bos(tmp_path / "models")
    assert audit(str(model), "--scoring-checks-sample", "8").code == 0
    with sqlite3.connect(tmp_path / "audit.db") as connection:
        (run_id,) = connection.execute("select id from runs").fetchone()

    async def shown() -> str:
        app = AuditApp(tmp_path / "audit.db", run_id)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, LeaderboardScreen)
            return str(app.screen.query_one("#scoring-checks").render())

    text = asyncio.run(shown())
    assert text.startswith("scoring checks\ndouble-bos-rm: fail on 8 sampled items")
    assert "fail  template: the tokenizer's chat template: BOS twice" in text
    assert "fix: set chat_template = the template in use without its first" in text


RECIPE = """
title = "checks of a model that cannot load"
batch_size = 8

[prompts.source]
name = "simulated-helpful"

[prompts.sampler]
name = "random"
k = 3

[responses]
per_prompt = 2

[responses.policy]
name = "simulated-policy"

[oracle]
name = "simulated-judge"

[[reward_models]]
label = "llama"
name = "hf-classifier"
model = "{model}"
head_aggregate = "index"
head_index = 3

[[metrics]]
name = "pairwise-accuracy"
"""


@pytest.mark.parametrize("enabled", [True, False])
def test_a_model_error_in_the_checks_names_the_recipe_entry_as_scoring_would(
    enabled, tiny_models, tmp_path
):
    from rmaudit.components.scoring_checks import CheckSettings
    from rmaudit.errors import BadInput
    from rmaudit.recipe import load_recipe
    from rmaudit.run import Runner
    from rmaudit.store import Store

    recipe = tmp_path / "recipe.toml"
    recipe.write_text(RECIPE.replace("{model}", tiny_models["llama-rm"]), encoding="utf-8")
    store = Store.open(tmp_path / "run.db")
    try:
        with pytest.raises(BadInput) as caught:
            Runner(load_recipe(recipe), store, checks=CheckSettings(enabled=enabled)).run()
    finally:
        store.close()
    assert "3 heads" in caught.value.problem
    assert caught.value.file == str(recipe) and caught.value.field.startswith("reward_models")


def test_the_model_flags_of_every_printed_fix_reach_the_recipe(audit, tiny_models):
    result = audit(
        tiny_models["gpt2-rm"],
        "--print-recipe",
        "--truncation-side",
        "right",
        "--chat-template",
        "{{ bos_token }}{{ messages[0]['content'] }}",
        "--config-override",
        "resid_pdrop=0",
        "--config-override",
        "summary_type=last",
        "--pad-to-multiple",
        "1",
        "--deterministic",
    )
    assert result.code == 0, result.err
    recipe = tomllib.loads(result.out)
    (model,) = [t for t in recipe["reward_models"] if t["label"] == "gpt2-rm"]
    assert model["truncation_side"] == "right" and model["pad_to_multiple"] == 1
    assert model["chat_template"] == "{{ bos_token }}{{ messages[0]['content'] }}"
    assert model["config_overrides"] == {"resid_pdrop": 0, "summary_type": "last"}
    assert model["deterministic"] is True


@pytest.mark.parametrize(
    ("flag", "said"),
    [
        ("resid_pdrop", "--config-override: expected NAME=VALUE (got 'resid_pdrop')"),
        ("no_such=1", "config_overrides.no_such: the model's config has no such attribute"),
    ],
)
def test_a_config_override_that_cannot_apply_is_one_line_and_writes_nothing(
    flag, said, audit, tiny_models, tmp_path
):
    result = audit(tiny_models["gpt2-rm"], "--config-override", flag)
    assert result.code == 2 and said in result.err.strip().splitlines()[-1], result.err
    assert not (tmp_path / "audit.db").exists()


def test_a_model_scoring_nan_is_refused_by_its_checks_before_the_db(audit, tiny_models, tmp_path):
    """The checks' sample passes the scores stage's own check in the plan: a NaN there is one
    line naming the model, the response and the value, and the DB is never made."""
    import transformers

    path = tmp_path / "nan-rm"
    model = transformers.AutoModelForSequenceClassification.from_pretrained(tiny_models["gpt2-rm"])
    with torch.no_grad():
        model.score.weight[0, 0] = float("nan")
    model.save_pretrained(path)
    transformers.AutoTokenizer.from_pretrained(tiny_models["gpt2-rm"]).save_pretrained(path)
    result = audit(str(path))
    assert result.code == 2, result.err
    (error,) = result.err.strip().splitlines()
    assert "reward_models[0]: reward model 'nan-rm' returned a non-finite score for response " in (
        error
    )
    assert error.endswith("(got nan)")
    assert not (tmp_path / "audit.db").exists()
