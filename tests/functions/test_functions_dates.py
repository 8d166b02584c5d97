"""glint.functions.dates.days checked row by row against DuckDB running the
same SQL on the same dates."""

from __future__ import annotations

import datetime
import re

import duckdb
import numpy as np
import pyarrow as pa
import pytest
import torch

from glint.columnar import types as T
from glint.columnar.column import Column
from glint.errors import ExecutionError, NotSupported
from glint.functions.dates import days as D

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
_DUCK = duckdb.connect()


def duck(expr: str, **cols: pa.Array) -> list:
    n = len(next(iter(cols.values())))
    _DUCK.register("t", pa.table({**cols, "row_id": pa.array(np.arange(n, dtype=np.int64))}))
    try:
        return [r[0] for r in _DUCK.execute(f"SELECT {expr} FROM t ORDER BY row_id").fetchall()]
    finally:
        _DUCK.unregister("t")


def rows(c: Column) -> list:
    return c.to_arrow().to_pylist()


def sample_dates() -> list[datetime.date | None]:
    """1900..2100 every 37 days, plus month ends, leap days, year turns and the
    ends of the supported range."""
    out = [datetime.date(1900, 1, 1) + datetime.timedelta(days=k) for k in range(0, 73415, 37)]
    for y in (1899, 1900, 1999, 2000, 2001, 2019, 2020, 2021, 2023, 2024, 2100):
        for m in range(1, 13):
            first = datetime.date(y, m, 1)
            out += [first, (first + datetime.timedelta(days=32)).replace(day=1) - datetime.timedelta(days=1)]
        out += [
            datetime.date(y, 12, 28),
            datetime.date(y, 12, 29),
            datetime.date(y, 12, 30),
            datetime.date(y, 1, 3),
            datetime.date(y, 1, 4),
        ]
    out += [
        datetime.date(1, 1, 1),
        datetime.date(1, 12, 31),
        datetime.date(4, 2, 29),
        datetime.date(100, 3, 1),
        datetime.date(9999, 12, 31),
        datetime.date(1970, 1, 1),
        datetime.date(1969, 12, 31),
        None,
    ]
    return out


DATES = sample_dates()


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture
def dates_col(device):
    return Column.from_arrow(pa.array(DATES, pa.date32())).to(device)


ARR = pa.array(DATES, pa.date32())

FIELDS = [
    "year",
    "month",
    "day",
    "quarter",
    "dow",
    "dayofweek",
    "isodow",
    "doy",
    "dayofyear",
    "week",
    "weekofyear",
    "yearweek",
    "isoyear",
    "epoch",
    "decade",
    "century",
    "millennium",
    "weekday",
    "dayofmonth",
]


@pytest.mark.parametrize("field", FIELDS)
def test_extract_matches_duckdb(dates_col, field):
    got = D.extract(field, dates_col)
    assert got.dtype == T.BIGINT
    want = duck(f"extract('{field}' FROM d)", d=ARR)
    want = [None if w is None else int(w) for w in want]  # epoch is a DOUBLE in DuckDB
    assert rows(got) == want


def test_extract_unknown_field(dates_col):
    with pytest.raises(NotSupported):
        D.extract("hour", dates_col)


# ------------------------------------------------------------- interval maths
MONTH_END_DATES = pa.array(
    [
        datetime.date(y, m, d)
        for y in (1999, 2000, 2019, 2020, 2023, 2024, 2100)
        for m in range(1, 13)
        for d in (1, 15, 28, 29, 30, 31)
        if d <= (datetime.date(y + (m == 12), m % 12 + 1, 1) - datetime.timedelta(days=1)).day
    ]
    + [None],
    pa.date32(),
)


@pytest.mark.parametrize("months", [0, 1, -1, 2, 3, -3, 11, 12, -12, 13, -13, 25, -25, 48, -120, 1200])
def test_add_interval_months_matches_duckdb(device, months):
    c = Column.from_arrow(MONTH_END_DATES).to(device)
    for days in (0, 1, -1, 30, -365):
        got = D.add_interval(c, months, days)
        assert got.dtype == T.DATE
        want = duck(f"CAST(d + (to_months({months}) + to_days({days})) AS DATE)", d=MONTH_END_DATES)
        assert rows(got) == want, (months, days)


