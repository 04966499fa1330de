"""LLM-as-a-judge helpers: the ``llm-judge`` oracle's templates (``oracle_templates``) and
score parsing, a judge-under-audit's templates and verdicts (``verdicts``), and the
placeholder checks both kinds of template share (``placeholders``)."""

from .oracle_templates import ORACLE_TEMPLATES, OracleTemplate, load_oracle_template_file
from .scores import parse_score

__all__ = ["ORACLE_TEMPLATES", "OracleTemplate", "load_oracle_template_file", "parse_score"]
