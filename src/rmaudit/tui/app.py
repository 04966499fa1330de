"""The Textual app of ``rmaudit tui``: a read-only browser over one rmaudit DB.

Screens stack: runs → leaderboard → failures of one RM → one prompt's responses, with the
curves of the selected RMs one key away from the leaderboard.  Escape goes back one screen.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from textual.app import App
from textual.binding import Binding

from rmaudit.display.formatting import short_label, visible
from rmaudit.results.browse import PromptFailure, prompt_failures
from rmaudit.results.pair_failures import ModelOnPair, ShiftFlip, model_on_pairs, shift_flips
from rmaudit.results.run_index import (
    latest_complete_run,
    open_for_reading,
    resolve_run,
)
from rmaudit.results.solutions import SolutionView, solution_views
from rmaudit.results.summary import RunSummary, load_summary
from rmaudit.store import Store

from .screens._base import AuditAppView
from .screens.help import HelpScreen
from .screens.leaderboard import LeaderboardScreen
from .screens.runs import RunsScreen

T = TypeVar("T")


class AuditApp(App):
    """Browse the runs of an rmaudit DB; opens on the leaderboard of ``run_id`` (default:
    latest)."""

    TITLE = "rmaudit"
    CSS_PATH = "app.tcss"
    ENABLE_COMMAND_PALETTE = (
        False  # every action has a key; the footer needs the room at 80 columns
    )
    BINDINGS = [
        # q is in every screen's help (?), not its footer: the footer needs the room at 80
        # columns for the screen's own keys and esc
        Binding("q", "quit", "Quit", show=False),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, db_path: str | Path, run_id: str | None = None) -> None:
        super().__init__()
        self.db_path = str(db_path)
        self.store = open_for_reading(db_path)  # BadInput before anything is drawn
        self.start_run = (
            resolve_run(self.store, run_id)
            if run_id
            else latest_complete_run(self.store, or_running=True)
        )
        self.sub_title = visible(Path(db_path).name)
        self._summaries: dict[str, RunSummary] = {}
        #: RMs marked on each run's leaderboard: the ones the curves show (all when none is)
        self.marked: dict[str, list[str]] = {}
        #: failure tables already computed, by (run, RM): each reads every score of the RM
        self.failures: dict[tuple[str, str], list[PromptFailure]] = {}
        #: an RM's scores of the run's pairs, and the pairs whose verdict flips under shift
        self.on_pairs: dict[tuple[str, str], list[ModelOnPair]] = {}
        self.shift_flips: dict[tuple[str, str], list[ShiftFlip]] = {}
        #: a process reward model's solutions, worst first
        self.solutions: dict[tuple[str, str], list[SolutionView]] = {}

    def get_default_screen(self) -> RunsScreen:
        return RunsScreen()

    def on_mount(self) -> None:
        if self.start_run is not None:
            self.push_screen(LeaderboardScreen(self.start_run))

    def on_unmount(self) -> None:
        self.store.close()

    def summary(self, run_id: str) -> RunSummary:
        if run_id not in self._summaries:
            self._summaries[run_id] = load_summary(self.store, run_id)
        return self._summaries[run_id]

    def forget(self, run_id: str) -> None:
        """Drop what was read of ``run_id`` (a running run changes), so it is read again."""
        self._summaries.pop(run_id, None)
        for cache in (self.failures, self.on_pairs, self.shift_flips, self.solutions):
            for key in [key for key in cache if key[0] == run_id]:
                del cache[key]

    def rm_label(self, run_id: str, rm_key: str) -> str:
        """The RM's label as the screens show it (one line, cut if very long)."""
        labels = dict((k, label) for label, k in self.summary(run_id).reward_models)
        return short_label(labels.get(rm_key, rm_key[:10]))

    def _read_once(
        self, cache: dict[tuple[str, str], T], key: tuple[str, str], read: Callable[[Store], T]
    ) -> T:
        """``read(store)`` cached by ``key``, on a connection of the calling thread (sqlite
        connections are per thread), so the loaders below are safe from a worker thread."""
        if key not in cache:
            with closing(open_for_reading(self.db_path)) as store:
                cache[key] = read(store)
        return cache[key]

    def load_failures(self, run_id: str, rm_key: str) -> list[PromptFailure]:
        """The failure table of an RM."""
        return self._read_once(
            self.failures,
            (run_id, rm_key),
            lambda store: prompt_failures(store, self.summary(run_id), rm_key),
        )

    def load_model_on_pairs(self, run_id: str, rm_key: str) -> list[ModelOnPair]:
        """The RM's scores of the run's pairs."""
        return self._read_once(
            self.on_pairs,
            (run_id, rm_key),
            lambda store: model_on_pairs(store, self.summary(run_id), rm_key),
        )

    def load_solutions(self, run_id: str, rm_key: str) -> list[SolutionView]:
        """A process reward model's solutions with its step scores, worst first."""
        return self._read_once(
            self.solutions, (run_id, rm_key), lambda store: solution_views(store, run_id, rm_key)
        )

    def load_shift_flips(self, run_id: str, rm_key: str) -> list[ShiftFlip]:
        """The run's pairs whose verdict flips under shift."""
        on_pairs = self.load_model_on_pairs(run_id, rm_key)
        return self._read_once(
            self.shift_flips,
            (run_id, rm_key),
            lambda store: shift_flips(store, self.summary(run_id), rm_key, on_pairs),
        )

    # Textual's own action_back is a coroutine; a plain method is an action all the same
    def action_back(self) -> None:  # type: ignore[override]
        if len(self.screen_stack) > 1:
            self.pop_screen()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))


if TYPE_CHECKING:

    def _screens_see(app: AuditApp) -> AuditAppView:
        return app  # the type checker checks that the app is what its screens take it for
