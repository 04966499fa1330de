"""The ``rmaudit`` command line: one module per command, plugins may add more.

A command's module is imported only when that command runs, so ``rmaudit --help`` and the
light commands do not pay for the heavy ones (scipy, pandas, Textual): ``BUILTIN_COMMANDS``
names each command's module and the short help that ``rmaudit --help`` lists.

Exit codes (docs/architecture.md, "Errors and exit codes"): 0 ok, 1 the run failed (or another
process writes the DB), 2 bad input — with a one-line reason naming the file, the field and
the value — 130 interrupted by Ctrl-C, 143 by SIGTERM.  Every error is one line on stderr.
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
import threading
import traceback

import click

from rmaudit.errors import BadInput, WriterBusy

#: name → ("module:attribute", short help listed by ``rmaudit --help``; tests check that each
#: command's own help starts with it)
BUILTIN_COMMANDS: dict[str, tuple[str, str]] = {
    "ablation": (
        "rmaudit.cli.ablation:ablation",
        "Ablations of the audit's estimators, computed from stored runs.",
    ),
    "audit": (
        "rmaudit.cli.audit:audit",
        "Audit reward models on the built-in suites, beside the length and random baselines.",
    ),
    "compare": (
        "rmaudit.cli.compare:compare",
        "Paired differences of reward models on shared items, groups and rank intervals.",
    ),
    "correlate": (
        "rmaudit.cli.regret:correlate",
        "Correlate every stored per-RM metric with each downstream outcome across RMs.",
    ),
    "export": (
        "rmaudit.cli.export:export",
        "Write a benchmark (prompts, responses, oracle labels) to OUT (.jsonl or .jsonl.gz).",
    ),
    "import": (
        "rmaudit.cli.import_:import_command",
        "Import a benchmark file written by `rmaudit export` (all or nothing).",
    ),
    "plan": (
        "rmaudit.cli.plan:plan_command",
        "Plan the labels of RECIPE: what each label design spends to reach a target width.",
    ),
    "plugins": (
        "rmaudit.cli.plugins:plugins_command",
        "List plugins and their components (third-party only, unless --all).",
    ),
    "regret": (
        "rmaudit.cli.regret:regret",
        "Print a run's regret-correlation study: error metric × correlation with best-of-n regret.",
    ),
    "regret-study": (
        "rmaudit.cli.regret_study:regret_study",
        "Which RM test set predicts best-of-n regret best (Rethinking RM Evaluation, Sec. 4)?",
    ),
    "report": (
        "rmaudit.cli.report:report",
        "Write plots of every stored curve and a Markdown summary of a run.",
    ),
    "run": ("rmaudit.cli.run:run", "Run the audit described by RECIPE (a TOML file)."),
    "runs": (
        "rmaudit.cli.runs:runs",
        "List stored runs, newest first; with RUN_ID, print that run's summary.",
    ),
    "tui": ("rmaudit.cli.tui:tui", "Browse an audit DB (read-only)."),
}


def load_builtin_command(name: str) -> click.Command:
    module, _, attribute = BUILTIN_COMMANDS[name][0].partition(":")
    return getattr(importlib.import_module(module), attribute)


class LazyCommandsGroup(click.Group):
    """Built-in commands load when they run.  Plugin commands come from the plugins'
    ``register_commands`` hook, but ``rmaudit --help`` and ``--version`` import no plugin: they
    list the built-ins and the commands of plugins already loaded (``--plugins-dir``, or
    registered in-process), and name the installed plugins from their entry-point metadata.
    A command name rmaudit does not know loads the installed plugins to look for it."""

    def _loaded_plugin_commands(self) -> dict[str, click.Command]:
        from rmaudit.plugins import pm

        extra = click.Group()
        pm.hook.register_commands(cli=extra)
        return dict(extra.commands)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*BUILTIN_COMMANDS, *self._loaded_plugin_commands()})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in BUILTIN_COMMANDS:
            return load_builtin_command(name)
        command = self._loaded_plugin_commands().get(name)
        if command is None:
            from rmaudit.plugins import load_entry_point_plugins

            load_entry_point_plugins()
            command = self._loaded_plugin_commands().get(name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Click's command list, with the built-ins' short help taken from BUILTIN_COMMANDS,
        then the installed plugins by name (entry-point metadata: nothing imported)."""
        plugin_commands = {
            name: command
            for name, command in self._loaded_plugin_commands().items()
            if not command.hidden
        }
        # the built-ins stand in as bare commands holding their short help: nothing imported
        listed = {
            **plugin_commands,
            **{
                name: click.Command(name, help=short_help)
                for name, (_, short_help) in BUILTIN_COMMANDS.items()
            },
        }
        limit = formatter.width - 6 - max(map(len, listed))
        rows = [(name, listed[name].get_short_help_str(limit)) for name in sorted(listed)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)
        installed = _installed_plugin_names()
        if installed:
            with formatter.section("Installed plugins"):
                formatter.write_text(
                    f"{', '.join(installed)}. A plugin may add commands: "
                    "'rmaudit plugins' lists each plugin's components and commands."
                )


