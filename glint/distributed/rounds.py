"""Exchanges in rounds: a shuffle or gather that never holds its whole input
or its whole output.

Each round, every rank takes up to ``round_bytes`` of its input (whole
chunks, the last one sliced), groups the rows by destination and posts the
round's sizes in the size exchange, with a *more* flag: whether it has input
left after this round. The ranks then move the round, one uneven all-to-all
per column buffer (:class:`~glint.distributed.exchange.Transfer`), and its rows go
downstream. Another round follows while any rank said *more*: a rank whose
input ran out (or never had any) sends empty rounds, so every rank takes
every step and none waits on a collective another never starts. Each round
starts with the size exchange, so a rank that fails or hangs between rounds
is found there, as at any exchange (:mod:`glint.distributed.comm`).

Memory: a rank holds its round's input and grouped copy, its send buffers,
and what it receives: at most N rounds' worth under skew (every rank's whole
round to one rank), a round's worth on average. The default round is an
eighth of what the rank's memory manager keeps free for chunks in flight,
between 1 MiB and 256 MiB (:func:`round_size`).

Overlap: round k's collectives are started as asynchronous work handles
(:mod:`glint.distributed.comm`), then round k-1 is waited for and its rows handed
downstream, and round k+1 is read and hashed while round k is in flight; at
most two rounds are in flight. Every collective is started by the thread
that runs the query, in the same order on every rank, which is what Gloo
(ordered by tags on one process group) and NCCL (ordered by launch on its
stream) need; a helper thread would have to issue collectives of its own,
and two threads issuing on one group cannot keep that order.

The order of steps across exchanges: an exchange in rounds takes steps
*between* the batches it reads and yields. Two of them in one pipeline (one
reading the other's output through filters, projections and join probes)
would interleave their rounds differently on each rank (rank 0's third round
of the outer one might follow the inner one's second round, rank 1's its
fifth), and the ranks would wait on different collectives. So an exchange
whose input may take steps after its first batch reads that input to its end
first (``hold``: held under a reservation, spilled when it does not fit),
then runs its rounds; the distributed planner decides which
(:func:`glint.distributed.steps.settle`).

>>> import torch
>>> from glint.columnar import types as T
>>> from glint.columnar.column import Batch, Column
>>> chunks = [Batch({1: Column(T.BIGINT, torch.arange(i * 100, i * 100 + 100))}, 100) for i in range(3)]
>>> src = RoundInput(iter(chunks), limit=8 * 120)          # 120 BIGINTs a round
>>> rounds = []
>>> while True:
...     b = src.take()
...     rounds.append((b.num_rows, src.more))
...     if not src.more:
...         break
>>> rounds
[(120, True), (120, True), (60, False)]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import torch

from glint.columnar.column import Batch, concat_batches, rechunk, slice_batch
from glint.distributed.exchange import Outgoing, Transfer
from glint.distributed.stats import ExchangeStats
from glint.runtime.spill import PartitionedBatches

MIN_ROUND_BYTES = 1 << 20
MAX_ROUND_BYTES = 1 << 28


class InRounds:
    """What an exchange in rounds declares: a step every rank takes together
    (see :func:`glint.distributed.steps.has_exchange`), and a pipeline breaker only
    when it reads its input to the end first (``hold_input``)."""

    __slots__ = ()
    exchange = True

    @property
    def breaker(self) -> bool:
        return self.hold_input


def round_size(memory, configured: int = 0, packed: bool = False) -> int:
    """Bytes of input a rank moves per round: ``configured`` when set (the
    plan's, from ``glint.connect(round_bytes=...)``), else an eighth of the
    memory kept free for chunks in flight (a round's input and grouped copy,
    send and receive buffers, the assembled rows; two rounds in flight), a
    twelfth when the steps are ``packed`` (the packed send and receive
    buffers are two more copies), between 1 MiB and 256 MiB.

    >>> from glint.runtime.memory import MemoryManager
    >>> m = MemoryManager(torch.device("cpu"), 1 << 34, headroom=800 << 20)
    >>> round_size(m) >> 20, round_size(m, packed=True) >> 20
    (100, 66)
    >>> round_size(None, 4096)
    4096
    """
    if configured:
        return max(1, int(configured))
    return max(MIN_ROUND_BYTES, min(MAX_ROUND_BYTES, memory.working_reserve() // (12 if packed else 8)))


def wire_nbytes(batch: Batch) -> int:
    """About the bytes a batch's rows take in an exchange: values, NULL flags,
    and for strings the codes plus either the dictionary (when it has no more
    entries than rows) or each row's share of its bytes and offsets.

    >>> from glint.columnar import types as T
    >>> from glint.columnar.column import Column, Dictionary
    >>> s = Column(T.VARCHAR, torch.tensor([0, 1, 0, 1], dtype=torch.int32), None, Dictionary.from_pylist(["ab", "cd"]))
    >>> wire_nbytes(Batch({1: s, 2: Column(T.BIGINT, torch.arange(4))}, 4))
    64
    """
    n = batch.num_rows
    total = 0
    for c in batch.columns.values():
        total += c.data.numel() * c.data.element_size()
        if c.valid is not None:
            total += n
        d = c.dictionary
        if d is not None:
            entries = len(d)
            if entries <= n:
                total += d.nbytes()
            elif entries:
                total += n * (d.data.numel() // entries + 8)
    return total


class RoundInput:
    """A rank's input stream taken a round at a time: :meth:`take` returns
    the next rows, about ``limit`` bytes (whole chunks; the chunk that
    crosses the limit is sliced), and ``more`` says whether input is left.
    One chunk is read ahead to know it. With ``keep=False`` the input is read
    to its end at once and its rows dropped (a rank other than 0 under a
    ``single`` distribution: it sends nothing, but whatever exchanges run
    inside its input must run on it too)."""

    def __init__(self, inp: Iterator[Batch], limit: int, keep: bool = True):
        self._inp = inp
        self.limit = max(1, int(limit))
        self.keep = keep
        self._pending: Batch | None = None
        self._empty: Batch | None = None
        self._done = False

    def _fill(self) -> None:
        while self._pending is None and not self._done:
            b = next(self._inp, None)
            if b is None:
                self._done = True
                break
            if self._empty is None:
                self._empty = slice_batch(b, 0, 0)
            if self.keep and b.num_rows:
                self._pending = b

    @property
    def more(self) -> bool:
        self._fill()
        return self._pending is not None

    def take(self) -> Batch:
        parts, size = [], 0
        while self.more and size < self.limit:
            b = self._pending
            nb = wire_nbytes(b)
            if size + nb > self.limit and b.num_rows > 1:
                rows = max(1, int(b.num_rows * (self.limit - size) / nb))
                if rows < b.num_rows:
                    parts.append(slice_batch(b, 0, rows))
                    self._pending = slice_batch(b, rows, b.num_rows)
                    break
            parts.append(b)
            size += nb
            self._pending = None
        if self._empty is None:
            raise RuntimeError("an exchange's input stream yielded no batch (not even the columns)")
        return concat_batches(parts) if parts else self._empty


def held_input(ctx, inp: Iterator[Batch], keep: bool, owner: str) -> tuple[Iterator[Batch], Callable[[], None]]:
    """The input read to its end (its exchanges done) and held, spilling when
    the reservation cannot grow: (a stream of the held rows, the release)."""
    res = ctx.memory.reservation(owner)
    held = PartitionedBatches(1, ctx.spill, res)
    if keep:
        first = held.hold(inp)
    else:
        first = None
        for b in inp:
            first = first if first is not None else slice_batch(b, 0, 0)

    def stream():
        if first is not None:
            yield first
        yield from held.drain(0)

    def release():
        held.drop()
        res.release()

    return stream(), release


def exchange_rounds(
    ctx,
    comm,
    inp: Iterator[Batch],
    split: Callable,
    pattern: str,
    kind: str,
    what: str,
    *,
    limit: int,
    keep: bool = True,
    hold: bool = False,
) -> Iterator[Batch]:
    """The rows this rank receives, round by round (each round's rows cut
    to ``ctx.chunk_rows``). ``split(batch)`` groups a round's rows by
    destination: (batch, rows per destination rank); ``pattern`` is the
    collective ("alltoall"). The exchange is recorded once in the rank's
    statistics with its rounds; its time is the size exchanges', the packing,
    the waits for collectives and the assembly, not the input's compute."""
    release = None
    if hold:
        inp, release = held_input(ctx, inp, keep, f"{what[:60]} (input held)")
    src = RoundInput(inp, limit, keep)
    ex = ExchangeStats(0, kind, what, rounds=0, round_bytes=src.limit)
    flight: list[tuple[Transfer, int]] = []
    try:
        more = True
        while more:
            batch = src.take()
            grouped, counts = split(batch)
            t0 = time.perf_counter()
            out = Outgoing(grouped, counts, src.more, getattr(comm, "packed", False))
            ex.rounds += 1
            posts, wait_s = comm.sync(out.post, f"{what}, round {ex.rounds}")
            if ex.rounds == 1:  # recorded at its first step (its input's exchanges come first)
                ex.step = comm.step
                comm.stats.record(ex)
            ex.wait_s += wait_s
            more = any(p.more for p in posts)
            own = counts[comm.rank]
            ex.rows_sent += sum(counts) - own
            flight.append((Transfer(comm, out, posts, pattern, what, ex), own))
            del out, grouped, batch
            ex.seconds += time.perf_counter() - t0 - wait_s
            if len(flight) > 1:  # round k is in flight: hand round k-1 downstream
                yield from _finish(flight.pop(0), ex, ctx.chunk_rows)
        while flight:
            yield from _finish(flight.pop(0), ex, ctx.chunk_rows)
    finally:
        # closed early (an error): collectives still in flight keep their
        # buffers in their work handles; every rank started them, so they end
        flight.clear()
        if release is not None:
            release()


def _finish(item: tuple[Transfer, int], ex: ExchangeStats, chunk_rows: int) -> Iterator[Batch]:
    transfer, own = item
    t0 = time.perf_counter()
    got = transfer.finish()
    if got.device.type == "cuda":
        # the exchange's time ends when its data is there; the compute stream
        # (not the device: the next round is in flight on NCCL's stream)
        torch.cuda.current_stream(got.device).synchronize()
    ex.rows_received += got.num_rows - own
    ex.seconds += time.perf_counter() - t0
    yield from rechunk([got], chunk_rows)
