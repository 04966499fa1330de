"""The CLI starts fast: a command's module (and its numpy, scipy, pandas or Textual) is
imported only when that command runs; plugin commands still show up and run."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import click
import pytest

from rmaudit import hookimpl
from rmaudit.cli import BUILTIN_COMMANDS, load_builtin_command
from rmaudit.plugins import load_plugins, pm
from rmaudit.store import Store


def modules_after(code: str, **env: str) -> set[str]:
    """Top-level and dotted module names loaded by running ``code`` in a fresh interpreter."""
    probe = textwrap.dedent(f"""
        import sys
        try:
{textwrap.indent(textwrap.dedent(code), " " * 12)}
        except SystemExit:
            pass
        print("MODULES", " ".join(sorted(sys.modules)))
    """)
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=True,
    )
    line = next(line for line in result.stdout.splitlines() if line.startswith("MODULES "))
    return set(line.split()[1:])


HEAVY = ("scipy.stats", "pandas", "textual", "sklearn", "torch", "matplotlib")


def test_importing_the_cli_loads_no_heavy_library():
    loaded = modules_after("import rmaudit.cli")
    assert not loaded & set(HEAVY)
    assert "numpy" not in loaded and "pydantic" not in loaded
    # nor the store, nor the installed metadata: --version looks its number up when asked
    assert "rmaudit.store" not in loaded and "importlib.metadata" not in loaded


def test_version_is_looked_up_when_asked(rmaudit):
    from rmaudit import __version__

    result = rmaudit("--version")
    assert (result.code, result.out) == (0, f"rmaudit, version {__version__}\n")


def test_help_without_third_party_plugins_imports_no_command_module_nor_numpy():
    # RMAUDIT_LOAD_PLUGINS="" : the core install, whatever plugins this environment has
    loaded = modules_after(
        "from rmaudit.cli import main; main(['--help'])", RMAUDIT_LOAD_PLUGINS=""
    )
    commands = {path.partition(":")[0] for path, _ in BUILTIN_COMMANDS.values()}
    assert not loaded & commands
    assert not loaded & {*HEAVY, "numpy", "pydantic", "rich"}


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_import_no_installed_plugin(flag):
    """The example plugins are installed in the test environment (their entry points are
    listed), yet neither they nor the metrics one of them imports eagerly are loaded."""
    from rmaudit.plugins import installed_entry_points

    plugin_modules = {entry.value.partition(":")[0] for entry in installed_entry_points()}
    assert {"rmaudit_ranking.plugin", "rmaudit_verifiable.plugin"} <= plugin_modules
    loaded = modules_after(f"from rmaudit.cli import main; main([{flag!r}])")
    assert not {m for m in loaded if m.split(".")[0] in {"rmaudit_ranking", "rmaudit_verifiable"}}
    assert not loaded & {*HEAVY, "numpy", "pydantic", "rich", "rmaudit.metrics"}


def test_help_names_the_installed_plugins_from_their_metadata(rmaudit):
    listing = rmaudit("--help").out.split("Installed plugins:")[1]
    assert "ranking" in listing and "verifiable" in listing


def test_listing_runs_imports_no_summary_machinery(tmp_path):
    db = tmp_path / "empty.db"
    Store.open(db).close()
    loaded = modules_after(f"from rmaudit.cli import main; main(['runs', '--db', {str(db)!r}])")
    assert "rmaudit.cli.runs" in loaded and "rich.table" in loaded
    assert not loaded & {
        *HEAVY[:1],
        *HEAVY[2:],
        "rmaudit.results.summary",
        "rmaudit.cli.render",
        "rmaudit.run",
        "rmaudit.metrics",
    }


def test_help_lists_every_command_with_the_start_of_its_own_help(rmaudit):
    listing = rmaudit("--help").out.split("Commands:")[1].split("Installed plugins:")[0]
    rows = {line.split()[0]: line.split(maxsplit=1)[1] for line in listing.strip().splitlines()}
    assert set(BUILTIN_COMMANDS) <= set(rows)
    for name, (_, short_help) in BUILTIN_COMMANDS.items():
        command = load_builtin_command(name)
        assert isinstance(command, click.Command) and command.name == name
        assert " ".join(command.help.split()).startswith(short_help), name
        assert short_help.startswith(rows[name].removesuffix("...")), name


class HelloPlugin:
    @hookimpl
    def register_commands(self, cli):
        @cli.command("hello")
        @click.argument("who")
        def hello(who: str) -> None:
            """Greet WHO (a plugin command)."""
            click.echo(f"hello {who}")


def test_plugin_commands_are_listed_and_run(rmaudit):
    load_plugins()
    pm.register(HelloPlugin(), name="test-hello-command")
    try:
        assert "Greet WHO (a plugin command)." in rmaudit("--help").out
        result = rmaudit("hello", "world")
        assert result.code == 0 and result.out == "hello world\n"
        assert rmaudit("no-such-command").code == 2
    finally:
        pm.unregister(name="test-hello-command")


def test_a_rerun_with_nothing_to_do_loads_no_heavy_library(tmp_path):
    """The main recipe's shape (a k-DPP on TF-IDF embeddings, five RMs), smaller: its rerun
    reuses the stored selection and the stored metrics, so scipy is not imported (and
    scikit-learn is not, even by the first run)."""
    shipped = Path(__file__).resolve().parents[1] / "recipes" / "helpful.toml"
    recipe = tmp_path / "helpful.toml"
    text = shipped.read_text().replace("k = 100", "k = 10")
    recipe.write_text(text.replace("per_prompt = 256", "per_prompt = 64"))
    db = tmp_path / "rerun.db"
    command = f"from rmaudit.cli import main; main(['run', {str(recipe)!r}, '--db', {str(db)!r}])"
    first = modules_after(command)
    assert "scipy.sparse" in first  # the first run embeds the pool to draw from it …
    assert "sklearn" not in first  # … with rmaudit's own TF-IDF and SVD
    rerun = modules_after(command)
    assert not rerun & set(HEAVY)
    # no metric is recomputed, and the summary's Student's t is rmaudit's own
    assert "scipy.special" not in rerun
