"""The simulated policy: determinism, variety, robustness to arbitrary prompts."""

from __future__ import annotations

import json
import statistics

from rmaudit.backends.simulated import SimulatedPolicy, analyze_response
from rmaudit.backends.simulated.prompts import key_points_for


def test_same_arguments_give_the_same_text_and_metadata(prompts):
    prompt = prompts[5]
    a = SimulatedPolicy(seed=3).generate(prompt["text"], prompt, 7)
    b = SimulatedPolicy(seed=3).generate(prompt["text"], prompt, 7)
    assert a == b


def test_output_does_not_depend_on_call_order(prompts):
    jobs = [(p, i) for p in prompts[:10] for i in range(5)]
    forward = {(p["id"], i): SimulatedPolicy().generate(p["text"], p, i) for p, i in jobs}
    policy = SimulatedPolicy()
    backward = {(p["id"], i): policy.generate(p["text"], p, i) for p, i in reversed(jobs)}
    assert forward == backward


def test_responses_vary_across_sample_indices_and_seeds(prompts):
    prompt = prompts[0]
    texts = {SimulatedPolicy().generate(prompt["text"], prompt, i)[0] for i in range(50)}
    assert len(texts) == 50
    assert (
        SimulatedPolicy(seed=1).generate(prompt["text"], prompt, 0)[0]
        != SimulatedPolicy(seed=2).generate(prompt["text"], prompt, 0)[0]
    )


def test_works_on_an_arbitrary_prompt_without_metadata():
    prompt = (
        "Human: My neighbor keeps parking across my driveway every morning. "
        "What can I do about it?\n\nAssistant:"
    )
    policy = SimulatedPolicy()
    texts = [policy.generate(prompt, None, i)[0] for i in range(40)]
    assert len(set(texts)) == 40
    assert all(policy.generate(prompt, {}, i)[0] == texts[i] for i in range(5))
    # The pseudo key points come from the prompt's own words, and responses cover them.
    points = key_points_for(prompt)
    assert 4 <= len(points) <= 6
    assert {p.keyword for p in points} & {"neighbor", "driveway", "parking", "morning"}
    assert statistics.mean(analyze_response(prompt, t).coverage for t in texts) > 0.4


def test_texts_are_30_to_400_words_and_metadata_is_json(prompts):
    policy = SimulatedPolicy()
    for prompt in prompts[::10]:
        for i in range(20):
            text, meta = policy.generate(prompt["text"], prompt, i)
            assert 30 <= len(text.split()) <= 400, text
            assert json.loads(json.dumps(meta)) == meta
            assert meta["simulated"] is True


def test_all_modes_occur_and_shallow_answers_are_longest(prompts):
    policy = SimulatedPolicy()
    words: dict[str, list[int]] = {}
    for prompt in prompts[:100]:
        for i in range(30):
            text, meta = policy.generate(prompt["text"], prompt, i)
            words.setdefault(meta["mode"], []).append(len(text.split()))
    assert set(words) == {"standard", "verbose-shallow", "sycophantic", "refusal"}
    assert statistics.mean(words["verbose-shallow"]) > 1.5 * statistics.mean(words["standard"])


def test_the_analyzer_reads_back_what_the_policy_wrote(prompts):
    policy = SimulatedPolicy()
    agree = total = 0
    for prompt in prompts[::3]:
        for i in range(10):
            text, meta = policy.generate(prompt["text"], prompt, i)
            f = analyze_response(prompt["text"], text)
            total += 1
            agree += (f.padding, f.hedges, f.drift, f.refusal) == (
                meta["padding"],
                meta["hedges"],
                meta["drift"],
                meta["refusal"],
            )
            assert f.key_points_covered >= len(meta["covered"])
    assert agree / total > 0.97


def test_quality_raises_substance(prompts):
    def mean_coverage(quality):
        policy = SimulatedPolicy(quality=quality)
        return statistics.mean(
            analyze_response(p["text"], policy.generate(p["text"], p, i)[0]).coverage
            for p in prompts[:40]
            for i in range(10)
        )

    assert mean_coverage(1.0) > mean_coverage(0.0) + 0.05
