"""``rmaudit compare``'s parity section: a served reward model against its checkpoint, read
back from stored runs on the same pairs (docs/real-models.md, "Served reward models"; the
figures: :mod:`rmaudit.metrics.parity`).

Which models are compared: those ``--parity SERVED=CHECKPOINT`` names, by label, and without
it every served RM whose ``tokenizer`` is the ``model`` of a Hugging Face classifier of the
compared runs (an audit of ``http://… --rm-tokenizer CKPT`` beside ``CKPT``).  Scores are read by
response, so the two may come from two runs (two audits of one suite).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rmaudit.backends.served.protocols import PROTOCOLS
from rmaudit.errors import BadInput
from rmaudit.metrics.parity import Parity, parity
from rmaudit.store import Store
from rmaudit.store.pair_records import StoredPair

#: the Hugging Face reward model a served one is matched with by its tokenizer
CHECKPOINT_RM = "hf-classifier"
#: the parity section's default tolerance on |score difference|
DEFAULT_TOLERANCE = 1e-3


@dataclass(frozen=True)
class FlippedPair:
    """A pair the two prefer differently: its texts and each one's logit."""

    prompt: str
    chosen: str
    rejected: str
    served_logit: float
    checkpoint_logit: float


@dataclass(frozen=True)
class ParitySection:
    """One served model against one checkpoint (labels); ``parity`` None where they share no
    scored pair, ``note`` saying why."""

    served: str
    checkpoint: str
    parity: Parity | None
    worst: tuple[FlippedPair, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class _Model:
    label: str
    rm_key: str
    name: str
    options: dict


def _models(store: Store, run_ids: Sequence[str]) -> list[_Model]:
    """The compared runs' reward models, each with its component's name and options."""
    known = {
        row.key: (name, row.options)
        for name in (*PROTOCOLS, CHECKPOINT_RM)
        for row in store.items.components_named("reward_model", name)
    }
    found: dict[str, _Model] = {}
    for run_id in run_ids:
        for rm in store.read.reward_models(run_id):
            name, options = known.get(rm.rm_key, ("", {}))
            found.setdefault(rm.label, _Model(rm.label, rm.rm_key, name, options))
    return list(found.values())


def matched(
    models: Sequence[_Model], asked: Sequence[tuple[str, str]]
) -> list[tuple[_Model, _Model]]:
    """The (served, checkpoint) models compared: those asked for by label, else each served
    model whose tokenizer is a classifier's model."""
    by_label = {m.label: m for m in models}
    if asked:
        for label in (label for pair in asked for label in pair):
            if label not in by_label:
                raise BadInput(
                    f"no compared model of that label (known: {', '.join(sorted(by_label))})",
                    field="--parity",
                    value=label,
                )
        return [(by_label[a], by_label[b]) for a, b in asked]
    return [
        (served, checkpoint)
        for served in models
        if served.name in PROTOCOLS and served.options.get("tokenizer")
        for checkpoint in models
        if checkpoint.name == CHECKPOINT_RM
        and checkpoint.options.get("model") == served.options["tokenizer"]
    ]


def parity_sections(
    store: Store,
    run_ids: Sequence[str],
    pair_set_key: str | None,
    asked: Sequence[tuple[str, str]] = (),
    tolerance: float = DEFAULT_TOLERANCE,
) -> list[ParitySection]:
    """The parity of each matched (served, checkpoint) on the runs' pairs."""
    sections = []
    for served, checkpoint in matched(_models(store, run_ids), asked):
        if pair_set_key is None:
            sections.append(ParitySection(served.label, checkpoint.label, None, note="no pairs"))
            continue
        sections.append(_section(store, pair_set_key, served, checkpoint, tolerance))
    return sections


def _section(
    store: Store, pair_set_key: str, served: _Model, checkpoint: _Model, tolerance: float
) -> ParitySection:
    read = store.read.set_pairs
    first = {p.pair_id: p for p in read(pair_set_key, served.rm_key, texts=True)}
    second = {p.pair_id: p for p in read(pair_set_key, checkpoint.rm_key, texts=True)}
    shared = [pid for pid in first if pid in second]
    if not shared:
        return ParitySection(served.label, checkpoint.label, None, note="no pair scored by both")
    pairs = [first[pid] for pid in shared]
    scores = _response_scores(pairs)
    other = _response_scores([second[pid] for pid in shared])
    responses = sorted(scores)
    logits = np.array([p.chosen_score - p.rejected_score for p in pairs])
    other_logits = np.array(
        [second[pid].chosen_score - second[pid].rejected_score for pid in shared]
    )
    found = parity(
        np.array([scores[r] for r in responses]),
        np.array([other[r] for r in responses]),
        logits,
        other_logits,
        tolerance=tolerance,
    )
    worst = tuple(
        FlippedPair(
            pairs[i].prompt,
            pairs[i].chosen,
            pairs[i].rejected,
            float(logits[i]),
            float(other_logits[i]),
        )
        for i in found.worst()
    )
    left = len(first) + len(second) - 2 * len(shared)
    note = f"{left} pairs scored by one of the two left out" if left else ""
    return ParitySection(served.label, checkpoint.label, found, worst, note)


def _response_scores(pairs: Sequence[StoredPair]) -> dict[str, float]:
    """Each response's score, by id, from the pairs that hold it."""
    found: dict[str, float] = {}
    for p in pairs:
        found[p.chosen_id], found[p.rejected_id] = p.chosen_score, p.rejected_score
    return found


def parity_lines(section: ParitySection) -> list[tuple[str, str]]:
    """The section's figures as (what, value) lines, as every view prints them."""
    found = section.parity
    if found is None:
        return [("not compared", section.note)]
    accuracy = found.accuracy
    rho = (
        "undefined (a constant scoring)"
        if found.rank_correlation is None
        else (f"{found.rank_correlation:.4f}")
    )
    share = f"{found.within_tolerance:.1%}"
    return [
        ("responses scored by both", f"{found.responses:,}"),
        ("largest |score difference|", f"{found.largest_difference:.3g}"),
        (f"within {found.tolerance:g}", f"{share} of responses"),
        ("rank correlation (Spearman)", rho),
        (
            "pair flips (preferred response differs)",
            f"{len(found.flips):,} of {found.pairs:,} pairs ({len(found.flips) / found.pairs:.1%})",
        ),
        (
            "accuracy, served - checkpoint",
            f"{accuracy.value:+.4f} [{accuracy.low:+.4f}, {accuracy.high:+.4f}] "
            f"({accuracy.ci:.0%}, Tango; {accuracy.gained} gained, {accuracy.lost} lost)",
        ),
    ]


def parity_json(section: ParitySection) -> dict:
    """The section as ``rmaudit compare --json`` writes it."""
    found = section.parity
    body: dict = {"served": section.served, "checkpoint": section.checkpoint, "note": section.note}
    if found is None:
        return body
    a = found.accuracy
    return {
        **body,
        "responses": found.responses,
        "largest_difference": found.largest_difference,
        "tolerance": found.tolerance,
        "within_tolerance": found.within_tolerance,
        "rank_correlation": found.rank_correlation,
        "pairs": found.pairs,
        "flips": len(found.flips),
        "accuracy_difference": {
            "value": a.value,
            "ci_low": a.low,
            "ci_high": a.high,
            "ci": a.ci,
            "interval": "Tango's score interval for paired proportions",
            "gained": a.gained,
            "lost": a.lost,
        },
        "worst_flips": [vars(flip) for flip in section.worst],
    }
