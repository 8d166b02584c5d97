"""glint: a SQL analytics engine on PyTorch tensors, for GPUs and CPUs."""
from .errors import (BinderError, CatalogError, ColumnNotFound, ExecutionError, GlintError, GlintIOError,
                     NotSupported, OutOfMemory, ParseError, TypeMismatch)

__version__ = "0.1.0"


def connect(device: str = "auto", **kwargs):
    """Open a connection: ``device`` is "auto", "cpu", "cuda" or "cuda:N"."""
    from .api import Connection
    return Connection(device=device, **kwargs)


__all__ = ["connect", "GlintError", "ParseError", "BinderError", "CatalogError", "ColumnNotFound",
           "TypeMismatch", "NotSupported", "GlintIOError", "ExecutionError", "OutOfMemory", "__version__"]