def _installed_plugin_names() -> list[str]:
    """The installed plugins autoloading would load, from their metadata alone."""
    from rmaudit.plugins import installed_entry_points

    return sorted({entry_point.name for entry_point in installed_entry_points()})


def _print_version(ctx: click.Context, _: click.Parameter, wanted: bool) -> None:
    """``--version``: the installed version, looked up only when asked (``rmaudit --help``
    and every command start without ``importlib.metadata``)."""
    if wanted and not ctx.resilient_parsing:
        from rmaudit import __version__

        click.echo(f"rmaudit, version {__version__}")
        ctx.exit()


@click.group(cls=LazyCommandsGroup)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
@click.option(
    "--plugins-dir",
    type=click.Path(exists=True, file_okay=False),
    help="Load every *.py file in this folder as a plugin.",
)
def cli(plugins_dir: str | None) -> None:
    """Audit reward models: does the response an RM ranks highest really hold up?"""
    if plugins_dir:
        from rmaudit.plugins import load_plugins_dir

        load_plugins_dir(plugins_dir)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the process is, so a run stops as it does on Ctrl-C: marked
    interrupted, what is complete committed."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated()


#: exit codes of a run stopped by a signal: 128 + the signal's number, as a shell reports it
INTERRUPTED_EXIT = {Terminated: 128 + signal.SIGTERM, KeyboardInterrupt: 128 + signal.SIGINT}


#: the garbage collector's thresholds for a command: a rerun reads back hundreds of thousands
#: of small records (a judge's verdicts, the comparisons' per-pair values), none of them in
#: cycles, and at Python's default (700) collecting them cost it a tenth of its time
GC_THRESHOLDS = (10_000, 50, 50)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: maps errors to the documented exit codes, each with one line."""
    gc.set_threshold(*GC_THRESHOLDS)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
        # a shell starts a script's background jobs with SIGINT ignored, and Python then keeps
        # it ignored: `kill -INT` must stop such a run as Ctrl-C stops one in the foreground
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        code = cli.main(args=argv, prog_name="rmaudit", standalone_mode=False)
    except BadInput as error:
        _fail(f"Error: {error.one_line()}", 2)
    except click.UsageError as error:  # click prints usage lines; one line says it all
        hint = f" (see '{error.ctx.command_path} --help')" if error.ctx else ""
        _fail(f"Error: {error.format_message()}{hint}".replace("\n", " "), 2)
    except click.ClickException as error:
        _fail(f"Error: {error.format_message()}".replace("\n", " "), error.exit_code)
    except WriterBusy as error:
        _fail(f"Error: {error}", 1)
    except (click.exceptions.Abort, KeyboardInterrupt) as error:
        # click turns KeyboardInterrupt (and so Terminated) into Abort, keeping it as the cause
        terminated = isinstance(error, Terminated) or isinstance(error.__cause__, Terminated)
        _fail(
            f"Interrupted ({'SIGTERM' if terminated else 'Ctrl-C'}); rerun the same command "
            f"to resume.",
            INTERRUPTED_EXIT[Terminated if terminated else KeyboardInterrupt],
        )
    except ModuleNotFoundError as error:  # an optional extra a component needs
        extra = OPTIONAL_MODULES.get((error.name or "").partition(".")[0])
        if extra is None:
            _failed_run(error)
        _fail(f"Error: {error.name}: not installed; pip install 'rmaudit[{extra}]'", 2)
    except Exception as error:
        _failed_run(error)
    sys.exit(code if isinstance(code, int) else 0)


#: top-level modules of the optional extras (pyproject.toml) → the extra that installs them
OPTIONAL_MODULES = {
    "torch": "hf",
    "transformers": "hf",
    "tokenizers": "hf",
    "accelerate": "hf",
    "textual": "tui",
    "textual_plotext": "tui",
    "matplotlib": "report",
    "openai": "api",
    "sentence_transformers": "embed",
    "pyarrow": "parquet",
    "datasets": "datasets",
    "ray": "ray",
}


def _failed_run(error: BaseException) -> None:
    """The run itself failed: say so in one line, the traceback on request; exit code 1."""
    if os.environ.get("RMAUDIT_TRACEBACK"):
        traceback.print_exc()
    _fail(
        f"Error: run failed: {type(error).__name__}: {error} "
        f"(set RMAUDIT_TRACEBACK=1 for the traceback)".replace("\n", " "),
        1,
    )


def _fail(line: str, code: int) -> None:
    click.echo(line, err=True)
    sys.exit(code)
