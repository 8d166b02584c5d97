"""Exchanged VARCHAR columns whose senders all hold one sorted dictionary
(the same digest: a table hash-partitioned at load) arrive as codes into the
receiver's own dictionary object, unshifted; senders with different
dictionaries fall back to the concatenated one. Either way the strings are
the rows' strings."""

from __future__ import annotations

import pyarrow as pa
import torch

from glint.columnar import types as T
from glint.columnar.column import Batch, Column, sorted_dictionary
from glint.distributed.exchange import Outgoing, assemble, unify


def _col(values):
    return sorted_dictionary(Column.from_arrow(pa.array(values).dictionary_encode(), T.VARCHAR))


def _exchange(columns):
    """Each sender's column (rank i sends all its rows to rank 0): rank 0's batch."""
    outs = [Outgoing(Batch({1: c}, len(c)), [len(c)]) for c in columns]
    posts = [o.post for o in outs]
    layout = dict(unify(posts))[1]
    bufs = [o.buffers(1, layout) for o in outs]
    received = {1: [torch.cat([b[k] for b in bufs]) for k in range(len(bufs[0]))]}
    return assemble(posts, 0, received, "alltoall", torch.device("cpu"))[1]


def test_one_digest_keeps_the_receivers_dictionary():
    a = _col(["MAIL", "AIR", "MAIL", "SHIP", "AIR", "RAIL", "AIR", "MAIL"])
    b = _col(["SHIP", "RAIL", "AIR", "MAIL", "SHIP", "MAIL", "RAIL", "AIR"])
    assert a.dictionary is b.dictionary and a.dictionary.digest is not None
    got = _exchange([a, b])
    assert got.dictionary is a.dictionary and got.dictionary.sorted_unique
    assert got.to_arrow().to_pylist() == a.to_arrow().to_pylist() + b.to_arrow().to_pylist()


def test_different_dictionaries_are_put_together():
    a = _col(["MAIL", "AIR", "MAIL", "AIR"])
    b = _col(["SHIP", "RAIL", "SHIP", "RAIL", "TRUCK", "TRUCK"])
    assert a.dictionary.digest != b.dictionary.digest
    got = _exchange([a, b])
    assert not got.dictionary.sorted_unique
    assert got.to_arrow().to_pylist() == a.to_arrow().to_pylist() + b.to_arrow().to_pylist()


def test_a_digest_not_held_here_uses_the_senders_entries():
    import glint.columnar.column as column

    a = _col(["x", "y", "x", "y", "x"])
    key = next(k for k, v in column._SHARED.items() if v is a.dictionary)
    column._SHARED.pop(key)  # as on a rank that never held these strings
    try:
        got = _exchange([a, a.take(torch.tensor([1, 1, 0, 1]))])
        assert got.dictionary is not a.dictionary and got.dictionary.sorted_unique
        assert got.dictionary.to_pylist() == ["x", "y"]
        assert got.to_arrow().to_pylist() == ["x", "y", "x", "y", "x", "y", "y", "x", "y"]
    finally:
        column._SHARED[key] = a.dictionary
