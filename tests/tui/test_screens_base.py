"""The cycling the screens' keys share (s, t, r, c: the next sort, topic, RM, comparison)."""

from rmaudit.tui.screens._base import following


def test_following_steps_on_and_wraps_round():
    assert following(["a", "b", "c"], "a") == "b"
    assert following(["a", "b", "c"], "c") == "a"
    assert following([None, "x"], "x") is None


def test_following_a_value_that_is_none_of_the_options_turns_to_the_first():
    # a topic filter whose topic the reloaded rows no longer hold starts again from "all"
    assert following([None, "maths", "code"], "gone") is None
