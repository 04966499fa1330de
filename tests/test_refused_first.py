"""Every value is checked before anything is written (issue 43): each bad input below is exit
code 2, one line naming the option, file or field and the value, and the DB absent or
byte-identical — a new DB and one holding an earlier run.  Before, each was a raw exception
(MemoryError, InvalidURL, OverflowError, a pydantic error), a value accepted and stored (Inf),
a flag silently unused, or a refusal after a failed run and its items were written."""

from __future__ import annotations

import json
import socket
import sqlite3
from pathlib import Path

import pytest
import test_checked_first
from _support import SMALL_RECIPE
from test_audit import write_llmbar
from test_checked_first import refused, untouched

#: the fixtures: the refused command's DB (new, or holding an earlier run), and that run's DB
db, earlier_db = test_checked_first.db, test_checked_first.earlier_db


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an audit's results file lands here


@pytest.fixture
def llmbar(tmp_path) -> Path:
    data = tmp_path / "data"
    write_llmbar(data)
    return data


def judge_audit(rmaudit, data: Path, db: Path, url: str, *flags: str):
    return rmaudit(
        "audit",
        "judge:test-judge",
        "--base-url",
        url,
        "--api-key-env",
        "",
        "--suite",
        "llmbar",
        "--data-dir",
        str(data),
        "--db",
        str(db),
        *flags,
    )


def free_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# -- templates, URLs, prices, timeouts --------------------------------------------------------
def test_a_template_padding_to_a_huge_width_is_refused(rmaudit, tmp_path, llmbar, db):
    template = tmp_path / "wide.txt"
    template.write_text("{question:>99999999999}\n{answer_a}\n{answer_b}\n", encoding="utf-8")
    check = untouched(db)
    done = judge_audit(
        rmaudit, llmbar, db, "http://127.0.0.1:9/v1", "--judge-template", str(template)
    )
    refused(done, f"{template}", "{question:>99999999999}", "a width or precision above 10,000")
    check()


@pytest.mark.parametrize(
    "spec, said",
    [
        ("{question:d}", "not a format spec for text"),
        ("{question!z}", "unknown conversion !z"),
        ("{question:{answer}}", "a placeholder inside a format spec"),
        ("{question:.123456}", "a width or precision above 10,000"),
    ],
)
def test_an_oracle_template_whose_format_spec_fails_is_refused(
    rmaudit, write_recipe, tmp_path, db, spec, said
):
    pytest.importorskip("openai", reason="the api extra (the openai SDK) is not installed")
    template = tmp_path / "judge.txt"
    template.write_text(f"Rate {spec}\n{{answer}}\n", encoding="utf-8")
    oracle = '[oracle]\nname = "simulated-judge"\nsamples = 3'
    judge = (
        '[oracle]\nname = "llm-judge"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "judge"\n'
        f'template_file = "{template.name}"'
    )
    recipe = write_recipe(SMALL_RECIPE.replace("{extra_rms}", "").replace(oracle, judge))
    check = untouched(db)
    refused(rmaudit("run", str(recipe), "--db", str(db)), f"{template}", spec, said)
    check()


@pytest.mark.parametrize("url", ["http://[::1", "http://localhost:99999/v1", "localhost:8000"])
def test_a_base_url_that_is_no_url_is_refused(rmaudit, llmbar, db, url):
    check = untouched(db)
    refused(judge_audit(rmaudit, llmbar, db, url), "--base-url", repr(url))
    check()


@pytest.mark.parametrize(
    "line, field",
    [
        ('base_url = "http://[::1"', "reward_models[2].base_url"),
        ("timeout_s = inf", "reward_models[2].timeout_s"),
        ("price = { prompt = inf, completion = 10 }", "reward_models[2].price.prompt"),
        ("price = { prompt = -1, completion = 10 }", "reward_models[2].price.prompt"),
    ],
)
def test_a_recipe_judge_with_a_bad_url_price_or_timeout_is_refused(
    rmaudit, write_recipe, db, line, field
):
    judge = '[[reward_models]]\nlabel = "judge"\nname = "llm-judge-rm"\nmode = "rating"\n'
    judge += 'model = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
    key = line.split(" = ")[0]
    judge = "\n".join(part for part in judge.splitlines() if not part.startswith(key + " "))
    recipe = write_recipe(extra_rms=judge + "\n" + line + "\n")
    check = untouched(db)
    refused(rmaudit("run", str(recipe), "--db", str(db)), f"recipe.toml: {field}:")
    check()


@pytest.mark.parametrize("price", ["inf,10", "nan,10", "-1,10", "2.5"])
def test_a_judge_price_that_is_no_price_is_refused(rmaudit, llmbar, db, price):
    check = untouched(db)
    done = judge_audit(rmaudit, llmbar, db, "http://127.0.0.1:9/v1", "--judge-price", price)
    refused(done, "--judge-price", repr(price))
    check()


@pytest.mark.parametrize("seconds", ["inf", "nan", "0", "-5", "1e9"])
def test_a_request_timeout_that_is_no_wait_is_refused(rmaudit, llmbar, db, seconds):
    check = untouched(db)
    done = judge_audit(rmaudit, llmbar, db, "http://127.0.0.1:9/v1", "--request-timeout", seconds)
    refused(done, "--request-timeout", seconds)
    check()


