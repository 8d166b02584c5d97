"""Columns and batches: a column is a tensor on one device plus an optional
validity mask (docs/architecture.md, the columnar layer).

Layouts:
- INTEGER/DATE int32, BIGINT/HUGEINT int64, DOUBLE float64, BOOLEAN bool;
  TIMESTAMP int64 microseconds since 1970-01-01 (Arrow's timestamp[us]);
- DECIMAL(p,s) int64 scaled by 10**s. A DECIMAL or HUGEINT that outgrew int64
  (a SUM at large scale) is *wide*: int64 of shape (n, 2) holding [hi, lo] with
  value = hi * 2**32 + lo and 0 <= lo < 2**32;
- VARCHAR: int32 codes into a :class:`Dictionary`, strings in Arrow layout
  (offsets + bytes) on the column's device. Every code, a NULL row's too, is
  a valid entry index, and the dictionary is never empty (code 0 is always
  valid).
  Entries are neither sorted nor unique in general: a Parquet dictionary page
  keeps its order, and a plain string array is its own dictionary with codes
  0..n-1. Nothing is sorted, hashed or de-duplicated at load; string work is
  in glint.kernels.strings and glint.functions.strings.

>>> c = Column.from_arrow(pa.array(["b", None, "a", "b"]))
>>> c.dictionary.to_pylist(), c.data.tolist(), c.valid.tolist()
(['b', '', 'a', 'b'], [0, 1, 2, 3], [True, False, True, True])
>>> c.to_arrow().to_pylist(), c.filter(torch.tensor([True, False, False, True])).compact().dictionary.to_pylist()
(['b', None, 'a', 'b'], ['b', 'b'])
"""

from __future__ import annotations

import warnings

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from glint.columnar import types as T
from glint.columnar.types import DataType
from glint.errors import GlintIOError, NotSupported
from glint.kernels.strings.gather import gather
from glint.kernels.strings.pieces import Pieces, from_offsets

LIMB = 1 << 32
_INT32_BYTES = (1 << 31) - 1  # beyond this many bytes, offsets are int64
_MAX_CODES = (1 << 31) - 1  # codes are int32


