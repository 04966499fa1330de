"""hf-prm-classifier and hf-prm-step-tag on tiny PRMs built offline (tests/_tiny_prm.py).

Every expected score comes from an independent computation: the model run by plain
transformers calls on one unpadded sequence, its logits read where the published code reads
them (Qwen2.5-Math-PRM's model card: the positions whose id is the separator's; Math-Shepherd's:
the positions whose id is the tag's), or the model run on each step's prefix alone.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from rmaudit.components import Solution  # noqa: E402
from rmaudit.default_plugins.huggingface import HFPRMClassifier, HFPRMStepTag  # noqa: E402
from rmaudit.default_plugins.huggingface.prm_classifier import (  # noqa: E402
    QWEN_MATH_SYSTEM_PROMPT,
)
from rmaudit.errors import BadInput  # noqa: E402
from rmaudit.recipe.validation import validate_options  # noqa: E402


def build(cls, **options):
    return cls(validate_options(cls, options, field=cls.name, file=None, base_dir=None))


def softmax(logits: torch.Tensor) -> np.ndarray:
    return logits.double().softmax(-1).numpy()


def separator_reference(path: str, auto_class, solutions, **load) -> list[list[float]]:
    """Qwen2.5-Math-PRM's model card, step by step: system, user and assistant messages
    (the steps each followed by <extra_0>) through the chat template, encoded, one forward
    pass, P(class 1) at every position whose id is <extra_0>'s."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = auto_class.from_pretrained(path, **load).eval()
    separator = tokenizer.encode("<extra_0>", add_special_tokens=False)[0]
    out = []
    for solution in solutions:
        messages = [
            {"role": "system", "content": QWEN_MATH_SYSTEM_PROMPT},
            {"role": "user", "content": solution.question},
            {"role": "assistant", "content": "<extra_0>".join(solution.steps) + "<extra_0>"},
        ]
        text = tokenizer.apply_chat_template(messages, tokenize=False)
        ids = torch.tensor([tokenizer.encode(text, add_special_tokens=False)])
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0]
        out.append(list(softmax(logits[ids[0] == separator])[:, 1]))
    return out


def tag_text(solution: Solution) -> str:
    """Math-Shepherd's input: the question, a space, then each step followed by " ки\\n"."""
    return f"{solution.question} " + "".join(f"{step} ки\n" for step in solution.steps)


def tag_reference(path: str, solutions) -> list[list[float]]:
    """Math-Shepherd's model card: P(+) against P(-) at every position whose id is the tag's,
    from the logits of one forward pass."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path).eval()
    tag = tokenizer.encode(" ки", add_special_tokens=False)[0]
    good, bad = (tokenizer.encode(t, add_special_tokens=False)[0] for t in ("+", "-"))
    out = []
    for solution in solutions:
        ids = torch.tensor([tokenizer.encode(tag_text(solution))])
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0][:, [good, bad]]
        out.append(list(softmax(logits[ids[0] == tag])[:, 0]))
    return out


def assert_close(got, expected, tol=1e-6):
    assert [len(s) for s in got] == [len(s) for s in expected]
    flat = lambda scores: np.array([s for steps in scores for s in steps])  # noqa: E731
    assert np.max(np.abs(flat(got) - flat(expected))) <= tol


def test_the_classifier_reads_the_separators_as_qwen_s_model_card_does(tiny_prms, solutions):
    prm = build(HFPRMClassifier, model=tiny_prms["token-prm"], batch_size=5)
    expected = separator_reference(
        tiny_prms["token-prm"], transformers.AutoModelForTokenClassification, solutions
    )
    assert_close(prm.score_steps(solutions), expected)
    assert np.std([s for steps in expected for s in steps]) > 0.05  # the scores differ


@pytest.mark.parametrize("model_class", ["auto", "auto-model"])
def test_a_custom_head_loads_as_auto_model_with_its_own_code(model_class, tiny_prms, solutions):
    """'auto' finds AutoModel mapped to the checkpoint's code in its config."""
    path = tiny_prms["custom-head-prm"]
    prm = build(HFPRMClassifier, model=path, model_class=model_class, trust_remote_code=True)
    expected = separator_reference(
        path, transformers.AutoModel, solutions[:6], trust_remote_code=True
    )
    assert_close(prm.score_steps(solutions[:6]), expected)


