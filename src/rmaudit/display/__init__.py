"""How text and numbers are shown, shared by every front end: :mod:`.formatting` (plain
strings, no UI toolkit: numbers, labels, sparklines, and ``visible`` for text from data) and
:mod:`.literal` (Rich ``Text`` that is never parsed as markup, for the CLI and the TUI)."""
