"""Judge failures retry (issue 13): a reply without a score is neither cached nor served from
the cache, a rerun's failure rows replace the earlier attempt's instead of piling up, a relative
``cache =`` lies beside the recipe, and a run whose every request is cached needs no API key."""

from __future__ import annotations

import sqlite3

from _api_support import KEY_ENV
from test_llm_judge import PROMPTS, SAMPLES, write_recipe

RESPONSES = len(PROMPTS) * 4


def _switchable():
    """A schedule whose outcome the test sets: every request gets ``outcome["now"]``."""
    outcome = {"now": "garbage"}
    return outcome, lambda key, attempt: outcome["now"]


def _rows(db, sql: str) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _count(db, sql: str) -> int:
    return _rows(db, sql)[0][0]


def _judge_requests(server) -> int:
    return sum(1 for e in server.log if e.get("answer") is not None)


def test_a_failed_judge_reply_is_asked_again_and_its_failures_are_not_duplicated(
    tmp_path, fake_openai, rmaudit
):
    outcome, schedule = _switchable()
    server = fake_openai(schedule)
    recipe, db = write_recipe(tmp_path, server), tmp_path / "audit.db"
    failures = "select count(*) from failures where stage = 'oracle labels'"
    attempts = "select min(attempts), max(attempts) from failures"

    first = rmaudit("run", str(recipe), "--db", str(db))
    assert first.code != 0, first.err  # no label has a score: no metric can be computed
    assert _count(db, failures) == RESPONSES * SAMPLES
    assert _rows(db, attempts) == [(1, 1)]
    asked = _judge_requests(server)
    assert asked >= RESPONSES

    again = rmaudit("run", str(recipe), "--db", str(db))  # the judge still fails
    assert again.code != 0, again.err
    assert _judge_requests(server) == 2 * asked, "a score-less reply was served from the cache"
    assert _count(db, failures) == RESPONSES * SAMPLES, "the rerun duplicated failure rows"
    assert _rows(db, attempts) == [(2, 2)], "each failure counts its item's attempts"

    outcome["now"] = "ok"
    fixed = rmaudit("run", str(recipe), "--db", str(db))
    assert fixed.code == 0, fixed.err
    assert _judge_requests(server) == 3 * asked
    assert _count(db, "select count(*) from oracle_labels") == RESPONSES
    assert _count(db, failures) == 0, "the failures of labels that now have a score remain"


def test_a_run_whose_requests_are_all_cached_needs_no_api_key(
    tmp_path, fake_openai, rmaudit, monkeypatch
):
    server = fake_openai()
    recipe = write_recipe(tmp_path, server)
    first = rmaudit("run", str(recipe), "--db", str(tmp_path / "first.db"))
    assert first.code == 0, first.err
    sent = len(server.log)

    monkeypatch.delenv(KEY_ENV)
    replayed = rmaudit("run", str(recipe), "--db", str(tmp_path / "second.db"))
    assert replayed.code == 0, replayed.err
    assert len(server.log) == sent

    # a request the cache cannot answer still demands the key, in one line
    recipe.write_text(recipe.read_text().replace('model = "judge-1"', 'model = "judge-2"'))
    missing = rmaudit("run", str(recipe), "--db", str(tmp_path / "third.db"))
    assert missing.code == 2, missing.err
    errors = [line for line in missing.err.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and KEY_ENV in errors[0] and "Traceback" not in missing.err


def test_a_relative_cache_path_lies_beside_the_recipe(tmp_path, fake_openai, rmaudit, monkeypatch):
    server = fake_openai()
    folder = tmp_path / "recipes"
    folder.mkdir()
    recipe = write_recipe(folder, server)
    recipe.write_text(
        recipe.read_text().replace(
            'model = "judge-1"', 'model = "judge-1"\ncache = "judge-cache.sqlite"'
        )
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = rmaudit("run", str(recipe), "--db", str(tmp_path / "audit.db"))
    assert result.code == 0, result.err
    assert (folder / "judge-cache.sqlite").is_file()
    assert not (elsewhere / "judge-cache.sqlite").exists()
