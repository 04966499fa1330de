"""hf-causal-lm: per-item deterministic sampling in batches, and what each response records."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from rmaudit.backends.hf import sampling  # noqa: E402
from rmaudit.components import Prompt  # noqa: E402
from rmaudit.default_plugins.huggingface import HFCausalLM  # noqa: E402
from rmaudit.recipe.validation import validate_options  # noqa: E402
from rmaudit.testing import sample_prompts  # noqa: E402


def policy(**options) -> HFCausalLM:
    return HFCausalLM(
        validate_options(HFCausalLM, options, field="policy", file=None, base_dir=None)
    )


@pytest.fixture(scope="module")
def requests():
    """4 prompts of different token lengths (so batches are left-padded) × 3 sample indices."""
    return [(prompt, index) for prompt in sample_prompts() for index in range(3)]


def as_tuples(generations):
    return [(g.text, g.meta) for g in generations]


def test_each_sample_is_the_same_whatever_batch_it_is_drawn_in(tiny_models, requests):
    options = {
        "model": tiny_models["llama-lm"],
        "max_new_tokens": 10,
        "temperature": 1.0,
        "top_p": 0.95,
        "seed": 3,
    }
    together = as_tuples(policy(batch_size=len(requests), **options).generate(requests))
    small_batches = as_tuples(policy(batch_size=5, **options).generate(requests))
    model = policy(batch_size=1, **options)
    alone = [as_tuples(model.generate([request]))[0] for request in requests]
    reversed_ = as_tuples(policy(batch_size=4, **options).generate(requests[::-1]))[::-1]
    assert small_batches == together and alone == together and reversed_ == together
    texts = [text for text, _ in together]
    assert len(set(texts)) == len(texts)  # each (prompt, sample index) has its own draw
    reseeded = policy(batch_size=len(requests), **{**options, "seed": 4}).generate(requests)
    assert all(g.text != text for g, text in zip(reseeded, texts, strict=True))


def greedy_reference(path: str, prompt: str, max_new_tokens: int) -> tuple[list[int], list[int]]:
    """(prompt ids, new ids) from transformers' own greedy decoding of one unpadded prompt."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path).eval()
    prompt_ids = tokenizer.apply_chat_template(
        [{"role": "user", "content": prompt}], add_generation_prompt=True, return_dict=False
    )
    with torch.no_grad():
        out = model.generate(
            torch.tensor([prompt_ids]),
            do_sample=False,
            max_new_tokens=max_new_tokens,
            pad_token_id=tokenizer.eos_token_id,
        )
    return prompt_ids, out[0, len(prompt_ids) :].tolist()


def test_greedy_and_a_tiny_nucleus_decode_as_transformers_greedy_does(tiny_models, requests):
    path = tiny_models["gpt2-lm"]
    prompt = requests[0][0]
    prompt_ids, new_ids = greedy_reference(path, prompt.text, max_new_tokens=8)
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    expected = tokenizer.decode(new_ids, skip_special_tokens=True)
    for options in ({"temperature": 0.0}, {"temperature": 1.0, "top_p": 1e-6}):
        generated = policy(model=path, max_new_tokens=8, **options).generate([(prompt, 0)])[0]
        assert generated.text == expected, options


def test_meta_records_the_settings_and_the_perplexity_under_the_policy(tiny_models, requests):
    path = tiny_models["gpt2-lm"]
    prompt = requests[0][0]
    generated = policy(model=path, max_new_tokens=8, temperature=0.0, top_p=0.5, seed=11).generate(
        [(prompt, 0)]
    )[0]
    prompt_ids, new_ids = greedy_reference(path, prompt.text, max_new_tokens=8)
    model = transformers.AutoModelForCausalLM.from_pretrained(path).eval()
    with torch.no_grad():
        logits = model(torch.tensor([prompt_ids + new_ids])).logits[0].double()
    logprobs = [
        torch.log_softmax(logits[j - 1], -1)[token].item()
        for j, token in enumerate(new_ids, start=len(prompt_ids))
    ]
    meta = dict(generated.meta)
    assert meta.pop("perplexity") == pytest.approx(math.exp(-np.mean(logprobs)), rel=1e-5)
    assert meta.pop("logprob") == pytest.approx(sum(logprobs), rel=1e-5)
    assert meta == {
        "model": path,
        "revision": None,
        "temperature": 0.0,
        "top_p": 0.5,
        "max_new_tokens": 8,
        "seed": 11,
        "new_tokens": 8,
        "finish_reason": "length",
    }


