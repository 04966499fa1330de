"""The scoring checks' sample and verdicts, without a model: the seeded draw keeps the
longest and shortest items and is the same on every call; the statuses follow the documented
thresholds on scores built to cross them (docs/real-models.md, "Scoring checks")."""

from __future__ import annotations

import numpy as np

from rmaudit.backends.hf import scoring_checks
from rmaudit.components.scoring_checks import ScoringCheck, ScoringChecks
from rmaudit.default_plugins.huggingface.checks import plan
from rmaudit.run.scoring_checks import (
    MAX_SAMPLE,
    MIN_SAMPLE,
    SAMPLE_SHARE,
    draw_sample,
    sample_size,
)


def test_the_sample_holds_the_longest_and_shortest_and_is_seeded():
    rng = np.random.default_rng(5)
    ids = [f"r{i:03d}" for i in range(500)]
    sizes = [int(s) for s in rng.integers(10, 1000, size=500)]
    sizes[123], sizes[321] = 5000, 1
    sample = draw_sample(ids, sizes, 64, 0)
    assert len(sample) == len(set(sample)) == 64
    assert sample[:2] == ["r123", "r321"]
    assert draw_sample(list(reversed(ids)), list(reversed(sizes)), 64, 0) == sample
    assert draw_sample(ids, sizes, 64, 1) != sample
    assert draw_sample(ids[:10], sizes[:10], 64, 0) == sorted(ids[:10])


def test_batch_invariance_statuses_follow_spread_and_rounding():
    alone = np.linspace(-2.0, 2.0, 20)
    spread = float(np.std(alone, ddof=1))
    assert scoring_checks.batch_invariance(alone + 1e-7, alone, "float32").status == "pass"
    warned = scoring_checks.batch_invariance(alone + 0.01 * spread, alone, "float32")
    assert warned.status == "warn" and warned.fix.startswith("set deterministic = true")
    assert scoring_checks.batch_invariance(alone + 0.2 * spread, alone, "float32").status == "fail"
    # in bfloat16 a difference of a rounding step or two is rounding
    step = scoring_checks.rounding_step(alone, "bfloat16")
    assert scoring_checks.batch_invariance(alone + 2 * step, alone, "bfloat16").status == "pass"


def test_numerics_counts_flipped_pairs_against_float32():
    reference = np.arange(100, dtype=float)
    swapped = reference.copy()
    swapped[[10, 11]] = swapped[[11, 10]]  # one pair of 4,950 flips
    kw = {"run_dtype": "bfloat16", "other_dtype": "float32", "attention": "sdpa"}
    one = scoring_checks.numerics(swapped, reference, **kw)
    assert one.status == "pass" and one.figures["pairs flipped"] == 1
    assert one.figures["pairs compared"] == 4950
    reversed_half = np.concatenate([reference[:50], reference[50:][::-1]])
    assert scoring_checks.numerics(reversed_half, reference, **kw).status == "fail"
    float32 = scoring_checks.numerics(reference, reversed_half, **{**kw, "run_dtype": "float32"})
    assert float32.status == "pass" and float32.figures["pairs flipped"] == 1225


def test_a_model_status_is_its_worst_check_and_survives_json():
    checks = ScoringChecks(
        "key",
        3,
        (
            ScoringCheck("template", "pass", "fine"),
            ScoringCheck("truncation", "warn", "cut", {"responses cut": 1}, "set max_length = 9"),
        ),
        rendered_input="<s>hi",
    )
    assert checks.status == "warn" and [c.name for c in checks.warnings()] == ["truncation"]
    assert ScoringChecks.from_json(checks.to_json()) == checks
    assert ScoringChecks("", 0).status == "skipped"


def test_the_sample_size_follows_the_stage_between_its_bounds():
    assert [sample_size(n) for n in (10, 838, 1600, 4721, 36800)] == [16, 16, 32, 64, 64]
    assert sample_size(838, 40) == 40  # --scoring-checks-sample wins
    assert (MIN_SAMPLE, MAX_SAMPLE, SAMPLE_SHARE) == (16, 64, 50)


def test_the_checks_score_alone_the_rows_that_read_padding_and_the_shortest_twice():
    """Brute force on the plan's own batches: a row reads padding where it is shorter than
    its batch's longest row rounded up to the padding multiple; packed, every row does."""
    sizes = [969, 27, 782, 521, 305, 63, 63, 58, 57, 130, 87, 304, 177, 132, 76, 70]
    passes = plan(sizes, half=False)
    assert sorted(i for batch in passes.batches for i in batch) == list(range(len(sizes)))
    assert passes.batches[0] == [0]  # the longest, alone
    for multiple in (1, 64):
        passes = plan(sizes, half=False, pad_multiple=multiple)
        widths = {
            i: -(-max(sizes[j] for j in b) // multiple) * multiple
            for b in passes.batches
            for i in b
        }
        reads_padding = [i for i in range(1, len(sizes)) if sizes[i] < widths[i]]
        assert passes.padded == reads_padding
        # no size here is a multiple of 64: then every row but the longest reads padding
        assert (len(reads_padding) < len(sizes) - 1) == (multiple == 1)
    packed = plan(sizes, half=False, packed=True)
    assert packed.padded == list(range(1, len(sizes)))
    # determinism: the four shortest, scored alone twice; a float32 run's bfloat16 on them
    shortest = sorted(range(len(sizes)), key=lambda i: sizes[i])[:4]
    assert passes.repeated == passes.compared == sorted(shortest)
    assert set(passes.alone) == set(passes.padded) | set(shortest)
    # a half-precision run compares every item but the longest with float32 (16 at least)
    half = plan(sizes, half=True)
    assert half.compared == list(range(1, len(sizes))) and set(half.compared) <= set(half.alone)
