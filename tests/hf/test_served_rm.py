"""Served reward models against real HTTP servers (tests/_served_rm.py) of a tiny Hugging Face
RM built in this session: for each protocol, ``rmaudit audit http://… --rm-protocol P`` scores
every response as the same checkpoint audited in-process does, bit for bit; a rerun sends
nothing at all; a server whose scores move with the batch fails the batch
invariance check, and one that cuts long inputs the truncation check."""

from __future__ import annotations

import json
import sqlite3

import pytest
from _served_rm import RewardServer, TinyRM
from test_audit import write_llmbar

pytest.importorskip("torch")
pytest.importorskip("openai", reason="served reward models need the api extra")

#: (protocol, who writes the conversation)
PROTOCOLS = [
    ("vllm-pooling", "server"),
    ("vllm-classify", "rmaudit"),
    ("openrlhf-rm", "rmaudit"),
    ("sglang-classify", "rmaudit"),
]


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the audit's results file lands here
    monkeypatch.setenv("RMAUDIT_CACHE_DIR", str(tmp_path / "cache"))


def stored_scores(db, label: str) -> dict[str, float]:
    """Response id → score of the model of ``label``, read from the DB."""
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "select s.response_id, s.score from rm_scores s join run_reward_models m "
            "on m.rm_key = s.rm_key where m.label = ?",
            [label],
        ).fetchall()
    return dict(rows)


def stored_checks(db, label: str) -> dict[str, dict]:
    """Check name → the check, of the model of ``label``."""
    with sqlite3.connect(db) as connection:
        (checks,) = connection.execute(
            "select checks from scoring_checks where label = ?", [label]
        ).fetchone()
    return {check["name"]: check for check in json.loads(checks)["checks"]}


def served_args(server: RewardServer, protocol: str, *extra: str) -> list[str]:
    return [server.url, "--rm-protocol", protocol, "--rm-dtype", "float32", *extra]


@pytest.mark.parametrize(("protocol", "template"), PROTOCOLS)
def test_a_served_audit_scores_every_response_as_the_checkpoint_in_process(
    rmaudit, tiny_models, tmp_path, protocol, template
):
    data, db = tmp_path / "data", tmp_path / "audit.db"
    pairs = write_llmbar(data)
    model = tiny_models["gpt2-rm"]
    with RewardServer(protocol, TinyRM(model)) as server:
        args = [
            "audit",
            *served_args(server, protocol, "--rm-tokenizer", model, "--rm-template", template),
            # one text a request and one a forward pass: both sides run each input alone
            "--rm-batch-size",
            "1",
            model,
            "--batch-size",
            "1",
            "--suite",
            "llmbar",
            "--data-dir",
            str(data),
            "--db",
            str(db),
            "--json",
        ]
        first = rmaudit(*args)
        assert first.code == 0, first.err
        label = f"{protocol}:{server.url.removeprefix('http://')}"
        served, local = stored_scores(db, label), stored_scores(db, "gpt2-rm")
        assert len(served) == len({(prompt, text) for prompt, *both in pairs for text in both})
        assert served == local  # score for score, bit for bit
        (suite,) = json.loads(first.out)["suites"]
        metrics = {m["label"]: m["metrics"] for m in suite["models"]}
        assert metrics[label] == metrics["gpt2-rm"]
        checks = stored_checks(db, label)
        assert {name: c["status"] for name, c in checks.items()} == {
            "batch invariance": "pass",
            "template": "pass",
            "truncation": "pass",
            "determinism": "pass",
        }
        said = "the server's chat template" if template == "server" else "rmaudit, with"
        assert checks["template"]["finding"].startswith(said)

        sent = len(server.log)
        again = rmaudit(*args)
        assert again.code == 0, again.err
        assert len(server.log) == sent  # every score is stored: nothing is asked again
    assert stored_scores(db, label) == served


def test_a_server_whose_scores_move_with_the_batch_fails_the_batch_invariance_check(
    rmaudit, tiny_models, tmp_path
):
    data, db = tmp_path / "data", tmp_path / "audit.db"
    write_llmbar(data)
    model = tiny_models["gpt2-rm"]

    def batch_dependent(size: int, position: int) -> float:
        return 0.0 if size == 1 else 0.5 * position / size  # later rows of a batch drift up

    with RewardServer("openrlhf-rm", TinyRM(model), perturb=batch_dependent) as server:
        done = rmaudit(
            "audit",
            *served_args(server, "openrlhf-rm", "--rm-tokenizer", model, "--rm-batch-size", "8"),
            "--suite",
            "llmbar",
            "--data-dir",
            str(data),
            "--db",
            str(db),
        )
    assert done.code == 0, done.err
    label = f"openrlhf-rm:{server.url.removeprefix('http://')}"
    check = stored_checks(db, label)["batch invariance"]
    assert check["status"] == "fail", check
    # the largest gap is the perturbation's largest, 0.5 * 7 / 8, give or take float32's
    assert check["figures"]["largest difference"] == pytest.approx(0.5 * 7 / 8, abs=1e-5)
    assert "batch invariance" in done.err


