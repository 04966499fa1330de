"""``verdicts-file``: a pairwise judge's verdicts recorded elsewhere, imported (``rmaudit audit
verdicts:FILE``; docs/judges.md).  One row per pair as shown: the prompt, the answer shown
first (A) and second (B) — by their texts, the natural keys of a suite's public data — the
verdict (A, B, C or tie) and optionally P(A preferred).  A pair shown twice in the file, a
row that matches no showing of the run and a showing the file lacks are bad input, found in
the plan before anything is stored."""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import Field

from rmaudit import hookimpl
from rmaudit.benchmark.tabular import read_rows
from rmaudit.components import ComponentOptions, PairShown, PairVerdict, RewardModel
from rmaudit.components.options import HashedDataFile
from rmaudit.errors import BadInput

_VERDICTS = {"A": "first", "B": "second", "C": "tie", "TIE": "tie"}
_CREDIT = {"first": 1.0, "second": 0.0, "tie": 0.5}

#: (prompt, answer shown first, answer shown second)
Showing = tuple[str, str, str]


class VerdictsFileOptions(ComponentOptions):
    path: HashedDataFile = Field(description="JSON Lines or CSV (optionally .gz)")
    prompt_field: str = "prompt"
    first_field: str = Field("answer_a", description="the answer shown first")
    second_field: str = Field("answer_b", description="the answer shown second")
    verdict_field: str = Field("verdict", description="A, B, C (tie) or tie; [[A]] also reads")
    p_field: str | None = Field(
        None, description="optional column: P(A preferred), a tie counting ½"
    )


class VerdictsFile(RewardModel):
    """A pairwise judge's verdicts recorded elsewhere (one row per pair as shown)."""

    name = "verdicts-file"
    Options = VerdictsFileOptions
    options: VerdictsFileOptions

    def __init__(self, options: VerdictsFileOptions | None = None) -> None:
        super().__init__(options)
        self.rows: dict[Showing, PairVerdict] = {}
        self.where: dict[Showing, str] = {}
        o = self.options
        for where, row in read_rows(o.path):
            key: Showing = (
                self._text(row, o.prompt_field, where),
                self._text(row, o.first_field, where),
                self._text(row, o.second_field, where),
            )
            if key in self.rows:
                raise BadInput(f"the pair shown here is also on {self.where[key]}", file=where)
            self.rows[key] = self._verdict(row, where)
            self.where[key] = where
        if not self.rows:
            raise BadInput("the verdicts file has no rows", file=str(o.path))

    def _text(self, row: dict, field: str, where: str) -> str:
        if field not in row:
            found = ", ".join(map(str, row)) or "none"
            raise BadInput(f"no column {field!r} (columns found: {found})", file=where, field=field)
        value = row[field]
        if not isinstance(value, str):
            raise BadInput("expected a text", file=where, field=field, value=value)
        # a prompt is keyed stripped, as the run shows it to a judge
        return value.strip() if field == self.options.prompt_field else value

    def _verdict(self, row: dict, where: str) -> PairVerdict:
        o = self.options
        raw = str(row.get(o.verdict_field, "")).strip().strip("[]").strip().upper()
        verdict = _VERDICTS.get(raw)
        if verdict is None:
            raise BadInput(
                "expected a verdict A, B, C or tie",
                file=where,
                field=o.verdict_field,
                value=row.get(o.verdict_field),
            )
        p_first = _CREDIT[verdict]
        if o.p_field is not None and row.get(o.p_field) not in (None, ""):
            try:
                p_first = float(row[o.p_field])
            except (TypeError, ValueError):
                p_first = math.nan
            if not 0.0 <= p_first <= 1.0:
                raise BadInput(
                    "expected a probability in [0, 1]",
                    file=where,
                    field=o.p_field,
                    value=row[o.p_field],
                )
        return PairVerdict(
            verdict,  # type: ignore[arg-type]
            p_first,
            f"[[{raw}]]",
            from_logprobs=o.p_field is not None,
        )

    def judges_pairs(self) -> bool:
        return True

    def check_pairs(self, shown: Sequence[PairShown]) -> None:
        """Every showing of the run has a row, and every row is a showing of the run."""
        wanted = {showing_key(s) for s in shown}
        if shown and not wanted & self.rows.keys():
            raise BadInput(
                f"none of the file's {len(self.rows):,} rows is a pair of this suite: verdicts "
                "on another suite's pairs?",
                file=str(self.options.path),
            )
        missing = next((s for s in shown if showing_key(s) not in self.rows), None)
        if missing is not None:
            raise BadInput(
                f"no row for the pair shown with prompt {shortened(missing.prompt.text)}, "
                f"A {shortened(missing.first.text)}, B {shortened(missing.second.text)} "
                "(each pair is shown in both orders: a row for each)",
                file=str(self.options.path),
            )
        extra = next((key for key in self.rows if key not in wanted), None)
        if extra is not None:
            raise BadInput(
                f"a row for a pair this suite does not have (prompt {shortened(extra[0])})",
                file=self.where[extra],
            )

    def judge_pairs(self, batch: Sequence[PairShown]) -> list[PairVerdict]:
        missing = [s for s in batch if showing_key(s) not in self.rows]
        if missing:  # a shifted copy, which the plan could not check
            raise BadInput(
                f"no row for the pair shown with prompt {shortened(missing[0].prompt.text)}",
                file=str(self.options.path),
            )
        return [self.rows[showing_key(s)] for s in batch]


def showing_key(shown: PairShown) -> Showing:
    """A showing by its texts, the prompt stripped as the run shows it to a judge."""
    return shown.prompt.text.strip(), shown.first.text, shown.second.text


def shortened(text: str, limit: int = 60) -> str:
    """A text cut for a one-line message, quoted."""
    return repr(text if len(text) <= limit else text[:limit] + "…")


@hookimpl
def register_reward_models(register):
    register(VerdictsFile)
