"""``rmaudit audit judge:MODEL``: an LLM judge over an OpenAI-compatible endpoint as the model
under audit (docs/judges.md) — its recipe table, and what each suite makes of it: a pairwise
judge on a pair suite (with the ``judge-audit`` metric), a rating judge on a best-of-n suite.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rmaudit.backends.judging.verdicts import VerdictTemplate, judge_template
from rmaudit.backends.openai_api.options import ApiOptions, Price
from rmaudit.components.options import model_location_problem, url_problem
from rmaudit.errors import BadInput

JUDGE_PREFIX = "judge:"
VERDICTS_PREFIX = "verdicts:"
VERDICTS_RM = "verdicts-file"
JUDGE_RM = "llm-judge-rm"
#: a Hugging Face causal LM as the judge (judge:FOLDER or judge:NAMESPACE/NAME, no --base-url)
HF_JUDGE_RM = "hf-judge-rm"
JUDGE_RMS = (JUDGE_RM, HF_JUDGE_RM)
#: judges (and reward models) run elsewhere, read from their publishers' outputs
LLMBAR_JUDGE, JUDGEBENCH_JUDGE, JUDGEBENCH_RM = "llmbar-judge", "judgebench-judge", "judgebench-rm"
#: pairwise judges whose verdicts were recorded elsewhere (a file, a publisher's outputs)
RECORDED_PAIRWISE = (VERDICTS_RM, LLMBAR_JUDGE, JUDGEBENCH_JUDGE)
#: where a data folder keeps MT-bench's judge prompts (its templates by name)
MT_BENCH_PROMPTS = Path("mt_bench") / "judge_prompts.jsonl"


@dataclass(frozen=True)
class JudgeFlags:
    """The command's judge flags (``--judge-template`` read: :func:`read_judge_template`)."""

    base_url: str | None = None
    template: VerdictTemplate | None = None
    api_key_env: str | None = None
    price: str | None = None
    data_dir: str | None = None
    #: seconds a request waits for its reply (``timeout_s``)
    request_timeout: float | None = None

    def api_only(self) -> list[str]:
        """The flags given that only a judge over an API takes."""
        given = {
            "--base-url": self.base_url,
            "--judge-price": self.price,
            "--request-timeout": self.request_timeout,
        }
        return [flag for flag, value in given.items() if value is not None]


def read_judge_template(given: str | None, data_dir: str | None) -> VerdictTemplate | None:
    """``--judge-template FILE_OR_NAME`` read, once: a file, or a name (MT-bench's from
    ``DATA_DIR/mt_bench/judge_prompts.jsonl``)."""
    if given is None:
        return None
    prompts = _prompts_file(data_dir)
    try:
        return judge_template(given, prompts)
    except BadInput as error:
        raise error.located(field="--judge-template") from None


def _prompts_file(data_dir: str | None) -> Path | None:
    """Where the data folder keeps MT-bench's judge prompts (None: it has none)."""
    prompts = Path(data_dir) / MT_BENCH_PROMPTS if data_dir else None
    return prompts.resolve() if prompts is not None and prompts.is_file() else None


def judge_table(model: str, flags: JudgeFlags) -> dict[str, Any]:
    """The ``llm-judge-rm`` table of ``judge:MODEL``, its mode left for each suite to set (and
    with it whether its template applies: :func:`for_suite`)."""
    name = model.removeprefix(JUDGE_PREFIX).strip()
    if not name:
        raise BadInput("expected judge:MODEL, the judge's model name", field="MODEL", value=model)
    table: dict[str, Any] = {"label": model, "name": JUDGE_RM, "model": name}
    if not flags.base_url and Path(name).is_dir():  # a local causal LM
        table.update(name=HF_JUDGE_RM, model=str(Path(name).resolve()))
    elif not flags.base_url and _hub_id(name):  # a causal LM on the hub (or in its cache)
        table.update(name=HF_JUDGE_RM)
    elif not flags.base_url:
        raise BadInput(
            "a judge needs --base-url (its OpenAI-compatible endpoint), or MODEL a local "
            "folder or Hugging Face id (NAMESPACE/NAME) of a causal LM",
            field="MODEL",
            value=model,
        )
    else:
        problem = url_problem(flags.base_url)
        if problem:
            raise BadInput(problem, field="--base-url", value=flags.base_url)
        table["base_url"] = flags.base_url
    if table["name"] == JUDGE_RM:
        if flags.api_key_env is not None:
            table["api_key_env"] = flags.api_key_env
        if flags.price:
            table["price"] = parse_judge_price(flags.price)
        if flags.request_timeout is not None:
            table["timeout_s"] = flags.request_timeout
    prompts = _prompts_file(flags.data_dir)
    if prompts is not None:
        table["judge_prompts_file"] = str(prompts)
    if flags.template is not None:
        table[_template_option(flags.template)] = flags.template
    return table


