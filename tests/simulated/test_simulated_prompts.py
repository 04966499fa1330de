"""The built-in prompt set: size, coverage of topics and tasks, and record shape."""

from __future__ import annotations

import collections
import re

from rmaudit.backends.simulated import SIMULATED_NOTICE, builtin_prompts
from rmaudit.backends.simulated.prompts import builtin_record, key_points_for


def test_at_least_300_prompts_over_10_topics_and_several_task_types(prompts):
    assert len(prompts) >= 300
    topics = collections.Counter(p["topic"] for p in prompts)
    assert len(topics) >= 10
    assert min(topics.values()) >= 15, topics
    assert len({p["task_type"] for p in prompts}) >= 6


def test_ids_and_texts_are_unique(prompts):
    assert len({p["id"] for p in prompts}) == len(prompts)
    assert len({p["text"] for p in prompts}) == len(prompts)
    assert all(re.fullmatch(r"[a-z]+-\d{3}", p["id"]) for p in prompts)


def test_records_have_four_to_eight_short_key_points(prompts):
    for record in prompts:
        assert set(record) == {"id", "text", "topic", "task_type", "key_points"}
        assert 4 <= len(record["key_points"]) <= 8, record["id"]
        for point in record["key_points"]:
            assert 0 < len(point.split()) <= 20, (record["id"], point)


def test_every_key_point_has_content_words_to_match_on(prompts):
    for record in prompts:
        for point in key_points_for(record["text"]):
            assert point.words, (record["id"], point.text)
            assert point.keyword in point.words


def test_builtin_prompts_returns_copies():
    first = builtin_prompts()
    first[0]["key_points"].append("tampered")
    first[0]["text"] = "tampered"
    second = builtin_prompts()
    assert "tampered" not in second[0]["key_points"]
    assert builtin_record(second[0]["text"])["key_points"] == second[0]["key_points"]


def test_notice_says_simulated():
    assert "simulated" in SIMULATED_NOTICE.lower()
    assert "\n" not in SIMULATED_NOTICE


def test_each_key_point_stated_alone_is_fully_covered(prompts):
    from rmaudit.backends.simulated import analyze_response

    for record in prompts:
        for point in record["key_points"]:
            sentence = point[0].upper() + point[1:] + "."
            f = analyze_response(record["text"], sentence)
            assert f.key_points_covered >= 1 and f.coverage * f.n_key_points >= 0.99, (
                record["id"],
                point,
            )
