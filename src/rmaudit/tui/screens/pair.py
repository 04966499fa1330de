"""One preference pair: its prompt, the chosen and the rejected response side by side, the RM's
scores and margin, and every other RM's verdict on the same pair.

Opened from a shift flip, it shows the pair as shifted at the first level where the verdict
flips; ``+`` and ``-`` step through the shift levels (p = 0 is the unshifted pair).
"""

from __future__ import annotations

import math

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Footer, Header, Static

from rmaudit.display.literal import assemble, literal
from rmaudit.results.judge_pairs import JudgeOnPair, judge_on_pair
from rmaudit.results.pair_failures import RIGHT, WRONG, ModelOnPair, ShiftFlip

from ._base import AuditScreen

#: the most other models the pair screen names one by one (more: counted, and this many of
#: the fewer side, right or wrong, named)
NAMED_OTHERS = 6


def margin_mark(margin: float) -> Text:
    if math.isnan(margin):
        return Text("not scored", style="dim")
    return Text(
        f"{margin:+.3f} {RIGHT if margin > 0 else WRONG}", style="green" if margin > 0 else "red"
    )


def credit_text(credit: float) -> str:
    """A judge's credit over both orders: "0", "¼", "½", "¾", "1"; "—": no verdict."""
    if math.isnan(credit):
        return "—"
    return {0.25: "¼", 0.5: "½", 0.75: "¾"}.get(credit, f"{credit:g}")


def credit_mark(credit: float) -> Text:
    """A judge's credit over both orders in words: "right in both orders ✓", "credit ½ ✗"."""
    if math.isnan(credit):
        return Text("no verdict in either order", style="dim")
    words = {1.0: "right in both orders", 0.0: "wrong in both orders"}
    shown = words.get(credit, f"credit {credit_text(credit)}")
    right = credit > 0.5
    return Text(f"{shown} {RIGHT if right else WRONG}", style="green" if right else "red")


