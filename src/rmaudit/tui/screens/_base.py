"""The screens' base: a Textual screen that sees its app as what ``rmaudit tui``'s app is for
them — the store and the run summaries it reads, the RMs marked, the failure tables — so
``self.app.summary(run_id)`` is typed.  :class:`AuditAppView` is that view, kept by
:class:`~rmaudit.tui.app.AuditApp` (checked there), so no screen imports the app module that
imports the screens."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from textual.screen import Screen

if TYPE_CHECKING:
    from rmaudit.results.browse import PromptFailure
    from rmaudit.results.pair_failures import ModelOnPair, ShiftFlip
    from rmaudit.results.solutions import SolutionView
    from rmaudit.results.summary import RunSummary
    from rmaudit.store import Store


class AuditAppView(Protocol):
    """What the screens use of the app."""

    #: RMs marked on each run's leaderboard: the ones the curves show (all when none is)
    marked: dict[str, list[str]]

    @property
    def store(self) -> Store: ...

    @property
    def sub_title(self) -> str: ...

    def summary(self, run_id: str) -> RunSummary: ...

    def forget(self, run_id: str) -> None: ...

    def rm_label(self, run_id: str, rm_key: str) -> str: ...

    def load_failures(self, run_id: str, rm_key: str) -> list[PromptFailure]: ...

    def load_model_on_pairs(self, run_id: str, rm_key: str) -> list[ModelOnPair]: ...

    def load_shift_flips(self, run_id: str, rm_key: str) -> list[ShiftFlip]: ...

    def load_solutions(self, run_id: str, rm_key: str) -> list[SolutionView]: ...

    def push_screen(self, screen: Screen[Any]) -> Any: ...

    def pop_screen(self) -> Any: ...

    def call_from_thread(self, callback: Callable[..., Any], *args: Any) -> Any: ...


class AuditScreen(Screen):
    """A screen of ``rmaudit tui``."""

    if TYPE_CHECKING:
        # Textual types a screen's app as any App; every screen here runs in an AuditApp
        app: AuditAppView  # type: ignore[assignment]


T = TypeVar("T")


def following(options: Sequence[T], current: T) -> T:
    """The option after ``current`` (after the last: the first), what a key that cycles
    through them turns to; the first where ``current`` is none of them."""
    if current not in options:
        return options[0]
    return options[(list(options).index(current) + 1) % len(options)]
