"""``rmaudit audit``'s MODEL arguments as reward-model tables of a recipe.

A MODEL is a built-in baseline (``length``, ``random``), ``scores:FILE`` (scores computed elsewhere:
the ``scores-file`` RM, its rows keyed by prompt + response text unless ``--match`` says otherwise:
a suite's responses come from public data, whose texts the user has), or a Hugging Face id or local
folder: a sequence classifier (``hf-classifier``), or with ``--dpo-ref REF`` a DPO policy scored by
its implicit reward against REF (``dpo-implicit``).  The model options the command takes as flags
are the recipe's option names, and go to every Hugging Face model.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rmaudit import plugins
from rmaudit.components.options import model_location_problem
from rmaudit.errors import BadInput

from .judge_arguments import (
    HF_JUDGE_RM,
    JUDGE_PREFIX,
    JUDGE_RM,
    JUDGE_RMS,
    VERDICTS_PREFIX,
    JudgeFlags,
    judge_table,
    verdicts_table,
)
from .served_arguments import ServedFlags, check_served_flags, is_served, served_table

#: the baselines every suite audits beside the user's models (those whose RM is installed),
#: each with its recipe table; ``length`` is the one a model must beat
BASELINES: dict[str, dict[str, Any]] = {
    "length": {"name": "length"},
    "random": {"name": "random"},
}
LENGTH_BASELINE = "length"
SCORES_PREFIX = "scores:"
#: a model's published RewardBench 2 per-item scores (the rb2-scores RM)
RB2_SCORES_PREFIX = "rb2-scores:"
RB2_SCORES_RM = "rb2-scores"
#: the reward models a Hugging Face MODEL becomes (a classifier; with --dpo-ref, a DPO policy)
HF_MODEL_NAMES = ("hf-classifier", "dpo-implicit")
#: the process reward models a Hugging Face MODEL of a PRM suite becomes (a token classifier;
#: written step-tag:MODEL, a causal LM read at step tags): :mod:`.prm_arguments`
HF_PRM_NAMES = ("hf-prm-classifier", "hf-prm-step-tag")

#: the Hugging Face model options the command takes as flags (recipe option names)
HF_MODEL_OPTIONS = (
    "revision",
    "dtype",
    "max_length",
    "truncation_side",
    "fallback_chat_template",
    "chat_template",
    "device",
    "batch_size",
    "max_batch_tokens",
    "pad_to_multiple",
    "deterministic",
    "trust_remote_code",
)


def parse_overrides(given: Sequence[str]) -> dict[str, Any] | None:
    """``--config-override NAME=VALUE`` flags → ``config_overrides`` (VALUE as JSON where it
    parses: 0, 0.5, false; else as text); None where none was given."""
    overrides: dict[str, Any] = {}
    for entry in given:
        name, equals, value = entry.partition("=")
        if not equals or not name.strip():
            raise BadInput("expected NAME=VALUE", field="--config-override", value=entry)
        try:
            overrides[name.strip()] = json.loads(value)
        except json.JSONDecodeError:
            overrides[name.strip()] = value
    return overrides or None


#: ``--columns`` names → the ``scores-file`` options that name a scores file's columns
SCORES_COLUMNS = {
    "prompt": "prompt_field",
    "response": "response_field",
    "score": "score_field",
    "id": "id_field",
}


def parse_columns(text: str | None) -> dict[str, str]:
    """``prompt=instruction,score=reward`` → the scores-file options naming those columns."""
    options: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip() and text:
            raise BadInput(
                "an empty entry; expected NAME=COLUMN,...", field="--columns", value=text
            )
        if not part.strip():
            continue
        name, sep, column = (piece.strip() for piece in part.partition("="))
        if name not in SCORES_COLUMNS or not sep or not column:
            raise BadInput(
                f"expected NAME=COLUMN with NAME one of {', '.join(SCORES_COLUMNS)}",
                field="--columns",
                value=part,
            )
        options[SCORES_COLUMNS[name]] = column
    return options


def model_tables(
    models: list[str],
    options: dict[str, Any],
    dpo_ref: str | None,
    *,
    match: str = "text",
    columns: dict[str, str] | None = None,
    judge: JudgeFlags | None = None,
    served: ServedFlags | None = None,
) -> list[dict[str, Any]]:
    """The reward-model tables for ``models``, then each installed baseline not among them;
    ``match`` and ``columns`` (:func:`parse_columns`): what a scores file's rows are keyed by
    and which of its columns hold the key and the score (``scores-file`` options);
    ``served``: the ``--rm-*`` flags of a server's URL."""
    hf_options = {name: value for name, value in options.items() if value not in (None, False)}
    scores_options = {"match": match, **(columns or {})}
    judge, served = judge or JudgeFlags(), served or ServedFlags()
    check_served_flags(models, served)
    tables = [
        judge_table(model, judge)
        if model.startswith(JUDGE_PREFIX)
        else verdicts_table(model)
        if model.startswith(VERDICTS_PREFIX)
        else served_table(
            model, served, api_key_env=judge.api_key_env, request_timeout=judge.request_timeout
        )
        if is_served(model)
        else _table(model, hf_options, dpo_ref, scores_options)
        for model in models
    ]
    api_only = [
        flag
        for flag in judge.api_only()
        if flag == "--base-url" or not any(is_served(model) for model in models)
    ]
    if api_only and not any(t["name"] == JUDGE_RM for t in tables):
        raise BadInput(
            f"{api_only[0]} applies to judge:MODEL with --base-url; none was given",
            field=api_only[0],
        )
    if judge.template is not None:
        if not any(t["name"] in JUDGE_RMS for t in tables):
            raise BadInput(
                "--judge-template applies to judge:MODEL; none was given", field="--judge-template"
            )
    if (hf_options or dpo_ref) and not any(t["name"] in HF_MODEL_NAMES for t in tables):
        given = "--dpo-ref" if dpo_ref else "--" + next(iter(hf_options)).replace("_", "-")
        raise BadInput("model options apply to Hugging Face models; none was given", field=given)
    if columns and not any(t["name"] == "scores-file" for t in tables):
        raise BadInput("--columns applies to scores:FILE; none was given", field="--columns")
    names = {t["label"] for t in tables}
    tables += [
        {"label": label, **table}
        for label, table in BASELINES.items()
        if label not in names and _installed(table["name"])
    ]
    return distinct_labels(tables)


