"""The ``rmaudit`` command line: one module per command, plugins may add more.

Exit codes (DESIGN.md): 0 ok, 1 the run failed, 2 bad input — with a one-line reason
naming the file, the field and the value.
"""

from __future__ import annotations

import os
import sys
import traceback

import click

from rmaudit import __version__
from rmaudit.errors import BadInput

from . import ablation, export, import_, plugins, regret, regret_study, report, run, runs, tui

BUILTIN_COMMANDS = (run.run, plugins.plugins_command, export.export, import_.import_command, runs.runs,
                    tui.tui, report.report, regret.regret, regret.correlate,
                    ablation.ablation, regret_study.regret_study)


class PluginCommandsGroup(click.Group):
    """Built-in commands are known up front; plugin commands load only when asked for."""

    def _plugin_commands(self) -> dict[str, click.Command]:
        from rmaudit.plugins import load_plugins, pm

        load_plugins()
        extra = click.Group()
        pm.hook.register_commands(cli=extra)
        return extra.commands

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._plugin_commands()})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return super().get_command(ctx, name) or self._plugin_commands().get(name)


@click.group(cls=PluginCommandsGroup)
@click.version_option(__version__, prog_name="rmaudit")
@click.option("--plugins-dir", type=click.Path(exists=True, file_okay=False),
              help="Load every *.py file in this folder as a plugin.")
def cli(plugins_dir: str | None) -> None:
    """Audit reward models: does the response an RM ranks highest really hold up?"""
    if plugins_dir:
        from rmaudit.plugins import load_plugins_dir

        load_plugins_dir(plugins_dir)


for command in BUILTIN_COMMANDS:
    cli.add_command(command)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: maps errors to the documented exit codes."""
    try:
        code = cli.main(args=argv, prog_name="rmaudit", standalone_mode=False)
    except BadInput as error:
        click.echo(f"Error: {error.one_line()}", err=True)
        sys.exit(2)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("Interrupted; rerun the same command to resume.", err=True)
        sys.exit(1)
    except Exception as error:  # the run itself failed: say so in one line, trace on request
        if os.environ.get("RMAUDIT_TRACEBACK"):
            traceback.print_exc()
        click.echo(f"Error: run failed: {type(error).__name__}: {error} "
                   f"(set RMAUDIT_TRACEBACK=1 for the traceback)", err=True)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
