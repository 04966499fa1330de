"""``rmaudit tui``: a Textual browser over a read-only rmaudit DB (needs the ``tui`` extra)."""
