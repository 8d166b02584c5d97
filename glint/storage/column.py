"""Columns and batches: a column is a tensor on one device plus an optional
validity mask (DESIGN.md, "Data model").

Layouts:
- INTEGER/DATE int32, BIGINT/HUGEINT int64, DOUBLE float64, BOOLEAN bool;
- DECIMAL(p,s) int64 scaled by 10**s. A DECIMAL or HUGEINT that outgrew int64
  (a SUM at large scale) is *wide*: int64 of shape (n, 2) holding [hi, lo] with
  value = hi * 2**32 + lo and 0 <= lo < 2**32;
- VARCHAR: int32 codes into a sorted, duplicate-free :class:`Dictionary` kept on
  the host, so comparing codes compares strings.

>>> c = Column.from_arrow(pa.array(["b", None, "a", "b"]))
>>> c.dictionary.values.to_pylist(), c.data[c.valid].tolist(), c.valid.tolist()
(['a', 'b'], [1, 0, 1], [True, False, True, True])
>>> c.to_arrow().to_pylist()
['b', None, 'a', 'b']
"""
from __future__ import annotations

import warnings

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from .. import types as T
from ..types import DataType

LIMB = 1 << 32
_LARGE_BYTES = 1 << 30     # beyond this much text, dictionaries use 64-bit offsets


class Dictionary:
    """Sorted unique strings (host side) that VARCHAR codes index into."""

    __slots__ = ("values", "_np")

    def __init__(self, values: pa.Array):
        self.values = values if isinstance(values, pa.Array) else pa.array(values, pa.string())
        self._np = None

    def __len__(self) -> int:
        return len(self.values)

    @property
    def np(self) -> np.ndarray:
        if self._np is None:
            self._np = np.asarray(self.values.to_numpy(zero_copy_only=False), dtype=object)
        return self._np

    def lower_bound(self, s: str) -> int:
        """Index of the first entry >= s (binary search)."""
        return int(np.searchsorted(self.np, s, side="left")) if len(self) else 0

    def upper_bound(self, s: str) -> int:
        return int(np.searchsorted(self.np, s, side="right")) if len(self) else 0

    def code_of(self, s: str) -> int | None:
        i = self.lower_bound(s)
        return i if i < len(self) and self.np[i] == s else None

    @staticmethod
    def encode(arr: pa.Array | pa.ChunkedArray) -> tuple["Dictionary", np.ndarray, np.ndarray | None]:
        """(dictionary, int32 codes, validity or None) for a string array. An
        Arrow dictionary array (as Parquet stores strings) keeps its indices:
        only the dictionary is sorted, never the rows re-hashed."""
        if isinstance(arr, pa.Array):
            arr = pa.chunked_array([arr], type=arr.type)
        if pa.types.is_dictionary(arr.type):
            return Dictionary._from_dictionary_array(arr)
        big = arr.nbytes > _LARGE_BYTES
        chunks = [c.cast(pa.large_string() if big else pa.string()) for c in arr.chunks]
        encoded = [c.dictionary_encode() for c in chunks]
        return Dictionary._from_dictionary_array(pa.chunked_array(encoded) if encoded else
                                                 pa.chunked_array([], pa.dictionary(pa.int32(), pa.string())))

    @staticmethod
    def _from_dictionary_array(arr: pa.ChunkedArray):
        if arr.num_chunks == 0:
            return Dictionary(pa.array([], pa.string())), np.zeros(0, np.int32), None
        if sum(c.dictionary.nbytes for c in arr.chunks) > _LARGE_BYTES:
            # more than 2 GiB of distinct text (comments at SF 100): 64-bit offsets
            arr = pa.chunked_array([pa.DictionaryArray.from_arrays(c.indices, c.dictionary.cast(pa.large_string()))
                                    for c in arr.chunks])
        if arr.num_chunks > 1:
            arr = arr.unify_dictionaries()
        dvals = arr.chunk(0).dictionary
        if not (pa.types.is_string(dvals.type) or pa.types.is_large_string(dvals.type)):
            dvals = dvals.cast(pa.string())
        order = pc.sort_indices(dvals).to_numpy()
        rank = np.empty(len(order), dtype=np.int32)
        rank[order] = np.arange(len(order), dtype=np.int32)
        parts = [c.indices.fill_null(0).to_numpy(zero_copy_only=False) for c in arr.chunks]
        idx = np.concatenate(parts) if len(parts) > 1 else parts[0]
        codes = rank[idx] if len(rank) else np.zeros(len(idx), dtype=np.int32)
        valid = None
        if arr.null_count:
            valid = np.concatenate([c.is_valid().to_numpy(zero_copy_only=False) for c in arr.chunks])
        return Dictionary(dvals.take(pa.array(order))), codes.astype(np.int32, copy=False), valid

    def merge(self, other: "Dictionary") -> tuple["Dictionary", np.ndarray, np.ndarray]:
        """Union of two dictionaries and the code maps from each into it."""
        if self is other:
            ident = np.arange(len(self), dtype=np.int32)
            return self, ident, ident
        t = pa.large_string() if pa.types.is_large_string(self.values.type) or \
            pa.types.is_large_string(other.values.type) else pa.string()
        allv = pa.concat_arrays([self.values.cast(t), other.values.cast(t)])
        merged = pc.unique(allv)
        merged = merged.take(pc.sort_indices(merged))
        d = Dictionary(merged)
        m = np.searchsorted(d.np, np.concatenate([self.np, other.np])).astype(np.int32)
        return d, m[: len(self)], m[len(self):]


