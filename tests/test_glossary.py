"""One word, one thing: docs/architecture.md's glossary lists each word with where a public
name may use it, and no public name under ``src/rmaudit`` uses a listed word anywhere else.

A public name is a module or package (each part of its path), a class, a function, a method
or property, a class attribute, a module constant, a CLI flag or a CLI command, not starting
with ``_``.  Names are split into words at ``_``, ``-``, ``.``, ``/`` and case changes
(``PairVerdict`` is *pair* *verdict*); a word matches with its plural and the other forms its
entry lists.  An entry of several words (*token budget*) takes its words before a shorter
entry (*budget*) can.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "rmaudit"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

#: ``- **word** (other forms): meaning ... *Names:* `path`, `folder/` ...``
_ENTRY = re.compile(r"^- \*\*(?P<word>[a-z ]+)\*\*(?: \((?P<forms>[a-z, ]+)\))?:(?P<rest>.*)$")
_PATH = re.compile(r"`([\w/.]+(?:\.py|/))`")
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
#: click decorators whose string arguments are public names
_CLI_CALLS = {"option", "command", "group", "argument"}


@dataclass(frozen=True)
class Entry:
    word: str
    #: each form as its words: the word, its plurals and the forms listed
    forms: tuple[tuple[str, ...], ...]
    #: modules (``run/runner.py``) and folders (``metrics/budget/``) where names may use it
    places: tuple[str, ...]

    def allows(self, module: str) -> bool:
        return any(module == p or (p.endswith("/") and module.startswith(p)) for p in self.places)


@dataclass(frozen=True)
class PublicName:
    module: str  # path under src/rmaudit
    name: str
    what: str  # "module", "class", "function", "attribute", "constant", "CLI flag", ...


def words(name: str) -> list[str]:
    return [w.lower() for part in re.split(r"[_\-./\s]+", name) for w in _WORD.findall(part)]


def _plurals(word: str) -> tuple[str, ...]:
    *head, last = word.split()
    return tuple(" ".join([*head, end]) for end in (last, last + "s", last + "es"))


def glossary(text: str) -> list[Entry]:
    """The entries of the ``## Glossary`` section (a list item may wrap onto more lines)."""
    section = text.split("\n## Glossary\n", 1)[1].split("\n## ", 1)[0]
    items: list[str] = []
    for line in section.splitlines():
        if line.startswith("- "):
            items.append(line)
        elif line.startswith("  ") and items:
            items[-1] += " " + line.strip()
    entries = []
    for item in items:
        found = _ENTRY.match(item)
        assert found, f"a glossary line that is not '- **word**: ... *Names:* ...': {item[:80]}"
        word = found["word"]
        forms = {*_plurals(word), *(f.strip() for f in (found["forms"] or "").split(",") if f)}
        names = found["rest"].split("*Names:*", 1)
        assert len(names) == 2, f"glossary entry {word!r} lists no *Names:*"
        entries.append(
            Entry(
                word, tuple(tuple(f.split()) for f in sorted(forms)), tuple(_PATH.findall(names[1]))
            )
        )
    return entries


def _cli_strings(node: ast.Call) -> list[str]:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name not in _CLI_CALLS:
        return []
    strings = [a.value for a in node.args if isinstance(a, ast.Constant)]
    found = [s for s in strings if isinstance(s, str)]
    if name == "option":
        return [s for s in found if s.startswith("--")]
    return [s for s in found if re.fullmatch(r"[a-z][a-z0-9-]*", s)]


def _defined(body: list[ast.stmt], *, in_class: bool) -> list[tuple[str, str]]:
    """(name, what) of each function, class, method and assignment in ``body``."""
    found: list[tuple[str, str]] = []
    for item in body:
        targets: list[ast.expr] = []
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append((item.name, "method" if in_class else "function"))
        elif isinstance(item, ast.ClassDef):
            found += [(item.name, "class"), *_defined(item.body, in_class=True)]
        elif isinstance(item, ast.AnnAssign):
            targets = [item.target]
        elif isinstance(item, ast.Assign):
            targets = item.targets
        what = "attribute" if in_class else "constant"
        found += [(t.id, what) for t in targets if isinstance(t, ast.Name)]
    return found


