"""Batches between ranks: the rows a rank sends, as flat buffers per column,
and the batch it receives, built in place.

A sender groups its rows by destination (``segments``: rows per destination
for an all-to-all; one segment that every rank receives for an all-gather)
and describes each column in its post of the size exchange
(:meth:`~glint.distributed.comm.Communicator.sync`). Each column then moves as a few
buffers, one collective each, received straight into one contiguous tensor
per buffer (each sender's part at its offset, as "Terabyte-scale analytics in
the blink of an eye" builds columns, §2.3):

- ``data``: the values (int32, int64, float64; BOOLEAN as bytes; a value wider
  than 64 bits as [hi, lo] rows: when one sender has such values, all send
  that form);
- ``valid``: NULL flags as bytes, when any sender has NULLs;
- VARCHAR (Arrow layout, glint.columnar.column.Dictionary): ``data`` holds
  codes, plus ``offsets`` (int64, where each string starts in its segment's
  bytes) and ``bytes``. A sender ships either its dictionary to each
  destination that gets rows (small dictionaries: codes stay as they are) or
  each row's own string (codes 0..n-1 per segment). The receiver shifts each
  sender's codes by the entries before it and its offsets by the bytes
  before it: one dictionary, no string copied twice.

DECIMAL, DATE and TIMESTAMP are integers here, HUGEINT sums are [hi, lo] pairs, so every
glint type moves exactly.

>>> import torch
>>> from glint.columnar import types as T
>>> from glint.columnar.column import Batch, Column, Dictionary
>>> s = Column(T.VARCHAR, torch.tensor([2, 0, 1], dtype=torch.int32), None, Dictionary.from_pylist(["a", "bb", "c"]))
>>> out = Outgoing(Batch({1: s}, 3), [1, 2])        # one row to rank 0, two to rank 1
>>> lay = out.post.columns[0][1]
>>> out.post.rows, lay.strings, lay.entries, lay.nbytes
((1, 2), 'rows', (1, 2), (1, 3))
>>> [b.tolist() for b in out.buffers(1, dict(unify([out.post]))[1])]     # codes, offsets, bytes
[[0, 0, 1], [0, 0, 1], [99, 97, 98, 98]]

A rank that sends to itself alone receives what it sent:

>>> one = Outgoing(Batch({1: s}, 3), [3])
>>> got = assemble([one.post], 0, {1: one.buffers(1, dict(unify([one.post]))[1])}, "alltoall", s.device)
>>> got[1].to_arrow().to_pylist()
['c', 'a', 'bb']
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from glint.columnar import types as T
from glint.columnar.column import Batch, Column, Dictionary, concat_batches, slice_batch, to_wide
from glint.distributed.stats import ExchangeStats


@dataclass(frozen=True, slots=True)
class ColumnLayout:
    """What a sender says about one of its columns."""

    dtype: T.DataType
    tensor_dtype: torch.dtype
    wide: bool  # values as [hi, lo] rows
    valid: bool  # has NULL flags
    strings: str | None = None  # VARCHAR: "dictionary" or "rows" (see the module doc)
    entries: tuple[int, ...] = ()  # per segment: dictionary entries sent
    nbytes: tuple[int, ...] = ()  # per segment: string bytes sent


@dataclass(frozen=True, slots=True)
class Post:
    """A sender's part of the size exchange. ``more``: in an exchange in
    rounds, whether this rank has input left for another round."""

    rows: tuple[int, ...]  # per segment
    columns: tuple[tuple[object, ColumnLayout], ...]  # in key order
    more: bool = False


def _key_order(keys) -> list:
    return sorted(keys, key=repr)


class _Strings:
    """A VARCHAR column's codes and string buffers, by segment."""

    def __init__(self, c: Column, counts: list[int]):
        n, d = len(c), c.dictionary
        dest = [i for i, k in enumerate(counts) if k]
        if n and len(d) * len(dest) <= n:
            # a small dictionary: sent whole to each destination that gets rows
            offs = d.offsets.long()
            lo, hi = (int(x) for x in torch.stack([offs[0], offs[-1]]).tolist())
            e = len(d)
            self.strategy = "dictionary"
            self.codes = c.data
            self.offsets = (offs[:-1] - lo).repeat(len(dest))
            self.bytes = d.data[lo:hi].repeat(len(dest))
            self.entries = tuple(e if k else 0 for k in counts)
            self.nbytes = tuple(hi - lo if k else 0 for k in counts)
            return
        # each row's own string, segments one after the other
        t = d.take(c.data, c.valid) if n else Dictionary.from_pylist([], c.device)
        offs = t.offsets.long()
        starts = [0]
        for k in counts:
            starts.append(starts[-1] + k)
        bounds = offs[torch.tensor(starts, device=offs.device)].tolist() if n else [0] * len(starts)
        self.strategy = "rows"
        first_row = _per_row(starts[:-1], counts, n, c.device)
        self.codes = (torch.arange(n, dtype=torch.int64, device=c.device) - first_row).to(torch.int32)
        self.offsets = offs[:-1] - _per_row(bounds[:-1], counts, n, c.device)
        self.bytes = t.data[bounds[0] : bounds[-1]]
        self.entries = tuple(counts)
        self.nbytes = tuple(b - a for a, b in zip(bounds[:-1], bounds[1:]))