class PairScreen(AuditScreen):
    BINDINGS = [
        Binding("plus", "level(1)", "Shift level +", key_display="+"),
        Binding("minus", "level(-1)", "Shift level −", key_display="-"),
        Binding("tab", "switch_focus", "Chosen/rejected"),
        Binding("escape", "back", "Back"),
    ]

    DEFAULT_CSS = """
    PairScreen #pair-prompt { height: auto; max-height: 5; padding: 0 1;
                              border-bottom: solid $primary; }
    PairScreen #pair-info { height: auto; max-height: 8; }
    PairScreen #pair-responses { height: 1fr; }
    PairScreen .response { width: 1fr; height: 1fr; padding: 0 1; border: round $primary; }
    PairScreen .response:focus { border: double $accent; }
    """

    def __init__(self, run_id: str, rm_key: str, pair: ModelOnPair, flip: ShiftFlip | None = None):
        super().__init__()
        self.run_id, self.rm_key, self.pair, self.flip = run_id, rm_key, pair, flip
        #: the shift level shown (an index into flip.levels); 0 without a flip
        self.level = (flip.first_flip or 0) if flip is not None else 0
        #: rm_key → a pairwise judge's margin and verdicts on the pair shown
        self.judged: dict[str, JudgeOnPair] = {}

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        return self.flip is not None if action == "level" else True

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="pair-prompt"):
            yield Static("", id="pair-prompt-text")
        yield Static("", id="pair-info", classes="title")
        with Horizontal(id="pair-responses"):
            with VerticalScroll(id="chosen", classes="response"):
                yield Static("", id="chosen-text")
            with VerticalScroll(id="rejected", classes="response"):
                yield Static("", id="rejected-text")
        yield Footer()

    def on_mount(self) -> None:
        self.show()
        self.query_one("#chosen").focus()

    def shown_pair_id(self) -> str | None:
        return self.flip.pair_ids[self.level] if self.flip is not None else self.pair.pair_id

    def show(self) -> None:
        """The texts and scores of the pair at the current shift level."""
        summary = self.app.summary(self.run_id)
        pair_id = self.shown_pair_id()
        stored = self.app.store.read.pair_texts(pair_id) if pair_id else None
        shown = stored or self.pair  # a level the RM scored no shifted copy at: the pair, unscored
        prompt, chosen, rejected = shown.prompt, shown.chosen, shown.rejected
        chosen_id, rejected_id = (stored.chosen_id, stored.rejected_id) if stored else ("", "")
        margins = {}
        for _, rm_key in summary.reward_models:
            ids = [i for i in (chosen_id, rejected_id) if i]
            scores = self.app.store.read.scores_of(rm_key, ids)
            margins[rm_key] = (
                (scores[chosen_id], scores[rejected_id])
                if chosen_id in scores and rejected_id in scores
                else (math.nan, math.nan)
            )
        judged = {}  # a pairwise judge's margin and its verdicts in both orders
        for _, rm_key in summary.reward_models:
            found = judge_on_pair(self.app.store, rm_key, pair_id) if pair_id else None
            if found is not None:
                judged[rm_key], margins[rm_key] = found, (found.margin, 0.0)
        self.judged = judged
        mine = margins[self.rm_key]
        self.query_one("#pair-prompt-text", Static).update(literal(prompt))
        self.query_one("#pair-info", Static).update(self._info(margins))
        titles = (("chosen", mine[0]), ("rejected", mine[1]))
        for (name, score), text in zip(titles, (chosen, rejected), strict=True):
            box = self.query_one(f"#{name}")
            # a judge has no score of a response: its verdicts are in the info above
            scored = not math.isnan(score) and self.rm_key not in judged
            box.border_title = literal(
                f"{name} · {self.app.rm_label(self.run_id, self.rm_key)} {score:.3f}"
                if scored
                else name
            )
            self.query_one(f"#{name}-text", Static).update(literal(text))

    def _mark(self, rm_key: str, margins: dict[str, tuple[float, float]]) -> Text:
        """A judge's credit in words, an RM's margin."""
        judge = self.judged.get(rm_key)
        if judge is not None:
            return credit_mark(judge.credit)
        chosen, rejected = margins[rm_key]
        return margin_mark(chosen - rejected)

    def _info(self, margins: dict[str, tuple[float, float]]) -> Text:
        label = self.app.rm_label(self.run_id, self.rm_key)
        mine = self.judged.get(self.rm_key)
        parts: list = [
            ("verdicts of " if mine is not None else "margin of ", "bold"),
            (label, "bold"),
            ": ",
            self._mark(self.rm_key, margins),
        ]
        if self.flip is not None:
            level = self.flip.levels[self.level]
            parts += [
                f" · {self.flip.target} shifted at p = {level:g}" if level else " · unshifted",
                f" (verdicts by p: {self.flip.marks}; + and - step p)",
            ]
        parts.append(f" · subset {self.pair.subset or '—'}")
        if self.pair.styles:
            parts.append(" · styles chosen/rejected: " + self.pair.styles)
        parts += ["\n", *self._others(margins)]  # before the replies, which may run long
        for said in mine.orders if mine is not None else ():
            parts += [f"\n{said.order}: [[{said.mark}]] · reply: ", said.reply[:300]]
        return assemble(*parts)

    def _others(self, margins: dict[str, tuple[float, float]]) -> list:
        """Every other model on the pair: each with its mark while they are few, else how
        many are right and wrong, the right ones named."""
        others = [k for k in margins if k != self.rm_key]
        if len(others) <= NAMED_OTHERS:
            parts: list = ["other models: "]
            for index, rm_key in enumerate(others):
                label = self.app.rm_label(self.run_id, rm_key)
                parts += [" · " if index else "", label, " ", self._mark(rm_key, margins)]
            return parts
        marks = {k: self._mark(k, margins).plain for k in others}
        right = [k for k, mark in marks.items() if mark.endswith(RIGHT)]
        wrong = [k for k, mark in marks.items() if mark.endswith(WRONG)]
        unscored = len(others) - len(right) - len(wrong)
        fewer, word = (right, "right") if len(right) <= len(wrong) else (wrong, "wrong")
        named = [self.app.rm_label(self.run_id, k) for k in fewer[:NAMED_OTHERS]]
        more = f" (+{len(fewer) - len(named)} more)" if len(fewer) > len(named) else ""
        return [
            f"other models ({len(others)}): ",
            (f"{len(right)} right {RIGHT}", "green"),
            " · ",
            (f"{len(wrong)} wrong {WRONG}", "red"),
            f" · {unscored} not scored" if unscored else "",
            f" — {word}: {', '.join(named)}{more}" if named else "",
        ]

    def action_level(self, step: int) -> None:
        if self.flip is not None:
            self.level = min(max(self.level + step, 0), len(self.flip.levels) - 1)
            self.show()

    def action_switch_focus(self) -> None:
        chosen = self.query_one("#chosen")
        (self.query_one("#rejected") if chosen.has_focus else chosen).focus()

    def action_back(self) -> None:
        self.app.pop_screen()
