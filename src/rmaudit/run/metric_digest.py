"""The digest of everything a metric's results depend on, so a rerun recomputes a metric only
when one of them changed (docs/architecture.md, "Content-addressed, resumable store").

A metric's results are a function of its inputs (the oracle scores, the RM's scores, a label
design with its inclusion probabilities and the other RMs' scores, pair logits and their
shifted copies, a judge's verdicts, the prompt and pair ids), its identity (name, ``version``
and options: ``Component.key``), the label it is stored under, and the code that computes
it.  A benchmark metric's RM scores are named by the RM's key and the responses' ids rather
than hashed (:class:`.metric_inputs.ReadOnUse`), so a rerun need not read them: triggers on
``rm_scores`` (``store/schema.py``, M014) delete the stored digests of an RM's metrics, and
of the run-level ones, whenever one of its scores is updated, deleted or replaced.  The code
is fingerprinted by the bytes of rmaudit's own source files and of the module that defines
the metric, with the versions of rmaudit, of the plugin's distribution and of numpy: any
change of them recomputes every metric once.  Inputs of a type the digest does
not know (a plugin's own record) have no digest and are always recomputed.
"""

from __future__ import annotations

import hashlib
import struct
import sys
from dataclasses import fields, is_dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from rmaudit import __version__
from rmaudit.components import Metric
from rmaudit.plugins import distribution_of

#: changes when what the digest covers changes, so older digests never match
DIGEST_FORMAT = b"rmaudit metric digest 1"


class _Undigestable(Exception):
    """A value whose bytes the digest does not know how to take."""


def metric_digest(metric: Metric, label: str, rm_key: str, inputs_digest: str | None) -> str | None:
    """The digest of one metric's results for one RM (``rm_key``; run-level: ``""``), from
    the digest of its inputs (:func:`inputs_digest`); None when the inputs have none."""
    if inputs_digest is None:
        return None
    h = hashlib.blake2b(DIGEST_FORMAT, digest_size=20)
    for part in (code_fingerprint(type(metric)), metric.key, label, rm_key, inputs_digest):
        _feed(h, part)
    return h.hexdigest()


def inputs_digest(inputs: Any) -> str | None:
    """The digest of a metric's inputs (``MetricInputs``, ``StudyInputs``, ``PairInputs``:
    every field, arrays by dtype, shape and bytes); None if a value is of a type it does
    not know."""
    h = hashlib.blake2b(DIGEST_FORMAT, digest_size=20)
    try:
        _feed(h, inputs)
    except _Undigestable:
        return None
    return h.hexdigest()


def code_fingerprint(cls: type[Metric]) -> str:
    """The code a metric class runs: rmaudit's source files, the class's own module file,
    and the versions of rmaudit, the plugin's distribution and numpy (once per class)."""
    if cls not in _fingerprints:
        _fingerprints[cls] = _fingerprint(cls)
    return _fingerprints[cls]


_fingerprints: dict[type, str] = {}


def _fingerprint(cls: type[Metric]) -> str:
    h = hashlib.blake2b(DIGEST_FORMAT, digest_size=20)
    for part in (
        __version__,
        *distribution_of(cls),
        np.__version__,
        f"{cls.__module__}:{cls.__qualname__}",
    ):
        _feed(h, part)
    _feed(h, _source_digest())
    module_file = getattr(sys.modules.get(cls.__module__), "__file__", None)
    if module_file is not None:
        _feed(h, Path(module_file).read_bytes())
    return h.hexdigest()


@cache
def _source_digest() -> str:
    """The bytes of every Python file of the installed rmaudit package, with their paths."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.blake2b(DIGEST_FORMAT, digest_size=20)
    for path in sorted(root.rglob("*.py")):
        _feed(h, path.relative_to(root).as_posix())
        _feed(h, path.read_bytes())
    return h.hexdigest()


def _feed(h: Any, value: Any) -> None:
    """Add ``value`` to ``h``, tagged by its type and length so no two values share bytes."""
    if value is None:
        h.update(b"N")
    elif isinstance(value, bool | np.bool_):
        h.update(b"T" if value else b"F")
    elif isinstance(value, int | np.integer):
        h.update(b"i%d;" % int(value))
    elif isinstance(value, float | np.floating):
        h.update(b"f" + struct.pack("<d", float(value)))
    elif isinstance(value, str):
        h.update(b"s")
        _feed(h, value.encode())
    elif isinstance(value, bytes):
        h.update(b"b%d:" % len(value))
        h.update(value)
    elif isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise _Undigestable
        h.update(f"a{value.dtype.str}{value.shape}".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif is_dataclass(value) and not isinstance(value, type):
        h.update(f"d{type(value).__module__}.{type(value).__qualname__}:".encode())
        for f in fields(value):
            _feed(h, f.name)
            _feed(h, getattr(value, f.name))
    elif isinstance(value, tuple | list):
        h.update(b"l%d:" % len(value))
        flat = _flat(value)
        if flat is not None:
            h.update(flat)
            return
        for item in value:
            _feed(h, item)
    elif isinstance(value, dict):
        h.update(b"m%d:" % len(value))
        for key, item in value.items():  # in order: the order of RMs or shift levels matters
            _feed(h, key)
            _feed(h, item)
    else:
        raise _Undigestable


def _flat(items: tuple[Any, ...] | list[Any]) -> bytes | None:
    """What :func:`_feed` adds for ``items`` when each is None, a string (prompt and pair ids,
    subsets), a dict of strings to strings and whole numbers (a pair's meta) or a tuple or
    list of these (a judge's replies in both orders), in one piece: a pair set's thousands of
    ids and metas, fed one call each, made a rerun's digests slow.  None for anything else."""
    parts = []
    for item in items:
        if item is None:
            parts.append(b"N")
        elif isinstance(item, str):
            encoded = item.encode()
            parts.append(b"sb%d:%s" % (len(encoded), encoded))
        elif isinstance(item, tuple | list):
            inner = _flat(item)
            if inner is None:
                return None
            parts.append(b"l%d:%s" % (len(item), inner))
        elif isinstance(item, dict):
            parts.append(b"m%d:" % len(item))
            for key, entry in item.items():
                if not isinstance(key, str) or isinstance(entry, bool):
                    return None
                encoded = key.encode()
                parts.append(b"sb%d:%s" % (len(encoded), encoded))
                if isinstance(entry, str):
                    encoded = entry.encode()
                    parts.append(b"sb%d:%s" % (len(encoded), encoded))
                elif isinstance(entry, int):
                    parts.append(b"i%d;" % entry)
                else:
                    return None
        else:
            return None
    return b"".join(parts)