def _per_row(values: list[int], counts: list[int], n: int, device) -> torch.Tensor:
    """values[i] repeated counts[i] times (n in all), as int64 on the device."""
    return torch.repeat_interleave(
        torch.tensor(values, dtype=torch.int64, device=device),
        torch.tensor(counts, dtype=torch.int64, device=device),
        output_size=n,
    )


class Outgoing:
    """A sender's rows (grouped by destination, ``counts`` rows per segment)
    and its post for the size exchange."""

    def __init__(self, batch: Batch, counts: list[int], more: bool = False):
        self.batch, self.counts = batch, list(counts)
        self.keys = _key_order(batch.columns)
        self.strings: dict = {}
        layouts = []
        for k in self.keys:
            c = batch[k]
            s = None
            if c.dtype.is_string:
                s = self.strings[k] = _Strings(c, self.counts)
            layouts.append(
                (
                    k,
                    ColumnLayout(
                        c.dtype,
                        c.data.dtype,
                        c.is_wide,
                        c.valid is not None,
                        s.strategy if s else None,
                        s.entries if s else (),
                        s.nbytes if s else (),
                    ),
                )
            )
        self.post = Post(tuple(self.counts), tuple(layouts), more)

    def buffers(self, key, layout: Unified) -> list[torch.Tensor]:
        """The column's buffers to send, in the form every rank agreed on."""
        c = self.batch[key]
        s = self.strings.get(key)
        data = s.codes if s is not None else c.data
        if layout.wide and data.dim() == 1:
            data = to_wide(data)
        data = _wire(data.to(layout.tensor_dtype))
        out = [data]
        if layout.valid:
            out.append(_wire(c.validity()))
        if s is not None:
            out += [s.offsets, s.bytes]
        return out


def _wire(t: torch.Tensor) -> torch.Tensor:
    """A tensor as collectives take it (booleans as bytes, contiguous)."""
    if t.dtype == torch.bool:
        t = t.view(torch.uint8)
    return t.contiguous()


@dataclass(frozen=True, slots=True)
class Unified:
    """A column's layout on the wire, agreed from every sender's post."""

    dtype: T.DataType
    tensor_dtype: torch.dtype
    wide: bool
    valid: bool
    strings: bool


def unify(posts: list[Post]) -> list[tuple[object, Unified]]:
    keys = [k for k, _ in posts[0].columns]
    out = []
    for i, k in enumerate(keys):
        ls = [p.columns[i][1] for p in posts]
        if any(p.columns[i][0] != k for p in posts):
            raise RuntimeError(f"ranks disagree on the columns of an exchange: {[p.columns for p in posts]}")
        tdt = ls[0].tensor_dtype
        for lay in ls[1:]:
            tdt = torch.promote_types(tdt, lay.tensor_dtype)
        wide = any(lay.wide for lay in ls)
        out.append(
            (
                k,
                Unified(
                    ls[0].dtype,
                    torch.int64 if wide else tdt,
                    wide,
                    any(lay.valid for lay in ls),
                    ls[0].strings is not None,
                ),
            )
        )
    return out


