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
  before it: one dictionary, no string copied twice. Where every sender's
  dictionary has one digest (the same sorted strings: a table
  hash-partitioned at load), the codes stay as they are, into the
  receiver's own dictionary of that digest (its memo of string tests kept).

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
from glint.columnar.column import Batch, Column, Dictionary, concat_batches, shared_dictionary, slice_batch, to_wide
from glint.distributed.stats import ExchangeStats
from glint.kernels.partition import partition_order


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
    digest: bytes | None = None  # "dictionary": its Dictionary.digest, where it has one


@dataclass(frozen=True, slots=True)
class Post:
    """A sender's part of the size exchange. ``more``: in an exchange in
    rounds, whether this rank has input left for another round."""

    rows: tuple[int, ...]  # per segment
    columns: tuple[tuple[object, ColumnLayout], ...]  # in key order
    more: bool = False
    packed: bool = False  # this rank would move the step's buffers packed (used when every rank would):
    # packing is on and it sends at most PACK_MAX_BYTES


PACK_MAX_BYTES = 4 << 20  # a larger step is not packed: the copies in and out would cost more than launches


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
            self.digest = d.digest
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
        self.digest = None
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

    def __init__(self, batch: Batch, counts: list[int], more: bool = False, packed: bool = False):
        self.batch, self.counts = batch, list(counts)
        self.keys = _key_order(batch.columns)
        self.strings: dict = {}
        layouts = []
        nbytes = 0  # on the wire, about
        for k in self.keys:
            c = batch[k]
            s = None
            nbytes += c.data.numel() * c.data.element_size() + (batch.num_rows if c.valid is not None else 0)
            if c.dtype.is_string:
                s = self.strings[k] = _Strings(c, self.counts)
                nbytes += s.bytes.numel() + 8 * s.offsets.numel()
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
                        s.digest if s else None,
                    ),
                )
            )
        self.nbytes = nbytes
        self.post = Post(tuple(self.counts), tuple(layouts), more, packed and nbytes <= PACK_MAX_BYTES)

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
    the backend reads and writes in the background.

    Packed (every rank's post says so): all the buffers go as one byte buffer
    per destination, each piece padded to 8 bytes, in one all-to-all (one
    broadcast per sending rank for an all-gather); the receiver then cuts
    each buffer's pieces out and joins them. One collective per step instead
    of one per column buffer, for one more copy of what is received: each
    collective has a fixed cost (a launch, a rendezvous of the ranks) that
    dominates small steps. A large step (more than PACK_MAX_BYTES from any
    rank) on NCCL goes as one group of point-to-point transfers: each
    buffer's part for each rank sent from where it lies and received into
    place (no copy on either side, one launch). Otherwise each buffer is its
    own collective, received straight into place."""

    def __init__(self, comm, out: Outgoing, posts: list[Post], pattern: str, what: str, ex: ExchangeStats):
        self.comm, self.posts, self.pattern, self.what = comm, posts, pattern, what
        self.works: list = []
        self.sent: list[torch.Tensor] = []
        self.received: dict = {}
        self._unpack = None  # packed: builds self.received once the collectives are done
        me = comm.rank
        pieces = []  # (column key, buffer, sent per destination, received per sender, all ranks' total)
        for i, (k, lay) in enumerate(unify(posts)):
            parts = ["rows"] + (["rows"] if lay.valid else []) + (["entries", "nbytes"] if lay.strings else [])
            for buf, part in zip(out.buffers(k, lay), parts):
                pieces.append((k, buf, *_counts(posts, i, part, me, pattern)))
        if len(pieces) > 1 and all(p.packed for p in posts):
            self._move_packed(pieces, ex)
            return
        if pattern == "alltoall" and getattr(comm, "grouped", False) and comm.can_group:
            self._move_grouped(pieces, ex)
            return
        for k, buf, send, recv, total in pieces:
            self.received.setdefault(k, []).append(self._move(buf, send, recv, total, ex))

    def _move_packed(self, pieces: list, ex: ExchangeStats) -> None:
        comm = self.comm
        me, n = comm.rank, comm.size
        dev = pieces[0][1].device
        row_bytes = [_row_bytes(buf) for _, buf, *_ in pieces]
        # bytes of each (buffer, rank) piece on the wire, padded: what rank r receives from s
        # (alltoall) or what root r sends everyone (allgather), the same on every rank
        sizes = [[_padded(recv[r] * rb) for r in range(n)] for (_, _, _, recv, _), rb in zip(pieces, row_bytes)]
        pad = torch.zeros(8, dtype=torch.uint8, device=dev)

        def pack(rows: list[list[int]], starts: list[list[int]]) -> tuple[torch.Tensor, list[int]]:
            """This rank's buffers as bytes, destination by destination (one segment
            for an all-gather): rows[i][r] rows of buffer i from row starts[i][r]
            go to r. Also the bytes for each destination."""
            chunks, nbytes = [], []
            for r in range(len(rows[0])):
                total = 0
                for i, ((_, buf, *_), rb) in enumerate(zip(pieces, row_bytes)):
                    cnt = rows[i][r]
                    if not cnt:
                        continue
                    flat = buf[starts[i][r] : starts[i][r] + cnt].reshape(-1)
                    if flat.stride(0) != 1:  # (one value of a strided column counts as contiguous)
                        flat = torch.empty(flat.shape, dtype=flat.dtype, device=flat.device).copy_(flat)
                    chunks.append(flat.view(torch.uint8))
                    size = _padded(cnt * rb)
                    if size > cnt * rb:
                        chunks.append(pad[: size - cnt * rb])
                    total += size
                nbytes.append(total)
            return (torch.cat(chunks) if chunks else pad[:0]), nbytes

        if self.pattern == "alltoall":
            sends = [send for _, _, send, _, _ in pieces]
            send_buf, send_bytes = pack(sends, [_exclusive(send) for send in sends])
            recv_bytes = [sum(sz[s] for sz in sizes) for s in range(n)]
            recv_buf = torch.empty(sum(recv_bytes), dtype=torch.uint8, device=dev)
            if sum(p[4] for p in pieces):  # (every rank computed the same totals)
                self.sent.append(send_buf)
                self.works.append(comm.start_alltoall(recv_buf, send_buf, recv_bytes, send_bytes))
            ex.messages_sent += sum(1 for r in range(n) if r != me and send_bytes[r])
            ex.messages_received += sum(1 for r in range(n) if r != me and recv_bytes[r])
            ex.bytes_sent += sum(send_bytes[r] for r in range(n) if r != me)
            ex.bytes_received += sum(recv_bytes[r] for r in range(n) if r != me)
            from_rank = [recv_buf[a : a + b] for a, b in zip(_exclusive(recv_bytes), recv_bytes)]
        else:
            own, _ = pack([[send[0]] for _, _, send, _, _ in pieces], [[0]] * len(pieces))
            from_rank = []
            for root in range(n):
                size = sum(sz[root] for sz in sizes)
                t = own if root == me else torch.empty(size, dtype=torch.uint8, device=dev)
                if size:
                    self.sent.append(t)
                    self.works.append(comm.start_broadcast(t, root))
                from_rank.append(t)
            if sizes and sum(sz[me] for sz in sizes):
                ex.messages_sent += n - 1
                ex.bytes_sent += sum(sz[me] for sz in sizes) * (n - 1)
            ex.messages_received += sum(1 for r in range(n) if r != me and any(sz[r] for sz in sizes))
            ex.bytes_received += sum(sz[r] for sz in sizes for r in range(n) if r != me)

        def unpack() -> None:
            at = [0] * n  # where each sender's next piece starts in its bytes
            for (k, buf, _, recv, _), rb, sz in zip(pieces, row_bytes, sizes):
                parts = []
                for s in range(n):
                    if recv[s]:
                        raw = from_rank[s][at[s] : at[s] + recv[s] * rb]
                        parts.append(raw.view(buf.dtype).reshape((recv[s],) + tuple(buf.shape[1:])))
                    at[s] += sz[s]
                empty = buf.new_empty((0,) + tuple(buf.shape[1:]))
                got = torch.cat(parts) if len(parts) > 1 else (parts[0] if parts else empty)
                self.received.setdefault(k, []).append(got)

        self._unpack = unpack

    def _move_grouped(self, pieces: list, ex: ExchangeStats) -> None:
        comm = self.comm
        me, n = comm.rank, comm.size
        sends, recvs = [], []
        for k, buf, send, recv, total in pieces:
            out = torch.empty((sum(recv),) + tuple(buf.shape[1:]), dtype=buf.dtype, device=buf.device)
            self.received.setdefault(k, []).append(out)
            if total == 0:
                continue
            row = _row_bytes(buf)
            s_at, r_at = _exclusive(send), _exclusive(recv)
            if send[me]:  # this rank's own rows: a copy on the device
                out[r_at[me] : r_at[me] + recv[me]].copy_(buf[s_at[me] : s_at[me] + send[me]])
            for r in range(n):
                if r != me and send[r]:
                    sends.append((buf[s_at[r] : s_at[r] + send[r]], r))
                if r != me and recv[r]:
                    recvs.append((out[r_at[r] : r_at[r] + recv[r]], r))
            ex.bytes_sent += row * sum(send[r] for r in range(n) if r != me)
            ex.bytes_received += row * sum(recv[r] for r in range(n) if r != me)
        ex.messages_sent += len({r for _, r in sends})
        ex.messages_received += len({r for _, r in recvs})
        if sends or recvs:
            self.sent += [t for t, _ in sends]
            self.works.append(comm.start_group(sends, recvs))

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
        if self._unpack is not None:
            self._unpack()
            self._unpack = None
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
            shared = _shared(posts, i, entries, offsets, raw, nbytes, device)
            if shared is not None:
                dictionary = shared  # every sender's codes index it as they are
            else:
                data = data + _per_row(_exclusive(entries), rows, total, device).to(torch.int32)
                offsets = offsets + _per_row(_exclusive(nbytes), entries, sum(entries), device)
                offsets = torch.cat([offsets, torch.tensor([sum(nbytes)], dtype=torch.int64, device=device)])
                dictionary = Dictionary(offsets, raw)
        cols[k] = Column(lay.dtype, data, valid, dictionary)
    return Batch(cols, total, device)


def _shared(posts: list[Post], i: int, entries, offsets, raw, nbytes, device) -> Dictionary | None:
    """Column i's dictionary when every sender that sent entries sent its
    whole dictionary and all of them have one digest (the same sorted
    strings: a table hash-partitioned at load, glint.io.held): this rank's
    own object of that digest where it holds one (its memo of string tests
    kept across queries), else the first sender's entries, sorted and
    unique as they came. None otherwise."""
    lays = [p.columns[i][1] for p, e in zip(posts, entries) if e]
    if not lays or any(lay.strings != "dictionary" or lay.digest is None for lay in lays):
        return None
    digest = lays[0].digest
    if any(lay.digest != digest for lay in lays[1:]):
        return None
    own = shared_dictionary(digest, device)
    if own is not None:
        return own
    j = next(k for k, e in enumerate(entries) if e)
    e0, b0 = sum(entries[:j]), sum(nbytes[:j])
    offs = torch.cat(
        [offsets[e0 : e0 + entries[j]], torch.tensor([nbytes[j]], dtype=torch.int64, device=offsets.device)]
    )
    return Dictionary(offs, raw[b0 : b0 + nbytes[j]], True, digest)


def _row_bytes(buf: torch.Tensor) -> int:
    return buf.element_size() * (buf.shape[1] if buf.dim() == 2 else 1)


def _padded(nbytes: int) -> int:
    """Bytes of a piece in a packed buffer: every piece starts 8-byte aligned."""
    return (nbytes + 7) // 8 * 8


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
    out = Outgoing(batch, counts, packed=getattr(comm, "packed", False))
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
    comm.packed = bool(ctx.settings.packed_exchange)  # (this rank's; the posts decide: Transfer)
    comm.grouped = bool(ctx.settings.grouped_exchange)
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
    order, counts = partition_order(dest, ranks)
    return batch.take(order), counts.tolist()
