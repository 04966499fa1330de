"""rmaudit-verifiable: an oracle for prompts with checkable answers, as an rmaudit plugin.

The answer checks work without rmaudit's runner::

    from rmaudit_verifiable import check
    check("... so the answer is 42.", "42", "numeric")   # True

The ``verifiable`` oracle reaches recipes through the ``rmaudit`` entry point declared in
this distribution's ``pyproject.toml``.
"""

from rmaudit_verifiable.answers import (
    check,
    extract_choice,
    extract_number,
    infer_kind,
    normalize_text,
)

__all__ = ["check", "extract_choice", "extract_number", "infer_kind", "normalize_text"]
