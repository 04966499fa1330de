"""The store's JSON columns (a result's ``params``, an item's ``meta``, a component's
``options``, a run's recipe, a label's ``samples``, a run's scoring ``checks``) are written and
parsed by the store alone: its records carry them as values both ways, no module above the
store turns one into JSON or parses one, and a damaged one is one line naming the file and the
column.  Nor does a positional tuple cross into the store: no public method of it takes one."""

from __future__ import annotations

import ast
import re
import sqlite3
from pathlib import Path

import pytest

from rmaudit.errors import BadInput
from rmaudit.store import Store, dumps
from rmaudit.store.item_records import StoredPrompt, StoredResponse
from rmaudit.store.records import ComponentRow, RunRow
from rmaudit.store.scoring_checks import ScoringChecksTable, StoredChecks

ROOT = Path(__file__).resolve().parents[1]
#: the store's JSON columns (and the names a row's value of one goes by once unpacked)
STORE_JSON_COLUMNS = {"params", "meta", "recipe_json", "options", "samples", "checks"}


def json_loads_of_store_columns(source: str) -> list[int]:
    """Lines where ``json.loads`` (or a ``loads`` imported from json) parses an expression
    that names a store JSON column: ``json.loads(row.params or "{}")``, ``loads(meta)``."""
    tree = ast.parse(source)
    loads = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "json"
        for alias in node.names
        if alias.name == "loads"
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        is_loads = (
            isinstance(func, ast.Attribute)
            and func.attr == "loads"
            and isinstance(func.value, ast.Name)
            and func.value.id == "json"
        ) or (isinstance(func, ast.Name) and func.id in loads)
        named = {
            n.id if isinstance(n, ast.Name) else n.attr
            for arg in node.args
            for n in ast.walk(arg)
            if isinstance(n, ast.Name | ast.Attribute)
        }
        if is_loads and named & STORE_JSON_COLUMNS:
            found.append(node.lineno)
    return found


#: the store's write methods (``Store.items.add_responses``, ``Store.runs.finish``, ...)
STORE_WRITES = re.compile(r"add(_\w+)?|set_report|finish|fill_pair_set_meta")


def json_made_for_the_store(source: str) -> list[int]:
    """Lines where a module imports the store's ``dumps``, or passes JSON it made
    (``json.dumps(...)``, ``dumps(...)``) to a store write method."""
    tree = ast.parse(source)
    found = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and (node.module or "").startswith("rmaudit.store")
        and any(alias.name == "dumps" for alias in node.names)
    ]
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and STORE_WRITES.fullmatch(node.func.attr)
        ):
            continue
        for inner in (n for arg in [*node.args, *node.keywords] for n in ast.walk(arg)):
            func = getattr(inner, "func", None)
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if isinstance(inner, ast.Call) and name == "dumps":
                found.append(inner.lineno)
    return sorted(found)


def test_the_scan_finds_json_made_above_the_store_for_it():
    source = (
        "import json\nfrom rmaudit.store import Store, dumps\n"
        "store.items.add_labels((r, json.dumps(s)) for r, s in rows)\n"
        "store.runs.finish(run, [], json.dumps(timings), now)\n"
        "print(json.dumps(result))\n"
        "store.items.add_responses(rows)\n"
    )
    assert json_made_for_the_store(source) == [2, 3, 4]


def above_the_store(scan) -> list[str]:
    """``file:line`` of what ``scan`` finds in every module of src/ and the plugins above the
    store."""
    found = []
    for folder in [ROOT / "src" / "rmaudit", *ROOT.glob("plugins/*/src")]:
        for path in folder.rglob("*.py"):
            relative = path.relative_to(ROOT)
            if relative.parts[:3] != ("src", "rmaudit", "store"):
                found += [f"{relative}:{n}" for n in scan(path.read_text(encoding="utf-8"))]
    return found


def test_no_module_above_the_store_makes_json_for_it():
    assert above_the_store(json_made_for_the_store) == []


def test_the_scan_finds_a_column_parsed_above_the_store():
    source = (
        "import json\nfrom json import loads as parse\n"
        'a = json.loads(row.params or "{}")\n'
        "for _, meta in rows:\n    b = parse(meta)\n"
        "c = json.loads(path.read_text())\n"
    )
    assert json_loads_of_store_columns(source) == [3, 5]


def test_no_module_above_the_store_parses_a_store_json_column():
    assert above_the_store(json_loads_of_store_columns) == []