class Dictionary:
    """Strings in Arrow layout, as tensors on one device: entry i is
    ``data[offsets[i] : offsets[i + 1]]``.

    - ``offsets``: int32 (int64 when ``data`` holds more than 2**31 - 1
      bytes), one more than the entries, non-decreasing; ``offsets[0]`` need
      not be 0 (a zero-copy slice of an Arrow array);
    - ``data``: uint8 UTF-8 bytes (entries under NULL rows may hold anything);
    - ``sorted_unique``: the entries are strictly increasing in byte order, so
      codes compare as the strings do (set only by whoever made them so);
    - ``memo``: results computed over every entry (a predicate, a hash),
      kept for the chunks that use the same dictionary again
      (glint.kernels.strings.columns.per_entry). A dictionary is never
      changed in place, so they stay true;
    - ``digest``: where set (:func:`sorted_dictionary`), a hash of the
      entries: ranks that hold dictionaries of one digest hold the same
      strings in the same order, so an exchange moves codes into it as they
      are (glint.distributed.exchange; :func:`shared_dictionary`).

    >>> d = Dictionary.from_pylist(["x", "", "héllo"])
    >>> len(d), d.offsets.tolist(), d.nbytes(), d.take(torch.tensor([2, 0])).to_pylist()
    (3, [0, 1, 1, 7], 23, ['héllo', 'x'])
    >>> Dictionary(d.offsets, d.data).to_arrow(torch.tensor([2, 1]), torch.tensor([True, False])).to_pylist()
    ['héllo', None]
    """

    __slots__ = ("offsets", "data", "sorted_unique", "memo", "digest")

    def __init__(
        self, offsets: torch.Tensor, data: torch.Tensor, sorted_unique: bool = False, digest: bytes | None = None
    ):
        if offsets.dtype == torch.int64 and data.shape[0] <= _INT32_BYTES:
            offsets = offsets.to(torch.int32)  # every offset is at most len(data)
        self.offsets = offsets
        self.data = data
        self.sorted_unique = sorted_unique
        self.memo: dict | None = None
        self.digest = digest

    def __len__(self) -> int:
        return self.offsets.shape[0] - 1

    def __repr__(self) -> str:
        return f"Dictionary({len(self)} entries, {self.data.shape[0]} bytes, {self.device})"

    @property
    def device(self) -> torch.device:
        return self.data.device

    def nbytes(self) -> int:
        return self.offsets.numel() * self.offsets.element_size() + self.data.numel()

    def pieces(self, idx: torch.Tensor | None = None) -> Pieces:
        """The entries (or the entries at ``idx``) as kernel input; no bytes move."""
        p = from_offsets(self.offsets, self.data)
        return p if idx is None else p.take(idx.long())

    def to(self, device, non_blocking: bool = False) -> Dictionary:
        device = torch.device(device)
        if self.data.device == device:
            return self
        return self.map_tensors(lambda t: t.to(device, non_blocking=non_blocking))

    def tensors(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.offsets, self.data

    def map_tensors(self, fn) -> Dictionary:
        """A dictionary of ``fn(offsets)`` and ``fn(data)`` (a copy to another
        device, an upload through staging buffers). A host slice of a larger
        Arrow buffer is cut to the bytes it spans first, so only those move."""
        offsets, data = self.offsets, self.data
        if not data.is_cuda and len(self) and data.shape[0] > int(offsets[-1]) - int(offsets[0]):
            lo, hi = int(offsets[0]), int(offsets[-1])
            offsets, data = offsets - lo, data[lo:hi]
        return Dictionary(fn(offsets), fn(data), self.sorted_unique, self.digest)

    def take(self, idx: torch.Tensor, valid: torch.Tensor | None = None) -> Dictionary:
        """A new dictionary of the entries at ``idx`` (empty where ``valid`` is
        False), bytes copied: the one way strings are materialised."""
        p = self.pieces(idx)
        if valid is not None:
            p = Pieces(p.data, p.starts, torch.where(valid, p.lengths, 0))
        offsets, data = gather(p)
        return Dictionary(offsets, data)

    def to_arrow(self, idx: torch.Tensor | None = None, valid: torch.Tensor | None = None) -> pa.Array:
        """A host Arrow string array of the entries at ``idx`` (all entries when
        None); NULL where ``valid`` is False. One device-to-host copy of the
        referenced bytes."""
        n = len(self) if idx is None else idx.shape[0]
        d = self if idx is None else self.take(idx, valid) if n else Dictionary.from_pylist([], self.device)
        offsets, data = d.offsets.cpu(), d.data.cpu()
        big = offsets.dtype == torch.int64
        bufs = [None, pa.py_buffer(offsets.numpy()), pa.py_buffer(data.numpy())]
        if valid is not None:
            bufs[0] = _validity_bitmap(valid.cpu().numpy())
        return pa.Array.from_buffers(pa.large_string() if big else pa.string(), n, bufs)

    def to_pylist(self) -> list[str]:
        return self.to_arrow().to_pylist()

    # ------------------------------------------------------------ builders
    @staticmethod
    def from_arrow(arr: pa.Array) -> Dictionary:
        """The strings of an Arrow string / large_string / string_view array,
        zero-copy over its buffers where the layout allows (on the host).
        NULL slots become entries of unspecified content."""
        t = arr.type
        if pa.types.is_string_view(t) or not (pa.types.is_string(t) or pa.types.is_large_string(t)):
            arr = arr.cast(pa.large_string() if arr.nbytes > _INT32_BYTES else pa.string())
            t = arr.type
        n = len(arr)
        if n == 0:
            return Dictionary.from_pylist([])
        bufs = arr.buffers()
        odt = np.int64 if pa.types.is_large_string(t) else np.int32
        offsets = np.frombuffer(bufs[1], dtype=odt)[arr.offset : arr.offset + n + 1]
        data = (
            np.frombuffer(bufs[2], dtype=np.uint8)
            if bufs[2] is not None and bufs[2].size
            else np.zeros(0, dtype=np.uint8)
        )
        return Dictionary(_tensor_view(offsets), _tensor_view(data), _sorted_unique(arr))

    @staticmethod
    def from_pylist(values, device="cpu", sorted_unique: bool | None = None) -> Dictionary:
        """From Python strings (None stores an empty entry). ``sorted_unique``
        defaults to whether the values are strictly increasing."""
        raw = [b"" if v is None else v.encode() for v in values]
        lengths = np.fromiter((len(r) for r in raw), dtype=np.int64, count=len(raw))
        offsets = np.zeros(len(raw) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        data = np.frombuffer(b"".join(raw), dtype=np.uint8).copy()
        if sorted_unique is None:
            sorted_unique = all(a < b for a, b in zip(raw, raw[1:]))
        return Dictionary(torch.from_numpy(offsets).to(device), torch.from_numpy(data).to(device), sorted_unique)

    @staticmethod
    def concat(dicts: list[Dictionary]) -> tuple[Dictionary, list[int]]:
        """One dictionary holding each input's entries in turn, and where each
        input's entries begin in it (add to its codes). Bytes are copied once;
        nothing is merged, sorted or de-duplicated.

        >>> d, bases = Dictionary.concat([Dictionary.from_pylist(["a", "b"]), Dictionary.from_pylist(["a"])])
        >>> d.to_pylist(), bases
        (['a', 'b', 'a'], [0, 2])
        """
        if len(dicts) == 1:
            return dicts[0], [0]
        dev = dicts[0].device
        # where each input's bytes begin and end: one host synchronisation for all
        ends = torch.stack([torch.stack([d.offsets[0], d.offsets[-1]]).long() for d in dicts]).tolist()
        bases, offsets, datas = [], [], []
        entries = nbytes = 0
        for d, (lo, hi) in zip(dicts, ends):
            bases.append(entries)
            offsets.append(d.offsets[:-1].long() - lo + nbytes)
            datas.append(d.data[lo:hi])
            entries += len(d)
            nbytes += hi - lo
        if entries > _MAX_CODES:
            raise NotSupported(f"a VARCHAR dictionary of more than {_MAX_CODES} strings (codes are int32)")
        offsets.append(torch.full((1,), nbytes, dtype=torch.int64, device=dev))
        return Dictionary(torch.cat(offsets), torch.cat(datas)), bases


class Column:
    """A typed tensor with an optional validity mask (None: no NULLs)."""

    __slots__ = ("dtype", "data", "valid", "dictionary")

    def __init__(
        self,
        dtype: DataType,
        data: torch.Tensor,
        valid: torch.Tensor | None = None,
        dictionary: Dictionary | None = None,
    ):
        if dictionary is not None and len(dictionary) == 0:
            # no strings at all (no rows, or only NULLs): one empty entry keeps code 0 valid
            dictionary = Dictionary.from_pylist([""], data.device)
        self.dtype = dtype
        self.data = data
        self.valid = valid
        self.dictionary = dictionary

    def __len__(self) -> int:
        return self.data.shape[0]

    def __repr__(self) -> str:
        return f"Column({self.dtype}, n={len(self)}, nulls={'no' if self.valid is None else 'maybe'})"

    @property
    def device(self) -> torch.device:
        return self.data.device

    @property
    def is_wide(self) -> bool:
        return self.data.dim() == 2

    def with_data(self, data: torch.Tensor, valid: torch.Tensor | None = ...) -> Column:
        return Column(self.dtype, data, self.valid if valid is ... else valid, self.dictionary)

    def take(self, idx: torch.Tensor) -> Column:
        """Rows at positions idx (a gather; strings gather their codes only)."""
        return Column(self.dtype, self.data[idx], None if self.valid is None else self.valid[idx], self.dictionary)

    def filter(self, mask: torch.Tensor) -> Column:
        return Column(self.dtype, self.data[mask], None if self.valid is None else self.valid[mask], self.dictionary)

    def compact(self, force: bool = False) -> Column:
        """The column with a fresh dictionary holding only the entries its
        rows use (in the old dictionary's order; one empty entry for the
        NULL rows), when the dictionary has more entries than the column has
        rows (or ``force``); otherwise the column itself. Call it before
        holding a few rows of a column with a large dictionary. Rows that
        shared a code still share one: a join's held build side keeps
        "these rows hold the same string" cheap to see (TPC-H Q10's customer
        strings, one entry per customer, not per order), and no string is
        copied twice.

        >>> c = Column.from_arrow(pa.array(["a", "b", "c", "d"])).take(torch.tensor([3, 1, 3]))
        >>> k = c.compact()
        >>> len(c.dictionary), len(k.dictionary), k.data.tolist(), k.to_arrow().to_pylist()
        (4, 2, [1, 0, 1], ['d', 'b', 'd'])
        >>> c.dictionary.sorted_unique, k.dictionary.sorted_unique
        (True, True)
        """
        if self.dictionary is None or not (force or len(self.dictionary) > len(self)):
            return self
        codes = self.data.long()
        if self.valid is not None:
            codes = torch.where(self.valid, codes, -1)
        used, new = torch.unique(codes, return_inverse=True)
        present = (used >= 0) if self.valid is not None else None
        d = self.dictionary.take(used.clamp(min=0), present)
        # entries of a sorted dictionary taken in increasing order stay sorted (without NULL
        # rows: their empty entry in front could equal a real one); their order ranks and
        # equality keys are then the codes themselves
        d.sorted_unique = self.dictionary.sorted_unique and self.valid is None
        return Column(self.dtype, new.to(torch.int32), self.valid, d)

    def nbytes(self) -> int:
        """Bytes held by the column's tensors: data, validity and dictionary."""
        n = self.data.numel() * self.data.element_size()
        if self.valid is not None:
            n += self.valid.numel() * self.valid.element_size()
        if self.dictionary is not None:
            n += self.dictionary.nbytes()
        return n

    def to(self, device) -> Column:
        if self.data.device == torch.device(device):
            return self
        # host-to-GPU copies can overlap (truly so from pinned memory); a copy
        # to the host must be complete before the host reads it
        nb = torch.device(device).type == "cuda"
        return Column(
            self.dtype,
            self.data.to(device, non_blocking=nb),
            None if self.valid is None else self.valid.to(device, non_blocking=nb),
            None if self.dictionary is None else self.dictionary.to(device, non_blocking=nb),
        )

    def validity(self) -> torch.Tensor:
        """A bool tensor, True where not NULL."""
        if self.valid is None:
            return torch.ones(len(self), dtype=torch.bool, device=self.device)
        return self.valid

    @staticmethod
    def nulls(dtype: DataType, n: int, device) -> Column:
        d = dtype if dtype.kind != "NULL" else T.INTEGER
        data = torch.zeros(n, dtype=d.torch_dtype, device=device)
        return Column(
            dtype,
            data,
            torch.zeros(n, dtype=torch.bool, device=device),
            Dictionary.from_pylist([""], device) if dtype.is_string else None,
        )

    # ---------------------------------------------------------------- arrow
    @staticmethod
    def from_arrow(arr: pa.Array | pa.ChunkedArray, dtype: DataType | None = None, contiguous: bool = True) -> Column:
        """Build a host (CPU) column from an Arrow array. ``contiguous=False``
        lets the data be a strided view of Arrow's memory (DECIMAL's low words)
        for a caller that copies it anyway (the scan's staged upload)."""
        dtype = dtype or T.from_arrow(arr.type)
        if dtype.is_string:
            return _string_column(arr, dtype)
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
        valid = None
        if arr.null_count:
            valid = torch.from_numpy(arr.is_valid().to_numpy(zero_copy_only=False))
        if dtype.kind == "NULL":
            return Column.nulls(T.NULLTYPE, len(arr), "cpu")
        if (
            dtype.is_decimal and dtype.precision > T.MAX_INT64_DECIMAL_PRECISION or dtype.kind == "HUGEINT"
        ) and pa.types.is_decimal(arr.type):
            return _wide_decimal_column(arr, dtype, valid)
        if dtype.is_decimal and pa.types.is_integer(arr.type):
            # the unscaled integers themselves (how the scan reads a Parquet
            # DECIMAL stored as INT32 / INT64: glint.io.parquet_meta)
            if arr.null_count:
                arr = arr.fill_null(0)
            data = np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.int64)
            return Column(dtype, _tensor_view(np.ascontiguousarray(data)), valid)
        if dtype.is_decimal:
            arr = arr.cast(pa.decimal128(max(dtype.precision, 1), dtype.scale))
            raw = np.frombuffer(arr.buffers()[1], dtype=np.int64).reshape(-1, 2)
            data = raw[arr.offset : arr.offset + len(arr), 0]
            if contiguous or valid is not None:
                data = data.copy()
                if valid is not None:
                    data[~valid.numpy()] = 0
            return Column(dtype, _tensor_view(data), valid)
        if dtype.kind == "DATE":
            arr = arr.cast(pa.date32()).view(pa.int32())
        if dtype.kind == "TIMESTAMP":
            arr = timestamp_micros(arr)
        npt = {
            "BOOLEAN": np.bool_,
            "INTEGER": np.int32,
            "BIGINT": np.int64,
            "HUGEINT": np.int64,
            "DOUBLE": np.float64,
            "DATE": np.int32,
            "TIMESTAMP": np.int64,
        }[dtype.kind]
        if arr.null_count:
            arr = arr.fill_null(False if dtype.kind == "BOOLEAN" else 0)
        data = np.asarray(arr.to_numpy(zero_copy_only=False), dtype=npt)
        return Column(dtype, _tensor_view(np.ascontiguousarray(data)), valid)

    def to_arrow(self) -> pa.Array:
        dt = self.dtype
        if dt.is_string:
            d = self.dictionary
            if len(d) == len(self) and torch.equal(
                self.data, torch.arange(len(self), device=self.device).to(self.data)
            ):
                return d.to_arrow(None, self.valid)  # each row its own entry, in order: no string moves
            return d.to_arrow(self.data, self.valid)
        valid = None if self.valid is None else self.valid.cpu().numpy()
        mask = None if valid is None else ~valid
        if dt.kind == "NULL":
            return pa.nulls(len(self), pa.int32())
        if dt.is_decimal or dt.kind == "HUGEINT":
            return pa.Array.from_buffers(
                T.to_arrow(dt),
                len(self),
                [_validity_bitmap(valid), pa.py_buffer(_to_int128_pairs(self.data.cpu()).tobytes())],
            )
        data = self.data.cpu().numpy()
        if dt.kind == "DATE":
            data = data.astype(np.int32, copy=False)
        elif dt.kind == "TIMESTAMP":
            data = data.astype(np.int64, copy=False)
        arrow_type = T.to_arrow(dt)
        if data.dtype != _NUMPY_OF_ARROW.get(arrow_type):
            return pa.array(data, arrow_type, mask=mask)  # (a checked conversion to the column's type)
        values = np.packbits(data, bitorder="little") if data.dtype == np.bool_ else np.ascontiguousarray(data)
        return pa.Array.from_buffers(arrow_type, len(self), [_validity_bitmap(valid), pa.py_buffer(values)])


# Arrow string arrays up to this long are checked for being sorted_unique: about 3 ns an entry
# (4M entries 11 ms), beside a conversion that copies every entry anyway. At 2**16, TPC-H
# SF 10's supplier names (100,000 entries, sorted) were not known sorted, and ORDER BY s_name
# ranked their strings instead of taking their codes.
SORTED_CHECK_MAX = 1 << 22


# the most bytes to_host copies together: results bigger than this take one blocking copy a
# column (their copies cost more than the synchronisations saved)
TO_HOST_BATCHED_BYTES = 16 << 20


def to_host(cols: list[Column]) -> list[Column]:
    """``cols`` with their fixed-width columns on the host, copied together:
    each tensor's copy queued without waiting, then one wait for them all
    (a copy waited for column by column is a host synchronisation each:
    TPC-H Q1's result and its aggregates' states took about thirty). VARCHAR
    columns stay where they are: their strings are gathered on the device
    first (:meth:`Column.to_arrow`), not their whole dictionary copied.

    >>> to_host([Column(T.BIGINT, torch.tensor([1, 2]))])[0].data.tolist()
    [1, 2]
    """
    moving = [c for c in cols if c.device.type == "cuda" and not c.dtype.is_string]
    if len(moving) < 2 or sum(c.nbytes() for c in moving) > TO_HOST_BATCHED_BYTES:
        return [c.to("cpu") if c.device.type == "cuda" and not c.dtype.is_string else c for c in cols]
    tensors = [t for c in moving for t in ((c.data,) if c.valid is None else (c.data, c.valid))]
    host = iter(copied_together(tensors))
    out = []
    for c in cols:
        if c.device.type != "cuda" or c.dtype.is_string:
            out.append(c)
            continue
        data = next(host)
        out.append(Column(c.dtype, data, None if c.valid is None else next(host)))
    return out


def copied_together(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    """Host copies of device tensors in few transfers: those of one device
    and dtype concatenated there, each such group copied without waiting, one
    wait for all, and each tensor a view of its group's host buffer. (The
    copies land in page-locked memory and are copied out once a group, so
    that what the caller keeps does not hold it.) A hundred aggregate states
    of a few groups each (TPC-DS Q66) took a transfer and a copy each.

    >>> a, b, c = torch.arange(3), torch.tensor([[1, 2], [3, 4]]), torch.tensor([True, False])
    >>> [t.tolist() for t in copied_together([a, c, b])]
    [[0, 1, 2], [True, False], [[1, 2], [3, 4]]]
    """
    groups: dict[tuple, list[int]] = {}
    for i, t in enumerate(tensors):
        groups.setdefault((t.device, t.dtype), []).append(i)
    staged = []
    for idx in groups.values():
        parts = [tensors[i].reshape(-1) for i in idx]
        flat = torch.cat(parts) if len(parts) > 1 else parts[0]
        staged.append((idx, flat.to("cpu", non_blocking=True)))
    for dev in {t.device for t in tensors if t.device.type == "cuda"}:
        torch.cuda.current_stream(dev).synchronize()
    out: list[torch.Tensor | None] = [None] * len(tensors)
    for idx, flat in staged:
        flat = flat.clone()
        pos = 0
        for i in idx:
            n = tensors[i].numel()
            out[i] = flat[pos : pos + n].view(tensors[i].shape)
            pos += n
    return out


def _sorted_unique(arr: pa.Array) -> bool:
    """Whether a short string array without NULLs is strictly increasing in
    byte order (Arrow compares strings by their bytes), so that codes into it
    compare and group as the strings do (a dictionary that glint made sorted,
    or a sorted column).

    >>> _sorted_unique(pa.array(["a", "ab", "b"])), _sorted_unique(pa.array(["a", "a"])), _sorted_unique(pa.array(["b", "a"]))
    (True, False, False)
    """
    n = len(arr)
    if n > SORTED_CHECK_MAX or arr.null_count:
        return False
    return n < 2 or bool(pc.all(pc.less(arr.slice(0, n - 1), arr.slice(1))).as_py())


def sorted_dictionary(col: Column) -> Column:
    """A VARCHAR column as codes into a dictionary that holds each of the
    column's dictionary entries once, sorted by bytes (the codes renumbered,
    on the column's device): its codes are then the grouping and ordering
    keys as they are (glint.kernels.strings.columns.code_range). For a
    column of few distinct strings (the dictionary goes through the host).
    The dictionary carries the digest of its entries, and is the one every
    such column of these strings on this device gets (:func:`shared_dictionary`).

    >>> c = Column(T.VARCHAR, torch.tensor([0, 2, 1, 0], dtype=torch.int32), torch.tensor([True, True, True, False]),
    ...            Dictionary.from_pylist(["b", "a", "b"]))
    >>> s = sorted_dictionary(c)
    >>> s.dictionary.to_pylist(), s.dictionary.sorted_unique, s.data.tolist(), s.to_arrow().to_pylist()
    (['a', 'b'], True, [1, 1, 0, 1], ['b', 'b', 'a', None])
    >>> sorted_dictionary(c).dictionary is s.dictionary
    True
    """
    distinct, remap = _sorted_entries(col.dictionary)
    codes = col.data if col.valid is None else torch.where(col.valid, col.data, 0)
    remap = torch.from_numpy(remap).to(col.device)
    codes = remap[codes.long()] if len(remap) else torch.zeros(len(col), dtype=torch.int32, device=col.device)
    d = Dictionary.from_arrow(distinct)
    digest = _digest(d)
    shared = shared_dictionary(digest, col.device)
    if shared is None:
        shared = Dictionary(d.offsets, d.data, True, digest).to(col.device)
        _SHARED[(digest, _device_key(shared.device))] = shared
        while len(_SHARED) > SHARED_MAX:
            _SHARED.pop(next(iter(_SHARED)))
    return Column(col.dtype, codes, col.valid, shared)


# sorted dictionaries by (digest, device): the one object each, so that its
# memo serves every column and every exchange of those strings; at most
# SHARED_MAX kept (the oldest forgotten first), each of few entries
_SHARED: dict = {}
SHARED_MAX = 256


def shared_dictionary(digest: bytes, device) -> Dictionary | None:
    """The sorted dictionary of this digest on ``device`` that
    :func:`sorted_dictionary` made, if it is still kept."""
    key = (digest, _device_key(device))
    d = _SHARED.get(key)
    if d is not None:
        _SHARED[key] = _SHARED.pop(key)  # most recently used last
    return d


def _device_key(device) -> torch.device:
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        return torch.device("cuda", torch.cuda.current_device())
    return device


def _digest(d: Dictionary) -> bytes:
    """A hash of a host dictionary's entries (their bytes and boundaries)."""
    import hashlib

    lo, hi = int(d.offsets[0]), int(d.offsets[-1])
    h = hashlib.blake2b(digest_size=16)
    h.update((d.offsets.long() - lo).numpy().tobytes())
    h.update(d.data[lo:hi].numpy().tobytes())
    return h.digest()


def _sorted_entries(d: Dictionary) -> tuple[pa.Array, np.ndarray]:
    """(the distinct entries sorted by bytes, each entry's index among them)."""
    entries = d.to_arrow()
    distinct = pc.unique(entries)
    distinct = distinct.take(pc.sort_indices(distinct))
    return distinct, pc.index_in(entries, value_set=distinct).to_numpy(zero_copy_only=False).astype(np.int32)


def sorted_dictionary_array(col: Column) -> pa.DictionaryArray:
    """:func:`sorted_dictionary` as a host Arrow dictionary array (read
    back, its codes are the keys as they are).

    >>> c = Column(T.VARCHAR, torch.tensor([0, 2, 1, 0], dtype=torch.int32), torch.tensor([True, True, True, False]),
    ...            Dictionary.from_pylist(["b", "a", "b"]))
    >>> a = sorted_dictionary_array(c)
    >>> a.dictionary.to_pylist(), a.indices.to_pylist(), a.to_pylist()
    (['a', 'b'], [1, 1, 0, None], ['b', 'b', 'a', None])
    """
    distinct, remap = _sorted_entries(col.dictionary)
    codes = col.data if col.valid is None else torch.where(col.valid, col.data, 0)
    codes = remap[codes.cpu().numpy()] if len(remap) else np.zeros(len(col), np.int32)
    valid = None if col.valid is None else col.valid.cpu().numpy()
    indices = pa.Array.from_buffers(pa.int32(), len(col), [_validity_bitmap(valid), pa.py_buffer(codes)])
    return pa.DictionaryArray.from_arrays(indices, distinct)


# Arrow's fixed-width types and the numpy values whose bytes they take as they are. Arrays are
# built from their buffers: pa.array() on a numpy array imports pandas, a third of a second of
# a fresh process that only prints a result
_NUMPY_OF_ARROW = {
    pa.bool_(): np.dtype(np.bool_),
    pa.int32(): np.dtype(np.int32),
    pa.int64(): np.dtype(np.int64),
    pa.float64(): np.dtype(np.float64),
    pa.date32(): np.dtype(np.int32),
    pa.timestamp("us"): np.dtype(np.int64),
}


def _validity_bitmap(valid: np.ndarray | None) -> pa.Buffer | None:
    """Arrow's validity bitmap of a bool array (None: no NULLs)."""
    if valid is None or valid.all():
        return None
    return pa.py_buffer(np.packbits(valid, bitorder="little"))


def timestamp_micros(arr: pa.Array) -> pa.Array:
    """A timestamp (or date) array of any unit as int64 microseconds: seconds
    and milliseconds scale up exactly (an overflow is an error), nanoseconds
    are truncated toward zero, as DuckDB casts TIMESTAMP_NS to TIMESTAMP.

    >>> timestamp_micros(pa.array([-1500, 2500, None], pa.timestamp("ns"))).to_pylist()
    [-1, 2, None]
    """
    t = arr.type
    if pa.types.is_timestamp(t) and t.unit == "us":
        return arr.view(pa.int64())
    if pa.types.is_date(t):
        arr = arr.cast(pa.timestamp("s"))
    try:
        return arr.cast(pa.timestamp("us"), safe=arr.type.unit != "ns").view(pa.int64())
    except pa.ArrowInvalid as e:
        raise GlintIOError(f"a timestamp beyond TIMESTAMP's range: {e}") from None


def _string_column(arr: pa.Array | pa.ChunkedArray, dtype: DataType) -> Column:
    """A VARCHAR host column, without looking at a single string: a dictionary
    array keeps its indices as codes and its dictionary as the entries; a
    plain string array is its own dictionary (codes 0..n-1). Chunks are put
    one after the other (dictionaries concatenated, codes offset)."""
    if isinstance(arr, pa.ChunkedArray) and arr.num_chunks > 1:
        # several row groups: one array, made in Arrow (dictionaries merged,
        # plain strings concatenated as string, not string_view)
        if pa.types.is_dictionary(arr.type):
            arr = arr.unify_dictionaries().combine_chunks()
        else:
            if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
                arr = arr.cast(pa.large_string() if arr.nbytes > _INT32_BYTES else pa.string())
            if arr.nbytes <= _INT32_BYTES or pa.types.is_large_string(arr.type):
                arr = arr.combine_chunks()
    chunks = [c for c in (arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]) if len(c)]
    dicts: dict[tuple, Dictionary] = {}
    parts = []
    for c in chunks:
        if pa.types.is_dictionary(c.type):
            values = c.dictionary
            # chunks of one file can share a dictionary: keep one copy of it
            key = tuple(b.address if b is not None else 0 for b in values.buffers()) + (values.offset, len(values))
            if key not in dicts:
                dicts[key] = Dictionary.from_arrow(values)
            d = dicts[key]
            codes = c.indices
            valid = c.is_valid() if c.null_count else None
            if values.null_count:
                entry_valid = values.is_valid()
                ok = entry_valid.take(codes.fill_null(0))
                valid = ok if valid is None else pc.and_(valid, ok)
            if codes.null_count:
                codes = codes.fill_null(0)
            codes = codes.to_numpy(zero_copy_only=False)  # zero-copy without NULLs
            if codes.dtype != np.int32:
                codes = codes.astype(np.int32)
            if len(d) == 0:  # only NULL rows: any valid code will do
                key, codes = None, np.zeros(len(c), dtype=np.int32)
        else:
            d = Dictionary.from_arrow(c)
            key = ("plain", id(d))
            dicts[key] = d
            codes = None
            valid = c.is_valid() if c.null_count else None
        parts.append((key, len(c), codes, None if valid is None else valid.to_numpy(zero_copy_only=False)))
    n = sum(p[1] for p in parts)
    if n > _MAX_CODES:
        raise NotSupported(f"a VARCHAR column of more than {_MAX_CODES} rows in one piece (codes are int32)")
    if sum(len(x) for x in dicts.values()) == 0:
        # no rows, or only NULLs over empty dictionaries: one empty entry keeps every code valid
        return Column(
            dtype,
            torch.zeros(n, dtype=torch.int32),
            torch.zeros(n, dtype=torch.bool) if n else None,
            Dictionary.from_pylist([""]),
        )
    order = list(dicts)
    d, bases = Dictionary.concat([dicts[k] for k in order])
    base_of = dict(zip(order, bases))
    base_of[None] = 0
    codes = [
        np.arange(base_of[k], base_of[k] + m, dtype=np.int32)
        if c is None
        else c + np.int32(base_of[k])
        if base_of[k]
        else c
        for k, m, c, _ in parts
    ]
    data = _tensor_view(codes[0] if len(codes) == 1 else np.concatenate(codes))
    valid = None
    if any(p[3] is not None for p in parts):
        valid = torch.from_numpy(np.concatenate([np.ones(m, dtype=bool) if v is None else v for _, m, _, v in parts]))
    return Column(dtype, data, valid, d)


def _tensor_view(a: np.ndarray) -> torch.Tensor:
    """A tensor over the array's memory, without a copy. Arrow's buffers are
    read-only, which torch warns about; glint never writes into column data
    (every operator makes new tensors), so sharing them is safe."""
    if a.flags.writeable:
        return torch.from_numpy(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(a)


def _wide_decimal_column(arr: pa.Array, dtype: DataType, valid) -> Column:
    """A DECIMAL(p > 18) or HUGEINT column from Arrow decimal128 values
    (glint's own results, stored by CREATE TABLE AS or INSERT): int64 when
    every value fits, else wide [hi, lo] limbs.

    >>> c = Column.from_arrow(pa.array([1, None, -5], pa.decimal128(38, 0)), T.HUGEINT)
    >>> c.is_wide, c.to_arrow().to_pylist()
    (False, [Decimal('1'), None, Decimal('-5')])
    >>> c = Column.from_arrow(pa.array([2**70, -1], pa.decimal128(38, 0)), T.HUGEINT)
    >>> c.is_wide, [int(x) for x in c.to_arrow().to_pylist()] == [2**70, -1]
    (True, True)
    """
    scale = dtype.scale if dtype.is_decimal else 0
    arr = arr.cast(pa.decimal128(38, scale))
    raw = np.frombuffer(arr.buffers()[1], dtype=np.int64).reshape(-1, 2)[arr.offset : arr.offset + len(arr)]
    lo, hi = raw[:, 0].copy(), raw[:, 1].copy()
    if valid is not None:
        lo[~valid.numpy()] = 0
        hi[~valid.numpy()] = 0
    if bool(np.all(hi == (lo >> 63))):
        return Column(dtype, _tensor_view(lo), valid)
    if not bool(np.all((hi >= -(1 << 29)) & (hi < (1 << 29)))):
        # glint's wide values hold 95 bits (glint.kernels.wide): past 2**93 they would wrap
        raise NotSupported(
            f"{dtype} values of 28 digits or more (beyond 2**93 unscaled): glint's exact integers hold about 93 bits"
        )
    # value = hi * 2**64 + unsigned(lo) = (hi * 2**32 + (lo >> 32 unsigned)) * 2**32 + (lo & 0xffffffff)
    ulo = lo.view(np.uint64)
    whi = hi * (1 << 32) + (ulo >> np.uint64(32)).astype(np.int64)
    wlo = (ulo & np.uint64(0xFFFFFFFF)).astype(np.int64)
    return Column(dtype, torch.from_numpy(np.stack([whi, wlo], axis=1)), valid)


def _to_int128_pairs(data: torch.Tensor) -> np.ndarray:
    """Little-endian 128-bit integers as (n, 2) int64 [low, high] words."""
    v = data.numpy()
    out = np.empty((v.shape[0], 2), dtype=np.int64)
    if v.ndim == 1:
        out[:, 0] = v
        out[:, 1] = v >> 63
    else:
        hi, lo = v[:, 0], v[:, 1]
        out[:, 0] = ((hi.astype(np.uint64) << np.uint64(32)) + lo.astype(np.uint64)).view(np.int64)
        out[:, 1] = hi >> 32
    return out


def to_wide(data: torch.Tensor) -> torch.Tensor:
    """int64 values as (n, 2) [hi, lo] limbs."""
    if data.dim() == 2:
        return data
    v = data.long()
    return torch.stack([v >> 32, v & (LIMB - 1)], dim=1)


def concat_columns(cols: list[Column]) -> Column:
    """Rows of several columns of one type, one after the other."""
    if len(cols) == 1:
        return cols[0]
    if cols[0].dtype.is_string:
        return _concat_strings(cols)
    datas = [c.data for c in cols]
    if any(d.dim() == 2 for d in datas):
        datas = [to_wide(d) for d in datas]
    valid = None
    if any(c.valid is not None for c in cols):
        valid = torch.cat([c.validity() for c in cols])
    return Column(cols[0].dtype, torch.cat(datas), valid, cols[0].dictionary)


def _concat_strings(cols: list[Column]) -> Column:
    """VARCHAR rows one after the other: dictionaries concatenated (each
    distinct one once), codes offset into the result."""
    dicts = list({id(c.dictionary): c.dictionary for c in cols}.values())
    d, bases = Dictionary.concat(dicts)
    base = {id(x): b for x, b in zip(dicts, bases)}
    data = torch.cat([c.data + base[id(c.dictionary)] if base[id(c.dictionary)] else c.data for c in cols])
    valid = None
    if any(c.valid is not None for c in cols):
        valid = torch.cat([c.validity() for c in cols])
    out = Column(cols[0].dtype, data, valid, d)
    # Operators that fold chunks into a running result (top-k, partial
    # aggregation states, held build sides) concatenate, keep a few rows, and
    # concatenate again: without this the dictionary would keep every string
    # it ever saw and grow quadratically with the number of chunks.
    if len(dicts) > 1 and len(d) > 2 * len(data) + 1024:
        out = out.compact()
    return out


class Batch:
    """Equal-length columns keyed by the plan's column ids."""

    __slots__ = ("columns", "num_rows", "device")

    def __init__(self, columns: dict, num_rows: int, device=None):
        self.columns = columns
        self.num_rows = num_rows
        if device is None:
            device = next(iter(columns.values())).device if columns else torch.device("cpu")
        self.device = torch.device(device)

    def __getitem__(self, key) -> Column:
        return self.columns[key]

    def take(self, idx: torch.Tensor) -> Batch:
        return Batch({k: c.take(idx) for k, c in self.columns.items()}, int(idx.shape[0]), self.device)

    def filter(self, mask: torch.Tensor, count: int) -> Batch:
        return Batch({k: c.filter(mask) for k, c in self.columns.items()}, count, self.device)

    def select(self, keys) -> Batch:
        return Batch({k: self.columns[k] for k in keys}, self.num_rows, self.device)


def concat_batches(batches: list[Batch]) -> Batch:
    """Rows of several batches with the same columns, one after the other.
    Batches of zero rows are skipped (one is returned when all are empty)."""
    if not batches:
        raise ValueError("concat of no batches")
    nonempty = [b for b in batches if b.num_rows]
    if len(nonempty) <= 1:
        return nonempty[0] if nonempty else batches[0]
    cols = {k: concat_columns([b.columns[k] for b in nonempty]) for k in nonempty[0].columns}
    return Batch(cols, sum(b.num_rows for b in nonempty), nonempty[0].device)


def slice_batch(b: Batch, start: int, stop: int) -> Batch:
    """Rows start..stop-1 as views (no copy). No rows: empty tensors of their
    own, not views, so that an operator's empty template of its input (its
    columns and types) does not keep the whole batch's memory alive.

    >>> b = Batch({1: Column(T.BIGINT, torch.arange(4))}, 4)
    >>> [slice_batch(b, 1, 3)[1].data.tolist(), slice_batch(b, 2, 2)[1].data.untyped_storage().nbytes()]
    [[1, 2], 0]
    """
    start, stop = max(0, start), min(b.num_rows, stop)
    stop = max(start, stop)
    if stop == start:
        return empty_like_batch(b)
    cols = {
        k: Column(c.dtype, c.data[start:stop], None if c.valid is None else c.valid[start:stop], c.dictionary)
        for k, c in b.columns.items()
    }
    return Batch(cols, stop - start, b.device)


def empty_like_batch(b: Batch) -> Batch:
    """A batch of no rows with ``b``'s columns (types, dictionaries)."""
    cols = {
        k: Column(
            c.dtype,
            c.data.new_empty((0, *c.data.shape[1:])),
            None if c.valid is None else c.valid.new_empty((0,)),
            c.dictionary,
        )
        for k, c in b.columns.items()
    }
    return Batch(cols, 0, b.device)


def rechunk(batches, rows: int):
    """Batches of at most `rows` rows (big ones are sliced, without copies)."""
    for b in batches:
        if b.num_rows <= rows:
            yield b
            continue
        for s in range(0, b.num_rows, rows):
            yield slice_batch(b, s, s + rows)


def merge_small(batches, rows: int):
    """The batches with consecutive ones of fewer than ``rows`` rows each
    concatenated, up to about ``rows`` rows a batch; a batch of ``rows`` or
    more goes on alone, as it came. For operators whose work per batch is
    mostly fixed (launches, waits): a join's or a union's small outputs, or
    each chunk's share of a hash partition, become one batch. Batches of no rows are dropped, but one is yielded
    when all were empty (a stream always yields a batch).

    >>> import torch
    >>> from glint.columnar import types as T
    >>> b = lambda n: Batch({1: Column(T.BIGINT, torch.arange(n))}, n)
    >>> [x.num_rows for x in merge_small([b(2), b(0), b(3), b(9), b(1), b(4), b(5)], 6)]
    [5, 9, 10]
    >>> [x.num_rows for x in merge_small([b(0), b(0)], 6)]
    [0]
    """
    pending, n, empty, any_rows = [], 0, None, False
    for b in batches:
        if not b.num_rows:
            empty = b
            continue
        any_rows = True
        if b.num_rows >= rows:
            if pending:
                yield concat_batches(pending)
                pending, n = [], 0
            yield b
            continue
        pending.append(b)
        n += b.num_rows
        if n >= rows:
            yield concat_batches(pending)
            pending, n = [], 0
    if pending:
        yield concat_batches(pending)
    elif not any_rows and empty is not None:
        yield empty


def literal_value(col: Column, i: int):
    """The Python value of row i in glint's literal representation (a
    DECIMAL's scaled integer, a DATE's day count, None for NULL)."""
    if col.valid is not None and not bool(col.valid[i]):
        return None
    if col.dtype.is_string:
        return col.take(torch.tensor([i], device=col.device)).to_arrow()[0].as_py()
    if col.is_wide:
        hi, lo = col.data[i].tolist()
        return hi * (1 << 32) + lo
    return col.data[i].item()
