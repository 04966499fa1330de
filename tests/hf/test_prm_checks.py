"""The PRM scoring checks on tiny PRMs built offline: each seeded defect is caught with its
cause and fix, the same models and options without it pass every check, and the figures
agree with independent computations (each solution scored alone; the tokenizer's own tokens
over each marker; the token count past max_length)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from rmaudit.backends.hf.prm_checks import PRM_CHECK_NAMES  # noqa: E402
from rmaudit.default_plugins.huggingface import HFPRMClassifier, HFPRMStepTag  # noqa: E402
from rmaudit.recipe.validation import validate_options  # noqa: E402


def build(cls, **options):
    return cls(validate_options(cls, options, field=cls.name, file=None, base_dir=None))


def by_name(checks):
    return {check.name: check for check in checks.checks}


CORRECT = [
    (HFPRMClassifier, "token-prm", {}),
    (HFPRMClassifier, "custom-head-prm", {"trust_remote_code": True}),
    (HFPRMClassifier, "token-prm", {"separator": "\n\n", "format": "plain", "tokenize": "pieces"}),
    (HFPRMStepTag, "tag-prm", {}),
]


@pytest.mark.parametrize(("cls", "name", "options"), CORRECT)
def test_correct_prms_pass_every_check(cls, name, options, tiny_prms, solutions):
    prm = build(cls, model=tiny_prms[name], **options)
    checks = prm.scoring_checks(solutions)
    assert [(c.name, c.status) for c in checks.checks] == [
        (check, "pass") for check in PRM_CHECK_NAMES
    ], [c.finding for c in checks.checks]
    assert all(c.fix is None for c in checks.checks)
    # independently: each solution's step scores in one batch against one call per solution
    batched = np.concatenate(prm.score_steps(solutions))
    alone = np.concatenate([prm.score_steps([s])[0] for s in solutions])
    assert np.max(np.abs(batched - alone)) <= 1e-6
    assert by_name(checks)["batch invariance"].figures["step scores compared"] == len(batched)
    assert checks.sample_size == len(solutions) and checks.rendered_input


def test_a_separator_split_by_the_tokenizer_fails_the_step_markers_check(tiny_prms, solutions):
    """ "\\n\\n" is one token alone, but a byte-level BPE's pre-tokenizer cuts a blank line
    that runs into text: every separator but a solution's last is read at its second "\\n"."""
    prm = build(HFPRMClassifier, model=tiny_prms["token-prm"], separator="\n\n", format="plain")
    check = by_name(prm.scoring_checks(solutions))["step markers"]
    tokenizer = transformers.AutoTokenizer.from_pretrained(tiny_prms["token-prm"])
    text = " ".join(s.question + "".join(step + "\n\n" for step in s.steps) for s in solutions)
    tokens = tokenizer.convert_ids_to_tokens(tokenizer.encode(text))
    assert tokens.count("ĊĊ") == len(solutions)  # a solution's last separator ends a text
    inner = sum(len(s.steps) - 1 for s in solutions)
    assert check.status == "fail"
    assert check.figures["split"] == inner and check.figures["merged"] == 0
    steps = sum(len(s.steps) for s in solutions)
    assert f"is not its own token at {inner} of {steps} steps" in check.finding
    assert "read as tokens ['Ċ', 'Ċ']" in check.finding
    assert check.fix.startswith('set tokenize = "pieces"')


def test_a_tag_glued_to_its_step_fails_the_step_markers_check(tiny_prms, solutions):
    """Without the space before it, "ки" after a step's last character is two byte tokens."""
    prm = build(HFPRMStepTag, model=tiny_prms["tag-prm"], before_tag="")
    check = by_name(prm.scoring_checks(solutions))["step markers"]
    steps = sum(len(s.steps) for s in solutions)
    assert check.status == "fail" and check.figures["split"] == steps
    assert check.finding.startswith("step_tag 'ки' is not its own token")
    assert check.fix.startswith('set tokenize = "pieces"')


def test_a_model_reading_padding_fails_batch_invariance(tiny_prms, solutions):
    """Its twin, tag-prm (the same weights, the standard class), passes every check."""
    prm = build(HFPRMStepTag, model=tiny_prms["padding-tag-prm"], trust_remote_code=True)
    check = by_name(prm.scoring_checks(solutions))["batch invariance"]
    assert check.status == "fail" and "move with the batch" in check.finding
    assert check.fix.startswith("set batch_size = 1 (--batch-size 1)")
    # independently: a solution's step scores in a padded batch differ from alone
    batched = np.concatenate(prm.score_steps(solutions))
    alone = np.concatenate([prm.score_steps([s])[0] for s in solutions])
    assert np.max(np.abs(batched - alone)) == pytest.approx(check.figures["largest difference"])
    assert check.figures["largest difference"] > 0.1 * check.figures["score spread (SD)"]
    # scored one at a time, nothing is padded: the check's fix holds
    unpadded = build(
        HFPRMStepTag, model=tiny_prms["padding-tag-prm"], trust_remote_code=True, batch_size=1
    )
    assert by_name(unpadded.scoring_checks(solutions))["batch invariance"].status == "pass"


@pytest.mark.parametrize(
    ("cls", "name"), [(HFPRMClassifier, "token-prm"), (HFPRMStepTag, "tag-prm")]
)
def test_a_max_length_that_cuts_steps_fails_truncation(cls, name, tiny_prms, solutions):
    limit = 30
    prm = build(cls, model=tiny_prms[name], max_length=limit)
    check = by_name(prm.scoring_checks(solutions))["truncation"]
    encoded = prm.encode_many(solutions)
    lengths = [len(e.ids) for e in encoded]
    # independently: the steps whose marker's last token lies at or past the limit
    past = [sum(last >= limit for _, last in e.marker_tokens) for e in encoded]
    assert check.figures["solutions over max_length"] == sum(n > limit for n in lengths)
    assert check.figures["steps read from a cut input"] == sum(past) > 0
    assert check.status == ("fail" if sum(p > 0 for p in past) >= 0.1 * len(solutions) else "warn")
    assert check.fix == "set max_length = 512"  # the tiny models' position limit
    assert f"cuts {sum(p > 0 for p in past)} of {len(solutions)} solutions" in check.finding


def test_a_run_without_the_checks_measures_batch_dependence_after_it(tiny_prms, solutions):
    prm = build(HFPRMStepTag, model=tiny_prms["padding-tag-prm"], trust_remote_code=True)
    assert prm.batch_dependence() is None
    prm.score_steps(solutions)
    measured = prm.batch_dependence()
    assert measured.status == "fail"
    assert measured.figures["step scores compared"] == sum(
        len(s.steps) for s in solutions[: prm.options.batch_dependence_sample]
    )
    # the checks' own scoring is counted, not sampled
    fresh = build(HFPRMStepTag, model=tiny_prms["tag-prm"])
    fresh.scoring_checks(solutions)
    assert fresh.batch_dependence() is None
    assert fresh.report()["solutions scored"] == len(solutions)
