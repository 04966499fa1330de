"""The scoring checks' sample and verdicts, without a model: the seeded draw keeps the
longest and shortest items and is the same on every call; the statuses follow the documented
thresholds on scores built to cross them (docs/real-models.md, "Scoring checks")."""

from __future__ import annotations

import numpy as np

from rmaudit.backends.hf import scoring_checks
from rmaudit.backends.hf.scoring_checks import Noise
from rmaudit.components.scoring_checks import ScoringCheck, ScoringChecks
from rmaudit.default_plugins.huggingface.checks import passes_over
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


QUIET = Noise(4, 0.0)


def test_batch_invariance_statuses_follow_spread_and_rounding():
    alone = np.linspace(-2.0, 2.0, 20)
    spread = float(np.std(alone, ddof=1))
    invariance = scoring_checks.batch_invariance
    assert invariance(alone + 1e-7, alone, "float32", QUIET).status == "pass"
    warned = invariance(alone + 0.01 * spread, alone, "float32", QUIET)
    assert warned.status == "warn" and warned.fix.startswith("set deterministic = true")
    assert "the batch's shape changes the arithmetic" in warned.finding
    failed = invariance(alone + 0.2 * spread, alone, "float32", QUIET)
    assert failed.status == "fail" and "reads padding, or ignores the mask" in failed.finding
    assert failed.fix == "set batch_size = 1 (--batch-size 1): each input alone, unpadded"
    # on a GPU, where widths round up to 64, a batch of one still pads
    assert (
        "--pad-to-multiple 1" in invariance(alone + 0.2 * spread, alone, "float32", QUIET, 64).fix
    )
    # in bfloat16 a difference of a rounding step or two is rounding
    step = scoring_checks.rounding_step(alone, "bfloat16")
    assert invariance(alone + 2 * step, alone, "bfloat16", QUIET).status == "pass"


def test_a_gap_within_rounding_passes_however_close_the_scores_are():
    """Scores nearly tied (a spread of a tenth of a bfloat16 step): a gap below one rounding
    step is the dtype's rounding, not padding, however large a share of the spread it is."""
    alone = 300 + np.linspace(0, 0.1, 16) * 2.0**-7 * 300
    step = scoring_checks.rounding_step(alone, "bfloat16")
    check = scoring_checks.batch_invariance(alone + 0.5 * step, alone, "bfloat16", QUIET)
    assert check.figures["share of spread"] > 1 and check.status == "pass"


def test_a_gap_within_the_model_s_own_noise_is_blamed_on_the_noise():
    alone = np.linspace(-2.0, 2.0, 20)
    noisy = Noise(4, 0.5, "the model's own code draws random numbers", "set config_overrides")
    check = scoring_checks.batch_invariance(alone + 1.0, alone, "float32", noisy)
    assert check.status == "fail" and "the model's own noise, not the batch" in check.finding
    assert check.fix == "set config_overrides"
    # four times the noise and more: padding again
    assert (
        "reads padding"
        in scoring_checks.batch_invariance(alone + 2.5, alone, "float32", noisy).finding
    )


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
    assert "keep this model in float32" in float32.finding


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
    assert ScoringChecks.from_stored(checks.as_stored()) == checks
    assert ScoringChecks("", 0).status == "skipped"


def test_the_sample_size_follows_the_stage_between_its_bounds():
    assert [sample_size(n) for n in (10, 838, 1600, 4721, 36800)] == [16, 16, 32, 64, 64]
    assert sample_size(838, 40) == 40  # --scoring-checks-sample wins
    assert (MIN_SAMPLE, MAX_SAMPLE, SAMPLE_SHARE) == (16, 64, 50)


def test_the_checks_score_alone_the_rows_that_read_padding_and_the_shortest_twice():
    """Brute force on the plan's own batches: a row reads padding where it is shorter than
    its batch's longest row rounded up to the padding multiple; packed, every row does."""
    sizes = [969, 27, 782, 521, 305, 63, 63, 58, 57, 130, 87, 304, 177, 132, 76, 70]
    passes = passes_over(sizes)
    assert sorted(i for batch in passes.batches for i in batch) == list(range(len(sizes)))
    assert passes.batches[0] == [0]  # the longest, alone
    for multiple in (1, 64):
        passes = passes_over(sizes, pad_multiple=multiple)
        widths = {
            i: -(-max(sizes[j] for j in b) // multiple) * multiple
            for b in passes.batches
            for i in b
        }
        reads_padding = [i for i in range(1, len(sizes)) if sizes[i] < widths[i]]
        assert passes.padded == reads_padding
        # no size here is a multiple of 64: then every row but the longest reads padding
        assert (len(reads_padding) < len(sizes) - 1) == (multiple == 1)
    packed = passes_over(sizes, packed=True)
    assert packed.padded == list(range(1, len(sizes)))
    # determinism: the four shortest, scored alone twice
    shortest = sorted(range(len(sizes)), key=lambda i: sizes[i])[:4]
    assert passes.repeated == sorted(shortest)
    # numerics compares every item but the longest in the other dtype (16 at least)
    assert passes.compared == list(range(1, len(sizes)))
    assert set(passes.alone) == set(passes.padded) | set(shortest)
