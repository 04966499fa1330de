"""Each RM's worst prompts for the HTML report, with the texts to show (no UI toolkit).

A benchmark run: the prompts with the largest oracle gap (the oracle's best score minus the
score of the RM's favourite, :class:`rmaudit.results.browse.PromptFailure`), each with the
RM's favourite responses and the oracle's best, and how many more there are.  A run of
preference pairs: the pairs the RM gets wrong, widest margin first (a judge's: wrong in both
orders first), with both responses; for a pairwise judge, also its verdict and reply in each
order shown (docs/judges.md).  A run of process reward models: the solutions whose first
flagged step lies furthest from the first erroneous one, each step with its score and marks
(:mod:`rmaudit.results.solutions`).
"""

from __future__ import annotations

from dataclasses import dataclass

from rmaudit.display.formatting import format_number, one_line
from rmaudit.results.browse import prompt_detail, prompt_failures
from rmaudit.results.judge_pairs import judge_on_pair
from rmaudit.results.pair_failures import model_on_pairs
from rmaudit.results.solutions import solution_badge, solution_views, step_caption
from rmaudit.results.summary import RunSummary
from rmaudit.store import Store

#: how many prompts (or pairs) of each RM the report shows
WORST_SHOWN = 10
#: how many of a worst prompt's responses the report shows, the RM's favourites first (and
#: the oracle's best beside them)
RESPONSES_SHOWN = 3
#: the most of one text the report shows: a 100 KB response would bury the page
TEXT_MAX = 20_000
#: the most of a judge's reply the report shows (its reasoning; the verdict is its last mark)
REPLY_MAX = 4_000
#: the most of a prompt a worst item's one-line title shows
TITLE_MAX = 140


@dataclass(frozen=True)
class WorstItem:
    badge: str  # "gap 0.812" or "margin −1.20"
    title: str  # the prompt on one line, shortened
    prompt: str
    texts: list[tuple[str, str]]  # (caption, text) of each response shown


def clipped(text: str, limit: int = TEXT_MAX) -> str:
    """``text`` up to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def worst_items(store: Store, summary: RunSummary, rm_key: str) -> list[WorstItem]:
    if summary.solutions:
        return _worst_solutions(store, summary, rm_key)
    if summary.run.benchmark_id:
        return _worst_prompts(store, summary, rm_key)
    return _worst_pairs(store, summary, rm_key)


def _worst_prompts(store: Store, summary: RunSummary, rm_key: str) -> list[WorstItem]:
    failures = [f for f in prompt_failures(store, summary, rm_key) if f.gap > 0]
    failures.sort(key=lambda f: (-f.gap, f.position))
    items = []
    for failure in failures[:WORST_SHOWN]:
        detail = prompt_detail(store, summary.benchmark, failure.prompt_id, [rm_key])
        count = len(detail.responses)
        ranked = [r for r in detail.responses if rm_key in r.scores]
        ranked.sort(key=lambda r: (r.ranks[rm_key], r.sample_index))
        # the RM's favourites and the oracle's best: a page of every response of every worst
        # prompt weighed 10.7 MB on helpful.toml (256 responses a prompt)
        shown = ranked[:RESPONSES_SHOWN]
        shown += [r for r in ranked if r.oracle_rank == 1 and r not in shown][:1]
        texts = [
            (
                f"RM rank {r.ranks[rm_key]} of {count} (score {format_number(r.scores[rm_key], 3)})"
                f" · oracle {format_number(r.oracle, 3)}, rank {r.oracle_rank} of {count}",
                clipped(r.text),
            )
            for r in shown
        ]
        if len(ranked) > len(shown):
            texts.append(
                (
                    f"{len(ranked) - len(shown):,} more responses not shown",
                    "rmaudit tui DB shows every response of this prompt",
                )
            )
        items.append(
            WorstItem(
                f"gap {format_number(failure.gap, 3)}",
                one_line(failure.text, TITLE_MAX),
                clipped(failure.text),
                texts,
            )
        )
    return items


def _worst_pairs(store: Store, summary: RunSummary, rm_key: str) -> list[WorstItem]:
    wrong = [v for v in model_on_pairs(store, summary, rm_key) if not v.correct]
    wrong.sort(key=lambda v: v.worst_first)
    items = []
    for pair in wrong[:WORST_SHOWN]:
        where = " · ".join(part for part in (pair.subset, pair.styles) if part)
        judge = judge_on_pair(store, rm_key, pair.pair_id)
        if judge is None:
            captions = (
                f"chosen (RM score {format_number(pair.chosen_score, 3)})",
                f"rejected (RM score {format_number(pair.rejected_score, 3)})",
            )
            replies = []
        else:  # a pairwise judge's margin is its log-odds of P(chosen), not a score per answer
            captions = ("chosen", "rejected")
            replies = [
                (
                    f"judge, {said.order}: verdict {said.mark}",
                    clipped(said.reply or "(no reply text)", REPLY_MAX),
                )
                for said in judge.orders
            ]
        badge = f"margin {format_number(pair.margin, 3)}"
        if pair.credit is not None:  # a judge's: its credit over both orders comes first
            badge = f"credit {format_number(pair.credit, 2)} · {badge}"
        items.append(
            WorstItem(
                badge,
                one_line(f"{where}: {pair.prompt}" if where else pair.prompt, TITLE_MAX),
                clipped(pair.prompt),
                [
                    (captions[0], clipped(pair.chosen)),
                    (captions[1], clipped(pair.rejected)),
                    *replies,
                ],
            )
        )
    return items


def _worst_solutions(store: Store, summary: RunSummary, rm_key: str) -> list[WorstItem]:
    views = [v for v in solution_views(store, summary.run.id, rm_key) if v.miss > 0]
    return [
        WorstItem(
            solution_badge(view),
            one_line(f"{view.subset} {view.ref}: {view.question}", TITLE_MAX),
            clipped(view.question),
            [(step_caption(view, i), clipped(step.text)) for i, step in enumerate(view.steps)],
        )
        for view in views[:WORST_SHOWN]
    ]
