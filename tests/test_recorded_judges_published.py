"""The LLMBar paper's 65 judge configurations, audited from their published outputs in
rmaudit's shared data folder (``../shared/data`` beside the checkout; skipped without it):
the publisher's figures in the results file equal all 325 ``statistics.json`` files."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from _recorded import LLMBAR_SUBSETS, matches_statistics

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
EVALUATORS = SHARED / "llmbar" / "LLMBar" / "Natural" / "evaluators"

pytestmark = pytest.mark.skipif(
    not EVALUATORS.is_dir(), reason=f"no LLMBar evaluator outputs under {SHARED}"
)


def test_every_statistics_file_is_reproduced(rmaudit, tmp_path):
    done = rmaudit(
        "audit",
        "--suite",
        "llmbar",
        "--recorded-judges",
        "--data-dir",
        str(SHARED),
        "--db",
        str(tmp_path / "a.db"),
        "--json",
    )
    assert done.code == 0, done.err
    (suite,) = json.loads(done.out)["suites"]
    judges = {m["label"]: m for m in suite["models"] if "publisher" in m}
    assert len(judges) == 65
    checked = 0
    for label, model in judges.items():
        for folder, subset in LLMBAR_SUBSETS:
            path = SHARED / "llmbar/LLMBar" / folder / "evaluators" / label / "statistics.json.gz"
            statistics = json.loads(gzip.decompress(path.read_bytes()))
            assert matches_statistics(model["publisher"]["subsets"][subset], statistics), path
            checked += 1
    assert checked == 325
    # the paper's GPT-4 Vanilla_NoRules on Natural (Acc. 93.5, Agr. 97.0), by rmaudit's own
    # definitions too: no unparsed verdict there, so its accuracy and consistency agree
    judge = judges["GPT-4/Vanilla_NoRules"]["judge"]
    assert judge["judge_accuracy[llmbar-natural]"]["value"] == pytest.approx(0.935)
    assert judge["consistency[llmbar-natural]"]["value"] == pytest.approx(0.97)