def _counts(posts: list[Post], i: int, part: str, me: int, pattern: str) -> tuple[list[int], list[int], int]:
    """(what this rank sends per destination, what it receives per sender,
    what all ranks send in all) of column i's ``part``: rows, entries or nbytes."""

    def seg(p: Post) -> tuple[int, ...]:
        return p.rows if part == "rows" else getattr(p.columns[i][1], part)

    mine = seg(posts[me])
    if pattern == "alltoall":
        return list(mine), [seg(p)[me] for p in posts], sum(sum(seg(p)) for p in posts)
    recv = [seg(p)[0] for p in posts]
    return [mine[0]] * len(posts), recv, sum(recv)


class Transfer:
    """One step's column buffers in flight: every collective is issued
    (``comm.start_*``: asynchronous work handles, in the same order on every
    rank) when it is made; :meth:`finish` waits for them and builds the
    received batch. Until then it holds the send and receive buffers, which
    the backend reads and writes in the background."""

    def __init__(self, comm, out: Outgoing, posts: list[Post], pattern: str, what: str, ex: ExchangeStats):
        self.comm, self.posts, self.pattern, self.what = comm, posts, pattern, what
        self.works: list = []
        self.sent: list[torch.Tensor] = []
        self.received: dict = {}
        me = comm.rank
        for i, (k, lay) in enumerate(unify(posts)):
            parts = ["rows"] + (["rows"] if lay.valid else []) + (["entries", "nbytes"] if lay.strings else [])
            got = []
            for buf, part in zip(out.buffers(k, lay), parts):
                send, recv, total = _counts(posts, i, part, me, pattern)
                got.append(self._move(buf, send, recv, total, ex))
            self.received[k] = got

    def _move(self, buf: torch.Tensor, send: list[int], recv: list[int], total: int, ex: ExchangeStats) -> torch.Tensor:
        comm = self.comm
        me, n = comm.rank, comm.size
        row = buf.element_size() * (buf.shape[1] if buf.dim() == 2 else 1)
        out = torch.empty((sum(recv),) + tuple(buf.shape[1:]), dtype=buf.dtype, device=buf.device)
        if total == 0:  # every rank computed the same total: nobody issues this one
            return out
        self.sent.append(buf)
        if self.pattern == "alltoall":
            self.works.append(comm.start_alltoall(out, buf, recv, send))
            ex.messages_sent += sum(1 for r in range(n) if r != me and send[r])
            ex.messages_received += sum(1 for r in range(n) if r != me and recv[r])
            ex.bytes_sent += row * sum(send[r] for r in range(n) if r != me)
        else:
            offs = [0]
            for c in recv:
                offs.append(offs[-1] + c)
            out[offs[me] : offs[me + 1]] = buf
            for root in range(n):
                if recv[root]:
                    self.works.append(comm.start_broadcast(out[offs[root] : offs[root + 1]], root))
            if recv[me]:
                ex.messages_sent += n - 1
                ex.bytes_sent += row * recv[me] * (n - 1)
            ex.messages_received += sum(1 for r in range(n) if r != me and recv[r])
        ex.bytes_received += row * sum(recv[r] for r in range(n) if r != me)
        return out

    def finish(self) -> Batch:
        """Waits for the step's collectives (in the order they were issued)
        and returns the received batch."""
        for w in self.works:
            self.comm.wait(w, self.what)
        self.works, self.sent = [], []
        return assemble(self.posts, self.comm.rank, self.received, self.pattern, self.comm.device)


