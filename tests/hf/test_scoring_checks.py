"""The scoring checks on tiny real models built offline: each seeded defect is caught with
its message and fix, the same models without it pass every check, and the figures agree with
independent computations (each item scored alone; the tokenizer's own count of truncation)."""

from __future__ import annotations

import json
import logging
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import _tiny_defects  # noqa: E402
import _tiny_hf  # noqa: E402

from rmaudit.backends.hf.input_checks import RenderedInput, template, truncation  # noqa: E402
from rmaudit.components import Prompt, Response  # noqa: E402
from rmaudit.components.scoring_checks import CHECK_NAMES  # noqa: E402
from rmaudit.default_plugins.huggingface import DPOImplicit, HFClassifier  # noqa: E402
from rmaudit.recipe.validation import validate_options  # noqa: E402
from rmaudit.run.scoring_checks import MIN_SAMPLE  # noqa: E402


def build(cls, **options):
    return cls(validate_options(cls, options, field=cls.name, file=None, base_dir=None))


@pytest.fixture(scope="module")
def items():
    """(prompt, response) pairs of 20 to 100 tokens under the tiny tokenizers, as many as the
    smallest sample the checks draw (docs/real-models.md: each defect is caught on it)."""
    corpus = _tiny_hf.CORPUS
    out = []
    for i in range(MIN_SAMPLE):
        response = " ".join(corpus[(i + j) % 5] for j in range(1 + i % 3))[: 40 + 9 * i]
        prompt = Prompt(f"p{i % 5}", corpus[i % 5], {})
        out.append((prompt, Response(f"r{i}", prompt.id, 0, response)))
    return out


@pytest.fixture(scope="module")
def defective(tmp_path_factory):
    folder = tmp_path_factory.mktemp("defective-models")
    return {
        "last-token-rm": str(_tiny_defects.build_pooled(folder, pool_last_position=True)),
        "mask-token-rm": str(_tiny_defects.build_pooled(folder, pool_last_position=False)),
        "dropout-rm": str(
            _tiny_defects.build_pooled(folder, pool_last_position=False, dropout=0.5)
        ),
        "mask-blind-rm": str(_tiny_defects.build_blind(folder, mask_blind=True)),
        "masked-rm": str(_tiny_defects.build_blind(folder, mask_blind=False)),
        "double-bos-rm": str(_tiny_defects.build_double_bos(folder)),
        "no-bos-rm": str(_tiny_defects.build_no_bos(folder)),
        "no-eos-rm": str(_tiny_defects.build_no_eos(folder)),
        "dropped-eos-rm": str(_tiny_defects.build_no_eos(folder, tokenizer_adds=True)),
        "shared-eos-rm": str(_tiny_defects.build_shared_eos(folder, closes=True)),
        "shared-eos-unclosed-rm": str(_tiny_defects.build_shared_eos(folder, closes=False)),
        "short-limit-rm": str(_tiny_defects.build_short_limit(folder)),
        "bf16-fragile-rm": str(_tiny_defects.build_bf16_fragile(folder)),
        "bf16-flaky-rm": str(_tiny_defects.build_bf16_fragile(folder / "flaky", offset=10.0)),
    }


def by_name(checks):
    return {check.name: check for check in checks.checks}


CORRECT = [
    ("gpt2-rm", {}),
    ("llama-rm", {}),
    ("deberta-rm", {}),
    ("mask-token-rm", {"trust_remote_code": True}),
    ("masked-rm", {"trust_remote_code": True}),
    ("shared-eos-rm", {}),  # its closing EOS is its BOS too (GPT-2's <|endoftext|>)
]


@pytest.mark.parametrize(("name", "options"), CORRECT)
def test_correct_classifiers_pass_every_check_and_score_as_alone(
    name, options, tiny_models, defective, items
):
    path = {**tiny_models, **defective}[name]
    rm = build(HFClassifier, model=path, **options)
    checks = rm.scoring_checks(items)
    assert [(c.name, c.status) for c in checks.checks] == [
        (name, "pass") for name in CHECK_NAMES
    ], [c.finding for c in checks.checks]
    assert all(c.fix is None for c in checks.checks)
    # independent of the checks: the run's batched scores against one call per item
    batched = np.array(rm.score(items))
    alone = np.array([rm.score([item])[0] for item in items])
    scale = max(1.0, float(np.max(np.abs(alone))))
    assert np.max(np.abs(batched - alone)) <= 1e-5 * scale
    invariance = by_name(checks)["batch invariance"].figures
    assert invariance["largest difference"] <= 1e-5 * scale
    assert checks.rendered_input and checks.sample_size == len(items)
    assert checks.settings == rm.scoring_settings() and checks.settings["batch_size"] is None


