"""Option types shared by component option models, and the identity they declare.

A component's identity — kind, name, ``version`` and options — is hashed into the key of
everything it stores (docs/architecture.md, "Content-addressed, resumable store").  Which
options belong to it, and in what form, is declared on the option fields, never written by
hand:

* ``Annotated[T, OPERATIONAL]``: the option decides where or how fast the work runs (a
  device, a batch size, a request limit, a cache file), never what it outputs.  It is left
  out of the identity, so tuning it does not make stored results look stale.
* ``Annotated[int, OPERATIONAL, SHARED_LIMIT]``: a limit for the whole component (requests in
  flight against one API's rate limit): an executor that runs several copies of the
  component splits it among them.
* ``Annotated[T, NEW_OPTION]``: an option that changes outputs but was added after results
  were stored: it enters the identity only when set to other than its default, so the keys of
  results stored before it existed stand (their outputs are the default's).
* ``DataFile``: a file the component reads, relative to the recipe's folder (passed by the
  recipe loader as the pydantic validation context ``base_dir``); it must exist, so a missing
  file is reported while the recipe is validated.  The identity holds its resolved path.
* ``HashedDataFile``: a ``DataFile`` whose content, not its location, decides the outputs
  (scores or responses computed elsewhere, a judge template): the identity holds the
  SHA-256 of its bytes, so a moved file keeps its stored results and an edited one does not.
* ``ModelLocation``: a hub id, or a model folder relative to the recipe's folder.  A hub id
  is its identity as written (pin a ``revision``); a folder's identity is its files' content
  (:func:`folder_digest`), so weights saved over the old ones are scored again, and a moved
  or copied folder keeps its stored results.
* ``HttpUrl``: an ``http://`` or ``https://`` URL a request can be sent to (a host, a port
  that is a port), kept as written.
* ``NestedRewardModel`` (or ``Annotated[NestedComponent, Nested(kind)]``): another component
  written as a table in the options (an ensemble's members, a proxy's gold RM).  It is
  validated with the recipe, built with :meth:`NestedComponent.build`, and its own identity
  stands in the identity of the component that holds it.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any, Protocol
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    GetCoreSchemaHandler,
    SerializationInfo,
    ValidationInfo,
    WrapSerializer,
)
from pydantic_core import core_schema

from .records import Source


class _Marker:
    def __init__(self, name: str, doc: str) -> None:
        self.name, self.__doc__ = name, doc

    def __repr__(self) -> str:
        return self.name


OPERATIONAL = _Marker("OPERATIONAL", "An option that never changes outputs: not in the identity.")
SHARED_LIMIT = _Marker("SHARED_LIMIT", "A limit an executor splits among copies of the component.")
NEW_OPTION = _Marker(
    "NEW_OPTION", "An identity option added later: in the identity only when not at its default."
)

#: The serialization context under which option types write their identity form.
_IDENTITY_CONTEXT = {"rmaudit.identity": True}


def _for_identity(info: SerializationInfo) -> bool:
    return bool((info.context or {}).get("rmaudit.identity"))


def _base_dir(info: ValidationInfo) -> Path | None:
    base = (info.context or {}).get("base_dir")
    return None if base is None else Path(base)


def _resolve_existing_file(value: Path, info: ValidationInfo) -> Path:
    base = _base_dir(info)
    path = value if value.is_absolute() or base is None else base / value
    if not path.is_file():
        raise ValueError(f"data file not found: {path}")
    # absolute, not resolved: a linked file's neighbours are the link's (a data folder laid
    # out with `cp -rs`, the Hugging Face cache); its identity is its bytes' digest anyway
    return Path(os.path.abspath(path))


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes, in hex: hashed once per process while its size, times and
    inode stay (a run asks for each data file's several times), and every time while it was
    changed in the last second (a change within the same tick of the file system's clock
    would keep its times, as git's "racily clean" files)."""
    found = os.stat(path)
    stat = (str(path), found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino)
    if stat in _digests:
        return _digests[stat]
    with open(path, "rb") as handle:  # streamed: a model's weights need not fit in memory
        digest = hashlib.file_digest(handle, "sha256").hexdigest()
    if time.time_ns() - max(found.st_mtime_ns, found.st_ctime_ns) > _SETTLED_NS:
        _digests[stat] = digest
    return digest


