"""LLM-as-a-judge helpers: judge templates and score parsing (used by the ``llm-judge`` oracle)."""

from .scores import parse_score
from .templates import BUILTIN_TEMPLATES, JudgeTemplate, load_template_file

__all__ = ["BUILTIN_TEMPLATES", "JudgeTemplate", "load_template_file", "parse_score"]
