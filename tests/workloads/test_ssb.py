"""The Star Schema Benchmark: the generator (sizes, domains, keys, foreign
keys, selectivities, determinism) at SF 0.01, and the 13 queries in glint
compared row for row with DuckDB on the same Parquet files."""

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import glint
from glint.errors import GlintError, GlintIOError
from glint.io.file_lists import tables_in_directory
from glint.io.parquet_source import load_parquet
from glint.testing.compare import compare_query_result
from glint.workloads import ssb

SF = 0.01


def _devices(config):
    opt = config.getoption("--device")
    if opt == "all":
        import torch

        return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    return [opt]


@pytest.fixture(scope="module")
def ssb_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("glint_data")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GLINT_DATA", str(root))
        d = ssb.ensure_ssb_data(SF, progress=False, workers=2)
        assert d == root / "ssb" / "sf0.01" == ssb.data_dir(SF)
        assert ssb.ensure_ssb_data(SF, progress=False) == d  # cached: no second generation
    assert [p.name for p in d.parent.iterdir()] == ["sf0.01"]  # no temporary directory left behind
    return d


@pytest.fixture(scope="module")
def tables(ssb_dir):
    found = tables_in_directory(ssb_dir)
    assert sorted(found) == sorted(ssb.ssb_tables)
    return {t: load_parquet(found[t]) for t in ssb.ssb_tables}


@pytest.fixture(scope="module")
def duck(ssb_dir):
    con = ssb.duckdb_ssb_connection(ssb_dir)
    yield con
    con.close()


def _col(t: pa.Table, name: str) -> list:
    return t.column(name).to_pylist()


def test_layout_and_row_counts(ssb_dir, tables):
    parts = sorted(p.name for p in (ssb_dir / "lineorder").iterdir())
    assert parts == ["part-00000.parquet"]
    for t in ("customer", "supplier", "part", "date"):
        assert (ssb_dir / f"{t}.parquet").is_file()
    n = {t: tables[t].num_rows for t in ssb.ssb_tables}
    assert (n["customer"], n["supplier"], n["part"], n["date"]) == (300, 20, 2000, 2556)
    assert ssb.table_rows(SF) == {"customer": 300, "supplier": 20, "part": 2000, "date": 2556, "orders": 15000}
    orders = pc.count_distinct(tables["lineorder"].column("lo_orderkey")).as_py()
    assert orders == 15000
    assert 15000 * 3.8 < n["lineorder"] < 15000 * 4.2  # 1..7 lines per order


def test_every_column_is_required_and_decodable_on_the_gpu(ssb_dir):
    """NOT NULL as SSB's schema declares it: no definition levels in the files,
    so the GPU decodes lineorder's column chunks from their bytes as stored."""
    import pyarrow.parquet as pq

    from glint.io.raw_chunks import raw_readable

    files = [ssb_dir / "lineorder" / "part-00000.parquet"] + [ssb_dir / f"{t}.parquet" for t in ssb.ssb_tables[1:]]
    for f in files:
        meta = pq.read_metadata(f)
        assert all(meta.schema.column(i).max_definition_level == 0 for i in range(meta.num_columns)), f.name
    meta = pq.read_metadata(files[0])
    numeric = [i for i in range(meta.num_columns) if meta.schema.column(i).physical_type == "INT32"]
    assert numeric and all(raw_readable(meta, 0, i) for i in numeric)


def test_sizes_at_other_scale_factors():
    assert ssb.table_rows(1) == {"customer": 30000, "supplier": 2000, "part": 200000, "date": 2556, "orders": 1500000}
    assert ssb.table_rows(100)["part"] == 1_400_000 and ssb.table_rows(10)["part"] == 800_000
    assert ssb.table_rows(0.1)["part"] == 20000
    with pytest.raises(GlintError):
        ssb.table_rows(0)


