"""A template's placeholders, checked when it is read: what the oracle's templates
(``oracle_templates``) and a judge-under-audit's (``verdicts``) share."""

from __future__ import annotations

import re
import string

from rmaudit.errors import BadInput

#: the widest padding and the longest precision a placeholder's format spec may ask for: a
#: judge prompt padded to more is a typo (``{question:>99999999999}`` would ask for 100 GB)
MOST_FORMAT_WIDTH = 10_000
#: a format spec's width and precision (Python's format-spec mini-language, for text)
_WIDTH_PRECISION = re.compile(r"(?:.?[<>=^])?[-+ ]?z?#?0?(\d*)[,_]?(?:\.(\d*))?[a-zA-Z%]?")


def placeholders(text: str, name: str) -> set[str]:
    """The placeholders of a template's text; ``BadInput`` for one that formatting a text
    into would fail or exhaust memory (a bad conversion or spec, a width above
    :data:`MOST_FORMAT_WIDTH`), so a template is refused when read, not at its first call."""
    try:
        parsed = [
            (field, spec, conversion)
            for _, field, spec, conversion in string.Formatter().parse(text)
            if field is not None
        ]
    except ValueError as error:
        raise BadInput(
            f"template {name}: malformed placeholder ({error}); write literal braces "
            f"as {{{{ and }}}}"
        ) from None
    for field, spec, conversion in parsed:
        problem = _spec_problem(spec or "", conversion)
        if problem:
            shown = (
                f"{{{field}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}}"
            )
            raise BadInput(f"template {name}: placeholder {shown}: {problem}")
    return {field for field, _, _ in parsed}


def _spec_problem(spec: str, conversion: str | None) -> str | None:
    """Why formatting a text with ``conversion`` and ``spec`` fails (or asks for more than
    :data:`MOST_FORMAT_WIDTH` characters), or None."""
    if conversion not in (None, "r", "s", "a"):
        return f"unknown conversion !{conversion} (!r, !s or !a)"
    if "{" in spec:
        return "a placeholder inside a format spec"
    found = _WIDTH_PRECISION.fullmatch(spec)
    if found is None:
        return "not a format spec for text"
    if any(int(part or 0) > MOST_FORMAT_WIDTH for part in found.groups()):
        return f"a width or precision above {MOST_FORMAT_WIDTH:,}"
    try:
        format("", spec)
    except ValueError as error:
        return f"not a format spec for text ({error})"
    return None