@pytest.mark.parametrize(
    ("protocol", "flags", "status", "unread"),
    [
        # OpenRLHF's serve_rm cuts every text to --data.max_len tokens, keeping the first
        ("openrlhf-rm", (), "fail", "end not read"),
        # vLLM keeps the last truncate_prompt_tokens of a longer input
        ("vllm-pooling", ("--rm-truncate", "24"), "warn", "start not read"),
    ],
)
def test_a_server_that_cuts_long_inputs_is_caught_by_the_truncation_check(
    rmaudit, tiny_models, tmp_path, protocol, flags, status, unread
):
    data, db = tmp_path / "data", tmp_path / "audit.db"
    write_llmbar(data)
    model = tiny_models["gpt2-rm"]
    served = TinyRM(model)
    with RewardServer(protocol, served, max_tokens=24) as server:
        done = rmaudit(
            "audit",
            *served_args(server, protocol, "--rm-tokenizer", model, *flags),
            "--suite",
            "llmbar",
            "--data-dir",
            str(data),
            "--db",
            str(db),
        )
    assert done.code == 0, done.err
    label = f"{protocol}:{server.url.removeprefix('http://')}"
    check = stored_checks(db, label)["truncation"]
    assert check["status"] == status, check
    sent = [t for e in server.log for t in e.get("texts", ())]  # as the server renders them
    assert max(len(served.tokens(text)) for text in sent) > 24  # long inputs were sent...
    assert max(n for e in server.log for n in e.get("tokens", ())) == 24  # ...and cut
    assert check["figures"][unread] == 2


def stored_logits(db, run_id: str, label: str) -> dict[str, float]:
    """Pair id → score(chosen) − score(rejected) of the model of ``label``, from the DB."""
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "select p.id, c.score - r.score from runs "
            "join pair_sets s on s.pair_set_key = runs.pair_set_key "
            "join pairs p on p.id = s.pair_id "
            "join run_reward_models m on m.run_id = runs.id and m.label = ? "
            "join rm_scores c on c.response_id = p.chosen_id and c.rm_key = m.rm_key "
            "join rm_scores r on r.response_id = p.rejected_id and r.rm_key = m.rm_key "
            "where runs.id = ?",
            [label, run_id],
        ).fetchall()
    return dict(rows)


def _parity(rmaudit, db, *extra: str) -> dict:
    compared = rmaudit("compare", str(db), *extra, "--json")
    assert compared.code == 0, compared.err
    (section,) = json.loads(compared.out)["parity"]
    return section


def test_the_parity_section_finds_a_faithful_server_equal_and_catches_a_perturbing_one(
    rmaudit, tiny_models, tmp_path
):
    data, db = tmp_path / "data", tmp_path / "audit.db"
    write_llmbar(data)
    model = tiny_models["gpt2-rm"]

    def batch_dependent(size: int, position: int) -> float:
        return 0.0 if size == 1 else 0.5 * position / size

    def audited(server, *extra: str) -> str:
        done = rmaudit(
            "audit",
            *served_args(server, "vllm-pooling", "--rm-tokenizer", model, *extra),
            model,
            "--batch-size",
            "1",
            "--suite",
            "llmbar",
            "--data-dir",
            str(data),
            "--db",
            str(db),
            "--json",
        )
        assert done.code == 0, done.err
        return json.loads(done.out)["suites"][0]["run_id"]

    with RewardServer("vllm-pooling", TinyRM(model)) as faithful:
        audited(faithful)  # chat requests, one conversation each: the checkpoint's scores
    section = _parity(rmaudit, db)
    assert section["checkpoint"] == "gpt2-rm"
    assert section["largest_difference"] == 0.0 and section["within_tolerance"] == 1.0
    assert section["flips"] == 0 and section["rank_correlation"] == pytest.approx(1.0)
    accuracy = section["accuracy_difference"]
    assert accuracy["value"] == 0.0 and accuracy["ci_low"] < 0 < accuracy["ci_high"]

    with RewardServer("vllm-pooling", TinyRM(model), perturb=batch_dependent) as drifting:
        run_id = audited(drifting, "--rm-template", "rmaudit", "--rm-batch-size", "8")
        label = f"vllm-pooling:{drifting.url.removeprefix('http://')}"
    section = _parity(rmaudit, db, run_id, "--parity", f"{label}=gpt2-rm", "--tolerance", "1e-4")
    served, local = stored_scores(db, label), stored_scores(db, "gpt2-rm")
    gaps = [abs(served[r] - local[r]) for r in served]
    assert section["largest_difference"] == pytest.approx(max(gaps))
    assert section["largest_difference"] > 0.1  # the perturbation is caught
    assert section["within_tolerance"] == pytest.approx(sum(g <= 1e-4 for g in gaps) / len(gaps))
    first, second = stored_logits(db, run_id, label), stored_logits(db, run_id, "gpt2-rm")
    flips = [
        p for p in first if (first[p] > 0) != (second[p] > 0) or (first[p] == 0) != (second[p] == 0)
    ]
    assert section["flips"] == len(flips)
    wins = sum(first[p] > 0 for p in first) - sum(second[p] > 0 for p in second)
    assert section["accuracy_difference"]["value"] == pytest.approx(wins / len(first))
    assert len(section["worst_flips"]) == min(5, len(flips))
