"""The suites of process reward models: PRMBench and ProcessBench (docs/prm.md)."""

from __future__ import annotations

from rmaudit.components.vocabulary import STEP_AUROC, ResultKey
from rmaudit.metrics.process.aggregation import AGGREGATIONS

from .suite import Headline, HubSource, Suite, SuiteFile

#: PRMBench's error classes (as its data names them; "redundency" sic), and the SHA-256 of
#: their test files at the pinned commit: each class's p1 then p2 file, then multi_solutions
PRMBENCH_CLASSES = (
    "circular",
    "confidence",
    "counterfactual",
    "deception",
    "domain_inconsistency",
    "missing_condition",
    "redundency",
    "step_contradiction",
)
_PRMBENCH_DIGESTS = (
    "7205855b6b7e9a161b9b7c1e163274bea5b9ecd4ba0a435100e8e545fea42a4a",
    "531060d9a79fb9561b046361258c993bfe06a6e8df18e0f8f30bb28df0a200c4",
    "17ec2af85dfb6cc230c9d4c6f3b6b9b7668d5bcb7db0e8ae9e2b6b74e6b5a509",
    "53ba01695ab145a8393f20cac6f96b9b836e39f169fc4ff18d7ed48cac9c1a0d",
    "18774eff6acc1a1ff8d8be5168d451511a1bb42d1b6a000f50db008cfb0a0d54",
    "8910343b84696dc2b36cc7b1833e934897e55c66bbe4b93d5040736443a2f03d",
    "5a68973f459b49be56e6e2d375bf69668dcf8476c79096c1541e293bb02df44f",
    "b98ba8ef38abbcb04ce8766e1bcb80e6aafb19661da675e3c2334e44ace3acdd",
    "551818a44f7ccebda16743711f6f60198cd6617296c559243b3866fd7f562f0d",
    "66bc63f3080fcbe8b372f0fe460b4f26f9ffd1cedef9a85e4cd354c9547ca479",
    "216f8ea75d585becbb915070faa39b46ac07f618e7ece33bb3931ff0247b371c",
    "93b52efc514eeaed3156c1fccf3c9e4e7b633f0eb131c1a50a3b9a1d45b6c18c",
    "0c23552bf0abb801acc11ee18954c4595101f334761362afa809af76238eb2c9",
    "e729812baf0c3456dc7eafb856a8380f9c21579ea225f307d0edd947cd5e2746",
    "7d291f5596715f8b21db2aae2ebcc5b7347b099f0cc66a7a2788ee56601c4aa8",
    "7c77a62dfb9165db3d5033732eaef161b6d8dee09d548db6cb08d1a5ed4e74ac",
    "4cda3e5946f02d0c3e79bd9e2513af8cde2efe83868c63e469ca10388a98a99d",
)
_PRMBENCH_FILES = (
    *(f"prm800k_test_{part}_4o_{name}" for name in PRMBENCH_CLASSES for part in ("p1", "p2")),
    "prm_test_p12_multi_solutions",
)

_PRMBENCH = Suite(
    name="prmbench",
    title="PRMBench: fine-grained step error detection by process reward models",
    measures="PRMScore (½·F1 on valid steps + ½·F1 on erroneous steps) overall and per error "
    "class, F1 and negative F1, and the PRMScore over every step threshold",
    size="3,013 solutions (36,305 steps) of 307 questions: 8 error classes of 351–357 "
    "solutions and 165 multi_solutions (the test items in PRMBench's repository)",
    origin="github.com/ssmisya/PRMBench@a1ae4eab803e14c4c6316bf89d1679b0486faa8c",
    fetch="mr_eval/tasks/prmtest_classified/data/*.jsonl (17 files) from "
    "github.com/ssmisya/PRMBench into DATA_DIR/prmbench/ (gzipped or not)",
    files=tuple(
        SuiteFile(f"prmbench/{stem}.jsonl.gz", "prmbench", sha256=sha)
        for stem, sha in zip(_PRMBENCH_FILES, _PRMBENCH_DIGESTS, strict=True)
    ),
    metrics=({"name": "prmbench-score"},),
    headlines=(
        Headline("prmbench-score", "prm_score", "PRMScore"),
        *(
            Headline("prmbench-score", f"prm_score[{name}]", name)
            for name in (*PRMBENCH_CLASSES, "multi_solutions")
        ),
    ),
    solutions="prmbench",
)

#: ProcessBench's splits, each a file of its hub repository
PROCESSBENCH_SPLITS = ("gsm8k", "math", "olympiadbench", "omnimath")

_PROCESSBENCH = Suite(
    name="processbench",
    title="ProcessBench: does the process reward model find the first wrong step?",
    measures="F1 of the accuracies on erroneous and on correct solutions per split and their "
    "average; the AUROC of min / last / product / mean step aggregation at telling correct "
    "final answers",
    size="3,400 solutions: gsm8k 400, math 1,000, olympiadbench 1,000, omnimath 1,000",
    origin="Qwen/ProcessBench (local copy)",
    fetch="gsm8k.json, math.json, olympiadbench.json and omnimath.json from "
    "hf.co/datasets/Qwen/ProcessBench into DATA_DIR/processbench/ (gzipped or not; or let "
    "rmaudit download them: pip install 'rmaudit[datasets]', network on)",
    files=tuple(
        SuiteFile(f"processbench/{split}.json.gz", "processbench", hub=f"{split}.json")
        for split in PROCESSBENCH_SPLITS
    ),
    metrics=({"name": "processbench-f1"}, {"name": "step-aggregation"}),
    headlines=(
        Headline("processbench-f1", "average_f1", "avg F1"),
        *(Headline("processbench-f1", f"f1[{split}]", split) for split in PROCESSBENCH_SPLITS),
        *(
            Headline("step-aggregation", str(ResultKey(STEP_AUROC, how)), f"AUROC {how}")
            for how in AGGREGATIONS
        ),
    ),
    hub=HubSource("Qwen/ProcessBench"),
    solutions="processbench",
)

#: in the order ``rmaudit audit`` runs and lists them
PROCESS_SUITES = (
    _PRMBENCH,
    _PROCESSBENCH,
)