#: each file's digest by its path, size, times and inode (``file_digest``)
_digests: dict[tuple[str, int, int, int, int], str] = {}
#: a file changed longer ago than this is hashed once per process
_SETTLED_NS = 1_000_000_000


def file_source(role: str, path: Path, note: str = "") -> Source:
    """A data file as a run's provenance records it: its path and the SHA-256 of its bytes."""
    return Source(role, "file", str(path), file_digest(path), note)


def _digest_in_identity(path: Path, handler: Any, info: SerializationInfo) -> Any:
    return file_digest(path) if _for_identity(info) else handler(path)


#: a checkpoint folder's files that are a trainer's state, not the model's
_NOT_MODEL = (".pt", ".pth")


def folder_digest(folder: Path) -> str:
    """SHA-256 over a model folder's files, each by its name and :func:`file_digest`: the
    files ``from_pretrained`` may read, those at the top of the folder, but for hidden ones (a
    download's metadata) and a trainer's ``.pt`` and ``.pth`` states (optimizer, scheduler,
    random generators), which are not the model's."""
    files = sorted(
        path
        for path in folder.iterdir()
        if path.is_file() and not path.name.startswith(".") and path.suffix not in _NOT_MODEL
    )
    lines = "".join(f"{path.name}\0{file_digest(path)}\n" for path in files)
    return hashlib.sha256(lines.encode()).hexdigest()


def _folder_digest_in_identity(value: str, handler: Any, info: SerializationInfo) -> Any:
    folder = Path(value).expanduser()
    if _for_identity(info) and folder.is_dir():
        return {"folder": folder_digest(folder)}
    return handler(value)


#: a Hugging Face hub id as huggingface_hub accepts one: NAME or NAMESPACE/NAME, of letters,
#: digits, '_', '-' and '.', starting and ending with a letter or digit, no '--' or '..'
_HUB_ID = re.compile(r"(\b[\w\-.]+\b/)?\b[\w\-.]+\b")
_HUB_ID_LIMIT = 96


def model_location_problem(value: str) -> str | None:
    """Why ``value`` can be neither a local folder nor a Hugging Face hub id, or None: checked
    when a recipe is read, so a path that does not exist fails before anything runs."""
    if Path(value).expanduser().is_dir():
        return None
    if (
        _HUB_ID.fullmatch(value)
        and "--" not in value
        and ".." not in value
        and len(value) <= _HUB_ID_LIMIT
    ):
        return None
    return "no such folder, and not a Hugging Face id (NAME or NAMESPACE/NAME)"


def url_problem(value: str) -> str | None:
    """Why ``value`` is no ``http://`` or ``https://`` URL a request can be sent to, or None:
    checked when a recipe or a command's flag is read, not at the first request."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 (reading it checks it: a port out of range, or not a number)
    except ValueError as error:
        return f"not a URL ({error})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "expected an http:// or https:// URL with a host, e.g. http://localhost:8000/v1"
    return None


def _checked_url(value: str) -> str:
    problem = url_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def _local_folder_or_as_written(value: str, info: ValidationInfo) -> str:
    base = _base_dir(info)
    if base is not None and not Path(value).is_absolute() and (base / value).is_dir():
        return str((base / value).resolve())
    problem = model_location_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def _relative_to_recipe(value: Path, info: ValidationInfo) -> Path:
    base = _base_dir(info)
    return value if value.is_absolute() or base is None else (base / value).resolve()


DataFile = Annotated[Path, AfterValidator(_resolve_existing_file)]
#: A file rmaudit writes (a cache): relative to the recipe's folder, need not exist yet
OutputFile = Annotated[Path, AfterValidator(_relative_to_recipe)]
HashedDataFile = Annotated[
    Path, AfterValidator(_resolve_existing_file), WrapSerializer(_digest_in_identity)
]
#: A folder relative to the recipe's folder when one exists there (made absolute); otherwise
#: as written: a hub id, or a path relative to the working directory.
ModelLocation = Annotated[
    str, AfterValidator(_local_folder_or_as_written), WrapSerializer(_folder_digest_in_identity)
]
HttpUrl = Annotated[str, AfterValidator(_checked_url)]


@dataclass(frozen=True)
class NestedComponent:
    """A component written as a table inside another component's options, validated."""

    kind: str
    name: str  # as the recipe wrote it (``name`` or ``plugin:name``)
    cls: Any  # a Component subclass: rmaudit.components.kinds, which imports this module
    options: BaseModel

    def build(self) -> Any:
        return self.cls(self.options)

    def identity(self) -> dict[str, Any]:
        return component_identity(self.cls, self.options)

    def table(self) -> dict[str, Any]:
        """The table it was validated from, with validated options (paths resolved)."""
        return {"name": self.name, **self.options.model_dump(mode="json")}


