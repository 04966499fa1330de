"""Stored keys do not change when the code is refactored: databases written before keep resuming.

``expected_keys.json`` was recorded (by ``record_keys.py``) before component identity moved
from hand-written ``identity()`` overrides into the option models; each case here rebuilds a
component, or a recipe, from the same table or text and compares its identity and key.
"""

from __future__ import annotations

import json

import pytest
from _key_cases import (
    EXPECTED,
    KeyCase,
    build,
    localised,
    recipe_components,
    run_identity,
    write_files,
)

from rmaudit.components.keys import canonical_json, content_key

RECORDED = json.loads(EXPECTED.read_text(encoding="utf-8"))


@pytest.fixture
def data_folder(tmp_path):
    write_files(tmp_path)
    return tmp_path


def assert_same_key(identity, key: str, recorded: dict, folder) -> None:
    expected = localised(recorded["identity"], folder)
    assert json.loads(canonical_json(identity)) == expected
    assert key == content_key(expected)
    if "key" in recorded:  # a key with nothing machine-specific in it: compared as it is
        assert key == recorded["key"]


@pytest.mark.parametrize("case_id", sorted(RECORDED["components"]))
def test_component_keys_are_as_recorded(case_id, data_folder):
    recorded = RECORDED["components"][case_id]
    component = build(KeyCase(case_id, recorded["kind"], recorded["table"]), data_folder)
    assert_same_key(component.identity(), component.key, recorded, data_folder)


@pytest.mark.parametrize("name", sorted(RECORDED["recipes"]))
def test_recipe_keys_are_as_recorded(name, data_folder):
    recorded = RECORDED["recipes"][name]
    recipe, components = recipe_components(name, recorded["text"], data_folder)
    assert_same_key(run_identity(recipe), recipe.run_key, recorded["run"], data_folder)
    assert set(components) == set(recorded["components"])
    for where, component in components.items():
        assert_same_key(
            component.identity(), component.key, recorded["components"][where], data_folder
        )


def test_the_cases_cover_files_nesting_and_operational_options():
    """The cases the refactor could break are there: a hashed file, nested components (one of
    them holding a hashed file), options left out of the key, and recipes."""
    components = RECORDED["components"]
    assert "scores-file/file" in components and "responses-file/file" in components
    assert "llm-judge/template-file" in components
    assert {"ensemble/members", "synthetic-proxy/gold-file", "rm-oracle/model"} <= set(components)
    judge = components["llm-judge/operational-options"]
    assert judge["table"]["concurrency"] == 4 and "concurrency" not in judge["identity"]["options"]
    classifier = components["hf-classifier/runtime-options"]
    assert (
        classifier["table"]["device"] == "cuda:1"
        and "device" not in classifier["identity"]["options"]
    )
    assert len(RECORDED["recipes"]) >= 6
