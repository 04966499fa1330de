"""Audit suites: the presets behind ``rmaudit audit`` (docs/audit.md).

A suite is a recipe template shipped with rmaudit: which public data it reads (pinned to a
source and version), which pair sources parse it and which metrics it computes.  Given the
reward models to audit and where the data lies (:mod:`.data`), :mod:`.build` turns it into
the same validated :class:`~rmaudit.recipe.Recipe` that ``rmaudit run`` reads from a file,
and that a user can print as TOML and keep.  :mod:`.models` turns the command's MODEL
arguments into reward-model tables; :mod:`.verdict` reads each suite's headline numbers back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rmaudit.components.vocabulary import STEP_AUROC, ResultKey
from rmaudit.errors import BadInput
from rmaudit.metrics.process.aggregation import AGGREGATIONS

#: the file every audit writes (beside ``--report DIR``'s report, else in the current directory)
RESULTS_FILE = "audit-results.json"


@dataclass(frozen=True)
class SuiteFile:
    """One data file of a suite: where it lies in a local mirror (``--data-dir``; the layout
    of rmaudit's shared data folder), the pair source that parses it, and that source's
    options beside its path."""

    mirror: str
    source: str
    options: dict[str, Any] = field(default_factory=dict)
    #: its path in the suite's hub repository (None: the suite has no hub source)
    hub: str | None = None
    #: SHA-256 of its content (uncompressed) at the suite's pinned source: a mirror whose file
    #: differs is recorded as local files, not as that source (None: nothing pinned)
    sha256: str | None = None


@dataclass(frozen=True)
class HubSource:
    """A Hugging Face hub dataset repository the suite's files can come from."""

    repo: str
    #: the revision asked for; the commit it resolves to is stored with the run
    revision: str = "main"


@dataclass(frozen=True)
class Headline:
    """A number a suite's closing table shows: a metric's label and key in the recipe."""

    metric: str
    key: str
    name: str
    #: what a model that knows nothing scores (½ for an accuracy, 1 for RETA); None: no such
    #: value (an ECE, a best-of-n in oracle units)
    chance: float | None = None


@dataclass(frozen=True)
class RecordedJudges:
    """Judges run elsewhere whose published outputs a suite's data folder may hold, audited
    with ``--recorded-judges`` (:mod:`.recorded_judges`; docs/judges.md, "Real judges")."""

    layout: str  # "llmbar" or "judgebench": where the outputs lie and how they read
    where: str  # where, for --list-suites and the one line when none are found


@dataclass(frozen=True)
class Suite:
    name: str
    title: str
    measures: str
    size: str
    #: the pinned data: source repository and version, recorded with the run
    origin: str
    #: what to fetch and where to put it, for the one-line message when the data is missing
    fetch: str
    files: tuple[SuiteFile, ...]
    metrics: tuple[dict[str, Any], ...]
    #: the first is the number a model must beat length and chance on (:mod:`.verdict`)
    headlines: tuple[Headline, ...]
    hub: HubSource | None = None
    #: pairs drawn from each file by default (None: every pair); --sample overrides it
    sample: int | None = None
    #: the word-perturbation shift sweep of recipes/shift.toml
    shift: bool = False
    #: a suite of a benchmark read from files (prompts × responses × oracle labels) instead
    #: of pairs: its [benchmark] table, whose ``root`` is the mirror folder below; ``files``
    #: then only tell whether the data is there
    benchmark: dict[str, Any] | None = None
    benchmark_root: str = ""
    #: the judges run elsewhere on its pairs whose outputs it reads (None: none)
    recorded: RecordedJudges | None = None
    #: a suite of process reward models (docs/prm.md): the solution source that reads its
    #: files; its MODELs are PRMs, and both PRM baselines are bars
    solutions: str | None = None
    #: a judge rates each response (as on a benchmark suite) instead of judging the pairs
    rating_judges: bool = False


_ACCURACY = Headline("pair-accuracy", "accuracy", "accuracy", chance=0.5)

_HH = Suite(
    name="hh",
    title="Anthropic HH-RLHF helpful and harmless test pairs",
    measures="accuracy, calibration (ECE, BT-ECE), energy-score OOD detection and accuracy "
    "under the word-perturbation shift sweep (p = 0 … 0.75)",
    size="200 of 2,354 helpful + 200 of 2,312 harmless pairs by default (--sample 0: all), "
    "each scored unshifted and at 15 shift levels × 3 targets",
    origin="github.com/anthropics/hh-rlhf@354e5c3cb8960630860dd5774a6ac2a58313bf4d",
    fetch="helpful-base/test.jsonl.gz and harmless-base/test.jsonl.gz from "
    "github.com/anthropics/hh-rlhf (or hf.co/datasets/Anthropic/hh-rlhf) into "
    "DATA_DIR/hh-rlhf/",
    files=(
        SuiteFile(
            "hh-rlhf/helpful-base/test.jsonl.gz",
            "hh-pairs",
            {"subset": "helpful-base"},
            hub="helpful-base/test.jsonl.gz",
            sha256="41c3a32fe45a7075f7e32b11bd29383f9fe650287354a95568f61295a8e694da",
        ),
        SuiteFile(
            "hh-rlhf/harmless-base/test.jsonl.gz",
            "hh-pairs",
            {"subset": "harmless-base"},
            hub="harmless-base/test.jsonl.gz",
            sha256="14d765196c9f18d84f9bb3a78bac608c8f2915110ebcbd74ec95db7b7198b008",
        ),
    ),
    metrics=(
        {"name": "pair-accuracy"},
        {"name": "calibration"},
        {"name": "bt-ece"},
        {"name": "ood-detection", "target": "response", "level": 0.25},
        {"name": "shift-curves"},
    ),
    headlines=(
        _ACCURACY,
        Headline("calibration", "ece", "ECE"),
        Headline("ood-detection", "ood_auroc", "OOD AUROC"),
    ),
    hub=HubSource("Anthropic/hh-rlhf"),
    sample=200,
    shift=True,
)

_RM_BENCH = Suite(
    name="rm-bench",
    title="RM-Bench: chat, code and safety pairs in three styles",
    measures="accuracy easy / normal / hard (is the RM swayed by style?) and per subset",
    size="798 prompts × 3 chosen × 3 rejected styles = 7,182 pairs (the math domain is not "
    "in the public repository)",
    origin="github.com/THU-KEG/RM-Bench@73c52d7b27b361621361ec959ac6c0eb9bb7a689",
    fetch="data/{chat,code,safety-refuse,safety-response}_filtered.json from "
    "github.com/THU-KEG/RM-Bench into DATA_DIR/rm-bench/ (gzipped or not)",
    files=tuple(
        SuiteFile(f"rm-bench/{domain}_filtered.json.gz", "rm-bench", sha256=sha256)
        for domain, sha256 in (
            ("chat", "1df6053a68119c17eed9a54d35dc654b8cde3d3b0bbd1ad6941073e40ef5c9a8"),
            ("code", "c3a56181d34835345b9c5fbf22c203439d06ea96de12b232da80628f14fe1e15"),
            ("safety-refuse", "cf25d4cc967afe68908ff710a8ffaa6fe7aff53ad70fe0b8c689b35aa20e911f"),
            ("safety-response", "364caaebd7ddaa432f5120e11e8527fc1046c50d83d0d6f89346ad25f1bf51f1"),
        )
    ),
    metrics=({"name": "pair-accuracy"}, {"name": "rm-bench"}),
    headlines=(
        Headline("rm-bench", "rm_bench_average", "average", chance=0.5),
        Headline("rm-bench", "rm_bench_easy", "easy"),
        Headline("rm-bench", "rm_bench_normal", "normal"),
        Headline("rm-bench", "rm_bench_hard", "hard"),
    ),
)

#: (folder, subset, SHA-256 of its dataset.json at the pinned commit)
_LLMBAR_SUBSETS = (
    (
        "Natural",
        "llmbar-natural",
        "f7127b7aa78104cb8e03a2b1b3ac0077e95b125714dd441a8ee63666145a3375",
    ),
    (
        "Adversarial/Neighbor",
        "llmbar-adver-neighbor",
        "6712c7eda6342602e0bc7c06c282fa95e2110d4e741a284026a62d937f9780a0",
    ),
    (
        "Adversarial/GPTInst",
        "llmbar-adver-GPTInst",
        "1002425f73c2cf54b6e6de99bce3f6c60fa2a17d13194772e37d7481c1351d42",
    ),
    (
        "Adversarial/GPTOut",
        "llmbar-adver-GPTOut",
        "1ff56e520d7607750a9866a3be0f5b850392ca4477a1f69d80f32bd3e310f561",
    ),
    (
        "Adversarial/Manual",
        "llmbar-adver-manual",
        "0d9598769a39cdbbd265778c37e49939d41d5f76dcfb17bd75dcfa07516d3837",
    ),
)

_LLMBAR_ORIGIN = "github.com/princeton-nlp/LLMBar@900616bff90b6c6c8e1681f7d079250637c55992"
#: the LLMBar paper's evaluators beside each dataset.json
_LLMBAR_JUDGES = RecordedJudges(
    "llmbar",
    "SUBSET/evaluators/LLM/STRATEGY/result.json[.gz] beside each dataset.json (the LLMBar "
    "paper's judges, each LLM × prompting strategy one model)",
)


def _llmbar(
    name: str,
    title: str,
    measures: str,
    size: str,
    base: str,
    subsets: tuple[tuple[str, str, str], ...],
) -> Suite:
    """A suite of LLMBar's pairs, ``DATA/llmbar/BASE/FOLDER/dataset.json`` per subset."""
    return Suite(
        name=name,
        title=title,
        measures=measures,
        size=size,
        origin=_LLMBAR_ORIGIN,
        fetch=f"Dataset/{base}/ from github.com/princeton-nlp/LLMBar into DATA_DIR/llmbar/{base}/"
        + (" (its LLMEval^2 folder as LLMEval2)" if base == "Processed" else ""),
        files=tuple(
            SuiteFile(
                f"llmbar/{base}/{folder}/dataset.json", "llmbar", {"subset": subset}, None, sha
            )
            for folder, subset, sha in subsets
        ),
        metrics=({"name": "pair-accuracy"},),
        headlines=(_ACCURACY,),
        recorded=_LLMBAR_JUDGES,
    )


_LLMBAR = _llmbar(
    "llmbar",
    "LLMBar: instruction following, natural and adversarial pairs",
    "accuracy overall and per subset (RewardBench's Chat Hard sources)",
    "419 pairs: Natural 100, Adversarial Neighbor 134, GPTInst 92, GPTOut 47, Manual 46",
    "LLMBar",
    _LLMBAR_SUBSETS,
)

#: (folder, subset, SHA-256 of its dataset.json at the pinned commit; upstream's LLMEval^2)
_LLMBAR_PROCESSED_SUBSETS = (
    ("MT-Bench", "mt-bench", "c152249bc095d152485954bd2abd9ea79528ee5e4c045bfe9ef78755b03c20d8"),
    ("FairEval", "faireval", "5b4a129258c1efa273a1b10fec399f5462b458facf900e8e1948f4acb1b37dd6"),
    ("LLMEval2", "llmeval2", "deffdaeccda39c0fb9337c7e20925ec2b973bfd456832c2f1ba0e9ca4cf107de"),
)

_LLMBAR_PROCESSED = _llmbar(
    "llmbar-processed",
    "LLMBar's processed human-labelled pairs: MT-Bench, FairEval, LLMEval²",
    "accuracy overall and per set (LLMBar's other meta-evaluation sets, human labels)",
    "466 pairs: MT-Bench (human experts) 200, FairEval 66, LLMEval² 200",
    "Processed",
    _LLMBAR_PROCESSED_SUBSETS,
)

_JUDGEBENCH_ORIGIN = "github.com/ScalerLab/JudgeBench@e2c52c284e735e139b3daa61c206ee208f36c461"


def _judgebench(responses: str, by: str, size: str, sha256: str) -> Suite:
    """JudgeBench on the pairs of one response model's responses."""
    return Suite(
        name="judgebench",
        title=f"JudgeBench: hard pairs with an objectively correct response ({by}'s)",
        measures="accuracy overall and per category (Knowledge, Reasoning, Math, Coding): does "
        "the model tell the correct response?",
        size=size,
        origin=_JUDGEBENCH_ORIGIN,
        fetch=f"data/dataset=judgebench,response_model={responses}.jsonl from "
        f"github.com/ScalerLab/JudgeBench into DATA_DIR/judgebench/{responses}.jsonl "
        "(gzipped or not)",
        files=(SuiteFile(f"judgebench/{responses}.jsonl.gz", "judgebench", sha256=sha256),),
        metrics=({"name": "pair-accuracy"},),
        headlines=(_ACCURACY,),
        recorded=RecordedJudges(
            "judgebench",
            f"judgebench/outputs/dataset=judgebench,response_model={responses},"
            "judge_name=N,judge_model=J.jsonl[.gz] (JudgeBench's released judges and reward "
            "models)",
        ),
    )


#: JudgeBench's pairs by whose responses they are (``--judgebench-pairs``), GPT-4o's first
JUDGEBENCH_PAIRS = {
    "gpt-4o": _judgebench(
        "gpt-4o-2024-05-13",
        "GPT-4o",
        "350 pairs: Knowledge 154, Reasoning 98, Math 56, Coding 42 (--judgebench-pairs "
        "claude: Claude-3.5-Sonnet's 270)",
        "d5106306b38dead1b2e964ecf5534a3e7b2fc4b8d3b8da327599edfcebd76042",
    ),
    "claude": _judgebench(
        "claude-3-5-sonnet-20240620",
        "Claude-3.5-Sonnet",
        "270 pairs: Knowledge 154, Reasoning 51, Math 34, Coding 31",
        "3b70504588e400613bf5744a20a345da8701b7150be9a30c9db0e6f3d7b70a62",
    ),
}

_REWARDBENCH = Suite(
    name="rewardbench",
    title="RewardBench (filtered): chat, chat hard, safety and reasoning pairs",
    measures="accuracy per subset and RewardBench's section score (Chat, Chat Hard, Safety, "
    "Reasoning)",
    size="about 3,000 pairs in 23 subsets",
    origin="allenai/reward-bench, split 'filtered' (local copy)",
    fetch="data/filtered-00000-of-00001.parquet from hf.co/datasets/allenai/reward-bench into "
    "DATA_DIR/reward-bench/ (or let rmaudit download it: pip install 'rmaudit[datasets]', "
    "network on)",
    files=(
        SuiteFile(
            "reward-bench/filtered-00000-of-00001.parquet",
            "pairs-file",
            {"subset": "subset"},
            hub="data/filtered-00000-of-00001.parquet",
        ),
    ),
    metrics=({"name": "pair-accuracy"}, {"name": "section-score", "sections": "rewardbench"}),
    headlines=(
        Headline("section-score", "section_score", "section score", chance=0.5),
        _ACCURACY,
    ),
    hub=HubSource("allenai/reward-bench"),
)

#: RewardBench 2's subsets, in the order its paper reports them
_RB2_SUBSETS = ("Factuality", "Precise IF", "Math", "Safety", "Focus", "Ties")

_REWARDBENCH_2 = Suite(
    name="rewardbench-2",
    title="RewardBench 2: best-of-4 in five domains, and Ties",
    measures="the RewardBench 2 score (the mean of its six subsets) and each subset's: "
    "best-of-4 accuracy (a tie at the top shares the credit) and the Ties score",
    size="1,865 prompts: Factuality 475, Precise IF 160, Math 183, Safety 450, Focus 495 "
    "(1 correct and 3 incorrect completions each) and Ties 102 (several of each)",
    origin="allenai/reward-bench-2, split 'test' (local copy)",
    fetch="data/test-00000-of-00001.parquet from hf.co/datasets/allenai/reward-bench-2 into "
    "DATA_DIR/reward-bench-2/data/ (or let rmaudit download it: pip install "
    "'rmaudit[datasets]', network on)",
    files=(
        SuiteFile(
            "reward-bench-2/data/test-00000-of-00001.parquet",
            "rewardbench-2",
            {"seed": 0},  # the order of each row's pairs, stored with the run
            hub="data/test-00000-of-00001.parquet",
        ),
    ),
    metrics=({"name": "rewardbench-2"},),
    headlines=(
        Headline("rewardbench-2", "rb2_score", "score", chance=0.25),
        *(Headline("rewardbench-2", f"rb2[{s}]", s) for s in _RB2_SUBSETS),
    ),
    hub=HubSource("allenai/reward-bench-2"),
    rating_judges=True,
)

_BON_FOLDER = "alpaca_eval_n16"
_BON_OUTPUTS = f"{_BON_FOLDER}/tulu-2-dpo-13b.{{k}}.json.gz"
_BON_ANNOTATIONS = (
    f"{_BON_FOLDER}/annotations_ref_GPT35t/tulu-2-dpo-13b.{{k}}."
    "weighted_alpaca_eval_gpt4_turbo.annotations.json.gz"
)
_BON_FETCH = (
    "bon_eval/alpaca_eval_n=16/annotations/ of github.com/allenai/reward-bench (branch "
    "bon_eval) into DATA_DIR/reward-bench-bon/alpaca_eval_n16/: tulu-2-dpo-13b.K.json "
    "for K = 0…15, and annotations_ref=GPT35t/tulu-2-dpo-13b.K/"
    "weighted_alpaca_eval_gpt4_turbo/annotations.json for K = 0…10 as "
    "annotations_ref_GPT35t/tulu-2-dpo-13b.K.weighted_alpaca_eval_gpt4_turbo."
    "annotations.json (gzipped or not)"
)

_ALPACAEVAL_BON16 = Suite(
    name="alpacaeval-bon16",
    title="AlpacaEval best-of-16 (Tulu-2-DPO-13B samples), GPT-4-turbo preferences",
    measures="RETA(1/4), the RETA curve, BoN@4 and 2nd-BoN@4 (curves over n) and pairwise "
    "accuracy against GPT-4-turbo's preferences: do the RM's picks among a policy's "
    "samples get better judged answers?",
    size="805 prompts × 11 judged samples = 8,855 responses (5 more unjudged samples per "
    "prompt are counted and left out)",
    origin="github.com/allenai/reward-bench@4319b3194d8772d0efb54c8b949ffdf87b4ccbd3 "
    "(branch bon_eval)",
    fetch=_BON_FETCH,
    # the first sample and its annotations tell whether the data is there; the benchmark
    # reads every file its globs match
    files=(
        SuiteFile(
            f"reward-bench-bon/{_BON_OUTPUTS.format(k=0)}",
            "alpacaeval",
            sha256="a7f8cc7304c58c91434469f4dcd79e0984d3abfce774330148ef5e5ef1545089",
        ),
        SuiteFile(
            f"reward-bench-bon/{_BON_ANNOTATIONS.format(k=0)}",
            "alpacaeval",
            sha256="a0d936be82f39ef13ab56141633d8522c09792ed619bd148fce134562fd24129",
        ),
    ),
    # recipes/alpacaeval-bon16.toml's benchmark and metrics, 2nd-best-of-n added; a file may
    # lie there gzipped (as in rmaudit's shared data folder) or not (as reward-bench ships it)
    benchmark={
        "name": "alpacaeval",
        "title": "AlpacaEval best-of-16 (Tulu-2-DPO-13B), GPT-4-turbo oracle",
        "missing_hint": f"fetch {_BON_FETCH}",
        "outputs": [_BON_OUTPUTS.format(k="*").removesuffix(".gz") + "*"],
        "annotations": [_BON_ANNOTATIONS.format(k="*").removesuffix(".gz") + "*"],
    },
    benchmark_root="reward-bench-bon",
    metrics=(
        {"name": "reta", "eta": 0.25},
        {"name": "reta-curve"},
        {"name": "best-of-n", "report": [4]},
        {"name": "best-of-n", "label": "2nd-best-of-n", "rank": 2, "report": [4]},
        {"name": "pairwise-accuracy"},
    ),
    headlines=(
        Headline("reta", "reta@0.25", "RETA(1/4)", chance=1.0),
        Headline("best-of-n", "bon@4", "BoN@4"),
        Headline("2nd-best-of-n", "bon2@4", "2nd-BoN@4"),
        Headline("pairwise-accuracy", "pairwise_accuracy", "pairwise acc", chance=0.5),
    ),
)

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

#: every suite, in the order ``rmaudit audit`` runs and lists them (the suites of process
#: reward models run only when named with --suite)
SUITES: dict[str, Suite] = {
    suite.name: suite
    for suite in (
        _REWARDBENCH,
        _REWARDBENCH_2,
        _RM_BENCH,
        _HH,
        _LLMBAR,
        _LLMBAR_PROCESSED,
        JUDGEBENCH_PAIRS["gpt-4o"],
        _ALPACAEVAL_BON16,
        _PRMBENCH,
        _PROCESSBENCH,
    )
}


def get_suite(name: str) -> Suite:
    try:
        return SUITES[name]
    except KeyError:
        raise BadInput(
            f"unknown suite; known: {', '.join(SUITES)}", field="--suite", value=name
        ) from None
