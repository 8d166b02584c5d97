"""TIMESTAMP against DuckDB 1.4.4: the text parser on random strings, every
calendar function on random timestamps (negative, far, infinite, NULL; the
rows where DuckDB raises raise in glint too), and the ways timestamps come
in and go out (Arrow units, Parquet with statistics, CSV, pandas), the DATE
bounds that keep TPC-H's date filters prunable, and EXPLAIN."""

from __future__ import annotations

import datetime
import random

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

import glint
from glint.columnar.column import Column
from glint.columnar.timestamp_text import (
    FORMAT,
    NON_UTC,
    OK,
    RANGE,
    TS_INFINITY,
    format_timestamps,
    parse_timestamp,
    parse_timestamps,
)
from glint.errors import GlintError, NotSupported
from glint.functions.dates import timestamps as TS
from glint.testing.compare import compare_query_result

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
DAY = 86_400_000_000
_DUCK = duckdb.connect()


# ------------------------------------------------------------------ parsing
def _random_strings(seed: int, n: int) -> list[str]:
    """Timestamp-like strings: valid shapes mutated by insertions, deletions
    and replacements of the pieces DuckDB's parser looks at."""
    rnd = random.Random(seed)
    pieces = [
        "",
        " ",
        "\t",
        "-",
        "0",
        "1",
        "9",
        "12",
        "24",
        "60",
        "2020",
        "290308",
        "294247",
        ":",
        ".",
        "/",
        "T",
        "t",
        "Z",
        "+",
        "+02",
        "-0130",
        "+02:30:15",
        "UTC",
        "CET",
        "(BC)",
        " (BC)",
        "infinity",
        "inf",
        "epoch",
        "x",
        "é",
        "1234567",
        "31",
        "29",
        "13",
        "00",
    ]
    out = []
    for _ in range(n):
        s = (
            rnd.choice(
                [
                    "2020-01-01",
                    "2020-02-29",
                    "1969-12-31",
                    " 2020-1-1",
                    "0044-03-15 (BC)",
                    "294247-01-10",
                    "290308-12-22 (BC)",
                    "-2020-01-01",
                    "2020/1/1",
                    "2020 1 1",
                    "1-1-1",
                    "",
                ]
            )
            + rnd.choice(
                [
                    "",
                    " 12:00",
                    "T12:00:00",
                    " 23:59:59.999999",
                    " 24:00:00",
                    " 1:2:3",
                    " 12:00:00.5",
                    " 04:00:54.775806",
                    "  9:5",
                    " 12:",
                ]
            )
            + rnd.choice(["", "", "Z", "+02", "-01:30", " UTC", " ", "+02:30:15", " CET", "x", ".", ".1234567"])
        )
        for _ in range(rnd.choice([0, 0, 1, 2, 3])):
            i, op = rnd.randint(0, len(s)), rnd.random()
            if op < 0.4:
                s = s[:i] + rnd.choice(pieces) + s[i:]
            elif op < 0.7:
                s = s[:i] + s[i + 1 :]
            else:
                s = s[:i] + rnd.choice(pieces) + s[rnd.randint(i, len(s)) :]
        out.append(s)
    return list(dict.fromkeys(out))


def _duck_parse(s: str) -> tuple[int, int]:
    try:
        text, us = _DUCK.execute("SELECT CAST(?::TIMESTAMP AS VARCHAR), epoch_us(?::TIMESTAMP)", [s, s]).fetchone()
    except duckdb.Error as e:
        m = str(e)
        return 0, RANGE if "out of range" in m else NON_UTC if "not UTC" in m else FORMAT
    return ({"infinity": TS_INFINITY, "-infinity": -TS_INFINITY}.get(text, us), OK)


