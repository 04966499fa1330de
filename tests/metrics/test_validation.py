"""Invalid metric inputs raise MetricInputError naming the parameter (and prompt); results
carry the documented standard error and a seeded bootstrap interval."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rmaudit.errors import BadInput, MetricInputError
from rmaudit.metrics import (
    CurveResult,
    MetricResult,
    best_k_of_n,
    best_of_n,
    best_of_n_curve,
    bon_kl,
    default_etas,
    pairwise_accuracy,
    reta,
    reta_curve,
    reta_n_range,
)

ORACLE = [np.array([1.0, 2.0, 3.0, 4.0]), np.array([2.0, 1.0, 5.0])]
SCORES = [np.array([0.1, 0.4, 0.3, 0.2]), np.array([0.3, 0.2, 0.1])]


def with_prompt(pools, q, values):
    changed = list(pools)
    changed[q] = np.array(values, dtype=float)
    return changed


def call_every_metric(oracle, scores):
    """Each metric on the same pools; all must reject the same bad pools."""
    return [
        lambda: reta(oracle, scores, 0.5, n=2),
        lambda: reta_curve(oracle, scores, [0.5], n=2),
        lambda: best_of_n(oracle, scores, 2),
        lambda: best_of_n_curve(oracle, scores, [2]),
        lambda: best_k_of_n(oracle, scores, 2, 1),
        lambda: pairwise_accuracy(oracle, scores),
    ]


BAD_POOLS = [
    # (oracle, scores, field at fault, prompt at fault, message pattern)
    (
        with_prompt(ORACLE, 1, [2.0, np.nan, 5.0]),
        SCORES,
        "oracle",
        1,
        "expected finite scores, got nan at response 1",
    ),
    (
        ORACLE,
        with_prompt(SCORES, 0, [0.1, np.inf, 0.3, 0.2]),
        "scores",
        0,
        "expected finite scores, got inf",
    ),
    (ORACLE, with_prompt(SCORES, 1, [0.3, -np.inf, 0.1]), "scores", 1, "got -inf"),
    (
        ORACLE,
        with_prompt(SCORES, 1, [0.3, 0.2]),
        "scores",
        1,
        r"expected as many RM scores as oracle scores \(3\), got 2",
    ),
    (
        with_prompt(ORACLE, 1, [2.0]),
        with_prompt(SCORES, 1, [0.3]),
        "oracle",
        1,
        "expected at least 2 responses, got 1",
    ),
    (
        ORACLE,
        SCORES[:1],
        "scores",
        None,
        r"expected one score array per prompt \(2 prompts in oracle\), got 1",
    ),
    ([], [], "oracle", None, "expected at least one prompt, got none"),
    (
        ORACLE,
        with_prompt(SCORES, 0, [[0.1, 0.4], [0.3, 0.2]]),
        "scores",
        0,
        r"expected a 1-D array .* got an array of shape \(2, 2\)",
    ),
    (
        ORACLE,
        [SCORES[0], np.array(["a", "b", "c"])],
        "scores",
        1,
        "expected real numbers, got values of dtype <U1",
    ),
    (np.array([1.0, 2.0, 3.0]), SCORES, "oracle", 0, "expected a 1-D array"),
    ("1.0 2.0", SCORES, "oracle", None, "expected a sequence of 1-D arrays"),
]


@pytest.mark.parametrize(("oracle", "scores", "field", "prompt", "message"), BAD_POOLS)
def test_bad_pools_are_rejected_by_every_metric(oracle, scores, field, prompt, message):
    for call in call_every_metric(oracle, scores):
        with pytest.raises(MetricInputError, match=message) as raised:
            call()
        assert raised.value.field == field
        assert raised.value.prompt_index == prompt
        if prompt is not None:
            assert f"prompt {prompt}:" in str(raised.value)


def test_error_is_a_bad_input_with_a_one_line_message():
    with pytest.raises(BadInput) as raised:
        reta(ORACLE, SCORES, 1.5, n=2)
    assert str(raised.value) == "eta: expected a number strictly between 0 and 1, got 1.5"


def test_two_dimensional_array_is_one_prompt_per_row():
    oracle = np.array([[1.0, 2.0, 3.0], [3.0, 1.0, 2.0]])
    result = best_of_n(oracle, oracle, 3)
    np.testing.assert_allclose(result.per_prompt, [3.0, 3.0])


@pytest.mark.parametrize("eta", [0.0, 1.0, -0.2, 1.5, np.nan, "0.5", True, None])
def test_eta_outside_open_unit_interval(eta):
    pattern = "expected a number strictly between 0 and 1"
    with pytest.raises(MetricInputError, match=pattern) as raised:
        reta(ORACLE, SCORES, eta, n=2)
    assert raised.value.field == "eta"


@pytest.mark.parametrize("etas", [[0.5, 1.0], [0.0], [], [[0.1, 0.2]], 0.5])
def test_bad_eta_grid(etas):
    with pytest.raises(MetricInputError) as raised:
        reta_curve(ORACLE, SCORES, etas, n=2)
    assert raised.value.field == "etas"


def test_eta_times_n_below_one_names_the_smallest_usable_eta():
    # Pools of 4 and 3 responses use n = N, so the smallest n is 3.
    pattern = r"expected eta >= 1/3 = 0\.333333 .* got 0\.3"
    with pytest.raises(MetricInputError, match=pattern) as raised:
        reta(ORACLE, SCORES, 0.3)
    assert raised.value.field == "eta"
    with pytest.raises(MetricInputError, match="expected etas >= 1/2") as raised:
        reta_curve(ORACLE, SCORES, [0.5, 0.4], n=2)
    assert raised.value.field == "etas"


def test_subset_size_larger_than_a_pool_names_the_prompt():
    for call, field in [
        (lambda: reta(ORACLE, SCORES, 0.5, n=4), "n"),
        (lambda: best_of_n(ORACLE, SCORES, 4), "n"),
        (lambda: best_k_of_n(ORACLE, SCORES, 4, 1), "n"),
        (lambda: best_of_n_curve(ORACLE, SCORES, [2, 4]), "ns"),
    ]:
        pattern = r"prompt 1: expected n.* <= the prompt's number of responses \(3\), got n.*=4"
        with pytest.raises(MetricInputError, match=pattern) as raised:
            call()
        assert raised.value.prompt_index == 1
        assert raised.value.field == field


@pytest.mark.parametrize("n", [1, 0, 2.0, "3", True])
def test_bad_subset_size(n):
    with pytest.raises(MetricInputError, match="expected an integer >= 2") as raised:
        reta(ORACLE, SCORES, 0.5, n=n)
    assert raised.value.field == "n"


def test_rank_and_k_cannot_exceed_n():
    with pytest.raises(MetricInputError, match=r"expected rank <= n \(2\), got rank=3") as raised:
        best_of_n(ORACLE, SCORES, 2, rank=3)
    assert raised.value.field == "rank"
    with pytest.raises(MetricInputError, match=r"expected k <= n \(2\), got k=3"):
        best_k_of_n(ORACLE, SCORES, 2, 3)
    with pytest.raises(MetricInputError, match=r"expected every n in ns >= rank \(2\), got n=1"):
        best_of_n_curve(ORACLE, SCORES, [1, 2], rank=2)
    with pytest.raises(MetricInputError, match="expected an integer >= 1, got 0"):
        best_of_n(ORACLE, SCORES, 2, rank=0)


def test_non_positive_oracle_mean_needs_normalize_false():
    oracle = with_prompt(ORACLE, 1, [-2.0, 1.0, 0.5])
    pattern = "prompt 1: expected a positive mean oracle score.*got -0.166667; .*normalize=False"
    with pytest.raises(MetricInputError, match=pattern) as raised:
        reta(oracle, SCORES, 0.5, n=2)
    assert (raised.value.field, raised.value.prompt_index) == ("oracle", 1)
    assert np.isfinite(reta(oracle, SCORES, 0.5, n=2, normalize=False).value)


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("method", "exactly", "expected 'exact' or 'mc', got 'exactly'"),
        ("normalize", "yes", "expected True or False, got 'yes'"),
        ("replace", 1, "expected True or False, got 1"),
        ("resamples", 0, "expected an integer >= 1, got 0"),
        ("seed", -1, "expected an integer >= 0, got -1"),
        ("ci", 1.0, "expected a number strictly between 0 and 1, got 1.0"),
        ("bootstrap", 0, "expected an integer >= 1, got 0"),
    ],
)
def test_bad_options(option, value, message):
    with pytest.raises(MetricInputError, match=message) as raised:
        reta(ORACLE, SCORES, 0.5, n=2, **{option: value})
    assert raised.value.field == option


def test_bad_pool_size_arguments():
    with pytest.raises(MetricInputError, match="expected an integer >= 1, got 0"):
        reta_n_range(0)
    with pytest.raises(MetricInputError, match="expected an integer >= 2, got 1") as raised:
        default_etas(1)
    assert raised.value.field == "N_min"
    with pytest.raises(MetricInputError, match="expected an integer >= 1, got 0"):
        bon_kl(0)
    with pytest.raises(MetricInputError, match="expected integers >= 1, got values of dtype float"):
        bon_kl([1, 2.5])
    with pytest.raises(MetricInputError, match="expected integers >= 1, got 0"):
        bon_kl(np.array([3, 0]))
    with pytest.raises(MetricInputError, match="expected a non-empty sequence of integers"):
        best_of_n_curve(ORACLE, SCORES, [])


# ---------------------------------------------------------------------------------------------
# Results.


def test_standard_error_and_bootstrap_interval():
    values = np.random.default_rng(3).normal(1.0, 0.5, 25)
    result = MetricResult.from_per_prompt(values, ci=0.9, bootstrap=20000, seed=11)
    assert result.value == pytest.approx(values.mean(), abs=1e-15)
    assert result.stderr == pytest.approx(values.std(ddof=1) / np.sqrt(values.size), abs=1e-15)
    # An independent percentile bootstrap with another generator agrees to Monte-Carlo accuracy:
    # each 5% / 95% quantile of 20000 resample means has a standard error of about 0.003 here.
    resampled = np.random.default_rng(99).choice(values, size=(20000, values.size)).mean(axis=1)
    low, high = np.percentile(resampled, [5, 95])
    assert result.ci_low == pytest.approx(low, abs=0.02)
    assert result.ci_high == pytest.approx(high, abs=0.02)
    again = MetricResult.from_per_prompt(values, ci=0.9, bootstrap=20000, seed=11)
    assert (again.ci_low, again.ci_high) == (result.ci_low, result.ci_high)
    wider = MetricResult.from_per_prompt(values, ci=0.99, bootstrap=20000, seed=11)
    assert wider.ci_low < result.ci_low and wider.ci_high > result.ci_high


def test_single_prompt_has_zero_stderr_and_a_point_interval():
    result = MetricResult.from_per_prompt(np.array([1.25]))
    assert (result.value, result.stderr, result.ci_low, result.ci_high) == (1.25, 0.0, 1.25, 1.25)


def test_results_are_immutable():
    result = MetricResult.from_per_prompt(np.array([1.0, 2.0]))
    with pytest.raises(AttributeError):
        result.value = 3.0
    with pytest.raises(ValueError):
        result.per_prompt[0] = 5.0
    curve = CurveResult.from_per_prompt(np.array([1, 2]), np.array([[1.0, 2.0], [3.0, 5.0]]))
    with pytest.raises(ValueError):
        curve.value[0] = 0.0
    assert curve.x.dtype.kind == "i"
    assert curve.point(1).value == 4.0


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-100, 100), min_size=2, max_size=30), st.integers(0, 2**32 - 1))
def test_bootstrap_interval_brackets_the_resample_means(values, seed):
    result = MetricResult.from_per_prompt(np.array(values), bootstrap=200, seed=seed)
    assert min(values) - 1e-9 <= result.ci_low <= result.ci_high <= max(values) + 1e-9
