"""Whether a model id can be reached, asked before minutes of hub retries would be spent.

Only the standard library is imported at module level, huggingface_hub when a hub id is
checked.  The check runs in the plan before a run (the components' ``check_ready``) and when a
model is loaded; ``--dry-run`` stays offline.
"""

from __future__ import annotations

import functools
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rmaudit.errors import BadInput

#: seconds to wait for the hub's host to accept a connection before calling it unreachable
HUB_PROBE_SECONDS = 3.0


@functools.cache
def hub_reachable(endpoint: str) -> bool:
    """Whether the hub's host accepts a connection within :data:`HUB_PROBE_SECONDS` (asked
    once a process): a hub that does not costs huggingface_hub half a minute of retries."""
    address = urlsplit(endpoint)
    port = address.port or (443 if address.scheme == "https" else 80)
    try:
        socket.create_connection((address.hostname, port), timeout=HUB_PROBE_SECONDS).close()
    except OSError:
        return False
    return True


def hub_access(model: str, *, revision: str | None, field: str) -> dict[str, Any]:
    """``from_pretrained``'s keywords for reaching ``model``.

    A hub that cannot be reached costs transformers minutes of retries before it gives up
    (or falls back to the cache), so the hub's host is probed once, for a few seconds: when it
    does not answer, or is turned off with ``HF_HUB_OFFLINE=1``, a model in the local cache
    loads from it alone (``local_files_only``), and any other model is ``BadInput`` with the
    way out.  A hub that answers is asked whether the model (and revision) exists, so a typo
    is one line before anything is stored.  A local folder needs no probe."""
    try:
        from huggingface_hub import constants, try_to_load_from_cache
    except ImportError:  # no hf extra: loading the model says which install is missing
        return {}
    if Path(model).expanduser().exists():
        return {}
    offline = constants.HF_HUB_OFFLINE
    if not offline and hub_reachable(constants.ENDPOINT):
        _check_on_hub(model, revision, field, constants.ENDPOINT)
        return {}
    if isinstance(try_to_load_from_cache(model, "config.json", revision=revision), str):
        return {"local_files_only": True}
    if offline:
        problem = "HF_HUB_OFFLINE is set and the model is not in the Hugging Face cache"
    else:
        problem = (
            f"cannot reach {urlsplit(constants.ENDPOINT).hostname} and the model is not "
            f"in the Hugging Face cache"
        )
    raise BadInput(
        f"{problem}: give a local folder"
        + ("" if offline else ", or set HF_HUB_OFFLINE=1 to load only cached models"),
        field=field,
        value=model,
    )


@functools.cache
def _check_on_hub(model: str, revision: str | None, field: str, endpoint: str) -> None:
    """``BadInput`` when the hub says there is no such model or revision.  A gated model exists
    (loading it says what token it needs); any other answer is left to ``from_pretrained``."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    try:
        HfApi(endpoint=endpoint).model_info(model, revision=revision, timeout=HUB_PROBE_SECONDS)
    except RepositoryNotFoundError:
        raise BadInput(
            "no such model on the Hugging Face hub (a private one needs HF_TOKEN set)",
            field=field,
            value=model,
        ) from None
    except RevisionNotFoundError:
        raise BadInput(
            f"the Hugging Face hub has no revision {revision!r} of this model",
            field=field,
            value=model,
        ) from None
    except Exception:  # noqa: BLE001 - gated, rate-limited, timed out: from_pretrained says why
        return
