"""Final-answer extraction and comparison."""

from __future__ import annotations

import doctest
from fractions import Fraction

import pytest

import rmaudit_verifiable.answers
from rmaudit_verifiable.answers import (
    check,
    extract_choice,
    extract_number,
    infer_kind,
    normalize_text,
)


@pytest.mark.parametrize(
    "response, number",
    [
        ("42", 42),
        ("First 3 apples, then 4 more: 7 in total.", 7),  # the last number
        ("The answer is 12. (I first thought 13.)", 12),  # a stated answer wins
        ("answer: -3.5 degrees", Fraction(-7, 2)),
        ("Final Answer = 1,234,567", 1234567),
        ("So x = \\boxed{\\frac{3}{4}} and we check 5 cases.", Fraction(3, 4)),  # boxed wins
        ("\\boxed{\\dfrac{-1}{2}}", Fraction(-1, 2)),
        ("It costs $1,200.50.", Fraction(240100, 200)),
        ("About 2.5e3 metres", 2500),
        ("ratio 3 / 4", Fraction(3, 4)),
        ("−5 (a typographic minus)", -5),
        ("growth of .5 percent", Fraction(1, 2)),
        ("No idea, sorry.", None),
        ("", None),
    ],
)
def test_extract_number(response, number):
    assert extract_number(response) == number


@pytest.mark.parametrize(
    "response, letter",
    [
        ("(B)", "B"),
        ("The answer is (c).", "C"),
        ("Answer: D", "D"),
        ("I considered (A) and (B) but the answer is C.", "C"),
        ("\\boxed{E}", "E"),
        ("Looking at the options, B) is right.", "B"),
        ("Option a is correct", "A"),
        ("The answer is C, not (B).", "C"),
        ("None of them.", None),
        ("", None),
    ],
)
def test_extract_choice(response, letter):
    assert extract_choice(response) == letter


@pytest.mark.parametrize(
    "response, reference, kind, correct",
    [
        ("The answer is 42.", "42", "numeric", True),
        ("The answer is 42.000001.", "42", "numeric", True),  # within rel_tol 1e-6
        ("The answer is 42.1.", "42", "numeric", False),
        ("We find 0.5", "1/2", "numeric", True),
        ("\\boxed{7}", "The total is 7 apples.", "numeric", True),  # a worked reference solution
        ("No number here", "3", "numeric", False),
        ("The answer is (B).", "B", "choice", True),
        ("The answer is (B).", "(C)", "choice", False),
        ("answer: The Eiffel Tower.", "eiffel tower", "exact", True),
        ("answer: Eiffel", "eiffel tower", "exact", False),
        ("", "Paris", "exact", False),
    ],
)
def test_check(response, reference, kind, correct):
    assert check(response, reference, kind) is correct


def test_tolerances_are_absolute_or_relative():
    assert check("0.0000005", "0", "numeric", abs_tol=1e-6)
    assert not check("0.0000005", "0", "numeric", abs_tol=1e-9)
    assert check("1010", "1000", "numeric", rel_tol=0.01)
    assert not check("1011", "1000", "numeric", rel_tol=0.01)


@pytest.mark.parametrize(
    "reference, kind",
    [
        ("C", "choice"),
        ("(a)", "exact"),
        ("(A)", "choice"),
        ("12", "numeric"),
        ("x = 2", "numeric"),
        ("Paris", "exact"),
        ("I", "choice"),
    ],
)
def test_infer_kind(reference, kind):
    assert infer_kind(reference) == kind


def test_normalize_text():
    assert normalize_text("  The \\text{Quick}, brown fox! ") == "quick brown fox"


def test_docstring_examples_run():
    assert doctest.testmod(rmaudit_verifiable.answers).failed == 0
