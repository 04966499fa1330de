"""Running a recipe: the stages (one module each), their shared context, and the runner that
orders them and keeps the run's books.  ``Runner(recipe, store).plan()`` is ``--dry-run``;
``.run()`` is ``rmaudit run``."""

from .context import Progress, SilentProgress, StageCount
from .runner import Runner, RunResult, build_components

__all__ = ["Progress", "RunResult", "Runner", "SilentProgress", "StageCount", "build_components"]
