"""``rmaudit plugins``: installed plugins, their versions, hooks and components."""

from __future__ import annotations

import json

import click
from rich.table import Table

from rmaudit import plugins as host

from .console import console


@click.command(name="plugins")
@click.option("--all", "show_all", is_flag=True, help="Include the built-in plugins.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def plugins_command(show_all: bool, as_json: bool) -> None:
    """List plugins (third-party only, unless --all)."""
    components: dict[str, list[str]] = {}
    for kind in host.HOOK_OF_KIND:
        for entry in host.registered(kind, builtins=show_all):
            components.setdefault(entry.plugin, []).append(f"{kind}:{entry.cls.name}")
    infos = host.plugin_infos(builtins=show_all)
    records = [{"name": i.name, "distribution": i.distribution, "version": i.version,
                "hooks": list(i.hooks), "components": components.get(i.name, [])} for i in infos]
    out = console()
    if as_json:
        out.print_json(json.dumps(records))
    else:
        table = Table(title="plugins" + (" (with built-ins)" if show_all else ""), title_justify="left")
        for header in ("name", "distribution", "version", "hooks", "components"):
            table.add_column(header)
        for r in records:
            table.add_row(r["name"], r["distribution"], r["version"], "\n".join(r["hooks"]),
                          "\n".join(r["components"]))
        out.print(table)
        if not records:
            out.print("no third-party plugins installed; --all shows the built-ins")
    for failure in host.load_failures:
        click.echo(f"warning: {failure}", err=True)
