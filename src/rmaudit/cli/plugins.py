"""``rmaudit plugins``: installed plugins, their versions and hooks, and every component each
registers with its one-line description."""

from __future__ import annotations

import json

import click
from rich.table import Table

from rmaudit.components import PairSource
from rmaudit.display.literal import assemble, literal
from rmaudit.plugins import host

from .console import console


def _kind(kind: str, cls: type) -> str:
    """The component's kind; a pair source registers as a prompt source but is listed apart."""
    return "pair_source" if kind == "prompt_source" and issubclass(cls, PairSource) else kind


@click.command(name="plugins")
@click.option("--all", "show_all", is_flag=True, help="Include the built-in plugins.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
def plugins_command(show_all: bool, as_json: bool) -> None:
    """List plugins and their components (third-party only, unless --all)."""
    components: dict[str, list[tuple[str, str, str]]] = {}  # plugin → (kind, name, description)
    for kind in host.HOOK_OF_KIND:
        for entry in host.registered(kind, builtins=show_all):
            components.setdefault(entry.plugin, []).append(
                (_kind(kind, entry.cls), entry.cls.name, entry.cls.summary())
            )
    infos = host.plugin_infos(builtins=show_all)
    records = [
        {
            "name": i.name,
            "distribution": i.distribution,
            "version": i.version,
            "hooks": list(i.hooks),
            "components": [f"{kind}:{name}" for kind, name, _ in components.get(i.name, [])],
            "descriptions": {
                f"{kind}:{name}": what for kind, name, what in components.get(i.name, [])
            },
            "commands": _commands(i.name),
        }
        for i in infos
    ]
    out = console()
    if as_json:
        out.print_json(json.dumps(records))
    else:
        _print_tables(out, records, show_all)
    for failure in host.load_failures:
        click.echo(f"warning: {failure}", err=True)


def _commands(plugin_name: str) -> list[str]:
    """The commands a plugin adds through ``register_commands``, by name."""
    plugin = host.pm.get_plugin(plugin_name)
    register = getattr(plugin, "register_commands", None)
    if register is None:
        return []
    group = click.Group()
    register(cli=group)
    return sorted(group.commands)


def _print_tables(out, records: list[dict], show_all: bool) -> None:
    if not records:
        out.print("no third-party plugins installed; --all shows the built-ins")
        return
    table = Table(title="plugins" + (" (with built-ins)" if show_all else ""), title_justify="left")
    for header in ("name", "distribution", "version"):
        table.add_column(header, overflow="fold")
    table.add_column("hooks", no_wrap=True)
    table.add_column("commands", overflow="fold")
    for r in records:
        table.add_row(
            literal(r["name"]),
            literal(r["distribution"]),
            literal(r["version"]),
            "\n".join(r["hooks"]),
            literal(", ".join(r["commands"])),
        )
    out.print(table)
    table = Table(title="components", title_justify="left")
    table.add_column("component (kind, plugin)", no_wrap=True)
    table.add_column("what it does", overflow="fold")
    rows = sorted(
        (
            (entry.split(":", 1), what, r["distribution"])
            for r in records
            for entry, what in r["descriptions"].items()
        ),
        key=lambda row: (
            list(host.HOOK_OF_KIND).index(row[0][0]) if row[0][0] in host.HOOK_OF_KIND else 0.5,
            row[0][1],
        ),
    )
    for (kind, name), what, distribution in rows:
        where = kind if distribution == "rmaudit" else f"{kind}, {distribution}"
        table.add_row(assemble((name, "bold"), "\n", (where, "dim")), literal(what))
    out.print(table)
