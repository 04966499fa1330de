"""The generated sections of the docs, written by cog (cogapp) from the code.

    python docs/_generate.py           # regenerate every generated section
    python docs/_generate.py --check   # fail (exit 1, with a diff) if one is stale

Each ``[[[cog ...]]]`` block of the files in ``FILES`` calls one function here.  Only public
entry points are read: the plugin registry (built-in components and their pydantic Options),
the click command group and ``Store.open`` on a fresh file.  rmaudit never imports this
module; tests/test_docs.py runs the check.
"""

from __future__ import annotations

import inspect
import json
import sqlite3
import sys
import tempfile
import types
import typing
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parent.parent
FILES = (
    "README.md",
    "docs/reference/components.md",
    "docs/reference/cli.md",
    "docs/data-formats.md",
)
REGENERATE = "python docs/_generate.py"
HELP_WIDTH = 88  # columns of the rendered --help text, fixed so the output is reproducible

# -- component reference ----------------------------------------------------------------------

#: kind → (section title, where a recipe names a component of that kind)
KIND_SECTIONS = {
    "prompt_source": ("Prompt sources", "`[prompts.source]`"),
    "pair_source": ("Pair sources", "`[pairs.source]`, or `[prompts.source]` for their prompts"),
    "prompt_sampler": ("Prompt samplers", "`[prompts.sampler]`"),
    "embedder": ("Embedders", "`[prompts.embedder]` (used by samplers that need embeddings)"),
    "reference_policy": ("Reference policies", "`[responses.policy]`"),
    "oracle": ("Oracles", "`[oracle]`"),
    "reward_model": ("Reward models", "`[[reward_models]]`, with a `label`"),
    "solution_source": ("Solution sources", "`[solutions.source]` (docs/prm.md)"),
    "process_reward_model": (
        "Process reward models",
        "`[[process_reward_models]]`, with a `label` (docs/prm.md)",
    ),
    "shift_perturber": ("Shift perturbers", "`[pairs.shift.perturber]`"),
    "benchmark_source": ("Benchmark sources", "`[benchmark]` with a `name` (instead of `file`)"),
    "metric:rm": ("Benchmark metrics", "`[[metrics]]`: once per RM on the benchmark"),
    "metric:pairs": ("Pair metrics", "`[[metrics]]`: once per RM on the preference pairs"),
    "metric:run": ("Run-level metrics", "`[[metrics]]`: once per run, across every RM"),
    "metric:steps": ("Step metrics", "`[[metrics]]`: once per PRM on the solutions"),
}
#: An options base model shared by at least this many components is documented once.
SHARED_GROUP_MIN_USERS = 3
SHARED_GROUP_MIN_FIELDS = 5


def _section_of(kind: str, cls: type) -> str:
    from rmaudit.components import PairSource, SolutionSource

    if kind == "prompt_source" and issubclass(cls, PairSource):
        return "pair_source"
    if kind == "prompt_source" and issubclass(cls, SolutionSource):
        return "solution_source"
    if kind == "metric":
        return f"metric:{cls.scope}"
    return kind


def builtin_components() -> dict[str, list[type]]:
    """Section → the built-in component classes in it, sorted by name."""
    from rmaudit import plugins

    sections: dict[str, list[type]] = {section: [] for section in KIND_SECTIONS}
    for kind in plugins.HOOK_OF_KIND:
        for entry in plugins.registered(kind):
            if entry.source == plugins.BUILTIN_SOURCE:
                sections.setdefault(_section_of(kind, entry.cls), []).append(entry.cls)
    return {
        section: sorted(classes, key=lambda cls: cls.name) for section, classes in sections.items()
    }


