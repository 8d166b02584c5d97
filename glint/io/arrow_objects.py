"""In-memory objects (pandas, polars, Arrow, DuckDB relations, dicts, lists
of rows) as Arrow tables, and Arrow tables as IPC bytes for another process.

>>> to_arrow_table({"a": [1, 2]}).num_rows
2
"""

from __future__ import annotations

import pyarrow as pa

from glint.errors import GlintError


def to_arrow_table(obj) -> pa.Table:
    """An Arrow table from a pyarrow Table / RecordBatch / RecordBatchReader /
    Dataset, a pandas or polars DataFrame, a dict of columns, a list of row
    dicts, or any object exporting the Arrow C stream interface.

    >>> to_arrow_table([{"a": 1}, {"a": 2}]).column("a").to_pylist()
    [1, 2]
    >>> to_arrow_table(42)
    Traceback (most recent call last):
    ...
    glint.errors.GlintError: cannot register an object of type int: expected a pyarrow Table, \
a pandas or polars DataFrame or a dict of columns
    """
    try:
        if isinstance(obj, pa.Table):
            return obj
        if isinstance(obj, pa.RecordBatch):
            return pa.Table.from_batches([obj])
        if isinstance(obj, pa.RecordBatchReader):
            return obj.read_all()
        mod = type(obj).__module__ or ""
        if mod.startswith("pandas"):
            import pandas as pd

            if isinstance(obj, pd.Series):
                obj = obj.to_frame()
            if isinstance(obj, pd.DataFrame):
                return pa.Table.from_pandas(obj, preserve_index=False)
        if mod.startswith("polars"):
            if hasattr(obj, "collect") and not hasattr(obj, "to_arrow"):  # LazyFrame
                obj = obj.collect()
            if hasattr(obj, "to_arrow"):
                t = obj.to_arrow()
                return t if isinstance(t, pa.Table) else pa.table(t)
        if mod.startswith("pyarrow.dataset") or mod.startswith("pyarrow._dataset"):
            return obj.to_table()
        if isinstance(obj, dict):
            return pa.table(obj)
        if isinstance(obj, list) and obj and all(isinstance(r, dict) for r in obj):
            return pa.Table.from_pylist(obj)
        if hasattr(obj, "__arrow_c_stream__"):
            return pa.table(obj)
        if hasattr(obj, "arrow") and mod.startswith("duckdb"):
            t = obj.arrow()
            return t.read_all() if isinstance(t, pa.RecordBatchReader) else t
    except GlintError:
        raise
    except (pa.ArrowException, TypeError, ValueError) as e:
        raise GlintError(f"cannot convert {type(obj).__name__} to a table: {e}") from None
    raise GlintError(
        f"cannot register an object of type {type(obj).__name__}: expected a pyarrow Table, "
        f"a pandas or polars DataFrame or a dict of columns"
    )


def table_to_ipc(table: pa.Table) -> bytes:
    """An Arrow table as Arrow IPC stream bytes (to another process).

    >>> table_from_ipc(table_to_ipc(pa.table({"a": [1, None]}))).column("a").to_pylist()
    [1, None]
    """
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def table_from_ipc(buf: bytes) -> pa.Table:
    return pa.ipc.open_stream(pa.py_buffer(buf)).read_all()
