"""Length-bucketed dynamic batching: a pure function of the lengths, no torch needed."""

from __future__ import annotations

from collections.abc import Sequence


def length_buckets(lengths: Sequence[int], *, batch_size: int,
                   max_batch_tokens: int | None = None) -> list[list[int]]:
    """Group item indices into batches of similar length.

    Items are sorted longest first (ties by index, so the grouping is deterministic) and cut
    into batches of at most ``batch_size`` items whose padded size — rows × the longest row —
    stays within ``max_batch_tokens`` (a single longer item still gets a batch of its own).
    Sorting makes rows of a batch nearly the same length, so little compute goes to padding;
    longest first makes an out-of-memory batch fail at once rather than at the end.
    """
    if batch_size < 1:
        raise ValueError(f"expected batch_size >= 1, got {batch_size}")
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches: list[list[int]] = []
    for index in order:
        current = batches[-1] if batches else None
        # rows arrive longest first, so a batch's first row sets its padded width
        fits = (current is not None and len(current) < batch_size
                and (max_batch_tokens is None
                     or lengths[current[0]] * (len(current) + 1) <= max_batch_tokens))
        if fits:
            current.append(index)
        else:
            batches.append([index])
    return batches
