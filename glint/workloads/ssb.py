"""The Star Schema Benchmark (O'Neil, O'Neil, Chen, "Star Schema Benchmark",
revision 3): a vectorized, parallel data generator writing Parquet, the 13
query texts, loading into glint and the DuckDB reference on the same files.

Tables (cardinalities at scale factor SF):

========== ===================================================================
lineorder  ~6,000,000 x SF rows: 1,500,000 x SF orders of 1..7 lines each,
           written as ``lineorder/part-00000.parquet``... (one file per chunk of
           :data:`ORDERS_PER_CHUNK` orders)
customer   30,000 x SF
supplier   2,000 x SF
part       200,000 x (1 + floor(log2 SF)) for SF >= 1, 200,000 x SF below
date       2,556 days from 1992-01-01 (the SSB dbgen's count: its last day is
           1998-12-30)
========== ===================================================================

Every column is required (NOT NULL, as SSB's schema declares it). Money is in
cents as integers, as the SSB dbgen writes it: ``lo_extendedprice =
lo_quantity * p_retailprice`` (TPC-H's retail price formula of the part key),
``lo_revenue = lo_extendedprice * (100 - lo_discount) / 100`` (truncated),
``lo_supplycost = 6 * p_retailprice / 10``, ``lo_ordtotalprice`` the order's sum
of ``extendedprice * (1 - discount) * (1 + tax)``. Order keys are sparse like
TPC-H's (the first 8 of every 32 keys). Order dates are uniform from 1992-01-01
to 1998-08-02 (the end minus 151 days), commit dates 30..90 days later.

Where the specification draws an attribute at random, the generator deals it
out evenly instead, so that the selectivities the queries rely on are exact at
every scale factor (and no value is missing at small ones): the cities of
customers and suppliers (nation prefix + digit, 250 in all; nation and region
follow from the city) are dealt in turn over an order of the 250 cities that
visits every region every 5 and every nation every 25 rows (``UNITED KI1`` and
``UNITED ST1`` first), then shuffled among the rows; the 1,000 brands of parts
likewise (brand -> category -> manufacturer). So ``s_region = 'AMERICA'`` selects
1/5 of the suppliers, ``c_city = 'UNITED KI1'`` 1/250 of the customers,
``p_category = 'MFGR#12'`` 1/25 and ``p_brand1 = 'MFGR#2221'`` 1/1000 of the
parts. The one planted row: order 1 belongs to a ``UNITED KI1`` customer, is
dated 1997-12-15 and its first line comes from a ``UNITED KI1`` supplier, so
that Q3.4 (about 5 rows at SF 1, 0.05 at SF 0.01) is never empty.

Every table and every chunk has its own seeded ``numpy.random.Generator``
(one stream per column), so the output depends only on the scale factor, not
on the number of worker processes.

>>> ssb_query("1.1").splitlines()[0]
'SELECT sum(lo_extendedprice * lo_discount) AS revenue'
>>> data_dir(0.01).name, data_dir(10).name
('sf0.01', 'sf10')
>>> table_rows(1)["customer"], table_rows(10)["part"], table_rows(0.01)["supplier"]
(30000, 800000, 20)
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager
from functools import cache, lru_cache
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from glint.errors import GlintError, GlintIOError
from glint.io.file_lists import tables_in_directory
from glint.workloads.common import duckdb_arrow, import_duckdb
from glint.workloads.progress import GenerationProgress
from glint.workloads.tpch import sf_label

__all__ = [
    "ssb_tables",
    "ssb_query",
    "ssb_queries",
    "QUERY_NAMES",
    "QUERY_DIR",
    "data_dir",
    "ensure_ssb_data",
    "generate_ssb",
    "load_ssb",
    "duckdb_ssb_connection",
    "duckdb_arrow",
    "table_rows",
    "sf_label",
    "ORDERS_PER_CHUNK",
    "main",
]

QUERY_DIR = Path(__file__).resolve().parent / "queries" / "ssb"
QUERY_NAMES = ("1.1", "1.2", "1.3", "2.1", "2.2", "2.3", "3.1", "3.2", "3.3", "3.4", "4.1", "4.2", "4.3")
ssb_tables = ["lineorder", "customer", "supplier", "part", "date"]

ORDERS_PER_CHUNK = 500_000  # one lineorder part file (~2M rows) per chunk
DIM_ROWS_PER_CHUNK = 1_000_000  # dimension tables are written in row groups of this size
ROW_GROUP_ROWS = 1 << 20
_SEED = 0x55B_2009  # base of every SeedSequence


# ------------------------------------------------------------------ queries
def ssb_query(name) -> str:
    """The text of SSB query ``name`` ('1.1' ... '4.3'; 'q1.1' and 'Q1.1' work
    too), without a trailing semicolon."""
    key = str(name).strip()
    if key[:1] in ("q", "Q"):
        key = key[1:]
    if key not in QUERY_NAMES:
        raise GlintError(f"there is no SSB query {name!r}: the queries are {', '.join(QUERY_NAMES)}")
    return _query_text(key)


def _query_text(name: str) -> str:
    from glint.workloads.common import read_query

    return read_query(QUERY_DIR / f"q{name}.sql", "SSB")


def ssb_queries() -> dict[str, str]:
    """All 13 query texts, name ('1.1' ...) -> SQL."""
    return {n: ssb_query(n) for n in QUERY_NAMES}


# ------------------------------------------------------------------ vocabularies
_NATIONS = [  # TPC-H's 25 nations (nation key = position) and their region keys
    ("ALGERIA", 0),
    ("ARGENTINA", 1),
    ("BRAZIL", 1),
    ("CANADA", 1),
    ("EGYPT", 4),
    ("ETHIOPIA", 0),
    ("FRANCE", 3),
    ("GERMANY", 3),
    ("INDIA", 2),
    ("INDONESIA", 2),
    ("IRAN", 4),
    ("IRAQ", 4),
    ("JAPAN", 2),
    ("JORDAN", 4),
    ("KENYA", 0),
    ("MOROCCO", 0),
    ("MOZAMBIQUE", 0),
    ("PERU", 1),
    ("CHINA", 2),
    ("ROMANIA", 3),
    ("SAUDI ARABIA", 4),
    ("VIETNAM", 2),
    ("RUSSIA", 3),
    ("UNITED KINGDOM", 3),
    ("UNITED STATES", 1),
]
_REGIONS = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"]
_SEGMENTS = ["AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD"]
_PRIORITIES = ["1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"]
_SHIPMODES = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"]
_COLORS = (
    "almond antique aquamarine azure beige bisque black blanched blue blush brown burlywood burnished "
    "chartreuse chiffon chocolate coral cornflower cornsilk cream cyan dark deep dim dodger drab firebrick "
    "floral forest frosted gainsboro ghost goldenrod green grey honeydew hot indian ivory khaki lace lavender "
    "lawn lemon light lime linen magenta maroon medium metallic midnight mint misty moccasin navajo navy olive "
    "orange orchid pale papaya peach peru pink plum powder puff purple red rose rosy royal saddle salmon sandy "
    "seashell sienna sky slate smoke snow spring steel tan thistle tomato turquoise violet wheat white yellow"
).split()
_TYPES = [
    f"{a} {b} {c}"
    for a in ("STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO")
    for b in ("ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED")
    for c in ("TIN", "NICKEL", "BRASS", "STEEL", "COPPER")
]
_CONTAINERS = [
    f"{a} {b}"
    for a in ("SM", "LG", "MED", "JUMBO", "WRAP")
    for b in ("CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM")
]
_ALPHABET = np.frombuffer(b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,.", dtype=np.uint8)
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
_HOLIDAYS = {(1, 1), (7, 4), (11, 11), (12, 24), (12, 25), (12, 31)}

assert len(_COLORS) == 92 and len(_TYPES) == 150 and len(_CONTAINERS) == 40


def _nation_order() -> np.ndarray:
    """The 25 nation keys in dealing order: regions in turn (EUROPE, AMERICA,
    ASIA, AFRICA, MIDDLE EAST), UNITED KINGDOM and UNITED STATES first."""
    by_region: dict[int, list[int]] = {r: [] for r in range(5)}
    for key, (_, r) in enumerate(_NATIONS):
        by_region[r].append(key)
    by_region[3].remove(23)
    by_region[3].insert(0, 23)
    by_region[1].remove(24)
    by_region[1].insert(0, 24)
    out = [by_region[r][i] for i in range(5) for r in (3, 1, 2, 0, 4)]
    return np.array(out, dtype=np.int64)


_NATION_ORDER = _nation_order()
_DIGIT_ORDER = np.array([1, 5, 0, 2, 3, 4, 6, 7, 8, 9], dtype=np.int64)
_NATION_NAMES = [n for n, _ in _NATIONS]
_NATION_REGION = np.array([r for _, r in _NATIONS], dtype=np.int64)
_CITY_NAMES = [f"{_NATION_NAMES[c // 10][:9]:<9}{c % 10}" for c in range(250)]  # city index = nation*10 + digit
_BRAND_NAMES = [f"MFGR#{b // 200 + 1}{b // 40 % 5 + 1}{b % 40 + 1:02d}" for b in range(1000)]
_CATEGORY_NAMES = [f"MFGR#{c // 5 + 1}{c % 5 + 1}" for c in range(25)]
_MFGR_NAMES = [f"MFGR#{m + 1}" for m in range(5)]


@cache
def _vocab(name: str) -> pa.Array:
    lists = {
        "nation": _NATION_NAMES,
        "region": _REGIONS,
        "city": _CITY_NAMES,
        "segment": _SEGMENTS,
        "priority": _PRIORITIES,
        "shipmode": _SHIPMODES,
        "color": _COLORS,
        "type": _TYPES,
        "container": _CONTAINERS,
        "brand": _BRAND_NAMES,
        "category": _CATEGORY_NAMES,
        "mfgr": _MFGR_NAMES,
        "pname": [f"{a} {b}" for a in _COLORS for b in _COLORS],
        "shippriority": ["0"],
    }
    return pa.array(lists[name], type=pa.string())


def _take(vocab: str, idx: np.ndarray) -> pa.Array:
    """Strings from a small vocabulary by integer index (a plain string array)."""
    return _vocab(vocab).take(pa.array(idx.astype(np.int32, copy=False)))


# ------------------------------------------------------------------ sizes
def _check_sf(sf) -> float:
    sf_label(sf)  # raises on a non-positive scale factor
    return float(sf)


def table_rows(sf) -> dict[str, int]:
    """Rows of each dimension table and the number of orders at scale factor
    ``sf`` (lineorder has 1..7 lines per order, ~4 on average). Tiny scale
    factors get small minimum sizes (100 customers, 10 suppliers, 1,000 parts,
    1,000 orders) so that every city, region and brand the queries select
    exists."""
    s = _check_sf(sf)
    part = 200_000 * (1 + int(math.floor(math.log2(s) + 1e-12))) if s >= 1 else round(200_000 * s)
    return {
        "customer": max(100, round(30_000 * s)),
        "supplier": max(10, round(2_000 * s)),
        "part": max(1_000, part),
        "date": 2_556,
        "orders": max(1_000, round(1_500_000 * s)),
    }


def _key_type(max_key: int) -> pa.DataType:
    return pa.int32() if max_key < 2**31 else pa.int64()


def _order_key(idx: np.ndarray) -> np.ndarray:
    """Sparse order keys: the first 8 of every 32 (as TPC-H's dbgen)."""
    return (idx // 8) * 32 + idx % 8 + 1


# ------------------------------------------------------------------ random streams
def _rng(table: str, chunk: int, column: str) -> np.random.Generator:
    """The generator of one column of one chunk of one table: independent of
    everything else, so any column can be regenerated alone."""
    words = [
        _SEED,
        sum((i + 1) * b for i, b in enumerate(table.encode())),
        chunk,
        sum((i + 1) * b for i, b in enumerate(column.encode())),
    ]
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(words)))


