"""Where a suite's data lies: ``--data-dir``, else the Hugging Face cache, else the hub.

A suite's files are looked up in order:

1. under ``--data-dir`` at their mirror paths (the layout of rmaudit's shared data folder;
   a ``.gz`` file may also lie there uncompressed);
2. for a suite with a hub source, in the Hugging Face cache (``HF_HUB_CACHE``, else
   huggingface_hub's default), at the suite's revision;
3. downloaded from the hub, when the suite was asked for by name and downloads are allowed
   (not under ``HF_HUB_OFFLINE=1``).

The version found — the pinned source of a mirror whose files hold what they hold there (their
SHA-256, else the folder, said to differ), the commit a hub revision resolved to — is recorded
with the run (the ``data`` option of its pair source).  Data found nowhere is a
:class:`~rmaudit.errors.BadInput` naming the suite and what to fetch where.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import zlib
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from rmaudit.errors import BadInput

from . import SUITES, Suite


@dataclass(frozen=True)
class Located:
    """A suite's files, in the suite's order, and where they were found."""

    paths: tuple[Path, ...]
    root: Path  # the --data-dir the files were found in (a benchmark suite reads its folder)
    where: str  # "DIR", "the Hugging Face cache", "downloaded from the hub"
    version: str  # what the run records as the data's source and version


def locate(suite: Suite, data_dir: str | Path | None, *, download: bool) -> Located | None:
    """The suite's files, or None where they are not to be had without a download that is
    not allowed; a failed download is a BadInput."""
    if data_dir is not None:
        found = [_in_mirror(Path(data_dir), file.mirror) for file in suite.files]
        paths = [path for path in found if path is not None]
        if len(paths) == len(found):
            root = Path(os.path.abspath(data_dir))
            return Located(tuple(paths), root, str(data_dir), _mirror_version(suite, paths, root))
    if suite.hub is None:
        return None
    cached = _from_hub(suite, download=False)
    if cached is not None or not download or _offline():
        return cached
    host = _unreachable_hub()
    if host is not None:  # at once, not after huggingface_hub's half minute of retries
        raise missing(suite, data_dir, unreachable=host)
    return _from_hub(suite, download=True)


def _unreachable_hub() -> str | None:
    """The hub's host where it accepts no connection (None: it does, or no huggingface_hub to
    ask with, which the download then names)."""
    try:
        from huggingface_hub import constants
    except ImportError:
        return None
    from rmaudit.backends.hf.hub import hub_reachable

    return None if hub_reachable(constants.ENDPOINT) else urlsplit(constants.ENDPOINT).netloc


def earlier_data_dirs(db_path: str) -> list[Path]:
    """The folders in the layout of ``--data-dir`` that runs stored in ``db_path`` read suite
    files from, the latest run's first (none when there is no such DB)."""
    from rmaudit.results.run_index import list_runs, open_for_reading

    if not Path(db_path).is_file():
        return []
    with closing(open_for_reading(db_path)) as store:
        locations = [
            source.location
            for run in list_runs(store)
            for source in store.read.run_sources(run.id)
            if source.kind == "file" and source.location is not None
        ]
    mirrors = {
        mirror
        for suite in SUITES.values()
        for file in suite.files
        for mirror in (file.mirror, file.mirror.removesuffix(".gz"))
    }
    folders = [
        Path(location.removesuffix(mirror))
        for location in locations
        for mirror in mirrors
        if location.endswith("/" + mirror)
    ]
    return list(dict.fromkeys(folders))


def missing(
    suite: Suite, data_dir: str | Path | None, *, unreachable: str | None = None
) -> BadInput:
    """The one line for a suite whose data was not found (``unreachable``: the hub's host,
    which accepted no connection to download it from)."""
    looked = [f"not under {data_dir}" if data_dir is not None else "no --data-dir"]
    if suite.hub is not None:
        looked.append(f"not in the Hugging Face cache (hf.co/datasets/{suite.hub.repo})")
        if _offline():
            looked.append("no download under HF_HUB_OFFLINE")
        if unreachable is not None:
            looked.append(f"no download: {unreachable} cannot be reached")
    return BadInput(
        f"no data for suite {suite.name!r} ({'; '.join(looked)}): fetch "
        f"{suite.fetch}, then pass --data-dir DATA_DIR"
    )