def test_a_custom_head_under_the_standard_class_is_refused_not_random(tiny_prms, solutions):
    """transformers would start a token classifier's head at random for a checkpoint whose
    head is its own: one line naming the model and the way out."""
    prm = build(
        HFPRMClassifier, model=tiny_prms["custom-head-prm"], model_class="token-classification"
    )
    with pytest.raises(BadInput) as caught:
        prm.score_steps(solutions[:1])
    message = str(caught.value)
    assert "\n" not in message and message.startswith("model: the checkpoint holds no weights")
    assert "they would be random" in message and "model_class = 'auto-model'" in message


def test_a_model_without_a_token_head_is_bad_input_naming_model_class(tiny_prms, solutions):
    prm = build(HFPRMClassifier, model=tiny_prms["tag-prm"], model_class="auto-model")
    with pytest.raises(BadInput, match="^model_class: the model gives no per-token class"):
        prm.score_steps(solutions[:1])


def test_remote_code_is_not_run_unless_asked(tiny_prms, solutions):
    """Without trust_remote_code transformers loads the custom head's base model alone: one
    line saying the head needs the checkpoint's own code."""
    prm = build(HFPRMClassifier, model=tiny_prms["custom-head-prm"])
    with pytest.raises(BadInput) as caught:
        prm.score_steps(solutions[:1])
    message = str(caught.value)
    assert message.startswith("trust_remote_code: the checkpoint's head is in its own code")
    assert message.endswith("(got False)") and "\n" not in message


def test_the_step_tag_model_reads_the_tags_as_math_shepherd_s_model_card_does(tiny_prms, solutions):
    prm = build(HFPRMStepTag, model=tiny_prms["tag-prm"], good_token="+", batch_size=3)
    expected = tag_reference(tiny_prms["tag-prm"], solutions)
    assert_close(prm.score_steps(solutions), expected)
    assert np.std([s for steps in expected for s in steps]) > 0.05


def test_a_step_s_score_is_the_model_s_on_that_step_s_prefix_alone(tiny_prms, solutions):
    """Causal: step k's score is what the model predicts after the text up to its tag."""
    path = tiny_prms["tag-prm"]
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path).eval()
    good, bad = (tokenizer.encode(t, add_special_tokens=False)[0] for t in ("+", "-"))
    solution = max(solutions, key=lambda s: len(s.steps))
    expected = []
    for k in range(1, len(solution.steps) + 1):
        prefix = tag_text(Solution(solution.question, solution.steps[:k])).removesuffix("\n")
        with torch.no_grad():
            logits = model(torch.tensor([tokenizer.encode(prefix)])).logits[0, -1, [good, bad]]
        expected.append(float(softmax(logits)[0]))
    got = build(HFPRMStepTag, model=path).score_steps([solution])[0]
    assert np.max(np.abs(np.array(got) - expected)) <= 1e-6


def test_pieces_tokenises_as_trl_writes_a_prm_s_inputs(tiny_prms, solutions):
    """TRL's PRM trainer: BOS, the prompt's ids, then each step's ids and the separator's,
    each tokenised alone; the score at each separator's last token."""
    path = tiny_prms["token-prm"]
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForTokenClassification.from_pretrained(path).eval()

    def encode(text: str) -> list[int]:
        return tokenizer.encode(text, add_special_tokens=False)

    expected = []
    for solution in solutions:
        ids, at = [tokenizer.bos_token_id, *encode(solution.question)], []
        for step in solution.steps:
            ids += encode(step) + encode("\n\n")
            at.append(len(ids) - 1)
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0]
        expected.append(list(softmax(logits[at])[:, 1]))
    prm = build(HFPRMClassifier, model=path, separator="\n\n", format="plain", tokenize="pieces")
    assert_close(prm.score_steps(solutions), expected)


