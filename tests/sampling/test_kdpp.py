"""k-DPP sampling: exactness against brute force, determinism, diversity and input validation."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import chisquare

from rmaudit.benchmark.sampling import KDPP, kdpp, random_indices
from rmaudit.errors import MetricInputError

N_DRAWS = 20_000


def brute_force_kdpp(embeddings: np.ndarray, k: int, scale: float) -> dict[tuple[int, ...], float]:
    """P(S) = det(L_S) / e_k(L) over every k-subset, with L = scale·E Eᵀ and e_k = Σ det(L_S)."""
    kernel = scale * embeddings @ embeddings.T
    subsets = list(itertools.combinations(range(len(embeddings)), k))
    dets = np.array([np.linalg.det(kernel[np.ix_(s, s)]) for s in subsets])
    return dict(zip(subsets, dets / dets.sum(), strict=True))


def empirical_counts(embeddings, k, subsets, **kwargs) -> np.ndarray:
    """How often each k-subset comes up in N_DRAWS draws from one decomposition."""
    counts = dict.fromkeys(subsets, 0)
    for draw in kdpp(embeddings, k, seed=0, size=N_DRAWS, **kwargs):
        counts[tuple(draw.tolist())] += 1
    return np.array([counts[s] for s in subsets])


def embeddings_with_spread(n: int, d: int, seed: int) -> np.ndarray:
    """Gaussian rows with column scales spread over one order of magnitude, so that the
    eigenvalues of L differ widely and the k-DPP is far from uniform."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) * np.geomspace(0.3, 3.0, d)


@pytest.mark.parametrize(
    ("n", "d", "k", "scale"),
    [
        (6, 4, 2, None),  # d < n: the dual path
        (6, 4, 3, None),  # dual path, three of four eigenvectors chosen
        (6, 3, 3, None),  # rank(E) == k: every eigenvector kept, a pure projection DPP
        (5, 8, 3, None),  # n ≤ d: the primal path
        (6, 4, 3, 7.5),  # an explicit scale
        (6, 4, 2, 1e-9),  # a scale that makes every eigenvalue tiny
    ],
)
def test_sample_frequencies_match_brute_force_kdpp(n, d, k, scale):
    embeddings = embeddings_with_spread(n, d, seed=0)
    target = brute_force_kdpp(embeddings, k, 1.0 if scale is None else scale)
    subsets = list(target)
    expected = N_DRAWS * np.array([target[s] for s in subsets])
    # The check has power only if the target is far from uniform and the chi-square
    # approximation holds (expected counts ≥ 5 in every cell).
    assert expected.max() > 3 * expected.min() and expected.min() >= 5

    observed = empirical_counts(embeddings, k, subsets, scale=scale)

    assert observed.sum() == N_DRAWS, "kdpp returned something other than a sorted k-subset"
    assert chisquare(observed, expected).pvalue > 0.001


def test_chi_square_check_rejects_a_uniform_sampler():
    """The goodness-of-fit test above can fail: uniform subsets do not pass it."""
    embeddings = embeddings_with_spread(6, 4, seed=0)
    target = brute_force_kdpp(embeddings, 2, 1.0)
    subsets = list(target)
    counts = dict.fromkeys(subsets, 0)
    for seed in range(N_DRAWS):
        counts[tuple(random_indices(6, 2, seed=seed).tolist())] += 1
    observed = np.array([counts[s] for s in subsets])
    expected = N_DRAWS * np.array([target[s] for s in subsets])
    assert chisquare(observed, expected).pvalue < 1e-6


def test_returns_sorted_distinct_integer_indices():
    embeddings = np.random.default_rng(1).normal(size=(300, 20))
    picked = kdpp(embeddings, 15, seed=3)
    assert picked.shape == (15,)
    assert np.issubdtype(picked.dtype, np.integer)
    assert np.all(np.diff(picked) > 0)
    assert picked.min() >= 0 and picked.max() < 300


def test_k_equal_to_n_returns_every_item():
    embeddings = np.random.default_rng(2).normal(size=(5, 7))
    assert kdpp(embeddings, 5).tolist() == [0, 1, 2, 3, 4]


def test_same_seed_same_indices_and_different_seeds_differ():
    embeddings = np.random.default_rng(3).normal(size=(200, 16))
    assert np.array_equal(kdpp(embeddings, 10, seed=7), kdpp(embeddings, 10, seed=7))
    draws = {tuple(kdpp(embeddings, 10, seed=seed).tolist()) for seed in range(20)}
    assert len(draws) >= 18


def test_many_draws_from_one_decomposition_start_with_the_single_draw_and_vary():
    embeddings = np.random.default_rng(8).normal(size=(120, 12))
    draws = kdpp(embeddings, 6, seed=4, size=50)
    assert draws.shape == (50, 6) and np.issubdtype(draws.dtype, np.integer)
    assert all(np.all(np.diff(row) > 0) for row in draws)
    assert np.array_equal(draws[0], kdpp(embeddings, 6, seed=4))
    assert len({tuple(row) for row in draws.tolist()}) >= 45
    sampler = KDPP(embeddings, 6)
    assert np.array_equal(sampler.samples(50, seed=4), draws)
    assert np.array_equal(sampler.sample(seed=9), kdpp(embeddings, 6, seed=9))


