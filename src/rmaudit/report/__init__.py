"""``rmaudit report``: PNG figures of a run's curves and ``report.md``, and with ``--html`` one
self-contained ``report.html`` to share (the ``report`` extra).

:mod:`.figures` draws the figures, :mod:`.markdown` writes the Markdown, :mod:`.html` the page;
:func:`write_report` puts them in a folder, by default named after the database
(``audit.db`` → ``audit-report/``) so the reports of different databases never overwrite each
other.
"""

from __future__ import annotations

import io
from pathlib import Path

from rmaudit.results.summary import load_summary, oracle_scale
from rmaudit.store import Store

from .figures import GOODHART_FIGURE, build_figures
from .html import RunPage, html_report
from .markdown import markdown
from .svg import inline_svg

REPORT_NAME = "report.md"
HTML_NAME = "report.html"

__all__ = [
    "GOODHART_FIGURE",
    "HTML_NAME",
    "REPORT_NAME",
    "RunPage",
    "build_figures",
    "default_out_dir",
    "run_page",
    "write_html",
    "write_report",
]


def default_out_dir(db_path: str | Path) -> Path:
    """``runs/audit.db`` → ``runs/audit-report``: beside the database, named after it."""
    path = Path(db_path)
    return path.with_name(f"{path.stem}-report")


def run_page(store: Store, run_id: str, heading: str = "") -> RunPage:
    """A run's summary, its oracle's scale and its figures drawn as PNGs (for the files and
    report.md) and as SVGs (for report.html)."""
    summary = load_summary(store, run_id)
    scale = oracle_scale(store, summary.benchmark)
    pngs, svgs = {}, {}
    for index, (name, figure) in enumerate(build_figures(summary, store, scale).items()):
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=120)
        pngs[name] = buffer.getvalue()
        svgs[name] = inline_svg(figure, name, f"{heading or 'run'}-{index}")
    return RunPage(summary, scale, pngs, heading, svgs=svgs)


def write_report(
    store: Store, page: RunPage, out_dir: str | Path, html: bool = False
) -> list[Path]:
    """Write the PNGs and ``report.md`` (and ``report.html`` with ``html``) into ``out_dir``;
    return the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, png in page.pngs.items():
        (out / name).write_bytes(png)
        written.append(out / name)
    text = markdown(page.summary, store, page.scale, list(page.pngs), page.audit_verdicts)
    (out / REPORT_NAME).write_text(text, encoding="utf-8")
    written.append(out / REPORT_NAME)
    if html:
        written.append(write_html(store, [page], out / HTML_NAME))
    return written


def write_html(store: Store, pages: list[RunPage], path: str | Path) -> Path:
    """One self-contained page of ``pages`` (several: an audit's suites) at ``path``."""
    path = Path(path)
    path.write_text(html_report(store, pages, str(store.path)), encoding="utf-8")
    return path