def public_names(module: str, source: str) -> list[PublicName]:
    """Every public name a module defines, its path's parts among them."""
    parts = [p.removesuffix(".py") for p in module.split("/")]
    found = [(p, "module") for p in parts if p != "__init__"]
    tree = ast.parse(source)
    found += _defined(tree.body, in_class=False)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            found += [
                (s, "CLI flag" if s.startswith("--") else "CLI name") for s in _cli_strings(node)
            ]
    return [PublicName(module, n, what) for n, what in found if not n.startswith("_")]


def misuses(names: list[PublicName], entries: list[Entry]) -> list[str]:
    """Each public name using a listed word outside the places its entry allows, as ``module:
    name (what) uses 'words' (glossary: entry)``.  The longest form found at a word is the one
    matched; a form two entries share (*design*: a label design, a study design) is allowed
    where either allows it."""
    by_form: dict[tuple[str, ...], list[Entry]] = {}
    for entry in entries:
        for form in entry.forms:
            by_form.setdefault(form, []).append(entry)
    longest = max((len(form) for form in by_form), default=0)
    found = []
    for public in names:
        split = words(public.name)
        i = 0
        while i < len(split):
            size = next((n for n in range(longest, 0, -1) if tuple(split[i : i + n]) in by_form), 0)
            if not size:
                i += 1
                continue
            form = tuple(split[i : i + size])
            if not any(entry.allows(public.module) for entry in by_form[form]):
                listed = ", ".join(entry.word for entry in by_form[form])
                found.append(
                    f"{public.module}: {public.name} ({public.what}) uses {' '.join(form)!r} "
                    f"(glossary: {listed})"
                )
            i += size
    return found


def source_names() -> list[PublicName]:
    return [
        name
        for path in sorted(SRC.rglob("*.py"))
        for name in public_names(path.relative_to(SRC).as_posix(), path.read_text("utf-8"))
    ]


@pytest.fixture(scope="module")
def entries() -> list[Entry]:
    return glossary(ARCHITECTURE.read_text("utf-8"))


def test_the_glossary_lists_its_words_and_where_each_may_be_used(entries):
    words_listed = [e.word for e in entries]
    assert len(words_listed) == len(set(words_listed)), "a word listed twice"
    for word in (
        "preflight",
        "scoring check",
        "ready",
        "verdict",
        "label design",
        "budget",
        "judge",
    ):
        assert word in words_listed
    for entry in entries:
        assert entry.places, f"{entry.word!r} names no module or folder"
        for place in entry.places:  # a moved module must move in the glossary too
            assert (SRC / place).exists(), f"{entry.word!r}: no {place} under src/rmaudit"


def test_no_public_name_uses_a_listed_word_for_something_else(entries):
    names = source_names()
    # the walk sees every kind of public name
    for seen in [
        PublicName("run/runner.py", "preflight", "method"),
        PublicName("suites/preflight.py", "preflight", "module"),
        PublicName("store/verdicts.py", "PairVerdict", "class"),
        PublicName("store/records.py", "design", "attribute"),
        PublicName("metrics/budget/design.py", "LABEL_DESIGNS", "constant"),
        PublicName("cli/check_options.py", "--no-scoring-checks", "CLI flag"),
    ]:
        assert seen in names
    assert misuses(names, entries) == []


@pytest.mark.parametrize(
    ("module", "source", "word"),
    [
        ("backends/hf/checks.py", "class PreflightCheck:\n    pass\n", "preflight"),
        ("backends/hf/scorer.py", "class Scorer:\n    verdicts: int = 0\n", "verdict"),
        ("backends/hf/scorer.py", "def auto_budget():\n    pass\n", "budget"),
        ("run/design.py", "X = 1\n", None),  # a label design where designs belong
        ("cli/run.py", "import click\nflag = click.option('--preflight-only')\n", "preflight"),
        ("results/regret_design.py", "", "design"),  # a module's own name
    ],
)
def test_a_word_used_outside_its_places_is_found(entries, module, source, word):
    found = misuses(public_names(module, source), entries)
    if word is None:
        assert found == []
    else:
        assert found and all(word in f.split("(glossary: ")[1] for f in found), found


def test_a_longer_entry_takes_its_words_first(entries):
    """``auto_token_budget`` is a token budget (allowed in backends/hf/), not a label budget."""
    assert (
        misuses([PublicName("backends/hf/token_budget.py", "auto_token_budget", "")], entries) == []
    )
    assert misuses([PublicName("backends/hf/token_budget.py", "label_budget", "")], entries)
