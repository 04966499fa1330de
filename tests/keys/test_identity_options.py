"""What the option markers of rmaudit.components.options declare: which options key stored results
and in what form, for a plugin's own component as for the built-ins (tests/keys holds the
built-ins' keys as recorded before the markers existed)."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import Field

from rmaudit.components import ComponentOptions, Prompt, Response, RewardModel, options
from rmaudit.components.options import (
    NEW_OPTION,
    OPERATIONAL,
    SHARED_LIMIT,
    HashedDataFile,
    ModelLocation,
    NestedRewardModel,
    identity_options,
)
from rmaudit.errors import BadInput
from rmaudit.recipe.executor_options import RayExecutorOptions
from rmaudit.recipe.validation import validate_options
from rmaudit.run.executors import RayExecutor


class Limits(ComponentOptions):
    slots: Annotated[int, OPERATIONAL, SHARED_LIMIT] = 5


class TableOptions(ComponentOptions):
    table: HashedDataFile
    scale: float = 1.0
    device: Annotated[str, OPERATIONAL] = "cpu"
    limits: Limits = Field(default_factory=Limits)  # a sub-model: its operational fields too
    gold: NestedRewardModel | None = None


class TableRM(RewardModel):
    """Scores from a table file (a plugin's component, as a third party writes one)."""

    name = "table-rm"
    Options = TableOptions
    data_packages = ("numpy",)

    def score(self, batch: Sequence[tuple[Prompt, Response]]) -> list[float]:
        return [self.options.scale] * len(batch)


def build(tmp_path, **raw) -> TableRM:
    return TableRM(validate_options(TableRM, raw, field="rm", file=None, base_dir=tmp_path))


@pytest.fixture
def table(tmp_path):
    (tmp_path / "a.txt").write_text("scores v1")
    return "a.txt"


def test_operational_options_are_left_out_at_any_depth(tmp_path, table):
    rm = build(tmp_path, table=table, device="cuda", limits={"slots": 2})
    assert identity_options(rm.options) == {
        "table": hashlib.sha256(b"scores v1").hexdigest(),
        "scale": 1.0,
        "limits": {},
        "gold": None,
    }
    assert rm.key == build(tmp_path, table=table).key
    assert rm.key != build(tmp_path, table=table, scale=2.0).key


class LaterTableOptions(TableOptions):
    """TableOptions in a later version of the plugin, which added an output-changing option."""

    clip: Annotated[float | None, NEW_OPTION] = None


class LaterTableRM(TableRM):
    Options = LaterTableOptions


def test_a_new_option_keys_results_only_when_set(tmp_path, table):
    def later(**raw) -> LaterTableRM:
        return LaterTableRM(
            validate_options(
                LaterTableRM, {"table": table, **raw}, field="rm", file=None, base_dir=tmp_path
            )
        )

    assert later().key == build(tmp_path, table=table).key  # results stored before it stand
    assert later(clip=None).key == build(tmp_path, table=table).key
    assert later(clip=3.0).key != later().key
    assert identity_options(later(clip=3.0).options)["clip"] == 3.0


class FolderOptions(ComponentOptions):
    model: ModelLocation


class FolderRM(TableRM):
    name = "folder-rm"
    Options = FolderOptions


def folder_identity(tmp_path, model: str) -> dict:
    return identity_options(
        validate_options(FolderRM, {"model": model}, field="rm", file=None, base_dir=tmp_path)
    )


def test_a_model_folder_keys_by_its_files_content_and_a_hub_id_as_written(tmp_path):
    folder = tmp_path / "checkpoint"
    folder.mkdir()
    (folder / "config.json").write_text('{"hidden_size": 8}')
    (folder / "model.safetensors").write_bytes(b"weights v1")
    first = folder_identity(tmp_path, "checkpoint")
    lines = "".join(
        f"{name}\0{hashlib.sha256(data).hexdigest()}\n"
        for name, data in [
            ("config.json", b'{"hidden_size": 8}'),
            ("model.safetensors", b"weights v1"),
        ]
    )
    assert first == {"model": {"folder": hashlib.sha256(lines.encode()).hexdigest()}}
    # a trainer's state, a download's metadata and a subfolder are not the model
    (folder / "optimizer.pt").write_bytes(b"adam moments")
    (folder / ".gitattributes").write_text("*.safetensors filter=lfs")
    (folder / "global_step10").mkdir()
    (folder / "global_step10" / "zero.bin").write_bytes(b"shard")
    assert folder_identity(tmp_path, "checkpoint") == first
    copy = tmp_path / "copied"
    copy.mkdir()
    for name in ("config.json", "model.safetensors"):
        (copy / name).write_bytes((folder / name).read_bytes())
    assert folder_identity(tmp_path, str(copy)) == first  # moved or copied: the same model
    (folder / "model.safetensors").write_bytes(b"weights v2")  # saved over: another model
    os.utime(folder / "model.safetensors", ns=(time.time_ns() + 5 * options._SETTLED_NS,) * 2)
    assert folder_identity(tmp_path, "checkpoint") != first
    assert folder_identity(tmp_path, "org/rm") == {"model": "org/rm"}


def test_a_hashed_file_keys_by_content_not_by_place(tmp_path, table):
    moved = tmp_path / "elsewhere" / "b.txt"
    moved.parent.mkdir()
    moved.write_text("scores v1")
    first = build(tmp_path, table=table)
    assert build(tmp_path, table=str(moved)).key == first.key
    assert first.options.table == (tmp_path / table).resolve()  # the component still reads a path
    (tmp_path / table).write_text("scores v2")
    assert build(tmp_path, table=table).key != first.key


def test_a_nested_component_enters_the_identity_as_its_own(tmp_path, table):
    gold = {"name": "scores-file", "path": "gold.jsonl"}
    (tmp_path / "gold.jsonl").write_text('{"response_id": "r", "score": 1}\n')
    rm = build(tmp_path, table=table, gold=gold)
    built = rm.options.gold.build()
    assert built.options.path == (tmp_path / "gold.jsonl").resolve()  # relative to the recipe
    assert identity_options(rm.options)["gold"] == built.identity()
    assert rm.options.gold.table() == {
        "name": "scores-file",
        "path": str(built.options.path),
        "match": "rmaudit-id",
        "id_field": "response_id",
        "prompt_field": "prompt",
        "response_field": "response",
        "score_field": "score",
    }
    with pytest.raises(BadInput, match=r"^rm\.gold\.name: unknown reward model"):
        build(tmp_path, table=table, gold={"name": "nope"})


def test_data_packages_versions_are_part_of_the_identity(tmp_path, table):
    assert build(tmp_path, table=table).identity()["numpy"] == version("numpy")


class LimitedRM(RewardModel):
    """An RM behind a service with a limit of requests in flight."""

    name = "limited-rm"
    Options = Limits


def test_executors_split_every_shared_limit_among_workers():
    rm = LimitedRM(Limits(slots=5))
    executor = RayExecutor(RayExecutorOptions(name="ray"))  # starts no Ray
    assert [o.slots for o in executor.worker_options(rm, 3)] == [2, 2, 1]
    assert [o.slots for o in executor.worker_options(rm, 5)] == [1] * 5


def test_the_example_of_writing_plugins_md_keys_as_it_says(tmp_path):
    """docs/writing_plugins.md, "Options, and what keys stored results"."""
    import re

    from rmaudit.testing import check_component

    doc = (Path(__file__).resolve().parents[2] / "docs" / "writing_plugins.md").read_text()
    example = re.search(r"### Options, and what keys.*?```python\n(.*?)```", doc, re.S).group(1)
    namespace: dict = {}
    # dont_inherit: this module's ``from __future__ import annotations`` is not the example's
    exec(compile(example, "writing_plugins.md", "exec", dont_inherit=True), namespace)
    shifted = namespace["Shifted"]
    (tmp_path / "offsets.txt").write_text("0.5\n1\n")

    def build(**raw):
        table = {"base": {"name": "simulated-rm", "seed": 1}, "offsets": "offsets.txt", **raw}
        return shifted(validate_options(shifted, table, field="rm", file=None, base_dir=tmp_path))

    component = build(batch_size=8)
    options = component.identity()["options"]
    assert options["base"] == component.base.identity()
    assert options["offsets"] == hashlib.sha256(b"0.5\n1\n").hexdigest()
    assert "batch_size" not in options and component.key == build().key
    assert build(scale=2.0).key != component.key
    check_component(component)


def test_a_files_digest_is_taken_again_whenever_the_file_may_have_changed(tmp_path, monkeypatch):
    """``file_digest`` hashes a file once per process while its size, times and inode stay,
    and every time while it changed in the last second (the same clock tick could hold an
    edit that keeps its times)."""
    path = tmp_path / "scores.csv"
    path.write_text("a,1\n")
    read: list[str] = []
    digest_of = hashlib.file_digest
    monkeypatch.setattr(hashlib, "file_digest", lambda f, d: read.append(f.name) or digest_of(f, d))
    expected = hashlib.sha256(b"a,1\n").hexdigest()
    assert options.file_digest(path) == options.file_digest(path) == expected
    assert len(read) == 2  # written just now: hashed each time
    later = time.time_ns() + 10 * options._SETTLED_NS
    monkeypatch.setattr(options.time, "time_ns", lambda: later)
    assert options.file_digest(path) == options.file_digest(path) == expected
    assert len(read) == 3  # settled: hashed once more, then remembered
    written = path.stat().st_mtime_ns
    path.write_text("b,2\n")  # the same size, and another modification time
    os.utime(path, ns=(written + 5 * options._SETTLED_NS,) * 2)
    assert options.file_digest(path) == hashlib.sha256(b"b,2\n").hexdigest()
    assert len(read) == 4