def test_a_correct_dpo_model_passes_every_check(tiny_models, items):
    rm = build(DPOImplicit, model=tiny_models["gpt2-lm"], reference=tiny_models["gpt2-lm-ref"])
    checks = rm.scoring_checks(items)
    assert checks.status == "pass", [c.finding for c in checks.checks]
    assert by_name(checks)["template"].figures["template"] == "the tokenizer's chat template"
    assert "the model's own forward" in by_name(checks)["forward"].finding


def followed(check) -> dict:
    """The recipe options the fix printed under ``check`` sets, read from its flags (each an
    ``rmaudit audit`` flag): ``--chat-template`` takes the template the check printed."""
    from rmaudit.cli.audit import audit

    flags = re.search(r"\((--[^)]*)\)", check.fix).group(1).replace(";", " ").split()
    known = {opt for param in audit.params for opt in getattr(param, "opts", ())}
    options: dict = {}
    for i, flag in enumerate(flags):
        if not flag.startswith("--"):
            continue
        assert flag in known, f"{flag}: no such flag of rmaudit audit"
        value = flags[i + 1] if i + 1 < len(flags) and not flags[i + 1].startswith("--") else None
        if flag == "--chat-template":
            options["chat_template"] = check.figures["fixed template"]
        elif flag == "--config-override":
            name, _, setting = value.partition("=")
            options.setdefault("config_overrides", {})[name] = json.loads(setting)
        else:
            options[flag.removeprefix("--").replace("-", "_")] = (
                True if value is None else json.loads(value) if value[0].isdigit() else value
            )
    return options


#: (model, its options, the check that finds the defect, its status, words of its cause)
DEFECTS = {
    "padding": (
        "last-token-rm",
        {"trust_remote_code": True},
        "batch invariance",
        "fail",
        "reads padding, or ignores the mask",
    ),
    "mask": (
        "mask-blind-rm",
        {"trust_remote_code": True},
        "batch invariance",
        "fail",
        "reads padding, or ignores the mask",
    ),
    "dropout": (
        "dropout-rm",
        {"trust_remote_code": True},
        "determinism",
        "warn",
        "the model's own code draws random numbers",
    ),
    "double BOS": ("double-bos-rm", {}, "template", "fail", "BOS twice"),
    "dropped BOS": ("no-bos-rm", {}, "special tokens", "fail", "drops the BOS the tokenizer adds"),
    "missing EOS": ("no-eos-rm", {}, "template", "warn", "no EOS or end-of-turn token"),
    "missing EOS, BOS = EOS": (
        "shared-eos-unclosed-rm",
        {},
        "template",
        "warn",
        "no EOS or end-of-turn token",
    ),
    "dropped EOS": (
        "dropped-eos-rm",
        {},
        "special tokens",
        "fail",
        "drops the EOS the tokenizer adds",
    ),
    "truncation": ("short-limit-rm", {}, "truncation", "fail", "cuts the response"),
    "bf16": ("bf16-fragile-rm", {"dtype": "bfloat16"}, "numerics", "fail", "flip order"),
}


@pytest.mark.parametrize("defect", DEFECTS)
def test_each_defect_is_found_its_printed_fix_followed_and_the_finding_gone(
    defect, defective, items
):
    name, options, check_name, status, cause = DEFECTS[defect]
    checks = build(HFClassifier, model=defective[name], **options).scoring_checks(items)
    found = by_name(checks)[check_name]
    assert found.status == status and cause in found.finding, found.finding
    fix = followed(found)
    fixed = build(HFClassifier, model=defective[name], **{**options, **fix}).scoring_checks(items)
    assert fixed.status == "pass", (fix, [c.finding for c in fixed.warnings()])


