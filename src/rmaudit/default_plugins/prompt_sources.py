"""Built-in file and dataset prompt sources.

* ``jsonl``, ``csv``, ``parquet``: one prompt per row, with a field mapping;
* ``hh``: Anthropic HH-RLHF dialogues, with the RETA paper's prompt extraction rule;
* ``mt-bench``: MT-bench ``question.jsonl``, two-turn prompt sets with reference answers;
* ``hf-dataset``: a Hugging Face dataset by name (when ``datasets`` is installed).

Prompts follow the conventions of :mod:`rmaudit.backends.conversation` (``meta["messages"]`` for a
dialogue context, ``meta["turns"]`` for a multi-turn prompt set) and put a reference answer,
where the source has one, in ``meta["reference"]`` for judges that show it (RETA Fig. 8-9).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator

from rmaudit import hookimpl
from rmaudit.benchmark.pairs.parsers import RecordProblem, parse_hh, split_hh_dialogues
from rmaudit.benchmark.tabular import read_rows
from rmaudit.components import ComponentOptions, PromptSource
from rmaudit.components.options import DataFile
from rmaudit.errors import BadInput

Loaded = list[tuple[str, dict[str, Any]]]


# -- field-mapped files -------------------------------------------------------------------


class FieldMappingOptions(ComponentOptions):
    text_field: str = Field("prompt", description="field holding the prompt text")
    meta_fields: list[str] | None = Field(
        None, description="fields kept as metadata (default: all others)"
    )


class FileOptions(FieldMappingOptions):
    path: DataFile


def _field_prompts(
    rows: Iterable[tuple[str, dict[str, Any]]], options: FieldMappingOptions, source: str
) -> Loaded:
    records = []
    for where, row in rows:
        text = row.get(options.text_field)
        if not isinstance(text, str) or not text.strip():
            raise BadInput(
                "expected a non-empty string",
                file=where,
                field=options.text_field,
                value=text if text is not None else ...,
            )
        keep = options.meta_fields
        records.append(
            (
                text,
                {
                    k: v
                    for k, v in row.items()
                    if k != options.text_field and (keep is None or k in keep)
                },
            )
        )
    if not records:
        raise BadInput("no prompts in file", file=source)
    return records


class _RowFilePrompts(PromptSource[FileOptions]):
    """Prompts from the rows of a file in ``file_format`` (``text_field`` each row's text)."""

    Options = FileOptions
    file_format: ClassVar[str]

    def load(self) -> Loaded:
        o = self.options
        return _field_prompts(read_rows(o.path, self.file_format), o, str(o.path))


class JsonlPrompts(_RowFilePrompts):
    """Prompts from a JSON Lines file (optionally .gz), one object per line."""

    name = file_format = "jsonl"


class CsvPrompts(_RowFilePrompts):
    """Prompts from a CSV file with a header row (optionally .gz), one per row."""

    name = file_format = "csv"


class ParquetPrompts(_RowFilePrompts):
    """Prompts from a Parquet file, one per row (needs pyarrow: the parquet extra)."""

    name = file_format = "parquet"


# -- Anthropic HH-RLHF --------------------------------------------------------------------

_HH_HEADER = re.compile(r"(?:^|\n\n)(Human|Assistant): ?")


def hh_messages(context: str) -> list[dict[str, str]]:
    """Chat messages of an HH dialogue context (``\\n\\nHuman: ...\\n\\nAssistant: ...``)."""
    headers = list(_HH_HEADER.finditer(context))
    ends = [h.start() for h in headers[1:]] + [len(context)]
    return [
        {
            "role": "user" if h.group(1) == "Human" else "assistant",
            "content": context[h.end() : end].strip(),
        }
        for h, end in zip(headers, ends, strict=True)
    ]


def hh_prompt(chosen: str, rejected: str, subset: str | None) -> tuple[str, dict[str, Any]]:
    """The RETA paper's extraction (RETA paper, arXiv 2504.14838, Sec. 4): the context before the
    compared response, excess rounds removed
    (:func:`rmaudit.benchmark.pairs.parsers.split_hh_dialogues`); the preferred
    response becomes the reference answer of the Fig. 8 judge template."""
    context, preferred, _, meta = split_hh_dialogues(chosen, rejected)
    return context, _hh_meta(context, preferred, meta["turns"], subset)


def _hh_meta(context: str, preferred: str, turns: int, subset: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "reference": preferred,
        "messages": hh_messages(context),
        "context_turns": turns,
    }
    if subset:
        meta["subset"] = subset
    return meta


class HhOptions(ComponentOptions):
    path: DataFile = Field(description="an HH-RLHF file, e.g. helpful-base/test.jsonl.gz")
    subset: str | None = Field(None, description="stored in each prompt's meta, e.g. helpful-base")
    strict: bool = Field(False, description="fail on the first record the extraction rejects")


class HhPrompts(PromptSource[HhOptions]):
    """Anthropic HH-RLHF prompts by the RETA paper's rule: the dialogue before the compared
    reply."""

    name = "hh"
    Options = HhOptions

    def load(self) -> Loaded:
        # records the rule rejects (helpful-base test has 2 with identical dialogues) give no
        # prompt; strict = true makes the first one an error instead
        result = parse_hh(self.options.path, subset=self.options.subset, strict=self.options.strict)
        subset = self.options.subset
        prompts = [
            (
                p.prompt.text,
                {
                    **_hh_meta(p.prompt.text, p.chosen.text, p.meta["turns"], subset),
                    "line": p.meta["line"],
                },
            )
            for p in result.pairs
        ]
        if not prompts:
            raise BadInput("no HH dialogues in file", file=str(self.options.path))
        return prompts


# -- MT-bench -----------------------------------------------------------------------------


class MtBenchOptions(ComponentOptions):
    path: DataFile = Field(description="MT-bench question.jsonl")
    reference_path: DataFile | None = Field(
        None,
        description="reference answers, e.g. "
        "reference_answer/gpt-4.jsonl (else inline 'reference')",
    )
    categories: list[str] | None = Field(None, description="keep only these categories")


def mt_bench_text(turns: list[str]) -> str:
    """One text for a prompt set (its identity and what text-only components read)."""
    if len(turns) == 1:
        return turns[0]
    return "\n\n".join(f"[Turn {i}] {turn}" for i, turn in enumerate(turns, start=1))


class MtBenchPrompts(PromptSource[MtBenchOptions]):
    """MT-bench questions: two-turn prompt sets, with reference answers where MT-bench has them."""

    name = "mt-bench"
    Options = MtBenchOptions

    def load(self) -> Loaded:
        references = self._references()
        keep = set(self.options.categories) if self.options.categories else None
        prompts = []
        for where, row in read_rows(self.options.path, "jsonl"):
            turns = row.get("turns")
            if not (
                isinstance(turns, list)
                and turns
                and all(isinstance(t, str) and t.strip() for t in turns)
            ):
                raise BadInput(
                    "expected a list of non-empty strings",
                    file=where,
                    field="turns",
                    value=turns if turns is not None else ...,
                )
            if keep is not None and row.get("category") not in keep:
                continue
            meta: dict[str, Any] = {
                "question_id": row.get("question_id"),
                "category": row.get("category"),
                "turns": turns,
            }
            reference = references.get(row.get("question_id"), row.get("reference"))
            if reference:
                meta["reference"] = reference
            prompts.append((mt_bench_text(turns), meta))
        if not prompts:
            raise BadInput(
                "no MT-bench questions" + (" in the chosen categories" if keep else ""),
                file=str(self.options.path),
            )
        return prompts

    def _references(self) -> dict[Any, list[str]]:
        if self.options.reference_path is None:
            return {}
        references = {}
        for where, row in read_rows(self.options.reference_path, "jsonl"):
            try:
                references[row["question_id"]] = list(row["choices"][0]["turns"])
            except (KeyError, IndexError, TypeError):
                raise BadInput("expected question_id and choices[0].turns", file=where) from None
        return references


# -- Hugging Face datasets ----------------------------------------------------------------


class HfDatasetOptions(FieldMappingOptions):
    dataset: str = Field(
        description="hub name (Anthropic/hh-rlhf), a builder (json, csv, "
        "parquet) with data_files, or a folder saved by "
        "Dataset.save_to_disk"
    )
    config: str | None = None
    data_dir: str | None = Field(None, description="e.g. helpful-base for Anthropic/hh-rlhf")
    data_files: str | list[str] | dict[str, str | list[str]] | None = Field(
        None, description="files for a builder; a plain list is the 'train' split"
    )
    split: str = "test"
    revision: str | None = Field(None, description="pin the dataset version")
    cache_dir: str | None = Field(None, description="datasets' cache (default: HF_DATASETS_CACHE)")
    format: Literal["fields", "hh"] = Field(
        "fields", description="hh: chosen/rejected dialogues, the RETA extraction rule"
    )

    @field_validator("dataset")
    @classmethod
    def _resolve_folder(cls, value: str, info: ValidationInfo) -> str:
        """A folder relative to the recipe's folder when one exists there; else as written."""
        base = (info.context or {}).get("base_dir")
        if base is not None and not Path(value).is_absolute() and (Path(base) / value).is_dir():
            return str((Path(base) / value).resolve())
        return value

    @field_validator("data_files")
    @classmethod
    def _resolve_files(cls, value, info: ValidationInfo):
        """Files relative to the recipe's folder when they exist there (globs and URLs as
        written)."""
        base = (info.context or {}).get("base_dir")

        def resolve(path: str) -> str:
            if base is None or Path(path).is_absolute():
                return path
            candidate = Path(base) / path
            return str(candidate.resolve()) if candidate.is_file() else path

        if value is None:
            return None
        if isinstance(value, str):
            return resolve(value)
        if isinstance(value, list):
            return [resolve(v) for v in value]
        return {
            split: resolve(v) if isinstance(v, str) else [resolve(f) for f in v]
            for split, v in value.items()
        }


def _saved_to_disk(path: str) -> bool:
    folder = Path(path)
    return folder.is_dir() and any(
        (folder / name).is_file() for name in ("state.json", "dataset_dict.json")
    )


class HfDatasetPrompts(PromptSource[HfDatasetOptions]):
    """A Hugging Face dataset by name (needs the datasets package), as fields or HH dialogues.

    Offline (``HF_HUB_OFFLINE=1``, ``HF_DATASETS_OFFLINE=1``) it loads what the cache holds,
    a builder over local ``data_files``, or a folder written by ``save_to_disk``.
    """

    name = "hf-dataset"
    Options = HfDatasetOptions

    def _rows(self):
        try:
            import datasets
        except ImportError:
            raise BadInput(
                "the hf-dataset prompt source needs the datasets package: pip install datasets",
                field="dataset",
                value=self.options.dataset,
            ) from None
        o = self.options
        try:
            if _saved_to_disk(o.dataset):
                loaded = datasets.load_from_disk(o.dataset)
                if isinstance(loaded, datasets.DatasetDict):
                    if o.split not in loaded:
                        raise BadInput(
                            f"no split {o.split!r}; the dataset has {', '.join(loaded)}",
                            field="split",
                            value=o.split,
                        )
                    loaded = loaded[o.split]
                return loaded
            return datasets.load_dataset(
                o.dataset,
                o.config,
                data_dir=o.data_dir,
                data_files=o.data_files,
                split=o.split,
                revision=o.revision,
                cache_dir=o.cache_dir,
            )
        except BadInput:
            raise
        except Exception as error:  # datasets raises many types (not found, offline, bad split)
            first = (str(error).strip().splitlines() or [""])[0]
            raise BadInput(
                f"cannot load the dataset ({type(error).__name__}: {first})",
                field="dataset",
                value=o.dataset,
            ) from None

    def load(self) -> Loaded:
        o = self.options
        rows = self._rows()
        where = f"{o.dataset}[{o.split}]"
        if o.format == "fields":
            return _field_prompts(
                ((f"{where} row {i}", row) for i, row in enumerate(rows, 1)), o, where
            )
        prompts = []
        for row in rows:
            try:
                prompts.append(hh_prompt(row["chosen"], row["rejected"], o.data_dir))
            except (RecordProblem, KeyError, TypeError):
                continue  # as the hh source: a record the extraction rule rejects gives no prompt
        if not prompts:
            raise BadInput("no HH dialogues in the dataset", field="dataset", value=o.dataset)
        return prompts


@hookimpl
def register_prompt_sources(register):
    for source in (
        JsonlPrompts,
        CsvPrompts,
        ParquetPrompts,
        HhPrompts,
        MtBenchPrompts,
        HfDatasetPrompts,
    ):
        register(source)