def _dealt(start: int, n: int, period: int, rng: np.random.Generator) -> np.ndarray:
    """Rows start..start+n-1 get positions (row mod period) of a dealing order,
    shuffled among the rows of the chunk."""
    pos = np.arange(start, start + n, dtype=np.int64) % period
    return pos[rng.permutation(n)]


def _city_index(table: str, chunk: int, start: int, n: int) -> np.ndarray:
    """City indices (nation*10 + digit) of rows start.. of a customer or supplier chunk."""
    pos = _dealt(start, n, 250, _rng(table, chunk, "city"))
    return _NATION_ORDER[pos % 25] * 10 + _DIGIT_ORDER[pos // 25]


# ------------------------------------------------------------------ string columns
def _fixed_strings(data: np.ndarray) -> pa.Array:
    """A string array from an (n, width) uint8 matrix of ASCII bytes."""
    n, w = data.shape
    offsets = np.arange(0, (n + 1) * w, w, dtype=np.int32)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(data)))


def _digits(values: np.ndarray, width: int) -> np.ndarray:
    """(n, width) ASCII digits of values, zero padded."""
    powers = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    return ((values.astype(np.int64)[:, None] // powers) % 10 + 48).astype(np.uint8)


def _prefixed_keys(prefix: str, keys: np.ndarray, width: int = 9) -> pa.Array:
    """'Customer#000000001'-style names."""
    head = np.broadcast_to(np.frombuffer(prefix.encode(), dtype=np.uint8), (len(keys), len(prefix)))
    return _fixed_strings(np.hstack([head, _digits(keys, width)]))


def _random_text(rng: np.random.Generator, n: int, lo: int, hi: int) -> pa.Array:
    """n random alphanumeric strings of lo..hi characters (TPC-H's v-strings)."""
    lengths = rng.integers(lo, hi + 1, n, dtype=np.int32)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    data = _ALPHABET[rng.integers(0, len(_ALPHABET), int(offsets[-1]), dtype=np.int32)]
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))


