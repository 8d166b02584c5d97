"""A skewed TPC-H, in the style of JCC-H: TPC-H's tables at a scale factor,
with the foreign keys that joins and GROUP BYs meet drawn from Zipf
distributions, so that a few customers, parts and suppliers own a large share
of the orders and lineitems. (JCC-H, "JCC-H: adding Join Crossing
Correlations with Skew to TPC-H", Boncz, Anadiotis, Kläbe, 2017, puts hot
keys into dbgen itself; this variant rewrites tpchgen-cli's output.)

What changes, from the uniform tables of :mod:`glint.workloads.tpch`:

- ``o_custkey``: Zipf over the customers that TPC-H lets order (every third
  customer orders nothing, as in TPC-H, so Q13 and Q22 keep their meaning);
- ``l_partkey``: Zipf over the parts, and ``l_suppkey`` one of the part's four
  suppliers in partsupp (TPC-H's formula: every lineitem still joins
  partsupp), the first one for half of the lineitems, so suppliers are skewed
  as well;
- ``l_extendedprice``: ``l_quantity * p_retailprice`` of the new part, as
  TPC-H defines it.

The k-th most frequent key has a share proportional to ``1 / k**zipf`` (1.0:
the hottest customer places about 1/ln(n) of all orders). The hot keys are
spread over the key range by a permutation. Everything else, the other
tables included, is TPC-H's. Generated once per (scale factor, exponent) into
the data cache, next to the uniform tables:

>>> skewed_data_dir(1, 1.0).name
'sf1-zipf1'
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from glint.errors import GlintError
from glint.io.file_lists import tables_in_directory
from glint.workloads.common import cache_dir
from glint.workloads.tpch import ensure_tpch_data, sf_label

BATCH_ROWS = 1 << 20
HOT_SUPPLIER_SHARE = 0.5  # lineitems of a part that go to its first supplier


def skewed_data_dir(sf, zipf: float) -> Path:
    return cache_dir("tpch-skew", f"{sf_label(sf)}-zipf{zipf:g}")


def ensure_skewed_tpch_data(sf, zipf: float = 1.0, seed: int = 0, progress: bool = True) -> Path:
    """The directory of the skewed tables at ``sf`` (see the module's text),
    made from the uniform ones when not there yet (written into a temporary
    sibling, renamed when complete)."""
    if not zipf > 0:
        raise GlintError(f"the Zipf exponent of a skewed TPC-H must be positive, got {zipf}")
    target = skewed_data_dir(sf, zipf)
    if target.is_dir():
        return target
    src = ensure_tpch_data(sf, progress=progress)
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    make_skewed_tpch(src, tmp, zipf, seed)
    tmp.rename(target)
    return target


def make_skewed_tpch(src: str | os.PathLike, dest: str | os.PathLike, zipf: float = 1.0, seed: int = 0) -> None:
    """Writes the skewed tables made from the TPC-H tables in ``src`` into
    ``dest``: orders and lineitem rewritten, the others linked or copied."""
    src, dest = Path(src), Path(dest)
    found = tables_in_directory(src)
    missing = {"orders", "lineitem", "part", "supplier", "customer"} - set(found)
    if missing:
        raise GlintError(f"{src} is missing the TPC-H tables {sorted(missing)}")
    dest.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    n_cust = sum(pq.read_metadata(f).num_rows for f in _files(found["customer"]))
    n_supp = sum(pq.read_metadata(f).num_rows for f in _files(found["supplier"]))
    prices = _retail_prices(found["part"])  # unscaled cents, by partkey - 1
    n_part = len(prices)
    ordering = np.arange(1, n_cust + 1, dtype=np.int64)
    ordering = ordering[ordering % 3 != 0]  # TPC-H: these customers never order
    cust = _ZipfKeys(rng.permutation(ordering), zipf)
    part = _ZipfKeys(rng.permutation(np.arange(1, n_part + 1, dtype=np.int64)), zipf)
    for name, path in found.items():
        if name == "orders":
            _rewrite(path, dest, lambda b: _skew_orders(b, cust, rng))
        elif name == "lineitem":
            _rewrite(path, dest, lambda b: _skew_lineitem(b, part, n_supp, prices, rng))
        else:
            _link(path, dest)


class _ZipfKeys:
    """Draws keys: the i-th of ``keys`` with probability proportional to 1 / (i + 1) ** s."""

    def __init__(self, keys: np.ndarray, s: float):
        self.keys = keys
        w = 1.0 / np.arange(1, len(keys) + 1, dtype=np.float64) ** s
        self.cdf = np.cumsum(w / w.sum())
        self.cdf[-1] = 1.0

    def draw(self, rng, n: int) -> np.ndarray:
        return self.keys[np.searchsorted(self.cdf, rng.random(n), side="right").clip(max=len(self.keys) - 1)]


def _files(path: str) -> list[str]:
    p = Path(path)
    return sorted(str(f) for f in p.rglob("*.parquet")) if p.is_dir() else [str(p)]


def _retail_prices(path: str) -> np.ndarray:
    t = pa.concat_tables(pq.read_table(f, columns=["p_partkey", "p_retailprice"]) for f in _files(path))
    keys = t["p_partkey"].to_numpy()
    cents = _unscaled(t["p_retailprice"])
    out = np.zeros(int(keys.max()), dtype=np.int64)
    out[keys - 1] = cents
    return out


def _unscaled(col) -> np.ndarray:
    """A DECIMAL column's unscaled values (within 64 bits), as int64: the low
    halves of its 128-bit values."""
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    words = np.frombuffer(arr.buffers()[1], dtype=np.int64)
    return words[2 * arr.offset : 2 * (arr.offset + len(arr)) : 2].copy()


def _decimal(unscaled: np.ndarray, t: pa.DataType) -> pa.Array:
    """A DECIMAL array of type ``t`` holding ``unscaled`` (int64) exactly."""
    v = np.ascontiguousarray(unscaled, dtype=np.int64)
    words = np.stack([v, v >> 63], axis=1).reshape(-1)  # 128-bit little-endian, sign-extended
    return pa.Array.from_buffers(t, len(v), [None, pa.py_buffer(words.tobytes())])


def _skew_orders(b: pa.RecordBatch, cust: _ZipfKeys, rng) -> pa.RecordBatch:
    i = b.schema.get_field_index("o_custkey")
    keys = pa.array(cust.draw(rng, b.num_rows), b.schema.field(i).type)
    return b.set_column(i, b.schema.field(i), keys)


def _skew_lineitem(b: pa.RecordBatch, part: _ZipfKeys, n_supp: int, prices: np.ndarray, rng) -> pa.RecordBatch:
    n = b.num_rows
    pk = part.draw(rng, n)
    # one of the part's four suppliers (TPC-H's partsupp formula), the first one for half the rows
    which = np.where(rng.random(n) < HOT_SUPPLIER_SHARE, 0, rng.integers(0, 4, n))
    sk = (pk + which * (n_supp // 4 + (pk - 1) // n_supp)) % n_supp + 1
    qty = _unscaled(b.column("l_quantity")) // 100  # whole quantities
    ext_t = b.schema.field("l_extendedprice").type
    out = b
    for name, values in (
        ("l_partkey", pa.array(pk, b.schema.field("l_partkey").type)),
        ("l_suppkey", pa.array(sk, b.schema.field("l_suppkey").type)),
        ("l_extendedprice", _decimal(qty * prices[pk - 1], ext_t)),
    ):
        i = out.schema.get_field_index(name)
        out = out.set_column(i, out.schema.field(i), values)
    return out


def _rewrite(path: str, dest: Path, change) -> None:
    base = Path(path)
    for f in _files(path):
        # the same layout: a file of the table, or the table's directory of parts
        out = dest / base.name / Path(f).relative_to(base) if base.is_dir() else dest / base.name
        out.parent.mkdir(parents=True, exist_ok=True)
        src = pq.ParquetFile(f)
        writer = None
        try:
            for b in src.iter_batches(batch_size=BATCH_ROWS):
                nb = change(b)
                if writer is None:
                    writer = pq.ParquetWriter(out, nb.schema)
                writer.write_batch(nb)
            if writer is None:  # an empty file stays one
                pq.write_table(src.schema_arrow.empty_table(), out)
        finally:
            if writer is not None:
                writer.close()


def _link(path: str, dest: Path) -> None:
    p = Path(path)
    target = dest / p.name
    if p.is_dir():
        shutil.copytree(p, target, copy_function=_hard_link_or_copy)
    else:
        _hard_link_or_copy(str(p), str(target))


def _hard_link_or_copy(a: str, b: str) -> None:
    try:
        os.link(a, b)
    except OSError:
        shutil.copy2(a, b)
