"""Final-answer extraction and checking for tasks with verifiable answers.

Pure functions on strings, no rmaudit needed.  A response's *final answer* is found in this
order of precedence, the last occurrence winning within each rule (responses often restate a
draft answer before correcting it):

1. ``\\boxed{...}`` (braces may nest: ``\\boxed{\\frac{1}{2}}``);
2. an answer statement: "answer: X", "answer is X", "final answer = X" (to the end of the line);
3. the whole response.

The candidate is then read according to the kind of answer:

* ``numeric``: the first number of an answer statement ("The answer is 12. (Not 13.)"),
  else the last number of the candidate — integers, decimals, thousands separators
  (``1,234.5``), scientific notation, fractions (``3/4``, ``\\frac{3}{4}``), a sign, with
  currency symbols and units around it ignored; compared with a tolerance;
* ``choice``: a multiple-choice letter A-J — the letter that opens an answer statement, else
  the last "(B)", "B)", "B." or lone "B" of the candidate;
* ``exact``: the text, normalised — lower-cased, LaTeX text wrappers, punctuation, the articles
  a/an/the and extra whitespace removed (SQuAD's normalisation).

>>> check("So 12 + 30 = 42. The answer is 42.", "42", "numeric")
True
>>> extract_choice("I'd go with (c) because ...")
'C'
>>> normalize_text("The  Eiffel Tower!")
'eiffel tower'
"""

from __future__ import annotations

import math
import re
import string
from fractions import Fraction
from typing import Literal

Kind = Literal["numeric", "choice", "exact"]

_LEADING_CHOICE = re.compile(r"^\(?\s*([A-J])(?![A-Za-z])|^\(\s*([a-j])\s*\)")
_ANSWER_STATEMENT = re.compile(
    r"(?:final\s+answer|answer)\s*(?:is|:|=)\s*:?\s*(?P<answer>[^\n]+)", re.IGNORECASE
)
_LATEX_FRACTION = re.compile(r"\\[dt]?frac\s*\{\s*([-+]?[\d.]+)\s*\}\s*\{\s*([-+]?[\d.]+)\s*\}")
_NUMBER = re.compile(
    r"(?<![\w.])[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?"
    r"(?:\s*/\s*\d+(?:\.\d+)?)?"
    r"|(?<![\w.])[-+−]?\.\d+"
)
_CHOICE_PATTERNS = (
    re.compile(r"\(\s*([A-Ja-j])\s*\)"),  # (B)
    re.compile(r"(?:^|\s)([A-J])(?:\)|\.|:)(?=\s|$)"),  # B)  B.  B:
    re.compile(r"(?:^|\s)([A-J])(?=\s*$)"),  # a lone capital letter at the end
    re.compile(r"(?:option|choice|letter)\s+([A-Ja-j])\b", re.IGNORECASE),
)
_TEXT_WRAPPERS = re.compile(r"\\(?:text|textbf|mathrm|mbox)\s*\{([^{}]*)\}")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


def boxed_contents(text: str) -> str | None:
    """The contents of the last ``\\boxed{...}`` (or ``\\fbox{...}``), nested braces included.

    >>> boxed_contents(r"so \\boxed{\\frac{1}{2}} and not \\boxed{3")
    '\\\\frac{1}{2}'
    """
    found = None
    for match in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        depth, start = 1, match.end()
        for i in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                found = text[start:i]
                break
    return found


def final_answer_span(text: str) -> str:
    """The part of a response that states its final answer (rules 1-3 of the module doc).

    >>> final_answer_span("First I thought 3.\\nFinal answer: 4 apples.\\nHope this helps")
    '4 apples.'
    """
    return _final_answer(text)[0]


def _final_answer(text: str) -> tuple[str, bool]:
    """(span, whether the span is an answer statement, which the answer opens)."""
    boxed = boxed_contents(text)
    if boxed is not None:
        return boxed, False
    statements = list(_ANSWER_STATEMENT.finditer(text))
    if statements:
        return statements[-1].group("answer").strip(), True
    return text, False


