"""benchmarks/bench_gpu.py's smoke mode: tiny models on CPU, every configuration and one
`rmaudit run`, so the script a GPU session runs is known to work before it gets there."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from _support import in_this_process  # noqa: E402

from rmaudit.backends.hf import runtime  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def test_the_gpu_benchmark_runs_in_smoke_mode_and_every_configuration_agrees(
    tmp_path, monkeypatch, capsys
):
    figures = tmp_path / "smoke.json"
    # in this process (torch and transformers imported once per worker), as `python SCRIPT`
    # would run; its `rmaudit run` is still a process of its own.  The script swaps
    # runtime.load_model for a cache of its models: put back after it
    monkeypatch.setattr(runtime, "load_model", runtime.load_model)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, stdout, stderr = in_this_process(
        ROOT / "benchmarks/bench_gpu.py",
        monkeypatch,
        capsys,
        *("--threads", "1", "--json", str(figures)),
    )
    assert code == 0, stderr[-3000:]
    data = json.loads(figures.read_text())
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_gpu import CONFIGS, GPU_ONLY

    by_model: dict[str, dict[str, dict]] = {}
    for row in data["results"]:
        by_model.setdefault(row["model"], {})[row["config"]] = row
    assert sorted(by_model) == ["deberta-smoke", "llama-smoke"]
    for model, rows in by_model.items():
        assert list(rows) == [name for name in CONFIGS if name not in GPU_ONLY]
        naive = np.array(rows["naive: batch 8, data order"]["scores"])
        assert len(naive) == 32 and np.ptp(naive) > 0
        for config, row in rows.items():
            # float32 on CPU: every configuration scores as the naive baseline does
            np.testing.assert_allclose(row["scores"], naive, rtol=0, atol=1e-5, err_msg=config)
            assert row["tokens"] > 0 and row["warm_s"] > 0 and row["flops"] > 2 * row["tokens"]
            assert f"| {model} | {config} |" in stdout
        packed = rows["packed"]["report"]["padding-free"]
        assert packed == "yes" if model == "llama-smoke" else packed.startswith("no")
    [e2e] = data["e2e"]
    assert (e2e["model"], e2e["variant"], e2e["scored"]) == ("llama-smoke", "defaults", 32)
    assert 0 < e2e["stage_s"] < e2e["wall_s"]
    assert "e2e `rmaudit run` llama-smoke (defaults): 32 responses" in stdout
