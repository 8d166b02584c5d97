"""GROUPING SETS inside the hash aggregation, as DuckDB computes them: one
pass over the input feeds every grouping set.

Each input chunk is seen once per set (:func:`expand`): the same columns,
plus the group keys evaluated once, those outside the set replaced by NULL,
and the set's number as one more key. The aggregation then groups by (keys,
set number) with its usual partial / final, partitioned and out-of-core
paths (:func:`keyed_groups`), so a set's groups never mix with another's,
and a set listed twice yields its rows twice. Rolled-up keys are NULL in the
result; GROUPING() tells them from real NULLs through the set number.

A set without keys gives one row even for an empty input (COUNT(*) = 0);
:func:`empty_sets` makes those rows.

>>> import torch
>>> from glint.columnar import types as T
>>> from glint.plan.expr import ColRef, Field
>>> from glint.plan.logical import GroupingSets
>>> from glint.columnar.column import Batch, Column
>>> from types import SimpleNamespace
>>> a, g = Field(1, "a", T.INTEGER), Field(2, "a", T.INTEGER)
>>> node = SimpleNamespace(groups=((g, ColRef(a)),), grouping=GroupingSets(((0,), ()), Field(3, "set", T.INTEGER)))
>>> chunk = Batch({1: Column(T.INTEGER, torch.tensor([5, 6], dtype=torch.int32))}, 2)
>>> [(b[2].to_arrow().to_pylist(), b[3].data.tolist()) for b in expand(node, iter([chunk]), Seen())]
[([5, 6], [0, 0]), ([None, None], [1, 1])]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import torch

from glint.columnar import types as T
from glint.columnar.column import Batch, Column, concat_batches
from glint.functions.evaluate import evaluate
from glint.plan.expr import ColRef


class Seen:
    """What :func:`expand` saw of its input: the first batch and the row count."""

    __slots__ = ("first", "rows")

    def __init__(self):
        self.first: Batch | None = None
        self.rows = 0


def keyed_groups(node) -> tuple:
    """The groups of the aggregation behind grouping sets: each group field
    as the key column :func:`expand` made, then the set number."""
    gs = node.grouping
    return tuple((f, ColRef(f)) for f, _ in node.groups) + ((gs.field, ColRef(gs.field)),)


def expand(node, inp: Iterator[Batch], seen: Seen, together: int = 0) -> Iterator[Batch]:
    """Each input batch once per grouping set of ``node``: its own columns,
    each group field holding its key (NULL outside the set), and the set's
    number. The key columns are evaluated once per batch and shared. A
    batch whose sets hold at most ``together`` rows in all gives them as one
    batch (one partial aggregation instead of one per set)."""
    gs = node.grouping
    for batch in inp:
        if batch.num_rows and batch.num_rows * len(gs.sets) <= together:
            yield concat_batches(list(_sets_of(node, batch, seen, share=True)))
            continue
        yield from _sets_of(node, batch, seen)


def _sets_of(node, batch: Batch, seen: Seen, share: bool = False) -> Iterator[Batch]:
    """One batch of ``batch``'s rows per grouping set. ``share``: a rolled-up
    VARCHAR key's NULLs share the key's dictionary (for sets concatenated
    into one batch, which then keeps the key's dictionary: a new one would be
    hashed and tested again). Apart, they take a dictionary of one entry: a
    column of NULLs that refers to a large dictionary costs its groupings the
    dictionary's size (TPC-DS Q67's rolled-up item names on an H200)."""
    gs = node.grouping
    if seen.first is None:
        seen.first = batch
    seen.rows += batch.num_rows
    n, dev = batch.num_rows, batch.device
    keys = [evaluate(e, batch) for _, e in node.groups]
    nulls = {}
    for j, members in enumerate(gs.sets):
        cols = dict(batch.columns)
        for i, (f, _) in enumerate(node.groups):
            if i in members:
                cols[f.id] = keys[i]
            else:
                if i not in nulls:
                    nulls[i] = _nulls_like(keys[i], f.type, n, dev) if share else Column.nulls(f.type, n, dev)
                cols[f.id] = nulls[i]
        cols[gs.field.id] = Column(T.INTEGER, torch.full((n,), j, dtype=torch.int32, device=dev))
        yield Batch(cols, n, dev)


def _nulls_like(key: Column, dtype, n: int, dev) -> Column:
    """``n`` NULLs of a key's type, a VARCHAR key's sharing its dictionary."""
    if not dtype.is_string or key.dictionary is None or not len(key.dictionary):
        return Column.nulls(dtype, n, dev)
    return Column(
        dtype,
        torch.zeros(n, dtype=key.data.dtype, device=dev),
        torch.zeros(n, dtype=torch.bool, device=dev),
        key.dictionary,
    )


def empty_sets(node, ctx, empty: Batch) -> Batch | None:
    """The rows of the grouping sets without keys over an empty input (the
    aggregates of no rows, or their states in a partial aggregation): one per
    such set, every key NULL."""
    sets = [j for j, s in enumerate(node.grouping.sets) if not s]
    if not sets:
        return None
    plain = replace(node, groups=(), grouping=None)
    row = concat_batches(list(plain.stream(ctx, iter([empty]))))
    out = []
    for j in sets:
        cols = dict(row.columns)
        for f, _ in node.groups:
            cols[f.id] = Column.nulls(f.type, row.num_rows, row.device)
        cols[node.grouping.field.id] = Column(
            T.INTEGER, torch.full((row.num_rows,), j, dtype=torch.int32, device=row.device)
        )
        out.append(Batch(cols, row.num_rows, row.device))
    return concat_batches(out)
