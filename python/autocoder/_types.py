"""The types the package's signatures share (the native module's stubs import them)."""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol, Union

__all__ = ["ArrowStreamExportable", "Data", "IoTypeName", "OutputValue"]


class ArrowStreamExportable(Protocol):
    """A data frame: pandas (with pyarrow), polars, a ``pyarrow.Table``: anything with
    ``__arrow_c_stream__``."""

    def __arrow_c_stream__(self, requested_schema: Any = None) -> object: ...


Data = Union[str, "os.PathLike[str]", ArrowStreamExportable]
"""A path to a table, or a data frame."""

IoTypeName = Union[
    str,
    type[int],
    type[float],
    type[str],
    type[bool],
    type[datetime],
    type[timedelta],
    type[Path],
]
"""A declared type: ``"int"``, ``"float"``, ``"str"``, ``"bool"``, ``"datetime"``,
``"timedelta"``, ``"file"``, ``"dir"``, or the Python type."""

OutputValue = Union[str, int, float, bool, datetime, timedelta, Path]
"""A script's output, typed as declared (files and directories as paths)."""