def nothing_found(data_dir: str | Path | None, db_path: str) -> BadInput:
    """The one line for an audit that found no suite's data: where ``--data-dir`` should point
    (the folder an earlier audit in ``db_path`` read, where one did)."""
    if data_dir is not None:
        return BadInput(
            f"no suite's data was found under {data_dir}: rmaudit audit --list-suites "
            f"--data-dir {data_dir} says which files each suite reads, and where",
            field="--data-dir",
        )
    earlier = earlier_data_dirs(db_path)
    read = f"; an audit in {db_path} read {earlier[0]}: --data-dir {earlier[0]}" if earlier else ""
    return BadInput(
        "no suite's data was found: pass --data-dir DATA_DIR, the folder holding the suites' "
        "data in the layout of rmaudit's shared data folder (rmaudit audit --list-suites says "
        "which files each suite reads); without it only suites in the Hugging Face cache run, "
        "and one named with --suite is downloaded" + read
    )


def _in_mirror(root: Path, mirror: str) -> Path | None:
    """The mirror file under ``root`` (gzipped or not), or the folder where ``mirror`` ends
    with ``/``; absolute but not resolved: a file may be a link (``cp -rs``, the Hugging Face
    cache's snapshots linking to blobs), and what lies beside it — a subset's ``evaluators/``
    — is looked for beside the link, not its target."""
    if mirror.endswith("/"):
        folder = root / mirror
        return Path(os.path.abspath(folder)) if folder.is_dir() else None
    for candidate in (root / mirror, root / mirror.removesuffix(".gz")):
        if candidate.is_file():
            return Path(os.path.abspath(candidate))
    return None


def _mirror_version(suite: Suite, paths: list[Path], root: Path) -> str:
    """The suite's pinned source where every file holds what it holds there; else the folder,
    said to differ: a hand-made or edited folder is not recorded as the upstream data."""
    pinned = all(
        file.sha256 is None or _content_sha256(path) == file.sha256
        for file, path in zip(suite.files, paths, strict=True)
    )
    return suite.origin if pinned else f"local files under {root}, not those of {suite.origin}"


def _content_sha256(path: Path) -> str:
    """SHA-256 of a file's content, uncompressed: a mirror may hold it gzipped or not."""
    digest = hashlib.sha256()
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    except (OSError, EOFError, zlib.error):  # not gzip, cut short, corrupt: not the pinned file
        return ""
    return digest.hexdigest()


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")


def _from_hub(suite: Suite, *, download: bool) -> Located | None:
    try:
        import huggingface_hub
    except ImportError:  # the hub client comes with the datasets and hf extras
        if download:
            raise BadInput(
                f"suite {suite.name!r}: downloading needs huggingface_hub: pip "
                f"install 'rmaudit[datasets]'"
            ) from None
        return None
    hub = suite.hub
    if hub is None:
        return None
    cache = os.environ.get("HF_HUB_CACHE") or None  # read now: tests and users may set it late
    paths = []
    for file in suite.files:
        if file.hub is None:  # not in the suite's hub repository
            return None
        if download:
            try:
                path = huggingface_hub.hf_hub_download(
                    hub.repo, file.hub, repo_type="dataset", revision=hub.revision, cache_dir=cache
                )
            except Exception as error:  # network, auth, missing file: the user's to fix
                raise BadInput(
                    f"suite {suite.name!r}: cannot download {file.hub} from "
                    f"hf.co/datasets/{hub.repo} ({type(error).__name__}: {error}); or fetch "
                    f"{suite.fetch}, then pass --data-dir DATA_DIR"
                ) from None
        else:
            cached = huggingface_hub.try_to_load_from_cache(
                hub.repo, file.hub, cache_dir=cache, revision=hub.revision, repo_type="dataset"
            )
            if not isinstance(cached, str):
                return None
            path = cached
        paths.append(Path(path))
    commit = _snapshot_commit(paths[0]) or hub.revision
    return Located(
        tuple(paths),
        paths[0].parent,
        "downloaded from the hub" if download else "the Hugging Face cache",
        f"hf.co/datasets/{hub.repo}@{commit}",
    )


def _snapshot_commit(path: Path) -> str | None:
    """The commit of a cached hub file: ``.../snapshots/COMMIT/FILE``."""
    parts = path.parts
    if "snapshots" in parts:
        index = len(parts) - 1 - parts[::-1].index("snapshots")
        if index + 1 < len(parts):
            return parts[index + 1]
    return None
