"""strftime, strptime / try_strptime and time_bucket on random values,
against DuckDB: every format specifier over 0001..9999, text that almost
parses (the first bad row's message included), and buckets of every kind
of width with offsets and per-row origins."""

from __future__ import annotations

import random

import duckdb
import pyarrow as pa
import pytest

import glint

_DAY = 86_400_000_000


@pytest.fixture(scope="module")
def engines():
    rng = random.Random(11)
    micros = [rng.randint(-2208988800_000000, 4102444800_000000) for _ in range(300)]  # 1900 .. 2100
    micros += [rng.randint(-62135596800_000000, 253402300799_000000) for _ in range(100)]  # 0001 .. 9999
    micros += [0, -1, 951782400000000]
    origins = [rng.randint(-2208988800_000000, 4102444800_000000) for _ in micros]
    alphabet = "0123456789 -/:.APMapmJanFebMarchThuSunday\t"
    text = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 22))) for _ in range(300)]
    for _ in range(300):
        y, m, d, h, mi, s = (rng.randint(0, 9999), rng.randint(0, 13), rng.randint(0, 32), rng.randint(0, 25),
                             rng.randint(0, 61), rng.randint(0, 61))  # fmt: skip
        sep = rng.choice([" ", "  ", "", "T"])
        text.append(f"{rng.choice(['', ' '])}{y}-{m}-{d}{sep}{h}:{mi}:{s}{rng.choice(['', ' ', 'x', ' PM', 'am'])}")
    t = pa.table(
        {
            "ts": pa.array(micros, pa.timestamp("us")),
            "d": pa.array([v // _DAY for v in micros], pa.date32()),
            "o": pa.array(origins, pa.timestamp("us")),
        }
    )
    s = pa.table({"s": pa.array(text, pa.string())})
    g, k = glint.connect(device="cpu"), duckdb.connect()
    for con in (g, k):
        con.register("t", t)
        con.register("s", s)
    return g, k


def _both(engines, sql):
    out = []
    for con in engines:
        try:
            out.append(("rows", con.sql(sql).fetchall()))
        except Exception as e:  # the message after DuckDB's error class
            out.append(("error", str(e).split("Error: ", 1)[-1]))
    return out


@pytest.mark.parametrize(
    "fmt",
    [
        "%Y-%m-%d %H:%M:%S.%f",
        "%a %A %b %B %-d %-m %-y %y %j %-j",
        "%I %-I %p %H %-H %M %-M %S %-S %g %n",
        "%U %W %V %G %u %w",
        "%c|%x|%X|%T|%%|%z|%Z",
    ],
)
@pytest.mark.parametrize("col", ["ts", "d"])
def test_strftime(engines, fmt, col):
    glint_rows, duck_rows = _both(engines, f"SELECT {col}, strftime({col}, '{fmt}') FROM t ORDER BY {col}")
    assert glint_rows == duck_rows


@pytest.mark.parametrize(
    "fmt",
    ["%Y-%m-%d %H:%M:%S.%f", "%d/%m/%Y %I:%M:%S %p", "%B %-d, %Y", "%y%m%d", "%j %Y", "%G %V %u", "%Y %U %w"],
)
def test_strptime_reads_what_strftime_writes(engines, fmt):
    for fn in ("strptime", "try_strptime"):
        sql = f"SELECT x, {fn}(x, '{fmt}') FROM (SELECT strftime(ts, '{fmt}') AS x FROM t) ORDER BY x"
        glint_rows, duck_rows = _both(engines, sql)
        assert glint_rows == duck_rows, fn


@pytest.mark.parametrize(
    "fmt", ["%Y-%m-%d %H:%M:%S", "%Y-%-m-%-d %I:%M:%S %p", "%b %d", "%A", "%d/%m/%y", "%Y-%m-%dT%H:%M:%S", " %Y - %m "]
)
def test_strptime_of_text_that_almost_parses(engines, fmt):
    glint_rows, duck_rows = _both(engines, f"SELECT s, try_strptime(s, '{fmt}') FROM s")
    assert glint_rows == duck_rows
    for offset in range(0, 600, 150):  # the first bad row's error, as DuckDB words it
        glint_out, duck_out = _both(
            engines, f"SELECT strptime(s, '{fmt}') FROM (SELECT s FROM s LIMIT 150 OFFSET {offset})"
        )
        assert glint_out == duck_out


@pytest.mark.parametrize(
    "width",
    ["INTERVAL 15 MINUTES", "INTERVAL 7 DAYS", "INTERVAL '2 days 3 hours'", "INTERVAL 1 MONTH", "INTERVAL 13 MONTHS"],
)
@pytest.mark.parametrize("extra", ["", ", INTERVAL 6 HOURS", ", INTERVAL '-2 days'", ", o", ", DATE '1900-01-01'"])
@pytest.mark.parametrize("col", ["ts", "d"])
def test_time_bucket(engines, width, extra, col):
    if col == "d" and extra == ", o":
        extra = ", CAST(o AS DATE)"
    glint_rows, duck_rows = _both(engines, f"SELECT time_bucket({width}, {col}{extra}) FROM t")
    assert glint_rows == duck_rows
