"""Where a run's prompts, responses, labels and scores came from, as read back: the SIMULATED
banner, which names exactly which parts are simulated ("RMs: simulated; oracle: labels file
(AlpacaEval weighted_alpaca_eval_gpt4_turbo)"), shown by ``rmaudit runs RUN`` and the report."""

from __future__ import annotations

from rmaudit.components import PROVENANCE_PARTS, Provenance


def banner(provenance: list[Provenance]) -> str | None:
    """None when nothing simulated produced part of the result; else each part and what it
    came from, e.g. "RMs: simulated; oracle: labels file (AlpacaEval …)"."""
    if not any(p.simulated for p in provenance):
        return None
    parts = []
    for part in PROVENANCE_PARTS:
        mine = [p for p in provenance if p.part == part]
        if not mine:
            continue
        if part == "RMs" and len({p.simulated for p in mine}) > 1:
            parts += [f"RM {p.entry}: {p.describe()}" for p in mine]
            continue
        described = list(dict.fromkeys(p.describe() for p in mine))
        parts.append(f"{part}: {', '.join(described)}")
    return "; ".join(parts)
