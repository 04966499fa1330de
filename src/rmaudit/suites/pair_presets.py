"""The suites of preference pairs: HH-RLHF with its shifts, RM-Bench, LLMBar and its processed
sets, JudgeBench, RewardBench and RewardBench 2 (docs/audit.md)."""

from __future__ import annotations

from .suite import Headline, HubSource, RecordedJudges, Suite, SuiteFile

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

#: in the order ``rmaudit audit`` runs and lists them
PAIR_SUITES = (
    _REWARDBENCH,
    _REWARDBENCH_2,
    _RM_BENCH,
    _HH,
    _LLMBAR,
    _LLMBAR_PROCESSED,
    JUDGEBENCH_PAIRS["gpt-4o"],
)