def tuples_taken(source: str) -> list[str]:
    """``name(parameter)`` of each public function or method whose parameter's annotation
    names ``tuple`` (``Iterable[tuple[str, float]]``, a bare ``tuple``): what a caller must
    fill by position, where a named record says what each value is."""
    found = []

    def visit(node: ast.AST, private: bool) -> None:
        for child in ast.iter_child_nodes(node):
            hidden = private or getattr(child, "name", "").startswith("_")
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) and not hidden:
                args = child.args
                for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                    names = {
                        n.id
                        for n in ast.walk(arg.annotation or ast.Pass())
                        if isinstance(n, ast.Name)
                    }
                    if names & {"tuple", "Tuple"}:
                        found.append(f"{child.name}({arg.arg})")
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, hidden)

    visit(ast.parse(source), private=False)
    return found


def test_the_scan_finds_a_tuple_taken_by_a_public_method():
    source = (
        "class Items:\n"
        "    def add_scores(self, rm_key: str, rows: Iterable[tuple[str, float]]) -> None: ...\n"
        "    def add_scores_of(self, scores: Mapping[str, float]) -> tuple[int, int]: ...\n"
        "    def start(self, run, models: Sequence[Tuple[str, str]], *, row: tuple) -> None: ...\n"
        "    def _insert(self, sql: str, rows: Iterable[tuple]) -> None: ...\n"
        "class _Hidden:\n"
        "    def add(self, rows: list[tuple]) -> None: ...\n"
        "def add_sources(rows: Iterable[RunSourceRow], samples: tuple[float, ...]) -> None: ...\n"
    )
    assert tuples_taken(source) == [
        "add_scores(rows)",
        "start(models)",
        "start(row)",
        "add_sources(samples)",
    ]


def test_no_public_method_of_the_store_takes_a_tuple():
    found = [
        f"{path.relative_to(ROOT)}: {method}"
        for path in sorted((ROOT / "src" / "rmaudit" / "store").glob("*.py"))
        for method in tuples_taken(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_store_returns_its_json_columns_parsed(tmp_path):
    meta = {"topic": "cooking", "turns": ["a", "b"], "note": "ünïcode"}
    recipe = {"title": "t", "metrics": [{"name": "reta", "eta": 0.25}]}
    store = Store.open(tmp_path / "columns.db")
    try:
        store.items.add_prompts([StoredPrompt("p1", "hello", meta)])
        store.items.add_responses([StoredResponse("r1", "p1", "policy", 0, "hi", {"p": 3.5})])
        store.items.add_component(
            ComponentRow("k1", "oracle", "judge", 1, {"scale": [1, 10]}, False)
        )
        store.runs.start(
            RunRow(
                "run", "t", None, None, recipe, None, None, "running", False,
                "2026-01-01T00:00:00", None, None, None, None,
            ),
            [],
        )  # fmt: skip
        assert store.items.prompts(["p1"]) == {"p1": StoredPrompt("p1", "hello", meta)}
        assert store.items.responses(["r1"])[0].meta == {"p": 3.5}
        assert store.items.components(["k1"])[0].options == {"scale": [1, 10]}
        assert store.items.components_named("oracle", "judge")[0].options == {"scale": [1, 10]}
        assert store.read.run("run").recipe == recipe
        checks = {"sample_key": "s", "sample_size": 1, "checks": [], "settings": {"ä": 1}}
        ScoringChecksTable(store).save("run", "honest", "k1", "s", "skipped", checks)
        assert ScoringChecksTable(store).of_run("run") == [StoredChecks("honest", checks)]
        assert ScoringChecksTable(store).on_sample("k1", "s") == [checks]
    finally:
        store.close()
    conn = sqlite3.connect(tmp_path / "columns.db")
    try:  # written as every earlier version wrote it: sorted keys, non-ASCII kept
        assert conn.execute("select recipe_json from runs").fetchone()[0] == dumps(recipe)
        stored_meta = conn.execute("select meta from prompts").fetchone()[0]
        assert stored_meta == '{"note": "ünïcode", "topic": "cooking", "turns": ["a", "b"]}'
    finally:
        conn.close()


def test_a_damaged_json_column_is_one_line_naming_the_file_and_the_column(tmp_path):
    db = tmp_path / "damaged.db"
    store = Store.open(db)
    try:
        store.items.add_component(
            ComponentRow("k1", "oracle", "judge", 1, {"scale": [1, 10]}, False)
        )
    finally:
        store.close()
    conn = sqlite3.connect(db)
    try:
        conn.execute("update components set options = '{\"scale\": [1,'")
        conn.commit()
    finally:
        conn.close()
    store = Store.open(db)
    try:
        with pytest.raises(BadInput) as raised:
            store.items.components(["k1"])
    finally:
        store.close()
    assert raised.value.one_line() == (
        f"{db}: components.options: database is corrupted: not the JSON rmaudit stores there; "
        "restore it from a copy, or rerun its recipes into a new DB (got '{\"scale\": [1,')"
    )
