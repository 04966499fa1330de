"""Cutting inputs into batches (rmaudit.backends.hf.batching) and building their arrays
(rmaudit.backends.hf.inputs): plain Python and numpy, checked against brute-force recounts."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rmaudit.backends.hf.batching import batch_tokens, length_buckets, round_up, stream_buckets
from rmaudit.backends.hf.inputs import ModelInput, packed, padded

lengths_st = st.lists(st.integers(1, 300), min_size=0, max_size=60)
limits_st = st.fixed_dictionaries(
    {
        "batch_size": st.one_of(st.none(), st.integers(1, 16)),
        "max_batch_tokens": st.one_of(st.none(), st.integers(1, 2000)),
        "pad_multiple": st.sampled_from([1, 8, 64]),
        "packed": st.booleans(),
    }
)


def computed_tokens(lengths, batch, limits) -> int:
    """Tokens the batch computes, recounted from scratch."""
    rows = [lengths[i] for i in batch]
    multiple = limits["pad_multiple"]
    if limits["packed"]:
        return -(-sum(rows) // multiple) * multiple
    return len(rows) * (-(-max(rows) // multiple) * multiple)


def check_batches(lengths, batches, limits) -> None:
    flat = [i for batch in batches for i in batch]
    assert sorted(flat) == list(range(len(lengths)))  # every item exactly once
    for batch in batches:
        assert batch
        if limits["batch_size"] is not None:
            assert len(batch) <= limits["batch_size"]
        if limits["max_batch_tokens"] is not None and len(batch) > 1:
            assert computed_tokens(lengths, batch, limits) <= limits["max_batch_tokens"]


@settings(max_examples=300, deadline=None)
@given(lengths_st, limits_st)
def test_batches_keep_every_item_once_within_rows_and_budget(lengths, limits):
    batches = length_buckets(lengths, **limits)
    check_batches(lengths, batches, limits)
    for batch in batches:  # longest first within a batch: its first row sets the width
        assert [lengths[i] for i in batch] == sorted((lengths[i] for i in batch), reverse=True)
        assert batch_tokens(
            [lengths[i] for i in batch],
            pad_multiple=limits["pad_multiple"],
            packed=limits["packed"],
        ) == computed_tokens(lengths, batch, limits)


@settings(max_examples=300, deadline=None)
@given(lengths_st, limits_st, st.integers(1, 20))
def test_streamed_groups_keep_every_item_once_within_rows_and_budget(lengths, limits, group):
    groups = [
        [(i, lengths[i]) for i in range(start, min(start + group, len(lengths)))]
        for start in range(0, len(lengths), group)
    ]
    check_batches(lengths, list(stream_buckets(groups, **limits)), limits)


def test_a_single_item_over_the_budget_gets_a_batch_of_its_own():
    assert length_buckets([500, 10, 10], batch_size=None, max_batch_tokens=100) == [[0], [1, 2]]


def test_rounding_trades_padding_for_fewer_shapes():
    lengths = list(range(1, 129))
    exact = length_buckets(lengths, batch_size=4)
    rounded = length_buckets(lengths, batch_size=4, pad_multiple=64)
    assert len({max(lengths[i] for i in b) for b in exact}) == 32
    assert {round_up(max(lengths[i] for i in b), 64) for b in rounded} == {64, 128}


def test_padded_arrays_mask_the_padding():
    rows = [ModelInput([5, 6, 7], [0, 1, 1], pool_at=2), ModelInput([8], [0])]
    batch = padded(rows, pad_id=0, pad_multiple=4)
    assert batch.shape == (2, 4)
    np.testing.assert_array_equal(batch.arrays["input_ids"], [[5, 6, 7, 0], [8, 0, 0, 0]])
    np.testing.assert_array_equal(batch.arrays["attention_mask"], [[1, 1, 1, 0], [1, 0, 0, 0]])
    np.testing.assert_array_equal(batch.arrays["token_type_ids"][0], [0, 1, 1, 0])
    assert batch.offsets == [0, 4] and batch.lengths == [3, 1]


def test_packed_arrays_restart_positions_per_row_and_fill_with_separate_segments():
    batch = packed([ModelInput([5, 6, 7]), ModelInput([8, 9])], filler_id=1, pad_multiple=4)
    np.testing.assert_array_equal(batch.arrays["input_ids"], [[5, 6, 7, 8, 9, 1, 1, 1]])
    np.testing.assert_array_equal(batch.arrays["position_ids"], [[0, 1, 2, 0, 1, 0, 1, 2]])
    assert batch.offsets == [0, 3] and "attention_mask" not in batch.arrays
    # filler longer than the multiple is cut into segments that restart at 0
    tail = packed([ModelInput([5])], filler_id=1, pad_multiple=2).arrays["position_ids"]
    np.testing.assert_array_equal(tail, [[0, 0]])
    long_tail = packed([ModelInput([5] * 3)], filler_id=1, pad_multiple=8).arrays["position_ids"]
    np.testing.assert_array_equal(long_tail, [[0, 1, 2, 0, 1, 2, 3, 4]])