@pytest.mark.parametrize("seed", [1, 2])
def test_parser_matches_duckdb_on_random_strings(seed):
    texts = _random_strings(seed, 700)
    bad = [(s, parse_timestamp(s), _duck_parse(s)) for s in texts if parse_timestamp(s) != _duck_parse(s)]
    assert not bad, bad[:5]
    # the vectorised parser agrees with the scalar one (its fast path included)
    values, codes = parse_timestamps(pa.array(texts + ["2021-03-04 05:06:07.891234", None], pa.string()))
    want = [parse_timestamp(s) for s in texts] + [parse_timestamp("2021-03-04 05:06:07.891234"), (0, OK)]
    assert [(int(v) if c == OK else 0, int(c)) for v, c in zip(values, codes)] == [
        (v if c == OK else 0, c) for v, c in want
    ]


def test_format_matches_duckdb():
    rng = np.random.default_rng(3)
    vals = np.concatenate(
        [
            rng.integers(-(2**62), 2**62, 300),
            rng.integers(-(10**4), 10**4, 50) * DAY,
            [0, -1, 1, 500_000, TS_INFINITY, -TS_INFINITY, TS_INFINITY - 1],
        ]
    )
    got = format_timestamps(torch.tensor(vals)).to_pylist()
    _DUCK.register("v", pa.table({"us": pa.array(vals, pa.int64()), "i": np.arange(len(vals))}))
    want = [
        r[0]
        for r in _DUCK.execute(
            "SELECT CASE WHEN us = 9223372036854775807 THEN 'infinity' WHEN us = -9223372036854775807 THEN '-infinity' "
            "ELSE CAST(make_timestamp(us) AS VARCHAR) END FROM v ORDER BY i"
        ).fetchall()
    ]
    assert got == want