def _first_paragraph(doc: str | None) -> str:
    return " ".join(inspect.cleandoc(doc or "").split("\n\n")[0].split())


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _toml(value: Any) -> str:
    """A default value as a recipe would write it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):  # a TOML basic string escapes as JSON does
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Path):
        return f'"{value}"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    if hasattr(value, "model_dump"):
        return _toml(value.model_dump(mode="json"))
    return str(value)


def _type(annotation: Any) -> str:
    """A field's annotation in recipe terms: string, integer, path, table, list of …"""
    from pydantic import BaseModel

    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        # a type read from what a recipe writes (a judge's template: a name or a path)
        written = [m.json_schema for m in annotation.__metadata__ if hasattr(m, "json_schema")]
        if written:
            return "path" if written[0].get("format") == "path" else str(written[0]["type"])
        return _type(args[0])
    if origin is Literal:
        return " / ".join(_toml(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        shown = [_type(a) for a in args if a is not type(None)]
        return " or ".join(dict.fromkeys(shown))
    if origin in (list, tuple, set):
        if origin is tuple and args and args[-1] is not Ellipsis:
            return "[" + ", ".join(_type(a) for a in args) + "]"
        return f"list of {_grouped(args[0])}" if args else "list"
    if origin is dict or annotation is dict:
        return "table" if not args or args[1] is Any else f"table of {_grouped(args[1])}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "table: " + ", ".join(annotation.model_fields)
    names = {str: "string", int: "integer", float: "number", bool: "boolean", Path: "path"}
    if annotation is Any:
        return "any"
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _grouped(annotation: Any) -> str:
    """A type inside "list of" / "table of", parenthesised when it is a choice."""
    shown = _type(annotation)
    return f"({shown})" if " or " in shown or " / " in shown else shown


def _bounds(metadata: list[Any]) -> str:
    symbols = {
        "ge": "≥",
        "gt": ">",
        "le": "≤",
        "lt": "<",
        "min_length": "length ≥",
        "max_length": "length ≤",
    }
    shown = []
    for constraint in metadata:
        for attribute, symbol in symbols.items():
            value = getattr(constraint, attribute, None)
            if value is not None:
                shown.append(f"{symbol} {value}")
    return f" ({', '.join(shown)})" if shown else ""


def _default(field: Any) -> str:
    if field.is_required():
        return "**required**"
    value = field.get_default(call_default_factory=True)
    return "unset" if value is None else f"`{_toml(value)}`"


def options_table(model: type, fields: list[str]) -> list[str]:
    lines = ["| option | type | default | description |", "|---|---|---|---|"]
    for name in fields:
        field = model.model_fields[name]
        kind = _type(field.annotation) + _bounds(field.metadata)
        lines.append(
            f"| `{name}` | {_cell(kind)} | {_cell(_default(field))} | "
            f"{_cell(field.description or '')} |"
        )
    return lines


def _shared_groups(classes: list[type]) -> list[type]:
    """Option base models that enough components share to be documented once."""
    from pydantic import BaseModel

    users: dict[type, int] = {}
    for cls in classes:
        for base in cls.Options.__mro__[1:]:
            if isinstance(base, type) and issubclass(base, BaseModel) and base is not BaseModel:
                users[base] = users.get(base, 0) + 1
    return sorted(
        (
            base
            for base, count in users.items()
            if count >= SHARED_GROUP_MIN_USERS and len(base.model_fields) >= SHARED_GROUP_MIN_FIELDS
        ),
        key=lambda base: base.__name__,
    )


def _anchor(text: str) -> str:
    """GitHub's anchor of a heading."""
    kept = "".join(c for c in text.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def _inherited(model: Any, group: Any) -> list[str]:
    """The fields ``model`` takes from ``group`` as they are (one it declares again, with
    another default or meaning, is its own)."""

    def same(a: Any, b: Any) -> bool:
        return (a.annotation, a.default, a.description) == (b.annotation, b.default, b.description)

    return [
        name
        for name, field in group.model_fields.items()
        if name in model.model_fields and same(model.model_fields[name], field)
    ]


def _takes(model: Any, groups: list[type]) -> list[str]:
    """The lines naming the nearest shared groups ``model`` takes options from, and the
    table of its own."""
    matching = [group for group in groups if group is not model and issubclass(model, group)]
    nearest = [g for g in matching if not any(h is not g and issubclass(h, g) for h in matching)]
    taken = {name for group in matching for name in _inherited(model, group)}
    own = [name for name in model.model_fields if name not in taken]
    lines: list[str] = []
    for group in nearest:
        link = f"[`{group.__name__}`](#{_anchor(group.__name__)})"
        lines += [f"Takes the {link} options" + (", and:" if own else "."), ""]
    if own:
        lines += [*options_table(model, own), ""]
    return lines


def component_reference() -> str:
    """Every built-in component by kind: summary and options (type, default, description)."""
    from rmaudit.recipe.executor_options import EXECUTOR_OPTIONS

    sections = builtin_components()
    everything = [cls for classes in sections.values() for cls in classes]
    groups = _shared_groups(everything)
    lines: list[str] = []
    for section, classes in sections.items():
        if not classes:
            continue
        title, slot = KIND_SECTIONS.get(section, (section, ""))
        lines += [f"## {title}", "", f"Recipe slot: {slot}." if slot else "", ""]
        for cls in classes:
            lines += [f"### `{cls.name}`", "", _first_paragraph(cls.__doc__), ""]
            lines += _takes(cls.Options, groups) or ["No options.", ""]
    if groups:
        lines += ["## Shared options", ""]
        for group in groups:
            lines += [f"### {group.__name__}", "", _first_paragraph(group.__doc__), ""]
            lines += _takes(group, groups)
    lines += ["## Executors", "", "Recipe slot: `[executor]` (default `local`).", ""]
    for name, model in EXECUTOR_OPTIONS.items():
        fields = [f for f in model.model_fields if f != "name"]
        lines += [f"### `{name}`", ""]
        lines += [*options_table(model, fields), ""] if fields else ["No options.", ""]
    return "\n".join(_squeeze(lines)) + "\n"


def _squeeze(lines: list[str]) -> list[str]:
    """Drop repeated blank lines (and a trailing one)."""
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return out


# -- CLI help ---------------------------------------------------------------------------------


def _builtin_commands() -> list[tuple[str, Any, Any]]:
    """(full name, command, its context) for every built-in command, groups' subcommands too."""
    import click

    from rmaudit.cli import cli

    root = click.Context(
        cli, info_name="rmaudit", terminal_width=HELP_WIDTH, max_content_width=HELP_WIDTH
    )
    found = []

    def walk(group: Any, context: Any) -> None:
        for name in sorted(group.list_commands(context)):
            command = group.get_command(context, name)
            if not command.callback or not command.callback.__module__.startswith("rmaudit."):
                continue  # a plugin's command: not part of rmaudit's reference
            child = click.Context(
                command,
                info_name=name,
                parent=context,
                terminal_width=HELP_WIDTH,
                max_content_width=HELP_WIDTH,
            )
            found.append((child.command_path, command, child))
            if isinstance(command, click.Group):
                walk(command, child)

    walk(cli, root)
    return found


def _root_help() -> str:
    """``rmaudit --help`` listing the built-in commands only (plugins add their own)."""
    import click

    from rmaudit.cli import cli

    context = click.Context(
        cli, info_name="rmaudit", terminal_width=HELP_WIDTH, max_content_width=HELP_WIDTH
    )
    formatter = context.make_formatter()
    cli.format_usage(context, formatter)
    cli.format_help_text(context, formatter)
    click.Command.format_options(cli, context, formatter)
    commands = [
        (path.removeprefix("rmaudit "), command)
        for path, command, _ in _builtin_commands()
        if path.count(" ") == 1
    ]
    limit = formatter.width - 6 - max(len(name) for name, _ in commands)  # as click's own help
    rows = [(name, command.get_short_help_str(limit)) for name, command in commands]
    with formatter.section("Commands"):
        formatter.write_dl(rows)
    return formatter.getvalue().rstrip()


def cli_reference() -> str:
    """``--help`` of rmaudit and of every built-in command."""
    lines = ["## `rmaudit`", "", "```text", _root_help(), "```", ""]
    for path, command, context in _builtin_commands():
        lines += [f"## `{path}`", "", "```text", command.get_help(context).rstrip(), "```", ""]
    return "\n".join(_squeeze(lines)) + "\n"


def commands_table(reference: str = "docs/reference/cli.md") -> str:
    """The README's table: each leaf command, its arguments and the first line of its help."""
    import click

    lines = ["| command | what it does |", "|---|---|"]
    for path, command, context in _builtin_commands():
        if isinstance(command, click.Group):
            continue
        arguments = " ".join(
            piece for piece in command.collect_usage_pieces(context) if piece != "[OPTIONS]"
        )
        usage = f"{path} {arguments}".strip()
        lines.append(
            f"| [`{_cell(usage)}`]({reference}#{_anchor(path)}) | "
            f"{_cell(_first_paragraph(command.help))} |"
        )
    return "\n".join(lines) + "\n"


# -- store schema -----------------------------------------------------------------------------


def store_schema() -> str:
    """Tables, columns, keys and indexes of a fresh store, as its migrations create it."""
    from rmaudit.store import Store

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "schema.db"
        Store.open(path).close()
        with sqlite3.connect(path) as db:
            return _describe_schema(db)


def _describe_schema(db: sqlite3.Connection) -> str:
    tables = [
        row[0]
        for row in db.execute(
            "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' "
            "and name not like '\\_%' escape '\\' order by rowid"
        )
    ]  # _sqlite_migrations: bookkeeping
    lines: list[str] = []
    for table in tables:
        columns = db.execute(f"pragma table_info('{table}')").fetchall()
        key = [name for *_, name in sorted((pk, name) for _, name, _, _, _, pk in columns if pk)]
        lines += [f"### `{table}`", "", "| column | type | |", "|---|---|---|"]
        for _, name, kind, _, _, pk in columns:
            role = (
                ("primary key" if len(key) == 1 else f"primary key ({pk} of {len(key)})")
                if pk
                else ""
            )
            lines.append(f"| `{name}` | {kind} | {role} |")
        for _, index, unique, origin, _ in db.execute(f"pragma index_list('{table}')").fetchall():
            if origin != "c":
                continue  # the primary key's own index
            indexed = [row[2] for row in db.execute(f"pragma index_info('{index}')")]
            lines.append("")
            lines.append(f"{'Unique index' if unique else 'Index'} on ({', '.join(indexed)}).")
        lines.append("")
    return "\n".join(_squeeze(lines)) + "\n"


# -- running cog ------------------------------------------------------------------------------


def run_cog(check: bool, output: typing.TextIO | None = None) -> int:
    """Regenerate (or, with ``check``, verify) every generated section; cog's exit status
    (0: done, or nothing stale).  Cog's messages and diff go to ``output`` (default: stdout)."""
    from cogapp import Cog

    cog = Cog()
    if output is not None:
        cog.set_output(stdout=output, stderr=output)
    arguments = ["cog", "-I", str(ROOT / "docs"), "--verbosity=1"]
    arguments += (
        ["--check", "--diff", f"--check-fail-msg=regenerate with: {REGENERATE}"]
        if check
        else ["-r"]
    )
    return cog.main(arguments + [str(ROOT / f) for f in FILES])


if __name__ == "__main__":
    sys.exit(run_cog(check="--check" in sys.argv[1:]))