class Column:
    """A typed tensor with an optional validity mask (None: no NULLs)."""

    __slots__ = ("dtype", "data", "valid", "dictionary")

    def __init__(self, dtype: DataType, data: torch.Tensor, valid: torch.Tensor | None = None,
                 dictionary: Dictionary | None = None):
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

    def with_data(self, data: torch.Tensor, valid: torch.Tensor | None = ...) -> "Column":
        return Column(self.dtype, data, self.valid if valid is ... else valid, self.dictionary)

    def take(self, idx: torch.Tensor) -> "Column":
        """Rows at positions idx (a gather)."""
        return Column(self.dtype, self.data[idx], None if self.valid is None else self.valid[idx], self.dictionary)

    def filter(self, mask: torch.Tensor) -> "Column":
        return Column(self.dtype, self.data[mask], None if self.valid is None else self.valid[mask], self.dictionary)

    def to(self, device) -> "Column":
        if self.data.device == torch.device(device):
            return self
        nb = device != "cpu" and torch.device(device).type == "cuda"
        return Column(self.dtype, self.data.to(device, non_blocking=nb),
                      None if self.valid is None else self.valid.to(device, non_blocking=nb), self.dictionary)

    def validity(self) -> torch.Tensor:
        """A bool tensor, True where not NULL."""
        if self.valid is None:
            return torch.ones(len(self), dtype=torch.bool, device=self.device)
        return self.valid

    @staticmethod
    def nulls(dtype: DataType, n: int, device) -> "Column":
        d = dtype if dtype.kind != "NULL" else T.INTEGER
        data = torch.zeros(n, dtype=d.torch_dtype, device=device)
        return Column(dtype, data, torch.zeros(n, dtype=torch.bool, device=device),
                      Dictionary(pa.array([], pa.string())) if dtype.is_string else None)

    # ---------------------------------------------------------------- arrow
    @staticmethod
    def from_arrow(arr: pa.Array | pa.ChunkedArray, dtype: DataType | None = None) -> "Column":
        """Build a host (CPU) column from an Arrow array."""
        dtype = dtype or T.from_arrow(arr.type)
        if dtype.is_string:
            d, codes, valid = Dictionary.encode(arr)
            return Column(dtype, torch.from_numpy(codes), None if valid is None else torch.from_numpy(valid), d)
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
        valid = None
        if arr.null_count:
            valid = torch.from_numpy(arr.is_valid().to_numpy(zero_copy_only=False))
        if dtype.kind == "NULL":
            return Column.nulls(T.NULLTYPE, len(arr), "cpu")
        if dtype.is_decimal:
            arr = arr.cast(pa.decimal128(max(dtype.precision, 1), dtype.scale))
            raw = np.frombuffer(arr.buffers()[1], dtype=np.int64).reshape(-1, 2)
            data = raw[arr.offset: arr.offset + len(arr), 0].copy()
            if valid is not None:
                data[~valid.numpy()] = 0
            return Column(dtype, torch.from_numpy(data), valid)
        if dtype.kind == "DATE":
            arr = arr.cast(pa.date32()).view(pa.int32())
        npt = {"BOOLEAN": np.bool_, "INTEGER": np.int32, "BIGINT": np.int64, "HUGEINT": np.int64,
               "DOUBLE": np.float64, "DATE": np.int32}[dtype.kind]
        if arr.null_count:
            arr = arr.fill_null(False if dtype.kind == "BOOLEAN" else 0)
        data = np.asarray(arr.to_numpy(zero_copy_only=False), dtype=npt)
        return Column(dtype, _tensor_view(np.ascontiguousarray(data)), valid)

    def to_arrow(self) -> pa.Array:
        valid = None if self.valid is None else self.valid.cpu().numpy()
        mask = None if valid is None else ~valid
        dt = self.dtype
        if dt.is_string:
            codes = self.data.cpu().numpy()
            if len(self.dictionary) == 0:
                return pa.nulls(len(codes), pa.string())
            codes = np.where(valid, codes, 0) if valid is not None else codes
            out = self.dictionary.values.take(pa.array(codes.astype(np.int32)))
            return out if mask is None else pc.if_else(pa.array(valid), out, pa.nulls(len(out), pa.string()))
        if dt.kind == "NULL":
            return pa.nulls(len(self), pa.int32())
        if dt.is_decimal or dt.kind == "HUGEINT":
            return pa.Array.from_buffers(T.to_arrow(dt), len(self), [
                None if mask is None else pa.array(valid).buffers()[1],
                pa.py_buffer(_to_int128_pairs(self.data.cpu()).tobytes())])
        data = self.data.cpu().numpy()
        if dt.kind == "DATE":
            return pa.array(data.astype(np.int32), pa.int32(), mask=mask).cast(pa.date32())
        return pa.array(data, T.to_arrow(dt), mask=mask)