@pytest.mark.parametrize("size", [0, -3, 2.5, True, "4"])
def test_invalid_draw_counts_are_rejected(size):
    with pytest.raises(MetricInputError, match="expected .*got") as info:
        kdpp(GOOD, 2, size=size)
    assert info.value.field == "size"


def test_scale_cancels_even_where_e_k_overflows_float64():
    """det(c·L_S) = c^k det(L_S) for every k-subset, so the k-DPP ignores the scale.  With
    scale 1e12 the elementary symmetric polynomial e_60 is far beyond float64's range, and with
    1e-12 far below it; the sampler must still give the default-scale draw for each seed."""
    embeddings = np.random.default_rng(4).normal(size=(300, 80))
    for seed in range(5):
        reference = kdpp(embeddings, 60, seed=seed)
        assert np.array_equal(kdpp(embeddings, 60, scale=1e12, seed=seed), reference)
        assert np.array_equal(kdpp(embeddings, 60, scale=1e-12, seed=seed), reference)


def test_picks_from_distinct_clusters_far_more_often_than_uniform():
    rng = np.random.default_rng(5)
    n_clusters, per_cluster, dims = 5, 40, 16
    centres = rng.normal(size=(n_clusters, dims))
    embeddings = np.repeat(centres, per_cluster, axis=0) + 0.01 * rng.normal(
        size=(n_clusters * per_cluster, dims)
    )
    cluster_of = np.repeat(np.arange(n_clusters), per_cluster)

    def distinct_rate(sampler) -> float:
        draws = [sampler(seed) for seed in range(200)]
        return np.mean([len(set(cluster_of[d])) == n_clusters for d in draws])

    dpp_rate = distinct_rate(lambda seed: kdpp(embeddings, n_clusters, seed=seed))
    uniform_rate = distinct_rate(lambda seed: random_indices(len(embeddings), n_clusters, seed))
    # Uniformly, one item per cluster has probability 40^5 / C(200, 5) ≈ 0.04.
    assert uniform_rate < 0.15
    assert dpp_rate > 0.9


def test_rank_below_k_is_rejected_and_names_the_rank():
    rng = np.random.default_rng(6)
    embeddings = rng.normal(size=(10, 2)) @ rng.normal(size=(2, 5))  # rank 2 in 5 dims
    with pytest.raises(MetricInputError, match=r"rank ≥ k = 3.*got rank 2") as info:
        kdpp(embeddings, 3)
    assert info.value.field == "embeddings"
    assert kdpp(embeddings, 2).size == 2


def test_all_zero_embeddings_have_rank_zero():
    with pytest.raises(MetricInputError, match="got rank 0"):
        kdpp(np.zeros((4, 3)), 1)


GOOD = np.random.default_rng(7).normal(size=(6, 4))


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"k": 0}, "k"),
        ({"k": -2}, "k"),
        ({"k": 7}, "k"),  # more than the 6 items
        ({"k": 2.0}, "k"),
        ({"k": True}, "k"),
        ({"k": "2"}, "k"),
        ({"k": 2, "scale": 0.0}, "scale"),
        ({"k": 2, "scale": -1.0}, "scale"),
        ({"k": 2, "scale": float("nan")}, "scale"),
        ({"k": 2, "scale": float("inf")}, "scale"),
        ({"k": 2, "scale": "1"}, "scale"),
        ({"k": 2, "seed": -1}, "seed"),
        ({"k": 2, "seed": 1.5}, "seed"),
    ],
)
def test_invalid_arguments_are_rejected(kwargs, field):
    with pytest.raises(MetricInputError, match="expected .*got") as info:
        kdpp(GOOD, **kwargs)
    assert info.value.field == field


def with_value(row: int, col: int, value: float) -> np.ndarray:
    bad = GOOD.copy()
    bad[row, col] = value
    return bad


@pytest.mark.parametrize(
    "embeddings",
    [
        with_value(2, 1, np.nan),
        with_value(4, 0, np.inf),
        with_value(0, 3, -np.inf),
        np.ones(5),  # 1-D
        np.ones((2, 3, 4)),  # 3-D
        np.empty((0, 4)),
        np.empty((3, 0)),
        [["a", "b"], ["c", "d"]],
    ],
)
def test_invalid_embeddings_are_rejected(embeddings):
    with pytest.raises(MetricInputError, match="expected .*got") as info:
        kdpp(embeddings, 1)
    assert info.value.field == "embeddings"


def test_non_finite_message_names_the_row():
    with pytest.raises(MetricInputError, match="row 2"):
        kdpp(with_value(2, 1, np.nan), 1)
