"""The HTML report's stylesheet: readable at 1280 px and on a phone (tables turn into cards
below 720 px; above it a table wider than the page scrolls sideways inside its own box;
figures two a row on a wide screen, one a row the page's width on a narrow one; long texts
wrap), light and dark."""

BASE_STYLE = """
:root { color-scheme: light dark; --line: #8884; --soft: #8881; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.35rem; margin-top: 2.5rem; }
h1, h2, h3, h4, p, li, figcaption, summary { overflow-wrap: anywhere; }
code { font-size: 0.9em; overflow-wrap: anywhere; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--soft);
      padding: 0.5rem; border-radius: 4px; margin: 0.3rem 0; }
.meta, .suite, .caption { color: GrayText; }
.suite { margin-bottom: 0; font-weight: bold; }
.simulated { border-left: 4px solid #d9822b; padding: 0.3rem 0.7rem; font-weight: bold; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; }
th, td { border-bottom: 1px solid var(--line); padding: 0.25rem 0.6rem; text-align: right;
         vertical-align: top; }
th { overflow-wrap: anywhere; }
.scroll { overflow-x: auto; }
.nowrap { white-space: nowrap; }
th:first-child, td.label { text-align: left; }
td.label { overflow-wrap: anywhere; }
figure { margin: 1rem 0; min-width: 0; }
figure svg { width: 100%; height: auto; display: block; }
.figures { display: grid; gap: 0 1.5rem;
           grid-template-columns: repeat(auto-fill, minmax(min(100%, 460px), 1fr)); }
figcaption { color: GrayText; font-size: 0.9em; }
details.item { border: 1px solid var(--line); border-radius: 4px; margin: 0.4rem 0;
               padding: 0.3rem 0.6rem; }
details.item summary { cursor: pointer; }
.badge { font-variant-numeric: tabular-nums; font-weight: bold; white-space: nowrap; }
.response { border-left: 3px solid var(--line); padding-left: 0.5rem; margin: 0.4rem 0; }
.caption { margin: 0; font-size: 0.9em; }
.search { position: sticky; top: 0; background: Canvas; padding: 0.4rem 0; z-index: 1;
          border-bottom: 1px solid var(--line); }
.search input { width: min(28rem, 100%); font: inherit; padding: 0.2rem 0.4rem; }
"""


def _cards(table: str) -> str:
    """The rules that lay ``table`` out as cards: one per row, each value beside its
    column's name."""
    return f"""
  {table}, {table} tbody, {table} tr, {table} td {{ display: block; width: 100%; }}
  {table} thead {{ display: none; }}
  {table} tr {{ border: 1px solid var(--line); border-radius: 4px; margin: 0 0 0.6rem; }}
  {table} td {{ display: flex; justify-content: space-between; gap: 1rem; text-align: right; }}
  {table} td::before {{ content: attr(data-label); text-align: left; color: GrayText;
                        flex: 1 1 auto; min-width: 0; overflow-wrap: anywhere; }}
  {table} td .value {{ flex: 0 1 auto; }}
  {table} td.label {{ font-weight: bold; text-align: left; }}
  {table} td.label::before {{ content: none; }}
"""


#: the scoring checks' statuses (report/scoring_checks.py)
CHECK_STYLE = (
    "pre.checks{white-space:pre-wrap}.check-pass{color:#1a7f37}.check-warn{color:#9a6700}"
    ".check-fail{color:#cf222e;font-weight:bold}.check-skipped{color:#6e7781}\n"
)

#: the widest screen a table is shown as cards on (a phone's); wider, it keeps its rows and
#: columns, scrolling sideways inside its box when it has more columns than the page has room
PHONE_WIDTH_PX = 720

#: a table is cards on a phone, rows and columns everywhere else
PAGE_STYLE = (
    BASE_STYLE + f"@media (max-width: {PHONE_WIDTH_PX}px) {{" + _cards("table.cards") + "}\n"
) + CHECK_STYLE