# ------------------------------------------------------------------ calendar functions
def _random_timestamps(seed: int, n: int = 600):
    rng = np.random.default_rng(seed)
    lo, hi = -9223372036854775806 + 2 * DAY, 9223372036854775806
    vals = np.concatenate(
        [
            rng.integers(-(2**62), 2**62, n // 4),
            rng.integers(-100 * 365 * DAY, 100 * 365 * DAY, n // 4),
            rng.integers(-20000, 20000, n // 4) * DAY
            + rng.choice([0, 1, DAY - 1, 3600 * 10**6, 999_999, 59 * 10**6], n // 4),
            rng.integers(lo, hi, n // 4),
            [0, -1, 1, TS_INFINITY, -TS_INFINITY, TS_INFINITY - 1, lo],
        ]
    )
    valid = rng.random(len(vals)) > 0.05
    other = np.roll(vals, 7) // rng.integers(1, 5, len(vals))
    other[: n // 8] = vals[: n // 8] + rng.integers(-40 * DAY, 40 * DAY, n // 8)
    a = pa.array(vals, pa.int64(), mask=~valid).cast(pa.timestamp("us"))
    return a, pa.array(other, pa.int64()).cast(pa.timestamp("us"))


def _ints(a: pa.Array) -> list:
    if pa.types.is_timestamp(a.type):
        return a.cast(pa.int64()).to_pylist()
    if pa.types.is_date(a.type):
        return a.cast(pa.int32()).to_pylist()
    return a.to_pylist()


def _duck_raises(expr: str, a: pa.Array, b: pa.Array) -> bool:
    _DUCK.register("one", pa.table({"a": a, "b": b}))
    try:
        _DUCK.execute(f"SELECT {expr} FROM one").fetchall()
        return False
    except duckdb.Error:
        return True


def _check_against_duckdb(fn, expr: str, device: str, seed: int = 0):
    """fn(a, b) on whole columns equals DuckDB's expr row by row; where glint
    raises, DuckDB raises on some row too, and the other rows still agree."""
    a, b = _random_timestamps(seed)
    _DUCK.register("t", pa.table({"a": a, "b": b, "i": np.arange(len(a))}))
    want = _ints(_DUCK.execute(f"SELECT try({expr}) FROM t ORDER BY i").fetch_arrow_table().column(0).combine_chunks())
    keep = np.arange(len(a))
    try:
        got = _ints(fn(Column.from_arrow(a).to(device), Column.from_arrow(b).to(device)).to_arrow())
    except GlintError:
        failing = [i for i, w in enumerate(want) if w is None and a[i].is_valid]
        assert any(_duck_raises(expr, a.slice(i, 1), b.slice(i, 1)) for i in failing[:40]), expr
        keep = np.array([i for i in keep if not (want[i] is None and a[i].is_valid)])
        got = _ints(
            fn(Column.from_arrow(a.take(keep)).to(device), Column.from_arrow(b.take(keep)).to(device)).to_arrow()
        )
    wrong = []
    for g, i in zip(got, keep):
        w = want[i]
        if g == w or (isinstance(g, float) and g != g and w != w):
            continue
        if w is None and _duck_raises(expr, a.slice(int(i), 1), b.slice(int(i), 1)):
            wrong.append((i, "DuckDB raises, glint gives", g))
        else:
            wrong.append((i, g, w))
    assert not wrong, f"{expr}: {len(wrong)} rows differ, e.g. {wrong[:3]}"


PARTS = [
    "year",
    "month",
    "day",
    "decade",
    "century",
    "millennium",
    "microseconds",
    "milliseconds",
    "second",
    "minute",
    "hour",
    "epoch",
    "dow",
    "isodow",
    "week",
    "doy",
    "quarter",
    "yearweek",
    "isoyear",
    "julian",
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("part", PARTS + ["era"])
def test_extract_matches_duckdb(device, part):
    _check_against_duckdb(lambda a, b: TS.extract(part, a), f"date_part('{part}', a)", device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("part", PARTS)
def test_trunc_diff_sub_match_duckdb(device, part):
    _check_against_duckdb(lambda a, b: TS.trunc(part, a), f"date_trunc('{part}', a)", device, 1)
    _check_against_duckdb(lambda a, b: TS.diff(part, a, b), f"date_diff('{part}', a, b)", device, 2)
    _check_against_duckdb(lambda a, b: TS.sub(part, a, b), f"date_sub('{part}', a, b)", device, 3)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    "months,days,micros",
    [(1, 0, 0), (-1, 0, 0), (13, 5, 3_600_000_000), (0, -3, -1), (-25, 40, DAY - 1), (0, 0, 10**15), (120000, 0, 0)],
)
def test_add_interval_matches_duckdb(device, months, days, micros):
    expr = f"a + INTERVAL '{months} months {days} days {micros} microseconds'"
    _check_against_duckdb(lambda a, b: TS.add_interval(a, months, days, micros), expr, device, 4)


@pytest.mark.parametrize("device", DEVICES)
def test_epochs_and_casts_match_duckdb(device):
    for unit in ("ms", "us", "ns"):
        _check_against_duckdb(lambda a, b: TS.epoch_unit(unit, a), f"epoch_{unit}(a)", device, 5)
    _check_against_duckdb(lambda a, b: TS.to_date(a), "CAST(a AS DATE)", device, 6)


def test_date_arguments_match_duckdb():
    """The DATE forms: date_part, date_trunc, date_diff / date_sub of DATEs and of a DATE with a TIMESTAMP."""
    rng = np.random.default_rng(7)
    days = pa.array(
        np.concatenate([rng.integers(-700_000, 2_900_000, 300), [0, -1, 11016]]).astype(np.int32),
        mask=rng.random(303) < 0.05,
    ).cast(pa.date32())
    stamps = pa.array(rng.integers(-60 * 365 * DAY, 60 * 365 * DAY, 303)).cast(pa.timestamp("us"))
    con = glint.connect(device="cpu")
    con.register("t", pa.table({"d": days, "ts": stamps}))
    _DUCK.register("t", pa.table({"d": days, "ts": stamps}))
    exprs = (
        [f"date_part('{p}', d)" for p in PARTS + ["era"]]
        + [f"date_trunc('{p}', d)" for p in PARTS]
        + [f"date_diff('{p}', d, ts)" for p in PARTS]
        + [f"date_sub('{p}', d, ts)" for p in PARTS if p != "julian"]
        + ["date_diff('day', d, d + 45)", "date_sub('month', d, d + 45)", "last_day(d)", "dayname(d)", "monthname(ts)"]
    )
    for e in exprs:
        sql = f"SELECT {e} FROM t"
        got, want = con.sql(sql).arrow(), _DUCK.execute(sql).fetch_arrow_table()
        assert got.schema.types == want.schema.types, e
        assert compare_query_result(sql, got, want) == [], e


# ------------------------------------------------------------------ input and output
def test_arrow_units_and_result_type():
    con = glint.connect(device="cpu")
    data = {
        u: pa.array(
            [1_600_000_000_123_456_789 // {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}[u], None, -1], pa.timestamp(u)
        )
        for u in ("s", "ms", "us", "ns")
    }
    con.register("t", pa.table(data))
    res = con.sql("SELECT s, ms, us, ns, ns + INTERVAL 1 MICROSECOND AS later FROM t").arrow()
    assert all(t == pa.timestamp("us") for t in res.schema.types)
    assert res.column("us").to_pylist()[0] == datetime.datetime(2020, 9, 13, 12, 26, 40, 123456)
    # nanoseconds are truncated toward zero, as DuckDB casts TIMESTAMP_NS to TIMESTAMP
    assert res.column("ns").cast(pa.int64()).to_pylist() == [1_600_000_000_123_456, None, 0]
    assert res.column("s").cast(pa.int64()).to_pylist() == [1_600_000_000_000_000, None, -1_000_000]


def test_time_zones_are_refused_naming_the_column(tmp_path):
    con = glint.connect(device="cpu")
    con.register("z", pa.table({"k": [1], "at": pa.array([0], pa.timestamp("us", tz="Europe/Paris"))}))
    assert con.sql("SELECT k FROM z").fetchall() == [(1,)]  # other columns stay readable
    with pytest.raises(NotSupported, match=r"column z\.at: TIMESTAMP WITH TIME ZONE"):
        con.sql("SELECT at FROM z")


def test_parquet_units_statistics_and_pruning(tmp_path):
    n = 4000
    base = datetime.datetime(2020, 1, 1)
    ts = [base + datetime.timedelta(minutes=7 * i, microseconds=i) if i % 13 else None for i in range(n)]
    table = pa.table(
        {
            "id": pa.array(range(n), pa.int32()),
            "us": pa.array(ts, pa.timestamp("us")),
            "ms": pa.array(ts, pa.timestamp("us")).cast(pa.timestamp("ms"), safe=False),
            "ns": pa.array(ts, pa.timestamp("us")).cast(pa.timestamp("ns")),
        }
    )
    path = tmp_path / "ts.parquet"
    pq.write_table(table, path, row_group_size=500)
    con = glint.connect(device="cpu", chunk_rows=500)
    con.read_parquet(str(path), "p")
    _DUCK.execute(f"CREATE OR REPLACE VIEW p AS SELECT * FROM read_parquet('{path}')")
    for sql in [
        "SELECT count(*), min(us), max(ns), min(ms) FROM p WHERE us >= TIMESTAMP '2020-01-20 03:00:00.5'",
        "SELECT id, us, ms FROM p WHERE ns < TIMESTAMP '2020-01-02' ORDER BY id",
        "SELECT date_trunc('day', us) AS d, count(*) FROM p GROUP BY d ORDER BY d",
        "SELECT count(*) FROM p WHERE us BETWEEN DATE '2020-01-05' AND DATE '2020-01-06'",
    ]:
        got = con.sql(sql).arrow()
        want = _DUCK.execute(
            sql.replace("ns <", "CAST(ns AS TIMESTAMP) <")
            .replace("max(ns)", "max(CAST(ns AS TIMESTAMP))")
            .replace("min(ms)", "min(CAST(ms AS TIMESTAMP))")
        ).fetch_arrow_table()
        assert compare_query_result(sql, got, want) == [], sql
    res = con.sql("SELECT count(*) FROM p WHERE us >= TIMESTAMP '2020-01-20 03:00:00.5'")
    assert "prune [us >= 1579489200500000]" in res.explain()
    assert "chunks skipped by statistics" in res.explain(analyze=True)


def test_csv_timestamps(tmp_path):
    path = tmp_path / "events.csv"
    path.write_text(
        "id,happened,day\n1,2021-03-04 05:06:07.5,2021-03-04\n2,,2021-03-05\n3,1969-12-31 23:59:59,1969-12-31\n"
    )
    con = glint.connect(device="cpu")
    con.read_csv(str(path), "e")
    assert con.sql("SELECT happened FROM e").arrow().schema.types == [pa.timestamp("us")]
    sql = "SELECT id, happened, happened + INTERVAL 1 HOUR AS later, day + INTERVAL 1 DAY AS next, happened > day AS after FROM e"
    want = _DUCK.execute(sql.replace("FROM e", f"FROM read_csv('{path}')")).fetch_arrow_table()
    assert compare_query_result(sql, con.sql(sql).arrow(), want) == []


def test_pandas_round_trip():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(
        {"at": pd.to_datetime(["2021-03-04 05:06:07.891234", None, "1900-01-01 00:00:00.000000"]), "k": [1, 2, 3]}
    )
    con = glint.connect(device="cpu")
    con.register("df", df)
    out = con.sql("SELECT k, at, at + INTERVAL 1 DAY AS later FROM df ORDER BY k").df()
    assert out["at"].tolist()[0] == pd.Timestamp("2021-03-04 05:06:07.891234")
    assert pd.isna(out["at"][1]) and out["later"][2] == pd.Timestamp("1900-01-02")


def test_fetchall_values_python_cannot_hold():
    con = glint.connect(device="cpu")
    sql = (
        "SELECT CAST('infinity' AS TIMESTAMP), CAST('12345-01-01 10:00' AS TIMESTAMP), "
        "TIMESTAMP '2020-01-01 10:00:00.5', CAST('-infinity' AS DATE)"
    )
    assert con.sql(sql).fetchall() == _DUCK.execute(sql).fetchall()


# ------------------------------------------------------------------ DATE filters against TIMESTAMP constants
def test_tpch_date_filters_stay_prunable_date_comparisons(cached_tpch):
    from glint.workloads import tpch

    d = cached_tpch(0.01)
    con = glint.connect(device="cpu")
    tpch.load_tpch(con, directory=d, progress=False)
    q1 = con.sql(tpch.tpch_query(1)).explain()
    assert "(l_shipdate#" in q1 and "<= DATE '1998-09-02')" in q1 and "prune [l_shipdate <= 10471]" in q1
    q6 = con.sql(tpch.tpch_query(6)).explain()
    assert "prune [l_shipdate >= 8766, l_shipdate < 9131" in q6
    assert "CAST" not in q1 and "CAST" not in q6


@pytest.mark.parametrize("device", DEVICES)
def test_date_against_timestamp_constants_match_duckdb(device):
    """Every operator against midnight and non-midnight constants, before and after 1970."""
    rng = np.random.default_rng(9)
    days = pa.array(rng.integers(-800, 800, 400).astype(np.int32), mask=rng.random(400) < 0.1).cast(pa.date32())
    con = glint.connect(device=device)
    con.register("d", pa.table({"dt": days}))
    _DUCK.register("d", pa.table({"dt": days}))
    for c in ["1970-01-01", "1969-12-31 23:00:00", "1970-03-01 00:00:00.000001", "1971-06-30 12:00", "1968-02-29"]:
        for op in ("=", "<>", "<", "<=", ">", ">="):
            for sql in (
                f"SELECT dt, dt {op} TIMESTAMP '{c}' FROM d",
                f"SELECT dt FROM d WHERE TIMESTAMP '{c}' {op} dt",
            ):
                assert compare_query_result(sql, con.sql(sql).arrow(), _DUCK.execute(sql).fetch_arrow_table()) == [], (
                    sql
                )
