"""benchmarks/gpu_all.sh at smoke size on CPU (tiny models, 12 texts), and gpu_report.py on
its figures: the one script a GPU session runs is known to work before it gets there."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> tuple[dict, str]:
    out = tmp_path_factory.mktemp("gpu-all")
    result = subprocess.run(
        ["bash", "benchmarks/gpu_all.sh", "--smoke"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
        env={**os.environ, "OUT": str(out), "PYTHON": sys.executable, "HF_HUB_OFFLINE": "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads((out / "gpu_all.json").read_text()), result.stdout


def test_every_model_is_scored_by_rmaudit_and_the_naive_pipeline_alike(smoke_run):
    data, _ = smoke_run
    assert sorted(data["models"]) == ["deberta-smoke", "llama-smoke"]
    for model in data["models"].values():
        ours = np.array(model["rmaudit"]["scores"])
        naive = np.array(model["naive_pipeline"]["scores"])
        assert len(ours) == len(naive) == model["texts"] == 12 and np.ptp(naive) > 0
        # float32 on CPU: the transformers pipeline and rmaudit's batches read the same tokens
        np.testing.assert_allclose(ours, naive, rtol=0, atol=1e-5)
        flips = np.mean(np.sign(ours[0::2] - ours[1::2]) != np.sign(naive[0::2] - naive[1::2]))
        assert model["agreement"]["pair_flips"] == flips == 0
        assert model["agreement"]["within_bf16"] == 1.0
        assert model["real_tokens"] > model["texts"]
        assert model["flops"] > 2 * model["real_tokens"]
        for figures in (model["rmaudit"], model["naive_pipeline"]):
            times = figures.get("gpu_only_times_s", figures.get("times_s"))
            assert len(times) == data["meta"]["repeats"] == 1 and min(times) > 0


def test_the_end_to_end_scoring_checks_and_vllm_sections_say_what_they_found(smoke_run):
    data, _ = smoke_run
    e2e = data["e2e"]
    assert e2e["responses"] == 12 and 0 < e2e["stage_s"] < e2e["wall_s"]
    assert e2e["wall_vs_gpu_only"] == pytest.approx(e2e["wall_s"] / e2e["gpu_only_s"])
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _gpu_extras import skip_checks_flag

    from rmaudit.cli.run import run

    options = {flag for param in run.params for flag in getattr(param, "opts", ())}
    assert skip_checks_flag() == "--no-scoring-checks" and "--no-scoring-checks" in options
    assert data["scoring_checks"]["available"]
    if skip_checks_flag():
        pre = data["scoring_checks"]
        assert pre["overhead_s"] == pytest.approx(pre["wall_with_s"] - pre["wall_without_s"])
    has_vllm = importlib.util.find_spec("vllm") is not None
    assert data["vllm"]["available"] == has_vllm
    if not has_vllm:
        assert "vllm does not import" in data["vllm"]["reason"]
    assert "skipped" not in data and data["meta"]["card"] == "CPU"


def test_every_a_b_choice_scores_every_row_as_the_naive_loop_does(smoke_run):
    """The A/B sections on the first model: each batching choice, the weights read either
    way and a fresh process's first call either way give the naive loop's scores (float32 on
    CPU: to 10⁻⁵), each row checked here against the naive loop's."""
    data, _ = smoke_run
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _gpu_ab import AB_CONFIGS

    first = data["models"]["llama-smoke"]
    naive = np.array(first["naive_pipeline"]["scores"])
    configs = data["ab"]["configs"]
    assert list(configs) == AB_CONFIGS["cpu"] and data["ab"]["texts"] == len(naive) == 12
    for name, config in configs.items():
        assert config["available"], config
        np.testing.assert_allclose(config["scores"], naive, rtol=0, atol=1e-5, err_msg=name)
        assert config["agreement"]["within_dtype"] == 1.0 and config["warm_s"] > 0
    assert configs["packed"]["report"]["padding-free"] == "yes"
    load = data["load"]
    assert (
        load["same_weights"] and min(load["straight to the device"], load["host, then moved"]) > 0
    )
    call = data["first_call"]
    assert call["available"] and call["items"] == 12 and call["equal_scores"]
    for scores in call["scores"].values():
        np.testing.assert_allclose(scores, naive, rtol=0, atol=1e-5)
    if importlib.util.find_spec("vllm") is None:  # the served-RM parity needs a vllm serve
        assert data["served"] == {"available": False, "reason": "vllm does not import"}


