"""The limits the code sets itself (HELPERS.md, Style): no function over 80 lines, no module
over 400, and ``rmaudit audit``'s command function at most 60 lines with its options grouped
into records.  A function is counted from its ``def`` line to its last line (its decorators,
such as click's options, are not its body); a module by its lines."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "rmaudit"
MAX_FUNCTION = 80
MAX_MODULE = 400
MAX_AUDIT = 60


def function_lengths(source: str) -> dict[str, int]:
    """Each function's (and method's) lines, ``def`` to end, by its name (``Class.method``)."""
    lengths: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                lines = (child.end_lineno or child.lineno) - child.lineno + 1
                lengths[name] = max(lengths.get(name, 0), lines)
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return lengths


def modules() -> dict[str, str]:
    return {
        path.relative_to(SRC).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(SRC.rglob("*.py"))
    }


def test_function_lengths_counts_def_to_end():
    source = (
        "@decorator(\n    a=1,\n)\ndef f(x):\n    return x\n\n"
        "class C:\n    def m(self):\n        def inner():\n            pass\n        return 1\n"
    )
    assert function_lengths(source) == {"f": 2, "C.m": 4, "C.m.inner": 2}


def test_no_function_over_the_limit():
    over = {
        f"{module} {name}"
        for module, source in modules().items()
        for name, lines in function_lengths(source).items()
        if lines > MAX_FUNCTION
    }
    assert sorted(over) == []


def test_no_module_over_the_limit():
    over = {module for module, source in modules().items() if len(source.splitlines()) > MAX_MODULE}
    assert sorted(over) == []


def test_the_audit_command_is_short():
    lines = function_lengths(modules()["cli/audit.py"])["audit"]
    assert lines <= MAX_AUDIT, lines
