"""Moved to :mod:`rmaudit.components.options` (rmaudit 0.3); this import path keeps working for
plugins written against 0.2 (docs/architecture.md, "Moved modules")."""

from rmaudit.components.options import (
    NEW_OPTION,
    OPERATIONAL,
    SHARED_LIMIT,
    DataFile,
    HashedDataFile,
    ModelLocation,
    Nested,
    NestedComponent,
    NestedRewardModel,
    OutputFile,
    component_identity,
    file_digest,
    file_source,
    identity_options,
    shared_limits,
)

__all__ = [
    "NEW_OPTION",
    "OPERATIONAL",
    "SHARED_LIMIT",
    "DataFile",
    "HashedDataFile",
    "ModelLocation",
    "Nested",
    "NestedComponent",
    "NestedRewardModel",
    "OutputFile",
    "component_identity",
    "file_digest",
    "file_source",
    "identity_options",
    "shared_limits",
]
