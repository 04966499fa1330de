"""The search line of the failures and prompt screens: hidden until ``/``."""

from __future__ import annotations

from textual.widgets import Input


class SearchBox(Input):
    """An Input that is hidden and disabled while closed, so focus can never land on it unseen
    (e.g. when the table it filters shows its loading indicator and gives up the focus)."""

    def __init__(self, placeholder: str, *, id: str) -> None:
        super().__init__(placeholder=placeholder, id=id, classes="search")
        self.display = False
        self.disabled = True

    @property
    def is_open(self) -> bool:
        return self.display

    def open(self) -> None:
        self.display = True
        self.disabled = False
        self.focus()

    def close(self) -> None:
        self.value = ""
        self.display = False
        self.disabled = True
