"""Cutting model inputs into batches by rows and tokens: pure functions of the lengths, no torch.

A batch costs the tokens the model computes: rows × the padded width for a padded batch
(every row padded to its longest row, rounded up to a multiple), or the packed length —
the rows' lengths summed, rounded up — for a padding-free pack.  Rounding widths up keeps
the number of distinct shapes small (a few dozen per run rather than one per length),
each of which costs a kernel selection or a compilation on first use.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence


def round_up(length: int, multiple: int) -> int:
    return -(-length // multiple) * multiple


def batch_tokens(lengths: Sequence[int], *, pad_multiple: int = 1, packed: bool = False) -> int:
    """Tokens a batch of rows of these lengths computes."""
    if packed:
        return round_up(sum(lengths), pad_multiple)
    return len(lengths) * round_up(max(lengths), pad_multiple)


def length_buckets(
    lengths: Sequence[int],
    *,
    batch_size: int | None,
    max_batch_tokens: int | None = None,
    pad_multiple: int = 1,
    packed: bool = False,
) -> list[list[int]]:
    """Group item indices into batches of similar length.

    Items are sorted longest first (ties by index, so the grouping is deterministic) and cut
    into batches of at most ``batch_size`` rows (None: no limit) that compute at most
    ``max_batch_tokens`` tokens (:func:`batch_tokens`); a single longer item still gets a
    batch of its own.  Sorting makes rows of a batch nearly the same length, so little compute goes
    to padding; longest first makes an out-of-memory batch fail at once rather than at the end.
    """
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"expected batch_size >= 1, got {batch_size}")
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches: list[list[int]] = []
    total = 0  # the current batch's summed length (packed)
    for index in order:
        current = batches[-1] if batches else None
        length = lengths[index]
        fits = current is not None and (batch_size is None or len(current) < batch_size)
        if current is not None and fits and max_batch_tokens is not None:
            # rows arrive longest first, so a batch's first row sets its padded width
            cost = (
                round_up(total + length, pad_multiple)
                if packed
                else (len(current) + 1) * round_up(lengths[current[0]], pad_multiple)
            )
            fits = cost <= max_batch_tokens
        if current is not None and fits:
            current.append(index)
            total += length
        else:
            batches.append([index])
            total = length
    return batches


def stream_buckets(groups: Iterable[Sequence[tuple[int, int]]], **limits) -> Iterator[list[int]]:
    """:func:`length_buckets` over items that arrive in groups of (key, length), as a
    tokenizer working ahead of the model delivers them: each group's batches are cut as soon
    as it arrives, except the last, unfilled one, whose rows wait for the next group's.
    Every key is yielded once; groups arriving longest first keep batches near-sorted."""
    pool: list[tuple[int, int]] = []
    for group in groups:
        pool.extend(group)
        *ready, last = length_buckets([length for _, length in pool], **limits)
        for batch in ready:
            yield [pool[i][0] for i in batch]
        pool = [pool[i] for i in last]
    if pool:
        for batch in length_buckets([length for _, length in pool], **limits):
            yield [pool[i][0] for i in batch]
