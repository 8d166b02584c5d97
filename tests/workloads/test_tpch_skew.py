"""The skewed TPC-H (glint.workloads.tpch_skew): its keys are skewed and still
join as TPC-H's do, and TPC-H's 22 queries over it equal DuckDB's on the CPU
and on two Gloo ranks, where the hot keys put most rows of a join or a group
on one rank."""

from __future__ import annotations

import collections
import json

import pyarrow.parquet as pq
import pytest

import glint
from glint.__main__ import main
from glint.testing.compare import compare_query_result
from glint.workloads import tpch
from glint.workloads.tpch_skew import ensure_skewed_tpch_data, make_skewed_tpch

SF = 0.01


@pytest.fixture(scope="module")
def skewed(cached_tpch, tmp_path_factory):
    d = tmp_path_factory.mktemp("skew") / "tpch"
    make_skewed_tpch(cached_tpch(SF), d, zipf=1.0, seed=3)
    return d


def _table(d, name, columns):
    return pq.read_table(d / f"{name}.parquet", columns=columns).to_pydict()


def test_keys_are_skewed_and_join_as_in_tpch(skewed, cached_tpch):
    orders = _table(skewed, "orders", ["o_custkey"])["o_custkey"]
    li = _table(skewed, "lineitem", ["l_partkey", "l_suppkey", "l_quantity", "l_extendedprice"])
    n_orders, n_lines = len(orders), len(li["l_partkey"])
    assert n_orders == pq.read_metadata(cached_tpch(SF) / "orders.parquet").num_rows
    top_customer = collections.Counter(orders).most_common(1)[0][1]
    top_part = collections.Counter(li["l_partkey"]).most_common(1)[0][1]
    top_supplier = collections.Counter(li["l_suppkey"]).most_common(1)[0][1]
    # uniform TPC-H at SF 0.01: at most a few dozen orders a customer, a few lineitems a part
    assert top_customer > 0.05 * n_orders and top_part > 0.05 * n_lines and top_supplier > 0.03 * n_lines
    assert all(c % 3 != 0 for c in orders)  # as in TPC-H, every third customer orders nothing
    ps = _table(skewed, "partsupp", ["ps_partkey", "ps_suppkey"])
    pairs = set(zip(ps["ps_partkey"], ps["ps_suppkey"]))
    assert all(p in pairs for p in zip(li["l_partkey"], li["l_suppkey"]))
    price = dict(zip(*_table(skewed, "part", ["p_partkey", "p_retailprice"]).values()))
    assert all(e == q * price[p] for p, q, e in zip(li["l_partkey"], li["l_quantity"], li["l_extendedprice"]))


def _check_22(con, d):
    duck = tpch.duckdb_tpch_connection(d)
    for n in range(1, 23):
        q = tpch.tpch_query(n)
        assert compare_query_result(q, con.sql(q).arrow(), tpch.duckdb_arrow(duck, q)) == [], n


def test_tpch_on_skewed_data_equals_duckdb(skewed):
    con = glint.connect(device="cpu", chunk_rows=4096)
    tpch.load_tpch(con, directory=skewed, progress=False)
    _check_22(con, skewed)


def test_tpch_on_skewed_data_on_two_ranks_equals_duckdb(skewed):
    con = glint.connect(ranks=2, device="cpu", timeout=120)
    try:
        tpch.load_tpch(con, directory=skewed, progress=False)
        _check_22(con, skewed)
    finally:
        con.close()


def test_bench_makes_and_names_the_skewed_data(tmp_path, monkeypatch, cached_tpch, capsys):
    uniform = cached_tpch(SF)
    monkeypatch.setenv("GLINT_DATA", str(tmp_path / "cache"))  # (the skewed tables go there)
    out = tmp_path / "res"
    import glint.workloads.tpch_skew as S

    monkeypatch.setattr(S, "ensure_tpch_data", lambda sf, progress=True: uniform)
    argv = ["bench", "tpch", "--sf", "0.01", "--skew", "1.5", "--queries", "13,18", "--runs", "1"]
    assert main([*argv, "--no-cold", "--no-duckdb-memory", "--duckdb-runs", "1", "--out", str(out)]) == 0
    rep = json.loads(next(out.glob("*.json")).read_text())
    assert rep["title"] == "TPC-H skewed (Zipf 1.5)" and rep["queries_correct"] == 2
    assert rep["data_dir"] == str(ensure_skewed_tpch_data(0.01, 1.5))
    with pytest.raises(glint.GlintError, match="positive"):
        ensure_skewed_tpch_data(0.01, 0)


def test_a_directory_without_tpch_tables_is_named(tmp_path):
    import pyarrow as pa

    pq.write_table(pa.table({"o_custkey": [1]}), tmp_path / "orders.parquet")
    with pytest.raises(
        glint.GlintError, match=r"missing the TPC-H tables \['customer', 'lineitem', 'part', 'supplier'\]"
    ):
        make_skewed_tpch(tmp_path, tmp_path / "out")
