"""glint: a SQL analytics engine on PyTorch tensors, for GPUs and CPUs."""

from glint.api import connect
from glint.errors import (
    BinderError,
    CatalogError,
    ColumnNotFound,
    ConstraintError,
    ExecutionError,
    GlintError,
    GlintIOError,
    Interrupted,
    NotSupported,
    OutOfMemory,
    ParseError,
    RankFailure,
    TypeMismatch,
)

__version__ = "0.1.0"


__all__ = [
    "connect",
    "GlintError",
    "ParseError",
    "BinderError",
    "CatalogError",
    "ColumnNotFound",
    "TypeMismatch",
    "NotSupported",
    "GlintIOError",
    "ExecutionError",
    "ConstraintError",
    "OutOfMemory",
    "Interrupted",
    "RankFailure",
    "__version__",
]