@pytest.mark.parametrize("flag", [("--request-timeout", "5"), ("--judge-price", "2.5,10")])
def test_a_judge_flag_without_a_judge_over_an_api_is_refused(rmaudit, llmbar, db, flag):
    check = untouched(db)
    done = rmaudit(
        "audit", "length", "--suite", "llmbar", "--data-dir", str(llmbar), "--db", str(db), *flag
    )
    refused(done, f"{flag[0]}: {flag[0]} applies to judge:MODEL with --base-url")
    check()


def test_a_rating_template_where_only_pairs_are_judged_is_refused(rmaudit, tmp_path, llmbar, db):
    template = tmp_path / "rating.txt"
    template.write_text("Rate this.\n{question}\n{answer}\nSay [[N]].", encoding="utf-8")
    check = untouched(db)
    done = judge_audit(
        rmaudit, llmbar, db, "http://127.0.0.1:9/v1", "--judge-template", str(template)
    )
    refused(done, "--judge-template", "a rating template", "would judge pairs", str(template))
    check()


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (None, "no such judge template file or name"),  # no file there: not a name either
        (b"\xff\xfe{question} {answer}", "cannot read the judge template"),
        (b"Judge {question} alone.", "shows no answer"),
        (b"{question} {answer} {answer_a} {answer_b}", "shows both {answer} and"),
        (b"{question} {answer_a}", "missing the placeholder {answer_b}"),
    ],
)
def test_a_judge_template_file_that_cannot_be_one_is_refused(
    rmaudit, tmp_path, llmbar, db, content, said
):
    template = tmp_path / "judge.txt"
    if content is not None:
        template.write_bytes(content)
    check = untouched(db)
    done = judge_audit(
        rmaudit, llmbar, db, "http://127.0.0.1:9/v1", "--judge-template", str(template)
    )
    refused(done, "--judge-template" if content is None else str(template), said)
    check()


def test_a_judge_template_without_a_judge_is_refused(rmaudit, llmbar, db):
    check = untouched(db)
    done = rmaudit(
        "audit", "length", "--suite", "llmbar", "--data-dir", str(llmbar), "--db", str(db),
        "--judge-template", "rmaudit-pair",
    )  # fmt: skip
    refused(done, "--judge-template: --judge-template applies to judge:MODEL")
    check()


@pytest.mark.parametrize(
    ("lines", "field", "said"),
    [
        ('template_file = "rating.txt"', "template_file", "is a rating template; mode is pairwise"),
        ('template = "rmaudit-rating"', "template", "is a rating template; mode is pairwise"),
        ('template = "pair-v2"', "template", "MT-bench's names need judge_prompts_file"),
        ('template_file = "gone.txt"', "template_file", "data file not found"),
        (
            'template = "rmaudit-pair"\ntemplate_file = "rating.txt"',
            "template_file",
            "give template or template_file, not both",
        ),
    ],
)
def test_a_recipe_judges_template_that_does_not_fit_is_refused(
    rmaudit, write_recipe, tmp_path, db, lines, field, said
):
    (tmp_path / "rating.txt").write_text("Rate.\n{question}\n{answer}\n", encoding="utf-8")
    judge = '[[reward_models]]\nlabel = "judge"\nname = "llm-judge-rm"\nmode = "pairwise"\n'
    judge += f'model = "m"\nbase_url = "http://127.0.0.1:9/v1"\n{lines}\n'
    recipe = write_recipe(extra_rms=judge)
    check = untouched(db)
    refused(rmaudit("run", str(recipe), "--db", str(db)), f"reward_models[2].{field}:", said)
    check()


def test_a_data_dir_that_does_not_exist_says_so(rmaudit, tmp_path, db):
    check = untouched(db)
    done = rmaudit(
        "audit", "length", "--suite", "llmbar", "--data-dir", str(tmp_path / "dta"), "--db", str(db)
    )
    line = refused(done, "--data-dir: no such folder", str(tmp_path / "dta"))
    assert "fetch" not in line
    check()


# -- a judge's endpoint ------------------------------------------------------------------------
def test_nothing_listening_at_the_judge_url_is_refused_at_its_first_call(rmaudit, llmbar, db):
    pytest.importorskip("openai", reason="the api extra (the openai SDK) is not installed")
    url = f"http://127.0.0.1:{free_port()}/v1"
    check = untouched(db)
    line = refused(
        judge_audit(rmaudit, llmbar, db, url), "nothing answers at this URL", "connection", url
    )
    assert "gave up after" not in line and "rerun to resume" not in line  # no retries
    check()


