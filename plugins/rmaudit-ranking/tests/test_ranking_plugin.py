"""The ranking components: recipe options, reported values, and rmaudit's conformance kit."""

from __future__ import annotations

import numpy as np
import pytest

from rmaudit.errors import BadInput
from rmaudit.recipe import validate_options
from rmaudit.testing import check_metric, sample_benchmark
from rmaudit_ranking import hit_rate, mrr, ndcg
from rmaudit_ranking.plugin import HitRate, MeanReciprocalRank, NormalizedDCG


def build(cls, **raw):
    return cls(validate_options(cls, raw, field="metrics[0]", file=None, base_dir=None))


@pytest.mark.parametrize(
    "metric",
    [
        HitRate,
        MeanReciprocalRank,
        NormalizedDCG,
        build(HitRate, eta=0.1, n=[1, 5]),
        build(MeanReciprocalRank, ranks=[3]),
    ],
)
def test_components_pass_the_conformance_kit(metric):
    check_metric(metric)


def test_hit_rate_defaults_to_the_papers_cutoffs():
    """N = 256, η = 1/4: HR@32, HR@64, HR@128 as in Table 2 and Fig. 5."""
    inputs = sample_benchmark(prompts=3, per_prompt=256)
    output = HitRate().compute(inputs)
    assert [v.key for v in output.values] == ["hr@32", "hr@64", "hr@128"]
    assert [v.label for v in output.values] == ["HR@32", "HR@64", "HR@128"]
    assert output.values[1].value == hit_rate(inputs.oracle, inputs.scores, 64).value


def test_rank_metrics_report_best_and_second_best_by_default():
    inputs = sample_benchmark()
    for cls, function, key in ((MeanReciprocalRank, mrr, "mrr"), (NormalizedDCG, ndcg, "ndcg")):
        values = cls().compute(inputs).values
        assert [v.key for v in values] == [key, f"{key}2"]
        assert values[0].label == key.upper() and values[1].label == f"{key.upper()} (2nd)"
        assert values[1].value == function(inputs.oracle, inputs.scores, rank=2).value
        assert values[1].params == {"rank": 2}
        np.testing.assert_array_equal(
            values[0].per_prompt, function(inputs.oracle, inputs.scores).per_prompt
        )


@pytest.mark.parametrize(
    "cls, raw, field",
    [
        (HitRate, {"eta": 1.0}, "metrics[0].eta"),
        (HitRate, {"n": [0]}, "metrics[0].n"),
        (HitRate, {"n": []}, "metrics[0].n"),
        (MeanReciprocalRank, {"ranks": [0]}, "metrics[0].ranks"),
        (NormalizedDCG, {"rank": 2}, "metrics[0].rank"),
    ],
)
def test_bad_options_are_located_bad_input(cls, raw, field):
    with pytest.raises(BadInput) as error:
        build(cls, **raw)
    assert error.value.field == field


@pytest.mark.parametrize(
    "metric, field",
    [
        (build(HitRate, n=[17]), "n"),
        (build(HitRate, eta=0.01), "eta"),
        (build(MeanReciprocalRank, ranks=[1, 17]), "ranks"),
    ],
)
def test_pool_size_is_checked_before_any_work(metric, field):
    with pytest.raises(BadInput, match="expected") as error:
        metric.check_pool_size(16)
    assert error.value.field == field
