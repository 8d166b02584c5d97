"""glint: a SQL analytics engine on PyTorch tensors, for GPUs and CPUs."""
from .errors import (BinderError, CatalogError, ColumnNotFound, ConstraintError, ExecutionError, GlintError,
                     GlintIOError, NotSupported, OutOfMemory, ParseError, RankFailure, TypeMismatch)

__version__ = "0.1.0"


def connect(device: str = "auto", *, ranks=None, **kwargs):
    """Open a connection: ``device`` is "auto", "cpu", "cuda" or "cuda:N".

    ``ranks=N`` starts N local rank processes (one per GPU on CUDA, NCCL; Gloo
    on the CPU) that run every query together, each on its share of the
    tables (glint.dist); ``ranks="env"`` joins the ranks ``torchrun`` started
    (see ``python -m glint.dist.run``)."""
    if ranks is not None:
        from .dist.connection import DistConnection
        return DistConnection(ranks, device=device, **kwargs)
    from .api import Connection
    return Connection(device=device, **kwargs)


__all__ = ["connect", "GlintError", "ParseError", "BinderError", "CatalogError", "ColumnNotFound",
           "TypeMismatch", "NotSupported", "GlintIOError", "ExecutionError", "ConstraintError", "OutOfMemory",
           "RankFailure", "__version__"]