def test_the_report_prints_every_table_and_writes_only_between_its_markers(smoke_run, tmp_path):
    data, stdout = smoke_run
    for model, figures in data["models"].items():
        rate = figures["real_tokens"] / figures["rmaudit"]["gpu_only_s"]
        assert f"| {model} | 12 ({figures['real_tokens']:,}) | {rate:,.0f} (n/a) |" in stdout
    assert "| `rmaudit run` ≤ 1.3× the GPU-only time |" in stdout
    assert "| scoring, one RM | tokens/s per GPU (MFU) |" in stdout
    assert "| A/B on llama-smoke (first 12 texts) |" in stdout
    assert "| packed |" in stdout and "(the same weights: yes)" in stdout
    # what changed, row by row, against the H200 run of 2026-11-27 (its figures, read here)
    old = json.loads((ROOT / "benchmarks/gpu/h200-2026-11-27-gpu_all.json").read_text())
    assert (
        f"| `rmaudit run`: wall | {old['e2e']['wall_s']:.1f} s | {data['e2e']['wall_s']:.1f} s |"
        in stdout
    )
    assert "| llama-1b: rmaudit GPU only, tokens/s | 163,001 | not measured | — |" in stdout
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import gpu_report

    for relative in ("benchmarks/README.md", "docs/scaling.md"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / relative, tmp_path / relative)
    before = {p: (tmp_path / p).read_text() for p in ("benchmarks/README.md", "docs/scaling.md")}
    blocks = gpu_report.sections(data, gpu_report.baseline_run())
    gpu_report.ROOT = tmp_path
    try:
        assert len(gpu_report.write(blocks)) == 2
    finally:
        gpu_report.ROOT = ROOT
    for path, names in (
        ("benchmarks/README.md", ["scoring", "changes"]),
        ("docs/scaling.md", ["capacity"]),
    ):
        text, written = before[path], (tmp_path / path).read_text()
        for name in names:
            start, end = f"<!-- gpu-report:{name} -->\n", f"\n<!-- /gpu-report:{name} -->"
            assert written.split(start)[1].split(end)[0] == blocks[name]
        # outside the blocks, nothing moved
        outside = re.compile(r"(<!-- gpu-report:(\w+) -->\n).*?(\n<!-- /gpu-report:\2 -->)", re.S)
        assert outside.sub(r"\1\3", written) == outside.sub(r"\1\3", text)


def test_the_figures_are_kept_under_benchmarks_gpu_by_card_and_day(smoke_run):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import gpu_report

    data, _ = smoke_run
    kept = gpu_report.stored_as(data)
    assert kept == ROOT / "benchmarks/gpu" / f"cpu-{data['meta']['started'][:10]}-gpu_all.json"
    h200 = {"meta": {**data["meta"], "card": "NVIDIA H200", "started": "2026-11-27T14:05:38Z"}}
    assert gpu_report.stored_as(h200).name == "h200-2026-11-27-gpu_all.json"
    h100 = {"meta": {**data["meta"], "card": "NVIDIA H100 80GB HBM3"}}
    assert gpu_report.stored_as(h100).name.startswith("h100-")


def test_peaks_match_card_names_most_specific_first():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _gpu_scoring import peak_tflops

    assert peak_tflops("NVIDIA H100 80GB HBM3") == 989.4
    assert peak_tflops("NVIDIA H100 PCIe") == 756.0
    assert peak_tflops("NVIDIA H200") == 989.4
    assert peak_tflops("NVIDIA A100-SXM4-80GB") == 312.0
    assert peak_tflops("NVIDIA L40S") == 362.1
    assert peak_tflops("CPU") is None


def test_runs_of_one_card_merge_and_runs_of_two_cards_are_refused(smoke_run):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import gpu_report

    data, _ = smoke_run
    first, second = json.loads(json.dumps(data)), json.loads(json.dumps(data))
    (name, model), *_ = data["models"].items()
    first["models"] = {name: model}
    second["models"] = {f"{name}-rerun": model}
    second = {"meta": second["meta"], "models": second["models"], "skipped": ["rmaudit run"]}
    merged = gpu_report.merged([first, second])
    assert list(merged["models"]) == [name, f"{name}-rerun"]
    # the second run skipped what the first measured: not reported as skipped
    assert "skipped" not in merged and merged["e2e"] == data["e2e"]
    second["skipped"].append("scoring: never-measured")
    assert gpu_report.merged([first, second])["skipped"] == ["scoring: never-measured"]
    second["meta"] = {**second["meta"], "card": "NVIDIA H200"}
    with pytest.raises(SystemExit, match="different cards"):
        gpu_report.merged([first, second])
