"""VALUES lists: rows of constant expressions as batches.

A column is built from its entries in groups, not row by row (an INSERT of
thousands of rows would otherwise evaluate as many one-row expressions):
the entries that are a constant of one type, cast or not to the column's
type, become one column of that type cast at once with the executor's own
CAST (so a bad value fails as ``CAST`` fails); any other expression is
evaluated on its own. The groups are put back in row order.

>>> import torch
>>> from glint.columnar import types as T
>>> from glint.exec.base import ExecContext
>>> from glint.plan.expr import Call, Field, Literal
>>> f = Field(1, "col0", T.INTEGER)
>>> seven = Call("cast", (Literal("7", T.VARCHAR),), T.INTEGER)
>>> rows = ((Literal(1, T.INTEGER),), (seven,), (Literal(None, T.INTEGER),))
>>> b = next(ValuesExec(rows, (f,)).stream(ExecContext("cpu", None)))
>>> b[1].to_arrow().to_pylist()
[1, 7, None]
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from glint.columnar import types as T
from glint.columnar.column import Batch, Column, Dictionary, concat_columns
from glint.exec.base import PhysicalNode
from glint.functions.casts import cast_column
from glint.functions.evaluate import constant, evaluate
from glint.plan.expr import Call, Expr, Field, Literal

_INT64 = (-(2**63), 2**63)


@dataclass(frozen=True, slots=True, eq=False)
class ValuesExec(PhysicalNode):
    rows: tuple[tuple[Expr, ...], ...]
    fields: tuple[Field, ...]
    est_rows: float = 0.0

    def describe(self):
        return f"Values {len(self.rows)} row{'s' if len(self.rows) != 1 else ''}"

    def stream(self, ctx):
        n = len(self.rows)
        cols = {f.id: values_column([r[i] for r in self.rows], f.type, ctx.device) for i, f in enumerate(self.fields)}
        step = max(1, ctx.chunk_rows)
        for start in range(0, max(n, 1), step):
            stop = min(n, start + step)
            idx = None if start == 0 and stop == n else torch.arange(start, stop, device=ctx.device)
            yield Batch({k: c if idx is None else c.take(idx) for k, c in cols.items()}, stop - start, ctx.device)


def _constant_of(e: Expr):
    """(source type, value) when e is a constant, cast or not; else None."""
    if isinstance(e, Literal):
        return e.type, e.value
    if isinstance(e, Call) and e.fn == "cast" and isinstance(e.args[0], Literal):
        return e.args[0].type, e.args[0].value
    return None


def literal_column(values: list, dtype: T.DataType, device) -> Column:
    """A column of Python values in glint's literal representation (DECIMAL
    scaled ints, DATE days; None for NULL).

    >>> literal_column(["x", None], T.VARCHAR, "cpu").to_arrow().to_pylist()
    ['x', None]
    """
    n = len(values)
    valid = None
    if any(v is None for v in values):
        valid = torch.tensor([v is not None for v in values], dtype=torch.bool, device=device)
    if dtype.kind == "NULL":
        return Column.nulls(dtype, n, device)
    if dtype.is_string:
        return Column(
            dtype,
            torch.arange(n, dtype=torch.int32, device=device),
            valid,
            Dictionary.from_pylist(values, device, sorted_unique=False),
        )
    fill = False if dtype.kind == "BOOLEAN" else 0
    data = [fill if v is None else v for v in values]
    if dtype.torch_dtype == torch.int64 and any(not _INT64[0] <= v < _INT64[1] for v in data):
        # values beyond 64 bits (wide DECIMALs): one at a time, as constants
        return concat_columns([constant(v, dtype, 1, device) for v in values])
    return Column(dtype, torch.tensor(data, dtype=dtype.torch_dtype, device=device), valid)


def values_column(entries: list[Expr], to: T.DataType, device) -> Column:
    """One column of a VALUES list from its entries (each of type ``to``)."""
    if not entries:
        return literal_column([], to, device)
    groups: dict = {}  # source type -> (row positions, values)
    exprs: list[tuple[int, Expr]] = []
    for i, e in enumerate(entries):
        c = _constant_of(e)
        if c is None:
            exprs.append((i, e))
        else:
            pos, vals = groups.setdefault(c[0], ([], []))
            pos.append(i)
            vals.append(c[1])
    parts, order = [], []
    for src, (pos, vals) in groups.items():
        parts.append(cast_column(literal_column(vals, src, device), to))
        order += pos
    one = Batch({}, 1, device)
    for i, e in exprs:
        parts.append(evaluate(e, one))
        order.append(i)
    col = parts[0] if len(parts) == 1 else concat_columns(parts)
    if order != list(range(len(order))):
        inverse = torch.empty(len(order), dtype=torch.long)
        inverse[torch.tensor(order, dtype=torch.long)] = torch.arange(len(order))
        col = col.take(inverse.to(device))
    return col
