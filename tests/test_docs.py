"""Every hook is documented and tested (as Datasette checks its plugin hooks).

A hook added to hookspecs.py without a section in docs/plugin_hooks.md giving its exact
signature, or without a test that mentions it, fails here.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from rmaudit.plugins import hookspecs

ROOT = Path(__file__).resolve().parent.parent
HOOKS_DOC = ROOT / "docs" / "plugin_hooks.md"


def hook_names() -> list[str]:
    """Names of the functions in hookspecs.py marked as hook specifications."""
    return sorted(
        name
        for name, value in vars(hookspecs).items()
        if callable(value) and hasattr(value, "rmaudit_spec")
    )


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
        f"docs/plugin_hooks.md documents {hook}{documented[hook]}, "
        f"hookspecs.py has {hook}{signature}"
    )


def test_every_documented_hook_exists():
    assert sorted(documented_signatures()) == hook_names()


@pytest.mark.parametrize("hook", hook_names())
def test_hook_is_mentioned_by_a_test(hook):
    this_file = Path(__file__).resolve()
    sources = [
        path.read_text(encoding="utf-8")
        for path in (ROOT / "tests").rglob("*.py")
        if path.resolve() != this_file
    ]
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
    exec(
        compile(hook_examples()[index], f"plugin_hooks.md example {index}", "exec"), module.__dict__
    )
    classes = [
        value
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, Component) and value.name
    ]
    with register_plugin(module):
        for cls in classes:
            assert plugins.resolve(cls.kind, f"{module.__name__}:{cls.name}").cls is cls
            if cls.kind in (
                "metric",
                "oracle",
                "reward_model",
                "reference_policy",
                "shift_perturber",
            ):
                check_component(cls)


def test_ci_runs_exactly_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"\*\*Run the test suite:\*\*\s*```bash\n(.*?)\n```", readme, re.S)
    assert block, "README has no 'Run the test suite' block"
    ci_lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci_lines[-1] == block.group(1).strip()
    assert "-e plugins/rmaudit-ranking -e plugins/rmaudit-verifiable" in ci_lines[-1]


# -- the README and docs/ -----------------------------------------------------------------------

DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
README_LIMIT = 12 * 1024  # bytes: a README that gets a user running, not a reference manual


def load_generator():
    """docs/_generate.py, under the name its cog blocks import it by."""
    import importlib.util
    import sys

    if "_generate" not in sys.modules:
        spec = importlib.util.spec_from_file_location("_generate", ROOT / "docs" / "_generate.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["_generate"] = module
        spec.loader.exec_module(module)
    return sys.modules["_generate"]


def test_generated_sections_are_current():
    """The component reference, CLI help, commands table and store schema match the code."""
    import io

    generator = load_generator()
    output = io.StringIO()
    status = generator.run_cog(check=True, output=output)
    assert status == 0, (
        f"a generated docs section is stale; regenerate with: "
        f"{generator.REGENERATE}\n{output.getvalue()}"
    )


def test_staleness_check_catches_an_edited_section(tmp_path, monkeypatch):
    """The check above can fail: a hand-edited generated line is reported, with its diff."""
    import io

    generator = load_generator()
    (tmp_path / "docs").mkdir()
    schema_page = (ROOT / "docs" / "data-formats.md").read_text(encoding="utf-8")
    edited = schema_page.replace("| `prompt_id` | TEXT |", "| `prompt_id` | BLOB |", 1)
    assert edited != schema_page
    (tmp_path / "docs" / "data-formats.md").write_text(edited, encoding="utf-8")
    monkeypatch.setattr(generator, "ROOT", tmp_path)
    monkeypatch.setattr(generator, "FILES", ("docs/data-formats.md",))
    output = io.StringIO()
    assert generator.run_cog(check=True, output=output) != 0
    assert "BLOB" in output.getvalue() and generator.REGENERATE in output.getvalue()


def test_every_store_table_is_described():
    """data-formats.md says what each table of the (generated) schema holds."""
    page = (ROOT / "docs" / "data-formats.md").read_text(encoding="utf-8")
    described = set(re.findall(r"^- `(\w+)`:", page, re.M))
    tables = set(re.findall(r"^### `(\w+)`$", load_generator().store_schema(), re.M))
    assert tables and described == tables


def test_every_builtin_component_is_in_the_reference():
    from rmaudit import plugins

    page = (ROOT / "docs" / "reference" / "components.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^### `([\w.-]+)`$", page, re.M))
    builtin = {
        entry.cls.name
        for kind in plugins.HOOK_OF_KIND
        for entry in plugins.registered(kind)
        if entry.source == plugins.BUILTIN_SOURCE
    }
    assert len(builtin) > 40 and builtin <= headings


def test_readme_stays_short_and_starts_with_the_extras():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode("utf-8")) <= README_LIMIT, (
        "README.md is over 12 KB: move details to docs/"
    )
    block = re.search(r"\*\*Run the main audit\*\*.*?```bash\n(.*?)\n```", readme, re.S)
    assert block and "'.[tui,report]'" in block.group(1)
    assert block.group(1).endswith("rmaudit run recipes/helpful.toml")


def _anchors(markdown: str) -> set[str]:
    """GitHub's anchors of a page's headings."""
    headings = re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", markdown, flags=re.S), re.M)
    return {
        "".join(c for c in h.strip().lower() if c.isalnum() or c in " -_").replace(" ", "-")
        for h in headings
    }


@pytest.mark.parametrize("page", DOC_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    """Every link to a file of the repo names one that exists, and an anchor it has."""
    text = page.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", re.sub(r"```.*?```", "", text, flags=re.S)):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        assert resolved.exists(), f"{page.name} links to {target}, which does not exist"
        if anchor and resolved.suffix == ".md":
            assert anchor in _anchors(resolved.read_text(encoding="utf-8")), (
                f"{page.name} links to {target}: no such heading"
            )


def test_docs_and_sources_name_papers_and_no_outside_design_document():
    """Docs, recipes, every source file (docstrings, CLI help, component summaries), tests,
    benchmarks and the example plugins cite papers by name and arXiv id, never by the project's
    internal seed numbers, and point at no design document outside the repository."""
    sources = [
        path
        for folder in ("src", "tests", "benchmarks", "plugins", "examples")
        for path in sorted((ROOT / folder).rglob("*"))
        if path.suffix in {".py", ".md"}
    ]
    files = [*DOC_FILES, *sorted((ROOT / "recipes").glob("*.toml")), *sources]
    for path in files:
        text = path.read_text(encoding="utf-8")
        found = re.search(r"\bseeds?(?:'s)? (?:00\d|fig|table|eq|sec)|DESIGN\.md", text, re.I)
        assert not found, f"{path.relative_to(ROOT)}: {found.group(0)!r}"