def test_types(tables):
    lo = tables["lineorder"].schema
    for c in (
        "lo_orderkey",
        "lo_linenumber",
        "lo_custkey",
        "lo_partkey",
        "lo_suppkey",
        "lo_orderdate",
        "lo_quantity",
        "lo_extendedprice",
        "lo_ordtotalprice",
        "lo_discount",
        "lo_revenue",
        "lo_supplycost",
        "lo_tax",
        "lo_commitdate",
    ):
        assert lo.field(c).type == pa.int32(), c
    for c in ("lo_orderpriority", "lo_shippriority", "lo_shipmode"):
        assert lo.field(c).type == pa.string(), c
    d = tables["date"].schema
    assert [f.name for f in d] == [
        "d_datekey",
        "d_date",
        "d_dayofweek",
        "d_month",
        "d_year",
        "d_yearmonthnum",
        "d_yearmonth",
        "d_daynuminweek",
        "d_daynuminmonth",
        "d_daynuminyear",
        "d_monthnuminyear",
        "d_weeknuminyear",
        "d_sellingseason",
        "d_lastdayinweekfl",
        "d_lastdayinmonthfl",
        "d_holidayfl",
        "d_weekdayfl",
    ]
    assert [f.name for f in tables["customer"].schema] == [
        "c_custkey",
        "c_name",
        "c_address",
        "c_city",
        "c_nation",
        "c_region",
        "c_phone",
        "c_mktsegment",
    ]
    assert [f.name for f in tables["supplier"].schema] == [
        "s_suppkey",
        "s_name",
        "s_address",
        "s_city",
        "s_nation",
        "s_region",
        "s_phone",
    ]
    assert [f.name for f in tables["part"].schema] == [
        "p_partkey",
        "p_name",
        "p_mfgr",
        "p_category",
        "p_brand1",
        "p_color",
        "p_type",
        "p_size",
        "p_container",
    ]
    assert all(t.column(i).null_count == 0 for t in tables.values() for i in range(t.num_columns))


def test_keys(tables):
    for t, key in (("customer", "c_custkey"), ("supplier", "s_suppkey"), ("part", "p_partkey")):
        assert _col(tables[t], key) == list(range(1, tables[t].num_rows + 1)), t
    lo = tables["lineorder"]
    keys = sorted(set(_col(lo, "lo_orderkey")))
    assert keys[:10] == [1, 2, 3, 4, 5, 6, 7, 8, 33, 34]  # sparse: the first 8 of every 32
    pairs = list(zip(_col(lo, "lo_orderkey"), _col(lo, "lo_linenumber")))
    assert len(set(pairs)) == len(pairs)
    lines = {}
    for k, ln in pairs:
        lines.setdefault(k, []).append(ln)
    assert all(sorted(v) == list(range(1, len(v) + 1)) and len(v) <= 7 for v in lines.values())
    dk = _col(tables["date"], "d_datekey")
    assert dk[0] == 19920101 and dk[-1] == 19981230 and dk == sorted(dk) and len(set(dk)) == 2556


def test_foreign_keys(duck):
    checks = {
        "lo_custkey": "SELECT count(*) FROM lineorder WHERE lo_custkey NOT IN (SELECT c_custkey FROM customer)",
        "lo_partkey": "SELECT count(*) FROM lineorder WHERE lo_partkey NOT IN (SELECT p_partkey FROM part)",
        "lo_suppkey": "SELECT count(*) FROM lineorder WHERE lo_suppkey NOT IN (SELECT s_suppkey FROM supplier)",
        "lo_orderdate": 'SELECT count(*) FROM lineorder WHERE lo_orderdate NOT IN (SELECT d_datekey FROM "date")',
        "lo_commitdate": 'SELECT count(*) FROM lineorder WHERE lo_commitdate NOT IN (SELECT d_datekey FROM "date")',
    }
    for col, sql in checks.items():
        assert duck.execute(sql).fetchone()[0] == 0, col
    # per-order columns are the same on every line of an order
    sql = (
        "SELECT count(*) FROM (SELECT lo_orderkey FROM lineorder GROUP BY lo_orderkey HAVING "
        "count(DISTINCT lo_custkey) > 1 OR count(DISTINCT lo_orderdate) > 1 OR count(DISTINCT lo_ordtotalprice) > 1 "
        "OR count(DISTINCT lo_orderpriority) > 1)"
    )
    assert duck.execute(sql).fetchone()[0] == 0