def _template_option(template: VerdictTemplate) -> str:
    """The option a template is given in: its file, or its name."""
    return "template_file" if template.file is not None else "template"


def _template(table: dict[str, Any]) -> VerdictTemplate | None:
    """A judge table's ``--judge-template``."""
    given = table.get("template_file") or table.get("template")
    return given if isinstance(given, VerdictTemplate) else None


def _hub_id(name: str) -> bool:
    """NAMESPACE/NAME: a hub id (a bare NAME such as gpt-4o is an endpoint's model, which
    needs --base-url)."""
    return "/" in name and model_location_problem(name) is None


def verdicts_table(model: str) -> dict[str, Any]:
    """``verdicts:FILE``: a judge's verdicts recorded elsewhere (pair suites only)."""
    path = Path(model.removeprefix(VERDICTS_PREFIX))
    if not path.is_file():
        raise BadInput("verdicts file not found", field="MODEL", value=model)
    return {"label": path.stem, "name": VERDICTS_RM, "path": str(path.resolve())}


def parse_judge_price(text: str) -> dict[str, float]:
    """``--judge-price PROMPT,COMPLETION``: USD per 1M prompt and completion tokens, each a
    finite number ≥ 0 (as a recipe's ``price`` table holds them)."""
    try:
        prompt, completion = (float(part) for part in text.split(","))
        price = Price(prompt=prompt, completion=completion)
    except (ValueError, ValidationError):
        raise BadInput(
            "expected PROMPT,COMPLETION in USD per 1M tokens, each a finite number ≥ 0, "
            "e.g. 2.5,10",
            field="--judge-price",
            value=text,
        ) from None
    return {"prompt": price.prompt, "completion": price.completion}


def for_suite(tables: list[dict[str, Any]], pairs: bool) -> list[dict[str, Any]]:
    """The reward-model tables for one suite: each judge pairwise on a pair suite, rating on
    a best-of-n one; a --judge-template of the other mode is left to that mode's suites."""
    out = []
    for table in tables:
        if table.get("name") == VERDICTS_RM and not pairs:
            raise BadInput(
                "verdicts:FILE holds pairwise verdicts: run it on pair suites only (--suite)",
                field="MODEL",
                value=table["path"],
            )
        if table.get("name") not in JUDGE_RMS:
            out.append(table)
            continue
        mode = "pairwise" if pairs else "rating"
        template = _template(table)
        judged = {**table, "mode": mode}
        if template is not None and template.mode != mode:
            del judged[_template_option(template)]
        out.append(judged)
    return out


def judge_waits(tables: list[dict[str, Any]]) -> list[str]:
    """One line per judge over an API: how long each of its requests waits for a reply."""
    default = ApiOptions.model_fields["timeout_s"].default
    return [
        f"{t['label']}: each request to {t['base_url']} waits up to "
        f"{t.get('timeout_s', default):g} s for its reply (--request-timeout)"
        for t in tables
        if t.get("name") == JUDGE_RM
    ]


def check_template_used(tables: list[dict[str, Any]], pair_suites: list[bool]) -> None:
    """``BadInput`` for a ``--judge-template`` no suite of the audit shows: a rating template
    where only pairs are judged, a pairwise one where only responses are rated."""
    modes = {"pairwise" if pairs else "rating" for pairs in pair_suites}
    for table in tables:
        template = _template(table)
        if template is not None and template.mode not in modes:
            judged = "judge pairs" if "pairwise" in modes else "rate responses"
            raise BadInput(
                f"a {template.mode} template, but every suite of this audit would {judged}: "
                f"give a {'pairwise' if 'pairwise' in modes else 'rating'} template, or a "
                f"{'best-of-n' if template.mode == 'rating' else 'pair'} suite (--suite)",
                field="--judge-template",
                value=template.model_dump(mode="json"),
            )


def has_pairwise_judge(tables: list[dict[str, Any]]) -> bool:
    return any(
        (t.get("name") in JUDGE_RMS and t.get("mode") == "pairwise")
        or t.get("name") in RECORDED_PAIRWISE
        for t in tables
    )


def has_rating_judge(tables: list[dict[str, Any]]) -> bool:
    return any(t.get("name") in JUDGE_RMS and t.get("mode") == "rating" for t in tables)
