"""An exchange step's buffers moved packed (one byte buffer per destination,
one collective), as one group of point-to-point transfers (NCCL's large
steps) or one collective per column buffer: the same batches on
every rank, for every column form (int32, int64, doubles, booleans, values
wider than 64 bits, NULL flags, strings sent as dictionaries and row by
row, empty segments). The ranks are simulated in one process: each rank's
Transfer issues its collectives to a shared world that carries them out once
every rank has issued the same one, as a backend would."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest
import torch

from glint.columnar import types as T
from glint.columnar.column import Batch, Column
from glint.distributed.exchange import Outgoing, Transfer, by_destination
from glint.distributed.stats import ExchangeStats


class _World:
    """Collectives of N simulated ranks: each rank's i-th collective runs when
    every rank has issued its i-th."""

    def __init__(self, n: int):
        self.n = n
        self.ops: list[list] = [[] for _ in range(n)]
        self.done = 0

    def run_ready(self) -> None:
        while all(len(ops) > self.done for ops in self.ops):
            calls = [ops[self.done] for ops in self.ops]
            kind = calls[0][0]
            assert all(c[0] == kind for c in calls), "ranks issued different collectives"
            if kind == "alltoall":
                for r, (_, out, _, out_splits, _) in enumerate(calls):
                    at = 0
                    for s, (_, _, inp, _, in_splits) in enumerate(calls):
                        start = sum(in_splits[:r])
                        piece = inp[start : start + in_splits[r]]
                        assert piece.shape[0] == out_splits[s]
                        out[at : at + out_splits[s]] = piece
                        at += out_splits[s]
            elif kind == "group":
                # the k-th send from s to r fills the k-th receive of r from s
                for r, (_, _, recvs) in enumerate(calls):
                    for s_ in range(self.n):
                        got = [t for t, peer in recvs if peer == s_]
                        sent = [t for t, peer in calls[s_][1] if peer == r]
                        assert len(got) == len(sent), "unmatched point-to-point transfers"
                        for dst, src in zip(got, sent):
                            assert dst.shape == src.shape and dst.is_contiguous() and src.is_contiguous()
                            dst.copy_(src)
            else:
                root = calls[0][2]
                for _, t, _ in calls:
                    t.copy_(calls[root][1])
            self.done += 1


class _Comm:
    def __init__(self, world: _World, rank: int, grouped: bool = False):
        self.world, self.rank, self.size = world, rank, world.n
        self.device = torch.device("cpu")
        self.collectives = 0
        self.grouped = self.can_group = grouped

    def start_group(self, sends, recvs):
        self.collectives += 1
        assert all(peer != self.rank for _, peer in sends + recvs)
        self.world.ops[self.rank].append(("group", list(sends), list(recvs)))
        return len(self.world.ops[self.rank])

    def start_alltoall(self, out, inp, out_splits, in_splits):
        self.collectives += 1
        self.world.ops[self.rank].append(("alltoall", out, inp, list(out_splits), list(in_splits)))
        return len(self.world.ops[self.rank])

    def start_broadcast(self, t, root):
        self.collectives += 1
        self.world.ops[self.rank].append(("broadcast", t, root))
        return len(self.world.ops[self.rank])

    def wait(self, work, what):
        self.world.run_ready()
        assert self.world.done >= work, f"{what}: a collective never ran"


def _batch(rank: int, n: int, seed: int, strings: str) -> Batch:
    rng = np.random.default_rng(seed * 10 + rank)
    nulls = rng.random(n) < 0.2
    words = [f"w{int(v)}" for v in rng.integers(0, 3 if strings == "dictionary" else 10_000, n)]
    wide = [Decimal(int(v)) * (10**20) for v in rng.integers(-50, 50, n)]
    t = pa.table(
        {
            "i": pa.array(rng.integers(-100, 100, n), pa.int32()),
            "b": pa.array(rng.integers(-(2**40), 2**40, n), pa.int64(), mask=nulls),
            "f": pa.array(rng.normal(size=n)),
            "t": pa.array(rng.random(n) < 0.5),
            "w": pa.array(wide, pa.decimal128(38, 0)),
            "s": pa.array(words, pa.string(), mask=rng.random(n) < 0.1),
        }
    )
    return Batch({k: Column.from_arrow(t[k]) for k in t.column_names}, n)


def _run(batches: list[Batch], pattern: str, packed: list[bool], dest=None, counts=None, grouped=False):
    n = len(batches)
    world = _World(n)
    comms = [_Comm(world, r, grouped) for r in range(n)]
    outs = []
    for r, b in enumerate(batches):
        if counts is not None:  # the batch as it is, its rows to ranks in order
            outs.append(Outgoing(b, counts(r, b), packed=packed[r]))
            continue
        if pattern == "alltoall":
            if dest is None:
                to = torch.from_numpy(np.random.default_rng(r).integers(0, n, b.num_rows))
                to[to == n - 1] = 0  # the last rank gets no rows: empty segments
            else:
                to = torch.tensor(dest(r, b), dtype=torch.int64)
            grouped, rows = by_destination(b, to, n)
        else:
            grouped, rows = b, [b.num_rows]
        outs.append(Outgoing(grouped, rows, packed=packed[r]))
    posts = [o.post for o in outs]
    transfers = [
        Transfer(comms[r], outs[r], posts, pattern, "test", ExchangeStats(0, "shuffle", "test")) for r in range(n)
    ]
    got = [t.finish() for t in transfers]
    return got, [c.collectives for c in comms]


def _rows(b: Batch) -> list:
    return sorted(map(repr, zip(*(b[k].to_arrow().to_pylist() for k in sorted(b.columns)))))


@pytest.mark.parametrize("pattern", ["alltoall", "allgather"])
@pytest.mark.parametrize("strings", ["dictionary", "rows"])
def test_packed_and_per_buffer_exchanges_deliver_the_same_rows(pattern, strings):
    batches = [_batch(r, n, 1, strings) for r, n in enumerate((300, 0, 57, 1))]
    packed, k_packed = _run(batches, pattern, [True] * 4)
    plain, k_plain = _run(batches, pattern, [False] * 4)
    for a, b in zip(packed, plain):
        assert a.num_rows == b.num_rows
        assert _rows(a) == _rows(b)
    if pattern == "alltoall":
        assert k_packed == [1] * 4 and min(k_plain) > 4
        every = sorted(r for b in batches for r in _rows(b))
        assert sorted(r for b in packed for r in _rows(b)) == every
        assert packed[3].num_rows == 0
    else:
        assert all(k == 3 for k in k_packed)  # one broadcast per rank that has rows
        every = sorted(r for b in batches for r in _rows(b))
        assert all(_rows(b) == every for b in packed)


@pytest.mark.parametrize("strings", ["dictionary", "rows"])
def test_grouped_point_to_point_steps_deliver_the_same_rows(strings):
    batches = [_batch(r, n, 3, strings) for r, n in enumerate((500, 0, 73, 1))]
    grouped, k_grouped = _run(batches, "alltoall", [False] * 4, grouped=True)
    plain, k_plain = _run(batches, "alltoall", [False] * 4)
    assert k_grouped == [1] * 4 and min(k_plain) > 4
    for a, b in zip(grouped, plain):
        assert _rows(a) == _rows(b)
    every = sorted(r for b in batches for r in _rows(b))
    assert sorted(r for b in grouped for r in _rows(b)) == every


def test_a_step_past_the_packing_limit_is_not_packed(monkeypatch):
    import glint.distributed.exchange as X

    batches = [_batch(r, 200, 4, "rows") for r in range(3)]
    small, k_small = _run(batches, "alltoall", [True] * 3)
    monkeypatch.setattr(X, "PACK_MAX_BYTES", 1000)  # every rank's step is larger
    large, k_large = _run(batches, "alltoall", [True] * 3, grouped=True)
    assert k_small == [1] * 3 and k_large == [1] * 3  # packed, then one group each
    assert [_rows(b) for b in small] == [_rows(b) for b in large]
    plain, k_plain = _run(batches, "alltoall", [True] * 3)
    assert min(k_plain) > 3 and [_rows(b) for b in plain] == [_rows(b) for b in small]


def test_a_single_value_of_a_strided_column_is_packed():
    # one row of every second value: torch calls it contiguous, with a stride of 2
    pairs = torch.arange(8, dtype=torch.int64).view(4, 2)
    one = Batch({"x": Column(T.BIGINT, pairs[:1, 0]), "y": Column(T.DOUBLE, pairs[:1, 1].double())}, 1)
    none = Batch({"x": Column(T.BIGINT, pairs[:0, 0]), "y": Column(T.DOUBLE, pairs[:0, 1].double())}, 0)
    assert one["x"].data.stride(0) == 2 and one["x"].data.is_contiguous()
    # a gather's round: the batch as it is, every row to rank 0
    got, collectives = _run([none, none, one], "alltoall", [True] * 3, counts=lambda r, b: [b.num_rows, 0, 0])
    assert collectives == [1, 1, 1]
    assert [b.num_rows for b in got] == [1, 0, 0] and _rows(got[0]) == _rows(one)


def test_ranks_that_disagree_move_buffers_one_by_one():
    batches = [_batch(r, 40, 2, "rows") for r in range(3)]
    got, collectives = _run(batches, "alltoall", [True, False, True])
    assert min(collectives) > 1
    every = sorted(r for b in batches for r in _rows(b))
    assert sorted(r for b in got for r in _rows(b)) == every
