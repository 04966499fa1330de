"""The ``[executor]`` table of a recipe: where a run's stages compute their batches (the
executors themselves are in :mod:`rmaudit.run.executors`; docs/scaling.md)."""

from __future__ import annotations

import importlib.util
import re
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator

from rmaudit.errors import BadInput

from .validation import StrictTable, bad_input

INSTALL_HINT = "pip install 'rmaudit[ray]'"


class LocalExecutorOptions(StrictTable):
    name: Literal["local"] = "local"
    overlap: bool = Field(
        True,
        description="compute the next batch in a worker thread while "
        "the driver stores the last one; false: every call in the driver "
        "thread, one batch at a time (for a component that must run on the "
        "main thread)",
    )


class PoolOptions(StrictTable):
    """Resources of one stage's actor pool; unset fields take the executor's defaults."""

    num_workers: int | None = Field(None, ge=1, description="actors in the pool")
    num_cpus: float | None = Field(None, ge=0, description="CPUs reserved per actor")
    num_gpus: float | None = Field(
        None, ge=0, description="GPUs reserved per actor (fractions share one)"
    )


class RayExecutorOptions(StrictTable):
    name: Literal["ray"]
    address: str | None = Field(
        None,
        description="omitted: start Ray on this machine; 'auto': join "
        "the cluster this node belongs to; 'ray://HOST:10001': Ray Client; "
        "'HOST:6379': a head node's GCS",
    )
    num_workers: int = Field(2, ge=1, description="actors per stage")
    num_cpus: float = Field(1.0, ge=0, description="CPUs reserved per actor")
    num_gpus: float = Field(0.0, ge=0, description="GPUs reserved per actor")
    max_restarts: int = Field(
        3, ge=0, description="restarts of a dead actor, each retrying the batch it was running"
    )
    batches_per_worker: int = Field(
        2,
        ge=1,
        description="batches queued per actor: the next batch travels while the current one runs",
    )
    runtime_env: dict[str, Any] | None = Field(
        None,
        description="Ray runtime environment for ray.init (e.g. pip packages for a Ray Client)",
    )
    policy: PoolOptions | None = Field(
        None, description="overrides for the reference policy's pool"
    )
    oracle: PoolOptions | None = Field(None, description="overrides for the oracle's pool")
    reward_models: PoolOptions | None = Field(None, description="overrides for every RM's pool")

    @field_validator("address")
    @classmethod
    def _known_address_form(cls, address: str | None) -> str | None:
        if (
            address is None
            or address == "auto"
            or re.fullmatch(r"ray://[^\s/]+(:\d+)?", address)
            or re.fullmatch(r"[^\s/:]+:\d+", address)
        ):
            return address
        raise ValueError(
            "expected 'auto', 'ray://HOST[:PORT]' or 'HOST:PORT' (omit it to start "
            "Ray on this machine)"
        )

    def pool(self, kind: str) -> PoolOptions:
        """The resolved pool resources for a component of ``kind``."""
        override = {
            "reference_policy": self.policy,
            "oracle": self.oracle,
            "reward_model": self.reward_models,
        }.get(kind) or PoolOptions()
        return PoolOptions(
            num_workers=override.num_workers or self.num_workers,
            num_cpus=self.num_cpus if override.num_cpus is None else override.num_cpus,
            num_gpus=self.num_gpus if override.num_gpus is None else override.num_gpus,
        )


ExecutorOptions = LocalExecutorOptions | RayExecutorOptions
EXECUTOR_OPTIONS: dict[str, type[LocalExecutorOptions] | type[RayExecutorOptions]] = {
    "local": LocalExecutorOptions,
    "ray": RayExecutorOptions,
}


def executor_options(raw: Any, *, file: str) -> ExecutorOptions:
    """The ``executor`` table: ``local`` (default) or ``ray`` with its cluster options."""
    if raw is None:
        return LocalExecutorOptions()
    if isinstance(raw, str):
        raw = {"name": raw}
    if not isinstance(raw, dict):
        raise BadInput("expected a table with a 'name' key", file=file, field="executor", value=raw)
    name = raw.get("name", ...)
    if name not in EXECUTOR_OPTIONS:
        problem = "missing executor name" if name is ... else "unknown executor"
        raise BadInput(
            f"{problem}; known: {', '.join(EXECUTOR_OPTIONS)}",
            file=file,
            field="executor.name",
            value=name,
        )
    options_model = EXECUTOR_OPTIONS[name]
    try:
        options = options_model.model_validate(raw)
    except ValidationError as error:
        raise bad_input(error, options_model, raw, file=file, field="executor") from None
    if name == "ray" and importlib.util.find_spec("ray") is None:
        raise BadInput(
            f"the ray executor needs Ray, which is not installed: {INSTALL_HINT}",
            file=file,
            field="executor.name",
            value=name,
        )
    return options