def test_a_judge_that_never_answers_is_refused_after_the_request_timeout(
    rmaudit, llmbar, db, monkeypatch, tmp_path
):
    pytest.importorskip("openai", reason="the api extra (the openai SDK) is not installed")
    from rmaudit.testing.fake_openai import FakeOpenAI

    monkeypatch.setenv("RMAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    check = untouched(db)
    with FakeOpenAI(lambda key, attempt: "timeout", stall_s=30) as server:
        done = judge_audit(rmaudit, llmbar, db, server.base_url, "--request-timeout", "0.5")
        asked = len(server.log)
    refused(done, "nothing answers at this URL", "no reply within 0.5 s", "now 0.5 s")
    assert asked == 1  # the ready call, not tried again
    check()


# -- rmaudit plan ------------------------------------------------------------------------------
@pytest.fixture
def pilot(write_recipe, earlier_db, tmp_path) -> tuple[Path, Path]:
    """The small recipe and a copy of the DB holding its run: a fully labelled pilot."""
    copy = tmp_path / "pilot.db"
    copy.write_bytes(earlier_db.read_bytes())
    return write_recipe(), copy


@pytest.mark.parametrize(
    "flag, value",
    [
        (flag, value)
        for flag in ("--cheap-price", "--generation-price", "--scoring-price")
        for value in ("nan", "inf", "-1")
    ]
    + [("--width", value) for value in ("nan", "inf", "0", "1e-300", "1e308")]
    + [("--width-ratio", value) for value in ("nan", "inf", "1e-300", "1e308")]
    + [("--judge-price", value) for value in ("-1,10", "inf,10")],
)
def test_a_plan_flag_out_of_range_is_refused(rmaudit, pilot, flag, value):
    recipe, db = pilot
    check = untouched(db)
    line = refused(rmaudit("plan", str(recipe), "--db", str(db), f"{flag}={value}"), flag)
    assert value in line or f"(got {float(value)!r})" in line, line  # as written, or read
    check()


def damage(db: Path, statement: str) -> None:
    with sqlite3.connect(db) as conn:
        assert conn.execute(statement).rowcount > 0
    conn.close()


def test_a_pilot_with_null_oracle_labels_is_refused(rmaudit, pilot):
    recipe, db = pilot
    damage(db, "update oracle_labels set score = null where response_id like '0%'")
    check = untouched(db)
    refused(
        rmaudit("plan", str(recipe), "--db", str(db)),
        f"{db}: oracle_labels.score: database is corrupted",
        "(got None)",
    )
    check()


# -- rmaudit compare ---------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["'abc'", "x'00ff'", "9e999"])
def test_compare_on_damaged_per_prompt_values_is_refused(rmaudit, pilot, value):
    _, db = pilot
    damage(db, f"update per_prompt_results set value = {value} where rowid % 3 = 0")
    check = untouched(db)
    refused(rmaudit("compare", str(db)), f"{db}: per_prompt_results.value", "corrupted")
    check()


def test_compare_of_a_named_run_still_running_says_why_not(rmaudit, pilot):
    _, db = pilot
    damage(db, "update runs set status = 'running'")
    with sqlite3.connect(db) as conn:
        (run_id,) = conn.execute("select id from runs").fetchone()
    conn.close()
    check = untouched(db)
    refused(rmaudit("compare", str(db), run_id[:8]), "RUN", f"run {run_id[:10]}", "is running")
    check()


def test_compare_without_runs_named_says_which_run_it_picked_and_how_to_pick_another(
    rmaudit, tmp_path, llmbar
):
    db = tmp_path / "audit.db"
    for suite, extra in (("llmbar", []), ("llmbar", ["--sample", "3"])):
        done = rmaudit(
            "audit", "length", "--suite", suite, "--data-dir", str(llmbar), "--db", str(db), *extra
        )
        assert done.code == 0, done.err
    with sqlite3.connect(db) as conn:
        newest, title = conn.execute(
            "select id, title from runs order by created_at desc, rowid desc"
        ).fetchone()
    conn.close()
    done = rmaudit("compare", str(db))
    assert done.code == 0, done.err
    assert done.err.strip() == (
        f"run {newest[:10]} ({title}): the newest complete run; 1 more in {db} (rmaudit runs "
        f"{db} lists them): compare others with rmaudit compare {db} RUN..."
    )
    assert "--suite llmbar" in title


# -- rmaudit run -------------------------------------------------------------------------------
def test_a_scores_file_missing_most_ids_is_refused_before_the_run_writes(
    rmaudit,
    write_recipe,
    earlier_db,
    db,
    tmp_path,
):
    """Keyed by rmaudit's response ids: the policy's responses are checked by id in the plan,
    before any is generated (a new DB), as the stored ones are (the earlier DB)."""
    with sqlite3.connect(earlier_db) as conn:
        ids = [row[0] for row in conn.execute("select id from responses order by id")]
    conn.close()
    scores = tmp_path / "scores.jsonl"
    scores.write_text(
        "".join(json.dumps({"response_id": rid, "score": 1.0}) + "\n" for rid in ids[:10]),
        encoding="utf-8",
    )
    recipe = write_recipe(
        extra_rms=f'[[reward_models]]\nlabel = "file"\nname = "scores-file"\npath = "{scores}"\n'
    )
    check = untouched(db)
    refused(
        rmaudit("run", str(recipe), "--db", str(db)),
        f"{scores}: response_id",
        f"{len(ids) - 10} of {len(ids)} responses have no score in the file",
    )
    check()