def _phones(rng: np.random.Generator, nation: np.ndarray) -> pa.Array:
    """'CC-DDD-DDD-DDDD', CC = nation key + 10."""
    n = len(nation)
    m = np.empty((n, 15), dtype=np.uint8)
    m[:, 0:2] = _digits(nation + 10, 2)
    m[:, 2] = m[:, 6] = m[:, 10] = ord("-")
    m[:, 3:6] = _digits(rng.integers(100, 1000, n), 3)
    m[:, 7:10] = _digits(rng.integers(100, 1000, n), 3)
    m[:, 11:15] = _digits(rng.integers(1000, 10000, n), 4)
    return _fixed_strings(m)


# ------------------------------------------------------------------ dimension tables
def _customer_chunk(sf: float, chunk: int, start: int, n: int) -> pa.Table:
    keys = np.arange(start + 1, start + n + 1, dtype=np.int64)
    city = _city_index("customer", chunk, start, n)
    nation = city // 10
    kt = _key_type(table_rows(sf)["customer"])
    return pa.table(
        {
            "c_custkey": pa.array(keys, type=kt),
            "c_name": _prefixed_keys("Customer#", keys),
            "c_address": _random_text(_rng("customer", chunk, "address"), n, 10, 25),
            "c_city": _take("city", city),
            "c_nation": _take("nation", nation),
            "c_region": _take("region", _NATION_REGION[nation]),
            "c_phone": _phones(_rng("customer", chunk, "phone"), nation),
            "c_mktsegment": _take("segment", _rng("customer", chunk, "segment").integers(0, 5, n)),
        }
    )


