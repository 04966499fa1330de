"""``rmaudit audit``'s MODEL arguments as process-reward-model tables, for the suites of
process reward models (docs/prm.md).

A MODEL is a PRM baseline (``random``, ``step-length``), ``step-scores:FILE`` (step scores
computed elsewhere: rows of ``question``, ``steps`` and ``step_scores``, as ``--write-items``
writes them with the scores added; the file's stem is the label), or a Hugging Face id or
local folder: a token-classification PRM read at its step separators (``hf-prm-classifier``,
the Qwen2.5-Math-PRM convention), or, written ``step-tag:MODEL``, a causal LM read at each
step's tag (``hf-prm-step-tag``, the Math-Shepherd convention).  The model flags go to every
Hugging Face PRM, as the recipe options of the same names (docs/prm-models.md).
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from rmaudit import plugins
from rmaudit.components.options import model_location_problem
from rmaudit.errors import BadInput

from .judge_arguments import JudgeFlags
from .model_arguments import BASELINES, HF_PRM_NAMES, SCORES_PREFIX, distinct_labels

#: the baselines every suite of PRMs audits beside the user's models, with their tables;
#: a PRM must beat both
PRM_BASELINES: dict[str, dict[str, Any]] = {
    "step-length": {"name": "step-length"},
    "random": {"name": "random"},
}
STEP_SCORES_PREFIX = "step-scores:"
#: before a Hugging Face MODEL: a causal LM read at each step's tag, not a token classifier
STEP_TAG_PREFIX = "step-tag:"
CLASSIFIER, STEP_TAG = HF_PRM_NAMES


def prm_tables(models: list[str], options: dict[str, Any]) -> list[dict[str, Any]]:
    """The PRM tables for ``models``, then each baseline PRM not among them; ``options``:
    the model flags given, for every Hugging Face PRM."""
    hf_options = {name: value for name, value in options.items() if value not in (None, False)}
    tables = [_table(model, hf_options) for model in models]
    if hf_options and not any(t["name"] in HF_PRM_NAMES for t in tables):
        given = "--" + next(iter(hf_options)).replace("_", "-")
        raise BadInput("model options apply to Hugging Face PRMs; none was given", field=given)
    labels = {t["label"] for t in tables}
    tables += [
        {"label": label, **table}
        for label, table in PRM_BASELINES.items()
        if label not in labels and table["name"] in plugins.component_names("process_reward_model")
    ]
    return distinct_labels(tables)


def _table(model: str, hf_options: dict[str, Any]) -> dict[str, Any]:
    if model in PRM_BASELINES:
        return {"label": model, **PRM_BASELINES[model]}
    if model in BASELINES:  # a reward model's baseline, not a hub id to look up
        raise BadInput(
            f"a baseline of reward models; the suites of process reward models audit theirs, "
            f"{' and '.join(PRM_BASELINES)}, beside every PRM (give one by name, or a PRM: a "
            f"Hugging Face token classifier, {STEP_TAG_PREFIX}MODEL or {STEP_SCORES_PREFIX}FILE)",
            field="MODEL",
            value=model,
        )
    if model.startswith(STEP_SCORES_PREFIX):
        path = Path(model.removeprefix(STEP_SCORES_PREFIX))
        if not path.is_file():
            raise BadInput("step scores file not found", field="MODEL", value=model)
        return {"label": path.stem, "name": "step-scores", "path": str(path.resolve())}
    if model.startswith(SCORES_PREFIX):
        raise BadInput(
            "a suite of process reward models reads a score per step: give "
            "step-scores:FILE (rows of question, steps and step_scores)",
            field="MODEL",
            value=model,
        )
    name = STEP_TAG if model.startswith(STEP_TAG_PREFIX) else CLASSIFIER
    location = model.removeprefix(STEP_TAG_PREFIX)
    folder = Path(location)
    if not folder.expanduser().is_dir():
        close = difflib.get_close_matches(model, PRM_BASELINES, n=1, cutoff=0.75)
        if close:
            raise BadInput(
                f"no such folder or baseline; did you mean {close[0]}?", field="MODEL", value=model
            )
        if not location.strip() or model_location_problem(location):
            raise BadInput(
                "no such folder; not a Hugging Face id (NAME or NAMESPACE/NAME), "
                f"{STEP_SCORES_PREFIX}FILE or a baseline ({', '.join(PRM_BASELINES)}) either",
                field="MODEL",
                value=model,
            )
    return {
        "label": folder.resolve().name if folder.is_dir() else location,
        "name": name,
        "model": str(folder.resolve()) if folder.is_dir() else location,
        **hf_options,
    }


def reward_model_flags(
    *, dpo_ref: str | None, columns: str | None, judge: JudgeFlags, sample: int | None
) -> None:
    """The flags of reward models and pair suites only, refused for process reward models
    (whose suites run whole)."""
    given = [
        flag
        for flag, value in (
            ("--sample", sample is not None),
            ("--dpo-ref", dpo_ref),
            ("--columns", columns),
            ("--base-url", judge.base_url),
            ("--judge-template", judge.template),
            ("--api-key-env", judge.api_key_env),
            ("--judge-price", judge.price),
        )
        if value
    ]
    if given:
        raise BadInput(
            "applies to reward models and their suites, not to the process reward models of "
            "prmbench and processbench",
            field=given[0],
        )