def test_value_domains(duck):
    row = duck.execute("""
        SELECT min(lo_quantity), max(lo_quantity), min(lo_discount), max(lo_discount), min(lo_tax), max(lo_tax),
               count(*) FILTER (WHERE lo_revenue <> lo_extendedprice * (100 - lo_discount) // 100),
               min(lo_orderdate), max(lo_orderdate), count(*) FILTER (WHERE lo_commitdate <= lo_orderdate),
               count(DISTINCT lo_shipmode), count(DISTINCT lo_orderpriority), min(lo_shippriority),
               max(lo_shippriority), count(*) FILTER (WHERE lo_supplycost <= 0 OR lo_extendedprice <= 0)
        FROM lineorder""").fetchone()
    assert row == (1, 50, 0, 10, 0, 8, 0, row[7], row[8], 0, 7, 5, "0", "0", 0)
    assert 19920101 <= row[7] < 19920201 and 19980701 <= row[8] <= 19980802
    # the order total is the order's sum of extendedprice * (1 - discount) * (1 + tax)
    bad = duck.execute("""SELECT count(*) FROM (SELECT lo_orderkey, any_value(lo_ordtotalprice) AS t,
        sum(lo_extendedprice::BIGINT * (100 - lo_discount) * (100 + lo_tax) // 10000) AS s
        FROM lineorder GROUP BY lo_orderkey) WHERE t <> s""").fetchone()[0]
    assert bad == 0
    c = duck.execute("""SELECT count(*) FILTER (WHERE NOT regexp_full_match(c_city, '[A-Z ]{9}[0-9]')),
        count(*) FILTER (WHERE substr(c_city, 1, 9) <> rpad(substr(c_nation, 1, 9), 9, ' ')),
        count(*) FILTER (WHERE NOT regexp_full_match(c_phone, '[0-9]{2}-[0-9]{3}-[0-9]{3}-[0-9]{4}')),
        count(*) FILTER (WHERE NOT regexp_full_match(c_name, 'Customer#[0-9]{9}')),
        count(DISTINCT c_mktsegment), count(DISTINCT c_nation), count(DISTINCT c_region)
        FROM customer""").fetchone()
    assert c == (0, 0, 0, 0, 5, 25, 5)
    p = duck.execute("""SELECT count(DISTINCT p_mfgr), count(DISTINCT p_category), count(DISTINCT p_brand1),
        min(p_brand1), max(p_brand1), min(p_size), max(p_size),
        count(*) FILTER (WHERE NOT starts_with(p_brand1, p_category) OR NOT starts_with(p_category, p_mfgr)),
        count(DISTINCT p_container), count(DISTINCT p_type) > 100, count(DISTINCT p_color) > 80
        FROM part""").fetchone()
    assert p == (5, 25, 1000, "MFGR#1101", "MFGR#5540", 1, 50, 0, 40, True, True)
    d = duck.execute("""SELECT d_date, d_dayofweek, d_month, d_year, d_yearmonthnum, d_yearmonth, d_daynuminweek,
        d_daynuminmonth, d_daynuminyear, d_monthnuminyear, d_weeknuminyear, d_sellingseason, d_lastdayinweekfl,
        d_lastdayinmonthfl, d_weekdayfl FROM "date" WHERE d_datekey = 19940205""").fetchone()
    assert d == ("February 5, 1994", "Saturday", "February", 1994, 199402, "Feb1994", 7, 5, 36, 2, 6, "Winter", 1, 0, 0)
    assert duck.execute("""SELECT count(*) FILTER (WHERE d_lastdayinmonthfl = 1), count(DISTINCT d_yearmonth),
        max(d_weeknuminyear), count(*) FILTER (WHERE d_weekdayfl = 1) FROM "date" """).fetchone()[:3] == (83, 84, 53)


def test_selectivities(duck):
    """The dimension predicates of the queries select exactly their share."""
    one = lambda sql: duck.execute(sql).fetchone()[0]  # noqa: E731
    assert [
        one(f"SELECT count(*) FROM supplier WHERE s_region = '{r}'")
        for r in ("AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST")
    ] == [4] * 5
    assert [
        one(f"SELECT count(*) FROM customer WHERE c_region = '{r}'")
        for r in ("AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST")
    ] == [60] * 5
    assert one("SELECT count(*) FROM customer WHERE c_nation = 'UNITED STATES'") == 12
    assert one("SELECT count(*) FROM customer WHERE c_city IN ('UNITED KI1', 'UNITED KI5')") == 4
    assert one("SELECT count(*) FROM supplier WHERE s_city IN ('UNITED KI1', 'UNITED KI5')") == 1
    assert one("SELECT count(*) FROM supplier WHERE s_nation = 'UNITED STATES'") == 1
    assert one("SELECT count(*) FROM part WHERE p_category = 'MFGR#12'") == 80
    assert one("SELECT count(*) FROM part WHERE p_mfgr = 'MFGR#1'") == 400
    assert one("SELECT count(*) FROM part WHERE p_brand1 = 'MFGR#2239'") == 2
    assert one("SELECT count(*) FROM part WHERE p_brand1 BETWEEN 'MFGR#2221' AND 'MFGR#2228'") == 16
    assert one("""SELECT count(*) FROM "date" WHERE d_yearmonth = 'Dec1997'""") == 31
    assert one("""SELECT count(*) FROM "date" WHERE d_weeknuminyear = 6 AND d_year = 1994""") == 7
    # the fact table follows: a fifth of the lines come from American suppliers (within sampling noise)
    share = duck.execute("""SELECT avg((s_region = 'AMERICA')::INT) FROM lineorder, supplier
                            WHERE lo_suppkey = s_suppkey""").fetchone()[0]
    assert 0.18 < share < 0.22


