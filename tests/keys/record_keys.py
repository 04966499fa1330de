"""Record the stored keys that tests/keys/test_stored_keys.py holds the code to.

    python tests/keys/record_keys.py

Run it only when keys are meant to change (a component's ``version`` bumped on purpose, a
new case added): the point of the file is that a refactor leaves every key as recorded, so
databases written before it keep resuming.
"""

from __future__ import annotations

import json
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parents[1])]

from _key_cases import (
    EXPECTED,
    NON_DEFAULT,
    REPO,
    build,
    default_cases,
    portable,
    recipe_components,
    run_identity,
    write_files,
)
from _support import SMALL_RECIPE

from rmaudit.components.keys import canonical_json


def expected(identity: dict, key: str, folder: Path) -> dict:
    entry = {"identity": portable(identity, folder)}
    if canonical_json(entry["identity"]) == canonical_json(identity):
        entry["key"] = key  # nothing machine-specific: the key itself is comparable
    return entry


def component_entry(component, folder: Path) -> dict:
    return expected(component.identity(), component.key, folder)


def record(folder: Path) -> dict:
    write_files(folder)
    components = {}
    for case in [*NON_DEFAULT, *default_cases()]:
        components[case.id] = {
            "kind": case.kind,
            "table": case.table,
            **component_entry(build(case, folder), folder),
        }
    texts = {
        path.name: path.read_text(encoding="utf-8")
        for path in sorted((REPO / "recipes").glob("*.toml"))
    }
    texts["tests-small.toml"] = textwrap.dedent(SMALL_RECIPE.replace("{extra_rms}", ""))
    recipes = {}
    for name, text in texts.items():
        recipe, built = recipe_components(name, text, folder)
        recipes[name] = {
            "text": text,
            "run": expected(run_identity(recipe), recipe.run_key, folder),
            "components": {where: component_entry(c, folder) for where, c in built.items()},
        }
    return {"components": components, "recipes": recipes}


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        keys = record(Path(tmp))
    EXPECTED.write_text(json.dumps(keys, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(keys['components'])} components and {len(keys['recipes'])} recipes -> {EXPECTED}")
