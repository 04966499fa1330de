"""Model inputs for one batch as numpy arrays, built off the model's thread (no torch here).

Padded batches are padded on the **right** with an attention mask.  A causal model's real
tokens never attend to padding on their right and keep their positions 0..L-1, and an
encoder masks the padding out, so each row's outputs match those of the sequence run alone
(to float rounding).

Packed batches put the rows end to end in one row, without padding, with ``position_ids``
restarting at 0 for each row and no attention mask: transformers (>= 4.54) reads a restart
of the positions as a sequence boundary and keeps each sequence's attention within itself
(a block-diagonal causal mask; flash-attention's varlen kernels skip the rest).  The pack
is filled up to its rounded length with filler segments of at most ``pad_multiple`` tokens,
each its own sequence, so they touch no real row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from rmaudit.backends.hf.batching import round_up


@dataclass
class ModelInput:
    """One model input: token ids, optional token types (text pairs), and the positions
    the caller reads outputs at (``pool_at``: a classifier's pooled token; ``start``: the
    first position whose token a causal LM's log-probability is taken of; ``read_at``: the
    positions whose per-token outputs a process reward model reads, one per step)."""

    ids: list[int]
    token_types: list[int] | None = None
    pool_at: int = -1
    start: int = 0
    read_at: tuple[int, ...] = ()

    def __len__(self) -> int:
        return len(self.ids)


@dataclass
class Batch:
    """Arrays for one forward pass, and where each row of the caller lies in them."""

    arrays: dict[str, np.ndarray]
    #: per row: offset of its first token in the flattened (rows × width) or packed tokens
    offsets: list[int]
    lengths: list[int]
    packed: bool
    pad_id: int = 0
    #: flattened positions whose outputs the caller reads, row after row, and how many per row
    read_index: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    counts: list[int] = field(default_factory=list)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.arrays["input_ids"].shape


def padded(rows: Sequence[ModelInput], *, pad_id: int, pad_multiple: int = 1) -> Batch:
    """Right-padded arrays with the attention mask, widths rounded up to ``pad_multiple``."""
    width = round_up(max(len(row) for row in rows), pad_multiple)
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    types = (
        np.zeros((len(rows), width), dtype=np.int64) if rows[0].token_types is not None else None
    )
    for i, row in enumerate(rows):
        ids[i, : len(row)] = row.ids
        mask[i, : len(row)] = 1
        if types is not None and row.token_types is not None:
            types[i, : len(row)] = row.token_types
    arrays = {"input_ids": ids, "attention_mask": mask}
    if types is not None:
        arrays["token_type_ids"] = types
    return Batch(
        arrays, [i * width for i in range(len(rows))], [len(r) for r in rows], False, pad_id
    )


def packed(rows: Sequence[ModelInput], *, filler_id: int, pad_multiple: int = 1) -> Batch:
    """One row holding every row end to end, with per-row positions (see the module doc)."""
    lengths = [len(row) for row in rows]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(int)
    total = round_up(int(offsets[-1]), pad_multiple)
    ids = np.full((1, total), filler_id, dtype=np.int64)
    positions = np.empty((1, total), dtype=np.int64)
    for row, start, length in zip(rows, offsets[:-1], lengths, strict=True):
        ids[0, start : start + length] = row.ids
        positions[0, start : start + length] = np.arange(length)
    tail = total - int(offsets[-1])
    positions[0, int(offsets[-1]) :] = np.arange(tail) % max(pad_multiple, 1)
    return Batch(
        {"input_ids": ids, "position_ids": positions},
        [int(o) for o in offsets[:-1]],
        lengths,
        True,
        filler_id,
    )
