"""Every built-in component passes the conformance kit that plugin authors run (rmaudit.testing).

Parametrised over the registry, not a hand-kept list, so a new built-in is checked the moment
it is registered (as torchmetrics and scikit-learn check every estimator).  A component whose
options have required fields needs an entry in EXAMPLE_OPTIONS.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from rmaudit import plugins
from rmaudit.recipe import validate_options
from rmaudit.testing import check_component, sample_prompts, sample_responses

CHECKED_KINDS = ("metric", "oracle", "reward_model", "reference_policy", "shift_perturber")


def _scores_file(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "scores.jsonl"
    responses = sample_responses(sample_prompts())
    path.write_text("".join(json.dumps({"response_id": r.id, "score": i / 7})
                            + "\n" for i, r in enumerate(responses)))
    return {"path": str(path)}


#: component name → options for the check (a function of tmp_path when it needs files)
EXAMPLE_OPTIONS: dict[str, Callable[[Path], dict[str, Any]]] = {
    "best-k-of-n": lambda tmp_path: {"n": 8, "k": 2},
    "ensemble": lambda tmp_path: {"members": [{"name": "simulated-rm", "seed": 1},
                                              {"name": "simulated-rm", "bias": "length"}]},
    "scores-file": _scores_file,
}


def builtin_components():
    return [pytest.param(entry.cls, id=f"{kind}:{entry.cls.name}")
            for kind in CHECKED_KINDS for entry in plugins.registered(kind)
            if entry.source == plugins.BUILTIN_SOURCE]


@pytest.mark.parametrize("cls", builtin_components())
def test_builtin_component_conforms(cls, tmp_path):
    raw = EXAMPLE_OPTIONS.get(cls.name, lambda _: {})(tmp_path)
    options = validate_options(cls, raw, field=cls.name, file=None, base_dir=tmp_path)
    check_component(cls(options))


def test_every_checked_kind_with_builtins_is_covered():
    kinds = {param.values[0].kind for param in builtin_components()}
    assert {"metric", "oracle", "reward_model", "reference_policy"} <= kinds
