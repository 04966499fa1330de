"""A prompt's response ids made together are the ids made one by one (the stored keys)."""

from __future__ import annotations

import pytest

from rmaudit.components.keys import response_id, response_ids


@pytest.mark.parametrize(
    ("policy_key", "prompt"),
    [("a1b2c3", "d4e5f6"), ('quo"te\\', "ünïcödé ✓"), ("", ""), ("k", "line\nbreak\t")],
)
def test_response_ids_equal_response_id_per_sample(policy_key, prompt):
    together = response_ids(policy_key, prompt, 300)
    assert together == [response_id(policy_key, prompt, i) for i in range(300)]
    assert len(set(together)) == 300
    assert response_ids(policy_key, prompt, 0) == []
