"""The user-facing API, in DuckDB's conventions: :func:`connect` opens a
:class:`Connection` (on one device, or on several ranks); ``con.sql(...)``
returns a :class:`Result`, fetched as Arrow, pandas or Python tuples.

>>> import glint, pyarrow as pa
>>> con = glint.connect(device="cpu")
>>> _ = con.register("t", pa.table({"a": [1, 2, 3]}))
>>> con.sql("SELECT sum(a) AS s FROM t").fetchall()
[(Decimal('6'),)]
"""

from __future__ import annotations

from glint.distributed.connection import DistConnection
from glint.engine.connection import Connection, resolve_device
from glint.engine.result import Result, python_values

__all__ = ["connect", "Connection", "DistConnection", "Result", "python_values", "resolve_device"]


def connect(device: str = "auto", *, ranks=None, **kwargs) -> Connection:
    """Open a connection: ``device`` is "auto", "cpu", "cuda" or "cuda:N".

    ``ranks=N`` starts N local rank processes (one per GPU on CUDA, NCCL; Gloo
    on the CPU) that run every query together, each on its share of the
    tables (:mod:`glint.distributed`); ``ranks="env"`` joins the ranks
    ``torchrun`` started (``torchrun ... -m glint ...``)."""
    if ranks is not None:
        return DistConnection(ranks, device=device, **kwargs)
    return Connection(device=device, **kwargs)