def _tensor_view(a: np.ndarray) -> torch.Tensor:
    """A tensor over the array's memory, without a copy. Arrow's buffers are
    read-only, which torch warns about; glint never writes into column data
    (every operator makes new tensors), so sharing them is safe."""
    if a.flags.writeable:
        return torch.from_numpy(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(a)


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
        from ..exec.functions.strings import unify_many
        cols = unify_many(cols)
    datas = [c.data for c in cols]
    if any(d.dim() == 2 for d in datas):
        datas = [to_wide(d) for d in datas]
    valid = None
    if any(c.valid is not None for c in cols):
        valid = torch.cat([c.validity() for c in cols])
    return Column(cols[0].dtype, torch.cat(datas), valid, cols[0].dictionary)


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

    def take(self, idx: torch.Tensor) -> "Batch":
        return Batch({k: c.take(idx) for k, c in self.columns.items()}, int(idx.shape[0]), self.device)

    def filter(self, mask: torch.Tensor, count: int) -> "Batch":
        return Batch({k: c.filter(mask) for k, c in self.columns.items()}, count, self.device)

    def select(self, keys) -> "Batch":
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
    """Rows start..stop-1 as views (no copy)."""
    start, stop = max(0, start), min(b.num_rows, stop)
    stop = max(start, stop)
    cols = {k: Column(c.dtype, c.data[start:stop], None if c.valid is None else c.valid[start:stop], c.dictionary)
            for k, c in b.columns.items()}
    return Batch(cols, stop - start, b.device)


def rechunk(batches, rows: int):
    """Batches of at most `rows` rows (big ones are sliced, without copies)."""
    for b in batches:
        if b.num_rows <= rows:
            yield b
            continue
        for s in range(0, b.num_rows, rows):
            yield slice_batch(b, s, s + rows)


def coalesce(batches, rows: int):
    """Consecutive batches concatenated up to about `rows` rows each (small
    pieces, such as one chunk's share of a hash partition, become one batch)."""
    pending, n = [], 0
    for b in batches:
        if not b.num_rows:
            continue
        pending.append(b)
        n += b.num_rows
        if n >= rows:
            yield concat_batches(pending)
            pending, n = [], 0
    if pending:
        yield concat_batches(pending)