def test_padding_is_told_apart_from_noise_and_rounding(defective, items):
    """The same batch gap, three causes: padding (two passes alone agree), the model's own
    noise (they differ as much), bfloat16 rounding (a gap within a few rounding steps)."""
    padding = by_name(
        build(
            HFClassifier, model=defective["last-token-rm"], trust_remote_code=True
        ).scoring_checks(items)
    )["batch invariance"]
    assert padding.figures["difference between two passes alone"] == 0
    assert padding.fix.startswith("set batch_size = 1 (--batch-size 1)")
    dropout = build(HFClassifier, model=defective["dropout-rm"], trust_remote_code=True)
    noisy = by_name(dropout.scoring_checks(items))["batch invariance"]
    assert "the model's own noise, not the batch" in noisy.finding
    assert noisy.fix.startswith("set config_overrides = { dropout_at_inference = 0 }")
    assert "batch_size" not in noisy.fix
    bf16 = build(HFClassifier, model=defective["bf16-fragile-rm"], dtype="bfloat16")
    rounding = by_name(bf16.scoring_checks(items))["batch invariance"]
    assert rounding.status == "pass"
    assert rounding.figures["difference in rounding steps"] <= 4


def test_dropout_left_on_at_inference_is_traced_to_its_config_setting(defective, items):
    """Its correct twin, mask-token-rm (same class and weights, no dropout), passes every
    check (test_correct_classifiers_pass_every_check_and_score_as_alone)."""
    rm = build(HFClassifier, model=defective["dropout-rm"], trust_remote_code=True)
    check = by_name(rm.scoring_checks(items))["determinism"]
    assert check.figures["items scored twice"] == 4 and check.figures["largest difference"] > 0
    assert "dropout_at_inference = 0.5 turns it on" in check.finding
    # independently: the same items scored twice do not agree; deterministic = true does
    # not stop it (the advice this check gave before), the config setting does
    assert rm.score(items) != rm.score(items)
    kept_on = build(
        HFClassifier, model=defective["dropout-rm"], trust_remote_code=True, deterministic=True
    )
    assert kept_on.score(items) != kept_on.score(items)
    off = build(
        HFClassifier,
        model=defective["dropout-rm"],
        trust_remote_code=True,
        config_overrides={"dropout_at_inference": 0},
    )
    assert off.score(items) == off.score(items)


def test_a_config_override_the_config_lacks_is_bad_input_naming_it(tiny_models, items):
    from rmaudit.errors import BadInput

    rm = build(HFClassifier, model=tiny_models["gpt2-rm"], config_overrides={"no_such": 1})
    with pytest.raises(BadInput) as caught:
        rm.score(items[:1])
    assert caught.value.field == "config_overrides.no_such" and caught.value.value == 1


def test_the_checks_score_the_sample_as_the_run_does(tiny_models, items):
    """The sample's scores the run keeps are those ``score`` gives in the run's batches."""
    rm = build(HFClassifier, model=tiny_models["llama-rm"])
    kept = np.array(rm.scoring_checks(items).scores)
    scored = np.array(build(HFClassifier, model=tiny_models["llama-rm"]).score(items))
    assert len(kept) == len(items)
    assert np.max(np.abs(kept - scored)) <= 1e-5 * max(1.0, float(np.max(np.abs(scored))))
    # counted as scored, but left out of the batch dependence a run without the checks
    # measures after it: that re-scores alone only the run's own first scores
    assert rm.report()["inputs scored"] == len(items)
    assert rm.batch_dependence() is None
    rm.score(items[:3])
    assert rm.batch_dependence().figures["items compared"] == 3