def assemble(posts: list[Post], me: int, received: dict, pattern: str, device) -> Batch:
    """The received batch: each column from its buffers, senders in rank order."""
    if len(received) != len(posts[0].columns):
        raise ValueError("assemble takes the received buffers of every column")
    seg = (lambda p: p.rows[me]) if pattern == "alltoall" else (lambda p: p.rows[0])
    rows = [seg(p) for p in posts]
    total = sum(rows)
    cols = {}
    for i, (k, lay) in enumerate(unify(posts)):
        bufs = received[k]
        data = bufs[0]
        if lay.tensor_dtype == torch.bool:
            data = data.view(torch.bool)
        valid = bufs[1].view(torch.bool) if lay.valid else None
        dictionary = None
        if lay.strings:
            offsets, raw = bufs[-2], bufs[-1]
            pick = (
                (lambda p, part: getattr(p.columns[i][1], part)[me])
                if pattern == "alltoall"
                else (lambda p, part: getattr(p.columns[i][1], part)[0])
            )
            entries = [pick(p, "entries") for p in posts]
            nbytes = [pick(p, "nbytes") for p in posts]
            data = data + _per_row(_exclusive(entries), rows, total, device).to(torch.int32)
            offsets = offsets + _per_row(_exclusive(nbytes), entries, sum(entries), device)
            offsets = torch.cat([offsets, torch.tensor([sum(nbytes)], dtype=torch.int64, device=device)])
            dictionary = Dictionary(offsets, raw)
        cols[k] = Column(lay.dtype, data, valid, dictionary)
    return Batch(cols, total, device)


def _exclusive(xs: list[int]) -> list[int]:
    out, acc = [], 0
    for x in xs:
        out.append(acc)
        acc += x
    return out


def exchange(comm, batch: Batch, counts: list[int], pattern: str, kind: str, what: str) -> Batch:
    """The full exchange of one step: size exchange, then the buffers.
    ``batch``'s rows are grouped by destination (``counts`` per rank) for an
    all-to-all; for an all-gather ``counts`` is [its row count]."""
    t0 = time.perf_counter()
    out = Outgoing(batch, counts)
    posts, wait_s = comm.sync(out.post, what)
    ex = ExchangeStats(comm.step, kind, what, wait_s=wait_s)
    ex.rows_sent = (
        sum(c for r, c in enumerate(counts) if r != comm.rank)
        if pattern == "alltoall"
        else (counts[0] * (comm.size - 1))
    )
    got = Transfer(comm, out, posts, pattern, what, ex).finish()
    if got.device.type == "cuda":
        torch.cuda.synchronize(got.device)  # the exchange's time ends when its data is there
    ex.rows_received = got.num_rows - (counts[comm.rank] if pattern == "alltoall" else counts[0])
    ex.seconds = time.perf_counter() - t0 - wait_s
    comm.stats.record(ex)
    return got


# ------------------------------------------------------------------ operators' shared steps
def communicator(ctx, node):
    """The run's communicator; an exchange outside a distributed run is a planning bug."""
    comm = getattr(ctx, "dist", None)
    if comm is None:
        raise RuntimeError(f"{type(node).__name__} runs only on the ranks of a distributed connection")
    return comm


def collect(inp, keep: bool = True) -> Batch:
    """The whole input stream as one batch (its rows dropped unless ``keep``:
    the input of a rank other than 0 under a ``single`` distribution). The
    stream is read to its end either way, so any exchange inside it runs on
    this rank as on the others."""
    first = None
    parts = []
    for b in inp:
        if first is None:
            first = slice_batch(b, 0, 0)
        if keep and b.num_rows:
            parts.append(b)
    return concat_batches(parts) if parts else first


def by_destination(batch: Batch, dest: torch.Tensor, ranks: int) -> tuple[Batch, list[int]]:
    """The rows grouped by destination rank (stable) and the count for each."""
    if batch.num_rows == 0:
        return batch, [0] * ranks
    order = torch.argsort(dest, stable=True)
    counts = torch.bincount(dest, minlength=ranks).tolist()
    return batch.take(order), counts
