"""The best-of-n suite: AlpacaEval's best-of-16 samples with GPT-4-turbo's preferences
(docs/audit.md)."""

from __future__ import annotations

from .suite import Headline, Suite, SuiteFile

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

#: in the order ``rmaudit audit`` runs and lists them
BON_SUITES = (_ALPACAEVAL_BON16,)
