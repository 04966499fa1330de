"""``rmaudit report``: PNG figures of a run's curves and ``report.md`` (the ``report`` extra).

:mod:`.figures` draws the figures, :mod:`.markdown` writes the Markdown; :func:`write_report`
puts both in a folder, by default named after the database (``audit.db`` → ``audit-report/``)
so the reports of different databases never overwrite each other.
"""

from __future__ import annotations

from pathlib import Path

from rmaudit.results.summary import load_summary, oracle_scale
from rmaudit.store import Store

from .figures import GOODHART_FIGURE, build_figures
from .markdown import markdown

REPORT_NAME = "report.md"

__all__ = ["GOODHART_FIGURE", "REPORT_NAME", "build_figures", "default_out_dir", "write_report"]


def default_out_dir(db_path: str | Path) -> Path:
    """``runs/audit.db`` → ``runs/audit-report``: beside the database, named after it."""
    path = Path(db_path)
    return path.with_name(f"{path.stem}-report")


def write_report(store: Store, run_id: str, out_dir: str | Path) -> list[Path]:
    """Write the PNGs and ``report.md`` into ``out_dir``; return the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = load_summary(store, run_id)
    scale = oracle_scale(store, summary.benchmark)
    written = []
    figures = build_figures(summary, store, scale)
    for name, figure in figures.items():
        figure.savefig(out / name, dpi=120)
        written.append(out / name)
    text = markdown(summary, store, scale, list(figures), store.path)
    (out / REPORT_NAME).write_text(text, encoding="utf-8")
    return [*written, out / REPORT_NAME]
