"""Label designs (rmaudit.metrics.budget.design): inclusion probabilities that sum to the budget,
stay above a floor and grow with it; draws that are reproducible and nested (a top-up keeps every
earlier label)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rmaudit.errors import MetricInputError
from rmaudit.metrics.budget import (
    guide_importance,
    pair_inclusion,
    rm_guided_inclusion,
    select,
    uniform_inclusion,
)
from rmaudit.metrics.budget.design import FLOOR_SHARE


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 300), st.floats(0.02, 1.0), st.integers(0, 10_000))
def test_rm_guided_probabilities_sum_to_the_budget_above_the_floor(n, fraction, seed):
    rng = np.random.default_rng(seed)
    importance = rng.dirichlet(np.full(n, 0.3))
    m = max(2.0, fraction * n)
    pi = rm_guided_inclusion(importance, m)
    assert pi.sum() == pytest.approx(m, rel=1e-9)
    assert np.all(pi <= 1) and np.all(pi >= min(1.0, FLOOR_SHARE * m / n) - 1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(8, 200), st.integers(0, 10_000))
def test_raising_the_budget_never_lowers_a_probability_and_labels_a_superset(n, seed):
    rng = np.random.default_rng(seed)
    importance, u = rng.dirichlet(np.ones(n)), rng.uniform(size=n)
    sizes = sorted({2.0, n / 8 + 2, n / 4 + 2, n / 2, float(n)})
    previous_pi, previous_mask = None, None
    for m in sizes:
        pi = rm_guided_inclusion(importance, m)
        mask = select("rm-guided", u, pi)
        uniform_mask = select("uniform", u, uniform_inclusion(n, int(m)))
        if previous_pi is not None:
            assert np.all(pi >= previous_pi - 1e-12)
            assert np.all(mask >= previous_mask)
        assert uniform_mask.sum() == int(m)
        previous_pi, previous_mask = pi, mask
    assert previous_mask.all()  # at m = N everything is labelled


def test_uniform_is_nested_in_its_sample_size():
    u = np.random.default_rng(1).uniform(size=50)
    masks = [select("uniform", u, uniform_inclusion(50, m)) for m in (5, 10, 20, 50)]
    for small, large in zip(masks, masks[1:], strict=False):
        assert np.all(large >= small)


def test_the_guides_top_picks_get_the_highest_probabilities():
    scores = np.arange(64.0)  # response 63 is the guide's favourite
    pi = rm_guided_inclusion(guide_importance(scores[None]), 16)
    assert pi[63] == pi.max() and pi[63] > pi[:32].max()
    assert np.all(np.diff(pi) >= -1e-12)  # higher rank, higher probability


def test_pair_probabilities_match_the_designs():
    pi = np.array([0.2, 0.5, 1.0, 0.3])
    joint = pair_inclusion("rm-guided", pi)
    assert joint[0, 1] == pytest.approx(0.1) and joint[2, 2] == 1.0
    m, n = 2, 4
    uniform = pair_inclusion("uniform", uniform_inclusion(n, m))
    assert uniform[0, 1] == pytest.approx(m * (m - 1) / (n * (n - 1)))


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: rm_guided_inclusion(np.full(4, 0.25), 0), "budget"),
        (lambda: rm_guided_inclusion(np.full(4, 0.25), 5), "budget"),
        (lambda: rm_guided_inclusion(np.full(4, 0.25), float("nan")), "budget"),
        (lambda: rm_guided_inclusion(np.array([0.5, 0.6, -0.1, 0.0]), 2), "importance"),
        (lambda: uniform_inclusion(4, 1), "budget"),
        (lambda: select("stratified", np.full(4, 0.5), np.full(4, 0.5)), "design"),
        (lambda: select("uniform", np.full(4, 1.5), np.full(4, 0.5)), "u"),
        (lambda: select("uniform", np.full(4, 0.5), np.full(3, 0.5)), "inclusion"),
        (lambda: select("rm-guided", np.full(4, 0.5), np.array([0.5, 0, 1, 1])), "inclusion"),
    ],
)
def test_bad_arguments_name_the_argument(call, field):
    with pytest.raises(MetricInputError) as error:
        call()
    assert error.value.field == field
