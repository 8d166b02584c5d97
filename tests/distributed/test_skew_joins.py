"""Skewed join keys on Gloo CPU ranks (glint.distributed.skew_join): a join
that shuffles both sides keeps one side's heavy keys where they are and sends
the other side's rows of them to every rank. On 2 and 3 ranks, on small
tables where one key holds most rows and on the skewed TPC-H, every join kind
it applies to answers as DuckDB does, the decision record shows the path was
taken, and the rank that a plain shuffle overloads receives far fewer rows;
FULL, mark and NOT IN joins never take it, and a RIGHT join keeps its right
side (never copies it)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import glint
from glint.testing.compare import compare_query_result
from glint.workloads import tpch
from glint.workloads.tpch_skew import make_skewed_tpch

SF = 0.01
OPTS = {"device": "cpu", "timeout": 60, "replicate_rows": 30, "chunk_rows": 512, "round_bytes": 24 << 10}


def _hand_tables() -> dict[str, pa.Table]:
    """p: 9,000 rows, 55% of them key 7 and 10% key 11, 3% NULL keys; b:
    20,000 rows, key 7 three times, 1% NULL keys; d: 6,000 unique keys. k2 /
    bk2 / dk2 make a second key column that mostly matches."""
    rng = np.random.default_rng(5)
    n = 9000
    u = rng.random(n)
    k = np.where(u < 0.55, 7, np.where(u < 0.65, 11, rng.integers(0, 24000, n)))
    p = pa.table(
        {
            "k": pa.array(k, mask=rng.random(n) < 0.03),
            "k2": (k + (rng.random(n) < 0.1)) % 3,
            "v": np.arange(n),
        }
    )
    bk = rng.permutation(20000)
    bk[np.isin(bk, [1, 2])] = 7
    b = pa.table({"bk": pa.array(bk, mask=rng.random(20000) < 0.01), "bk2": bk % 3, "w": np.arange(20000) * 3})
    dk = rng.permutation(6000)
    d = pa.table({"dk": pa.array(dk, mask=rng.random(6000) < 0.01), "dk2": dk % 3, "x": np.arange(6000) * 7})
    return {"p": p, "b": b, "d": d}


# name: (SQL, where the skew path is planned: "left" / "right" for the kept side on those ranks)
HAND = {
    "inner": ("SELECT count(*), sum(v), sum(x) FROM p JOIN d ON k = dk", {3: "left"}),
    "inner_two_keys": ("SELECT count(*), sum(v), sum(x) FROM p JOIN d ON k = dk AND k2 = dk2", {3: "left"}),
    "left": ("SELECT count(*), sum(v), sum(w), count(w) FROM p LEFT JOIN b ON k = bk", {2: "left", 3: "left"}),
    "left_two_keys": (
        "SELECT k, count(*), sum(w), count(bk) FROM p LEFT JOIN b ON k = bk AND k2 = bk2 GROUP BY k",
        {2: "left", 3: "left"},
    ),
    "semi": ("SELECT count(*), sum(v) FROM p WHERE EXISTS (SELECT 1 FROM b WHERE bk = k)", {2: "left", 3: "left"}),
    "anti": (
        "SELECT count(*), sum(v), count(k) FROM p WHERE NOT EXISTS (SELECT 1 FROM b WHERE bk = k)",
        {2: "left", 3: "left"},
    ),
    "scalar": ("SELECT count(*), sum(v), sum((SELECT x FROM d WHERE dk = p.k)) FROM p", {3: "left"}),
    "right": ("SELECT count(*), sum(v), sum(w), count(v) FROM b RIGHT JOIN p ON bk = k", {2: "right", 3: "right"}),
    "adaptive_left": (
        "SELECT count(*), sum(v), sum(w) FROM p LEFT JOIN (SELECT * FROM b WHERE w % 2 = 0) ON k = bk",
        {2: "left", 3: "left"},
    ),
    "chained": (
        "SELECT count(*), sum(x), sum(w) FROM (SELECT * FROM p JOIN d ON k = dk) LEFT JOIN b ON v = bk",
        {3: "left"},
    ),
    "full": ("SELECT count(*), sum(v), sum(w), count(k), count(bk) FROM p FULL JOIN b ON k = bk", {}),
    "mark": (
        "SELECT count(*), sum(v) FROM p WHERE EXISTS (SELECT 1 FROM b WHERE bk = k) OR v % 10 = 0",
        {},
    ),
    "not_in": ("SELECT count(*), sum(v) FROM p WHERE k NOT IN (SELECT bk FROM b WHERE bk IS NOT NULL)", {}),
}
TPCH = {
    # the hottest customers place 13%, 7% and 4% of the orders
    "self_join": (
        "SELECT count(*), sum(o1.o_totalprice - o2.o_totalprice) FROM orders o1 JOIN orders o2 "
        "ON o1.o_custkey = o2.o_custkey",
        {3: "left"},
    ),
    "exists": (
        "SELECT o_orderpriority, count(*) FROM orders o WHERE EXISTS (SELECT * FROM lineitem JOIN orders o2 "
        "ON l_orderkey = o2.o_orderkey WHERE o2.o_custkey = o.o_custkey) GROUP BY 1 ORDER BY 1",
        {2: "left", 3: "left"},
    ),
}


@pytest.fixture(scope="module")
def skewed(cached_tpch, tmp_path_factory):
    d = tmp_path_factory.mktemp("skew") / "tpch"
    make_skewed_tpch(cached_tpch(SF), d, zipf=1.0, seed=3)
    return d


@pytest.fixture(scope="module")
def duck(skewed):
    con = tpch.duckdb_tpch_connection(skewed)
    for name, t in _hand_tables().items():
        con.register(name, t)
    yield con
    con.close()


@pytest.fixture(scope="module", params=[2, 3], ids=lambda n: f"{n}ranks")
def cons(request, skewed):
    """(ranks, a connection that handles skew in every shuffled join, one that never does)."""
    made = []
    try:
        for mode in ("always", "never"):
            con = glint.connect(ranks=request.param, skew_joins=mode, **OPTS)
            made.append(con)
            tpch.load_tpch(con, directory=skewed, progress=False)
            for name, t in _hand_tables().items():
                con.register(name, t)
        yield request.param, made[0], made[1]
    finally:
        for con in made:
            con.close()


def _skew_decisions(res) -> list[dict]:
    return [
        e["detail"]
        for e in res.rank_stats[0]["exchanges"]
        if e["kind"] == "decision" and (e.get("detail") or {}).get("decision") == "skew"
    ]


def _received(res, op: str) -> list[int]:
    """Rows each rank received in the shuffle described as ``op``."""
    return [next(e["rows_received"] for e in r["exchanges"] if e["op"] == op) for r in res.rank_stats]


def _check(sql: str, planned: dict, cons, duck, gain: float) -> None:
    """The answer equals DuckDB's; where ``planned`` says so, the skew path
    is taken with that kept side, and the most rows a rank receives in the
    kept side's shuffle are under 1 / ``gain`` of a plain shuffle's."""
    ranks, skew, plain = cons
    res = skew.sql(sql)
    assert compare_query_result(sql, res.arrow(), duck.sql(sql).arrow()) == []
    found = [d for d in _skew_decisions(res) if d["heavy"]]
    kept = planned.get(ranks)
    if kept is None:
        assert found == []
        return
    assert len(found) == 1 and found[0]["kept_side"] == kept, found
    assert "heavy key" in res.explain(analyze=True)
    # the shuffle of the kept side: the rank a plain shuffle sends the hot keys to gets far fewer rows
    stayed = next(e["op"] for e in res.rank_stats[0]["exchanges"] if e["kind"] == "shuffle" and "stay" in e["op"])
    base = plain.sql(sql)
    base.arrow()
    assert _skew_decisions(base) == []
    assert max(_received(res, stayed)) * gain < max(_received(base, stayed.removesuffix(", heavy keys stay")))


@pytest.mark.parametrize("name", list(HAND))
def test_hand_made_skew(name, cons, duck):
    sql, planned = HAND[name]
    _check(sql, planned, cons, duck, gain=2.0)


@pytest.mark.parametrize("name", list(TPCH))
def test_skewed_tpch_joins(name, cons, duck):
    sql, planned = TPCH[name]
    _check(sql, planned, cons, duck, gain=1.2)  # (a milder skew: 13%, 7% and 4% of the orders)


def test_not_for_full_mark_or_not_in(cons):
    _, skew, _ = cons
    for name in ("full", "mark", "not_in"):
        res = skew.sql(HAND[name][0])
        res.arrow()
        assert _skew_decisions(res) == [], name


def test_skewed_tpch_22_queries(cons, duck):
    _, skew, _ = cons
    for n in range(1, 23):
        q = tpch.tpch_query(n)
        assert compare_query_result(q, skew.sql(q).arrow(), tpch.duckdb_arrow(duck, q)) == [], n


def test_setting_is_checked():
    with pytest.raises(glint.GlintError, match="skew_joins"):
        glint.connect(device="cpu", skew_joins="sometimes")


def test_by_default_only_adaptive_joins_take_it(duck):
    con = glint.connect(ranks=2, **OPTS)
    try:
        for name, t in _hand_tables().items():
            con.register(name, t)
        for name, taken in (("left", False), ("adaptive_left", True)):
            sql = HAND[name][0]
            res = con.sql(sql)
            assert compare_query_result(sql, res.arrow(), duck.sql(sql).arrow()) == []
            assert any(d["heavy"] for d in _skew_decisions(res)) == taken, name
            assert "SkewJoin" not in res.explain()
    finally:
        con.close()