def parse_number(text: str, *, last: bool = True) -> Fraction | None:
    """The last (or first) number written in ``text``, exactly, as a Fraction; None if none.

    >>> parse_number("costs $1,234.50"), parse_number(r"\\frac{3}{4}"), parse_number("-2/8")
    (Fraction(2469, 2), Fraction(3, 4), Fraction(-1, 4))
    >>> parse_number("no digits here") is None
    True
    """
    text = _LATEX_FRACTION.sub(r"\1/\2", text)
    matches = _NUMBER.findall(text)
    if not matches:
        return None
    token = matches[-1 if last else 0].replace(",", "").replace("−", "-").replace(" ", "")
    numerator, _, denominator = token.partition("/")
    try:
        value = Fraction(numerator)
        if denominator:
            value /= Fraction(denominator)
    except (ValueError, ZeroDivisionError):
        return None
    return value


def extract_number(response: str) -> Fraction | None:
    """The final numeric answer of a response: the last number of its final-answer span."""
    span, stated = _final_answer(response)
    return parse_number(span, last=not stated)


def extract_choice(response: str) -> str | None:
    """The final multiple-choice letter (upper case) of a response; None if none is found.

    >>> extract_choice("Between (A) and (B), the answer is B.")
    'B'
    >>> extract_choice("I am not sure.") is None
    True
    """
    span, stated = _final_answer(response)
    leading = _LEADING_CHOICE.match(span) if stated else None
    if leading:
        return (leading.group(1) or leading.group(2)).upper()
    for pattern in _CHOICE_PATTERNS:
        found = pattern.findall(span)
        if found:
            return found[-1].upper()
    return None


def normalize_text(text: str) -> str:
    """SQuAD-style normalisation: lower case, no punctuation, articles or extra spaces."""
    text = _TEXT_WRAPPERS.sub(r"\1", text).lower()
    text = "".join(ch for ch in text if ch not in string.punctuation)
    return " ".join(_ARTICLES.sub(" ", text).split())


def numbers_match(got: Fraction, expected: Fraction, *, abs_tol: float, rel_tol: float) -> bool:
    """|got − expected| ≤ max(rel_tol · max(|got|, |expected|), abs_tol), as ``math.isclose``."""
    return math.isclose(float(got), float(expected), rel_tol=rel_tol, abs_tol=abs_tol)


def infer_kind(reference: str) -> Kind:
    """How to compare against a reference answer when the recipe does not say.

    >>> infer_kind("(C)"), infer_kind("-3.5"), infer_kind("The answer is 7."), infer_kind("Paris")
    ('choice', 'numeric', 'numeric', 'exact')
    """
    stripped = reference.strip()
    if re.fullmatch(r"\(?\s*[A-J]\s*\)?\.?", stripped):
        return "choice"
    if parse_number(final_answer_span(stripped)) is not None:
        return "numeric"
    return "exact"


def check(
    response: str, reference: str, kind: Kind, *, abs_tol: float = 1e-6, rel_tol: float = 1e-6
) -> bool:
    """Whether ``response``'s final answer matches ``reference`` (itself read by the same rules,
    so a worked reference solution such as MT-bench's works as well as a bare answer).

    >>> check(r"Thus $x = \\boxed{0.5}$.", "1/2", "numeric")
    True
    >>> check("Answer: (D)", "C", "choice")
    False
    >>> check("the answer is the Pacific Ocean", "Pacific ocean", "exact")
    True
    """
    if kind == "numeric":
        got, expected = extract_number(response), extract_number(reference)
        return (
            got is not None
            and expected is not None
            and numbers_match(got, expected, abs_tol=abs_tol, rel_tol=rel_tol)
        )
    if kind == "choice":
        got, expected = extract_choice(response), extract_choice(reference)
        return got is not None and got == expected
    expected = normalize_text(final_answer_span(reference))
    return bool(expected) and normalize_text(final_answer_span(response)) == expected