def _table(
    model: str, hf_options: dict[str, Any], dpo_ref: str | None, scores_options: dict[str, str]
) -> dict[str, Any]:
    if model in BASELINES:
        return {"label": model, **BASELINES[model]}
    for prefix, name, options in (
        (SCORES_PREFIX, "scores-file", scores_options),
        (RB2_SCORES_PREFIX, RB2_SCORES_RM, {}),
    ):
        if model.startswith(prefix):
            path = Path(model.removeprefix(prefix))
            if not path.is_file():
                raise BadInput("scores file not found", field="MODEL", value=model)
            return {"label": path.stem, "name": name, "path": str(path.resolve()), **options}
    if not model.strip():
        raise BadInput(
            f"expected a Hugging Face id, a local folder, scores:FILE, {' or '.join(BASELINES)}",
            field="MODEL",
            value=model,
        )
    folder = Path(model)
    _check_location(model, "MODEL")
    location = str(folder.resolve()) if folder.is_dir() else model
    label = folder.resolve().name if folder.is_dir() else model
    table = {
        "label": label,
        "name": "dpo-implicit" if dpo_ref else "hf-classifier",
        "model": location,
        **hf_options,
    }
    if dpo_ref:
        _check_location(dpo_ref, "--dpo-ref")
        table["reference"] = str(Path(dpo_ref).resolve()) if Path(dpo_ref).is_dir() else dpo_ref
    return table


def with_rb2_data(tables: list[dict[str, Any]], data: Path | None) -> list[dict[str, Any]]:
    """The tables of one suite: an ``rb2-scores`` table gets the suite's RewardBench 2 data
    file (``data``; None: the suite has none, and the table is BadInput)."""
    out = []
    for table in tables:
        if table.get("name") == RB2_SCORES_RM:
            if data is None:
                raise BadInput(
                    "rb2-scores:FILE holds RewardBench 2 scores: run it with --suite rewardbench-2",
                    field="MODEL",
                    value=table["path"],
                )
            table = {**table, "data": str(data)}
        out.append(table)
    return out


def _check_location(model: str, field: str) -> None:
    """A MODEL that is no folder: a misspelt baseline, or no folder and no hub id either, is
    ``BadInput`` before anything runs."""
    if Path(model).expanduser().is_dir():
        return
    close = difflib.get_close_matches(model, BASELINES, n=1, cutoff=0.75)
    if close and field == "MODEL":
        raise BadInput(
            f"no such folder or baseline; did you mean {close[0]}?", field=field, value=model
        )
    if model_location_problem(model):
        raise BadInput(
            "no such folder; not a Hugging Face id (NAME or NAMESPACE/NAME), scores:FILE "
            f"or a baseline ({', '.join(BASELINES)}) either",
            field=field,
            value=model,
        )


def check_reachable(tables: list[dict[str, Any]]) -> None:
    """Each Hugging Face model can be loaded from where it is (a folder, the hub, the cache),
    asked before the DB is touched: a model that cannot is ``BadInput`` with nothing written."""
    from rmaudit.backends.hf.hub import hub_access

    for table in tables:
        if table["name"] in (*HF_MODEL_NAMES, *HF_PRM_NAMES, HF_JUDGE_RM):
            hub_access(table["model"], revision=table.get("revision"), field="MODEL")
            if table.get("reference"):
                hub_access(table["reference"], revision=table.get("revision"), field="--dpo-ref")


def _installed(name: str) -> bool:
    return name in plugins.component_names("reward_model")


def distinct_labels(tables: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Two MODELs with one label (the same folder name twice) get "(2)", "(3)" after it."""
    seen: dict[str, int] = {}
    for table in tables:
        label = table["label"]
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            table["label"] = f"{label} ({seen[label]})"
    return tables