def test_add_interval_days_only(dates_col):
    for days in (1, -1, 400, -100000, 10**6):
        got = D.add_interval(dates_col, 0, days)
        want = duck(f"date_diff('day', DATE '1970-01-01', d + {days})", d=ARR)  # as day numbers: may leave 1..9999
        assert [
            None if v is None else int(x) for x, v in zip(got.data.tolist(), rows(D.extract("year", dates_col)))
        ] == want


@pytest.mark.parametrize("part", ["year", "quarter", "month", "week", "day"])
def test_date_trunc_matches_duckdb(dates_col, part):
    got = D.date_trunc(part, dates_col)
    assert got.dtype == T.DATE
    assert rows(got) == duck(f"CAST(date_trunc('{part}', d) AS DATE)", d=ARR)


@pytest.mark.parametrize("part", ["year", "quarter", "month", "week", "day"])
def test_date_diff_matches_duckdb(device, part):
    rng = np.random.default_rng(1)
    a = ARR.take(pa.array(rng.integers(0, len(ARR), 600)))
    b = ARR.take(pa.array(rng.integers(0, len(ARR), 600)))
    # short spans too, where boundary counting and truncation differ
    b2 = pa.array(
        [
            None if x is None else x + datetime.timedelta(days=int(k))
            for x, k in zip(a.to_pylist(), rng.integers(-20, 20, 600))
        ],
        pa.date32(),
    )
    for bb in (b, b2):
        got = D.date_diff(part, Column.from_arrow(a).to(device), Column.from_arrow(bb).to(device))
        assert got.dtype == T.BIGINT
        assert rows(got) == duck(f"date_diff('{part}', a, b)", a=a, b=bb)


def test_make_date_matches_duckdb(device):
    y = pa.array([2020, 2021, 1, 9999, None, 1995, 2000, 1900], pa.int64())
    m = pa.array([2, 12, 1, 12, 1, None, 2, 2], pa.int32())
    d = pa.array([29, 31, 1, 31, 1, 1, 29, 28], pa.int64())
    cy, cm, cd = (Column.from_arrow(x).to(device) for x in (y, m, d))
    assert rows(D.make_date(cy, cm, cd)) == duck("make_date(y, m, d)", y=y, m=m, d=d)
    assert rows(D.make_date(cy, 3, 1)) == duck("make_date(y, 3, 1)", y=y)
    assert rows(D.make_date(1995, 3, 15)) == [datetime.date(1995, 3, 15)]


@pytest.mark.parametrize("ymd", [(2021, 2, 29), (2020, 13, 1), (2020, 0, 1), (2020, 4, 31), (2020, 1, 0)])
def test_make_date_invalid_raises(device, ymd):
    y, m, d = (pa.array([v, ok], pa.int64()) for v, ok in zip(ymd, (2000, 1, 1)))
    with pytest.raises(duckdb.Error, match="Date out of range"):
        duck("make_date(y, m, d)", y=y, m=m, d=d)
    with pytest.raises(ExecutionError, match="Date out of range"):
        D.make_date(*(Column.from_arrow(x).to(device) for x in (y, m, d)))
    # the same triple in a NULL row is fine
    ny = Column.from_arrow(pa.array([None, 2000], pa.int64())).to(device)
    assert rows(D.make_date(ny, Column.from_arrow(m).to(device), Column.from_arrow(d).to(device)))[0] is None


# ------------------------------------------------------ parsing and printing
GOOD_TEXT = [
    "1995-03-15",
    "1995-3-5",
    "1995/03/15",
    "1995 03 15",
    " 1995-03-15 ",
    "1995-03-15 00:00:00",
    "1995-03-15T10:00",
    "95-03-15",
    "0095-03-15",
    "1996-02-29",
    "2000-02-29",
    "1995-03-15x",
    "1995-03-1",
    "0001-01-01",
    "9999-12-31",
    "\t1995-01-01",
    "1995-03-15 (BC)",
    "0000-01-01",
    "12345-01-01",
    "epoch",
    "1995-03-15 BC",
]
BAD_TEXT = [
    "1995.03.15",
    "19950315",
    "1995-02-29",
    "1900-02-29",
    "1995-13-01",
    "1995-03-32",
    "1995-00-10",
    "1995-03/15",
    "1995-03-151",
    "+1995-03-15",
    "1995-03",
    "1995",
    "abc",
    "",
    "1995--03-15",
    "a1995-01-01",
]