@dataclass(frozen=True)
class Nested:
    """Marks an option as a nested component of ``kind``: ``Annotated[NestedComponent,
    Nested("reward_model")]``.  Its table is resolved through the plugin host and validated
    against the component's options, with the recipe's folder for its relative paths."""

    kind: str

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler):
        return core_schema.with_info_plain_validator_function(
            self._validate,
            serialization=core_schema.plain_serializer_function_ser_schema(
                _serialize_nested, info_arg=True
            ),
        )

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> dict[str, Any]:
        return {
            "type": "object",
            "description": f"a {self.kind.replace('_', ' ')} table (name = ... and its options)",
        }

    def _validate(self, value: Any, info: ValidationInfo) -> NestedComponent:
        if isinstance(value, NestedComponent):
            return value
        # the recipe's validator passes its resolver in: a component's options never import
        # the recipe module, which resolves names through the plugin host
        resolve = (info.context or {}).get("resolve_component")
        if resolve is None:
            raise ValueError(
                "a nested component table is validated with its recipe "
                "(rmaudit.recipe.validate_options)"
            )
        spec = resolve(self.kind, value, field="", file=None, base_dir=_base_dir(info))
        name = value if isinstance(value, str) else value["name"]
        return NestedComponent(self.kind, name, spec.cls, spec.options)


def _serialize_nested(value: NestedComponent, info: SerializationInfo) -> Any:
    if _for_identity(info):
        return value.identity()
    return value.table() if info.mode == "json" else value


NestedRewardModel = Annotated[NestedComponent, Nested("reward_model")]


def _marked(model: type[BaseModel], marker: _Marker) -> list[str]:
    return [name for name, field in model.model_fields.items() if marker in field.metadata]


def _operational(options: BaseModel) -> dict[str, Any]:
    """pydantic's ``exclude`` for what of ``options`` and its sub-models is not identity: the
    operational fields, and new options left at their default."""
    fields = type(options).model_fields
    exclude: dict[str, Any] = {name: True for name in _marked(type(options), OPERATIONAL)}
    exclude.update(
        (name, True)
        for name in _marked(type(options), NEW_OPTION)
        if getattr(options, name) == fields[name].get_default(call_default_factory=True)
    )
    for name in type(options).model_fields:
        value = getattr(options, name)
        if name not in exclude and isinstance(value, BaseModel) and _operational(value):
            exclude[name] = _operational(value)
    return exclude


def identity_options(options: BaseModel) -> dict[str, Any]:
    """The options as they enter the identity: operational ones left out, hashed files as
    their digest, nested components as their identity."""
    return options.model_dump(mode="json", exclude=_operational(options), context=_IDENTITY_CONTEXT)


class _Identified(Protocol):
    """What the identity reads of a component class (:class:`rmaudit.components.Component`,
    which imports this module)."""

    kind: str
    name: str
    version: int
    data_packages: tuple[str, ...]


def component_identity(cls: _Identified, options: BaseModel) -> dict[str, Any]:
    """What a component's key hashes: its kind, name, version and identity options, and the
    installed version of every distribution listed in its ``data_packages``."""
    identity = {
        "kind": cls.kind,
        "name": cls.name,
        "version": cls.version,
        "options": identity_options(options),
    }
    identity.update({package: version(package) for package in cls.data_packages})
    return identity


def shared_limits(options: BaseModel) -> dict[str, int]:
    """The ``SHARED_LIMIT`` options and their values."""
    return {name: getattr(options, name) for name in _marked(type(options), SHARED_LIMIT)}