def test_draws_follow_temperature_and_nucleus(tiny_models):
    """First tokens of many seeded rows: always inside the nucleus of the tempered
    distribution (computed here independently), and the top token about as often as its
    renormalised probability says."""
    path, temperature, top_p = tiny_models["gpt2-lm"], 0.7, 0.8
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path).eval()
    prompt_ids = tokenizer.apply_chat_template(
        [{"role": "user", "content": sample_prompts()[2].text}],
        add_generation_prompt=True,
        return_dict=False,
    )
    with torch.no_grad():
        logits = model(torch.tensor([prompt_ids])).logits[0, -1].double()
    probs = torch.softmax(logits / temperature, -1).numpy()
    order = np.argsort(-probs, kind="stable")
    nucleus = order[np.cumsum(probs[order]) - probs[order] < top_p]
    assert 1 < len(nucleus) < len(probs)  # the check below can tell a nucleus from no nucleus
    draws = 400
    first_ids = [
        new[0]
        for new in sampling.generate(
            model,
            [prompt_ids] * draws,
            range(draws),
            pad_id=0,
            eos_ids=[],
            temperature=temperature,
            top_p=top_p,
            max_new_tokens=1,
        )
    ]
    assert set(first_ids) <= set(nucleus.tolist())
    p_top = probs[nucleus[0]] / probs[nucleus].sum()
    share = first_ids.count(int(nucleus[0])) / draws
    assert abs(share - p_top) < 4 * math.sqrt(p_top * (1 - p_top) / draws)


def test_a_multi_turn_prompt_is_answered_turn_by_turn(tiny_models):
    """Greedy answers: the second is what the model says to the first turn, its answer and
    the second turn as one conversation."""
    path = tiny_models["llama-lm"]
    turns = ["Write a two-line poem about rain.", "Now make it about sun."]
    multi = Prompt("mt", " ".join(turns), {"turns": turns})
    [answer] = policy(model=path, max_new_tokens=6, temperature=0.0).generate([(multi, 0)])
    first, second = answer.meta["turns"]
    assert answer.text == second
    conversation = [
        {"role": "user", "content": turns[0]},
        {"role": "assistant", "content": first},
        {"role": "user", "content": turns[1]},
    ]
    [alone] = policy(model=path, max_new_tokens=6, temperature=0.0).generate(
        [(Prompt("dialogue", turns[1], {"messages": conversation}), 0)]
    )
    assert alone.text == second and "turns" not in alone.meta
    [first_alone] = policy(model=path, max_new_tokens=6, temperature=0.0).generate(
        [(Prompt("first", turns[0]), 0)]
    )
    assert first == first_alone.text
    # each turn's perplexity is that answer's own, in its conversation (RETA Sec. 4.3's PPL(a|q))
    assert answer.meta["turn_perplexities"] == pytest.approx(
        [first_alone.meta["perplexity"], alone.meta["perplexity"]], rel=1e-6
    )
    assert answer.meta["turn_logprobs"] == pytest.approx(
        [first_alone.meta["logprob"], alone.meta["logprob"]], rel=1e-6
    )
    assert answer.meta["turn_new_tokens"] == [
        first_alone.meta["new_tokens"],
        alone.meta["new_tokens"],
    ]
    assert answer.meta["perplexity"] == answer.meta["turn_perplexities"][-1]


def test_generation_stops_after_the_first_eos(tiny_models):
    path = tiny_models["gpt2-lm"]
    model = transformers.AutoModelForCausalLM.from_pretrained(path).eval()
    prompt_ids, greedy = greedy_reference(path, sample_prompts()[0].text, max_new_tokens=6)
    stop = greedy[2]  # treat the third greedy token as EOS
    [new] = sampling.generate(
        model,
        [prompt_ids],
        [0],
        pad_id=0,
        eos_ids=[stop],
        temperature=0.0,
        top_p=1.0,
        max_new_tokens=6,
    )
    assert new == greedy[: greedy.index(stop) + 1]


def test_a_prompt_s_samples_share_one_prefill_and_draw_what_unshared_rows_draw(
    tiny_models, requests
):
    options = {
        "model": tiny_models["llama-lm"],
        "max_new_tokens": 8,
        "temperature": 1.0,
        "top_p": 0.9,
        "seed": 5,
        "batch_size": len(requests),
    }
    shared = policy(**options)
    shared._load()
    passes = []
    shared.model.register_forward_pre_hook(
        lambda module, args, kwargs: passes.append(tuple(kwargs.get("input_ids", *args).shape)),
        with_kwargs=True,
    )
    generated = as_tuples(shared.generate(requests))
    assert generated == as_tuples(policy(share_prefill=False, **options).generate(requests))
    width = max(
        len(shared._prompt_ids([{"role": "user", "content": p.text}], p)) for p, _ in requests
    )
    # 4 distinct prompts (all but their last token) once, then every row from its last token
    assert passes[:2] == [(4, width - 1), (len(requests), 1)]