@pytest.mark.parametrize("text", GOOD_TEXT)
def test_parse_date_matches_duckdb(text):
    days = D.parse_date(text)
    want = duck("CAST(CAST(s AS DATE) AS VARCHAR)", s=pa.array([text]))[0]
    assert D.format_date(days) == want
    assert duck("date_diff('day', DATE '1970-01-01', CAST(s AS DATE))", s=pa.array([text]))[0] == days


@pytest.mark.parametrize("text", BAD_TEXT)
def test_parse_date_rejects_what_duckdb_rejects(text):
    with pytest.raises(duckdb.Error):
        duck("CAST(s AS DATE)", s=pa.array([text]))
    with pytest.raises(ExecutionError, match=re.escape(f"invalid date '{text}'")):
        D.parse_date(text)


def test_format_date_matches_duckdb():
    days = list(range(-800000, 3000000, 9973)) + [-719163, -719162, 0, -1, 2932896, 2932897]
    arr = pa.array(days, pa.int32())
    want = duck("CAST(CAST(d AS DATE) AS VARCHAR)", d=arr.cast(pa.date32()))
    assert [D.format_date(x) for x in days[:50]] == want[:50]
    assert D.format_dates(torch.tensor(days)).to_pylist() == want


def test_calendar_roundtrip_every_day():
    days = torch.arange(-800000, 3000000, dtype=torch.int64)
    y, m, d = D.civil_from_days(days)
    assert torch.equal(D.days_from_civil(y, m, d), days)
    ref = np.arange(np.datetime64("1900-01-01"), np.datetime64("2101-01-01"))
    idx = ref.astype(np.int64)
    yy, mm, dd = D.civil_from_days(torch.from_numpy(idx))
    assert yy.tolist() == (ref.astype("datetime64[Y]").astype(np.int64) + 1970).tolist()
    assert mm.tolist() == (ref.astype("datetime64[M]").astype(np.int64) % 12 + 1).tolist()
    assert dd.tolist() == ((ref - ref.astype("datetime64[M]")).astype(np.int64) + 1).tolist()


# ------------------------------------------------------------ degenerate input
@pytest.mark.parametrize(
    "arr", [pa.array([None, None], pa.date32()), pa.array([], pa.date32())], ids=["all_null", "zero_rows"]
)
def test_degenerate_columns(device, arr):
    c = Column.from_arrow(arr).to(device)
    n = len(arr)
    for got in (
        D.extract("year", c),
        D.extract("week", c),
        D.add_interval(c, 1, 1),
        D.date_trunc("month", c),
        D.date_diff("month", c, c),
    ):
        assert rows(got) == [None] * n
    assert rows(D.make_date(D.extract("year", c), D.extract("month", c), D.extract("day", c))) == [None] * n


def test_stays_on_device(dates_col):
    for got in (
        D.extract("week", dates_col),
        D.add_interval(dates_col, 1, 0),
        D.date_trunc("year", dates_col),
        D.date_diff("day", dates_col, dates_col),
    ):
        assert got.device == dates_col.device


def test_large_columns_match_duckdb(device):
    """Enough rows over few distinct days that the per-day table path runs."""
    rng = np.random.default_rng(5)
    base = datetime.date(1992, 1, 1)
    days = [base + datetime.timedelta(days=int(k)) for k in rng.integers(0, 2600, 20000)]
    arr = pa.array([None if i % 97 == 0 else d for i, d in enumerate(days)], pa.date32())
    arr2 = arr.take(pa.array(rng.permutation(len(arr))))
    c, c2 = Column.from_arrow(arr).to(device), Column.from_arrow(arr2).to(device)
    for field in ("year", "week", "yearweek", "doy", "quarter"):
        assert rows(D.extract(field, c)) == duck(f"extract('{field}' FROM d)", d=arr)
    assert rows(D.add_interval(c, 13, -3)) == duck("CAST(d + (to_months(13) + to_days(-3)) AS DATE)", d=arr)
    for part in ("year", "quarter", "month"):
        assert rows(D.date_trunc(part, c)) == duck(f"CAST(date_trunc('{part}', d) AS DATE)", d=arr)
        assert rows(D.date_diff(part, c, c2)) == duck(f"date_diff('{part}', a, b)", a=arr, b=arr2)
