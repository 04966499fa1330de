"""Option types shared by component option models.

``DataFile`` resolves a path relative to the recipe's folder (passed by the recipe loader
as the pydantic validation context ``base_dir``) and insists the file exists, so a
missing data file is reported while the recipe is validated, before any work starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, ValidationInfo


def _resolve_existing_file(value: Path, info: ValidationInfo) -> Path:
    base = (info.context or {}).get("base_dir")
    path = value if value.is_absolute() or base is None else Path(base) / value
    if not path.is_file():
        raise ValueError(f"data file not found: {path}")
    return path.resolve()


DataFile = Annotated[Path, AfterValidator(_resolve_existing_file)]