def test_steps_past_max_length_are_read_from_the_tokens_that_end_at_them(tiny_prms, solutions):
    path = tiny_prms["tag-prm"]
    limit = 24
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path).eval()
    tag = tokenizer.encode(" ки", add_special_tokens=False)[0]
    good, bad = (tokenizer.encode(t, add_special_tokens=False)[0] for t in ("+", "-"))
    expected, cut = [], 0
    for solution in solutions:
        ids = tokenizer.encode(tag_text(solution))
        scores = []
        for at in (j for j, token in enumerate(ids) if token == tag):
            window = ids[max(0, at + 1 - limit) : at + 1] if at >= limit else ids[:limit]
            read = len(window) - 1 if at >= limit else at
            cut += at >= limit
            with torch.no_grad():
                logits = model(torch.tensor([window])).logits[0, read, [good, bad]]
            scores.append(float(softmax(logits)[0]))
        expected.append(scores)
    prm = build(HFPRMStepTag, model=path, max_length=limit)
    assert_close(prm.score_steps(solutions), expected)
    report = prm.report()
    assert cut > 0 and report["steps read from a cut input"] == cut
    assert report["solutions over max_length"] == sum(
        len(tokenizer.encode(tag_text(s))) > limit for s in solutions
    )


@pytest.mark.parametrize(
    ("cls", "options", "field", "problem"),
    [
        (HFPRMClassifier, {"separator": "<step>"}, "separator", "not a token of the tokenizer"),
        (HFPRMStepTag, {"step_tag": "<tag>"}, "step_tag", "not a token of the tokenizer"),
        (HFPRMStepTag, {"good_token": "good"}, "good_token", "not a token of the tokenizer"),
        (HFPRMClassifier, {"positive_label": 2}, "positive_label", "has 2 classes per token"),
    ],
)
def test_a_marker_or_class_the_model_lacks_is_one_line_of_bad_input(
    cls, options, field, problem, tiny_prms, solutions
):
    model = tiny_prms["token-prm" if cls is HFPRMClassifier else "tag-prm"]
    prm = build(cls, model=model, **options)
    with pytest.raises(BadInput) as caught:
        prm.score_steps(solutions[:2])
    message = str(caught.value)
    assert message.startswith(f"{field}: ") and problem in message and "\n" not in message
    assert repr(options[field]) in message


def test_a_solution_with_no_steps_is_bad_input_before_any_model_loads(tiny_prms):
    prm = build(HFPRMClassifier, model=tiny_prms["token-prm"])
    empty = [Solution("What is 1 + 1?", ())]
    with pytest.raises(BadInput, match="^steps: a solution with no steps has no step to score"):
        prm.check_solutions(empty)
    with pytest.raises(BadInput, match="^steps: "):
        prm.score_steps(empty)
    assert not prm._loaded


def test_a_chat_template_that_rewrites_the_steps_is_bad_input(tiny_prms, solutions, tmp_path):
    path = tiny_prms["token-prm"]
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] | upper }}\n{% endfor %}"
    tokenizer.save_pretrained(tmp_path / "shouting")
    transformers.AutoModelForTokenClassification.from_pretrained(path).save_pretrained(
        tmp_path / "shouting"
    )
    prm = build(HFPRMClassifier, model=str(tmp_path / "shouting"))
    with pytest.raises(BadInput, match="^format: the chat template does not write the steps"):
        prm.score_steps(solutions[:1])


def test_options_that_change_scores_change_the_key_and_speed_options_do_not(tiny_prms):
    base = build(HFPRMStepTag, model=tiny_prms["tag-prm"])
    faster = build(HFPRMStepTag, model=tiny_prms["tag-prm"], batch_size=32, prefetch=0)
    assert faster.key == base.key
    for option in ({"step_tag": "+"}, {"tokenize": "pieces"}, {"after_question": "\n"}):
        assert build(HFPRMStepTag, model=tiny_prms["tag-prm"], **option).key != base.key
    with pytest.raises(BadInput, match="good_token and bad_token must differ"):
        build(HFPRMStepTag, model=tiny_prms["tag-prm"], bad_token="+")
    assert not base._loaded and base.report() == {}


def test_the_report_and_sources_name_what_was_scored(tiny_prms, solutions):
    prm = build(HFPRMClassifier, model=tiny_prms["token-prm"], revision=None)
    prm.score_steps(solutions[:4])
    report = prm.report()
    assert report["solutions scored"] == 4
    assert report["steps scored"] == sum(len(s.steps) for s in solutions[:4])
    assert report["input format"] == "the tokenizer's chat template"
    assert report["steps read from a cut input"] == 0
    (source,) = prm.sources()
    assert (source.role, source.kind, source.location) == ("scores", "model", prm.options.model)