def independent_truncation(path: str, items, max_length: int, side: str) -> tuple[int, int]:
    """(inputs over max_length, responses cut), counted with the tokenizer alone: the
    conversation rendered by its chat template, the response's first token where the prompt
    rendered with the generation prompt stops, its last before the template's closing text."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    over = cut = 0
    for prompt, response in items:
        messages = [
            {"role": "user", "content": prompt.text},
            {"role": "assistant", "content": response.text},
        ]
        full = tokenizer(
            tokenizer.apply_chat_template(messages, tokenize=False), add_special_tokens=False
        )["input_ids"]
        start = len(
            tokenizer(
                tokenizer.apply_chat_template(
                    messages[:1], tokenize=False, add_generation_prompt=True
                ),
                add_special_tokens=False,
            )["input_ids"]
        )
        end = len(full) - len(
            tokenizer(f"{tokenizer.eos_token}\n", add_special_tokens=False)["input_ids"]
        )
        if len(full) > max_length:
            over += 1
            kept = (len(full) - max_length, len(full)) if side == "left" else (0, max_length)
            cut += not (kept[0] <= start and end <= kept[1])
    return over, cut


@pytest.mark.parametrize("side", ["left", "right"])
def test_a_max_length_that_cuts_responses_is_caught_and_counted(side, tiny_models, items):
    path = tiny_models["gpt2-rm"]
    rm = build(HFClassifier, model=path, max_length=40, truncation_side=side)
    check = by_name(rm.scoring_checks(items))["truncation"]
    over, cut = independent_truncation(path, items, 40, side)
    assert cut > 0
    assert check.figures["inputs over max_length"] == over
    assert check.figures["responses cut"] == cut
    assert check.status == "fail"
    assert f"cuts the response of {cut} of {len(items)} sampled inputs" in check.finding
    # every item fits the model's 256 positions
    assert check.fix == "set max_length = 256 (--max-length 256)"


def rendered(length: int, response_start: int, max_length: int, side: str) -> RenderedInput:
    full = list(range(length))
    ids = full[-max_length:] if side == "left" else full[:max_length]
    return RenderedInput(None, ids, full, response_start, length - 1)


def test_truncation_recommends_the_left_side_when_the_position_limit_is_short():
    items = [rendered(300, 200, 128, "right"), rendered(60, 20, 128, "right")]
    check = truncation(items, max_length=128, side="right", position_limit=128)
    assert check.status == "fail" and check.figures["responses cut"] == 1
    assert check.fix == (
        'set truncation_side = "left" and max_length = 128 '
        "(--truncation-side left --max-length 128)"
    )
    too_long = [rendered(300, 10, 128, "left")]
    check = truncation(too_long, max_length=128, side="left", position_limit=128)
    assert check.fix.startswith("none keeps every response whole")
    prompt_only = truncation(
        [rendered(300, 200, 128, "left")], max_length=128, side="left", position_limit=128
    )
    assert prompt_only.status == "pass" and "1 lost prompt tokens only" in prompt_only.finding


def test_inputs_past_the_tokenizer_s_limit_are_scored_and_checked_without_its_warning(
    defective, items
):
    """The tokenizer's own warning ("sequence length is longer than the specified maximum")
    is silenced where rmaudit loads it: rmaudit cuts each input at max_length itself, and
    the truncation check and the RM's report count what is cut."""
    records: list[logging.LogRecord] = []

    class Kept(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Kept()
    transformers_logger = logging.getLogger("transformers")
    transformers_logger.addHandler(handler)
    try:
        rm = build(HFClassifier, model=defective["short-limit-rm"])
        checks = rm.scoring_checks(items)
        rm.score(items)
    finally:
        transformers_logger.removeHandler(handler)
    said = [r.getMessage() for r in records]
    assert not [line for line in said if "longer than the specified maximum" in line], said
    limit = rm.tokenizer.model_max_length
    over = sum(len(ids) > limit for ids in rm.tokenizer([r.text for _, r in items])["input_ids"])
    assert over > 0 and by_name(checks)["truncation"].figures["inputs over max_length"] > 0
    assert rm.report()["inputs truncated"] > 0


def test_a_template_finding_no_checked_template_removes_prints_no_template_as_its_fix():
    """A fix is printed only once checked: where no change of the template in use was checked
    to remove a finding (None given), the fix line says so and no fixed template is kept."""
    unclosed = RenderedInput("text", [1, 5, 6], [1, 5, 6], 1, 3)
    doubled = RenderedInput("text", [1, 1, 5, 2], [1, 1, 5, 2], 2, 3)
    for items, status in (([unclosed], "warn"), ([doubled], "fail")):
        check = template(items, source="the tokenizer's chat template", bos_id=1, closing_ids={2})
        assert check.status == status
        assert check.fix.startswith("none checked to remove it: "), check.fix
        assert "fixed template" not in check.figures


def test_bfloat16_scores_that_reorder_pairs_fail_numerics(defective, tiny_models, items):
    fragile = build(HFClassifier, model=defective["bf16-fragile-rm"], dtype="bfloat16")
    check = by_name(fragile.scoring_checks(items))["numerics"]
    assert check.status == "fail"
    assert check.figures["run dtype"] == "bfloat16" and check.figures["compared with"] == "float32"
    assert check.figures["pairs flipped"] > 0.05 * check.figures["pairs compared"]
    assert "flip order" in check.finding and check.fix == 'set dtype = "float32" (--dtype float32)'
    # independently: the float32 twin's scores, each item alone, order the pairs the bf16
    # ones do not, on the sample but its longest input (which numerics leaves out)
    lengths = [len(ids) for ids in fragile.scored_ids(items)]
    compared = [item for i, item in enumerate(items) if i != int(np.argmax(lengths))]
    twin = build(HFClassifier, model=defective["bf16-fragile-rm"])
    float32 = np.array([twin.score([item])[0] for item in compared])
    bf16 = np.array([fragile.score([item])[0] for item in compared])
    upper = np.triu_indices(len(compared), 1)
    reference = np.sign(float32[:, None] - float32[None, :])[upper]
    observed = np.sign(bf16[:, None] - bf16[None, :])[upper]
    counted = reference != 0
    assert check.figures["pairs flipped"] == int(np.sum(observed[counted] != reference[counted]))
    # without the defect, bfloat16 keeps the order
    healthy = build(HFClassifier, model=tiny_models["gpt2-rm"], dtype="bfloat16")
    assert by_name(healthy.scoring_checks(items))["numerics"].status == "pass"


def test_a_text_pair_s_truncation_is_counted_as_the_tokenizer_cuts_it(tiny_models, items):
    """DeBERTa-style (prompt, response) pairs: the tokenizer's own truncation (longest first)
    decides what is cut; its token types say how much of the response it kept."""
    path = tiny_models["deberta-rm"]
    check = by_name(build(HFClassifier, model=path, max_length=40).scoring_checks(items))[
        "truncation"
    ]
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    over = cut = 0
    for prompt, response in items:
        full = tokenizer(prompt.text, response.text)
        kept = tokenizer(prompt.text, response.text, truncation=True, max_length=40)
        over += len(full["input_ids"]) > 40
        cut += sum(kept["token_type_ids"]) < sum(full["token_type_ids"])
    assert cut > 0
    assert check.figures["inputs over max_length"] == over
    assert check.figures["responses cut"] == cut
    assert check.status == "fail" and check.fix == "set max_length = 256 (--max-length 256)"


def test_a_float32_run_predicts_bfloat16_flips_from_enough_pairs(defective, items):
    """A model that flips about an eighth of its pairs in bfloat16: a float32 run says so
    from every sampled item but the longest (105 pairs; 4 items, 6 pairs, showed none), with
    the figures a bfloat16 run of the same model measures."""
    float32 = by_name(build(HFClassifier, model=defective["bf16-flaky-rm"]).scoring_checks(items))[
        "numerics"
    ]
    bf16 = by_name(
        build(HFClassifier, model=defective["bf16-flaky-rm"], dtype="bfloat16").scoring_checks(
            items
        )
    )["numerics"]
    assert float32.status == "pass" and bf16.status == "fail"
    assert float32.figures["pairs compared"] == bf16.figures["pairs compared"] == 105
    assert float32.figures["pairs flipped"] == bf16.figures["pairs flipped"]
    assert float32.figures["share flipped"] > 0.05
    assert "keep this model in float32" in float32.finding


def test_the_forward_check_compares_rmaudit_s_pooling_with_the_model_s_forward(tiny_models, items):
    """A decoder classifier is scored through its base model and score head, not its own
    forward: the check says so, and its figure is that path against the model's forward,
    computed here with transformers alone on the four shortest items."""
    rm = build(HFClassifier, model=tiny_models["llama-rm"])
    check = by_name(rm.scoring_checks(items))["forward"]
    assert check.status == "pass" and "bypasses the model's forward" in check.finding
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        tiny_models["llama-rm"]
    ).eval()
    lengths = [len(ids) for ids in rm.scored_ids(items)]
    shortest = sorted(range(len(items)), key=lambda i: (lengths[i], i))[:4]
    chosen = [items[i] for i in sorted(shortest)]
    with torch.no_grad():
        own = [float(model(torch.tensor([ids])).logits[0].mean()) for ids in rm.scored_ids(chosen)]
    pooled = np.array([rm.score([item])[0] for item in chosen])
    assert check.figures["largest difference"] == pytest.approx(
        float(np.max(np.abs(np.array(own) - pooled))), abs=1e-6
    )