def _supplier_chunk(sf: float, chunk: int, start: int, n: int) -> pa.Table:
    keys = np.arange(start + 1, start + n + 1, dtype=np.int64)
    city = _city_index("supplier", chunk, start, n)
    nation = city // 10
    kt = _key_type(table_rows(sf)["supplier"])
    return pa.table(
        {
            "s_suppkey": pa.array(keys, type=kt),
            "s_name": _prefixed_keys("Supplier#", keys),
            "s_address": _random_text(_rng("supplier", chunk, "address"), n, 10, 25),
            "s_city": _take("city", city),
            "s_nation": _take("nation", nation),
            "s_region": _take("region", _NATION_REGION[nation]),
            "s_phone": _phones(_rng("supplier", chunk, "phone"), nation),
        }
    )


def _part_chunk(sf: float, chunk: int, start: int, n: int) -> pa.Table:
    keys = np.arange(start + 1, start + n + 1, dtype=np.int64)
    brand = _dealt(start, n, 1000, _rng("part", chunk, "brand"))  # brand index 0..999
    category = brand // 40
    kt = _key_type(table_rows(sf)["part"])
    return pa.table(
        {
            "p_partkey": pa.array(keys, type=kt),
            "p_name": _take("pname", _rng("part", chunk, "name").integers(0, len(_COLORS) ** 2, n)),
            "p_mfgr": _take("mfgr", category // 5),
            "p_category": _take("category", category),
            "p_brand1": _take("brand", brand),
            "p_color": _take("color", _rng("part", chunk, "color").integers(0, len(_COLORS), n)),
            "p_type": _take("type", _rng("part", chunk, "type").integers(0, len(_TYPES), n)),
            "p_size": pa.array(_rng("part", chunk, "size").integers(1, 51, n, dtype=np.int32)),
            "p_container": _take("container", _rng("part", chunk, "container").integers(0, len(_CONTAINERS), n)),
        }
    )


_DATE_START = np.datetime64("1992-01-01", "D")
_LAST_ORDER_DAY = int((np.datetime64("1998-08-02", "D") - _DATE_START).astype(np.int64))  # 1998-12-31 minus 151 days
_ANCHOR_DAY = int((np.datetime64("1997-12-15", "D") - _DATE_START).astype(np.int64))


@lru_cache(maxsize=1)
def _date_keys() -> np.ndarray:
    days = _DATE_START + np.arange(2_556)
    y = days.astype("M8[Y]").astype(np.int64) + 1970
    m = days.astype("M8[M]").astype(np.int64) % 12 + 1
    d = (days - days.astype("M8[M]")).astype(np.int64) + 1
    return (y * 10000 + m * 100 + d).astype(np.int32)


def _date_table() -> pa.Table:
    n = 2_556
    days = _DATE_START + np.arange(n)
    year = days.astype("M8[Y]").astype(np.int64) + 1970
    month0 = days.astype("M8[M]").astype(np.int64) % 12
    dom = (days - days.astype("M8[M]")).astype(np.int64) + 1
    doy = (days - days.astype("M8[Y]")).astype(np.int64) + 1
    dow0 = (days.astype(np.int64) + 4) % 7  # 0 = Sunday (1970-01-01 was a Thursday)
    next_month = (days.astype("M8[M]") + 1).astype("M8[D]")
    last_in_month = (next_month - days).astype(np.int64) == 1
    md = month0 * 100 + dom
    holiday = np.isin(md, [(mm - 1) * 100 + dd for mm, dd in _HOLIDAYS])
    season = np.select([month0 == 11, month0 <= 1, month0 <= 4, month0 <= 7], [0, 1, 2, 3], 4)
    month_names = np.array(_MONTHS)
    ys = year.astype(str)
    i32 = lambda a: pa.array(np.asarray(a, dtype=np.int32))  # noqa: E731
    return pa.table(
        {
            "d_datekey": pa.array(_date_keys()),
            "d_date": pa.array(
                np.char.add(
                    np.char.add(np.char.add(month_names[month0], " "), dom.astype(str)), np.char.add(", ", ys)
                ).tolist(),
                type=pa.string(),
            ),
            "d_dayofweek": pa.array(np.array(_WEEKDAYS)[dow0].tolist(), type=pa.string()),
            "d_month": pa.array(month_names[month0].tolist(), type=pa.string()),
            "d_year": i32(year),
            "d_yearmonthnum": i32(year * 100 + month0 + 1),
            "d_yearmonth": pa.array(
                np.char.add(np.array([s[:3] for s in _MONTHS])[month0], ys).tolist(), type=pa.string()
            ),
            "d_daynuminweek": i32(dow0 + 1),
            "d_daynuminmonth": i32(dom),
            "d_daynuminyear": i32(doy),
            "d_monthnuminyear": i32(month0 + 1),
            "d_weeknuminyear": i32((doy - 1) // 7 + 1),
            "d_sellingseason": pa.array(
                np.array(["Christmas", "Winter", "Spring", "Summer", "Fall"])[season].tolist(), type=pa.string()
            ),
            "d_lastdayinweekfl": i32(dow0 == 6),
            "d_lastdayinmonthfl": i32(last_in_month),
            "d_holidayfl": i32(holiday),
            "d_weekdayfl": i32((dow0 >= 1) & (dow0 <= 5)),
        }
    )


# ------------------------------------------------------------------ lineorder
def _anchors(sf: float) -> tuple[int, int]:
    """(customer key, supplier key) of the planted order: the first customer
    and supplier of their tables' first chunk whose city is UNITED KI1."""
    rows = table_rows(sf)
    out = []
    for table in ("customer", "supplier"):
        n = min(rows[table], DIM_ROWS_PER_CHUNK)
        hits = np.flatnonzero(_city_index(table, 0, 0, n) == 231)  # UNITED KINGDOM (23), digit 1
        out.append(int(hits[0]) + 1)
    return out[0], out[1]


def _lineorder_chunk(sf: float, chunk: int, anchors: tuple[int, int] | None) -> pa.Table:
    rows = table_rows(sf)
    first = chunk * ORDERS_PER_CHUNK
    n_o = min(ORDERS_PER_CHUNK, rows["orders"] - first)
    r = lambda col: _rng("lineorder", chunk, col)  # noqa: E731
    # per order
    nlines = r("lines").integers(1, 8, n_o, dtype=np.int64)
    custkey = r("custkey").integers(1, rows["customer"] + 1, n_o, dtype=np.int64)
    orderday = r("orderdate").integers(0, _LAST_ORDER_DAY + 1, n_o, dtype=np.int64)
    priority = r("priority").integers(0, len(_PRIORITIES), n_o, dtype=np.int64)
    # per line
    n_l = int(nlines.sum())
    order_of = np.repeat(np.arange(n_o, dtype=np.int64), nlines)
    starts = np.zeros(n_o, dtype=np.int64)
    np.cumsum(nlines[:-1], out=starts[1:])
    linenumber = np.arange(n_l, dtype=np.int64) - starts[order_of] + 1
    partkey = r("partkey").integers(1, rows["part"] + 1, n_l, dtype=np.int64)
    suppkey = r("suppkey").integers(1, rows["supplier"] + 1, n_l, dtype=np.int64)
    quantity = r("quantity").integers(1, 51, n_l, dtype=np.int64)
    discount = r("discount").integers(0, 11, n_l, dtype=np.int64)
    tax = r("tax").integers(0, 9, n_l, dtype=np.int64)
    commit_delay = r("commitdate").integers(30, 91, n_l, dtype=np.int64)
    shipmode = r("shipmode").integers(0, len(_SHIPMODES), n_l, dtype=np.int64)
    if chunk == 0 and anchors is not None:  # the planted order (see the module's doc)
        custkey[0], orderday[0], suppkey[0] = anchors[0], _ANCHOR_DAY, anchors[1]

    retail = 90_000 + (partkey // 10) % 20_001 + 100 * (partkey % 1_000)  # TPC-H p_retailprice, cents
    extended = quantity * retail
    revenue = extended * (100 - discount) // 100
    supplycost = retail * 6 // 10
    order_total = np.add.reduceat(extended * (100 - discount) * (100 + tax) // 10_000, starts)
    datekeys = _date_keys()
    okey = _order_key(np.arange(first, first + n_o, dtype=np.int64))
    okt = _key_type(int(_order_key(np.array([rows["orders"] - 1]))[0]))
    i32 = lambda a: pa.array(a.astype(np.int32))  # noqa: E731
    return pa.table(
        {
            "lo_orderkey": pa.array(okey[order_of], type=okt),
            "lo_linenumber": i32(linenumber),
            "lo_custkey": pa.array(custkey[order_of], type=_key_type(rows["customer"])),
            "lo_partkey": pa.array(partkey, type=_key_type(rows["part"])),
            "lo_suppkey": pa.array(suppkey, type=_key_type(rows["supplier"])),
            "lo_orderdate": pa.array(datekeys[orderday][order_of]),
            "lo_orderpriority": _take("priority", priority[order_of]),
            "lo_shippriority": _take("shippriority", np.zeros(n_l, dtype=np.int32)),
            "lo_quantity": i32(quantity),
            "lo_extendedprice": i32(extended),
            "lo_ordtotalprice": i32(order_total[order_of]),
            "lo_discount": i32(discount),
            "lo_revenue": i32(revenue),
            "lo_supplycost": i32(supplycost),
            "lo_tax": i32(tax),
            "lo_commitdate": pa.array(datekeys[orderday[order_of] + commit_delay]),
            "lo_shipmode": _take("shipmode", shipmode),
        }
    )


# ------------------------------------------------------------------ tasks
# dictionary-encode the strings and the integer columns of few values; the keys and
# prices would only fall back to plain encoding (slower, no smaller)
_LINEORDER_DICT = [
    "lo_orderpriority",
    "lo_shippriority",
    "lo_shipmode",
    "lo_linenumber",
    "lo_quantity",
    "lo_discount",
    "lo_tax",
    "lo_orderdate",
    "lo_commitdate",
]


def _required(table: pa.Table) -> pa.Table:
    """``table`` with every column required (NOT NULL in SSB's schema): Parquet
    then stores no definition levels (an optional column's, all 1, would
    cost a byte or so a page, and the GPU's check of them)."""
    return table.cast(pa.schema([f.with_nullable(False) for f in table.schema]))


def _write(table: pa.Table, path: Path) -> None:
    use_dict = _LINEORDER_DICT if "lo_orderkey" in table.column_names else True
    pq.write_table(_required(table), path, row_group_size=ROW_GROUP_ROWS, compression="snappy", use_dictionary=use_dict)


def _dim_task(sf: float, table: str, out: str) -> tuple[str, int]:
    """Write one dimension table as one Parquet file, chunk by chunk (one row
    group per chunk), holding one chunk in memory."""
    path = Path(out) / f"{table}.parquet"
    if table == "date":
        t = _date_table()
        _write(t, path)
        return table, t.num_rows
    make = {"customer": _customer_chunk, "supplier": _supplier_chunk, "part": _part_chunk}[table]
    total = table_rows(sf)[table]
    writer = None
    try:
        for chunk, start in enumerate(range(0, total, DIM_ROWS_PER_CHUNK)):
            t = _required(make(sf, chunk, start, min(DIM_ROWS_PER_CHUNK, total - start)))
            if writer is None:
                writer = pq.ParquetWriter(path, t.schema, compression="snappy")
            writer.write_table(t, row_group_size=ROW_GROUP_ROWS)
    finally:
        if writer is not None:
            writer.close()
    return table, total


def _lineorder_task(sf: float, chunk: int, anchors, out: str) -> tuple[str, int]:
    t = _lineorder_chunk(sf, chunk, anchors)
    _write(t, Path(out) / "lineorder" / f"part-{chunk:05d}.parquet")
    return "lineorder", t.num_rows


def _mp_context():
    """fork where there is one (Linux): the workers use only numpy and pyarrow
    (fork-safe), and unlike spawn/forkserver it does not run the caller's
    ``__main__`` again in every worker (a script without a main guard, stdin)."""
    import multiprocessing as mp

    return mp.get_context("fork" if "fork" in mp.get_all_start_methods() else None)


def generate_ssb(out, sf, workers: int | None = None, progress: bool = False, *, _label: Path | None = None) -> Path:
    """Write the 5 SSB tables at scale factor ``sf`` into the directory
    ``out`` (created; must be empty): ``lineorder/part-NNNNN.parquet`` and
    ``customer.parquet``, ``supplier.parquet``, ``part.parquet``,
    ``date.parquet``. ``workers`` processes (default: the CPU count; 1 runs
    in this process). The files do not depend on ``workers``."""
    s = _check_sf(sf)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if any(out.iterdir()):
        raise GlintIOError(f"{str(out)!r} is not empty: SSB data is generated into an empty directory")
    (out / "lineorder").mkdir()
    rows = table_rows(s)
    n_chunks = -(-rows["orders"] // ORDERS_PER_CHUNK)
    anchors = _anchors(s)
    # the big dimension tables first: each is one task, the lineorder chunks fill in around them
    tasks = [(_dim_task, (s, t, str(out))) for t in ("customer", "part", "supplier", "date")]
    tasks += [(_lineorder_task, (s, c, anchors, str(out))) for c in range(n_chunks)]
    workers = max(1, min(int(workers or os.cpu_count() or 1), len(tasks)))
    expected_rows = rows["orders"] * 4 + rows["customer"] + rows["supplier"] + rows["part"] + rows["date"]
    done = f"generated SSB SF {sf_label(sf)} into {_label or out}"
    with _progress(progress, len(tasks), f"SSB SF {sf_label(sf)}", expected_rows, done) as advance:
        if workers == 1:
            for fn, args in tasks:
                advance(*fn(*args))
        else:
            with ProcessPoolExecutor(max_workers=workers, mp_context=_mp_context()) as ex, warnings.catch_warnings():
                # Python >= 3.12 warns about fork() in a process with threads (torch's, pyarrow's):
                # the workers use none of them
                warnings.filterwarnings("ignore", message=".*fork.*", category=DeprecationWarning)
                pending = {ex.submit(fn, *args) for fn, args in tasks}
                try:
                    while pending:
                        done, pending = wait(pending, return_when=FIRST_COMPLETED)
                        for f in done:
                            advance(*f.result())
                except BaseException:
                    for f in pending:
                        f.cancel()
                    raise
    return out


@contextmanager
def _progress(enabled: bool, total: int, description: str, expected_rows: int, done: str) -> Iterator:
    """Yields advance(table, rows) for each finished task; progress on stderr
    when enabled (glint.workloads.progress: a bar on a terminal, else lines)."""
    if not enabled:
        yield lambda table, rows: None
        return
    done_rows = 0
    with GenerationProgress(description, total=total, unit="parts", done=done) as p:

        def advance(table: str, rows: int) -> None:
            nonlocal done_rows
            done_rows += rows
            p.update(advance=1, info=f"{table} {done_rows / 1e6:,.1f}M of ~{expected_rows / 1e6:,.1f}M rows")

        yield advance


# ------------------------------------------------------------------ cache
def data_dir(sf) -> Path:
    """Where the Parquet files of scale factor ``sf`` live (see common.cache_dir)."""
    from glint.workloads.common import cache_dir

    return cache_dir("ssb", sf_label(sf))


def _complete(d: Path) -> bool:
    try:
        found = tables_in_directory(d)
    except GlintIOError:
        return False
    return all(t in found for t in ssb_tables)


def _generate_atomically(target: Path, sf, progress: bool, workers: int | None) -> Path:
    """Generate into a temporary sibling directory renamed to ``target`` when
    complete: an interrupted run never leaves a half-written directory."""
    if _complete(target):
        return target
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise GlintIOError(
            f"{str(target)!r} exists but does not hold the 5 SSB tables: remove it "
            f"(or choose another directory) to have it generated again"
        )
    _check_sf(sf)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    umask = os.umask(0)
    os.umask(umask)
    tmp.chmod(0o777 & ~umask)  # mkdtemp makes it private; the cache is an ordinary folder
    try:
        generate_ssb(tmp, sf, workers=workers, progress=progress, _label=target)
        try:
            if target.exists():
                target.rmdir()  # empty (checked above)
            os.replace(tmp, target)
        except OSError:
            if not _complete(target):  # another process may have won the race
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def ensure_ssb_data(sf, progress: bool = True, workers: int | None = None) -> Path:
    """The directory of SSB Parquet files at scale factor ``sf``
    (:func:`data_dir`), generated first when not there yet."""
    return _generate_atomically(data_dir(sf), sf, progress, workers)


def _found_tables(directory) -> dict[str, str]:
    found = tables_in_directory(directory)
    missing = [t for t in ssb_tables if t not in found]
    if missing:
        raise GlintIOError(f"SSB tables missing in {os.fspath(directory)!r}: {', '.join(missing)}")
    return found


def load_ssb(con, sf=None, directory: str | os.PathLike | None = None, progress: bool | None = None) -> Path:
    """Register the 5 SSB tables on a glint connection with ``con.read_parquet``
    (generating the data of ``sf``, default 1, first when needed). Returns the
    data directory."""
    d = (
        Path(directory)
        if directory is not None
        else ensure_ssb_data(sf if sf is not None else 1, progress=bool(progress))
    )
    from glint.workloads.common import register_tables

    register_tables(con, d, ssb_tables, "SSB", progress)
    return d


def duckdb_ssb_connection(directory: str | os.PathLike, views: bool = False, threads: int | None = None):
    """A DuckDB connection holding the 5 SSB tables of the Parquet files in
    ``directory``: in-memory tables, or views over the files with ``views=True``."""
    duckdb = import_duckdb()
    found = _found_tables(directory)
    con = duckdb.connect()
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    for t in ssb_tables:
        p = Path(found[t])
        pattern = str(p / "**" / "*.parquet") if p.is_dir() else str(p)
        pattern = pattern.replace("'", "''")
        kind = "VIEW" if views else "TABLE"
        con.execute(f"CREATE {kind} \"{t}\" AS SELECT * FROM read_parquet('{pattern}')")
    return con


# ------------------------------------------------------------------ command line
def main(argv: list[str] | None = None) -> int:
    """``python -m glint.workloads.ssb --sf 1 [--out DIR] [--workers N] [--quiet]``."""
    ap = argparse.ArgumentParser(
        prog="python -m glint.workloads.ssb", description="Generate the Star Schema Benchmark tables as Parquet files."
    )
    ap.add_argument("--sf", type=float, default=1.0, help="scale factor (default 1; SF 1 is ~6M lineorder rows)")
    ap.add_argument(
        "--out", help="output directory (default: the cache, $GLINT_DATA/ssb/sfN or ~/.cache/glint/ssb/sfN)"
    )
    ap.add_argument("--workers", type=int, default=None, help="worker processes (default: the CPU count)")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    try:
        sf = args.sf if args.sf != int(args.sf) else int(args.sf)
        target = Path(args.out).expanduser() if args.out else data_dir(sf)
        d = _generate_atomically(target, sf, progress=not args.quiet, workers=args.workers)
    except GlintError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    print(d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