def test_deterministic_and_independent_of_workers(ssb_dir, tables, tmp_path, capsys):
    out = tmp_path / "again"
    assert ssb.main(["--sf", "0.01", "--out", str(out), "--workers", "1", "--quiet"]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    found = tables_in_directory(out)
    for t in ssb.ssb_tables:
        assert load_parquet(found[t]).equals(tables[t]), t
    assert ssb.main(["--sf", "0.01", "--out", str(out), "--quiet"]) == 0  # complete: nothing to do


def test_several_chunks_any_workers(tmp_path, monkeypatch):
    """Lineorder in several part files: the same files with 1 or 2 workers,
    order keys continuing across chunks."""
    monkeypatch.setattr(ssb, "ORDERS_PER_CHUNK", 4_000)
    one = ssb.generate_ssb(tmp_path / "w1", SF, workers=1)
    two = ssb.generate_ssb(tmp_path / "w2", SF, workers=2)
    names = sorted(p.name for p in (one / "lineorder").iterdir())
    assert names == [f"part-{i:05d}.parquet" for i in range(4)]
    assert names == sorted(p.name for p in (two / "lineorder").iterdir())
    for name in names:
        assert load_parquet(one / "lineorder" / name).equals(load_parquet(two / "lineorder" / name)), name
    lo = load_parquet(one / "lineorder")
    keys = sorted(set(_col(lo, "lo_orderkey")))
    assert len(keys) == 15000 and keys[-1] == (14999 // 8) * 32 + 14999 % 8 + 1
    assert max(_col(lo, "lo_custkey")) <= 300 and max(_col(lo, "lo_suppkey")) <= 20


def test_refuses_a_foreign_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("GLINT_DATA", str(tmp_path))
    target = ssb.data_dir(0.01)
    target.mkdir(parents=True)
    (target / "notes.txt").write_text("mine")
    with pytest.raises(GlintIOError, match="does not hold the 5 SSB tables"):
        ssb.ensure_ssb_data(0.01, progress=False)
    assert (target / "notes.txt").read_text() == "mine"
    with pytest.raises(GlintIOError, match="not empty"):
        ssb.generate_ssb(target, 0.01)


def test_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("GLINT_DATA", str(tmp_path))
    assert ssb.data_dir(1) == tmp_path / "ssb" / "sf1"
    monkeypatch.delenv("GLINT_DATA")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert ssb.data_dir(0.1) == tmp_path / "cache" / "glint" / "ssb" / "sf0.1"


def test_query_texts():
    qs = ssb.ssb_queries()
    assert list(qs) == ["1.1", "1.2", "1.3", "2.1", "2.2", "2.3", "3.1", "3.2", "3.3", "3.4", "4.1", "4.2", "4.3"]
    assert all(q.startswith("SELECT") and ";" not in q for q in qs.values())
    assert ssb.ssb_query("q3.4") == ssb.ssb_query("Q3.4") == qs["3.4"] and "'Dec1997'" in qs["3.4"]
    with pytest.raises(GlintError, match="no SSB query"):
        ssb.ssb_query("5.1")
    files = sorted(p.name for p in ssb.QUERY_DIR.glob("*.sql"))
    assert files == sorted(f"q{n}.sql" for n in qs)


@pytest.fixture(scope="module")
def glint_cons(request, ssb_dir):
    cons = {}
    for dev in _devices(request.config):
        con = glint.connect(device=dev)
        assert ssb.load_ssb(con, directory=ssb_dir, progress=False) == Path(ssb_dir)
        cons[dev] = con
    return cons


@pytest.mark.parametrize("name", ssb.QUERY_NAMES, ids=lambda n: f"q{n}")
def test_ssb_query_matches_duckdb(glint_cons, duck, name):
    sql = ssb.ssb_query(name)
    expected = ssb.duckdb_arrow(duck, sql)
    assert expected.num_rows > 0 and all(v is not None for v in expected.to_pylist()[0].values()), (
        f"Q{name} is empty at SF {SF}: the generator must make every query select something"
    )
    for dev, con in glint_cons.items():
        actual = con.sql(sql).arrow()
        diffs = compare_query_result(sql, actual, expected, check_names=True)
        assert not diffs, f"Q{name} on {dev} at SF {SF}:\n" + "\n".join(diffs)
