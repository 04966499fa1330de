"""Every hook is documented and tested (as Datasette checks its plugin hooks).

A hook added to hookspecs.py without a section in docs/plugin_hooks.md giving its exact
signature, or without a test that mentions it, fails here.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from rmaudit import hookspecs

ROOT = Path(__file__).resolve().parent.parent
HOOKS_DOC = ROOT / "docs" / "plugin_hooks.md"


def hook_names() -> list[str]:
    """Names of the functions in hookspecs.py marked as hook specifications."""
    return sorted(name for name, value in vars(hookspecs).items()
                  if callable(value) and hasattr(value, "rmaudit_spec"))


def documented_signatures() -> dict[str, str]:
    """hook name → the signature in its "## `name(args)`" heading."""
    headings = re.findall(r"^## `(\w+)(\(.*\))`\s*$", HOOKS_DOC.read_text(encoding="utf-8"), re.M)
    return dict(headings)


def test_hookspecs_are_found():
    assert "register_metrics" in hook_names() and "register_commands" in hook_names()


@pytest.mark.parametrize("hook", hook_names())
def test_hook_has_a_section_with_its_exact_signature(hook):
    signature = str(inspect.signature(getattr(hookspecs, hook)))
    documented = documented_signatures()
    assert hook in documented, f"docs/plugin_hooks.md has no '## `{hook}{signature}`' section"
    assert documented[hook] == signature, (
        f"docs/plugin_hooks.md documents {hook}{documented[hook]}, hookspecs.py has {hook}{signature}")


def test_every_documented_hook_exists():
    assert sorted(documented_signatures()) == hook_names()


@pytest.mark.parametrize("hook", hook_names())
def test_hook_is_mentioned_by_a_test(hook):
    this_file = Path(__file__).resolve()
    sources = [path.read_text(encoding="utf-8") for path in (ROOT / "tests").rglob("*.py")
               if path.resolve() != this_file]
    assert any(hook in source for source in sources), f"no test under tests/ mentions {hook}"


def hook_examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", HOOKS_DOC.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("index", range(len(hook_examples())))
def test_hook_example_registers_and_conforms(index, register_plugin):
    """Each example is a working plugin: it loads, its components resolve and pass the kit."""
    from types import ModuleType

    from rmaudit import plugins
    from rmaudit.components import Component
    from rmaudit.testing import check_component

    module = ModuleType(f"hook_example_{index}")
    exec(compile(hook_examples()[index], f"plugin_hooks.md example {index}", "exec"), module.__dict__)
    classes = [value for value in vars(module).values()
               if isinstance(value, type) and issubclass(value, Component) and value.name]
    with register_plugin(module):
        for cls in classes:
            assert plugins.resolve(cls.kind, f"{module.__name__}:{cls.name}").cls is cls
            if cls.kind in ("metric", "oracle", "reward_model", "reference_policy", "shift_perturber"):
                check_component(cls)


def test_ci_runs_exactly_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"\*\*Run the test suite:\*\*\s*```bash\n(.*?)\n```", readme, re.S)
    assert block, "README has no 'Run the test suite' block"
    ci_lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci_lines[-1] == block.group(1).strip()
    assert "-e plugins/rmaudit-ranking -e plugins/rmaudit-verifiable" in ci_lines[-1]
